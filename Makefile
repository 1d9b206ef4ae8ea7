# The two set-up commands: `make run` and `make test`. Both work on a fresh machine with Python >= 3.11 and make.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
FFPLAN := $(VENV)/bin/ffplan
OUT ?= out

.PHONY: run test test-fast ruff typecheck venv test-venv system-deps nccl-deps bench clean golden

# `make run` needs ffplan alone; the test extras (pytest, hypothesis, mypy, ...) come with the targets that use them.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

venv: $(VENV)/.installed

test-venv: $(VENV)/.installed-test

# OpenSM, ibsim and infiniband-diags back the integration tests; shellcheck lints the rendered scripts;
# slurmctld reads the rendered Slurm topology.conf; g++ compiles NCCL's topology loader (nccl-deps); frr's vtysh
# parses the rendered FRR configurations of RoCE plans (vtysh --dryrun), and zebra and bgpd run them in network
# namespaces for `ffplan verify` of a RoCE plan, with ip (iproute2), ping (iputils-ping) and sysctl (procps). They are
# installed when we are root with apt (CI); elsewhere those tests skip with a visible reason.
SYSTEM_PACKAGES := opensm ibsim-utils infiniband-diags shellcheck slurmctld g++ frr iproute2 iputils-ping procps
system-deps:
	@if command -v opensm >/dev/null 2>&1 && command -v ibsim >/dev/null 2>&1 && command -v dump_fts >/dev/null 2>&1 \
		&& command -v shellcheck >/dev/null 2>&1 && command -v slurmctld >/dev/null 2>&1 && command -v g++ >/dev/null 2>&1 \
		&& command -v vtysh >/dev/null 2>&1 && command -v ping >/dev/null 2>&1 && command -v sysctl >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(SYSTEM_PACKAGES) >/dev/null; \
	else echo "note: $(SYSTEM_PACKAGES) missing and not root: the tests that need them will be skipped"; fi

# NCCL's source and the CUDA headers that tests/render/test_nccl_loader.py compiles NCCL's topology loader with,
# pinned, fetched once from the package registries into .cache/ (tests/render/nccl_sources.py).
nccl-deps: test-venv
	$(PY) tests/render/nccl_sources.py

# The main job on the shipped Fire-Flyer 2 inventory: lint, design, render, analyze, cost report.
run: venv
	$(FFPLAN) lint inventories/
	$(FFPLAN) design inventories/fire-flyer-2.yaml -o $(OUT)/fire-flyer-2/plan --force
	$(FFPLAN) render $(OUT)/fire-flyer-2/plan -o $(OUT)/fire-flyer-2/files --force
	$(FFPLAN) analyze $(OUT)/fire-flyer-2/plan --pattern all-to-all --pattern storage-read
	$(FFPLAN) report cost $(OUT)/fire-flyer-2/plan/plan.yaml

# mypy with the settings in pyproject.toml ([tool.mypy]); a type error fails `make test` before the tests run.
typecheck: test-venv
	$(PY) -m mypy

# ruff check with the rules in pyproject.toml ([tool.ruff]), and the code as `ruff format` writes it.
ruff: test-venv
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

test: typecheck ruff system-deps nccl-deps
	$(PY) -m pytest -q

# The quick loop: no ibsim, no wheel build, no NCCL compile (markers in pyproject.toml).
test-fast: typecheck ruff
	$(PY) -m pytest -q -m "not slow and not integration and not packaging"

bench: venv
	$(PY) benchmarks/run.py
	$(PY) benchmarks/ibsim_scale.py --case mpft-plane
	$(PY) benchmarks/ecmp.py speed

golden: test-venv
	$(PY) -m pytest -q tests --update-golden

clean:
	rm -rf $(VENV) $(OUT) .pytest_cache .mypy_cache

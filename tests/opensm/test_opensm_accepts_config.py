"""OpenSM itself is the judge of opensm.conf: `opensm -F conf -c effective.conf` must refuse nothing, and the
effective configuration it writes back must hold the plan's values (this catches `true` vs `TRUE`, values
out of range, and keys OpenSM does not know)."""

from __future__ import annotations

import subprocess

import pytest

from ffplan.opensm import expected_conf
from ffplan.opensm.layout import CONF, FTREE_CONF
from ffplan.render.opensm import render_opensm
from ffplan.verify import parse as P


def _effective(opensm_bin: str, tmp_path, text: str) -> tuple[str, dict[str, str]]:
    src = tmp_path / "opensm.conf"
    src.write_text(text)
    eff = tmp_path / "effective.conf"
    proc = subprocess.run(
        [opensm_bin, "-F", str(src), "-c", str(eff)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
    )
    return proc.stdout + proc.stderr, P.parse_conf(eff.read_text())


@pytest.mark.parametrize("name,engine", [(CONF, "file"), (FTREE_CONF, "ftree")])
@pytest.mark.parametrize("plan_name", ["lab_plan", "ff2_plan"])
def test_opensm_accepts_rendered_config(opensm_bin, tmp_path, request, plan_name, name, engine):
    plan = request.getfixturevalue(plan_name)
    text = render_opensm(plan, "/etc/opensm")[f"opensm/{name}"]
    output, eff = _effective(opensm_bin, tmp_path, text)
    assert P.lint_messages(output) == [], output
    expected = expected_conf(plan, "/etc/opensm", engine)
    assert {k: eff.get(k) for k in expected} == expected
    # The QoS sets are the plan's, written the way OpenSM reads them.
    qos = plan.qos
    ca = qos.port_classes["ca"]
    assert eff["qos_ca_sl2vl"] == ",".join(map(str, ca.sl2vl))
    assert eff["qos_ca_vlarb_high"] == ",".join(f"{e.vl}:{e.weight}" for e in ca.vlarb_high)
    assert eff["qos"] == "TRUE" and eff["routing_engine"] == f"{engine},no_fallback"


def test_linter_catches_what_opensm_refuses(opensm_bin, tmp_path, lab_plan):
    text = render_opensm(lab_plan)["opensm/opensm.conf"]
    bad = text + "bogus_option 1\nsweep_interval abc\n"
    output, eff = _effective(opensm_bin, tmp_path, bad)
    msgs = P.lint_messages(output)
    assert any('Unrecognized token: "bogus_option"' in m for m in msgs), output
    assert any("sweep_interval" in m for m in msgs), output
    # `true` is silently FALSE: only the effective-value comparison sees it.
    output, eff = _effective(opensm_bin, tmp_path, text.replace("qos TRUE", "qos true"))
    assert eff["qos"] == "FALSE"

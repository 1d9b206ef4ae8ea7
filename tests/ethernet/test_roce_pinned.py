"""Pinned paths rendered (`fabric.roce.path_selection: pinned`, docs/ethernet.md "Rendering pinned paths"): each
switch's accepted host /31s per BGP neighbor in the plan, frr.conf's prefix lists and inbound route maps, the
leaves announcing their hosts' /31s beside the aggregate; three-tier plans refused.

Hand count on roce-mini's plane pa (3 leaves of 2 hosts, 2 spines, one cable per leaf-spine pair): a leaf pins
the other leaves' host ports by their rank, rank 0 (the leaf's first host) to its first spine by name, rank 1 to the
second; the spines have one link per leaf and choose nothing.
"""

import ipaddress
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from ffplan.analyze.ecmp import EcmpFabric
from ffplan.cli.main import app
from ffplan.design import design
from ffplan.ethernet.sonic import render_switches
from ffplan.inventory import load_inventory
from ffplan.plan.io import dump_plan, load_plan

from tests.conftest import ROOT
from tests.ethernet.test_render import _dryrun, vtysh
from tests.goldens import assert_golden_folder

MINI = ROOT / "tests" / "verify" / "inventories" / "roce-mini.yaml"
DUAL = ROOT / "inventories" / "roce-dual-plane.yaml"
THREE_TIER = ROOT / "tests" / "ethernet" / "inventories" / "roce-three-tier.yaml"
GOLDEN = Path(__file__).parent / "golden" / "pinned-mini"


def pinned_inventory(source: Path, folder: Path) -> Path:
    data = yaml.safe_load(source.read_text())
    data["fabric"].setdefault("roce", {})["path_selection"] = "pinned"
    target = folder / "pinned.yaml"
    target.write_text(yaml.safe_dump(data, sort_keys=False))
    return target


@pytest.fixture(scope="module")
def mini(tmp_path_factory):
    return design(load_inventory(pinned_inventory(MINI, tmp_path_factory.mktemp("mini"))))


@pytest.fixture(scope="module")
def dual(tmp_path_factory):
    """Plane A: 32 leaves, 16 spines, 4 parallel links per leaf-spine pair: the spines choose too."""
    return design(load_inventory(pinned_inventory(DUAL, tmp_path_factory.mktemp("dual"))))


def test_the_leaves_accept_each_host_from_its_pinned_spine(mini, tmp_path):
    sw = {s.name: s for s in mini.ethernet.switches}
    leaf01 = {p.neighbor: p.prefixes for p in sw["pa-leaf01"].pinned}
    # pa-spine01 at 10.1.0.1, pa-spine02 at 10.1.0.3; pa-leaf02's hosts 10.128.0.4/31, .6/31, pa-leaf03's .8, .10
    assert leaf01 == {"10.1.0.1": ["10.128.0.4/31", "10.128.0.8/31"], "10.1.0.3": ["10.128.0.6/31", "10.128.0.10/31"]}
    assert sw["pa-spine01"].pinned == [] and sw["pa-spine02"].pinned == []
    (tmp_path / "plan.yaml").write_text(dump_plan(mini))
    assert load_plan(tmp_path / "plan.yaml").ethernet == mini.ethernet  # the pins read back


def test_the_plans_pins_are_the_analysis_pinned_paths(dual):
    """One rule: walking the analysis's pinned tables (ffplan.analyze.ecmp) from every leaf to every host port of
    another leaf takes, at each switch, the neighbor whose accepted list in the plan holds the port's /31."""
    fab = EcmpFabric(dual)
    pinned, fan = fab.pinned_tables()
    eth = {s.name: s for s in dual.ethernet.switches}
    accepts = {(s.name, p): pin.neighbor for s in dual.ethernet.switches for pin in s.pinned for p in pin.prefixes}
    peer_of = {(s.name, p.name): str(p.peer_address) for s in dual.ethernet.switches for p in s.ports}
    leaves = [s for s in dual.ethernet.switches if s.host_block and s.name.startswith("plane-a")]
    checked = 0
    for src in leaves:
        for dest in leaves:
            if dest is src:
                continue
            hosts = [p for p in dest.ports if p.peer not in eth]
            for rank, port in enumerate(hosts):
                prefix = str(ipaddress.ip_interface(port.address).network)
                at, r = fab.sid[src.name], rank
                while at != fab.sid[dest.name]:
                    state = int(fab.state[at, fab.sid[dest.name]])
                    link = int(pinned[fab.hop_off[state] + r % fab.hop_len[state]])
                    name = fab.switches[at]
                    assert accepts[(name, prefix)] == peer_of[(name, fab.link_port[link])], (name, prefix)
                    at, r = fab.dst[link], r // int(fan[state])
                    checked += 1
    assert checked == 32 * 31 * 64 * 2
    spine = eth["plane-a-spine01"]
    assert len(spine.pinned) == 32 * 4 and {len(p.prefixes) for p in spine.pinned} == {16}  # 64 hosts over 4 links
    assert {len(p.prefixes) for p in eth["plane-a-leaf01"].pinned} == {31}  # 31 leaves x 64 hosts over 64 uplinks


def test_pinned_frr_conf_golden(mini, update_golden):
    """A leaf's policy (prefix lists, route maps before `router bgp`, one `route-map ... in` per pinned session, the
    aggregate without summary-only) and a spine that pins nothing, as files."""
    files = render_switches(mini)
    wanted = {f"{n}.frr.conf": files[f"sonic/{n}/frr.conf"] for n in ("pa-leaf01", "pa-spine01")}
    assert_golden_folder(GOLDEN, wanted, update_golden, "pinned roce-mini frr.conf")


def test_an_ecmp_plan_renders_no_pins():
    plan = design(load_inventory(MINI))
    assert all(sw.pinned == [] for sw in plan.ethernet.switches) and "pinned" not in dump_plan(plan)
    frr = render_switches(plan)["sonic/pa-leaf01/frr.conf"]
    assert "summary-only" in frr and "route-map FROM-" not in frr and "prefix-list HOSTS" not in frr


@vtysh
def test_frr_parses_every_pinned_frr_conf(mini, dual, tmp_path):
    files = {**render_switches(mini), **render_switches(dual)}
    confs = {p: t for p, t in files.items() if p.endswith("frr.conf") and "route-map FROM-" in t}
    assert any("spine" in p for p in confs) and any("leaf" in p for p in confs)
    for path in sorted(confs)[:: max(1, len(confs) // 12)] + ["sonic/pa-leaf01/frr.conf"]:
        target = tmp_path / path.replace("/", "_")
        target.write_text(files[path])
        result = _dryrun(target)
        assert result.returncode == 0 and not result.stdout.strip() and not result.stderr.strip(), (path, result)


def test_a_three_tier_plan_with_pinned_paths_is_refused(tmp_path):
    inventory = pinned_inventory(THREE_TIER, tmp_path)
    res = CliRunner().invoke(app, ["design", str(inventory), "-o", str(tmp_path / "out")])
    assert res.exit_code != 0 and not (tmp_path / "out").exists(), res.output
    line = next(n for n, text in enumerate(inventory.read_text().splitlines(), 1) if "path_selection" in text)
    assert f"pinned.yaml:{line}:" in res.output and "FF157" in res.output, res.output
    assert "two-tier" in res.output and "path_selection: ecmp" in res.output


def test_verify_expects_the_pinned_31s_and_their_fallback(mini):
    """verify's expected FIB (ffplan.ethernet.forwarding's one prediction): intact every leaf holds the other
    leaves' host /31s over their pinned spine; with pa-leaf01's cable to pa-spine01 down, the 4 /31s pinned through
    it are withdrawn (pa-spine01's pair to pa-leaf01, and the other leaves' pins of gpu1 over pa-spine01), 8 held,
    as benchmarks/pinned_frr.py measured in FRR; the aggregates keep their reduced ECMP sets."""
    from ffplan.ethernet.forwarding import Failed
    from ffplan.verify_ethernet.fabric import part_of, planned_fib, predicted_fib

    part = part_of(mini, ["pa"], "plane pa")
    leaves = ["pa-leaf01", "pa-leaf02", "pa-leaf03"]

    def pinned(fib):
        return {(sw, p): hops for sw in leaves for p, hops in fib[sw].items() if p.endswith("/31")}

    intact = pinned(planned_fib(part))
    assert len(intact) == 12 and all(len(hops) == 1 for hops in intact.values())
    assert intact[("pa-leaf02", "10.128.0.0/31")] == {"10.1.0.5"}  # gpu1 via pa-spine01
    down = predicted_fib(part, Failed(cables=frozenset({"pa-leaf01-p03"})))
    lost = set(intact) - set(pinned(down))
    assert lost == {
        ("pa-leaf01", "10.128.0.4/31"),
        ("pa-leaf01", "10.128.0.8/31"),
        ("pa-leaf02", "10.128.0.0/31"),
        ("pa-leaf03", "10.128.0.0/31"),
    }
    assert down["pa-leaf02"]["10.128.0.0/30"] == {"10.1.0.7"}  # the fallback: the aggregate over pa-spine02
    assert "10.128.0.0/31" not in down["pa-spine01"] and "10.128.0.0/31" in down["pa-spine02"]

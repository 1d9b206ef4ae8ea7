"""Pinned paths rendered two ways, in the real FRR (docs/ethernet.md, "Rendering pinned paths"): roce-mini's plane
pa booted by verify's machinery, its rendered frr.conf files as they are (ECMP), with one static route per host
/31 and switch (staticd), or with BGP policy (the leaves announce their hosts' /31s beside the aggregate; a leaf
accepts a host /31 only from the neighbor the pinned assignment picks). Each variant: pings between every host
pair of the plane, then a leaf-spine cable down and the same pings 5 s and 20 s later.

  python benchmarks/pinned_frr.py [ecmp|static|bgp ...]     (root and FRR, as `ffplan verify` of a RoCE plan)

The pinned assignment is ffplan's analysis rule (ffplan.analyze.ecmp: the destination port's rank on its leaf,
mod the switch's next hops in pinning order); the planes here are two-tier with one cable per leaf-spine pair, so
only the leaves choose.
"""

from __future__ import annotations

import argparse
import ipaddress
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ffplan.analyze.ecmp import EcmpFabric  # noqa: E402
from ffplan.design import design  # noqa: E402
from ffplan.ethernet.sonic import render_switches  # noqa: E402
from ffplan.inventory import load_inventory  # noqa: E402
from ffplan.plan.model import Plan  # noqa: E402
from ffplan.verify_ethernet.boot import Fabric, find_tools  # noqa: E402
from ffplan.verify_ethernet.fabric import Part, fib_differences, part_of, planned_fib  # noqa: E402

MINI = ROOT / "tests" / "verify" / "inventories" / "roce-mini.yaml"
CABLE = "pa-leaf01-p03"
STATICD = "/usr/lib/frr/staticd"
VARIANTS = ["ecmp", "static", "bgp"]


def pins(plan: Plan, part: Part) -> dict[str, dict[str, list[str]]]:
    """leaf -> next-hop address -> the host /31s it pins there (every host of the part on another leaf)."""
    fab = EcmpFabric(plan)
    pinned, _ = fab.pinned_tables()
    leaves = [sw for sw in part.switches if sw.host_block]
    found: dict[str, dict[str, list[str]]] = {}
    for sw in leaves:
        i = fab.sid[sw.name]
        for dest in leaves:
            if dest is sw:
                continue
            state = int(fab.state[i, fab.sid[dest.name]])
            hosts = [p for p in dest.ports if p.peer not in part.by_name]
            for rank, port in enumerate(hosts):
                link = int(pinned[fab.hop_off[state] + rank % fab.hop_len[state]])
                to = next(p for p in sw.ports if p.peer == fab.switches[fab.dst[link]])
                prefix = str(ipaddress.ip_interface(port.address).network)
                found.setdefault(sw.name, {}).setdefault(str(to.peer_address), []).append(prefix)
    return found


def configure(files: dict[str, str], variant: str, pinned: dict[str, dict[str, list[str]]], pool: str) -> None:
    for leaf, by_hop in pinned.items():
        name = f"sonic/{leaf}/frr.conf"
        conf = files[name]
        if variant == "static":
            routes = [f"ip route {p} {hop}" for hop, prefixes in by_hop.items() for p in prefixes]
            # before any block staticd does not know: a daemon reading frr.conf itself stops at their `exit`
            conf = conf.replace(
                "service integrated-vtysh-config\n", "service integrated-vtysh-config\n" + "\n".join(routes) + "\n", 1
            )
        else:
            policy = [f"ip prefix-list HOSTS seq 5 permit {pool} ge 31"]
            maps = []
            for hop, prefixes in by_hop.items():
                policy += [f"ip prefix-list PIN-{hop} seq {5 * (k + 1)} permit {p}" for k, p in enumerate(prefixes)]
                policy += [
                    f"route-map FROM-{hop} permit 10", f" match ip address prefix-list PIN-{hop}", "exit",
                    f"route-map FROM-{hop} deny 20", " match ip address prefix-list HOSTS", "exit",
                    f"route-map FROM-{hop} permit 30", "exit",
                ]  # fmt: skip
                maps.append(f"  neighbor {hop} route-map FROM-{hop} in")
            conf = conf.replace("! bgpd:", "\n".join(policy) + "\n!\n! bgpd:", 1)
            anchor = "  redistribute connected route-map CONNECTED\n"
            conf = conf.replace(anchor, anchor + "\n".join(maps) + "\n", 1)
        files[name] = conf
    if variant == "bgp":  # every leaf announces its hosts' /31s beside the aggregate
        for name in files:
            if name.endswith("frr.conf"):
                files[name] = files[name].replace(" summary-only", "")


def run(variant: str) -> None:
    plan = design(load_inventory(MINI))
    part = part_of(plan, ["pa"], "plane pa")
    files = render_switches(plan)
    pinned = pins(plan, part)
    assert plan.ethernet is not None and plan.ethernet.host_pool is not None
    if variant != "ecmp":
        configure(files, variant, pinned, str(plan.ethernet.host_pool))
    tools = find_tools()
    tools["staticd"] = STATICD
    names = sorted(part.by_name)
    nics = [h for hs in part.hosts.values() for h in hs]
    pairs = [(a, b) for a in nics for b in nics if a.leaf != b.leaf]
    work = Path(tempfile.mkdtemp(prefix="ffp-"))  # short: FRR's socket paths

    total = sum(len(ps) for by_hop in pinned.values() for ps in by_hop.values())

    def held(fibs: dict[str, dict[str, set[str]]]) -> int:
        return sum(
            1 for leaf, by_hop in pinned.items() for hop, ps in by_hop.items() for p in ps if fibs[leaf].get(p) == {hop}
        )

    def show(fab: Fabric, when: str) -> None:
        fibs = fab.routes(names)
        lost = fab.ping(pairs, 1500, wait=1.0)
        print(
            f"{variant:6} {when:28} pinned /31 routes held {held(fibs):2} of {total}, pings {len(pairs) - len(lost)}/{len(pairs)}"
        )
        for line in lost:
            print(f"{'':8}lost: {line}")
        for leaf, by_hop in pinned.items():
            for hop, ps in by_hop.items():
                for p in ps:
                    if variant != "ecmp" and fibs[leaf].get(p) != {hop}:
                        print(f"{'':8}{leaf} {p}: {', '.join(sorted(fibs[leaf].get(p, ['no route'])))}, pinned {hop}")

    try:
        with Fabric(part, files, work, tools, remove_workdir=True) as fab:
            fab.build()
            if variant == "static":
                for leaf in pinned:
                    fab._daemon(leaf, "staticd")  # verify starts zebra and bgpd only
            planned = planned_fib(part)

            def converged() -> bool:
                fibs = fab.routes(names)
                return not fib_differences(planned, fibs) and (variant == "ecmp" or held(fibs) == total)

            took = fab.wait_until(converged, 60, every=0.5)
            print(f"{variant:6} {'converged' if took is not None else 'NOT converged in 60 s'}")
            show(fab, "intact")
            v = next(v for v in part.veths if v.cable == CABLE)
            fab.set_link(v.a, v.a_if, up=False)
            time.sleep(5)
            show(fab, f"5 s after {CABLE} down")
            time.sleep(15)
            show(fab, f"20 s after {CABLE} down")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("variants", nargs="*", choices=[[], *VARIANTS], help="default: all three")
    for variant in parser.parse_args().variants or VARIANTS:
        run(variant)


if __name__ == "__main__":
    main()

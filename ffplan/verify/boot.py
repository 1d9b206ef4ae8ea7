"""One simulated boot: the files in a work folder, ibsim with the planned fabric, OpenSM on them until SUBNET UP,
then what it installed, read back with the diagnostic tools."""

from __future__ import annotations

import re
import shutil
import time
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Callable

from ffplan.fabric.discovery import DiscoveredFabric, parse_topology
from ffplan.fabric.lft import parse_lfts
from ffplan.plan.model import Plan
from ffplan.opensm import layout as L
from ffplan.opensm import Subnet
from ffplan.opensm.files import ipoib_rate, simulator_topology
from ffplan.verify import parse as P
from ffplan.verify.qos import check_qos
from ffplan.verify.report import Check
from ffplan.verify.sim import Simulation, ibsim_limits, signals_raise


def rewrite_paths(conf_text: str, workdir: Path) -> str:
    """Point the file-valued keys at the copies in the work folder (keys and other values stay as rendered)."""
    out = []
    for line in conf_text.splitlines():
        parts = line.split(None, 1)
        if len(parts) == 2 and parts[0] in L.PATH_KEYS:
            out.append(f"{parts[0]} {workdir / Path(parts[1].strip()).name}")
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def _sizes(fab: Subnet) -> list[str]:
    nodes = len(fab.switches) + len(fab.cas)
    ports = sum(s.ports + 1 for s in fab.switches) + sum(ca.nports + 1 for ca in fab.cas)
    return ibsim_limits(nodes, len(fab.switches), ports)


# infiniband-diags before 63.0 (rdma-core commit 03472ce0b, "dump_fts: Change lft type in dump_fts to uint8_t";
# Debian ships 44.0) reads each LFT block into a signed `char`: an entry for port 128-254 sign-extends, fails
# dump_fts' `outport <= nports`, and is left out as invalid, so a 144-port switch's routes over ports >= 128
# looked unrouted (255) although ibsim and OpenSM hold them (ibroute, which uses uint8_t, shows them). With -a
# (dump_all) dump_fts prints every entry as `outport & 0xff`: the true byte, on old and fixed versions alike.
DUMP_FTS_ARGS = ("-n", "-a")
UNROUTED = 255  # an LFT entry is one byte; 255 is "no route" (OpenSM's OSM_NO_PATH)


# ibsim (up to 0.12) simulates links up to NDR and Debian's OpenSM 3.3.23 knows rates up to 600 Gb/s, so an IPoIB
# group at XDR's 800 Gb/s (rate 23) is "not realizable" there (ERR 1B26); the simulator boots with the group at the
# fastest rate it runs, and verify reports the planned rate as not verifiable here (SIMULATED_RATE_NOTE).
SIMULATED_MAX_RATE = 21  # 400 Gb/s, NDR
_RATE = re.compile(r"\brate=(\d+)")


def for_simulator(name: str, text: str) -> str:
    """A rendered file as the simulator can run it: partitions.conf's rate capped at SIMULATED_MAX_RATE."""
    if name != L.PARTITIONS:
        return text
    return _RATE.sub(lambda m: f"rate={min(int(m.group(1)), SIMULATED_MAX_RATE)}", text)


def rate_beyond_simulator(plan: Plan) -> int | None:
    """The planned IPoIB group rate code when the simulator cannot realize it (XDR), else None."""
    code = ipoib_rate(plan)[1]
    return code if code > SIMULATED_MAX_RATE else None


@dataclass
class Boot:
    topo: DiscoveredFabric
    lft_text: str  # dump_fts -n -a output: 22.6 M entries for a 16,384-endpoint subnet, parsed only when asked
    log: str
    timings: dict[str, float]
    qos_checks: list[Check]

    @cached_property
    def tables(self) -> dict[str, dict[int, int]]:
        """Routed entries per switch (`-a` lists the unrouted ones too, as port 255)."""
        return {
            sw: {lid: port for lid, port in table.items() if port != UNROUTED}
            for sw, table in parse_lfts(self.lft_text).tables.items()
        }


def boot(
    fab: Subnet,
    tools: dict[str, str],
    workdir: Path,
    conf_name: str,
    timeout: float,
    files: dict[str, str],
    qos_of: Plan | None = None,
    sim_hook: Callable[[Simulation], None] | None = None,
    progress: Callable[[str], None] = lambda s: None,
) -> Boot:
    """Start ibsim + OpenSM with `conf_name`, wait for SUBNET UP, read back; with `qos_of`, also check the
    installed QoS tables and path SLs against that plan's (Boot.qos_checks)."""
    workdir.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (workdir / name).write_text(for_simulator(name, text))
    run_conf = workdir / f"run-{conf_name}"
    run_conf.write_text(rewrite_paths(files[conf_name], workdir))
    cache = workdir / "cache"
    cache.mkdir(exist_ok=True)
    shutil.copyfile(workdir / L.GUID2LID, cache / "guid2lid")
    timings: dict[str, float] = {}
    sim = Simulation(workdir=workdir, tools=tools, sm_host=fab.sm_ca().id)
    with signals_raise(), sim:
        progress(f"ibsim: {len(fab.switches)} switches, {sum(len(c.ports) for c in fab.cas)} CA ports")
        netfile = workdir / "ibsim.net"
        netfile.write_text(simulator_topology(fab))
        timings["ibsim ready s"] = sim.start_ibsim(netfile, _sizes(fab), timeout)
        if sim_hook:
            sim_hook(sim)
        progress(f"OpenSM ({conf_name}) on {sim.sm_host}")
        sim.start_opensm(run_conf, cache, [])
        timings["SUBNET UP s"] = sim.wait_subnet_up(timeout)
        t = time.monotonic()
        progress("reading back: ibnetdiscover, dump_fts")
        topo = parse_topology(sim.diag(["ibnetdiscover"]))
        lft_text = sim.diag(["dump_fts", *DUMP_FTS_ARGS], timeout)
        qos_checks: list[Check] = []
        if qos_of is not None:
            progress("reading back: SL2VL, VLArb, PathRecord SLs")
            qos_checks = check_qos(qos_of, fab, sim)
        timings["read-back s"] = time.monotonic() - t
        log = (workdir / "osm.log").read_text(errors="replace")
    timings["route compute s"] = _route_time(log)
    return Boot(topo, lft_text, log, timings, qos_checks)


def _route_time(log: str) -> float:
    """MASTER -> '<engine> tables configured' in OpenSM's log: LID assignment, route computation, LFT upload."""
    start = end = None
    for line in log.splitlines():
        if start is None and "Entering MASTER state" in line:
            start = P.log_time(line)
        if "tables configured" in line:
            end = P.log_time(line)
            break
    return round(end - start, 4) if start is not None and end is not None else float("nan")

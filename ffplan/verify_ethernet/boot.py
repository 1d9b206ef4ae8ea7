"""A RoCE fabric running for real: a network namespace per switch and per host, a veth pair per planned cable, the
rendered host script applied in each host's namespace, and FRR (zebra and bgpd from Debian's `frr`) in each switch's
namespace on the rendered frr.conf, byte for byte. Read-backs: BGP state through vtysh, the kernel FIB, addresses and
links through `ip -json`, pings with don't-fragment.

Switch ports get the MTU and admin status of the rendered config_db.json (SONiC's PORT table, what the switch OS
sets); their addresses come from frr.conf (zebra installs them, as in SONiC's unified FRR mode). `Loopback0` is a
port-less bridge (up, carrier on: zebra takes it as operative), the stand-in for SONiC's loopback device.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ffplan.plan.model import HostInterface
from ffplan.verify.lifetime import ToolsMissing
from ffplan.verify_ethernet.fabric import Part
from ffplan.verify_ethernet.netns import Namespaces, arp_stat, make_room_for_neighbours

FRR_DIRS = ("/usr/lib/frr", "/usr/libexec/frr", "/usr/local/libexec/frr", "/usr/local/sbin")
TOOLS = ("zebra", "bgpd", "vtysh", "ip", "ping", "sysctl", "bash")
DEBIAN_PACKAGES = "frr iproute2 iputils-ping procps"
PING_BATCH = 32  # pings in flight at once
POLL_S = 0.1  # between two reads of the FIBs
ZEBRA_READY_S = 10.0  # at most, for zebra to read its configuration before bgpd starts
IPV4_ICMP_HEADERS = 28  # IPv4 (20) + ICMP (8): `ping -s` is the payload


class BootError(Exception):
    """The fabric could not be built (the message says which step and shows the command's error)."""


def find_tools() -> dict[str, str]:
    path = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin", *FRR_DIRS])
    found = {t: shutil.which(t, path=path) for t in TOOLS}
    missing = [t for t, exe in found.items() if exe is None]
    try:
        pwd.getpwnam("frr")
    except KeyError:
        missing.append("user frr (FRR's daemons drop to it)")
    if os.geteuid() != 0:
        missing.append("root (network namespaces need CAP_SYS_ADMIN)")
    if missing:
        raise ToolsMissing(
            missing,
            "ffplan verify of a RoCE plan runs FRR in network namespaces "
            f"(Debian/Ubuntu: apt-get install {DEBIAN_PACKAGES}), as root",
        )
    return {t: exe for t, exe in found.items() if exe is not None}


@dataclass
class Daemons:
    folder: Path
    procs: list[subprocess.Popen] = field(default_factory=list)


class Fabric:
    """Use as a context manager: everything started is stopped and every namespace released on exit."""

    def __init__(
        self,
        part: Part,
        files: dict[str, str],
        workdir: Path,
        tools: dict[str, str],
        remove_workdir: bool,
        progress: Callable[[str], None] = lambda s: None,
    ):
        self.part = part
        self.files = files
        self.workdir = workdir
        self.tools = tools
        self.progress = progress
        self.ns = Namespaces(workdir, remove_workdir)
        self.frr: dict[str, Daemons] = {}
        self.host_output: dict[str, str] = {}  # hostname -> what its script printed
        self.host_failed: list[str] = []
        self.neighbours = ""  # what was done to fit the fabric's ARP entries in the kernel's table
        self.arp_fulls = 0  # the table's refusals so far, before the fabric exists

    def __enter__(self) -> Fabric:
        return self

    def __exit__(self, *exc: object) -> None:
        self.ns.close()

    # ------------------------------------------------------------------ build
    def ip_many(self, commands: dict[str, list[str]], what: str, then: str = "") -> None:
        """`ip -batch` of each namespace's commands (and the shell command `then` after it), all at once."""
        keys = [k for k, c in commands.items() if c]
        script = f'"$0" -batch -{f" && {then}" if then else ""}'
        jobs = [(k, [self.tools["bash"], "-c", script, self.tools["ip"]], "\n".join(commands[k]) + "\n") for k in keys]
        for key, r in zip(keys, self.ns.run_many(jobs)):
            if r.returncode != 0:
                raise BootError(f"{what} in {key}'s namespace: {' '.join(r.stderr.split())[:400]}")

    def port_settings(self, switch: str) -> dict[str, dict[str, str]]:
        ports: dict[str, dict[str, str]] = json.loads(self.files[f"sonic/{switch}/config_db.json"]).get("PORT", {})
        return ports

    def build(self) -> None:
        part = self.part
        # both ends of every cable resolve each other
        self.neighbours = make_room_for_neighbours(2 * len(part.veths))
        self.arp_fulls = arp_stat()[1]
        for sw in part.switches:
            self.ns.create(sw.name)
        for host in part.hosts:
            self.ns.create(host)
        ports = {sw.name: self.port_settings(sw.name) for sw in part.switches}
        create: dict[str, list[str]] = {key: ["link set lo up"] for key in self.ns.fds}
        for v in part.veths:
            a_mtu = ports[v.a].get(v.a_if, {}).get("mtu")
            b_mtu = ports[v.b].get(v.b_if, {}).get("mtu") if v.between_switches else None
            create[v.a].append(
                f"link add {v.a_if}{f' mtu {a_mtu}' if a_mtu else ''} type veth peer name {v.b_if}"
                f"{f' mtu {b_mtu}' if b_mtu else ''} netns {self.ns.path(v.b)}"
            )
        for sw in part.switches:
            create[sw.name] += ["link add Loopback0 type bridge"]
        connected = {(v.b, v.b_if) for v in part.veths if not v.between_switches}
        for host in part.hosts:  # a NIC of another plane: an unconnected stand-in the host script can configure
            create[host] += [
                f"link add {name} type bridge"
                for (h, _), name in part.ifname.items()
                if h == host and (h, name) not in connected
            ]
        self.ip_many(create, "creating interfaces")
        up: dict[str, list[str]] = {}
        for sw in part.switches:
            ends = {v.a_if for v in part.veths if v.a == sw.name} | {v.b_if for v in part.veths if v.b == sw.name}
            up[sw.name] = ["link set Loopback0 up"] + [
                f"link set {p.name} up"
                for p in sw.ports
                if p.name in ends and ports[sw.name].get(p.name, {}).get("admin_status", "up") == "up"
            ]
        # a switch routes: SONiC's image enables forwarding, a new namespace has it off
        self.ip_many(up, "bringing ports up", then=f"{self.tools['sysctl']} -qw net.ipv4.ip_forward=1")
        self.progress(f"{len(self.ns.fds)} namespaces, {len(part.veths)} veth pairs")
        self.configure_hosts()
        self.start_frr([sw.name for sw in part.switches])
        self.progress(f"FRR started on {len(part.switches)} switches")

    def configure_hosts(self) -> None:
        """Each host's rendered hosts/<host>/roce-net.sh with --apply, in the host's namespace, on a stand-in sysfs
        that maps each RDMA device to its interface (the script reads $FFPLAN_SYSFS instead of /sys)."""
        jobs: list[tuple[str, list[str], str | None]] = []
        for host in self.part.hosts:
            folder = self.workdir / "hosts" / host
            for (h, nic), name in self.part.ifname.items():
                if h == host:
                    (folder / "sys" / "class" / "infiniband" / nic / "device" / "net" / name).mkdir(parents=True)
            script = folder / "roce-net.sh"
            script.write_text(self.files[f"hosts/{host}/roce-net.sh"])
            jobs.append(
                (host, ["env", f"FFPLAN_SYSFS={folder / 'sys'}", self.tools["bash"], str(script), "--apply"], None)
            )
        for host, r in zip(self.part.hosts, self.ns.run_many(jobs, env={**os.environ, "LC_ALL": "C"})):
            self.host_output[host] = r.stdout + r.stderr
            if r.returncode != 0:
                self.host_failed.append(host)

    def start_frr(self, switches: list[str]) -> None:
        """zebra on each switch, then bgpd once every zebra has read its configuration (its vty socket is open and
        Loopback0 has an address): bgpd started alongside zebra sometimes misses an interface's address
        (`INTERFACE_ADDRESS_ADD: Cannot find IF`) and never announces that connected prefix, as observed here; SONiC
        too starts bgpd after zebra."""
        frr = pwd.getpwnam("frr")
        for path in (self.workdir, self.workdir / "frr"):
            path.mkdir(exist_ok=True)
            path.chmod(0o711)  # FRR runs as user frr: it must reach its folder
        names = [sw.name for sw in self.part.switches]
        for switch in switches:
            folder = self.workdir / "frr" / f"{names.index(switch):04d}"  # short: unix socket paths take 107 bytes
            folder.mkdir(exist_ok=True)
            os.chown(folder, frr.pw_uid, frr.pw_gid)
            conf = folder / "frr.conf"
            conf.write_text(self.files[f"sonic/{switch}/frr.conf"])
            conf.chmod(0o644)
            self.frr[switch] = Daemons(folder)
            self._daemon(switch, "zebra")
        self.wait_until(lambda: self._zebras_ready(switches), ZEBRA_READY_S, every=POLL_S)
        for switch in switches:
            self._daemon(switch, "bgpd")

    def _daemon(self, switch: str, name: str) -> None:
        folder = self.frr[switch].folder
        argv = [
            self.tools[name],
            "-f",
            str(folder / "frr.conf"),
            "-z",
            str(folder / "zserv.api"),
            "--vty_socket",
            str(folder),
            "-P",
            "0",
            "--log",
            "stdout",
            "-i",
            str(folder / f"{name}.pid"),
        ]
        with open(folder / f"{name}.log", "ab") as log:
            self.frr[switch].procs.append(self.ns.start(switch, argv, log))

    def _zebras_ready(self, switches: list[str]) -> bool:
        if not all((self.frr[s].folder / "zebra.vty").exists() for s in switches):
            return False
        links = self.ip_json(switches, ["-4", "addr", "show", "dev", "Loopback0"])
        return all(any(link.get("addr_info") for link in links[s]) for s in switches)

    def stop_frr(self, switch: str) -> None:
        """Kill the switch's FRR (a crash: no notification to the peers); its sockets go too, so a restart waits
        for the new zebra."""
        daemons = self.frr.pop(switch)
        for proc in daemons.procs:
            proc.kill()
            proc.wait()
            self.ns.daemons.remove(proc)
        for name in ("zebra.vty", "bgpd.vty", "zserv.api"):
            (daemons.folder / name).unlink(missing_ok=True)

    # ------------------------------------------------------------------ read back
    def vtysh(self, switches: list[str], command: str) -> dict[str, dict]:
        """bgpd's JSON answer to `command` on each switch ({} when it does not answer)."""
        jobs: list[tuple[str, list[str], str | None]] = []
        for switch in switches:
            folder = self.frr[switch].folder
            jobs.append(
                (
                    switch,
                    [
                        self.tools["vtysh"],
                        "--vty_socket",
                        str(folder),
                        "--config_dir",
                        str(folder),
                        "-d",
                        "bgpd",
                        "-c",
                        command,
                    ],
                    None,
                )
            )
        answers = {}
        for switch, r in zip(switches, self.ns.run_many(jobs, timeout=30)):
            try:
                answers[switch] = json.loads(r.stdout) if r.returncode == 0 and r.stdout.strip() else {}
            except json.JSONDecodeError:
                answers[switch] = {}
        return answers

    def ip_json(self, keys: list[str], args: list[str]) -> dict[str, list[dict]]:
        """`ip -json ARGS` in each namespace."""
        answers = {}
        for key, r in zip(keys, self.ns.run_many([(k, [self.tools["ip"], "-json", *args], None) for k in keys])):
            if r.returncode != 0:
                raise BootError(f"ip {' '.join(args)} in {key}'s namespace: {r.stderr.strip()}")
            answers[key] = json.loads(r.stdout or "[]")
        return answers

    def routes(self, switches: list[str]) -> dict[str, dict[str, set[str]]]:
        """Each switch's kernel FIB: IPv4 prefix -> next hops."""
        return {sw: fib_of(table) for sw, table in self.ip_json(switches, ["-4", "route", "show"]).items()}

    def memory(self) -> dict[str, float]:
        """Proportional set size (shared pages split among their users) of the running FRR daemons, in MiB."""
        pss = {"zebra": 0.0, "bgpd": 0.0}
        for daemons in self.frr.values():
            for name, proc in zip(("zebra", "bgpd"), daemons.procs):
                try:
                    text = Path(f"/proc/{proc.pid}/smaps_rollup").read_text()
                except OSError:
                    continue
                kb = next((int(line.split()[1]) for line in text.splitlines() if line.startswith("Pss:")), 0)
                pss[name] += kb / 1024
        return pss

    # ------------------------------------------------------------------ traffic
    def ping(self, pairs: list[tuple[HostInterface, HostInterface]], mtu: int, wait: float = 2.0) -> list[str]:
        """Ping every pair once at `mtu` with don't-fragment, in batches; one line per pair that got no reply."""
        failures = []
        for start in range(0, len(pairs), PING_BATCH):
            batch = pairs[start : start + PING_BATCH]
            running = []
            for src, dst in batch:
                argv = [
                    self.tools["ping"],
                    "-n",
                    "-q",
                    "-c",
                    "1",
                    "-W",
                    f"{wait:g}",
                    "-M",
                    "do",
                    "-s",
                    str(mtu - IPV4_ICMP_HEADERS),
                    "-I",
                    src.address.split("/")[0],
                    dst.address.split("/")[0],
                ]
                running.append((src, dst, self.ns.start(src.hostname, argv, subprocess.PIPE)))
            for src, dst, proc in running:
                out = proc.communicate(timeout=wait + 10)[0].decode(errors="replace")
                self.ns.daemons.remove(proc)
                if proc.returncode != 0:
                    why = next(
                        (
                            ln.strip()
                            for ln in out.splitlines()
                            if "rror" in ln or "mtu" in ln.lower() or "nreachable" in ln
                        ),
                        "no reply",
                    )
                    failures.append(
                        f"{src.hostname} {src.nic} {src.address.split('/')[0]} -> {dst.hostname} {dst.nic} "
                        f"{dst.address.split('/')[0]}: {why}"
                    )
        return failures

    # ------------------------------------------------------------------ failures
    def set_link(self, switch: str, port: str, up: bool) -> None:
        self.ip_many(
            {switch: [f"link set {port} {'up' if up else 'down'}"]}, f"setting {port} {'up' if up else 'down'}"
        )

    def wait_until(self, done: Callable[[], bool], timeout: float, every: float = 0.05) -> float | None:
        """Seconds until `done()` holds (None after `timeout`)."""
        started = time.monotonic()
        while True:
            if done():
                return time.monotonic() - started
            if time.monotonic() - started > timeout:
                return None
            time.sleep(every)


def fib_of(table: list[dict]) -> dict[str, set[str]]:
    """`ip -json route` as prefix -> next hops (a blackhole or unreachable route: an empty set)."""
    fib: dict[str, set[str]] = {}
    for r in table:
        dst = r.get("dst", "")
        if dst == "default":
            dst = "0.0.0.0/0"
        elif "/" not in dst:
            dst += "/32"
        if r.get("type") in ("blackhole", "unreachable", "prohibit"):
            fib[dst] = set()
        hops = {h["gateway"] for h in r.get("nexthops", [r]) if "gateway" in h}
        if hops:
            fib[dst] = hops
    return fib

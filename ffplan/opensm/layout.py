"""The layout of the OpenSM files: their names, the opensm.conf keys that point at them, and the part of the
fabric a rendering covers (`View`). Render writes the files under these names; verify, reroute and audit read
them back by the same names, so both sides import them from here rather than from the renderer.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "DEFAULT_PREFIX",
    "CONF",
    "FTREE_CONF",
    "LFTS",
    "GUID2LID",
    "QOS_POLICY",
    "PARTITIONS",
    "ROOT_GUIDS",
    "CN_GUIDS",
    "IO_GUIDS",
    "TOPOLOGY",
    "NODE_NAME_MAP",
    "README",
    "PATH_KEYS",
    "View",
    "SmInstance",
    "subnet_folders",
]

DEFAULT_PREFIX = "/etc/opensm"  # where the files live on the SM host unless `render --prefix` says otherwise

# File names under OUT/opensm/ (the prefix is where they live on the SM host).
CONF = "opensm.conf"
FTREE_CONF = "opensm-ftree.conf"
LFTS = "lfts.dump"
GUID2LID = "guid2lid"
QOS_POLICY = "qos-policy.conf"
PARTITIONS = "partitions.conf"
ROOT_GUIDS = "root_guids.txt"
CN_GUIDS = "cn_guids.txt"
IO_GUIDS = "io_guids.txt"
TOPOLOGY = "topology.net"
NODE_NAME_MAP = "node-name-map"
README = "README.md"  # several subnets only: which SM host runs which subnet's OpenSM, and how

# opensm.conf keys whose value is a path to one of our files (verify rewrites them to its work folder).
PATH_KEYS = {
    "lfts_file": LFTS,
    "qos_policy_file": QOS_POLICY,
    "partition_config_file": PARTITIONS,
    "node_name_map_name": NODE_NAME_MAP,
    "root_guid_file": ROOT_GUIDS,
    "cn_guid_file": CN_GUIDS,
    "io_guid_file": IO_GUIDS,
}


def subnet_folders(subnets: list[str]) -> dict[str, str]:
    """Subnet -> its folder under OUT/opensm/ (and under the prefix on the SM host): "" for a single subnet (the
    files sit in opensm/ itself), the subnet's name when there are several (one OpenSM per subnet)."""
    return {subnets[0]: ""} if len(subnets) == 1 else {s: s for s in subnets}


@dataclass(frozen=True)
class SmInstance:
    """One of several OpenSM processes on an SM host, each bound to that host's port in its own subnet."""

    subnet: str
    port_guid: str  # opensm.conf `guid` (= `opensm -g`): the port this OpenSM manages its subnet through
    port: str  # the port in words: "<hostname> <nic>"

    @property
    def log_file(self) -> str:
        return f"/var/log/opensm-{self.subnet}.log"

    @property
    def dump_dir(self) -> str:
        return f"/var/log/opensm-{self.subnet}"

    @property
    def cache_dir(self) -> str:
        """OSM_CACHE_DIR of this instance: guid2lid and the other caches of one subnet must not meet another's."""
        return f"/var/cache/opensm/{self.subnet}"


@dataclass(frozen=True)
class View:
    """Which part of the plan a rendering covers: all of it (the deliverable) or a sub-fabric for verify."""

    zone: str | None = None  # only this zone's switches and CA ports, no inter-zone links
    drop_cables: frozenset[str] = frozenset()  # cable labels left out of the topology (a failed-link case)
    drop_switches: frozenset[str] = frozenset()  # switches left out, with their cables and the CA ports on them

    def describe(self) -> str:
        parts = []
        if self.zone:
            parts.append(f"zone {self.zone} only")
        if self.drop_cables or self.drop_switches:
            parts.append("without " + ", ".join(sorted(self.drop_cables | self.drop_switches)))
        return "; ".join(parts) or "whole fabric"

"""Parsers for what OpenSM and infiniband-diags print (infiniband-diags 44, OpenSM 3.3.23)."""

from __future__ import annotations

import re

_SL2VL_ROW = re.compile(r"^ports: in\s+(\d+), out\s+(\d+):\s*\|(.*)\|\s*$")


def parse_sl2vl(text: str) -> dict[tuple[int, int], list[int]]:
    """smpquery sl2vl: {(in port, out port): [VL for SL 0..15]}."""
    out: dict[tuple[int, int], list[int]] = {}
    for line in text.splitlines():
        m = _SL2VL_ROW.match(line.strip())
        if m:
            out[(int(m.group(1)), int(m.group(2)))] = [int(v) for v in m.group(3).split("|")]
    return out


def parse_vlarb(text: str) -> dict[str, list[tuple[int, int]]]:
    """smpquery vlarb: {"low": [(vl, weight), ...], "high": [...]} in table order."""
    out: dict[str, list[tuple[int, int]]] = {}
    which = None
    vls: list[int] = []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("# Low priority"):
            which = "low"
        elif s.startswith("# High priority"):
            which = "high"
        elif s.startswith("VL") and which:
            vls = [int(v.strip(), 16) for v in s.split(":", 1)[1].strip().strip("|").split("|")]
        elif s.startswith("WEIGHT") and which:
            weights = [int(v.strip(), 16) for v in s.split(":", 1)[1].strip().strip("|").split("|")]
            out[which] = list(zip(vls, weights))
    return out


def parse_path_sl(text: str) -> int | None:
    m = re.search(r"^\s*sl\.+0x([0-9a-fA-F]+)\s*$", text, re.M)
    return int(m.group(1), 16) if m else None


def parse_conf(text: str) -> dict[str, str]:
    """opensm.conf: `key value...` lines; comments and blanks skipped; the last occurrence wins."""
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, _, value = line.partition(" ")
        out[key] = value.strip()
    return out


def conf_key_lines(text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line and not line.startswith("#"):
            out.setdefault(line.split()[0], no)
    return out


_LINT = re.compile(r"(Unrecognized token|-E-|Invalid Cached Option|Warning: Cached Option)")


def lint_messages(opensm_output: str) -> list[str]:
    """The lines of `opensm -F conf -c effective` that mean a key or value was refused."""
    return [ln.strip() for ln in opensm_output.splitlines() if _LINT.search(ln)]


_TS = re.compile(r"^(\w{3}) +(\d+) (\d\d):(\d\d):(\d\d) (\d{6}) ")


def log_time(line: str) -> float | None:
    """Seconds of day of an OpenSM log line (its date is ignored)."""
    m = _TS.match(line)
    if not m:
        return None
    _, _, h, mi, s, us = m.groups()
    return int(h) * 3600 + int(mi) * 60 + int(s) + int(us) / 1e6

"""A checker for NCCL's topology XML parser rules (src/graph/xml.cc), stricter than NCCL itself.

`check_lexical` enforces what makes NCCL fail or misread a file: no XML declaration, no tabs, every start
tag on one line with single spaces and double quotes, `<system version="1">` as the root, lowercase
`dddd:bb:dd.f` bus ids, a link_speed string NCCL's dictionary knows, names and values within 255 chars,
at most 16 attributes, `<pci>` nested only in a bridge (class 0x060400) that holds devices. `parse` then reads the tree with xml.etree for the structural checks.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

NCCL_LINK_SPEEDS = {
    "2.5 GT/s",
    "5 GT/s",
    "8 GT/s",
    "16 GT/s",
    "32 GT/s",
    "2.5 GT/s PCIe",
    "5.0 GT/s PCIe",
    "8.0 GT/s PCIe",
    "16.0 GT/s PCIe",
    "32.0 GT/s PCIe",
    "64.0 GT/s PCIe",
}
BUSID = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
ATTR = r'[a-z_]+="[^"<>&\n\t]{0,255}"'
START = re.compile(rf"^( *)<([a-z]+)((?: {ATTR})*)(/?)>$")
END = re.compile(r"^( *)</([a-z]+)>$")
CHILDREN = {"system": {"cpu"}, "cpu": {"pci", "nic"}, "pci": {"pci", "gpu", "nic", "pcilink"}, "nic": {"net"}}


def check_lexical(text: str) -> list[str]:
    errors = []
    if not text.startswith('<system version="1">\n'):
        errors.append('the file must start with <system version="1"> (no XML declaration)')
    if "\t" in text:
        errors.append("tab characters: NCCL's parser only skips spaces and newlines")
    if "\r" in text:
        errors.append("carriage returns")
    if "'" in text:
        errors.append("single quotes (NCCL 2.18 misreads them)")
    if not text.endswith("\n"):
        errors.append("no final newline")
    stack: list[str] = []
    for no, line in enumerate(text.splitlines(), 1):
        m = START.match(line)
        if m:
            indent, name, attrs, selfclose = m.groups()
            if len(indent) != 2 * len(stack):
                errors.append(f"line {no}: indent {len(indent)} at depth {len(stack)}")
            parent = stack[-1] if stack else None
            if parent is None and name != "system":
                errors.append(f"line {no}: root element {name}")
            if parent is not None and name not in CHILDREN.get(parent, set()):
                errors.append(f"line {no}: <{name}> is not a child NCCL reads under <{parent}>")
            pairs = re.findall(r' ([a-z_]+)="([^"]*)"', attrs)
            if len(pairs) > 16:
                errors.append(f"line {no}: more than 16 attributes")
            if len({k for k, _ in pairs}) != len(pairs):
                errors.append(f"line {no}: duplicate attribute")
            if not selfclose:
                stack.append(name)
            continue
        m = END.match(line)
        if m:
            indent, name = m.groups()
            if not stack or stack[-1] != name:
                errors.append(f"line {no}: closing </{name}> does not match")
            else:
                stack.pop()
            if len(indent) != 2 * len(stack):
                errors.append(f"line {no}: closing indent")
            continue
        errors.append(f"line {no}: not one complete start or end tag per line: {line!r}")
    if stack:
        errors.append(f"unclosed elements {stack}")
    return errors


def parse(text: str) -> ET.Element:
    return ET.fromstring(text)


def check_tree(root: ET.Element) -> list[str]:
    errors = []
    if root.tag != "system" or root.get("version") != "1":
        errors.append('root must be <system version="1">')
    for cpu in root.iter("cpu"):
        for key in ("numaid", "affinity", "arch", "vendor"):
            if not cpu.get(key):
                errors.append(f"<cpu> without {key}")
        if not re.fullmatch(r"[0-9a-f]{1,8}(,[0-9a-f]{8})*", cpu.get("affinity", "")):
            errors.append(f"cpu {cpu.get('numaid')}: affinity {cpu.get('affinity')!r} is not a cpumap")
    for pci in root.iter("pci"):
        bus = pci.get("busid", "")
        if not BUSID.match(bus):
            errors.append(f"busid {bus!r} is not lowercase dddd:bb:dd.f")
        if pci.get("link_speed") not in NCCL_LINK_SPEEDS:
            errors.append(
                f"{bus}: link_speed {pci.get('link_speed')!r} is not in NCCL's dictionary (falls back to Gen3)"
            )
        if not (pci.get("link_width") or "").isdigit():
            errors.append(f"{bus}: link_width {pci.get('link_width')!r}")
        if not re.fullmatch(r"0x[0-9a-f]{6}", pci.get("class", "")):
            errors.append(f"{bus}: class {pci.get('class')!r}")
        nets = pci.findall("nic/net")
        if pci.get("class", "").startswith("0x02"):
            if not bus.endswith(".0"):
                errors.append(f"{bus}: NIC bus ids use function 0")
            if len(nets) != 1 or not nets[0].get("name"):
                errors.append(f"{bus}: NIC without <nic><net name=...>")
            for net in nets:
                if set(net.attrib) - {"name"}:
                    errors.append(f"{bus}: <net> carries {sorted(set(net.attrib) - {'name'})} (overrides detection)")
        if pci.find("gpu") is not None:
            errors.append(f"{bus}: <gpu> elements are left to NCCL")
        # a PCIe switch (topo.cc ncclTopoAddPci: class 0x0604 is PCI, its <pci> children are added under it); a
        # bridge with nothing under it is trimmed by NCCL (ncclTopoTrimXml), a device holds no <pci>
        if pci.get("class", "").startswith("0x0604"):
            if pci.find("pci") is None:
                errors.append(f"{bus}: PCIe switch without devices")
            if pci.find("nic") is not None:
                errors.append(f"{bus}: PCIe switch holding a <nic> directly")
        elif pci.find("pci") is not None:
            errors.append(f"{bus}: <pci> children under a device that is not a bridge (class 0x060400)")
    return errors

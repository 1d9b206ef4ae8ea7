#!/usr/bin/env bash
# Host check for profile {{ p.name }} (node model {{ p.node_model }}, role {{ p.role }}), written by ffplan
# from plan {{ plan_name }}. Re-run `ffplan render` instead of editing.
#
# Read-only: compares this running host with the plan and prints a pass/fail table: IB port state, rate,
# port GUID/LID and active MTU, PCIe address, class, link speed/width and NUMA node of every GPU and NIC,
# the NUMA CPU masks, the NIC interrupts' CPU affinity, GPUDirect RDMA's peer-memory module, the NIC's
# relaxed-ordering bit, MaxReadReqSize and firmware PCI_WR_ORDERING (mlxconfig, or mstconfig where mlxconfig
# is absent), the driver/CUDA/OFED versions, and the host files of this profile. Exit 1 on any FAIL.
# WARN (idle GPU link downtraining, placeholder GUIDs) and SKIP (needs root or a tool, not installed) do
# not fail. `ffplan explain host-check` documents each check.
#
# Usage: host-check.sh [--host NAME]       (default: the short hostname)
set -euo pipefail
export LC_ALL=C

{% set help_end = 14 %}
{% include "hosts/host-option.sh.j2" %}

sysfs="${FFPLAN_SYSFS:-/sys}"
proc="${FFPLAN_PROC:-/proc}"
root="${FFPLAN_ROOT:-}"
profile={{ p.name | shell }}

{% include "hosts/check-lib.sh.j2" %}

# The plan's fabric ports of every host of this profile: NIC, port, port GUID, LID, GUID kind, rate.
plan_ports=()
case "$host" in
{% for h in host_ports %}
  {{ h.hostname | shell }}) plan_ports=({% for pt in h.ports %} {{ pt.nic | shell }} {{ pt.port | string | shell }} {{ pt.guid | shell }} {{ pt.lid | string | shell }} {{ pt.kind | shell }} {{ pt.rate | shell }}{% endfor %} ) ;;
{% endfor %}
  *) ;;
esac

printf '%-4s  %-42s  %-30s  %s\n' "STAT" "CHECK" "PLAN" "HOST"
{% raw %}nports="${#plan_ports[@]}"{% endraw %}

if [ "$nports" -eq 0 ]; then
  report FAIL "host in plan (profile $profile)" {{ ("one of " ~ hosts_summary) | shell }} "$host"
else
  report PASS "host in plan (profile $profile)" "$host" "$host"
fi

# InfiniBand ports: state, rate, port GUID (low 64 bits of GID 0), LID.
for ((i = 0; i + 5 < nports; i += 6)); do
  nic="${plan_ports[i]}"
  port="${plan_ports[i + 1]}"
  guid="${plan_ports[i + 2]}"
  lid="${plan_ports[i + 3]}"
  kind="${plan_ports[i + 4]}"
  want_rate="${plan_ports[i + 5]}"
  ib="$sysfs/class/infiniband/$nic/ports/$port"
  state="$(read_sys "$ib/state")"
  case "$state" in
    *ACTIVE*) report PASS "$nic/$port state" "ACTIVE" "$state" ;;
    *) report FAIL "$nic/$port state" "ACTIVE" "$state" ;;
  esac
  rate="$(read_sys "$ib/rate")"
  case "$rate" in
    *"($want_rate)"*) report PASS "$nic/$port rate" "$want_rate" "$rate" ;;
    *) report FAIL "$nic/$port rate" "$want_rate" "$rate" ;;
  esac
  gid="$(read_sys "$ib/gids/0")"
  if [[ "$gid" =~ ^[0-9a-fA-F]{4}(:[0-9a-fA-F]{4}){7}$ ]]; then
    low="${gid:20}"
    have_guid="0x${low//:/}"
    have_guid="${have_guid,,}"
  else
    have_guid="$gid"
  fi
  if [ "$have_guid" = "${guid,,}" ]; then
    report PASS "$nic/$port port GUID" "$guid" "$have_guid"
  elif [ "$kind" = "placeholder" ]; then
    report WARN "$nic/$port port GUID (plan: placeholder)" "$guid" "$have_guid: put it in the inventory"
  else
    report FAIL "$nic/$port port GUID" "$guid" "$have_guid"
  fi
  have_lid="$(read_sys "$ib/lid")"
  if [[ "$have_lid" =~ ^0x[0-9a-fA-F]+$ ]]; then
    have_lid="$(( 16#${have_lid#0x} ))"
  fi
  if [ "$have_lid" = "$lid" ]; then
    report PASS "$nic/$port LID" "$lid" "$have_lid"
  elif [ "$kind" = "placeholder" ]; then
    report WARN "$nic/$port LID (GUID not pinned)" "$lid" "$have_lid"
  else
    report FAIL "$nic/$port LID" "$lid" "$have_lid"
  fi
{% if p.checks %}
  if command -v ibv_devinfo >/dev/null 2>&1; then
    mtu="$(ibv_devinfo -d "$nic" -i "$port" 2>/dev/null | sed -n 's/^[[:space:]]*active_mtu:[[:space:]]*\([0-9]*\).*/\1/p')"
    check "$nic/$port active MTU" {{ p.checks.ib_mtu | string | shell }} "${mtu:-unreadable}"
  else
    report SKIP "$nic/$port active MTU" {{ p.checks.ib_mtu | string | shell }} "needs ibv_devinfo (rdma-core)"
  fi
{% endif %}
done

# NICs: the IB device sits at the planned PCI address.
check_ib_pci() {
  # IB device name, bus id
  local have
  have="$(readlink -f "$sysfs/class/infiniband/$1/device" 2>/dev/null || printf 'missing')"
  check "$1 PCI address" "$2" "$(basename "$have")"
}
{% for d in nics %}
check_ib_pci {{ d.name | shell }} {{ d.bus_id | shell }}
{% endfor %}

{% include "hosts/check-pci.sh.j2" %}
{% if p.pcie_switches %}

# PCIe switches: each is a bridge on its planned NUMA node, and each device sits under its switch's upstream
# port (the tree topo.xml gives NCCL, which NCCL would otherwise read from here).
check_switch() {
  # name, upstream port bus id, class, numa
  local dev="$sysfs/bus/pci/devices/$2"
  if [ ! -e "$dev" ]; then
    report FAIL "$1 at $2" "present" "missing"
    return 0
  fi
  check "$1 class" "$3" "$(read_sys "$dev/class")"
  check "$1 NUMA node" "$4" "$(read_sys "$dev/numa_node")"
}
check_behind() {
  # device name, device bus id, switch name, switch bus id
  local path
  path="$(readlink -f "$sysfs/bus/pci/devices/$2" 2>/dev/null || printf 'missing')"
  case "$path" in
    */"$4"/*) report PASS "$1 behind $3" "$4" "$path" ;;
    *) report FAIL "$1 behind $3" "$4" "$path" ;;
  esac
}
{% for s in p.pcie_switches %}
check_switch {{ s.name | shell }} {{ s.bus_id | shell }} {{ s.pci_class | shell }} {{ s.numa | string | shell }}
{% endfor %}
{% for d in p.devices if d.pcie_switch %}
check_behind {{ d.name | shell }} {{ d.bus_id | shell }} {{ d.pcie_switch | shell }} {{ switch_bus[d.pcie_switch] | shell }}
{% endfor %}

{% endif %}
{% for d in p.devices %}
check_pci {{ d.name | shell }} {{ d.bus_id | shell }} {{ d.pci_class | shell }} {{ d.vendor | shell }} {{ d.device | shell }} {{ d.link_speed | shell }} {{ d.link_speed_legacy | shell }} {{ d.link_width | string | shell }} {{ d.numa | string | shell }}
{% endfor %}

{% include "hosts/check-numa.sh.j2" %}
{% if p.checks %}
{% include "hosts/check-irqs.sh.j2" %}
{% if p.checks.peer_memory %}
{% include "hosts/check-gdr.sh.j2" %}
{% endif %}
{% if p.checks.versions %}
{% include "hosts/check-versions.sh.j2" %}
{% endif %}
{% endif %}

# Relaxed ordering: the NIC's Device Control bit 4 and the firmware's PCI_WR_ORDERING, and the NIC's
# MaxReadReqSize from the same Device Control word (all need root).
{% include "hosts/firmware-config.sh.j2" %}
{% for bdf in p.relaxed_ordering.nic_bus_ids %}
if [ "$(id -u)" -ne 0 ] || ! command -v setpci >/dev/null 2>&1; then
  report SKIP {{ ("RO bit of " ~ bdf) | shell }} {{ want_ro | shell }} "needs root and setpci"
{% if p.checks %}
  report SKIP {{ ("MaxReadReqSize of " ~ bdf) | shell }} {{ (">= " ~ p.checks.max_read_request_min) | shell }} "needs root and setpci"
{% endif %}
elif devctl="$(setpci -s {{ bdf | shell }} CAP_EXP+8.w 2>/dev/null)" && [[ "$devctl" =~ ^[0-9a-fA-F]{4}$ ]]; then
  check {{ ("RO bit of " ~ bdf) | shell }} {{ want_ro | shell }} "$(( (16#$devctl >> 4) & 1 ))"
{% if p.checks %}
  # MaxReadReqSize: Device Control bits 14:12, 128 << n bytes
  mrrs="$(( 128 << ((16#$devctl >> 12) & 7) ))"
  if [ "$mrrs" -ge {{ p.checks.max_read_request_min }} ]; then
    report PASS {{ ("MaxReadReqSize of " ~ bdf) | shell }} {{ (">= " ~ p.checks.max_read_request_min) | shell }} "$mrrs"
  else
    report FAIL {{ ("MaxReadReqSize of " ~ bdf) | shell }} {{ (">= " ~ p.checks.max_read_request_min) | shell }} "$mrrs (Device Control bits 14:12)"
  fi
{% endif %}
else
  report FAIL {{ ("RO bit of " ~ bdf) | shell }} {{ want_ro | shell }} "unreadable"
fi
if [ "$(id -u)" -ne 0 ] || [ -z "$fw_tool" ]; then
  report SKIP {{ ("PCI_WR_ORDERING of " ~ bdf) | shell }} {{ ro.pci_wr_ordering | string | shell }} "needs root and mlxconfig (MFT) or mstconfig (mstflint)"
else
  wr="$(query_wr_ordering {{ bdf | shell }})"
  check {{ ("PCI_WR_ORDERING of " ~ bdf) | shell }} {{ ro.pci_wr_ordering | string | shell }} "$(wr_ordering_number "${wr:-not reported by $fw_tool}")"
fi
{% endfor %}

# Host files of this profile, byte for byte (sha256 of the rendered file).
check_file() {
  # path, sha256
  local have
  if [ ! -f "$root$1" ]; then
    report FAIL "file $1" "installed" "missing"
    return 0
  fi
  have="$(sha256sum < "$root$1")"
  have="${have%% *}"
  if [ "$have" = "$2" ]; then
    report PASS "file $1" "sha256 ${2:0:12}" "sha256 ${have:0:12}"
  else
    report FAIL "file $1" "sha256 ${2:0:12}" "sha256 ${have:0:12} (differs)"
  fi
}
{% for f in installed %}
check_file {{ f.path | shell }} {{ f.sha256 | shell }}
{% endfor %}

# 3FS: every `sl = ` line of its configuration carries the planned SL.
check_sl() {
  # path, sl
  local line bad=0 seen=0
  if [ ! -f "$root$1" ]; then
    report SKIP "3FS sl in $1" "sl = $2" "file not found"
    return 0
  fi
  while IFS= read -r line; do
    if [[ "$line" =~ ^[[:space:]]*sl[[:space:]]*=[[:space:]]*([0-9]+) ]]; then
      seen=$((seen + 1))
      if [ "${BASH_REMATCH[1]}" != "$2" ]; then
        bad=$((bad + 1))
      fi
    fi
  done < "$root$1"
  if [ "$seen" -gt 0 ] && [ "$bad" -eq 0 ]; then
    report PASS "3FS sl in $1" "sl = $2" "$seen section(s)"
  else
    report FAIL "3FS sl in $1" "sl = $2" "$bad of $seen sl line(s) differ"
  fi
}
{% for t in threefs %}
check_sl {{ t.path | shell }} {{ t.sl | string | shell }}
{% endfor %}

printf '%s passed, %s failed, %s warnings, %s skipped\n' "$passed" "$failed" "$warned" "$skipped"
if [ "$failed" -gt 0 ]; then
  exit 1
fi

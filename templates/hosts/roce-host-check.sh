#!/usr/bin/env bash
# Host check for the RoCE hosts of node model {{ p.node_model }}, written by ffplan from plan {{ plan_name }}.
# Re-run `ffplan render` instead of editing.
#
# Read-only: compares this running host with the plan, item by item of the RDMA article's checklist: each fabric
# NIC's link (up, {{ p.checks.speed_mbps }} Mb/s) and Ethernet MTU, PCIe Gen/width and NUMA node of every GPU and NIC,
# the NUMA CPU masks, NIC interrupt affinity, GPUDirect RDMA, MaxReadReqSize, CQ depth, and the NIC QoS of
# roce-qos.sh (trust DSCP, PFC priority, RDMA-CM ToS, ECN, CNPs, DCQCN congestion control), then the software
# versions. Exit 1 on any FAIL; WARN and SKIP (needs root or a tool) do not fail. `ffplan explain host-check`.
#
# Usage: host-check.sh [--host NAME]       (default: the short hostname)
set -euo pipefail
export LC_ALL=C

{% set help_end = 11 %}
{% include "hosts/host-option.sh.j2" %}

sysfs="${FFPLAN_SYSFS:-/sys}"
proc="${FFPLAN_PROC:-/proc}"
{% if p.checks.versions %}
root="${FFPLAN_ROOT:-}"
{% endif %}
configfs="${FFPLAN_CONFIGFS:-/sys/kernel/config}"
apply=0  # the NIC QoS checks of roce-qos.sh, read-only here

{% include "hosts/check-lib.sh.j2" %}
{% include "hosts/netdev-of.sh.j2" %}

printf '%-4s  %-42s  %-30s  %s\n' "STAT" "CHECK" "PLAN" "HOST"
case "$host" in
{% for h in p.hosts %}
  {{ h | shell }}) report PASS "host in plan" "$host" "$host" ;;
{% endfor %}
  *) report FAIL "host in plan" {{ ("a host of node model " ~ p.node_model) | shell }} "$host" ;;
esac

# Fabric NICs: the RDMA device's network interface is up at the planned speed and Ethernet MTU.
check_link() {
  # RDMA device, speed (Mb/s), MTU
  local ifname
  if ! ifname="$(netdev_of "$1")"; then
    report FAIL "$1 network interface" "present" "none under $sysfs/class/infiniband/$1/device/net"
    return 0
  fi
  check "$1 link ($ifname)" "up" "$(read_sys "$sysfs/class/net/$ifname/operstate")"
  check "$1 speed ($ifname)" "$2" "$(read_sys "$sysfs/class/net/$ifname/speed")"
  check "$1 MTU ($ifname)" "$3" "$(read_sys "$sysfs/class/net/$ifname/mtu")"
}
{% for nic in p.nics %}
check_link {{ nic | shell }} {{ p.checks.speed_mbps | string | shell }} {{ p.checks.mtu.value | string | shell }}
{% endfor %}

{% include "hosts/check-pci.sh.j2" %}
{% for d in p.devices %}
check_pci {{ d.name | shell }} {{ d.bus_id | shell }} {{ d.pci_class | shell }} {{ d.vendor | shell }} {{ d.device | shell }} {{ d.link_speed | shell }} {{ d.link_speed_legacy | shell }} {{ d.link_width | string | shell }} {{ d.numa | string | shell }}
{% endfor %}

{% include "hosts/check-numa.sh.j2" %}
{% include "hosts/check-irqs.sh.j2" %}
{% if p.checks.peer_memory %}
{% include "hosts/check-gdr.sh.j2" %}
{% endif %}

# MaxReadReqSize (PCIe Device Control bits 14:12, 128 << n bytes; needs root) and the deepest completion queue the
# NIC takes (ibv_devinfo -v: max_cqe), per fabric NIC.
check_nic_limits() {
  # RDMA device, bus id
  local devctl mrrs cqe
  if [ "$(id -u)" -ne 0 ] || ! command -v setpci >/dev/null 2>&1; then
    report SKIP "$1 MaxReadReqSize" {{ (">= " ~ p.checks.max_read_request_min) | shell }} "needs root and setpci"
  elif devctl="$(setpci -s "$2" CAP_EXP+8.w 2>/dev/null)" && [[ "$devctl" =~ ^[0-9a-fA-F]{4}$ ]]; then
    mrrs="$(( 128 << ((16#$devctl >> 12) & 7) ))"
    if [ "$mrrs" -ge {{ p.checks.max_read_request_min }} ]; then
      report PASS "$1 MaxReadReqSize" {{ (">= " ~ p.checks.max_read_request_min) | shell }} "$mrrs"
    else
      report FAIL "$1 MaxReadReqSize" {{ (">= " ~ p.checks.max_read_request_min) | shell }} "$mrrs"
    fi
  else
    report FAIL "$1 MaxReadReqSize" {{ (">= " ~ p.checks.max_read_request_min) | shell }} "unreadable"
  fi
  if ! command -v ibv_devinfo >/dev/null 2>&1; then
    report SKIP "$1 CQ depth" {{ (">= " ~ p.checks.cq_depth.value) | shell }} "needs ibv_devinfo (rdma-core)"
    return 0
  fi
  cqe="$(ibv_devinfo -v -d "$1" 2>/dev/null | sed -n 's/^[[:space:]]*max_cqe:[[:space:]]*\([0-9]*\).*/\1/p')"
  if [ -n "$cqe" ] && [ "$cqe" -ge {{ p.checks.cq_depth.value }} ]; then
    report PASS "$1 CQ depth" {{ (">= " ~ p.checks.cq_depth.value) | shell }} "max_cqe $cqe"
  else
    report FAIL "$1 CQ depth" {{ (">= " ~ p.checks.cq_depth.value) | shell }} "max_cqe ${cqe:-unreadable}"
  fi
}
{% for d in p.devices if d.kind == "nic" and d.name in p.nics %}
check_nic_limits {{ d.name | shell }} {{ d.bus_id | shell }}
{% endfor %}

# NIC QoS and congestion control, as roce-qos.sh sets them (run it with --apply to fix what fails here).
{% include "hosts/roce-nic-qos.sh.j2" %}
nics=({% for nic in p.nics %} {{ nic | shell }}{% endfor %} )
for dev in "${nics[@]}"; do
  nic_qos "$dev"
done
{% if p.checks.versions %}
{% include "hosts/check-versions.sh.j2" %}
{% endif %}

printf '%s passed, %s failed, %s warnings, %s skipped\n' "$passed" "$failed" "$warned" "$skipped"
if [ "$failed" -gt 0 ]; then
  exit 1
fi

#!/usr/bin/env bash
# NIC QoS of the RoCE hosts of node model {{ p.node_model }}, written by ffplan from plan {{ plan_name }}.
# Re-run `ffplan render` instead of editing.
#
# The hosts' half of the fabric's lossless QoS, on every fabric NIC: trust DSCP and PFC per priority {{ q.pfc }}
# (mlnx_qos), RDMA-CM's default ToS {{ q.roce_tos.value }}, ECN notification and reaction points on priority {{ q.ecn_priority }},
# the CNPs' DSCP and priority, and the DCQCN parameters (sysfs ecn/roce_np and ecn/roce_rp, MLNX_OFED's mlx5).
#
# Default: read-only. Prints one line per check and exits 1 if anything differs from the plan.
# --apply: sets what differs and nothing else (idempotent); not persistent across reboots or driver reloads:
# run it from a boot-time unit.
#
# Usage: roce-qos.sh [--apply]      (as root to apply)
set -euo pipefail
export LC_ALL=C

{% set help_end = 13 %}
{% include "hosts/apply-option.sh.j2" %}

sysfs="${FFPLAN_SYSFS:-/sys}"
configfs="${FFPLAN_CONFIGFS:-/sys/kernel/config}"
status=0
report() {
  # state (PASS, SET, FAIL, SKIP), check, plan, host
  printf '%-4s  %-44s  %-18s  %s\n' "$1" "$2" "$3" "$4"
  if [ "$1" = FAIL ]; then
    status=1
  fi
}

{% include "hosts/netdev-of.sh.j2" %}

{% include "hosts/roce-nic-qos.sh.j2" %}

printf '%-4s  %-44s  %-18s  %s\n' STAT CHECK PLAN HOST
nics=({% for nic in p.nics %} {{ nic | shell }}{% endfor %} )
for dev in "${nics[@]}"; do
  nic_qos "$dev"
done
exit "$status"

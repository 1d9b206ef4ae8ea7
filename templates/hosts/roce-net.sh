#!/usr/bin/env bash
# RoCE addressing and policy routing of host {{ hostname }}, written by ffplan from plan {{ plan_name }}.
# Re-run `ffplan render` instead of editing.
#
# Every fabric NIC has its own /31 (its leaf's end is the gateway) and its own routing table: traffic from the
# NIC's address to the fabric's hosts ({{ pool }}) leaves through that NIC (ip rule from ADDRESS), so RDMA
# connections of every rail use their own port. ARP answers only for the asking interface's own addresses
# (arp_ignore=1, arp_announce=2); reverse-path filtering is loose (rp_filter=2).
#
# Default: read-only. Prints one line per check (OK or FAIL) and exits 1 if anything differs from the plan.
# --apply: sets what differs and nothing else (idempotent); not persistent across reboots: run it from a
# boot-time unit, or carry the same settings into netplan / systemd-networkd.
#
# Usage: roce-net.sh [--apply]      (as root to apply)
# shellcheck disable=SC2317  # the check functions below are called through `ensure`
set -euo pipefail
export LC_ALL=C

{% set help_end = 14 %}
{% include "hosts/apply-option.sh.j2" %}

sysfs="${FFPLAN_SYSFS:-/sys}"
pool={{ pool | shell }}
status=0

report() {
  # report OK|FAIL WHAT DETAIL
  printf '%-4s %-28s %s\n' "$1" "$2" "$3"
  if [ "$1" = FAIL ]; then
    status=1
  fi
}

{% include "hosts/netdev-of.sh.j2" %}

ensure() {
  # ensure WHAT DETAIL TEST_COMMAND... -- APPLY_COMMAND...: OK when the test passes; with --apply, run the fix
  # and test again
  local what="$1" detail="$2"
  shift 2
  local test=() fix=()
  while [ "$#" -gt 0 ] && [ "$1" != -- ]; do
    test+=("$1")
    shift
  done
  shift
  fix=("$@")
  if "${test[@]}"; then
    report OK "$what" "$detail"
  elif [ "$apply" = 1 ] && "${fix[@]}" && "${test[@]}"; then
    report OK "$what" "$detail (set)"
  else
    report FAIL "$what" "$detail"
  fi
}

sysctl_is() {
  [ "$(sysctl -n "$1")" = "$2" ]
}

# (each reads the command's whole output before grep looks: `cmd | grep -q` could fail on SIGPIPE under pipefail)
has_address() {
  grep -qF " inet $2 " <<<"$(ip -o -4 addr show dev "$1")"
}

has_mtu() {
  grep -qF " mtu $2 " <<<"$(ip -o link show dev "$1")"
}

is_up() {
  grep -qE '[<,]UP[,>]' <<<"$(ip -o link show dev "$1")"
}

has_rule() {
  grep -qF "from $1 lookup $2" <<<"$(ip -4 rule show)"
}

has_route() {
  grep -qF "$pool via $1 dev $2 " <<<"$(ip -4 route show table "$3" 2>/dev/null)"
}

ensure net.ipv4.conf.all.arp_ignore 1 sysctl_is net.ipv4.conf.all.arp_ignore 1 -- sysctl -qw net.ipv4.conf.all.arp_ignore=1
ensure net.ipv4.conf.all.arp_announce 2 sysctl_is net.ipv4.conf.all.arp_announce 2 -- sysctl -qw net.ipv4.conf.all.arp_announce=2
ensure net.ipv4.conf.all.rp_filter 2 sysctl_is net.ipv4.conf.all.rp_filter 2 -- sysctl -qw net.ipv4.conf.all.rp_filter=2

# From the plan: RDMA device, address/31, gateway, routing table and MTU of each fabric NIC.
while read -r dev address gateway table mtu; do
  if ! ifname="$(netdev_of "$dev")"; then
    report FAIL "$dev" "no network interface under $sysfs/class/infiniband/$dev/device/net"
    continue
  fi
  ensure "$dev mtu" "$ifname mtu $mtu" has_mtu "$ifname" "$mtu" -- ip link set dev "$ifname" mtu "$mtu"
  ensure "$dev up" "$ifname up" is_up "$ifname" -- ip link set dev "$ifname" up
  ensure "$dev address" "$ifname $address" has_address "$ifname" "$address" -- ip addr replace "$address" dev "$ifname"
  ensure "$dev rule" "from ${address%/*} lookup $table" has_rule "${address%/*}" "$table" \
    -- ip -4 rule add from "${address%/*}" lookup "$table" priority "$((1000 + table))"
  ensure "$dev route" "$pool via $gateway table $table" has_route "$gateway" "$ifname" "$table" \
    -- ip -4 route replace "$pool" via "$gateway" dev "$ifname" table "$table"
done <<'PLAN'
{% for i in interfaces %}
{{ i.nic }} {{ i.address }} {{ i.gateway }} {{ i.table }} {{ i.mtu }}
{% endfor %}
PLAN
exit "$status"

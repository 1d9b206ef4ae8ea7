#!/usr/bin/env bash
# Host check for profile storage-node (node model storage-node, role storage), written by ffplan
# from plan lab. Re-run `ffplan render` instead of editing.
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

usage() {
  printf 'usage: %s [--host NAME]\n' "$0" >&2
}

host="$(hostname -s 2>/dev/null || uname -n)"
while [ "$#" -gt 0 ]; do
  case "$1" in
    --host)
      if [ "$#" -lt 2 ]; then usage; exit 2; fi
      host="$2"
      shift 2
      ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) usage; exit 2 ;;
  esac
done

sysfs="${FFPLAN_SYSFS:-/sys}"
proc="${FFPLAN_PROC:-/proc}"
root="${FFPLAN_ROOT:-}"
profile=storage-node

passed=0
failed=0
warned=0
skipped=0
report() {
  # status, check, expected, actual
  printf '%-4s  %-42s  %-30s  %s\n' "$1" "$2" "$3" "$4"
  case "$1" in
    PASS) passed=$((passed + 1)) ;;
    FAIL) failed=$((failed + 1)) ;;
    WARN) warned=$((warned + 1)) ;;
    *) skipped=$((skipped + 1)) ;;
  esac
}
check() {
  # check, expected, actual: PASS when equal
  if [ "$2" = "$3" ]; then
    report PASS "$1" "$2" "$3"
  else
    report FAIL "$1" "$2" "$3"
  fi
}
read_sys() {
  # the first line of a sysfs file, or "missing"
  local line
  if [ -r "$1" ] && IFS= read -r line < "$1"; then
    printf '%s' "$line"
  else
    printf 'missing'
  fi
}
hexmask() {
  # a cpumap without commas and leading zeros, so masks of different widths compare
  local m="${1//,/}"
  m="${m#"${m%%[!0]*}"}"
  printf '%s' "${m:-0}"
}
mask_within() {
  # cpumaps a, b: 0 when every CPU of a is in b (compared hex digit by hex digit, from the right)
  local a b i
  a="$(hexmask "$1")"
  b="$(hexmask "$2")"
  [[ "$a" =~ ^[0-9a-fA-F]+$ && "$b" =~ ^[0-9a-fA-F]+$ ]] || return 1
  while [ "${#b}" -lt "${#a}" ]; do b="0$b"; done
  for ((i = 1; i <= ${#a}; i++)); do
    if (( 16#${a: -i:1} & ~16#${b: -i:1} & 15 )); then
      return 1
    fi
  done
  return 0
}
version_at_least() {
  # have, want: 0 when version have >= want (sort -V orders 580.9 before 580.10)
  [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]
}

# The plan's fabric ports of every host of this profile: NIC, port, port GUID, LID, GUID kind, rate.
plan_ports=()
case "$host" in
  stor1) plan_ports=( mlx5_0 1 0x0002c90003000120 15 placeholder '4X HDR' mlx5_1 1 0x0002c90003000124 28 placeholder '4X HDR' ) ;;
  stor2) plan_ports=( mlx5_0 1 0x0002c90003000130 19 placeholder '4X HDR' mlx5_1 1 0x0002c90003000134 32 placeholder '4X HDR' ) ;;
  stor3) plan_ports=( mlx5_0 1 0x0002c90003000140 22 placeholder '4X HDR' mlx5_1 1 0x0002c90003000144 35 placeholder '4X HDR' ) ;;
  stor4) plan_ports=( mlx5_0 1 0x0002c90003000150 25 placeholder '4X HDR' mlx5_1 1 0x0002c90003000154 38 placeholder '4X HDR' ) ;;
  *) ;;
esac

printf '%-4s  %-42s  %-30s  %s\n' "STAT" "CHECK" "PLAN" "HOST"
nports="${#plan_ports[@]}"
if [ "$nports" -eq 0 ]; then
  report FAIL "host in plan (profile $profile)" 'one of stor[1-4]' "$host"
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
  if command -v ibv_devinfo >/dev/null 2>&1; then
    mtu="$(ibv_devinfo -d "$nic" -i "$port" 2>/dev/null | sed -n 's/^[[:space:]]*active_mtu:[[:space:]]*\([0-9]*\).*/\1/p')"
    check "$nic/$port active MTU" 4096 "${mtu:-unreadable}"
  else
    report SKIP "$nic/$port active MTU" 4096 "needs ibv_devinfo (rdma-core)"
  fi
done

# NICs: the IB device sits at the planned PCI address.
check_ib_pci() {
  # IB device name, bus id
  local have
  have="$(readlink -f "$sysfs/class/infiniband/$1/device" 2>/dev/null || printf 'missing')"
  check "$1 PCI address" "$2" "$(basename "$have")"
}
check_ib_pci mlx5_0 0000:41:00.0
check_ib_pci mlx5_1 0000:c1:00.0

# PCIe devices: presence, class, ids, link (GPUs downtrain when idle: WARN if only the current speed is low), NUMA node.
check_pci() {
  # name, bus id, class, vendor, device, speed, legacy speed, width, numa
  local dev="$sysfs/bus/pci/devices/$2"
  local speed max
  if [ ! -e "$dev" ]; then
    report FAIL "$1 at $2" "present" "missing"
    return 0
  fi
  check "$1 class" "$3" "$(read_sys "$dev/class")"
  check "$1 vendor:device" "$4:$5" "$(read_sys "$dev/vendor"):$(read_sys "$dev/device")"
  speed="$(read_sys "$dev/current_link_speed")"
  max="$(read_sys "$dev/max_link_speed")"
  if [ "$speed" = "$6" ] || [ "$speed" = "$7" ]; then
    report PASS "$1 link speed" "$6" "$speed"
  elif [ "$max" = "$6" ] || [ "$max" = "$7" ]; then
    report WARN "$1 link speed (idle downtraining?)" "$6" "$speed now, max $max: re-check under load"
  else
    report FAIL "$1 link speed" "$6" "$speed (max $max)"
  fi
  check "$1 link width" "$8" "$(read_sys "$dev/current_link_width")"
  check "$1 NUMA node" "$9" "$(read_sys "$dev/numa_node")"
}
check_pci mlx5_0 0000:41:00.0 0x020700 0x15b3 0x101b '16.0 GT/s PCIe' '16 GT/s' 16 0
check_pci mlx5_1 0000:c1:00.0 0x020700 0x15b3 0x101b '16.0 GT/s PCIe' '16 GT/s' 16 0

# NUMA nodes: the CPU masks the topology file gives NCCL.
check_cpumap() {
  # NUMA node id, cpumap
  check "NUMA node $1 cpumap" "$(hexmask "$2")" "$(hexmask "$(read_sys "$sysfs/devices/system/node/node$1/cpumap")")"
}
check_cpumap 0 ffffffff

# NIC interrupts: every MSI-X vector's smp_affinity within the CPUs of the NIC's NUMA node (cross-socket
# interrupt handling adds latency to every completion).
check_irqs() {
  # NIC name, bus id, NUMA node, that node's cpumap
  local irq mask total=0 outside=()
  if [ ! -d "$sysfs/bus/pci/devices/$2/msi_irqs" ]; then
    report FAIL "$1 IRQ affinity" "NUMA node $3" "no msi_irqs"
    return 0
  fi
  for irq in "$sysfs/bus/pci/devices/$2/msi_irqs"/*; do
    [ -e "$irq" ] || continue
    irq="${irq##*/}"
    total=$((total + 1))
    mask="$(read_sys "$proc/irq/$irq/smp_affinity")"
    mask_within "$mask" "$4" || outside+=("$irq")
  done
  if [ "$total" -eq 0 ]; then
    report FAIL "$1 IRQ affinity" "NUMA node $3" "no interrupts"
  elif [ "${#outside[@]}" -eq 0 ]; then
    report PASS "$1 IRQ affinity" "NUMA node $3" "$total of $total IRQs"
  else
    report FAIL "$1 IRQ affinity" "NUMA node $3" "${#outside[@]} of $total IRQs outside (${outside[*]:0:8})"
  fi
}
check_irqs mlx5_0 0000:41:00.0 0 ffffffff
check_irqs mlx5_1 0000:c1:00.0 0 ffffffff

# Relaxed ordering: the NIC's Device Control bit 4 and the firmware's PCI_WR_ORDERING, and the NIC's
# MaxReadReqSize from the same Device Control word (all need root).
# ConnectX firmware settings are read and set with mlxconfig (NVIDIA MFT) or, on a stock Debian/Ubuntu host,
# with mstconfig (package mstflint): both take `-d <bdf> query|set NAME[=VALUE]` and print the same table.
fw_tool=""
if command -v mlxconfig >/dev/null 2>&1; then
  fw_tool=mlxconfig
elif command -v mstconfig >/dev/null 2>&1; then
  fw_tool=mstconfig
fi
query_wr_ordering() {
  # PCI_WR_ORDERING of the NIC at PCI address $1 as the tool prints it (per_mkey(0)), or nothing
  "$fw_tool" -d "$1" query PCI_WR_ORDERING 2>/dev/null | awk '$1 == "PCI_WR_ORDERING" { print $NF; exit }' || true
}
wr_ordering_number() {
  # the number in a value printed as name(number)
  local value="${1##*(}"
  printf '%s' "${value%%)*}"
}
if [ "$(id -u)" -ne 0 ] || ! command -v setpci >/dev/null 2>&1; then
  report SKIP 'RO bit of 0000:41:00.0' 1 "needs root and setpci"
  report SKIP 'MaxReadReqSize of 0000:41:00.0' '>= 512' "needs root and setpci"
elif devctl="$(setpci -s 0000:41:00.0 CAP_EXP+8.w 2>/dev/null)" && [[ "$devctl" =~ ^[0-9a-fA-F]{4}$ ]]; then
  check 'RO bit of 0000:41:00.0' 1 "$(( (16#$devctl >> 4) & 1 ))"
  # MaxReadReqSize: Device Control bits 14:12, 128 << n bytes
  mrrs="$(( 128 << ((16#$devctl >> 12) & 7) ))"
  if [ "$mrrs" -ge 512 ]; then
    report PASS 'MaxReadReqSize of 0000:41:00.0' '>= 512' "$mrrs"
  else
    report FAIL 'MaxReadReqSize of 0000:41:00.0' '>= 512' "$mrrs (Device Control bits 14:12)"
  fi
else
  report FAIL 'RO bit of 0000:41:00.0' 1 "unreadable"
fi
if [ "$(id -u)" -ne 0 ] || [ -z "$fw_tool" ]; then
  report SKIP 'PCI_WR_ORDERING of 0000:41:00.0' 0 "needs root and mlxconfig (MFT) or mstconfig (mstflint)"
else
  wr="$(query_wr_ordering 0000:41:00.0)"
  check 'PCI_WR_ORDERING of 0000:41:00.0' 0 "$(wr_ordering_number "${wr:-not reported by $fw_tool}")"
fi
if [ "$(id -u)" -ne 0 ] || ! command -v setpci >/dev/null 2>&1; then
  report SKIP 'RO bit of 0000:c1:00.0' 1 "needs root and setpci"
  report SKIP 'MaxReadReqSize of 0000:c1:00.0' '>= 512' "needs root and setpci"
elif devctl="$(setpci -s 0000:c1:00.0 CAP_EXP+8.w 2>/dev/null)" && [[ "$devctl" =~ ^[0-9a-fA-F]{4}$ ]]; then
  check 'RO bit of 0000:c1:00.0' 1 "$(( (16#$devctl >> 4) & 1 ))"
  # MaxReadReqSize: Device Control bits 14:12, 128 << n bytes
  mrrs="$(( 128 << ((16#$devctl >> 12) & 7) ))"
  if [ "$mrrs" -ge 512 ]; then
    report PASS 'MaxReadReqSize of 0000:c1:00.0' '>= 512' "$mrrs"
  else
    report FAIL 'MaxReadReqSize of 0000:c1:00.0' '>= 512' "$mrrs (Device Control bits 14:12)"
  fi
else
  report FAIL 'RO bit of 0000:c1:00.0' 1 "unreadable"
fi
if [ "$(id -u)" -ne 0 ] || [ -z "$fw_tool" ]; then
  report SKIP 'PCI_WR_ORDERING of 0000:c1:00.0' 0 "needs root and mlxconfig (MFT) or mstconfig (mstflint)"
else
  wr="$(query_wr_ordering 0000:c1:00.0)"
  check 'PCI_WR_ORDERING of 0000:c1:00.0' 0 "$(wr_ordering_number "${wr:-not reported by $fw_tool}")"
fi

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
check_file /etc/ucx/ucx.conf 3928cf7cb30d78595f178a4a38492a504ccc885d2a22d18f1d901e3dc6bd49fc

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
check_sl /opt/3fs/etc/hf3fs_fuse_main.toml 3
check_sl /opt/3fs/etc/storage_main.toml 3

printf '%s passed, %s failed, %s warnings, %s skipped\n' "$passed" "$failed" "$warned" "$skipped"
if [ "$failed" -gt 0 ]; then
  exit 1
fi

#!/usr/bin/env bash
# Host check for profile hgx-h800 (node model hgx-h800, role compute), written by ffplan
# from plan hgx-h800. Re-run `ffplan render` instead of editing.
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
profile=hgx-h800

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
  hgx1) plan_ports=( mlx5_0 1 0x946dae0300010000 7 inventory '4X NDR' mlx5_1 1 0x946dae0300010100 8 inventory '4X NDR' mlx5_2 1 0x946dae0300010200 9 inventory '4X NDR' mlx5_3 1 0x946dae0300010300 10 inventory '4X NDR' mlx5_4 1 0x946dae0300010400 11 inventory '4X NDR' mlx5_5 1 0x946dae0300010500 12 inventory '4X NDR' mlx5_6 1 0x946dae0300010600 13 inventory '4X NDR' mlx5_7 1 0x946dae0300010700 14 inventory '4X NDR' ) ;;
  hgx2) plan_ports=( mlx5_0 1 0x946dae0300020000 15 inventory '4X NDR' mlx5_1 1 0x946dae0300020100 16 inventory '4X NDR' mlx5_2 1 0x946dae0300020200 17 inventory '4X NDR' mlx5_3 1 0x946dae0300020300 18 inventory '4X NDR' mlx5_4 1 0x946dae0300020400 19 inventory '4X NDR' mlx5_5 1 0x946dae0300020500 20 inventory '4X NDR' mlx5_6 1 0x946dae0300020600 21 inventory '4X NDR' mlx5_7 1 0x946dae0300020700 22 inventory '4X NDR' ) ;;
  *) ;;
esac

printf '%-4s  %-42s  %-30s  %s\n' "STAT" "CHECK" "PLAN" "HOST"
nports="${#plan_ports[@]}"
if [ "$nports" -eq 0 ]; then
  report FAIL "host in plan (profile $profile)" 'one of hgx[1-2]' "$host"
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
check_ib_pci mlx5_0 0000:19:00.0
check_ib_pci mlx5_1 0000:1c:00.0
check_ib_pci mlx5_2 0000:3b:00.0
check_ib_pci mlx5_3 0000:3e:00.0
check_ib_pci mlx5_4 0000:9b:00.0
check_ib_pci mlx5_5 0000:9e:00.0
check_ib_pci mlx5_6 0000:bb:00.0
check_ib_pci mlx5_7 0000:be:00.0

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
check_switch sw0 0000:15:00.0 0x060400 0
check_switch sw1 0000:37:00.0 0x060400 0
check_switch sw2 0000:97:00.0 0x060400 1
check_switch sw3 0000:b7:00.0 0x060400 1
check_behind gpu0 0000:18:00.0 sw0 0000:15:00.0
check_behind gpu1 0000:1b:00.0 sw0 0000:15:00.0
check_behind gpu2 0000:3a:00.0 sw1 0000:37:00.0
check_behind gpu3 0000:3d:00.0 sw1 0000:37:00.0
check_behind gpu4 0000:9a:00.0 sw2 0000:97:00.0
check_behind gpu5 0000:9d:00.0 sw2 0000:97:00.0
check_behind gpu6 0000:ba:00.0 sw3 0000:b7:00.0
check_behind gpu7 0000:bd:00.0 sw3 0000:b7:00.0
check_behind mlx5_0 0000:19:00.0 sw0 0000:15:00.0
check_behind mlx5_1 0000:1c:00.0 sw0 0000:15:00.0
check_behind mlx5_2 0000:3b:00.0 sw1 0000:37:00.0
check_behind mlx5_3 0000:3e:00.0 sw1 0000:37:00.0
check_behind mlx5_4 0000:9b:00.0 sw2 0000:97:00.0
check_behind mlx5_5 0000:9e:00.0 sw2 0000:97:00.0
check_behind mlx5_6 0000:bb:00.0 sw3 0000:b7:00.0
check_behind mlx5_7 0000:be:00.0 sw3 0000:b7:00.0

check_pci gpu0 0000:18:00.0 0x030200 0x10de 0x2324 '32.0 GT/s PCIe' '32 GT/s' 16 0
check_pci gpu1 0000:1b:00.0 0x030200 0x10de 0x2324 '32.0 GT/s PCIe' '32 GT/s' 16 0
check_pci gpu2 0000:3a:00.0 0x030200 0x10de 0x2324 '32.0 GT/s PCIe' '32 GT/s' 16 0
check_pci gpu3 0000:3d:00.0 0x030200 0x10de 0x2324 '32.0 GT/s PCIe' '32 GT/s' 16 0
check_pci gpu4 0000:9a:00.0 0x030200 0x10de 0x2324 '32.0 GT/s PCIe' '32 GT/s' 16 1
check_pci gpu5 0000:9d:00.0 0x030200 0x10de 0x2324 '32.0 GT/s PCIe' '32 GT/s' 16 1
check_pci gpu6 0000:ba:00.0 0x030200 0x10de 0x2324 '32.0 GT/s PCIe' '32 GT/s' 16 1
check_pci gpu7 0000:bd:00.0 0x030200 0x10de 0x2324 '32.0 GT/s PCIe' '32 GT/s' 16 1
check_pci mlx5_0 0000:19:00.0 0x020700 0x15b3 0x1021 '32.0 GT/s PCIe' '32 GT/s' 16 0
check_pci mlx5_1 0000:1c:00.0 0x020700 0x15b3 0x1021 '32.0 GT/s PCIe' '32 GT/s' 16 0
check_pci mlx5_2 0000:3b:00.0 0x020700 0x15b3 0x1021 '32.0 GT/s PCIe' '32 GT/s' 16 0
check_pci mlx5_3 0000:3e:00.0 0x020700 0x15b3 0x1021 '32.0 GT/s PCIe' '32 GT/s' 16 0
check_pci mlx5_4 0000:9b:00.0 0x020700 0x15b3 0x1021 '32.0 GT/s PCIe' '32 GT/s' 16 1
check_pci mlx5_5 0000:9e:00.0 0x020700 0x15b3 0x1021 '32.0 GT/s PCIe' '32 GT/s' 16 1
check_pci mlx5_6 0000:bb:00.0 0x020700 0x15b3 0x1021 '32.0 GT/s PCIe' '32 GT/s' 16 1
check_pci mlx5_7 0000:be:00.0 0x020700 0x15b3 0x1021 '32.0 GT/s PCIe' '32 GT/s' 16 1

# NUMA nodes: the CPU masks the topology file gives NCCL.
check_cpumap() {
  # NUMA node id, cpumap
  check "NUMA node $1 cpumap" "$(hexmask "$2")" "$(hexmask "$(read_sys "$sysfs/devices/system/node/node$1/cpumap")")"
}
check_cpumap 0 00000000,000000ff,ffffffff,ffff0000,00000000,00ffffff,ffffffff
check_cpumap 1 ffffffff,ffffff00,00000000,0000ffff,ffffffff,ff000000,00000000

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
check_irqs mlx5_0 0000:19:00.0 0 00000000,000000ff,ffffffff,ffff0000,00000000,00ffffff,ffffffff
check_irqs mlx5_1 0000:1c:00.0 0 00000000,000000ff,ffffffff,ffff0000,00000000,00ffffff,ffffffff
check_irqs mlx5_2 0000:3b:00.0 0 00000000,000000ff,ffffffff,ffff0000,00000000,00ffffff,ffffffff
check_irqs mlx5_3 0000:3e:00.0 0 00000000,000000ff,ffffffff,ffff0000,00000000,00ffffff,ffffffff
check_irqs mlx5_4 0000:9b:00.0 1 ffffffff,ffffff00,00000000,0000ffff,ffffffff,ff000000,00000000
check_irqs mlx5_5 0000:9e:00.0 1 ffffffff,ffffff00,00000000,0000ffff,ffffffff,ff000000,00000000
check_irqs mlx5_6 0000:bb:00.0 1 ffffffff,ffffff00,00000000,0000ffff,ffffffff,ff000000,00000000
check_irqs mlx5_7 0000:be:00.0 1 ffffffff,ffffff00,00000000,0000ffff,ffffffff,ff000000,00000000

# GPUDirect RDMA: the NIC reads and writes GPU memory directly only with the peer-memory module loaded
# (nvidia_peermem; nv_peer_mem before driver 470).
if [ -d "$sysfs/module/nvidia_peermem" ]; then
  report PASS "GPUDirect RDMA peer memory" "nvidia_peermem" "loaded"
elif [ -d "$sysfs/module/nv_peer_mem" ]; then
  report PASS "GPUDirect RDMA peer memory" "nvidia_peermem" "nv_peer_mem loaded"
else
  report FAIL "GPUDirect RDMA peer memory" "nvidia_peermem" "not loaded (modprobe nvidia_peermem)"
fi

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
  report SKIP 'RO bit of 0000:19:00.0' 1 "needs root and setpci"
  report SKIP 'MaxReadReqSize of 0000:19:00.0' '>= 512' "needs root and setpci"
elif devctl="$(setpci -s 0000:19:00.0 CAP_EXP+8.w 2>/dev/null)" && [[ "$devctl" =~ ^[0-9a-fA-F]{4}$ ]]; then
  check 'RO bit of 0000:19:00.0' 1 "$(( (16#$devctl >> 4) & 1 ))"
  # MaxReadReqSize: Device Control bits 14:12, 128 << n bytes
  mrrs="$(( 128 << ((16#$devctl >> 12) & 7) ))"
  if [ "$mrrs" -ge 512 ]; then
    report PASS 'MaxReadReqSize of 0000:19:00.0' '>= 512' "$mrrs"
  else
    report FAIL 'MaxReadReqSize of 0000:19:00.0' '>= 512' "$mrrs (Device Control bits 14:12)"
  fi
else
  report FAIL 'RO bit of 0000:19:00.0' 1 "unreadable"
fi
if [ "$(id -u)" -ne 0 ] || [ -z "$fw_tool" ]; then
  report SKIP 'PCI_WR_ORDERING of 0000:19:00.0' 0 "needs root and mlxconfig (MFT) or mstconfig (mstflint)"
else
  wr="$(query_wr_ordering 0000:19:00.0)"
  check 'PCI_WR_ORDERING of 0000:19:00.0' 0 "$(wr_ordering_number "${wr:-not reported by $fw_tool}")"
fi
if [ "$(id -u)" -ne 0 ] || ! command -v setpci >/dev/null 2>&1; then
  report SKIP 'RO bit of 0000:1c:00.0' 1 "needs root and setpci"
  report SKIP 'MaxReadReqSize of 0000:1c:00.0' '>= 512' "needs root and setpci"
elif devctl="$(setpci -s 0000:1c:00.0 CAP_EXP+8.w 2>/dev/null)" && [[ "$devctl" =~ ^[0-9a-fA-F]{4}$ ]]; then
  check 'RO bit of 0000:1c:00.0' 1 "$(( (16#$devctl >> 4) & 1 ))"
  # MaxReadReqSize: Device Control bits 14:12, 128 << n bytes
  mrrs="$(( 128 << ((16#$devctl >> 12) & 7) ))"
  if [ "$mrrs" -ge 512 ]; then
    report PASS 'MaxReadReqSize of 0000:1c:00.0' '>= 512' "$mrrs"
  else
    report FAIL 'MaxReadReqSize of 0000:1c:00.0' '>= 512' "$mrrs (Device Control bits 14:12)"
  fi
else
  report FAIL 'RO bit of 0000:1c:00.0' 1 "unreadable"
fi
if [ "$(id -u)" -ne 0 ] || [ -z "$fw_tool" ]; then
  report SKIP 'PCI_WR_ORDERING of 0000:1c:00.0' 0 "needs root and mlxconfig (MFT) or mstconfig (mstflint)"
else
  wr="$(query_wr_ordering 0000:1c:00.0)"
  check 'PCI_WR_ORDERING of 0000:1c:00.0' 0 "$(wr_ordering_number "${wr:-not reported by $fw_tool}")"
fi
if [ "$(id -u)" -ne 0 ] || ! command -v setpci >/dev/null 2>&1; then
  report SKIP 'RO bit of 0000:3b:00.0' 1 "needs root and setpci"
  report SKIP 'MaxReadReqSize of 0000:3b:00.0' '>= 512' "needs root and setpci"
elif devctl="$(setpci -s 0000:3b:00.0 CAP_EXP+8.w 2>/dev/null)" && [[ "$devctl" =~ ^[0-9a-fA-F]{4}$ ]]; then
  check 'RO bit of 0000:3b:00.0' 1 "$(( (16#$devctl >> 4) & 1 ))"
  # MaxReadReqSize: Device Control bits 14:12, 128 << n bytes
  mrrs="$(( 128 << ((16#$devctl >> 12) & 7) ))"
  if [ "$mrrs" -ge 512 ]; then
    report PASS 'MaxReadReqSize of 0000:3b:00.0' '>= 512' "$mrrs"
  else
    report FAIL 'MaxReadReqSize of 0000:3b:00.0' '>= 512' "$mrrs (Device Control bits 14:12)"
  fi
else
  report FAIL 'RO bit of 0000:3b:00.0' 1 "unreadable"
fi
if [ "$(id -u)" -ne 0 ] || [ -z "$fw_tool" ]; then
  report SKIP 'PCI_WR_ORDERING of 0000:3b:00.0' 0 "needs root and mlxconfig (MFT) or mstconfig (mstflint)"
else
  wr="$(query_wr_ordering 0000:3b:00.0)"
  check 'PCI_WR_ORDERING of 0000:3b:00.0' 0 "$(wr_ordering_number "${wr:-not reported by $fw_tool}")"
fi
if [ "$(id -u)" -ne 0 ] || ! command -v setpci >/dev/null 2>&1; then
  report SKIP 'RO bit of 0000:3e:00.0' 1 "needs root and setpci"
  report SKIP 'MaxReadReqSize of 0000:3e:00.0' '>= 512' "needs root and setpci"
elif devctl="$(setpci -s 0000:3e:00.0 CAP_EXP+8.w 2>/dev/null)" && [[ "$devctl" =~ ^[0-9a-fA-F]{4}$ ]]; then
  check 'RO bit of 0000:3e:00.0' 1 "$(( (16#$devctl >> 4) & 1 ))"
  # MaxReadReqSize: Device Control bits 14:12, 128 << n bytes
  mrrs="$(( 128 << ((16#$devctl >> 12) & 7) ))"
  if [ "$mrrs" -ge 512 ]; then
    report PASS 'MaxReadReqSize of 0000:3e:00.0' '>= 512' "$mrrs"
  else
    report FAIL 'MaxReadReqSize of 0000:3e:00.0' '>= 512' "$mrrs (Device Control bits 14:12)"
  fi
else
  report FAIL 'RO bit of 0000:3e:00.0' 1 "unreadable"
fi
if [ "$(id -u)" -ne 0 ] || [ -z "$fw_tool" ]; then
  report SKIP 'PCI_WR_ORDERING of 0000:3e:00.0' 0 "needs root and mlxconfig (MFT) or mstconfig (mstflint)"
else
  wr="$(query_wr_ordering 0000:3e:00.0)"
  check 'PCI_WR_ORDERING of 0000:3e:00.0' 0 "$(wr_ordering_number "${wr:-not reported by $fw_tool}")"
fi
if [ "$(id -u)" -ne 0 ] || ! command -v setpci >/dev/null 2>&1; then
  report SKIP 'RO bit of 0000:9b:00.0' 1 "needs root and setpci"
  report SKIP 'MaxReadReqSize of 0000:9b:00.0' '>= 512' "needs root and setpci"
elif devctl="$(setpci -s 0000:9b:00.0 CAP_EXP+8.w 2>/dev/null)" && [[ "$devctl" =~ ^[0-9a-fA-F]{4}$ ]]; then
  check 'RO bit of 0000:9b:00.0' 1 "$(( (16#$devctl >> 4) & 1 ))"
  # MaxReadReqSize: Device Control bits 14:12, 128 << n bytes
  mrrs="$(( 128 << ((16#$devctl >> 12) & 7) ))"
  if [ "$mrrs" -ge 512 ]; then
    report PASS 'MaxReadReqSize of 0000:9b:00.0' '>= 512' "$mrrs"
  else
    report FAIL 'MaxReadReqSize of 0000:9b:00.0' '>= 512' "$mrrs (Device Control bits 14:12)"
  fi
else
  report FAIL 'RO bit of 0000:9b:00.0' 1 "unreadable"
fi
if [ "$(id -u)" -ne 0 ] || [ -z "$fw_tool" ]; then
  report SKIP 'PCI_WR_ORDERING of 0000:9b:00.0' 0 "needs root and mlxconfig (MFT) or mstconfig (mstflint)"
else
  wr="$(query_wr_ordering 0000:9b:00.0)"
  check 'PCI_WR_ORDERING of 0000:9b:00.0' 0 "$(wr_ordering_number "${wr:-not reported by $fw_tool}")"
fi
if [ "$(id -u)" -ne 0 ] || ! command -v setpci >/dev/null 2>&1; then
  report SKIP 'RO bit of 0000:9e:00.0' 1 "needs root and setpci"
  report SKIP 'MaxReadReqSize of 0000:9e:00.0' '>= 512' "needs root and setpci"
elif devctl="$(setpci -s 0000:9e:00.0 CAP_EXP+8.w 2>/dev/null)" && [[ "$devctl" =~ ^[0-9a-fA-F]{4}$ ]]; then
  check 'RO bit of 0000:9e:00.0' 1 "$(( (16#$devctl >> 4) & 1 ))"
  # MaxReadReqSize: Device Control bits 14:12, 128 << n bytes
  mrrs="$(( 128 << ((16#$devctl >> 12) & 7) ))"
  if [ "$mrrs" -ge 512 ]; then
    report PASS 'MaxReadReqSize of 0000:9e:00.0' '>= 512' "$mrrs"
  else
    report FAIL 'MaxReadReqSize of 0000:9e:00.0' '>= 512' "$mrrs (Device Control bits 14:12)"
  fi
else
  report FAIL 'RO bit of 0000:9e:00.0' 1 "unreadable"
fi
if [ "$(id -u)" -ne 0 ] || [ -z "$fw_tool" ]; then
  report SKIP 'PCI_WR_ORDERING of 0000:9e:00.0' 0 "needs root and mlxconfig (MFT) or mstconfig (mstflint)"
else
  wr="$(query_wr_ordering 0000:9e:00.0)"
  check 'PCI_WR_ORDERING of 0000:9e:00.0' 0 "$(wr_ordering_number "${wr:-not reported by $fw_tool}")"
fi
if [ "$(id -u)" -ne 0 ] || ! command -v setpci >/dev/null 2>&1; then
  report SKIP 'RO bit of 0000:bb:00.0' 1 "needs root and setpci"
  report SKIP 'MaxReadReqSize of 0000:bb:00.0' '>= 512' "needs root and setpci"
elif devctl="$(setpci -s 0000:bb:00.0 CAP_EXP+8.w 2>/dev/null)" && [[ "$devctl" =~ ^[0-9a-fA-F]{4}$ ]]; then
  check 'RO bit of 0000:bb:00.0' 1 "$(( (16#$devctl >> 4) & 1 ))"
  # MaxReadReqSize: Device Control bits 14:12, 128 << n bytes
  mrrs="$(( 128 << ((16#$devctl >> 12) & 7) ))"
  if [ "$mrrs" -ge 512 ]; then
    report PASS 'MaxReadReqSize of 0000:bb:00.0' '>= 512' "$mrrs"
  else
    report FAIL 'MaxReadReqSize of 0000:bb:00.0' '>= 512' "$mrrs (Device Control bits 14:12)"
  fi
else
  report FAIL 'RO bit of 0000:bb:00.0' 1 "unreadable"
fi
if [ "$(id -u)" -ne 0 ] || [ -z "$fw_tool" ]; then
  report SKIP 'PCI_WR_ORDERING of 0000:bb:00.0' 0 "needs root and mlxconfig (MFT) or mstconfig (mstflint)"
else
  wr="$(query_wr_ordering 0000:bb:00.0)"
  check 'PCI_WR_ORDERING of 0000:bb:00.0' 0 "$(wr_ordering_number "${wr:-not reported by $fw_tool}")"
fi
if [ "$(id -u)" -ne 0 ] || ! command -v setpci >/dev/null 2>&1; then
  report SKIP 'RO bit of 0000:be:00.0' 1 "needs root and setpci"
  report SKIP 'MaxReadReqSize of 0000:be:00.0' '>= 512' "needs root and setpci"
elif devctl="$(setpci -s 0000:be:00.0 CAP_EXP+8.w 2>/dev/null)" && [[ "$devctl" =~ ^[0-9a-fA-F]{4}$ ]]; then
  check 'RO bit of 0000:be:00.0' 1 "$(( (16#$devctl >> 4) & 1 ))"
  # MaxReadReqSize: Device Control bits 14:12, 128 << n bytes
  mrrs="$(( 128 << ((16#$devctl >> 12) & 7) ))"
  if [ "$mrrs" -ge 512 ]; then
    report PASS 'MaxReadReqSize of 0000:be:00.0' '>= 512' "$mrrs"
  else
    report FAIL 'MaxReadReqSize of 0000:be:00.0' '>= 512' "$mrrs (Device Control bits 14:12)"
  fi
else
  report FAIL 'RO bit of 0000:be:00.0' 1 "unreadable"
fi
if [ "$(id -u)" -ne 0 ] || [ -z "$fw_tool" ]; then
  report SKIP 'PCI_WR_ORDERING of 0000:be:00.0' 0 "needs root and mlxconfig (MFT) or mstconfig (mstflint)"
else
  wr="$(query_wr_ordering 0000:be:00.0)"
  check 'PCI_WR_ORDERING of 0000:be:00.0' 0 "$(wr_ordering_number "${wr:-not reported by $fw_tool}")"
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
check_file /etc/nccl/topo.xml 393316bfac27a0d1708cff745aedd6eca6773be413d1f729029e3e0ed4d7926c
check_file /etc/nccl.conf 854e5f2b001b2f6f44a69d8aeb21ab148a72ced19ab6dbd71979a2f7f0145a02
check_file /etc/ffplan/hfreduce.env bcc5f2408b091184eb3a65acfc7190e721f8127833d8a64760eeee001fe9f8e8
check_file /etc/ucx/ucx.conf 76c4701b1e59666a6a52b64870a0d9a16c8477e6eb8b9b9bce9bbd09c4f5a3c6

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

printf '%s passed, %s failed, %s warnings, %s skipped\n' "$passed" "$failed" "$warned" "$skipped"
if [ "$failed" -gt 0 ]; then
  exit 1
fi

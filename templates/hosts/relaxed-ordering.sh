#!/usr/bin/env bash
# PCIe relaxed ordering (RO) on the InfiniBand NICs of host profile {{ p.name }} (node model {{ p.node_model }}),
# written by ffplan from plan {{ plan_name }}. Re-run `ffplan render` instead of editing.
#
# Default: read-only. Reports, per NIC, the Device Control "Enable Relaxed Ordering" bit, the ConnectX
# firmware setting PCI_WR_ORDERING, the IOMMU mode and ACS on the NIC's root port. Exit 1 if anything
# differs from the plan, 0 if all agrees.
# --apply: sets what differs and nothing else (idempotent): the RO bit with setpci (lost at a device reset
# or reboot: run it from a boot-time unit) and PCI_WR_ORDERING with mlxconfig, or mstconfig where mlxconfig
# is absent (takes effect after a firmware reset or reboot). IOMMU and ACS are only reported: they are
# BIOS/kernel command-line settings.
#
# Usage: relaxed-ordering.sh [--apply]      (as root: setpci and mlxconfig/mstconfig read PCI config space)
set -euo pipefail
export LC_ALL=C

{% set help_end = 16 %}
{% include "hosts/apply-option.sh.j2" %}

sysfs="${FFPLAN_SYSFS:-/sys}"
# From the plan: the NICs' PCI addresses and the wanted state.
nics=({% for bdf in ro.nic_bus_ids %} {{ bdf | shell }}{% endfor %} )
want_ro={{ want_ro | shell }}
devctl_value={{ ro.devctl_value | shell }}
devctl_mask={{ ro.devctl_mask | shell }}
want_wr_ordering={{ ro.pci_wr_ordering | string | shell }}
want_wr_ordering_name={{ ro.pci_wr_ordering_name | shell }}

failures=0
report() {
  # status, check, expected, actual
  printf '%-5s %-40s %-26s %s\n' "$1" "$2" "$3" "$4"
  if [ "$1" = "FAIL" ]; then
    failures=$((failures + 1))
  fi
}

if [ "$(id -u)" -ne 0 ]; then
  printf 'relaxed-ordering.sh: run as root (setpci and mlxconfig/mstconfig read PCI config space)\n' >&2
  exit 2
fi
if ! command -v setpci >/dev/null 2>&1; then
  printf 'relaxed-ordering.sh: setpci not found (install pciutils)\n' >&2
  exit 2
fi
{% include "hosts/firmware-config.sh.j2" %}

printf '%-5s %-40s %-26s %s\n' "STATE" "CHECK" "PLAN" "HOST"

# IOMMU: translated DMA (the "DMA"/"DMA-FQ" domain types) breaks or slows GPUDirect; pt or off is planned.
cmdline="$(cat /proc/cmdline 2>/dev/null || true)"
case " $cmdline " in
  *" iommu=pt "*|*" iommu=off "*|*" amd_iommu=off "*|*" intel_iommu=off "*) iommu_cmdline="pt/off on the command line" ;;
  *) iommu_cmdline="not set on the command line" ;;
esac

for bdf in "${nics[@]}"; do
  dev="$sysfs/bus/pci/devices/$bdf"
  if [ ! -e "$dev" ]; then
    report FAIL "$bdf present" "present" "missing"
    continue
  fi

  # 1. Device Control register, bit 4 (Enable Relaxed Ordering).
  if devctl="$(setpci -s "$bdf" CAP_EXP+8.w 2>/dev/null)" && [[ "$devctl" =~ ^[0-9a-fA-F]{4}$ ]]; then
    have_ro=$(( (16#$devctl >> 4) & 1 ))
    if [ "$have_ro" = "$want_ro" ]; then
      report PASS "$bdf DevCtl RlxdOrd" "$want_ro" "$have_ro (DevCtl $devctl)"
    elif [ "$apply" = 1 ]; then
      setpci -s "$bdf" "CAP_EXP+8.w=$devctl_value:$devctl_mask"
      devctl="$(setpci -s "$bdf" CAP_EXP+8.w)"
      have_ro=$(( (16#$devctl >> 4) & 1 ))
      if [ "$have_ro" = "$want_ro" ]; then
        report SET "$bdf DevCtl RlxdOrd" "$want_ro" "$have_ro (DevCtl $devctl)"
      else
        report FAIL "$bdf DevCtl RlxdOrd" "$want_ro" "$have_ro after setpci (DevCtl $devctl)"
      fi
    else
      report FAIL "$bdf DevCtl RlxdOrd" "$want_ro" "$have_ro (DevCtl $devctl; --apply sets it)"
    fi
  else
    report FAIL "$bdf DevCtl RlxdOrd" "$want_ro" "unreadable (no PCIe capability?)"
  fi

  # 2. ConnectX firmware: PCI_WR_ORDERING (per_mkey(0): the memory registration's RO flag decides).
  if [ -n "$fw_tool" ]; then
    wr="$(query_wr_ordering "$bdf")"
    if [ -z "$wr" ]; then
      report FAIL "$bdf PCI_WR_ORDERING" "$want_wr_ordering_name($want_wr_ordering)" "not reported by $fw_tool"
    elif [ "$(wr_ordering_number "$wr")" = "$want_wr_ordering" ]; then
      report PASS "$bdf PCI_WR_ORDERING" "$want_wr_ordering_name($want_wr_ordering)" "$wr ($fw_tool)"
    elif [ "$apply" = 1 ]; then
      if "$fw_tool" -y -d "$bdf" set "PCI_WR_ORDERING=$want_wr_ordering" >/dev/null; then
        report SET "$bdf PCI_WR_ORDERING" "$want_wr_ordering_name($want_wr_ordering)" "was $wr; firmware reset or reboot needed"
      else
        report FAIL "$bdf PCI_WR_ORDERING" "$want_wr_ordering_name($want_wr_ordering)" "$fw_tool set failed (was $wr)"
      fi
    else
      report FAIL "$bdf PCI_WR_ORDERING" "$want_wr_ordering_name($want_wr_ordering)" "$wr (--apply sets it)"
    fi
  else
    report SKIP "$bdf PCI_WR_ORDERING" "$want_wr_ordering_name($want_wr_ordering)" "neither mlxconfig (MFT) nor mstconfig (mstflint) installed"
  fi

  # 3. IOMMU domain of the NIC: identity (iommu=pt) or no IOMMU at all.
  if [ -e "$dev/iommu_group" ]; then
    domain="$(cat "$dev/iommu_group/type" 2>/dev/null || printf 'unknown')"
    if [ "$domain" = "identity" ]; then
      report PASS "$bdf IOMMU domain" "identity (pt) or off" "$domain; $iommu_cmdline"
    else
      report FAIL "$bdf IOMMU domain" "identity (pt) or off" "$domain; boot with iommu=pt"
    fi
  else
    report PASS "$bdf IOMMU domain" "identity (pt) or off" "no IOMMU group (off); $iommu_cmdline"
  fi

  # 4. ACS on the root port above the NIC (reported; without a PCIe switch P2P crosses the root complex anyway).
  port="$(basename "$(dirname "$(readlink -f "$dev")")")"
  if [[ "$port" =~ ^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$ ]]; then
    if acs="$(setpci -s "$port" ECAP_ACS+6.w 2>/dev/null)" && [[ "$acs" =~ ^[0-9a-fA-F]{4}$ ]]; then
      if [ $(( 16#$acs )) -eq 0 ]; then
        report PASS "$bdf ACS on $port" "off" "ACSCtl $acs"
      else
        report WARN "$bdf ACS on $port" "off" "ACSCtl $acs (SrcValid etc. on: P2P is redirected)"
      fi
    else
      report PASS "$bdf ACS on $port" "off" "no ACS capability"
    fi
  else
    report SKIP "$bdf ACS" "off" "root port not found in sysfs"
  fi
done

if [ "$failures" -gt 0 ]; then
  printf '%s check(s) differ from the plan\n' "$failures"
  exit 1
fi
printf 'relaxed ordering as planned on %s NIC(s)\n' {{ ro.nic_bus_ids | length }}

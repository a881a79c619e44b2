#!/usr/bin/env bash
# The demo: in a 4-vCPU sched_ext guest, 4 tick runners (20 TPS, 18 ms of
# work per tick) compete with 8 CPU hogs, first under the kernel's default
# scheduler, then under scx_tick with its live statistics.
#
#   scripts/demo.sh [--cpus N] [--seconds S]
#
# This host half builds and boots the guest; scripts/guest/demo.sh runs in
# it (the demo never replaces the scheduler of the machine you are on).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/common.sh"

CPUS=4 SECS=15
while [[ $# -gt 0 ]]; do
  case "$1" in
    --cpus) CPUS=$2; shift 2 ;;
    --seconds) SECS=$2; shift 2 ;;
    *) die "unknown option $1; allowed: --cpus N, --seconds S" ;;
  esac
done

bash "$ROOT/scripts/setup.sh"
exec bash "$ROOT/scripts/vm.sh" --cpus "$CPUS" --timeout 900 -- \
  bash "$ROOT/scripts/guest/demo.sh" --seconds "$SECS"

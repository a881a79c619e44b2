#!/usr/bin/env bash
# The demo: in a 4-vCPU sched_ext guest, 4 tick runners (20 TPS, 18 ms of
# work per tick) compete with 8 CPU hogs, first under the kernel's default
# scheduler, then under scx_tick with its live statistics.
#
#   scripts/demo.sh [--cpus N] [--seconds S]
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

# On the host: build, then re-run this script inside a throw-away guest
# (the demo never replaces the scheduler of the machine you are on).
if [[ -z "${SCX_TICK_IN_GUEST:-}" ]]; then
  bash "$ROOT/scripts/setup.sh"
  exec bash "$ROOT/scripts/vm.sh" --cpus "$CPUS" --timeout 900 --env SCX_TICK_IN_GUEST=1 \
    -- bash "$ROOT/scripts/demo.sh" --seconds "$SECS"
fi

# --- inside the guest (or on a host that has sched_ext) ---
SCX="$ROOT/target/release/scx_tick"
TICKLOAD="$ROOT/target/release/tickload"
CG=/sys/fs/cgroup/tick
mkdir -p "$CG"
LOAD=(-n 4 --period-ms 50 --work-ms 18 --duration-s "$SECS" --cgroup "$CG")

stress-ng --cpu 8 --temp-path /tmp --timeout $((2 * SECS + 30))s >/dev/null 2>&1 &
hogs=$!
# the hogs may have timed out already (a slow guest): that is no failure
trap 'kill $hogs 2>/dev/null || true; wait 2>/dev/null || true' EXIT

echo "### 1. default kernel scheduler (EEVDF), 8 CPU hogs beside the tick runners"
"$TICKLOAD" "${LOAD[@]}"
echo
echo "### 2. scx_tick, same load (live stats every second)"
"$SCX" --tick-cgroup tick --stats 1 &
scx=$!
wait_sched_state enabled 10 $scx || true # the runners start either way
"$TICKLOAD" "${LOAD[@]}"
kill -INT $scx
wait $scx

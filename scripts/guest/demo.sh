#!/usr/bin/env bash
# The demo's guest half, run by scripts/demo.sh inside a sched_ext guest
# (scripts/vm.sh), or by hand on a host that has sched_ext: 4 tick runners
# (20 TPS, 18 ms of work per tick) beside 8 CPU hogs, first under the
# kernel's default scheduler, then under scx_tick with live statistics.
#
#   scripts/guest/demo.sh [--seconds S]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$ROOT/scripts/common.sh"

SECS=15
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seconds) SECS=$2; shift 2 ;;
    *) die "unknown option $1; allowed: --seconds S" ;;
  esac
done

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

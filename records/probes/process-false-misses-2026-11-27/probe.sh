#!/usr/bin/env bash
# The process case of vm/stats_follow_the_period_grid, repeated: which
# misses does scx_tick report in steps the server kept, and of which thread?
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../../tests/lib.sh"
PROC=$(make_cgroup proc)
for r in $(seq "${ROUNDS:-6}"); do
  start_scx --tick-cgroup proc,tick=process -vv --trace-decisions "$WORK/trace"
  stress-ng --cpu 8 --timeout 10s >/dev/null 2>&1 &
  hog=$!
  "$TICKLOAD" -n 3 --work-ms 10 --blocks 2 --period-ms 50 --duration-s 8 --json --cgroup "$PROC" \
    --phase-jump-ms 35 --ticks-log "$WORK/ticks.log" >"$WORK/proc.json"
  wait "$hog"
  stop_scx INT
  grep "scx_tick summary:" "$WORK/scx.out"
  grep "miss: " "$WORK/scx.err" >"$WORK/misses" || true
  python3 "$HERE/false.py" "$WORK/ticks.log" "$WORK/misses" "$WORK/proc.json" | tee "$WORK/false"
  # a run of false misses: the process's wake-ups around the first (the
  # guest's 9p root is read-only: printed, not kept)
  if (($(grep -c FALSE "$WORK/false") > 5)); then
    "$TRACEREPLAY" --wakes "$WORK/trace" >"$WORK/wakes" 2>&1 || true
    python3 "$HERE/around.py" "$WORK/misses" "$WORK/wakes" "$WORK/ticks.log"
  fi
done

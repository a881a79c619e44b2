#!/usr/bin/env bash
# The hinted sleeping case of vm/stats_follow_the_period_grid, repeated:
# scx_tick counted 4-10 more misses than the workload in some runs. Which
# ticks are they: each miss scx_tick reports (-vv) matched to the
# runner's tick with that deadline (hint = due + deadline), and how far
# before or after its deadline that tick's work ended.
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../../tests/lib.sh"
HINTED=$(make_cgroup hinted)
for r in $(seq "${ROUNDS:-4}"); do
  start_scx --tick-cgroup hinted -vv
  stress-ng --cpu 8 --timeout 10s >/dev/null 2>&1 &
  hog=$!
  "$TICKLOAD" -n 4 --work-ms 15 --period-ms 50 --duration-s 8 --json --hint --cgroup "$HINTED" \
    --ticks-log "$WORK/ticks.log" >"$WORK/hinted.json"
  wait "$hog"
  stop_scx INT
  grep "scx_tick summary:" "$WORK/scx.out" | sed "s/^/# round $r: /"
  grep "miss: " "$WORK/scx.err" >"$WORK/misses" || true
  python3 "$HERE/match.py" "$WORK/ticks.log" "$WORK/misses" "$WORK/hinted.json" | sed "s/^/# round $r: /"
done

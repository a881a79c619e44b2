#!/usr/bin/env bash
# One round of the well-behaved server beside the lag machine (BLOCKS
# blocks a tick) with the decision trace: does the lag machine's wake-ups
# start ticks, does it miss, is it demoted?
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../../tests/lib.sh"
GOOD=$(make_cgroup good)
BAD=$(make_cgroup bad)
SECS=6
start_scx --tick-cgroup good --tick-cgroup bad --trace-decisions "$WORK/t.trace"
stress-ng --cpu 4 --timeout $((SECS + 1))s >/dev/null 2>&1 &
hogs=$!
"$TICKLOAD" -n 3 --work-ms 70 --blocks "${BLOCKS:-4}" --game-server --period-ms 50 --duration-s $SECS --json \
  --cgroup "$BAD" >"$WORK/bad.json" &
bad=$!
"$TICKLOAD" -n 4 --work-ms 12 --period-ms 50 --duration-s $SECS --json --cgroup "$GOOD" --seed 1 >"$WORK/good.json" &
gp=$!
sleep 1
btids=$(ls /proc/$bad/task | sort -n | tail -3 | tr '\n' ' ')
wait $gp; wait $bad; wait $hogs
stop_scx INT
python3 -c 'import json,sys
for f in sys.argv[1:]:
    r=json.load(open(f)); print("#", f.split("/")[-1], "ticks", r["ticks"], "misses", r["misses"], "mspt", r["total"]["mspt_mean_ms"])' "$WORK/bad.json" "$WORK/good.json"
echo "# scx_tick: bad ticks $(group_stat bad ticks) misses $(group_stat bad misses); good ticks $(group_stat good ticks) misses $(group_stat good misses)"
"$TRACEREPLAY" --wakes "$WORK/t.trace" >"$WORK/w" 2>&1
echo "# wake records $(wc -l <"$WORK/w"); lag tids $btids"
for t in $btids; do
  awk -v t=$t '$1=="wake" && $2==t' "$WORK/w" >"$WORK/w$t"
  echo "# lag $t: $(wc -l <"$WORK/w$t") wakes, $(awk '$5!=0' "$WORK/w$t" | wc -l) started a tick"
done
t=${btids%% *}; echo "--- first 40 wakes of lag $t"; sed -n 1,40p "$WORK/w$t"
"$TRACEREPLAY" "$WORK/t.trace" 2>&1 | tail -4

source "$(dirname "$0")/../../../tests/lib.sh"
source "$ROOT/tests/servers/openttd.sh"
trap 'ottd_stop_all; cleanup' EXIT
SECS=${SECS:-30}
N=3
for ((i = 1; i <= N; i++)); do ottd_start s$i; done
for ((i = 1; i <= N; i++)); do ottd_wait_ticks s$i 60 240 || fail "no ticks"; done
for ((i = 1; i <= N; i++)); do echo "SERVER s$i $(pgrep -f ottd-s$i/openttd.cfg | head -1)"; done
start_scx -vv --tick-threads "ottd,process=^openttd\$,period=$OTTD_TICK_MS,deadline=$OTTD_DEADLINE_MS,tick=process" --stats-json "$WORK/stats.jsonl"
stress-ng --cpu 8 --timeout 300s >/dev/null 2>&1 &
HOGS_PID=$!
sleep 1
T0=$(python3 -c 'import time; print(time.monotonic_ns())')
measure_window ottd_mark
T1=$(python3 -c 'import time; print(time.monotonic_ns())')
r=$(ottd_late "$WIN_FROM" "$WIN_TO")
stop_scx INT
kill $HOGS_PID; wait $HOGS_PID 2>/dev/null || true
echo "LATE $r"
echo "SPAN $T0 $T1"
for ((i = 1; i <= N; i++)); do sed "s/^/TICK s$i /" $WORK/ottd-s$i/ticks.log; done
grep "miss:" $WORK/scx.err | sed 's/^/MISS /'

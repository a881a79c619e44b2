source "$(dirname "$0")/../../../tests/lib.sh"
source "$ROOT/tests/servers/openttd.sh"
trap 'ottd_stop_all; cleanup' EXIT
SECS=${SECS:-15}
for i in 1 2; do ottd_start s$i; done
for i in 1 2; do ottd_wait_ticks s$i 60 240 || fail "no ticks"; done
for i in 1 2; do d=$WORK/ottd-s$i; p=$(pgrep -f ottd-s$i/openttd.cfg | head -1); echo "SERVER s$i $p $(ls /proc/$p/task | tr '\n' ' ')"; done
start_scx -vv --trace-decisions "$WORK/trace.bin" --tick-threads "ottd,process=^openttd\$,period=$OTTD_TICK_MS,deadline=${DL:-60},tick=process" --stats-json "$WORK/stats.jsonl"
stress-ng --cpu 8 --timeout 300s >/dev/null 2>&1 &
HOGS=$!
sleep 1
measure_window ottd_mark
r=$(ottd_late "$WIN_FROM" "$WIN_TO")
stop_scx INT
kill $HOGS; wait $HOGS 2>/dev/null || true
echo "LATE $r"
read -r tps mps <<<"$(group_rates "$WORK/stats.jsonl" ottd)"
echo "RATES $tps $mps"
for i in 1 2; do sed "s/^/TICK s$i /" $WORK/ottd-s$i/ticks.log; done
grep "miss:" $WORK/scx.err | sed 's/^/MISS /'
"$ROOT"/target/release/tracereplay --wakes "$WORK/trace.bin" | grep -E "^(wake|roll) " | sed 's/^/EV /' > $WORK/ev.txt
wc -l $WORK/ev.txt
cat $WORK/ev.txt
"$ROOT"/target/release/tracereplay "$WORK/trace.bin" | tail -2

source "$(dirname "$0")/../../../tests/lib.sh"
source "$ROOT/tests/servers/openttd.sh"
trap 'ottd_stop_all; cleanup' EXIT
SECS=${SECS:-30}
N=${N:-3}
for ((i = 1; i <= N; i++)); do ottd_start s$i; done
for ((i = 1; i <= N; i++)); do ottd_wait_ticks s$i 60 240 || fail "no ticks"; done
for round in 1 2 3; do
  start_scx --tick-threads "ottd,process=^openttd\$,period=$OTTD_TICK_MS,deadline=$OTTD_DEADLINE_MS,tick=process" --stats-json "$WORK/stats-$round.jsonl"
  stress-ng --cpu ${HOGS:-8} --timeout 300s >/dev/null 2>&1 &
  HOGS_PID=$!
  sleep 1
  measure_window ottd_mark
  r=$(ottd_late "$WIN_FROM" "$WIN_TO")
  set -- $r
  stop_scx INT
  kill $HOGS_PID; wait $HOGS_PID 2>/dev/null || true
  read -r tps mps <<<"$(group_rates "$WORK/stats-$round.jsonl" ottd)"
  rps=$(per_s "$2" "$4") lps=$(per_s "$3" "$4") ops=$(per_s "$6" "$4")
  echo "RESULT round=$round servers=$N due=$1 run=$2 late=$3 secs=$4 behind=$5 overdue=$6 tps=$tps mps=$mps rps=$rps lps=$lps ops=$ops per_overdue=$(calc "$mps / ($ops > 0.001 ? $ops : 0.001)" 2) per_late=$(calc "$mps / ($lps > 0.001 ? $lps : 0.001)" 2) ticks_per=$(calc "$tps / ($rps > 0 ? $rps : 1)" 2)"
  sleep 2
done

#!/usr/bin/env bash
# Four OpenTTD servers beside 8 hogs under scx_tick (the load whose
# frequent wakers took every owed share and got scx_tick ejected by the
# 5 s watchdog before 6081c11's clock raise): with the raise removed, is
# scx_tick still attached after each round, and do the hogs progress?
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../../tests/lib.sh"
source "$ROOT/tests/servers/openttd.sh"
trap 'ottd_stop_all; cleanup' EXIT
SECS=${SECS:-30}
N=${N:-4}
for ((i = 1; i <= N; i++)); do ottd_start s$i; done
for ((i = 1; i <= N; i++)); do ottd_wait_ticks s$i 60 240 || fail "no ticks"; done
for round in 1 2 3; do
  start_scx --tick-threads "ottd,process=^openttd\$,period=$OTTD_TICK_MS,deadline=$OTTD_DEADLINE_MS,tick=process"
  stress-ng --cpu 8 --timeout 300s --metrics-brief >"$WORK/hogs" 2>&1 &
  HOGS_PID=$!
  sleep 1
  measure_window ottd_mark
  r=$(ottd_late "$WIN_FROM" "$WIN_TO")
  set -- $r
  state=$(sched_state)
  stop_scx INT
  kill -INT $HOGS_PID; wait $HOGS_PID 2>/dev/null || true
  echo "RESULT round=$round servers=$N due=$1 run=$2 late=$3 secs=$4 overdue=$6 sched=$state scx_rc=$SCX_RC hogs_cpus=$(calc "$WIN_HOGS / 100 / ($WIN_NS / 1e9)" 2)"
  grep -m2 "EXIT\|stall\|failed to run" "$WORK/scx.err" || true
  sleep 2
done

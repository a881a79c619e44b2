#!/usr/bin/env bash
# SMT: how often other work starts beside a running runner on its core, light and heavy load
source /work/main/tests/lib.sh
for c in 5 6; do echo 0 >/sys/devices/system/cpu/cpu$c/online; done
CG=$(make_cgroup tick)
LOAD=(-n 4 --period-ms 50 --work-ms 5 --duration-s 6 --cgroup "$CG" --json)
for hogs in 1 2 3 8; do
  stress-ng --cpu $hogs --timeout 600s >/dev/null 2>&1 &
  HOGS=$!
  sleep 1
  start_scx --tick-cgroup tick
  "$TICKLOAD" "${LOAD[@]}" >"$WORK/h$hogs.json"
  stop_scx INT
  kill $HOGS; wait $HOGS 2>/dev/null
  python3 -c "import json,sys; e=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); j=json.load(open(sys.argv[2])); print('PROBE hogs $hogs: started', e['other_started'], 'from queues', e['dispatch_other'], 'beside a runner', e['other_beside_runner'], 'far', e['other_far'], 'misses', j['misses'], 'of', j['ticks'])" "$STATS_JSON" "$WORK/h$hogs.json"
done

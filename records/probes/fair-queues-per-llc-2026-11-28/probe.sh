#!/usr/bin/env bash
# other work's cache locality: hogs' cross-LLC migrations, EEVDF / new / onefairq
source /work/main/tests/lib.sh
for c in 5 6; do echo 0 >/sys/devices/system/cpu/cpu$c/online; done
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
T=/sys/kernel/tracing/events/sched/sched_migrate_task
CG=$(make_cgroup tick)
LOAD=(-n 4 --period-ms 50 --work-ms 5 --duration-s 6 --cgroup "$CG" --json)
stress-ng --cpu 8 --timeout 600s >/dev/null 2>&1 &
HOGS=$!
sleep 2
llc() { (( $1 < 4 )) && echo 0 || echo 1; }
measure() { # name
  echo 'hist:keys=orig_cpu,dest_cpu:vals=hitcount if comm ~ "stress-ng*"' >$T/trigger
  "$TICKLOAD" "${LOAD[@]}" >"$WORK/$1.json" || echo "tickload failed"
  cp $T/hist "$WORK/$1.hist"; head -5 "$WORK/$1.hist" | sed "s/^/HIST /"
  echo '!hist:keys=orig_cpu,dest_cpu:vals=hitcount if comm ~ "stress-ng*"' >$T/trigger
  python3 - "$WORK/$1.hist" "$WORK/$1.json" "$1" <<'PY'
import re, sys, json
cross = same = 0
for m in re.finditer(r"orig_cpu:\s*(\d+),?\s+dest_cpu:\s*(\d+)\s*\}\s*hitcount:\s*(\d+)", open(sys.argv[1]).read()):
    a, b, n = int(m[1]), int(m[2]), int(m[3])
    if (a < 4) == (b < 4): same += n
    else: cross += n
j = json.load(open(sys.argv[2]))
print(f"PROBE {sys.argv[3]}: hog migrations within an LLC {same}, across {cross} ({cross/6:.0f}/s); misses {j['misses']} of {j['ticks']}")
PY
}
for r in 1 2; do
  measure eevdf-$r
  for v in new onefairq; do
    SCX=/work/main/results/fairq/scx_tick-$v
    start_scx --tick-cgroup tick
    measure $v-$r
    stop_scx INT
    python3 -c "import json,sys; e=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); print('PROBE $v-$r stats: other', e['dispatch_other'], 'far', e.get('other_far'), 'probes', e.get('other_probes'))" "$STATS_JSON" || true
  done
done
kill $HOGS

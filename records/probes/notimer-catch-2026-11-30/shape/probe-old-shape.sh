# steal_timer_takes_a_late_runner's shape, normal and notimer builds in turns;
# per waiting tick inside a spike: its lateness, and the pinned task's end
source /work/main/tests/lib.sh
for b in ${BUILDS:-normal notimer normal notimer}; do
  SCX=/work/main/results/nt/scx_tick_$b
  LEAD=$(make_cgroup lead$RANDOM) WAITG=$(make_cgroup wait$RANDOM)
  start_scx --tick-cpus 1,2 --tick-cgroup "$(basename $LEAD),cpus=1,deadline=20" --tick-cgroup "$(basename $WAITG),cpus=1"
  "$TICKLOAD" -n 1 --work-ms 2 --spike-ms 25 --spike-pct 5 --seed 7 --phase-ms 0 --duration-s 10 \
    --cgroup "$LEAD" --json --ticks-log "$WORK/lead.ticks" >"$WORK/lead.json" &
  lead=$!
  taskset -c 1,2 "$TICKLOAD" -n 1 --work-ms 2 --phase-ms 1 --duration-s 10 \
    --cgroup "$WAITG" --json --ticks-log "$WORK/wait.ticks" >"$WORK/wait.json" &
  waiter=$!
  taskset -c 2 "$TICKLOAD" -n 1 --work-ms 2 --phase-ms 0 --duration-s 10 --json --ticks-log "$WORK/pin.ticks" >"$WORK/pinned.json" &
  pinned=$!
  wait $lead; wait $waiter; wait $pinned
  stop_scx INT
  echo "BUILD $b: lead $(grep -o '"cpus":{[^}]*}' "$WORK/lead.json") wait $(grep -o '"cpus":{[^}]*}' "$WORK/wait.json")"
  exit_line | python3 -c '
import json,sys
l=json.load(sys.stdin)
print("  ", {k:v for k,v in l.items() if type(v) is int and v})'
  python3 - "$WORK/lead.ticks" "$WORK/wait.ticks" "$WORK/pin.ticks" <<'PY'
import sys
rows = lambda f: [tuple(int(x) for x in l.split('\t')[1:4]) for l in open(f) if l.strip()]
spikes = [(b, e) for _, b, e in rows(sys.argv[1]) if e - b > 10_000_000]
pins = rows(sys.argv[3])
for due, begin, end in rows(sys.argv[2]):
    for b, e in spikes:
        if b <= due and e - due > 10_000_000:
            pe = [pe for pd, pb, pe in pins if pb <= due + 5_000_000 and pe >= due - 5_000_000]
            print("   wait late %5.1f ms  spike %5.1f..%5.1f  pinned end %s" % ((begin-due)/1e6, (b-due)/1e6, (e-due)/1e6,
                  ",".join("%.1f" % ((x-due)/1e6) for x in pe)))
PY
done

# stats_match_the_workload's shape with the decision trace: which threads' wake-ups start ticks
source /work/main/tests/lib.sh
for round in 1; do
HEAVY=$(make_cgroup heavy$round) LIGHT=$(make_cgroup light$round)
start_scx --tick-cpus 1,2 --tick-cgroup heavy$round,period=50,deadline=20,cpus=1 \
  --tick-cgroup light$round,period=50,cpus=2 --trace-decisions "$WORK/trace$round"
"$TICKLOAD" -n 1 --period-ms 50 --deadline-ms 20 --work-ms 25 --duration-s 8 --cgroup "$HEAVY" --json >"$WORK/heavy.json" &
heavy=$!
"$TICKLOAD" -n 2 --period-ms 50 --work-ms 1 --duration-s 8 --cgroup "$LIGHT" --json >"$WORK/light.json" &
light=$!
sleep 2; echo "heavy pid $heavy tids $(ls /proc/$heavy/task | tr '\n' ' ')"; echo "light pid $light tids $(ls /proc/$light/task | tr '\n' ' ')"
wait $heavy; wait $light
stop_scx INT
exit_line | python3 -c '
import json,sys
l=json.load(sys.stdin)
for g,s in l["groups"].items(): print("group", g, s.get("ticks"), s.get("misses"))'
echo "workload heavy $(json_field $WORK/heavy.json ticks) light $(json_field $WORK/light.json ticks)"
"$TRACEREPLAY" --wakes "$WORK/trace$round" > "$WORK/wakes" || true
tail -1 "$WORK/wakes"
python3 - "$WORK/wakes" <<'PY'
import sys, collections
rows=[l.split() for l in open(sys.argv[1]) if l.startswith("wake ")]
t0=min(int(r[2]) for r in rows)
by=collections.defaultdict(list)
for r in rows: by[r[1]].append(((int(r[2])-t0)/1e6, int(r[3]), int(r[4])))
for tid, w in sorted(by.items()):
    grids=len(set(g for _,_,g in w))
    print("tid", tid, "wakes", len(w), "distinct grid_after", grids, "first 12 (ms, grid_before, grid_after rel):",
          " ".join("%.0f/%s" % (t, "same" if a==b else "new") for t,b,a in w[:12]), "last 3:", " ".join("%.0f" % t for t,_,_ in w[-3:]))
PY
done

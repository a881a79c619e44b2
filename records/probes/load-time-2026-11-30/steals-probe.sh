# run_case default of vm/steals_only_past_threshold, for two builds in turns; all exit counters
source /work/main/tests/lib.sh
CG=$(make_cgroup tick)
LOAD=(-n 2 --period-ms 50 --work-ms 10 --duration-s 5 --cgroup "$CG" --json)
for b in pre final pre final; do
  SCX=${BINS:-/work/main/results/steals}/scx_tick_$b
  start_scx --tick-cpus 1,2 --tick-cgroup "tick,cpus=1"
  taskset -c 2 stress-ng --cpu 1 --timeout 7s >/dev/null 2>&1 &
  hog=$!
  for _ in $(seq 100); do w=$(pgrep -P "$hog" | head -1) || true; (($(cpu_ticks $w) > 0)) && break; sleep 0.1; done
  sleep 0.5
  taskset -c 1,2 "$TICKLOAD" "${LOAD[@]}" >"$WORK/load" || echo tickload failed
  wait $hog
  stop_scx INT
  echo "BUILD $b: $(grep -o '"cpus":{[^}]*}' "$WORK/load" | tr '\n' ' ')"
  exit_line | python3 -c '
import json,sys
l=json.load(sys.stdin)
print("  ", {k:v for k,v in l.items() if type(v) is int and v})
for g,s in l["groups"].items(): print("   group", g, {k:v for k,v in s.items() if type(v) is int and v})'
done

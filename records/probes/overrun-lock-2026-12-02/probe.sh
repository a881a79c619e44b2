#!/usr/bin/env bash
# groups_keep_edf_order's load, N times in one guest, with the decision trace
source /work/main/tests/lib.sh
N=${N:-8}; set +e
OUT=/work/main/results/gk
for i in $(seq $N); do
  LONG=$(make_cgroup long) SHORT=$(make_cgroup short)
  start_scx --tick-cpus 1,2 --tick-cgroup "long,cpus=1" --tick-cgroup "short,cpus=1,deadline=15" --pin hard --trace-decisions "$WORK/t$i.trace"
  "$TICKLOAD" -n 3 --work-ms 10 --phase-ms 0 --duration-s 8 --cgroup "$LONG" --json >"$WORK/long.json" &
  long=$!
  "$TICKLOAD" -n 1 --work-ms 8 --deadline-ms 15 --phase-ms 5 --duration-s 8 --cgroup "$SHORT" --json --ticks-log "$WORK/s$i.ticks" >"$WORK/short.json" &
  short=$!
  sleep 1; stid=$(ls /proc/$short/task | sort -n | tail -1); ltids=$(ls /proc/$long/task | sort -n | tail -3 | tr '\n' ' ')
  wait $long; wait $short
  stop_scx INT
  sm=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["misses"])' "$WORK/short.json")
echo "run $i: short misses $sm (short tid $stid, long $ltids)"
  "$TRACEREPLAY" --wakes "$WORK/t$i.trace" >"$WORK/w$i" 2>&1; echo "wake records: $(wc -l <"$WORK/w$i")"
  if ((sm > 20)); then
    echo "--- run $i wakes of short $stid (tid time grid_before next deadline ...)"
    awk -v t=$stid '$2==t' "$WORK/w$i" >"$WORK/ws$i"; sed -n 1,40p "$WORK/ws$i"
    echo "--- run $i replay verdict"; "$TRACEREPLAY" "$WORK/t$i.trace" >"$WORK/v$i" 2>&1; tail -5 "$WORK/v$i"
    echo "--- run $i short ticks (first 12)"; head -12 "$WORK/s$i.ticks"
    echo "--- run $i long wakes (first 12)"; awk -v t="$ltids" 'index(" "t" ", " "$2" ")' "$WORK/w$i" >"$WORK/wl$i"; sed -n 1,12p "$WORK/wl$i"
  fi
  rmdir $LONG $SHORT 2>/dev/null || true
  sleep 1
done

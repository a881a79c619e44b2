#!/usr/bin/env bash
# Probe: vm/mid_tick_lending's first case (tick CPUs 1,2; 2 runners x 2 ms
# per 50 ms; 6 CPU hogs, 8 s) under the scx_tick builds of VARIANTS
# (NAME=PATH ...) in turns, ROUNDS rounds (default 3): how busy the tick
# CPUs were (/proc/stat), the lends, and the hogs' CPU seconds.
source /work/main/tests/lib.sh
CG=$(make_cgroup tick)
LOAD=(-n 2 --period-ms 50 --work-ms 2 --duration-s 8 --cgroup "$CG")
cpu_times() { awk '$1 == "cpu1" || $1 == "cpu2" { for (i = 2; i <= 9; i++) t += $i; b += $2 + $3 + $4 + $7 + $8 + $9 } END { print b, t }' /proc/stat; }
read -ra VARS <<<"${VARIANTS:?NAME=PATH ...}"
for r in $(seq "${ROUNDS:-3}"); do
  for v in "${VARS[@]}"; do
    SCX=${v#*=} start_scx --tick-cpus 1,2 --tick-cgroup tick
    stress-ng --cpu 6 --timeout 8s --metrics-brief --temp-path "$WORK" >"$WORK/stress" 2>&1 &
    hogs=$!
    sleep 0.3
    read -r b0 t0 <<<"$(cpu_times)"
    "$TICKLOAD" "${LOAD[@]}" >"$WORK/load" || echo "tickload failed"
    read -r b1 t1 <<<"$(cpu_times)"
    wait $hogs || true
    stop_scx INT
    read_totals
    secs=$(awk '/metrc:.* cpu /{print $7 + $8}' "$WORK/stress")
    echo "${v%%=*} round $r: tick CPUs busy $(((b1 - b0) * 100 / (t1 - t0))) %; lends=$tot_lends other=$tot_dispatch_other hog CPU s=$secs"
  done
done

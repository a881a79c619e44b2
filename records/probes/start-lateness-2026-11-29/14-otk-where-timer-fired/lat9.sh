#!/usr/bin/env bash
# Probe (issue 27): what each scx_tick callback costs in the emulated guest
# (kernel.bpf_stats_enabled: run time and count per BPF program) under the
# standard headline's load, and the runners' start lateness beside it.
source /work/main/tests/lib.sh
OUT=/tmp/p27b; mkdir -p "$OUT"
CG=$(make_cgroup tick)
ARGS=(-n 4 --period-ms 50 --work-ms 8 --jitter-ms 2 --spike-ms 40 --spike-pct 1 --seed 1 --duration-s 8 --cgroup "$CG" --json)
cat /sys/devices/system/clocksource/clocksource0/current_clocksource >"$OUT/clocksource"
cell() { # name
  local name=$1; shift
  stress-ng --cpu 8 --timeout 10s --metrics-brief >"$OUT/$name.stress" 2>&1 &
  local hog=$!
  ( end=$((SECONDS + 9)); while ((SECONDS < end)); do hackbench -p -g 2 -f 5 -l 50 >/dev/null 2>&1; done ) &
  local hb=$!
  sleep 0.5
  if [[ ${CYC:-0} == 1 ]]; then
    # the bench headline's latency probe: cyclictest in the tick group, at
    # the runners' policy (SCHED_FIFO under fifo)
    local cpol=(); [[ $name == fifo-* ]] && cpol=(--policy fifo -p 50)
    ( sleep 1; echo "$BASHPID" >"$CG/cgroup.procs"; exec cyclictest -q -D 5 -i 1000 "${cpol[@]}" ) >"$OUT/$name.cyc" 2>&1 &
  fi
  bpftool -j prog show >"$OUT/$name.before.json"
  "$TICKLOAD" "${ARGS[@]}" "$@" >"$OUT/$name.json" || echo "tickload failed $name"
  bpftool -j prog show >"$OUT/$name.after.json"
  wait $hog $hb 2>/dev/null
  echo "cell $name done" >&2
}
sysctl -w kernel.bpf_stats_enabled=1
for r in $(seq ${ROUNDS:-2}); do
  for v in ${VARIANTS:-main}; do
    if [[ $v == fifo ]]; then cell fifo-$r --policy fifo --fifo-prio 50; continue; fi
    SCX=/work/main/results/p27/scx_tick.$v start_scx --tick-cgroup tick
    cell $v-$r
    stop_scx INT
  done
done
echo "=== tar"; tar cz -C /tmp p27b | base64 -w0; echo; echo done

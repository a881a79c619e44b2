#!/usr/bin/env bash
# --userspace keeps the BPF mode's deadline-miss statistics, from rustland's
# run timestamps: a group whose work exceeds its deadline reports the misses
# tickload counted (within 5%), a light group reports no miss the workload
# did not see, and --stats-json streams lines whose counters never go back.
# Catches: user-nomiss
SCX_TICK_MODE=userspace
# guest: shared
source "$(dirname "$0")/../lib.sh"
HEAVY=$(make_cgroup heavy)
LIGHT=$(make_cgroup light)
start_scx --tick-cpus 1,2 --tick-cgroup heavy,period=50,deadline=20,cpus=1 \
  --tick-cgroup light,period=50,cpus=2 --stats 1 --stats-json "$WORK/stats.jsonl"
"$TICKLOAD" -n 1 --period-ms 50 --deadline-ms 20 --work-ms 25 --duration-s 8 --cgroup "$HEAVY" --json >"$WORK/heavy.json" &
heavy=$!
"$TICKLOAD" -n 2 --period-ms 50 --work-ms 1 --duration-s 8 --cgroup "$LIGHT" --json >"$WORK/light.json" &
light=$!
wait $heavy || fail "tickload (heavy) failed"
wait $light || fail "tickload (light) failed"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
grep -q "heavy: .*ticks/s" "$WORK/scx.out" || fail "no live line for the heavy group: $(head -3 "$WORK/scx.out")"
check_heavy_light_misses user-nomiss
check_stats_json "$WORK/stats.jsonl"
check_dmesg_clean

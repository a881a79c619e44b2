#!/usr/bin/env bash
# 20 s of 8 CPU hogs plus a fork/pipe storm: scx_tick stays enabled, no
# sched_ext error, and the hogs made progress.
source "$(dirname "$0")/../lib.sh"
start_scx
stress-ng --cpu 8 --timeout 20s --metrics-brief >"$WORK/stress.out" 2>&1 &
stress=$!
end=$((SECONDS + 20))
storms=0
while ((SECONDS < end)); do
  hackbench --pipe --groups 4 --loops 200 >/dev/null 2>&1 || fail "hackbench failed"
  storms=$((storms + 1))
  [[ "$(state)" == enabled ]] || fail "scheduler left during the storm (state $(state))"
done
wait "$stress" || fail "stress-ng failed: $(tail -5 "$WORK/stress.out")"
[[ "$(state)" == enabled ]] || fail "state after load: $(state)"
note "hackbench rounds: $storms; stress-ng: $(grep -E 'cpu ' "$WORK/stress.out" | tail -1)"
((storms > 0)) || fail "no hackbench round completed"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
check_dmesg_clean

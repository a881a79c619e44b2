#!/usr/bin/env bash
# Runners with the same deadline stacked on one CPU take turns a quantum
# each (3 ms, checked at the scheduler tick), so each starts its tick soon
# after it wakes, instead of the last waiting for all the others' work:
# four runners of 10 ms per 50 ms tick, allowed only tick CPU 1, waking
# together. From the workload's side (its ticks log): in each period, how
# late the last of the four started; its median is about three turns
# (12-16 ms at the guest's 4 ms scheduler tick), where without turns it
# is the other three's work (30 ms).
# Catches: noturns
# guest: shared
source "$(dirname "$0")/../lib.sh"
CG=$(make_cgroup tick)
start_scx --tick-cpus 1 --tick-cgroup tick
taskset -c 1 "$TICKLOAD" -n 4 --work-ms 10 --duration-s 8 --cgroup "$CG" --json \
  --ticks-log "$WORK/load.ticks" >"$WORK/load.json" || fail "tickload failed"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
python3 - "$WORK/load.ticks" <<'PY' >"$WORK/figures"
import sys
from collections import defaultdict
late = defaultdict(list)
for l in open(sys.argv[1]):
    _, due, begin, _ = l.rstrip('\n').split('\t')
    late[int(due)].append((int(begin) - int(due)) / 1e6)
full = [sorted(v) for v in late.values() if len(v) == 4]
last = sorted(v[-1] for v in full)
first = sorted(v[0] for v in full)
mid = lambda xs: xs[len(xs) // 2] if xs else 0
print(len(full), round(mid(last), 1), round(mid(first), 1))
PY
read -r periods last_p50 first_p50 <"$WORK/figures"
note "4 runners x 10 ms on CPU 1: in $periods periods, the last to start began $last_p50 ms late (median), the first $first_p50 ms; misses $(json_field "$WORK/load.json" misses) of $(json_field "$WORK/load.json" ticks)"
((periods >= 100)) || fail "only $periods periods with all four runners' ticks"
# measured 14.2-14.7 ms (the runs of 2026-11-28)
(($(calc "$last_p50 < 22" 0))) || fail_catches noturns "the last of 4 stacked runners started $last_p50 ms late (median): they did not take turns"
check_dmesg_clean

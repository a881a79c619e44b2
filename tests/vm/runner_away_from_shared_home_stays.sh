#!/usr/bin/env bash
# Two runners share one home (the only tick CPU, 1), both allowed CPUs 1
# and 2; CPU 2 runs other work (a CPU hog). Both are due together, so each
# tick one would wait behind the other at home: it is predicted late and
# preempts the hog on CPU 2. It sleeps there, its timer fires there, and
# it wakes there again, instead of going back to the shared home, where
# one of the two would wait or be moved again at every tick. From the
# workload's side: the two runners ran most of their ticks on different
# CPUs (one at home, one on CPU 2; going back home, both ran most ticks on
# CPU 1, one of them waiting for the other: p50 start lateness 1.3-6.5 ms
# against 0.4-0.5). From scx_tick's: at most one tick in ten was stolen
# (going back home: 137-138 steals of 280 ticks, 2-3 staying).
# Catches: sharedhome
# guest: shared
source "$(dirname "$0")/../lib.sh"
CG=$(make_cgroup tick)
start_scx --tick-cpus 1 --tick-cgroup tick
taskset -c 2 stress-ng --cpu 1 --timeout 9s >/dev/null 2>&1 &
hog=$!
taskset -c 1,2 "$TICKLOAD" -n 2 --work-ms 8 --duration-s 7 --cgroup "$CG" --json >"$WORK/load" || fail "tickload failed"
wait $hog
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
read_totals
python3 - "$WORK/load" "$tot_dispatch_stolen" <<'PY' || fail_catches sharedhome "the runner away from the shared home did not stay there (see above)"
import json, sys
runners = json.load(open(sys.argv[1]))["runners"]
ticks = sum(sum(r["cpus"].values()) for r in runners)
main = [max(r["cpus"], key=r["cpus"].get) for r in runners]
steals = int(sys.argv[2])
print("# ticks per CPU, per runner: " + "; ".join(
    ", ".join(f"CPU {c} {n}" for c, n in sorted(r["cpus"].items())) for r in runners)
    + f"; started on another CPU than the tick before: {sum(r['cpu_changes'] for r in runners)} of {ticks}; steals {steals}")
sys.exit(0 if main[0] != main[1] and steals * 10 <= ticks else 1)
PY
check_dmesg_clean

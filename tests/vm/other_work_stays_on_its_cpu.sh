#!/usr/bin/env bash
# Other work stays on its CPU where fairness allows: a CPU takes, from its
# fair queue, the task that last ran on it when that task's turn is within
# a slice of the head's (bpf/other.bpf.c: move_local_other), so a CPU hog
# preempted by a runner, or at the end of its slice, resumes where it was
# instead of moving to whichever CPU frees next (each move locks another
# CPU's run queue and leaves a cold cache). Seen from the hogs' side (their
# /proc/PID/sched): 8 CPU hogs beside 4 runners on 4 vCPUs. In the capacity
# probe (records/probes/hog-moves-2026-11-30/: 8 hogs, 8 runners) a hog's
# switches were moves between CPUs 73-76 % of the time when every CPU took
# its queue's head, 19-20 % with this rule, 1.5 % under SCHED_FIFO (the
# kernel's per-CPU run queues). Bound: at most 45 %. And it stays fair:
# every hog gets at least 0.6 x the median hog's CPU time (a CPU that kept
# taking its own would starve the rest of the queue).
# Catches: nootherlocality
# guest: shared
source "$(dirname "$0")/../lib.sh"
CG=$(make_cgroup tick)
start_scx --tick-cgroup tick
stress-ng --cpu 8 --timeout 30s --temp-path "$WORK" >/dev/null 2>&1 &
hogs=$!
sleep 1
# every stress-ng process's moves, switches and run time (ms) so far
hog_snap() {
  local p
  for p in $(pgrep stress-ng); do
    awk -v p="$p" '/se.nr_migrations|^nr_switches|se.sum_exec_runtime/ { printf "%s %s %s\n", p, $1, $NF }' \
      "/proc/$p/sched" 2>/dev/null || true
  done
}
hog_snap >"$WORK/hogs0"
"$TICKLOAD" -n 4 --period-ms 50 --work-ms 8 --duration-s 6 --cgroup "$CG" >"$WORK/load" || fail "tickload failed"
hog_snap >"$WORK/hogs1"
kill -INT $hogs; wait $hogs || true
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "scx_tick exit status $SCX_RC"
read_totals
note "other_local=$tot_other_local of dispatch_other=$tot_dispatch_other; $(grep total: "$WORK/load")"
verdict=0
python3 - "$WORK/hogs0" "$WORK/hogs1" <<'PY' || verdict=$?
import sys
def snap(f):
    v = {}
    for line in open(f):
        pid, key, n = line.split()
        v.setdefault(pid, {})[key] = float(n)
    return v
a, b = snap(sys.argv[1]), snap(sys.argv[2])
d = {p: {k: b[p][k] - a[p].get(k, 0) for k in b[p]} for p in b if p in a}
# the workers: the parent only waits
work = [x for x in d.values() if x.get("se.sum_exec_runtime", 0) > 100]
moves = sum(x["se.nr_migrations"] for x in work)
switches = sum(x["nr_switches"] for x in work)
run = sorted(x["se.sum_exec_runtime"] for x in work)
share = 100 * moves / max(1, switches)
print(f"# {len(work)} hogs: {moves:.0f} moves between CPUs in {switches:.0f} switches ({share:.1f} %); "
      f"CPU time least / median / most {run[0]:.0f} / {run[len(run) // 2]:.0f} / {run[-1]:.0f} ms" if run else "# no hog ran")
if len(work) < 8:
    sys.exit(3)
if run[0] < 0.6 * run[len(run) // 2]:
    sys.exit(2)
sys.exit(1 if share > 45 else 0)
PY
case $verdict in
  0) ;;
  1) fail_catches nootherlocality "the hogs moved between CPUs in more than 45 % of their switches (every CPU took its fair queue's head?)" ;;
  2) fail "a hog got less than 0.6 x the median hog's CPU time (a CPU kept taking its own?)" ;;
  *) fail "fewer than 8 hogs ran, or their /proc/PID/sched could not be read" ;;
esac
check_dmesg_clean

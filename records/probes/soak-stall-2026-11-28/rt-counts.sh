#!/usr/bin/env bash
# SCHED_FIFO hogs (RT throttling off) on tick CPU 1 and on non-tick CPU 3,
# beside tick runners, a thread churn in their group and a CPU hog: nothing
# that may run elsewhere waits behind a hog. A CPU a higher class holds is
# no place for a runner that spills over, and an exiting thread the hog
# preempted is placed anew rather than left on that CPU's local queue.
# Found by the soak (2026-11-28): an exiting churn thread waited 6.8 s
# behind the FIFO hog on CPU 1 and the watchdog ejected scx_tick.
# Seen from the runners' own log (their longest wait) and from the kernel's
# per-thread run-queue delay of the churn's threads (/proc/PID/task/TID/
# schedstat), sampled every 0.2 s while they run.
# Catches: rtfree exitlocal
source "$(dirname "$0")/../../../tests/lib.sh"
SECS=20
CG=$(make_cgroup tick)
mkdir -p "$CG/churn"
note "RT throttling: sched_rt_runtime_us=$(cat /proc/sys/kernel/sched_rt_runtime_us) of sched_rt_period_us=$(cat /proc/sys/kernel/sched_rt_period_us)"

# The kernel's 30 s watchdog, as in hostile_load_stalls_nothing: with RT
# throttling off a FIFO hog can starve its CPU's per-CPU kthreads, whatever
# the scheduler (a probe saw kworker/1:1 wait 6.9 s); what may run
# elsewhere is checked from the workload's side below.
sysctl -qw kernel.bpf_stats_enabled=1; start_scx --tick-cpus 1,2 --tick-cgroup tick --watchdog-ms 30000
"$TICKLOAD" -n 4 --work-ms 8 --duration-s "$SECS" --cgroup "$CG" --json >"$WORK/load.json" &
load=$!
"$ROOT/target/release/threadchurn" --duration-s "$SECS" --cgroup "$CG/churn" >"$WORK/churn.json" &
churn=$!
stress-ng --cpu 1 --timeout "${SECS}s" >/dev/null 2>&1 &
hog=$!
sleep 1
chrt -f 50 taskset -c 1 stress-ng --cpu 1 --timeout "$((SECS - 3))s" >/dev/null 2>&1 &
fifo1=$!
chrt -f 50 taskset -c 3 stress-ng --cpu 1 --timeout "$((SECS - 3))s" >/dev/null 2>&1 &
fifo3=$!

# A churn thread runnable and not run for 2 s: stranded (they live a few
# ms; tick runners wait for one another a few ms at most).
python3 - "$churn" "$((SECS - 2))" >"$WORK/stranded" <<'PY' &
import os, sys, time
pid, secs = sys.argv[1], float(sys.argv[2])
seen = {}  # tid -> run-queue delay (ns) when first seen runnable
worst, worst_tid = 0, None
end = time.monotonic() + secs
while time.monotonic() < end:
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        break
    for tid in tids:
        try:
            state = open(f"/proc/{pid}/task/{tid}/stat").read().rsplit(")", 1)[1].split()[0]
            delay = int(open(f"/proc/{pid}/task/{tid}/schedstat").read().split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if state != "R":
            seen.pop(tid, None)
            continue
        waited = delay - seen.setdefault(tid, delay)
        if waited > worst:
            worst, worst_tid = waited, tid
    time.sleep(0.2)
print(f"{worst / 1e6:.0f} {worst_tid}")
PY
sampler=$!

wait $load || fail "tickload failed"
wait $churn || fail "threadchurn failed"
wait $hog || fail "stress-ng failed"
wait $fifo1 || fail "the SCHED_FIFO hog on CPU 1 failed"
wait $fifo3 || fail "the SCHED_FIFO hog on CPU 3 failed"
wait $sampler || fail "the run-queue sampler failed"
[[ "$(sched_state)" == enabled ]] || fail "scheduler ejected (state $(sched_state))"
bpftool prog show | grep -A0 "struct_ops" | sed "s/^/# /"; grep -E "^SCX_EV|EV_" /sys/kernel/sched_ext/root/events 2>/dev/null | sed "s/^/# ev /"; cat /sys/kernel/sched_ext/root/events 2>/dev/null | sed "s/^/# ev /"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"

read -r stranded_ms stranded_tid <"$WORK/stranded"
read -r wait_ms start_ms mid_ms <<<"$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["total"]; print(round(max(t["lateness_max_ms"], t["stall_max_ms"])), round(t["lateness_max_ms"]), round(t["stall_max_ms"]))' "$WORK/load.json")"
note "runners: $(json_field "$WORK/load.json" ticks) ticks, $(json_field "$WORK/load.json" misses) missed, longest wait $wait_ms ms (start $start_ms, mid-work $mid_ms); churn: $(json_field "$WORK/churn.json" threads) threads, longest run-queue wait of a thread seen runnable $stranded_ms ms (tid $stranded_tid)"
# measured, normal build: (first runs pending)
((wait_ms < 500)) || fail_catches rtfree "a runner waited $wait_ms ms: it was put on a CPU a SCHED_FIFO hog holds"
((stranded_ms < 2000)) || fail_catches exitlocal "churn thread $stranded_tid sat runnable for $stranded_ms ms behind a SCHED_FIFO hog"
check_dmesg_clean

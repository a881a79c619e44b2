#!/usr/bin/env bash
# SCHED_FIFO hogs (RT throttling off) on tick CPU 1 and on non-tick CPU 3,
# beside tick runners, a thread churn in their group and a CPU hog: nothing
# that may run elsewhere waits behind a hog. A CPU a higher class holds is
# no place for a runner that spills over, and an exiting thread the hog
# preempted is placed anew rather than left on that CPU's local queue.
# Found by the soak (2026-11-28): an exiting churn thread waited 6.8 s
# behind the FIFO hog on CPU 1 and the watchdog ejected scx_tick.
# Seen from the runners' own log (their longest wait), and from the
# kernel's count of exiting tasks it queued without asking the scheduler.
# Catches: rtfree exitlocal
source "$(dirname "$0")/../lib.sh"
SECS=20
CG=$(make_cgroup tick)
mkdir -p "$CG/churn"
note "RT throttling: sched_rt_runtime_us=$(cat /proc/sys/kernel/sched_rt_runtime_us) of sched_rt_period_us=$(cat /proc/sys/kernel/sched_rt_period_us)"

# The kernel's 30 s watchdog, as in hostile_load_stalls_nothing: with RT
# throttling off a FIFO hog can starve its CPU's per-CPU kthreads, whatever
# the scheduler (a probe saw kworker/1:1 wait 6.9 s); what may run
# elsewhere is checked from the workload's side below.
start_scx --tick-cpus 1,2 --tick-cgroup tick --watchdog-ms 30000
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

wait $load || fail "tickload failed"
wait $churn || fail "threadchurn failed"
wait $hog || fail "stress-ng failed"
wait $fifo1 || fail "the SCHED_FIFO hog on CPU 1 failed"
wait $fifo3 || fail "the SCHED_FIFO hog on CPU 3 failed"
[[ "$(sched_state)" == enabled ]] || fail "scheduler ejected (state $(sched_state))"
# An exiting thread the kernel put on a local queue without asking
# scx_tick (no SCX_OPS_ENQ_EXITING): the kernel's own count, since the
# workload cannot see a thread that has left (the soak saw one wait 6.8 s)
events=/sys/kernel/sched_ext/root/events
[[ -r $events ]] || fail "$events is missing: this kernel counts no sched_ext events"
skipped_exiting=$(awk '$1 == "SCX_EV_ENQ_SKIP_EXITING" {print $2}' "$events")
[[ -n "$skipped_exiting" ]] || fail "no SCX_EV_ENQ_SKIP_EXITING in $events"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"

read -r wait_ms start_ms mid_ms <<<"$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["total"]; print(round(max(t["lateness_max_ms"], t["stall_max_ms"])), round(t["lateness_max_ms"]), round(t["stall_max_ms"]))' "$WORK/load.json")"
note "runners: $(json_field "$WORK/load.json" ticks) ticks, $(json_field "$WORK/load.json" misses) missed, longest wait $wait_ms ms (start $start_ms, mid-work $mid_ms); churn: $(json_field "$WORK/churn.json" threads) threads; exiting tasks queued past scx_tick: $skipped_exiting"
# Measured (2026-11-28): the normal build's longest runner wait 46-72 ms
# in 6 runs, and 0 exiting tasks queued past it; rtfree 956-9101 ms; the
# held-CPU check without SCX_ENQ_IMMED 833-965 ms in 5 of 7 runs, and
# before SCX_OPS_ENQ_EXITING 855 exiting tasks in one run.
((wait_ms < 500)) || fail_catches rtfree "a runner waited $wait_ms ms behind a SCHED_FIFO hog: put on the CPU it holds, or left there when it took the CPU"
((skipped_exiting == 0)) || fail_catches exitlocal "the kernel put $skipped_exiting exiting tasks on a local queue without scx_tick's placement"
check_dmesg_clean

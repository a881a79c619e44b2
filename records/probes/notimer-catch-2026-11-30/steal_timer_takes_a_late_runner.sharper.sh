#!/usr/bin/env bash
# A runner queued behind one that runs longer than predicted is taken by an
# idle CPU once it is late past the steal threshold: nothing else looks at
# its queue then (the idle CPUs do not dispatch, its home is busy), so its
# home's steal timer finds it and kicks one.
# Two groups homed on tick CPU 1 (tick CPUs 1,2; the rest of the guest
# idle): "lead", deadline 20 ms, one runner of 2 ms per tick with a 25 ms
# spike in one tick of 20 (its predicted work, an average, is about 2 ms
# before most spikes), and "wait", deadline 50 ms, one runner of 2 ms per
# tick allowed CPUs 1 and 2 that wakes 1 ms into the lead's tick, while a
# task pinned to CPU 2 (other work) runs its 2 ms there. In a spike the
# lead keeps CPU 1 (its earlier deadline stays ahead for 30 ms of work)
# while the other waits, predicted to start in time; CPU 2 finds it not
# yet late when the pinned task ends, and sleeps. From the workload's
# side: the waiting runner's ticks that overlap a spike start within 10 ms
# (CPU 2 steals them at the 3 ms threshold), not when the spike ends.
# Catches: notimer
# guest: shared
source "$(dirname "$0")/../lib.sh"
LEAD=$(make_cgroup lead) WAITG=$(make_cgroup wait)
start_scx --tick-cpus 1,2 --tick-cgroup "lead,cpus=1,deadline=20" --tick-cgroup "wait,cpus=1"
"$TICKLOAD" -n 1 --work-ms 2 --spike-ms 25 --spike-pct 5 --seed 7 --phase-ms 0 --duration-s 10 \
  --cgroup "$LEAD" --json --ticks-log "$WORK/lead.ticks" >"$WORK/lead.json" &
lead=$!
taskset -c 1,2 "$TICKLOAD" -n 1 --work-ms 2 --phase-ms 1 --duration-s 10 \
  --cgroup "$WAITG" --json --ticks-log "$WORK/wait.ticks" >"$WORK/wait.json" &
waiter=$!
taskset -c 2 "$TICKLOAD" -n 1 --work-ms 2 --phase-ms 0 --duration-s 10 --json >"$WORK/pinned.json" &
pinned=$!
wait $lead || fail "the lead tickload failed"
wait $waiter || fail "the waiting tickload failed"
wait $pinned || fail "the pinned tickload failed"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
read_totals
note "steals: $tot_dispatch_stolen; ticks per CPU: lead $(grep -o '"cpus":{[^}]*}' "$WORK/lead.json"), waiting $(grep -o '"cpus":{[^}]*}' "$WORK/wait.json")"
# each waiting tick that began while the lead ran a spike (its tick over
# 10 ms of wall time): did it start more than 10 ms late?
python3 - "$WORK/lead.ticks" "$WORK/wait.ticks" <<'PY' >"$WORK/overlap" || fail "could not read the ticks logs"
import sys
rows = lambda f: [tuple(int(x) for x in l.split('\t')[1:4]) for l in open(f) if l.strip()]
spikes = [(b, e) for _, b, e in rows(sys.argv[1]) if e - b > 10_000_000]
over = late = 0
worst = 0
for due, begin, _ in rows(sys.argv[2]):
    if any(b <= due and e - due > 10_000_000 for b, e in spikes):
        over += 1
        worst = max(worst, begin - due)
        late += begin - due > 10_000_000
print(len(spikes), over, late, worst // 1_000_000)
PY
read -r spikes over late worst <"$WORK/overlap"
note "lead spikes: $spikes; waiting ticks due inside one with 10 ms or more of it left: $over, $late of them started more than 10 ms late (worst $worst ms)"
# positive control: the case happened (seed 7: 15 spikes in 200 ticks;
# measured 7-15 waiting ticks inside one, 0-1 of them late, worst 6-15 ms
# in 14 recorded runs). Without the timer (notimer) other CPUs' dispatches
# that happen to come take some of them, more so since 2026-11-29 (late
# 5-11 of 11-15 until 2026-11-28, 1-2 of 7-11 on 2026-11-30), but one
# waited the spike out in every recorded run (worst 24-27 ms): no tick
# waits more than 20 ms, most of the 25 ms spike.
((over >= 3)) || fail "only $over waiting ticks fell inside a spike: nothing to check"
((late * 4 <= over && worst <= 20)) || fail_catches notimer "$late of $over waiting ticks behind a spike started more than 10 ms late (worst $worst ms, at most 20 allowed): no idle CPU took them at the threshold"
check_dmesg_clean

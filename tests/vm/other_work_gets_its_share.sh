#!/usr/bin/env bash
# Other work that may run only on tick CPUs still gets its share when
# runners never leave them: two runners that never sleep (70 ms of work
# per 50 ms tick) hold tick CPUs 1 and 2, and a periodic probe outside the
# tick group (1 ms every 20 ms) is allowed only CPUs 1 and 2 (so it waits
# in the fair queue, which only those CPUs serve). Once the queue's head
# has waited 100 ms (OTHER_SHARE_PERIOD_NS), a tick CPU gives it a 5 ms
# share at its runner's next slice end. From the probe's side: it keeps
# running, and never waits a second for a CPU; scx_tick is not ejected.
# Catches: noowed
# guest: shared
source "$(dirname "$0")/../lib.sh"
CG=$(make_cgroup tick)
start_scx --tick-cpus 1,2 --tick-cgroup tick
"$TICKLOAD" -n 2 --work-ms 70 --duration-s 10 --cgroup "$CG" --json >"$WORK/load.json" &
load=$!
taskset -c 1,2 "$TICKLOAD" -n 1 --work-ms 1 --period-ms 20 --duration-s 10 --json >"$WORK/probe.json" &
probe=$!
wait $load || fail "tickload failed"
wait $probe || fail "the probe failed"
[[ "$(sched_state)" == enabled ]] || fail_catches noowed "scheduler ejected (state $(sched_state)): other work starved on the tick CPUs"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
read -r ticks wait_ms <<<"$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); t=r["total"]; print(r["ticks"], round(max(t["lateness_max_ms"], t["stall_max_ms"])))' "$WORK/probe.json")"
note "the probe on CPUs 1,2: $ticks of its 500 ticks ran, longest wait $wait_ms ms; runners $(json_field "$WORK/load.json" ticks) ticks"
((ticks >= 25)) || fail_catches noowed "the probe ran $ticks ticks in 10 s beside runners that never sleep"
((wait_ms < 1000)) || fail_catches noowed "the probe waited $wait_ms ms for a CPU"
check_dmesg_clean

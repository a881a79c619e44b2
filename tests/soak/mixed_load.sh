#!/usr/bin/env bash
# Soak (not in the default test command; run by scripts/soak.sh): cycles of
# mixed load in one guest for SCX_TICK_SOAK_S seconds (default 600) — two
# tick groups, CPU hogs, a SCHED_FIFO hog on a tick CPU, hackbench storms,
# thread churn, a pids-bounded fork bomb, hotplug of a tick and a non-tick
# CPU, reload bursts and a SIGKILL — reporting ticks, misses and anomalies.
# Any anomaly (ejection, sched_ext error, non-zero exit, leak) fails it, and
# so does a miss scx_tick did not count: every cycle, the world group's
# misses as scx_tick counted them against its runners' own (tickload's).
# Its "soak figure:" lines are the table of docs/reliability.md
# (scripts/reliability-figures.py --docs).
source "$(dirname "$0")/../lib.sh"
SOAK_S=${SCX_TICK_SOAK_S:-600}
LOAD_S=${SCX_TICK_SOAK_LOAD_S:-30}
CHURN="$ROOT/target/release/threadchurn"
WORLD=$(make_cgroup world)
PHYSICS=$(make_cgroup physics)
echo +pids >/sys/fs/cgroup/cgroup.subtree_control
BOMB=$(make_cgroup bomb)
echo 64 >"$BOMB/pids.max"
ulimit -n 16384
# The kernel's 30 s watchdog, as in tests/vm/hostile_load_stalls_nothing.sh:
# with RT throttling off the FIFO hog below can starve its CPU's per-CPU
# kthreads for seconds, whatever the scheduler (a probe saw kworker/1:1
# wait 6.9 s, records/probes/soak-stall-2026-11-28/); a task that could
# run elsewhere stranded there is vm/rt_hogs_strand_nothing's to find.
SCX_ARGS=(--tick-cpus 1,2 --tick-cgroup world,period=50 --tick-cgroup physics,period=16,cpus=2 --watchdog-ms 30000)

home_max=0 cycles=0 attaches=0 restarts=0 reloads=0 sigkills=0 hotplugs=0 fifo_s=0
scx_ticks=0 scx_misses=0 scx_steals=0 load_ticks=0 load_misses=0 churned=0 storms=0 refused=0
phys_scx=0 phys_own=0 world_scx=0 world_own=0

log() { echo "# [$(date +%T) +${SECONDS}s] $*"; }
# scx_tick's totals of the instance that just stopped, added up
add_totals() {
  read_totals
  scx_ticks=$((scx_ticks + tot_ticks)) scx_misses=$((scx_misses + tot_misses))
  scx_steals=$((scx_steals + tot_dispatch_stolen))
}
hotplug() { # cpu: offline, re-attach, online, re-attach
  echo 0 >/sys/devices/system/cpu/cpu$1/online
  restarts=$((restarts + 1)); reattached $restarts 120
  echo 1 >/sys/devices/system/cpu/cpu$1/online
  restarts=$((restarts + 1)); reattached $restarts 120
  hotplugs=$((hotplugs + 2))
}
# a cgroup whose last task is still exiting is busy for a moment: retry, bounded
remove_cgroup() {
  local i
  for ((i = 0; i < 100; i++)); do rmdir "$1" 2>/dev/null && return 0; sleep 0.1; done
  fail "cannot remove $1"
}
home_entries() {
  local dump
  dump=$(bpftool -j map dump name home_cpus) || fail "bpftool cannot dump home_cpus"
  echo $(($(grep -o '"key":' <<<"$dump" | wc -l) - $(grep -o '"formatted":' <<<"$dump" | wc -l)))
}

progs_before=$(bpftool prog list | grep -c struct_ops || true)
maps_before=$(bpftool map list | grep -c '^[0-9]*:' || true)
log "soak for ${SOAK_S}s, ${LOAD_S}s of load per cycle"
while ((SECONDS < SOAK_S)); do
  cycles=$((cycles + 1))
  start_scx "${SCX_ARGS[@]}"
  attaches=$((attaches + 1)) restarts=0

  # the load
  "$TICKLOAD" -n 3 --period-ms 50 --work-ms 8 --duration-s "$LOAD_S" --cgroup "$WORLD" --json >"$WORK/world.json" &
  world=$!
  "$TICKLOAD" -n 1 --period-ms 16 --work-ms 2 --duration-s "$LOAD_S" --cgroup "$PHYSICS" --json >"$WORK/physics.json" &
  physics=$!
  stress-ng --cpu 4 --timeout "${LOAD_S}s" >/dev/null 2>&1 &
  hogs=$!
  chrt -f 50 taskset -c 1 stress-ng --cpu 1 --timeout "$((LOAD_S / 2))s" >/dev/null 2>&1 &
  fifo=$!
  mkdir -p "$WORLD/churn"
  "$CHURN" --duration-s "$((LOAD_S * 2 / 3))" --cgroup "$WORLD/churn" >"$WORK/churn.json" &
  churn=$!
  (
    echo $BASHPID >"$BOMB/cgroup.procs"
    exec timeout "$((LOAD_S * 2 / 3))" bash -c 'bomb() { bomb | bomb & }; bomb; wait' 2>/dev/null
  ) &
  end=$((SECONDS + LOAD_S))
  max_entries=0
  while ((SECONDS < end)); do
    hackbench --threads --groups 20 --loops 5 >/dev/null 2>&1 || fail "hackbench failed"
    storms=$((storms + 1))
    [[ "$(sched_state)" == enabled ]] || fail "cycle $cycles: scheduler ejected under load (state $(sched_state))"
    n=$(home_entries)
    ((n > max_entries)) && max_entries=$n
  done
  # one job per wait: `wait A B` returns B's status only
  wait $world || fail "tickload (world) failed"
  wait $physics || fail "tickload (physics) failed"
  wait $hogs || fail "stress-ng (hogs) failed"
  wait $fifo || fail "stress-ng (SCHED_FIFO) failed"
  wait $churn || fail "threadchurn failed"
  fifo_s=$((fifo_s + LOAD_S / 2))
  churned=$((churned + $(json_field "$WORK/churn.json" threads)))
  refused=$(awk '$1 == "max" {print $2}' "$BOMB/pids.events")
  echo 1 >"$BOMB/cgroup.kill"
  for ((i = 0; i < 100; i++)); do (($(cat "$BOMB/pids.current") == 0)) && break; sleep 0.1; done
  (($(cat "$BOMB/pids.current") == 0)) || fail "fork bomb survived cgroup.kill"
  for f in world physics; do
    load_ticks=$((load_ticks + $(json_field "$WORK/$f.json" ticks)))
    load_misses=$((load_misses + $(json_field "$WORK/$f.json" misses)))
  done
  ((max_entries <= 200)) || fail "cycle $cycles: home_cpus grew to $max_entries entries"
  remove_cgroup "$WORLD/churn"

  # hotplug of a non-tick and a tick CPU, while runners run
  "$TICKLOAD" -n 2 --work-ms 2 --duration-s 600 --cgroup "$WORLD" >/dev/null &
  runners=$!
  hotplug 3
  hotplug 2
  kill $runners; wait $runners 2>/dev/null || true

  sig=INT; ((cycles % 2)) || sig=TERM
  stop_scx $sig
  [[ $SCX_RC -eq 0 ]] || fail "cycle $cycles: exit status $SCX_RC after SIG$sig"
  wait_sched_state disabled 30 || fail "cycle $cycles: state $(sched_state) after exit"
  add_totals
  # No miss the world runners saw goes uncounted. A tick the runner
  # skipped (a whole period behind, tickload's "skipped") is a period of
  # the grid that ended without its work done: a miss to scx_tick. Less 3:
  # tickload's main thread and each runner's first and last wake-ups are
  # ticks tickload does not count. world also holds the churned threads
  # and the runners kept through the hotplugs, so no upper bound. The 16 ms
  # physics group's counts part ways with its runner's both ways under
  # this overload (2026-11-28, per cycle: 34/27, 52/24, 91/114): printed,
  # not checked, until explained (docs/reliability.md).
  p_scx=$(group_stat physics misses)
  p_own=$(($(json_field "$WORK/physics.json" misses) + $(json_field "$WORK/physics.json" skipped)))
  w_scx=$(group_stat world misses)
  w_own=$(($(json_field "$WORK/world.json" misses) + $(json_field "$WORK/world.json" skipped)))
  ((w_scx + 3 >= w_own)) || fail "cycle $cycles: world: scx_tick counted $w_scx misses, fewer than the runners' own $w_own"
  phys_scx=$((phys_scx + p_scx)) phys_own=$((phys_own + p_own)) world_scx=$((world_scx + w_scx)) world_own=$((world_own + w_own))

  # a reload burst
  for ((r = 0; r < 3; r++)); do
    start_scx "${SCX_ARGS[@]}"
    stop_scx $sig
    [[ $SCX_RC -eq 0 ]] || fail "cycle $cycles: reload exit status $SCX_RC"
    wait_sched_state disabled 30 || fail "cycle $cycles: state $(sched_state) after a reload"
    add_totals
    reloads=$((reloads + 1))
  done
  # every other cycle, the scheduler process is killed
  if ((cycles % 2 == 0)); then
    start_scx "${SCX_ARGS[@]}"
    kill -KILL "$SCX_PID"; wait "$SCX_PID" 2>/dev/null || true; SCX_PID=""
    wait_sched_state disabled 30 || fail "cycle $cycles: state $(sched_state) after SIGKILL"
    sigkills=$((sigkills + 1))
  fi
  check_dmesg_clean
  log "cycle $cycles done: scx_tick ticks $scx_ticks misses $scx_misses; runners' own ticks $load_ticks misses $load_misses; misses physics $p_scx/$p_own, world $w_scx/$w_own (scx_tick/own); home_cpus max $max_entries"
  ((max_entries > home_max)) && home_max=$max_entries
done

# nothing left behind
for ((i = 0; i < 600; i++)); do
  progs_after=$(bpftool prog list | grep -c struct_ops || true)
  maps_after=$(bpftool map list | grep -c '^[0-9]*:' || true)
  ((progs_after == progs_before && maps_after <= maps_before)) && break
  sleep 0.1
done
((progs_after == progs_before)) || fail "struct_ops programs leaked: $progs_before -> $progs_after"
((maps_after <= maps_before)) || fail "maps leaked: $maps_before -> $maps_after"
check_dmesg_clean
miss_pct=$(pct "$scx_misses" "$scx_ticks")
note "soak figure: duration: ${SECONDS} s, $cycles cycles of ${LOAD_S} s of load"
note "soak figure: faults injected: $hotplugs hotplug events (CPU 3 and tick CPU 2, off and on, each answered by a re-attach), $attaches long attaches stopped by SIGINT/SIGTERM, $reloads reloads, $sigkills SIGKILLs, ${fifo_s} s of SCHED_FIFO hog on tick CPU 1, $storms hackbench storms, $churned threads churned, $refused fork-bomb forks refused by pids.max"
note "soak figure: ticks counted by scx_tick: $scx_ticks ticks, $scx_misses misses ($miss_pct %), $scx_steals steals; every runner, churned threads and the hotplug phases' runners included"
note "soak figure: the runners' own log (tickload, load phases): $load_ticks ticks, $load_misses misses ($(pct "$load_misses" "$load_ticks") %) under 4 CPU hogs, a FIFO hog on one of the two tick CPUs, storms and churn"
note "soak figure: misses, scx_tick against the runners' own (missed and skipped): world $world_scx against $world_own (checked every cycle: at least the runners', less 3); physics $phys_scx against $phys_own (not checked: they part ways both ways)"
note "soak figure: home_cpus entries: at most $home_max in any cycle (bound 200)"
note "soak figure: errors: 0: never ejected, no sched_ext error or stall in dmesg (checked every cycle), every exit 0, struct_ops programs and maps back to their count before the soak"

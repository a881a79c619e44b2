#!/usr/bin/env bash
# Start/stop cycles (SIGINT and SIGTERM mixed, soft and hard pinning
# alternating) each reach enabled and then disabled and give the runners
# their affinity back; afterwards no scx_tick BPF program or map is left.
# SCX_TICK_RELOAD_CYCLES sets the count (default 10).
# guest: shared
source "$(dirname "$0")/../lib.sh"
CYCLES=${SCX_TICK_RELOAD_CYCLES:-10}
CG=$(make_cgroup tick)
"$TICKLOAD" -n 2 --work-ms 2 --duration-s 600 --cgroup "$CG" >/dev/null &
load=$!
for _ in $(seq 50); do [[ $(ls /proc/$load/task | wc -l) -ge 3 ]] && break; sleep 0.1; done
tids=$(ls /proc/$load/task | grep -vx $load)
affinities() { for t in $tids; do taskset -cp $t | sed 's/.*: //'; done | sort | uniq -c | tr -s ' \n' ' '; }
aff_before=$(affinities)
progs_before=$(bpftool prog list | grep -c struct_ops || true)
maps_before=$(bpftool map list | wc -l)
# scx_tick's own programs (its callbacks are named tick_*) and maps, by name
ours_progs() { bpftool prog list | grep -cE 'struct_ops +name tick_' || true; }
ours_maps() { bpftool map list | grep -cE 'name (tick_groups|home_cpus|task_ctxs|hint_slots|steal_timers) ' || true; }
ours_progs_before=$(ours_progs) ours_maps_before=$(ours_maps)
for ((i = 1; i <= CYCLES; i++)); do
  sig=INT; ((i % 2)) || sig=TERM
  pin=soft; ((i % 4 < 2)) || pin=hard
  start_scx --tick-cgroup tick --pin $pin
  # positive control: what must be gone afterwards is visible while it runs
  if ((i == 1)); then
    ours_running_progs=$(ours_progs) ours_running_maps=$(ours_maps)
    ((ours_running_progs >= 5 && ours_running_maps >= 5)) \
      || fail "scx_tick's programs/maps not visible while it runs ($ours_running_progs/$ours_running_maps): the leak check would see nothing"
  fi
  if [[ $pin == hard ]]; then # the pinning scan runs every 200 ms: poll, bounded
    for ((j = 0; j < 50; j++)); do [[ "$(affinities)" != "$aff_before" ]] && break; sleep 0.1; done
    [[ "$(affinities)" != "$aff_before" ]] || fail "cycle $i: runners never hard-pinned"
  fi
  stop_scx $sig
  [[ $SCX_RC -eq 0 ]] || fail "cycle $i: exit status $SCX_RC after SIG$sig"
  wait_sched_state disabled 30 || fail "cycle $i: state $(sched_state) after exit"
  [[ "$(affinities)" == "$aff_before" ]] || fail "cycle $i ($pin, SIG$sig): affinities $(affinities), were $aff_before"
done
kill $load
# the kernel frees struct_ops maps and programs after RCU grace periods
# (slow under emulation): poll, bounded, for them to go
for ((i = 0; i < 600; i++)); do
  progs_after=$(bpftool prog list | grep -c struct_ops || true)
  maps_after=$(bpftool map list | wc -l)
  ((progs_after == progs_before && maps_after <= maps_before && $(ours_progs) == ours_progs_before && $(ours_maps) == ours_maps_before)) && break
  sleep 0.1
done
note "freed after $((i / 10)) s"
note "$CYCLES cycles ($((CYCLES / 2)) hard-pinned), runner affinities restored each time: $aff_before"
note "$CYCLES cycles; struct_ops programs before/after: $progs_before/$progs_after; maps: $maps_before/$maps_after; scx_tick's own while running: $ours_running_progs programs, $ours_running_maps maps, after: $(ours_progs)/$(ours_maps)"
(($(ours_progs) == ours_progs_before && $(ours_maps) == ours_maps_before)) || fail "scx_tick's programs or maps are still loaded: $(ours_progs)/$(ours_maps)"
((progs_after == progs_before)) || fail "struct_ops programs leaked: $progs_before -> $progs_after"
((maps_after <= maps_before)) || fail "maps leaked: $maps_before -> $maps_after"
check_dmesg_clean

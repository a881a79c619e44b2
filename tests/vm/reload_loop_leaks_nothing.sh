#!/usr/bin/env bash
# Start/stop cycles (SIGINT and SIGTERM mixed) each reach enabled and then
# disabled; afterwards no scx_tick BPF program or map is left behind.
# SCX_TICK_RELOAD_CYCLES sets the count (default 10; the soak uses 100).
source "$(dirname "$0")/../lib.sh"
CYCLES=${SCX_TICK_RELOAD_CYCLES:-10}
CG=$(make_cgroup tick)
"$TICKLOAD" -n 2 --work-ms 2 --duration-s 600 --cgroup "$CG" >/dev/null &
load=$!
progs_before=$(bpftool prog list | grep -c struct_ops || true)
maps_before=$(bpftool map list | wc -l)
for ((i = 1; i <= CYCLES; i++)); do
  sig=INT; ((i % 2)) || sig=TERM
  start_scx --tick-cgroup tick
  stop_scx $sig
  [[ $SCX_RC -eq 0 ]] || fail "cycle $i: exit status $SCX_RC after SIG$sig"
  wait_state disabled 30 || fail "cycle $i: state $(state) after exit"
done
kill $load
# the kernel frees struct_ops maps and programs after RCU grace periods
# (slow under emulation): poll, bounded, for them to go
for ((i = 0; i < 600; i++)); do
  progs_after=$(bpftool prog list | grep -c struct_ops || true)
  maps_after=$(bpftool map list | wc -l)
  ((progs_after == progs_before && maps_after <= maps_before)) && break
  sleep 0.1
done
note "freed after $((i / 10)) s"
note "$CYCLES cycles; struct_ops programs before/after: $progs_before/$progs_after; maps: $maps_before/$maps_after"
((progs_after == progs_before)) || fail "struct_ops programs leaked: $progs_before -> $progs_after"
((maps_after <= maps_before)) || fail "maps leaked: $maps_before -> $maps_after"
check_dmesg_clean

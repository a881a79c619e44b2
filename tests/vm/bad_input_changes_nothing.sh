#!/usr/bin/env bash
# On a sched_ext kernel, every bad input of tests/bad_inputs.sh is refused
# before anything is loaded and leaves the system as it was: sched_ext stays
# disabled, no BPF program or map appears, no cgroup or file is created, and
# a running process keeps its affinity and cgroup.
# guest: shared
source "$(dirname "$0")/../lib.sh"
source "$ROOT/tests/bad_inputs.sh"
make_cgroup tick >/dev/null
sleep 600 &
bystander=$!
struct_ops_programs() { bpftool prog list | grep -c struct_ops || true; }
snapshot() {
  echo "state $(sched_state)"
  echo "struct_ops programs $(struct_ops_programs)"
  echo "maps $(bpftool map list | grep -c '^[0-9]*:' || true)"
  find /sys/fs/cgroup -type d | sort
  { find "$WORK" /run/scx_tick 2>/dev/null || true; } | grep -vE "^$WORK/(out|err)$" | sort
  taskset -p $bystander
  cat /proc/$bystander/cgroup
}
snapshot >"$WORK/../before.$$"
after_case() { [[ "$(sched_state)" == disabled ]] || fail "'$1' changed the sched_ext state to $(sched_state)"; }
run_bad_inputs
snapshot >"$WORK/../after.$$"
diff "$WORK/../before.$$" "$WORK/../after.$$" >&2 || fail "the system changed (diff above)"
rm -f "$WORK/../before.$$" "$WORK/../after.$$"
kill $bystander
note "$BAD_INPUTS_RUN bad inputs refused; state, BPF programs and maps, cgroups, files, affinity unchanged"
# the same scx_tick with good input does load
start_scx --tick-cgroup tick
# the snapshot sees a loaded scheduler (0 against 0 above proves nothing
# if bpftool cannot list programs)
loaded=$(struct_ops_programs)
((loaded > 0)) || fail "bpftool lists no struct_ops program while scx_tick runs: the snapshot cannot see a load"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "scx_tick with good input: exit status $SCX_RC"
note "with good input: loaded ($loaded struct_ops programs listed), detached cleanly"
check_dmesg_clean

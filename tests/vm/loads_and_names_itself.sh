#!/usr/bin/env bash
# The scheduler loads: state is enabled and the kernel names it scx_tick.
# Modes: bpf, userspace (test.sh runs it again as userspace/NAME).
# Figures: the kernel and which of the newer kfuncs scx_tick calls it has;
# on the oldest kernel (oldest/NAME) the queue peek must be the scx
# headers' fallback (a kernel before 7.1, whose peek the headers do not
# trust, or one without it), or that run tests nothing older.
# guest: shared
source "$(dirname "$0")/../lib.sh"
have=() lack=()
for k in scx_bpf_dsq_peek scx_bpf_select_cpu_and scx_bpf_now scx_bpf_dsq_move; do
  if grep -qw "$k" /proc/kallsyms; then have+=("$k"); else lack+=("$k"); fi
done
note "kernel $(uname -r): has ${have[*]:-none}; lacks ${lack[*]:-none}${lack:+ (the fallbacks of the scx headers run instead)}"
kver=$(uname -r | sed 's/[-+].*//')
if [[ ${SCX_TICK_KERNEL:-current} == oldest && " ${lack[*]} " != *" scx_bpf_dsq_peek "* &&
  "$(printf '%s\n' 7.1 "$kver" | sort -V | head -1)" == 7.1 ]]; then
  fail "the oldest kernel ($(uname -r)) is 7.1 or newer and has scx_bpf_dsq_peek: the peek's fallback does not run there"
fi
[[ "$(sched_state)" == disabled ]] || fail "state before start is $(sched_state), expected disabled"
start_scx
note "ops: $(cat /sys/kernel/sched_ext/root/ops)"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC after SIGINT"
check_dmesg_clean

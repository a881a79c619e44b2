#!/usr/bin/env bash
# The scheduler loads: state is enabled and the kernel names it scx_tick.
# Modes: bpf, userspace (test.sh runs it again as userspace/NAME).
source "$(dirname "$0")/../lib.sh"
[[ "$(sched_state)" == disabled ]] || fail "state before start is $(sched_state), expected disabled"
start_scx
note "ops: $(cat /sys/kernel/sched_ext/root/ops)"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC after SIGINT"
check_dmesg_clean

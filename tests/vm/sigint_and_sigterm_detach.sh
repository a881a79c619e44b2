#!/usr/bin/env bash
# SIGINT and SIGTERM each detach the scheduler cleanly with exit status 0.
# Modes: bpf, userspace (test.sh runs it again as userspace/NAME).
# guest: shared
source "$(dirname "$0")/../lib.sh"
for sig in INT TERM; do
  start_scx
  stop_scx "$sig"
  [[ $SCX_RC -eq 0 ]] || fail "SIG$sig: exit status $SCX_RC, expected 0"
  wait_sched_state disabled 30 || fail "SIG$sig: state is $(sched_state) after exit"
  note "SIG$sig: exit 0, state disabled"
done
check_dmesg_clean

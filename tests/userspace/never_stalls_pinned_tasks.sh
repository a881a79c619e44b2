#!/usr/bin/env bash
# tests/vm/never_stalls_pinned_tasks.sh again, against scx_tick --userspace.
SCX_TICK_MODE=userspace exec bash "$(dirname "$0")/../vm/never_stalls_pinned_tasks.sh"

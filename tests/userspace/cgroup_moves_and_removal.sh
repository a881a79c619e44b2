#!/usr/bin/env bash
# tests/vm/cgroup_moves_and_removal.sh again, against scx_tick --userspace.
SCX_TICK_MODE=userspace exec bash "$(dirname "$0")/../vm/cgroup_moves_and_removal.sh"

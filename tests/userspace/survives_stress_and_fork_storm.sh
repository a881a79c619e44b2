#!/usr/bin/env bash
# tests/vm/survives_stress_and_fork_storm.sh again, against scx_tick --userspace.
SCX_TICK_MODE=userspace exec bash "$(dirname "$0")/../vm/survives_stress_and_fork_storm.sh"

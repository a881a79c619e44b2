#!/usr/bin/env bash
# tests/vm/ticks_beat_default_scheduler_under_load.sh again, against scx_tick --userspace.
SCX_TICK_MODE=userspace exec bash "$(dirname "$0")/../vm/ticks_beat_default_scheduler_under_load.sh"

#!/usr/bin/env bash
# tests/vm/steals_only_past_threshold.sh again, against scx_tick --userspace.
SCX_TICK_MODE=userspace exec bash "$(dirname "$0")/../vm/steals_only_past_threshold.sh"

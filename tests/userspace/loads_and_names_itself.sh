#!/usr/bin/env bash
# tests/vm/loads_and_names_itself.sh again, against scx_tick --userspace.
SCX_TICK_MODE=userspace exec bash "$(dirname "$0")/../vm/loads_and_names_itself.sh"

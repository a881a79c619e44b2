#!/usr/bin/env bash
# tests/vm/sigint_and_sigterm_detach.sh again, against scx_tick --userspace.
SCX_TICK_MODE=userspace exec bash "$(dirname "$0")/../vm/sigint_and_sigterm_detach.sh"

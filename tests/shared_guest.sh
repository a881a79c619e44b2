#!/usr/bin/env bash
# Short VM scenarios ("# guest: shared") in one guest, one after another:
# scripts/test.sh runs this instead of booting a guest for each, and
# splits the output at the markers below. Each scenario starts in a guest
# as a fresh one is: sched_ext disabled, no scx_tick running, nothing left
# of the scenario before (its process group is killed when it ends) and
# no kernel message of it (dmesg is cleared: scenarios check theirs).
# A guest that is not clean runs no further scenario: test.sh runs the
# rest in guests of their own.
#
#   bash tests/shared_guest.sh tests/vm/A.sh tests/vm/B.sh ...
set -u
source "$(dirname "$0")/../scripts/common.sh" # sched_state

clean() { [[ "$(sched_state)" == disabled ]] && ! pgrep -x scx_tick >/dev/null; }

for f in "$@"; do
  for _ in $(seq 50); do clean && break; sleep 0.2; done
  if ! clean; then
    echo "=== SHARED-UNCLEAN before $f: sched_ext $(sched_state), scx_tick pids: $(pgrep -x scx_tick | tr '\n' ' ')"
    exit 1
  fi
  dmesg -C
  echo "=== SHARED-BEGIN $f"
  t0=$(date +%s)
  # its own session, so whatever it leaves running is ended with it
  setsid -w bash "$f" </dev/null &
  pid=$!
  wait "$pid"
  rc=$?
  kill -KILL -- "-$pid" 2>/dev/null
  echo "=== SHARED-END $f $rc $(($(date +%s) - t0))"
done

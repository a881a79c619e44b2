#!/usr/bin/env bash
# Short VM scenarios ("# guest: shared") in one guest, one after another:
# scripts/test.sh runs this instead of booting a guest for each, and
# splits the output at the markers below. Each scenario starts in a guest
# as a fresh one is: sched_ext disabled, no scx_tick running, nothing left
# of the scenario before (its process group is killed when it ends) and
# no kernel message of it (dmesg is cleared: scenarios check theirs), no
# cgroup it made and no controller it turned on for root's children (each
# named in its output, then removed: most scenarios left their cgroups,
# and vm/churn_leaks_nothing the memory controller, for every scenario
# after them to run beside).
# A guest that is not clean runs no further scenario: test.sh runs the
# rest in guests of their own.
#
#   bash tests/shared_guest.sh tests/vm/A.sh tests/vm/B.sh ...
set -u
source "$(dirname "$0")/../scripts/common.sh" # sched_state

clean() { [[ "$(sched_state)" == disabled ]] && ! pgrep -x scx_tick >/dev/null; }
CG=/sys/fs/cgroup
cgroups() { find "$CG" -mindepth 1 -type d | sort; }
BOOT_CGROUPS=$(cgroups) BOOT_CONTROLLERS=$(cat $CG/cgroup.subtree_control)
# What the scenario left in the cgroup tree, named and removed (children
# first); one still in use stays, and is named again after the next.
tidy_cgroups() {
  local left c
  left=$(cgroups | grep -vxF "$BOOT_CGROUPS") # (the guest has no /dev/fd for comm)
  if [[ -n "$left" ]]; then
    echo "# cgroups left behind, removed: $(tr '\n' ' ' <<<"$left")"
    for _ in 1 2 3; do # a task killed a moment ago may still hold one
      sort -r <<<"$left" | while read -r c; do rmdir "$c" 2>/dev/null; done
      [[ -z "$(cgroups | grep -vxF "$BOOT_CGROUPS")" ]] && break
      sleep 0.5
    done
  fi
  for c in $(cat $CG/cgroup.subtree_control); do
    [[ " $BOOT_CONTROLLERS " == *" $c "* ]] && continue
    if echo "-$c" 2>/dev/null >$CG/cgroup.subtree_control; then
      echo "# controller left on for root's children, turned off: $c"
    else
      echo "# controller left on for root's children, still on (in use below): $c"
    fi
  done
}

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
  tidy_cgroups
  echo "=== SHARED-END $f $rc $(($(date +%s) - t0))"
done

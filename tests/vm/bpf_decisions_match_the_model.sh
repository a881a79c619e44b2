#!/usr/bin/env bash
# The BPF policy decides what its model (src/dispatch.rs) says: under load
# (runners homed on one tick CPU, CPU hogs everywhere, so runners wait,
# are stolen and spill over), scx_tick --trace-decisions records every
# poll of a CPU for a runner, its inputs and its pick, and tracereplay
# replays each through dispatch::poll / poll_spill: no disagreement, with
# work stealing and with --no-work-stealing (the shared queue). The replay
# can fail: the same trace through a model that steals without waiting for
# the threshold disagrees.
source "$(dirname "$0")/../lib.sh"
CG=$(make_cgroup tick)

trace_case() { # name, scx flags...
  local name=$1; shift
  start_scx --tick-cpus 1,2 --tick-cgroup "tick,cpus=1" --trace-decisions "$WORK/$name.trace" "$@"
  stress-ng --cpu 4 --timeout 8s >/dev/null 2>&1 &
  local hogs=$!
  "$TICKLOAD" -n 4 --period-ms 50 --work-ms 10 --duration-s 6 --cgroup "$CG" >/dev/null || fail "$name: tickload failed"
  wait $hogs
  stop_scx INT
  [[ $SCX_RC -eq 0 ]] || fail "$name: exit status $SCX_RC"
  grep "decision trace:" "$WORK/scx.err" | sed 's/^/# /'
  "$TRACEREPLAY" "$WORK/$name.trace" >"$WORK/$name.replay" || { cat "$WORK/$name.replay"; fail "$name: BPF and the model disagree"; }
  note "$name: $(head -1 "$WORK/$name.replay")"
}
# "replayed N decisions (local L, global G, steal S, nothing X; ..."
count() { head -1 "$WORK/$1.replay" | sed -E "s/(^|.*[ (])$2 ([0-9]+).*/\2/"; }

trace_case stealing
(($(count stealing replayed) >= 1000)) || fail "too few decisions traced to mean anything"
(($(count stealing steal) > 0)) || fail "the traced run never stole: the steal rule was not checked"
(($(count stealing nothing) > 0)) || fail "no decision left a CPU to other work"

trace_case shared --no-work-stealing
(($(count shared global) > 0)) || fail "--no-work-stealing: no runner taken from the shared queue"

"$TRACEREPLAY" --alter no-threshold "$WORK/stealing.trace" >"$WORK/altered.replay" \
  && fail "a model without the steal threshold agreed with BPF: the replay cannot tell"
note "altered model: $(head -1 "$WORK/altered.replay")"
grep -qE ": [1-9][0-9]* disagreements" "$WORK/altered.replay" || fail "the altered model failed without disagreeing: $(head -3 "$WORK/altered.replay")"
check_dmesg_clean

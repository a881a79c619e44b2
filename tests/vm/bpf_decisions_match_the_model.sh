#!/usr/bin/env bash
# The BPF policy decides what its model (src/model/dispatch.rs) says: under load
# (runners homed on one tick CPU, CPU hogs everywhere, so runners wait,
# are stolen and spill over), scx_tick --trace-decisions records every
# poll of a CPU for a runner, its inputs and its pick, and every check of
# ops.tick whether a runner yields its CPU, and every wake-up of a runner
# and the tick it belongs to, and tracereplay replays each through
# dispatch::poll / poll_spill / yields / wake: no disagreement, with work
# stealing, with --no-work-stealing (the shared queue), and with more
# runners than the tick CPUs hold on an idle machine (spill-overs, where
# runners get parked behind others), with runners that block mid-tick, and
# with one tick per process whose runners hand work to light helper
# threads (dispatch::ProcessTick: helpers join its ticks), and with a
# process that runs a late tick and the next back to back to catch up
# (its tick rolls over into the next: dispatch::ProcessTick::roll_over).
# The replay can fail: the same traces through a model that steals without
# waiting for the threshold, that gives a parked runner no turn, that
# starts a tick at every wake-up, whose process ticks have no helpers, or
# never roll over, disagree.
# A runner parks behind another in a local queue only on a kernel without
# SCX_ENQ_IMMED (before 7.1): with it the kernel hands such a runner back
# to ops.enqueue, and the heavy case parked 0-9 runners a run (8-19
# without it), so the parked turn is checked on the oldest kernel.
# On the oldest kernel (oldest/NAME) only the cases whose paths differ
# there run: stealing, shared and heavy (every poll peeks through the
# fallback; runners park); the wake-up rules' cases (blocking, process,
# catchup) left that run for the suite's time: the kfuncs that have
# fallbacks there (the peek, select_cpu_and, cpu_curr) are called in the
# first three too.
# Catches: nosteal steal-early hometurn waketicks nohelpers norollover
# Catches on the oldest kernel: noparked
source "$(dirname "$0")/../lib.sh"
CG=$(make_cgroup tick)

trace_case() { # name, hogs, runners, work ms, scx flags...
  local name=$1 hogs=$2 n=$3 work=$4 pid=""; shift 4
  start_scx --trace-decisions "$WORK/$name.trace" "$@"
  if ((hogs > 0)); then stress-ng --cpu "$hogs" --timeout 8s >/dev/null 2>&1 & pid=$!; fi
  "$TICKLOAD" -n "$n" --period-ms "$PERIOD" --work-ms "$work" --duration-s 6 --cgroup "$CG" "${LOAD_EXTRA[@]}" >/dev/null || fail "$name: tickload failed"
  [[ -z "$pid" ]] || wait "$pid"
  stop_scx INT
  [[ $SCX_RC -eq 0 ]] || fail "$name: exit status $SCX_RC"
  grep "decision trace:" "$WORK/scx.err" | sed 's/^/# /'
  "$TRACEREPLAY" "$WORK/$name.trace" >"$WORK/$name.replay" || { cat "$WORK/$name.replay"; fail_catches "nosteal steal-early noparked hometurn waketicks nohelpers norollover" "$name: BPF and the model disagree"; }
  note "$name: $(head -1 "$WORK/$name.replay")"
}
# "replayed N decisions (local L, global G, steal S, nothing X; raced R;
# yield checks C, yielded Y, parked P; wakes W, continued K, of a process tick T,
# helpers H; roll-over checks O, rolled over V) ..."
LOAD_EXTRA=() PERIOD=50
count() { head -1 "$WORK/$1.replay" | sed -E "s/(^|.*[ (;])$2 ([0-9]+).*/\2/"; }

HOMED=(--tick-cpus 1,2 --tick-cgroup "tick,cpus=1")
trace_case stealing 4 4 10 "${HOMED[@]}"
(($(count stealing replayed) >= 1000)) || fail "too few decisions traced to mean anything"
(($(count stealing steal) > 0)) || fail "the traced run never stole: the steal rule was not checked"
(($(count stealing nothing) > 0)) || fail "no decision left a CPU to other work"
(($(count stealing yielded) > 0)) || fail "no runner yielded its CPU: the turns were not checked"

trace_case shared 4 4 10 "${HOMED[@]}" --no-work-stealing
(($(count shared global) > 0)) || fail "--no-work-stealing: no runner taken from the shared queue"

# 6 x 20 ms on 4 vCPUs: more than 2 tick CPUs hold
trace_case heavy 0 6 20 --tick-cpus 2 --tick-cgroup tick
IMMED=0
# grep -c reads all of it (-q would stop bpftool early: a pipefail)
bpftool btf dump file /sys/kernel/btf/vmlinux | grep -c "'SCX_ENQ_IMMED'" >/dev/null && IMMED=1
if ((IMMED == 0)); then
  (($(count heavy parked) > 0)) || fail "no yield check saw a parked runner: the parked turn was not checked"
else
  note "this kernel has SCX_ENQ_IMMED: $(count heavy parked) runners parked (a runner queued behind another is handed back to ops.enqueue)"
fi

ALL_CASES=1
[[ ${SCX_TICK_KERNEL:-current} == oldest ]] && ALL_CASES=0
if ((ALL_CASES)); then
  # each tick blocked twice mid-tick (1 ms sleeps), beside hogs
  LOAD_EXTRA=(--blocks 2)
  trace_case blocking 2 3 8 --tick-cpus 1,2 --tick-cgroup tick
  LOAD_EXTRA=()
  (($(count blocking continued) > 0)) || fail "no wake-up continued its tick: the grid identity was not checked"
  (($(count blocking wakes) > $(count blocking continued))) || fail "no wake-up started a tick"

  # one tick per process: tickload's 2 runners block mid-tick and each hands
  # 0.5 ms of each tick to a helper thread of its own (a light thread of the
  # process: it joins the step's tick), beside hogs
  LOAD_EXTRA=(--blocks 1 --helper-ms 0.5)
  trace_case process 2 2 10 --tick-cpus 1,2 --tick-cgroup tick,tick=process
  LOAD_EXTRA=()
  (($(count process tick) > 100)) || fail "too few wake-ups of a process tick's threads traced"
  (($(count process helpers) > 0)) || fail "no helper joined a process tick: the helper rule was not checked"

  # OpenTTD's shape: 30 ms ticks due within 60 ms, one in 5 a 30 ms spike
  # after which the runner runs the tick due meanwhile back to back (measured
  # in a probe: 49 roll-over checks, all rolled over)
  LOAD_EXTRA=(--deadline-ms 60 --spike-ms 30 --spike-pct 20 --game-server) PERIOD=30
  trace_case catchup 8 1 12 --tick-cpus 1,2 --tick-cgroup tick,tick=process,period=30,deadline=60
  LOAD_EXTRA=() PERIOD=50
  (($(count catchup "rolled over") > 0)) || fail_catches norollover "no process tick rolled over: the roll-over rule was not checked"
else
  note "the oldest kernel: the blocking, process and catchup cases not run (the suite's time)"
fi

# A deliberately altered model must disagree with BPF on trace $2, or the
# replay could not tell that rule ($3: what the altered model does).
altered() {
  "$TRACEREPLAY" --alter "$1" "$WORK/$2.trace" >"$WORK/$1.replay" \
    && fail "a model where $3 agreed with BPF: the replay cannot tell"
  note "altered model: $(head -1 "$WORK/$1.replay")"
  grep -qE ": [1-9][0-9]* disagreements" "$WORK/$1.replay" \
    || fail "the altered model failed without disagreeing: $(head -3 "$WORK/$1.replay")"
}
altered no-threshold stealing "runners are stolen without waiting for the threshold"
# a parked runner (rare: 0-2 per run) whose turn alone made a runner yield
if (($(count heavy "a turn in") > 0)); then
  altered no-parked-turn heavy "a runner parked behind another gets no turn"
else
  note "no parked runner's turn decided a yield in this run: the parked-turn rule was not checked"
fi
# spilled runners on non-tick CPUs saw earlier runners at their homes and kept their CPUs
altered home-turns heavy "spilled runners take turns with their homes' queues"
# tick CPUs whose own head was late served it instead of stealing
altered steal-over-late-local heavy "a tick CPU steals while its own head is late enough to be stolen"
# runners blocked mid-tick came back inside their ticks
if ((ALL_CASES)); then
  altered wake-ticks blocking "every wake-up starts a tick"
  altered no-helpers process "a process's light threads start and split its ticks"
  altered no-roll-over catchup "a process's tick never rolls over into the next"
fi
check_dmesg_clean

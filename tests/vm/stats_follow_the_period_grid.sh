#!/usr/bin/env bash
# scx_tick's deadline misses against the workload's own count, in the ways
# a tick server runs (issue cases), each with and without deadline hints
# (two groups side by side, so runners share CPUs):
#   sleeping  4 runners x 15 ms / 50 ms beside 8 hogs: every tick ends in a sleep
#   behind    4 x 30 ms, game-server loop, 8 hogs: late ticks skip the sleep
#   never     3 x 70 ms, game-server loop, idle: the runners never sleep
#   blocking  4 x 12 ms / 50 ms beside 8 hogs, each tick blocked 3 times
#             mid-tick (1 ms sleeps): one tick, four wake-ups
#   alone     as never, the group without hints only: each runner alone
#             on its tick CPU (it keeps the CPU with a fresh slice,
#             keep_prev(), without ops.stopping: ops.tick must start its next tick)
#   process   a group with tick = "process": one process whose 3 threads
#             each work 10 ms per 50 ms step, blocked twice mid-tick, beside
#             8 hogs, its steps 35 ms later from halfway on (a server that
#             reset its clock): scx_tick counts the process's steps (within
#             10 %), not its threads' ticks (3 x), and a step missed when any
#             thread of it missed (between 1/4 and 2 x; the build that gives
#             each thread its own ticks counts 3 x the steps; a server behind
#             schedule is undercounted, as in the blocking case: 9 misses
#             for 27 late steps on 7b243fa, 0-11 for 0-10 before); every miss
#             it reports (-vv) is a step the server ran late, but for 4 (the
#             threads' exit wake-ups, and steps around start-up and the
#             phase move: 0-3 in 5 runs; the build whose grid alone decides,
#             without steps, reported 7 in steps the server kept)
#   catchup   tick = "process", 30 ms period, 60 ms deadline (OpenTTD's):
#             one runner, 12 ms a tick, one tick in 5 a 30 ms spike, after
#             which the tick due meanwhile runs back to back, beside 8 hogs:
#             scx_tick counts every tick the server ran (within 10 %; the
#             build whose process ticks never roll over counts the pair as
#             one), misses as the process case
# The truth without hints is the period grid (docs/stats.md): a tick the
# server ran late is a miss, and so is one it skipped because it was a whole
# period behind (its deadline passed while the runner was still busy). With
# hints scx_tick counts exactly the ticks the server ran. Agreement:
# sleeping within 5 %, never sleeping and alone within 2 % (records/tests
# 2026-11-25 to 27: 0.983-1.004 x and +0 to +2 misses), behind within 25 %,
# blocking between 1/20 and 1/2 without hints (measured 0.08-0.29 x since
# 2026-11-25, 1.2 x before the grid's late-wake-up rule; lower the more
# the runners are behind: a late tick's
# wake-ups near the next grid point are taken for the next tick, so a
# server behind schedule without hints is undercounted, docs/stats.md; the
# build that made every wake-up a tick counted 0, and its 2,000 ticks for
# 640 fail the ticks bound below); with hints every case
# within 5 %. Ticks: scx_tick counts the blocking runners' ticks, not their
# wake-ups (4 per tick): from 5 % under to 25 % over the grid's ticks
# without hints (measured +3 to +18 %: a late tick's wake-ups near the
# next grid point start it early), 5 % of the ticks the server ran with hints. Each bound also allows
# one miss per runner (its spawn and exit wake-ups are ticks to the
# scheduler, not to the workload), with hints two per runner, and 3 for
# tickload's main thread.
# Catches: nomiss waketicks notickreplenish threadticks nosteps norollover
source "$(dirname "$0")/../lib.sh"
PLAIN=$(make_cgroup plain)
HINTED=$(make_cgroup hinted)

run_case() { # name runners work_ms hogs(0/1) extra-tickload-args...
  local name=$1 n=$2 work=$3 hogs=$4; shift 4
  start_scx --tick-cgroup plain --tick-cgroup hinted
  local hog=""
  if [[ $hogs -eq 1 ]]; then stress-ng --cpu 8 --timeout 10s >/dev/null 2>&1 & hog=$!; fi
  local load=(-n "$n" --work-ms "$work" --period-ms 50 --duration-s 8 --json "$@")
  "$TICKLOAD" "${load[@]}" --cgroup "$PLAIN" >"$WORK/$name-plain.json" &
  local a=$!
  "$TICKLOAD" "${load[@]}" --hint --cgroup "$HINTED" >"$WORK/$name-hinted.json" &
  local b=$!
  wait $a || fail "$name: tickload (plain) failed"
  wait $b || fail "$name: tickload (hinted) failed"
  [[ -z "$hog" ]] || wait "$hog"
  stop_scx INT
  [[ $SCX_RC -eq 0 ]] || fail "$name: exit status $SCX_RC"
  grep "scx_tick summary:" "$WORK/scx.out" | sed "s/^/# $name: /"
  exit_line >"$WORK/$name.exit.json"
}

run_case sleeping 4 15 1
run_case behind 4 30 1 --game-server
run_case never 3 70 0 --game-server
run_case blocking 4 12 1 --blocks 3
start_scx --tick-cgroup plain
"$TICKLOAD" -n 3 --work-ms 70 --period-ms 50 --duration-s 8 --json --game-server --cgroup "$PLAIN" \
  >"$WORK/alone-plain.json" || fail "alone: tickload failed"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "alone: exit status $SCX_RC"
grep "scx_tick summary:" "$WORK/scx.out" | sed "s/^/# alone: /"
exit_line >"$WORK/alone.exit.json"
PROC=$(make_cgroup proc)
start_scx --tick-cgroup proc,tick=process -vv
stress-ng --cpu 8 --timeout 10s >/dev/null 2>&1 &
hog=$!
"$TICKLOAD" -n 3 --work-ms 10 --blocks 2 --period-ms 50 --duration-s 8 --json --cgroup "$PROC" \
  --phase-jump-ms 35 --ticks-log "$WORK/process-ticks.log" >"$WORK/process-proc.json" || fail "process: tickload failed"
wait "$hog"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "process: exit status $SCX_RC"
grep "scx_tick summary:" "$WORK/scx.out" | sed "s/^/# process: /"
exit_line >"$WORK/process.exit.json"
grep "miss: " "$WORK/scx.err" >"$WORK/process.misses" || true

start_scx --tick-cgroup proc,tick=process,period=30,deadline=60
stress-ng --cpu 8 --timeout 10s >/dev/null 2>&1 &
hog=$!
"$TICKLOAD" -n 1 --work-ms 12 --spike-ms 30 --spike-pct 20 --period-ms 30 --deadline-ms 60 --game-server \
  --duration-s 8 --json --cgroup "$PROC" >"$WORK/catchup-proc.json" || fail "catchup: tickload failed"
wait "$hog"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "catchup: exit status $SCX_RC"
grep "scx_tick summary:" "$WORK/scx.out" | sed "s/^/# catchup: /"
exit_line >"$WORK/catchup.exit.json"

python3 - "$WORK" <<'PY' || fail_catches "nomiss waketicks notickreplenish threadticks nosteps norollover" "scx_tick's misses do not agree with the workload's (see above)"
import json, re, sys
work = sys.argv[1]
bounds = {"sleeping": (0.95, 1.05), "behind": (0.75, 1.25), "never": (0.98, 1.02),
          "blocking": (0.05, 0.5), "alone": (0.98, 1.02)}
ok = True
for case, (lo, hi) in bounds.items():
    exit_line = json.load(open(f"{work}/{case}.exit.json"))
    for group in ("plain",) if case == "alone" else ("plain", "hinted"):
        own = json.load(open(f"{work}/{case}-{group}.json"))
        g = exit_line["groups"][group]
        ticks, scx, hints = g["ticks"], g["misses"], g["hints_used"]
        # grid: the skipped ticks are missed too; hints: the server's own ticks
        truth = own["misses"] + (own["skipped"] if group == "plain" else 0)
        # one per runner; with hints two (its first tick, before its first
        # hint, and its last: the thread exits instead of sleeping, and
        # is on a CPU or waiting for one at that tick's deadline); up to 3
        # for tickload's main thread, in the group too (records/probes/
        # hinted-overcount-2026-12-02: every extra hinted miss was one of
        # these; the case counted 10 over the workload once, 1 past the
        # bound of 2 per runner + 1)
        slack = len(own["runners"]) * (1 if group == "plain" else 2) + 3
        l, h = (lo, hi) if group == "plain" else (0.95, 1.05)
        good = truth * l - slack <= scx <= truth * h + slack
        ok &= good
        print(f"# {case:8} {group:6}: workload {truth:4} misses of {own['ticks'] + own['skipped']:4} ticks "
              f"({own['skipped']} skipped), "
              f"scx_tick {scx:4} of {ticks:4} (hints used {hints}); allowed "
              f"{max(0, truth * l - slack):.0f}..{truth * h + slack:.0f} {'ok' if good else 'NO'}")
        if case == "blocking":
            # one tick per server tick, not one per wake-up (4 per tick
            # here): without hints the grid's ticks (a skipped one too),
            # with hints the ones the server ran
            want = own["ticks"] + (own["skipped"] if group == "plain" else 0)
            under, over = (0.05, 0.25) if group == "plain" else (0.05, 0.05)
            good = want * (1 - under) - slack <= ticks <= want * (1 + over) + slack
            ok &= good
            print(f"# {case:8} {group:6}: workload {want} ticks, scx_tick {ticks} "
                  f"{'ok' if good else 'NO: it counts wake-ups'}")
def process_case(name, want, late, g, slack, unit, why):
    """A tick = "process" group's exit totals `g` against its workload:
    ticks within 10 % of the `want` steps or ticks it ran (`unit`), misses
    between 1/4 and 2 x the `late` ones, each bound with `slack`."""
    ticks, scx = g["ticks"], g["misses"]
    good_ticks = abs(ticks - want) <= 0.1 * want + slack
    print(f"# {name:8} proc  : workload {want} {unit}, scx_tick {ticks} ticks "
          f"{'ok' if good_ticks else 'NO: ' + why}")
    good_misses = late * 0.25 - slack <= scx <= late * 2 + slack
    print(f"# {name:8} proc  : workload {late} missed {unit}, scx_tick {scx} misses; allowed "
          f"{max(0, late * 0.25 - slack):.0f}..{late * 2 + slack} {'ok' if good_misses else 'NO'}")
    return good_ticks and good_misses
# tick = "process": the process's steps, not its threads' ticks
own = json.load(open(f"{work}/process-proc.json"))
steps, late = own["steps"]
slack = 2  # the spawn and exit wake-ups of tickload's threads
# and, in the process case, the step at the phase jump, which the grid
# may take as late once: this bound failed with the workload's 0 misses
# in 2 of 51 recorded runs (3 misses on 2026-11-30, 5 on 2026-11-25); of
# the 3, one sat at the jump (4.03 s) and one at the exit (8.04 s)
ok &= process_case("process", steps, late, json.load(open(f"{work}/process.exit.json"))["groups"]["proc"],
                   slack + 1, "steps", "it counts threads, not the process")
# catch-up: every tick the server ran, the ones run back to back too; the
# first tick (its grid a start-up guess) and the exit wake-up: 2 misses
# for the workload's 0 in 3 probe runs of the first roll-over form, 0-1 with
# a roll-over at every grid point (24075be); ticks 258-269 for 266-267
# (218-222 without roll-over, 11-13 misses)
own = json.load(open(f"{work}/catchup-proc.json"))
ok &= process_case("catchup", own["ticks"], own["misses"],
                   json.load(open(f"{work}/catchup.exit.json"))["groups"]["proc"],
                   slack + 1, "ticks", "catch-up ticks run back to back counted as one")
# each miss reported against the step whose deadline is nearest its own
# (within half a period): one the server ran late, or a false one
due = {}
for line in open(f"{work}/process-ticks.log"):
    _, d, _, end = line.rsplit("\t", 3)
    due[int(d)] = max(due.get(int(d), 0), int(end))
period = deadline = 50_000_000
false = []
for line in open(f"{work}/process.misses"):
    dl = int(re.search(r" deadline (\d+) ", line).group(1))
    step = min(due, key=lambda d: abs(d + deadline - dl))
    if abs(step + deadline - dl) > period // 2 or due[step] <= step + deadline:
        false.append(f"{(dl - min(due)) / 1e6:.1f} ms")
good = len(false) <= slack + 2
ok &= good
print(f"# process  proc  : {len(false)} of scx_tick's misses in steps the server kept "
      f"(deadlines {', '.join(false) or '-'} from its first step); allowed {slack + 2} "
      f"{'ok' if good else 'NO'}")
sys.exit(0 if ok else 1)
PY
check_dmesg_clean

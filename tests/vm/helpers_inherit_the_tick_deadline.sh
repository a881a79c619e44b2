#!/usr/bin/env bash
# A tick gated by a helper thread: each of two probe servers runs one loop
# thread that works 8 ms at its tick, then hands 12 ms to a helper thread of
# its own and waits for it (tickload --helper-ms), one in a group with one
# tick per process (tick=process: the helper works to the tick's deadline),
# one in a group with one tick per thread (the helper's own wake-up starts
# its own tick, its deadline ~10 ms later). Beside them, 8 runners of 14 ms
# in a third group whose ticks come 4 ms after the probes': their deadlines
# fall between the probes' tick deadline and the thread-ticked helper's
# own, so under EDF the inheriting helper runs before them and the other
# after them. The probe whose helper inherits misses at most 3/4 as often
# as the other (from the workload's side: a tick missed when the helper's
# work ended past the tick's deadline; measured 0.39-0.50 x over four
# loads, results/x sweep), and the other misses at least 10 % (else the
# load did not make the order matter).
# Catches: noinherit
# guest: shared
source "$(dirname "$0")/../lib.sh"
INHERIT=$(make_cgroup inherit)
OWN=$(make_cgroup own)
LOAD=$(make_cgroup load)
start_scx --tick-cgroup inherit,tick=process --tick-cgroup own --tick-cgroup load
probe=(-n 1 --work-ms 8 --helper-ms 12 --period-ms 50 --phase-ms 0 --duration-s 10 --json)
"$TICKLOAD" -n 8 --work-ms 14 --period-ms 50 --phase-ms 4 --duration-s 11 --json --cgroup "$LOAD" \
  >"$WORK/load.json" &
load=$!
"$TICKLOAD" "${probe[@]}" --cgroup "$INHERIT" >"$WORK/inherit.json" &
a=$!
"$TICKLOAD" "${probe[@]}" --cgroup "$OWN" >"$WORK/own.json" &
b=$!
wait $a || fail "the inheriting probe failed"
wait $b || fail "the other probe failed"
wait $load || fail "the load failed"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
grep "scx_tick summary:" "$WORK/scx.out" | sed 's/^/# /'
python3 - "$WORK" <<'PY' || fail_catches noinherit "the helper did not work to its tick's deadline (see above)"
import json, sys
w = sys.argv[1]
pct = lambda n: json.load(open(f"{w}/{n}.json"))["miss_pct"]
inherit, own, load = pct("inherit"), pct("own"), pct("load")
print(f"# ticks missed: helper inherits {inherit:.2f} %, helper on its own {own:.2f} %, the load {load:.2f} %")
sys.exit(0 if own >= 10 and inherit <= 0.75 * own else 1)
PY
check_dmesg_clean

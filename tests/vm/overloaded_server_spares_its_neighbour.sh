#!/usr/bin/env bash
# Two servers on one host, each its own tick group, beside 4 CPU hogs: a
# well-behaved one (4 runners x 12 ms per 50 ms tick) and an overloaded
# one (3 runners that never sleep, 70 ms of work per 50 ms tick: a lag
# machine). Work that runs on past a missed deadline ranks a period
# behind on-time ticks, and takes no CPU from other work, so the
# well-behaved server keeps its ticks beside the overloaded one (checked
# from its own tickload),
# while the overloaded one still gets what is left (it keeps ticking, at
# least a CPU's worth). Measured against the same server alone in the
# same guest: at most 30 points more beside it (2026-11-26, 15 runs of
# today's builds: 0.5-22 %, alone 0 %; the build without the rule,
# breakage nodemote, 45 %, and the policy before it 46-53 %).
# Catches: nodemote
source "$(dirname "$0")/../lib.sh"
GOOD=$(make_cgroup good)
BAD=$(make_cgroup bad)
SECS=8
good=(-n 4 --work-ms 12 --period-ms 50 --duration-s $SECS --json --cgroup "$GOOD")
start_scx --tick-cgroup good --tick-cgroup bad
stress-ng --cpu 4 --timeout $((SECS + 1))s >/dev/null 2>&1 &
hogs=$!
"$TICKLOAD" "${good[@]}" >"$WORK/alone.json" || fail "tickload failed"
wait $hogs
stress-ng --cpu 4 --timeout $((SECS + 1))s >/dev/null 2>&1 &
hogs=$!
"$TICKLOAD" -n 3 --work-ms 70 --game-server --period-ms 50 --duration-s $SECS --json \
  --cgroup "$BAD" >"$WORK/bad.json" &
bad=$!
"$TICKLOAD" "${good[@]}" >"$WORK/beside.json" || fail "tickload failed"
wait $bad || fail "the overloaded server's tickload failed"
wait $hogs
[[ "$(sched_state)" == enabled ]] || fail "scx_tick was ejected: $(tail -3 "$WORK/scx.err")"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
python3 - "$WORK" $SECS <<'PY' || fail "the overloaded server cost its neighbour its ticks: see above"
import json, sys
w, secs = sys.argv[1], float(sys.argv[2])
alone, beside, bad = (json.load(open(f"{w}/{n}.json")) for n in ("alone", "beside", "bad"))
p50 = lambda r: r["lateness_quantiles_ms"][50]
print(f"# well-behaved server: alone {alone['miss_pct']:.2f} % missed (p50 start lateness {p50(alone):.1f} ms), "
      f"beside the overloaded one {beside['miss_pct']:.2f} % ({p50(beside):.1f} ms)")
cpu = bad["ticks"] * 70 / 1000 / secs
print(f"# overloaded server: {bad['ticks']} ticks of 70 ms, {cpu:.2f} CPUs")
# without the overrun rule the neighbour missed about half its ticks
# (44-53 %); with it 5-13 % in this emulated guest (its start lateness is
# printed, not bounded: 2-4 x alone's with the rule, 4.5-5.6 x without)
ok = beside["miss_pct"] <= alone["miss_pct"] + 30
# what is left after the neighbour (~1 CPU) and the hogs' share: it keeps
# at least a CPU (measured 2.3-2.8)
ok &= cpu >= 1.0
sys.exit(0 if ok else 1)
PY
check_dmesg_clean

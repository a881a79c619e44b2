#!/usr/bin/env bash
# Other work at nice 19 keeps running beside many CPU hogs: the fair queue
# charges a low weight many times its run time (nice 19: 100 x), and an
# uncapped debt made a nice-19 hog wait 7 s among 24 hogs, past the
# watchdog (5 s here), which ejected scx_tick. Seen from the niced work's
# side: a nice-19 hog makes progress, and a nice-19 periodic probe never
# waits seconds for a CPU.
# Catches: nicestall
source "$(dirname "$0")/../lib.sh"
CG=$(make_cgroup tick)
start_scx --tick-cgroup tick
stress-ng --cpu 24 --timeout 15s --temp-path "$WORK" >/dev/null 2>&1 &
hogs=$!
nice -n 19 stress-ng --cpu 1 --timeout 15s --metrics-brief --temp-path "$WORK" >"$WORK/niced" 2>&1 &
niced=$!
nice -n 19 "$TICKLOAD" -n 1 --work-ms 1 --period-ms 100 --duration-s 14 --json >"$WORK/probe.json" &
probe=$!
"$TICKLOAD" -n 2 --work-ms 5 --duration-s 14 --cgroup "$CG" >"$WORK/load" || fail "tickload failed"
wait $probe || fail "the nice-19 probe failed"
wait $niced || fail "the nice-19 hog failed"
wait $hogs || fail "the hogs failed"
[[ "$(sched_state)" == enabled ]] || fail_catches nicestall "scheduler ejected (state $(sched_state)): $(grep -m1 "error: EXIT" "$WORK/scx.err")"
ops=$(awk '/metrc:.* cpu /{print $5}' "$WORK/niced")
note "nice-19 hog beside 24 hogs: bogo-ops $ops"
[[ -n "$ops" && "${ops%.*}" -gt 0 ]] || fail_catches nicestall "the nice-19 hog made no progress"
python3 - "$WORK/probe.json" <<'PY' || fail_catches nicestall "the nice-19 probe waited too long for a CPU"
import json, sys
p = json.load(open(sys.argv[1]))["total"]
print(f"# nice-19 probe: {p['ticks']} of 140 ticks, start lateness max {p['lateness_max_ms']:.0f} ms, "
      f"longest wait mid-work {p['stall_max_ms']:.0f} ms")
# a wait of 2.5 s (half the watchdog) is a stall in the making
sys.exit(0 if p["ticks"] > 0 and p["lateness_max_ms"] < 2500 and p["stall_max_ms"] < 2500 else 1)
PY
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
check_dmesg_clean

#!/usr/bin/env bash
# Other work at nice 19 keeps running beside many CPU hogs, and gets less
# than nice-0 work. The fair queue charges a low weight many times its run
# time (nice 19: 100 x); an uncapped debt made a nice-19 hog wait 7 s
# among 24 hogs, past the watchdog (5 s here), which ejected scx_tick, and
# a queue clock raised to each charged vtime gave a nice-19 hog about a
# nice-0 hog's share (16-18 of 100 ms ticks in 14 s, records/tests
# 2026-11-27; the debt's cap, 10 slices ahead of the clock, bounds its wait).
# Seen from the niced work's side: a nice-19 hog makes progress, at most
# half of its nice-0 twin's (scx_tick 1/2.6-1/2.9 here since the 10-slice
# cap, records/tests 2026-11-27-4 and two runs before it; EEVDF 1/2.7 and
# 1/4.5 in probes of this load; the clock raised at each stop gave about
# as much as the twin), and, like a nice-19 periodic probe, never waits
# seconds for a CPU.
# The probe's longest wait in the records: 60-591 ms in most runs; 1-3 s
# in about one run in ten until the fair queue kept the keys it lifts as
# the tasks' vtimes (bpf/other.bpf.c: enqueue_other), 49-176 ms in 28
# probe rounds after it (records/probes/niced-wait-2026-11-27/). A wait of
# 2.5 s, half the 5 s watchdog, fails. A SCHED_FIFO probe beside it is the
# control: no sched_ext scheduler can delay it, so a wait that the control
# shares (both woke seconds late together) is the emulated guest standing
# still, not the fair queue.
# Catches: nicestall clockcharge
# guest: shared
source "$(dirname "$0")/../lib.sh"
CG=$(make_cgroup tick)
start_scx --tick-cgroup tick
stress-ng --cpu 24 --timeout 15s --temp-path "$WORK" >/dev/null 2>&1 &
hogs=$!
# the nice-19 CPU hog and its nice-0 twin: runners that never sleep
# (always due), their CPU time counted in 10 ms ticks, their longest wait
# for a CPU measured mid-work
hog=(-n 1 --work-ms 10 --period-ms 10 --game-server --duration-s 14 --json)
nice -n 19 "$TICKLOAD" "${hog[@]}" >"$WORK/niced.json" &
niced=$!
"$TICKLOAD" "${hog[@]}" >"$WORK/twin.json" &
twin=$!
nice -n 19 "$TICKLOAD" -n 1 --work-ms 1 --period-ms 100 --duration-s 14 --json \
  --ticks-log "$WORK/probe.ticks" >"$WORK/probe.json" &
probe=$!
"$TICKLOAD" -n 1 --work-ms 1 --period-ms 100 --duration-s 14 --policy fifo --json \
  --ticks-log "$WORK/control.ticks" >"$WORK/control.json" &
control=$!
"$TICKLOAD" -n 2 --work-ms 5 --duration-s 14 --cgroup "$CG" >"$WORK/load" || fail "tickload failed"
wait $probe || fail "the nice-19 probe failed"
wait $control || fail "the SCHED_FIFO control probe failed"
wait $niced || fail "the nice-19 hog failed"
wait $twin || fail "the nice-0 hog failed"
wait $hogs || fail "the hogs failed"
[[ "$(sched_state)" == enabled ]] || fail_catches nicestall "scheduler ejected (state $(sched_state)): $(grep -m1 "error: EXIT" "$WORK/scx.err")"
python3 - "$WORK/niced.json" "$WORK/twin.json" <<'PY' || fail_catches "nicestall clockcharge" "the nice-19 hog made no progress, waited too long for a CPU, or ran as much as nice 0"
import json, sys
h = json.load(open(sys.argv[1]))["total"]
t = json.load(open(sys.argv[2]))["total"]
print(f"# nice-19 hog beside 24 hogs: {h['ticks']} ticks of 10 ms CPU work (its nice-0 twin "
      f"{t['ticks']}), longest wait mid-work {h['stall_max_ms']:.0f} ms")
sys.exit(0 if 0 < h["ticks"] * 2 <= t["ticks"] and h["stall_max_ms"] < 2500 else 1)
PY
verdict=0
python3 - "$WORK/probe.json" "$WORK/control.json" "$WORK/probe.ticks" "$WORK/control.ticks" <<'PY' || verdict=$?
import json, sys
p = json.load(open(sys.argv[1]))["total"]
c = json.load(open(sys.argv[2]))["total"]
print(f"# nice-19 probe: {p['ticks']} of 140 ticks, start lateness max {p['lateness_max_ms']:.0f} ms, "
      f"longest wait mid-work {p['stall_max_ms']:.0f} ms; SCHED_FIFO control: "
      f"start lateness max {c['lateness_max_ms']:.0f} ms")
# a wait of 2.5 s (half the watchdog) is a stall in the making
if p["ticks"] > 0 and p["lateness_max_ms"] < 2500 and p["stall_max_ms"] < 2500:
    sys.exit(0)
def ticks(path):
    return [tuple(int(x) for x in l.split("\t")[1:3]) for l in open(path) if l.strip()]
due, begin = max(ticks(sys.argv[3]), key=lambda t: t[1] - t[0])
# the control's longest start lateness among its ticks due in that wait
shared = max((b - d for d, b in ticks(sys.argv[4]) if due <= d < begin), default=0)
print(f"# SCHED_FIFO control during the probe's longest wait ({(begin - due) / 1e6:.0f} ms): "
      f"started up to {shared / 1e6:.0f} ms late")
sys.exit(3 if shared * 2 > begin - due else 1)
PY
# the control stood still with it: the guest's vCPUs, not a queue
((verdict != 3)) || { echo "EMULATOR-STALL: a SCHED_FIFO task waited as long as the nice-19 probe" >&2; exit 1; }
((verdict == 0)) || fail_catches nicestall "the nice-19 probe waited too long for a CPU"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
check_dmesg_clean

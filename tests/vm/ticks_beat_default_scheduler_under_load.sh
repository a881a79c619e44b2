#!/usr/bin/env bash
# With 8 CPU hogs outside the tick group, tick runners miss at most a
# quarter of the deadlines they miss under the kernel's default scheduler in
# the same guest (the benchmark measures about 0.04 x; the BPF mode only:
# the userspace mode cannot preempt and is held to fewer misses than
# EEVDF: 0.16-0.37 x on earlier hosts, 0.54-0.75 x on the slow hosts of
# 2026-12-01, where each decision's round trip through userspace is
# emulated slower; a bound of half failed CI there).
# Modes: bpf, userspace (test.sh runs it again as userspace/NAME).
source "$(dirname "$0")/../lib.sh"
CG=$(make_cgroup tick)
LOAD=(-n 4 --period-ms 50 --work-ms 18 --duration-s 10 --cgroup "$CG" --json)

stress-ng --cpu 8 --timeout 60s >/dev/null 2>&1 &
"$TICKLOAD" "${LOAD[@]}" >"$WORK/eevdf.json" || fail "tickload under EEVDF failed"

start_scx --tick-cgroup tick --tick-cpus 1,2
"$TICKLOAD" "${LOAD[@]}" >"$WORK/scx.json" || fail "tickload under scx_tick failed"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "scx_tick exit status $SCX_RC"
stop_hogs

eevdf=$(json_field "$WORK/eevdf.json" misses)
scx=$(json_field "$WORK/scx.json" misses)
ticks=$(json_field "$WORK/scx.json" ticks)
note "deadline misses with 8 hogs: EEVDF $eevdf, scx_tick $scx (of $ticks ticks)"
((ticks >= 784)) || fail "the workload ran $ticks of its 800 ticks under scx_tick (allowed: 98 % or more)"
if [[ "${SCX_TICK_MODE:-}" == userspace ]]; then
  ((scx < eevdf)) || fail "scx_tick --userspace missed $scx deadlines, no fewer than EEVDF's $eevdf"
else
  ((scx * 4 <= eevdf)) || fail "scx_tick missed $scx deadlines, more than a quarter of EEVDF's $eevdf"
fi
check_dmesg_clean

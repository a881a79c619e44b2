#!/usr/bin/env bash
# The load of vm/niced_work_is_not_starved; a watcher dumps sched_ext's
# state (SysRq-D) once the nice-19 probe's runner has been runnable without
# running for 400 ms: where it waits, with which key, beside which keys.
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../../tests/lib.sh"
CG=$(make_cgroup tick)
echo 1 >/proc/sys/kernel/sysrq
round() {
  start_scx --tick-cgroup tick
  dmesg -C
  stress-ng --cpu 24 --timeout 15s --temp-path "$WORK" >/dev/null 2>&1 &
  local hogs=$!
  nice -n 19 stress-ng --cpu 1 --timeout 15s --temp-path "$WORK" >/dev/null 2>&1 &
  local niced=$!
  nice -n 19 "$TICKLOAD" -n 1 --work-ms 1 --period-ms 100 --duration-s 14 --json >"$WORK/probe.json" &
  local probe=$!
  python3 - $probe <<'PY' &
import os, sys, time
pid = sys.argv[1]
time.sleep(1)
tid = [t for t in os.listdir(f"/proc/{pid}/task") if open(f"/proc/{pid}/task/{t}/comm").read().startswith("Tick Runner")][0]
since = None; last = None
end = time.monotonic() + 13
while time.monotonic() < end:
    try:
        st = open(f"/proc/{pid}/task/{tid}/stat").read().rsplit(")", 1)[1].split()[0]
        ex = open(f"/proc/{pid}/task/{tid}/schedstat").read().split()[0]
    except OSError:
        break
    now = time.monotonic()
    if st == "R" and ex == last:
        since = since or now
        if now - since > 0.4:
            print(f"# probe tid {tid} runnable without running for {(now - since) * 1000:.0f} ms: SysRq-D", flush=True)
            open("/proc/sysrq-trigger", "w").write("D")
            break
    else:
        since = None
    last = ex
    time.sleep(0.02)
PY
  local watch=$!
  "$TICKLOAD" -n 2 --work-ms 5 --duration-s 14 --cgroup "$CG" >"$WORK/load"
  wait $probe $hogs $niced $watch
  python3 -c "
import json; p=json.load(open('$WORK/probe.json'))['total']
print('probe', p['ticks'], 'ticks, start lateness max', round(p['lateness_max_ms']), 'stall', round(p['stall_max_ms']))"
  stop_scx INT
  if dmesg | grep -q "sched_ext_dump\|Debug dump"; then
    dmesg | grep -v "^\s*$" | head -400
    return 1
  fi
}
for i in 1 2 3 4 5 6 7 8; do round || break; done

# Probe 12 (lat8.sh with CYC=1): for each runner tick, what ran on the CPU
# the runner started on between its wake-up and its switch-in (cyclictest,
# another runner, other work), and where cyclictest's wake-ups went.
import re, sys, glob, os, bisect, statistics as st
rx = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+(\S+)\s+([\d.]+): (\w+): (.*)$")
q = lambda v, p: sorted(v)[int(p * (len(v) - 1))] if v else float("nan")
def kind(c):
    if c.startswith("Tick Runner"): return "runner"
    if c.startswith("cyclictest"): return "cyclictest"
    if c.startswith("stress-ng"): return "hog"
    if c.startswith("hackbench"): return "hackbench"
    if c.startswith("swapper"): return "idle"
    return "other"
for tf in sorted(glob.glob(f"{sys.argv[1]}/*.trace")):
    name = os.path.basename(tf)[:-6]
    sw, wakes, ins, cyc_w = {}, {}, {}, []
    for line in open(tf):
        m = rx.match(line)
        if not m: continue
        comm, cpu, ts, ev, rest = m[1], int(m[3]), int(round(float(m[5]) * 1e9)), m[6], m[7]
        if ev == "sched_switch":
            c = re.search(r"prev_comm=(.+?) prev_pid=\d+.*==> next_comm=(.+?) next_pid=(\d+)", rest)
            sw.setdefault(cpu, []).append((ts, kind(c[1]), kind(c[2])))
            if c[2].startswith("Tick Runner"): ins.setdefault(int(c[3]), []).append((ts, cpu))
        elif ev == "sched_wakeup":
            c = re.search(r"comm=(.+?) pid=(\d+).*target_cpu=(\d+)", rest)
            if c[1].startswith("Tick Runner"): wakes.setdefault(int(c[2]), []).append((ts, int(c[3])))
            elif c[1].startswith("cyclictest"): cyc_w.append((ts, cpu, int(c[3])))
    ahead, waits, before_run = {}, [], {}
    for pid, ws in wakes.items():
        il = ins.get(pid, [])
        for ts, tgt in ws:
            i = bisect.bisect_left(il, (ts, -1))
            if i >= len(il): continue
            ts_in, cpu = il[i]
            waits.append((ts_in - ts) / 1e6)
            s = sw.get(cpu, [])
            a, b = bisect.bisect_left(s, (ts, "", "")), bisect.bisect_left(s, (ts_in, "", ""))
            went = [x[2] for x in s[a:b]]
            # what the CPU was running at the wake-up
            running = s[a - 1][2] if a > 0 else "?"
            before_run[running] = before_run.get(running, 0) + 1
            key = "+".join(sorted(set(went))) or "nothing"
            ahead[key] = ahead.get(key, 0) + 1
    n = len(waits)
    print(f"{name}: {n} runner wake-ups; wake -> on CPU p50 {q(waits,.5):.2f} p90 {q(waits,.9):.2f} ms")
    print("   running at the wake-up on the CPU it ran on:", dict(sorted(before_run.items(), key=lambda x: -x[1])))
    print("   switched in there first:", dict(sorted(ahead.items(), key=lambda x: -x[1])[:8]))
    cross = sum(1 for _, c, t in cyc_w if c != t)
    print(f"   cyclictest wake-ups {len(cyc_w)}, targeted at another CPU than the waker's {cross}")

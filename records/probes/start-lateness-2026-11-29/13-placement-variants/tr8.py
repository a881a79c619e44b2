# For "timer elsewhere" ticks: where the runner slept (hrtimer_start CPU), where the timer fired,
# the wake target, and what ran on the timer CPU and on the target at the wake-up.
import re, sys, glob, os, bisect, collections
rx = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+(\S+)\s+([\d.]+): (\w+): (.*)$")
d = sys.argv[1]
def kind(c):
    if c.startswith("Tick Runner"): return "runner"
    if c.startswith("stress-ng"): return "hog"
    if c.startswith("hackbench"): return "hackbench"
    if c.startswith("cyclictest"): return "cyclictest"
    if c.startswith("swapper"): return "idle"
    return "other"
for tf in sorted(glob.glob(f"{d}/*.trace")):
    name = os.path.basename(tf)[:-6]
    starts, expire, wakes, sw = {}, {}, {}, collections.defaultdict(list)
    for line in open(tf):
        m = rx.match(line)
        if not m: continue
        comm, pid, cpu, ts, ev, rest = m[1], int(m[2]), int(m[3]), int(round(float(m[5]) * 1e9)), m[6], m[7]
        if ev == "hrtimer_start" and "hrtimer_wakeup" in rest and comm.startswith("Tick Runner"):
            a = re.search(r"hrtimer=(\S+)", rest)
            starts.setdefault(a[1], []).append((ts, cpu, pid))
        elif ev == "hrtimer_expire_entry":
            a = re.search(r"hrtimer=(\S+)", rest)
            expire.setdefault(a[1], []).append((ts, cpu))
        elif ev == "sched_wakeup":
            c = re.search(r"comm=(.+?) pid=(\d+).*target_cpu=(\d+)", rest)
            if c[1].startswith("Tick Runner"):
                wakes.setdefault(int(c[2]), []).append((ts, cpu, int(c[3])))
        elif ev == "sched_switch":
            c = re.search(r"next_comm=(.+?) next_pid=(\d+)", rest)
            sw[cpu].append((ts, kind(c[1])))
    swt = {c: [x[0] for x in v] for c, v in sw.items()}
    def on(cpu, t):
        i = bisect.bisect_right(swt.get(cpu, []), t) - 1
        return sw[cpu][i][1] if i >= 0 else "?"
    cnt = collections.Counter(); pairs = collections.Counter(); tot = 0
    for addr, st in starts.items():
        ex = expire.get(addr, [])
        for (ts, scpu, pid) in st:
            e = [x for x in ex if x[0] >= ts]
            if not e: continue
            et, ecpu = e[0]
            w = [x for x in wakes.get(pid, []) if x[0] >= et - 1000]
            if not w or w[0][0] - et > 5_000_000: continue
            wt, wcpu, tgt = w[0]
            tot += 1
            if ecpu == tgt: continue
            cnt[(("slept=timer" if scpu == ecpu else "slept!=timer"), "timercpu:" + on(ecpu, wt), "target:" + on(tgt, wt))] += 1
            pairs[(scpu, ecpu, tgt)] += 1
    print(f"{name}: {tot} wake-ups, timer elsewhere {sum(cnt.values())}")
    for k, v in cnt.most_common(8): print("   ", v, k)
    print("    (slept,timer,target):", pairs.most_common(8))

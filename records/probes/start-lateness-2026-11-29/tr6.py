# Per runner tick, from tracefs (lat8.sh): where its sleep timer fired (the
# CPU of hrtimer_expire_entry), the CPU its wake-up targeted, the CPU it ran
# on; the tick split into softexpires -> timer interrupt -> expiry handler ->
# wake-up -> on a CPU -> the tick's first instruction (ms). Classes: same CPU
# (timer, target and run all one CPU), timer elsewhere (fired on another CPU
# than the target), ran off target (queued on one CPU, ran on another).
import re, sys, glob, os, bisect, json, statistics as st
rx = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+(\S+)\s+([\d.]+): (\w+): (.*)$")
q = lambda v, p: sorted(v)[int(p * (len(v) - 1))] if v else float("nan")
d = sys.argv[1]
summary = {}
for tf in sorted(glob.glob(f"{d}/*.trace")):
    name = os.path.basename(tf)[:-6]
    starts, expire, irq, wakes, ins, pid_of = {}, {}, {}, {}, {}, {}
    for line in open(tf):
        m = rx.match(line)
        if not m: continue
        comm, pid, cpu, ts, ev, rest = m[1], int(m[2]), int(m[3]), int(round(float(m[5]) * 1e9)), m[6], m[7]
        if ev == "hrtimer_start" and "hrtimer_wakeup" in rest and comm.startswith("Tick Runner"):
            a, b = re.search(r"hrtimer=(\S+)", rest), re.search(r"softexpires=(\d+)", rest)
            starts.setdefault(pid, []).append((ts, a[1], int(b[1])))
        elif ev == "hrtimer_expire_entry":
            a, b = re.search(r"hrtimer=(\S+)", rest), re.search(r"now=(\d+)", rest)
            expire.setdefault(a[1], []).append((int(b[1]), cpu))
        elif ev == "local_timer_entry":
            irq.setdefault(cpu, []).append(ts)
        elif ev == "sched_wakeup":
            c = re.search(r"comm=(.+?) pid=(\d+).*target_cpu=(\d+)", rest)
            if c[1].startswith("Tick Runner"):
                pid_of[c[1]] = int(c[2]); wakes.setdefault(int(c[2]), []).append((ts, cpu, int(c[3])))
        elif ev == "sched_switch":
            c = re.search(r"next_comm=(.+?) next_pid=(\d+)", rest)
            if c[1].startswith("Tick Runner"):
                ins.setdefault(int(c[2]), []).append((ts, cpu))
    rows, lat = [], []
    for line in open(f"{d}/{name}.ticks"):
        nm, due, beg, end = line.rstrip("\n").split("\t"); due, beg = int(due), int(beg)
        lat.append((beg - due) / 1e6)
        pid = pid_of.get(nm[:15]) or pid_of.get(nm)
        s = [x for x in starts.get(pid, []) if abs(x[2] - due) < 200_000]
        if not s: continue
        _, addr, soft = s[-1]
        e = [x for x in expire.get(addr, []) if soft <= x[0] <= beg + 1]
        if not e: continue
        n, ecpu = e[0]
        il = irq.get(ecpu, [])
        i = bisect.bisect_right(il, n) - 1
        I = il[i] if i >= 0 and il[i] >= soft - 1000 else n
        w = [x for x in wakes.get(pid, []) if n - 1000 <= x[0] <= beg]
        c = [x for x in ins.get(pid, []) if w and w[0][0] <= x[0] <= beg]
        if not w or not c: continue
        tgt, ran = w[0][2], c[0][1]
        cls = "same CPU" if ecpu == tgt == ran else ("ran off target" if tgt != ran else "timer elsewhere")
        rows.append((cls, (I - soft) / 1e6, (n - I) / 1e6, (w[0][0] - n) / 1e6, (c[0][0] - w[0][0]) / 1e6, (beg - c[0][0]) / 1e6, (beg - due) / 1e6))
    kind = name.rsplit("-", 1)[0]
    summary.setdefault(kind, []).append((q(lat, .5), q(lat, .99), len(rows), {k: sum(1 for r in rows if r[0] == k) for k in ("same CPU", "timer elsewhere", "ran off target")}))
    print(f"{name}: tick start lateness (workload) p50 {q(lat,.5):.2f} p99 {q(lat,.99):.2f} ms; traced {len(rows)} ticks")
    for k in ("same CPU", "timer elsewhere", "ran off target"):
        sub = [r for r in rows if r[0] == k]
        if not sub: continue
        print(f"   {k:15s} n {len(sub):3d}: " + "; ".join(f"{cn} p50 {q([r[i+1] for r in sub],.5):.2f} mean {st.mean(r[i+1] for r in sub):.2f}" for i, cn in enumerate(["soft->irq", "irq->exp", "exp->wake", "wake->CPU", "CPU->beg", "due->beg"])))
print()
for kind, v in summary.items():
    print(f"{kind}: p50 {[round(x[0],2) for x in v]} p99 {[round(x[1],2) for x in v]} classes {[x[3] for x in v]}")

import re, sys, glob, os, statistics as st, bisect
d = sys.argv[1]
rx = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (sched_\w+): (.*)$")
for tf in sorted(glob.glob(f"{d}/*.trace")):
    name = os.path.basename(tf)[:-6]
    wakes, ins, outs, pid_of = {}, {}, {}, {}
    for line in open(tf):
        m = rx.match(line)
        if not m: continue
        cpu, ts, ev, rest = int(m[3]), int(round(float(m[4]) * 1e9)), m[5], m[6]
        if ev == "sched_wakeup":
            c = re.search(r"comm=(.+?) pid=(\d+).*target_cpu=(\d+)", rest)
            pid_of[c[1]] = int(c[2]); wakes.setdefault(int(c[2]), []).append((ts, cpu, int(c[3])))
        elif ev == "sched_switch":
            c = re.search(r"prev_comm=(.+?) prev_pid=(\d+) .*prev_state=(\S+) ==> next_comm=(.+?) next_pid=(\d+)", rest)
            outs.setdefault(int(c[2]), []).append((ts, c[3]))
            ins.setdefault(int(c[5]), []).append((ts, cpu))
    a, b, c, pre, remote = [], [], [], 0, 0
    n = 0
    for line in open(f"{d}/{name}.ticks"):
        nm, due, beg, end = line.rstrip("\n").split("\t"); due, beg = int(due), int(beg)
        pid = pid_of.get(nm[:15]) or pid_of.get(nm)
        if pid is None: continue
        w = [x for x in wakes.get(pid, []) if due - 1_000_000 <= x[0] <= beg]
        if not w: continue
        wt, wcpu, tcpu = w[0]
        si = [x for x in ins.get(pid, []) if wt <= x[0] <= beg]
        if not si: continue
        n += 1
        a.append((wt - due) / 1e6); b.append((si[0][0] - wt) / 1e6); c.append((beg - si[0][0]) / 1e6)
        remote += wcpu != tcpu
        pre += sum(1 for x in outs.get(pid, []) if si[0][0] < x[0] < beg and x[1].startswith("R"))
    q = lambda v, p: sorted(v)[int(p * (len(v) - 1))] if v else float("nan")
    print(f"{name}: ticks {n}; due->wakeup p50 {q(a,.5):.2f} p75 {q(a,.75):.2f}; wakeup->on CPU p50 {q(b,.5):.2f} p75 {q(b,.75):.2f}; on CPU->begin p50 {q(c,.5):.2f} p75 {q(c,.75):.2f} ms; wakes from another CPU {remote}; preempted before begin {pre}")
    tot = [x + y + z for x, y, z in zip(a, b, c)]
    late = [(x, y, z) for x, y, z in zip(a, b, c) if x + y + z > 2]
    print(f"   total p50 {q(tot,.5):.2f}; mean due->wakeup {st.mean(a):.2f} wakeup->CPU {st.mean(b):.2f} CPU->begin {st.mean(c):.2f}; "
          f"of {len(late)} ticks > 2 ms: mean {st.mean(x for x,_,_ in late):.2f} / {st.mean(y for _,y,_ in late):.2f} / {st.mean(z for _,_,z in late):.2f}")

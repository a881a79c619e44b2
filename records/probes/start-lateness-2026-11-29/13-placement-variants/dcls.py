# Probe 13: each runner tick's lateness by the decision its wake-up took in
# ops.select_cpu (the debug build's bpf_printk "D code pid home cpu" lines,
# codes below), and "W" lines: why no CPU was free to preempt (per CPU 0-3:
# 0 free, 4 runs a runner, 7 a task waits in its local queue, ...).
# 1/2 where it slept (idle / preempt), 3/4 free home (idle / preempt),
# 5 home free but its local queue busy, 6 home idle a moment, 7 idle CPU
# elsewhere, 8 overrun work at home yields, 9 not late: queued at home,
# 10 late, nothing to preempt: queued at home, 11 late: preempts other work.
# "self": the CPU it was placed on is the one its timer fired on; "ipi": another.
import re, sys, collections
d = sys.argv[1]
names, D = {}, collections.defaultdict(list)
W = collections.Counter()
for line in open(f"{d}/dbg-1.trace"):
    m = re.search(r"next_comm=(.+?) next_pid=(\d+)", line)
    if m: names[int(m[2])] = m[1]
    m = re.search(r"\[(\d+)\].*\s([\d.]+): bpf_trace_printk: D (\d+) (\d+) (-?\d+) (-?\d+)", line)
    if m and int(m[3]) < 20:
        D[int(m[4])].append((int(float(m[2]) * 1e9), int(m[3]), int(m[1]), int(m[5]), int(m[6])))
    m = re.search(r"bpf_trace_printk: W (\d+) (\d+) (\d+)", line)
    if m: W[m[3].zfill(4)] += 1
pid_of = {v[:15]: k for k, v in names.items()}
by = collections.defaultdict(list)
for line in open(f"{d}/dbg-1.ticks"):
    nm, due, beg, end = line.split("\t"); due, beg = int(due), int(beg)
    pid = pid_of.get(nm[:15])
    if pid is None: continue
    ev = [x for x in D[pid] if due - 2_000_000 <= x[0] <= beg]
    code = ev[0][1] if ev else -1
    how = ("self" if ev[0][2] == ev[0][4] else "ipi") if ev and code in (2, 4) else ""
    by[(code, how)].append((beg - due) / 1e6)
allv = sorted(v for l in by.values() for v in l)
print(f"all ticks: {len(allv)}, start lateness p50 {allv[len(allv)//2]:.2f} ms")
for k, v in sorted(by.items()):
    v.sort(); print(f"code {k[0]:3d} {k[1]:4s} n {len(v):3d}: p50 {v[len(v)//2]:.2f} p75 {v[int(len(v)*.75)]:.2f} mean {sum(v)/len(v):.2f} ms")
print("no CPU to preempt (code 10), per CPU 0-3:", dict(W.most_common()))

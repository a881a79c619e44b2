# For each tick of the well-behaved server (its ticks log): the wait from
# its wake-up to its CPU, and the time it sat runnable off a CPU inside its
# tick, each split by what ran on that CPU meanwhile (lag runner, another
# good runner, hog, other).
import re, sys, collections
w, blocks = sys.argv[1], sys.argv[2]
good = set(int(x) for x in open(f"{w}/good-{blocks}.tids").read().split())
bad = set(int(x) for x in open(f"{w}/bad-{blocks}.tids").read().split())
rx = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (sched_\w+): (.*)$")
def kind(pid, comm):
    if pid in good: return "good"
    if pid in bad: return "lag"
    if comm.startswith("stress-ng"): return "hog"
    if pid == 0: return "idle"
    return "other:" + comm
# per CPU: list of (ts, pid, kind) switched in
ins = collections.defaultdict(list)
wakes = collections.defaultdict(list)   # pid -> [(ts, waker cpu, target cpu)]
switch_in = collections.defaultdict(list)  # pid -> [(ts, cpu)]
switch_out = collections.defaultdict(list) # pid -> [(ts, cpu, state)]
for line in open(f"{w}/b{blocks}.trace"):
    m = rx.match(line)
    if not m: continue
    cpu, ts, ev, rest = int(m[3]), int(round(float(m[4]) * 1e9)), m[5], m[6]
    if ev == "sched_wakeup":
        c = re.search(r"comm=(.+?) pid=(\d+).*target_cpu=(\d+)", rest)
        wakes[int(c[2])].append((ts, cpu, int(c[3])))
    elif ev == "sched_switch":
        c = re.search(r"prev_comm=(.+?) prev_pid=(\d+) .*prev_state=(\S+) ==> next_comm=(.+?) next_pid=(\d+)", rest)
        p, n = int(c[2]), int(c[5])
        switch_out[p].append((ts, cpu, c[3]))
        switch_in[n].append((ts, cpu))
        ins[cpu].append((ts, n, kind(n, c[4])))
import bisect
starts = {c: [x[0] for x in v] for c, v in ins.items()}
def running(cpu, a, b):
    """time per kind running on cpu in [a, b]"""
    out = collections.Counter()
    v, s = ins[cpu], starts[cpu]
    i = max(0, bisect.bisect_right(s, a) - 1)
    while i < len(v) and v[i][0] < b:
        t0 = max(a, v[i][0]); t1 = min(b, v[i + 1][0] if i + 1 < len(v) else b)
        if t1 > t0: out[v[i][2]] += t1 - t0
        i += 1
    return out
names = {}
for pid in good:
    try: names[open(f"/proc/{pid}/comm").read().strip()] = pid
    except OSError: pass
wait_by = collections.Counter(); inside_by = collections.Counter()
waits, insides, n, remote = [], [], 0, 0
for line in open(f"{w}/good-{blocks}.ticks"):
    nm, due, beg, end = line.rstrip("\n").split("\t"); due, beg, end = int(due), int(beg), int(end)
    # the runner's tid: tickload names threads "Tick Runner #K"; match by the switch-ins inside [beg, end]
    cands = [p for p in good if any(beg - 2_000_000 <= t <= beg for t, _ in switch_in[p])]
    pid = None
    for p in cands:
        ws = [x for x in wakes[p] if due - 1_000_000 <= x[0] <= beg]
        if ws: pid = p; break
    if pid is None: continue
    wt, wcpu, tcpu = [x for x in wakes[pid] if due - 1_000_000 <= x[0] <= beg][0]
    si = [x for x in switch_in[pid] if wt <= x[0] <= beg]
    if not si: continue
    n += 1; remote += wcpu != tcpu
    waits.append((si[0][0] - wt) / 1e6)
    wait_by.update(running(tcpu, wt, si[0][0]))
    # inside the tick: each stint off CPU while runnable (state R/R+)
    outs = [x for x in switch_out[pid] if beg <= x[0] <= end]
    off = 0
    for t, c, st in outs:
        if not st.startswith("R"): continue
        back = [x for x in switch_in[pid] if x[0] > t]
        if not back: continue
        inside_by.update(running(c, t, min(back[0][0], end))); off += min(back[0][0], end) - t
    insides.append(off / 1e6)
q = lambda v, p: sorted(v)[int(p * (len(v) - 1))] if v else float("nan")
fmt = lambda c: ", ".join(f"{k} {v/1e6:.0f}" for k, v in c.most_common(6))
print(f"# blocks {blocks}: {n} good ticks; wake->CPU p50 {q(waits,.5):.2f} p90 {q(waits,.9):.2f} ms (woken from another CPU {remote}); "
      f"runnable off CPU inside a tick p50 {q(insides,.5):.2f} p90 {q(insides,.9):.2f} ms")
print(f"#   while waiting for a CPU, its target CPU ran (ms total): {fmt(wait_by)}")
print(f"#   while preempted inside its tick, that CPU ran (ms total): {fmt(inside_by)}")

#!/usr/bin/env python3
"""Where the CPU time goes in each cell of bench-real-cpu.sh: out.txt (the
guest's stdout: the cells' JSON records, then the snapshots' tar) ->
per cell the CPUs busy in user / system / idle, the servers', the hogs'
and the scheduler's CPUs, the BPF programs' CPUs (and per call)."""
import base64, io, json, sys, tarfile
from collections import defaultdict

HZ = 100
text = open(sys.argv[1]).read()
recs = {(r["scheduler"], r["round"]): r for r in (json.loads(l) for l in text.splitlines() if l.startswith("{"))}
blob = text.split("=== tar\n", 1)[1].strip()
tar = tarfile.open(fileobj=io.BytesIO(base64.b64decode(blob)))
files = {m.name.split("/", 1)[1]: tar.extractfile(m).read().decode() for m in tar.getmembers() if m.isfile()}


def parse(txt):
    cpus, server, sched = {}, [0, 0], None
    for l in txt.splitlines():
        f = l.split()
        if f[0].startswith("cpu"):
            cpus[f[0]] = list(map(int, f[1:]))
        elif f[0] == "server" and len(f) == 3:
            server = [server[0] + int(f[1]), server[1] + int(f[2])]
        elif f[0] == "sched" and len(f) == 3:
            sched = int(f[1]) + int(f[2])
    return cpus, sum(server), sched


def bpf(name):
    try:
        progs = json.loads(files[name])
    except KeyError:
        return {}
    return {p["name"]: (p.get("run_time_ns", 0), p.get("run_cnt", 0)) for p in progs if p["name"].startswith("tick_")}


cells = sorted({n.rsplit("-", 1)[0] for n in files if n.endswith(".txt")}, key=lambda c: (int(c.rsplit("-", 1)[1]), c))
agg = defaultdict(list)
for c in cells:
    s, rnd = c.rsplit("-", 1)
    c0, sv0, sc0 = parse(files[f"{c}-0.txt"])
    c1, sv1, sc1 = parse(files[f"{c}-1.txt"])
    d = {k: [b - a for a, b in zip(c0[k], c1[k])] for k in c0}
    ncpu = len(d) - 1
    secs = sum(d["cpu"]) / HZ / ncpu
    tot = d["cpu"]
    user, system, idle = (tot[0] + tot[1]) / HZ / secs, (tot[2] + tot[5] + tot[6]) / HZ / secs, (tot[3] + tot[4]) / HZ / secs
    steal = tot[7] / HZ / secs if len(tot) > 7 else 0
    per_idle = " ".join(f"{(d[f'cpu{i}'][3] + d[f'cpu{i}'][4]) / HZ / secs:.2f}" for i in range(ncpu))
    servers = (sv1 - sv0) / HZ / secs
    sched = (sc1 - sc0) / HZ / secs if sc0 is not None and sc1 is not None else 0
    b0, b1 = bpf(f"{c}-0.bpf.json"), bpf(f"{c}-1.bpf.json")
    bcpu, parts = 0.0, []
    for n in sorted(b1):
        t = b1[n][0] - b0.get(n, (0, 0))[0]
        k = b1[n][1] - b0.get(n, (0, 0))[1]
        bcpu += t / 1e9 / secs
        if k:
            parts.append((t, f"{n[5:]} {k / secs:.0f}/s x {t / max(1, k) / 1000:.0f} us"))
    r = recs.get((s, int(rnd)), {})
    hogs = r.get("hog_cpus", 0)
    line = (f"{s:9} r{rnd} late {r.get('late_pct', 0):5.1f} % | busy user {user:.2f} sys {system:.2f} idle {idle:.2f} steal {steal:.2f}"
            f" (idle per CPU {per_idle}) | servers {servers:.2f} hogs {hogs:.2f} sched {sched:.2f} bpf {bcpu:.2f} CPUs")
    print(line)
    if parts:
        print("          bpf: " + "; ".join(p for _, p in sorted(parts, reverse=True)[:6]))
    for k, v in (("user", user), ("sys", system), ("idle", idle), ("servers", servers), ("hogs", hogs), ("bpf", bcpu), ("sched", sched)):
        agg[(s, k)].append(v)
print()
for s in dict.fromkeys(c.rsplit("-", 1)[0] for c in cells):
    med = lambda k: sorted(agg[(s, k)])[len(agg[(s, k)]) // 2]
    print(f"{s:9} medians: user {med('user'):.2f} sys {med('sys'):.2f} idle {med('idle'):.2f} servers {med('servers'):.2f} hogs {med('hogs'):.2f} bpf {med('bpf'):.2f} sched {med('sched'):.2f} CPUs")

import sys, collections, re
lines = open(sys.argv[1]).read().splitlines()
servers = {}; ticks = collections.defaultdict(list); misses=[]; ev=collections.defaultdict(list)
for l in lines:
    f = l.split()
    if not f: continue
    if f[0] == 'SERVER': servers[f[1]] = int(f[2])
    elif f[0] == 'TICK': ticks[f[1]].append(int(f[2]) * 1000)
    elif f[0] == 'EV': ev[int(f[2])].append(int(f[3]))
    elif f[0] == 'MISS':
        m = re.search(r'\[(\d+)\].*deadline (\d+) at (\d+)', l)
        if m: misses.append((int(m.group(1)), int(m.group(3))))
allev=[t for v in ev.values() for t in v]; t0, t1 = min(allev), max(allev)
tot=collections.Counter()
for name, tid in servers.items():
    ts = [t for t in ticks[name] if t0 <= t <= t1]
    ms_ = sorted(m[1] for m in misses if m[0]==tid)
    used=set()
    for p,t in zip(ts,ts[1:]):
        g=(t-p)/1e6
        if g<=45: continue
        near=[m for m in ms_ if p-20e6 <= m <= t+30e6]
        used.update(near)
        band = 'over60' if g>60 else '45-60'
        tot[(band, bool(near))]+=1
    tot[('misses', 'unmatched')]+=len([m for m in ms_ if m not in used])
    tot[('misses','all')]+=len(ms_)
print(dict(tot))

import sys, collections, re, bisect
lines = open(sys.argv[1]).read().splitlines()
servers = {}; ticks = collections.defaultdict(list); misses=[]
for l in lines:
    f = l.split()
    if not f: continue
    if f[0] == 'SERVER': servers[int(f[2])] = f[1]
    elif f[0] == 'TICK': ticks[f[1]].append(int(f[2]) * 1000)
    elif f[0] == 'MISS':
        m = re.search(r'\[(\d+)\].*deadline (\d+) at (\d+) \(\+(\d+) us', l)
        if m: misses.append((int(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(4))))
cls = collections.Counter(); over=collections.Counter()
span = [l.split() for l in lines if l.startswith('SPAN')]
# the measured window (ratio2.sh's SPAN line), else the logs' overlap
lo, hi = (int(span[0][1]), int(span[0][2])) if span else (max(min(t) for t in ticks.values()), min(max(t) for t in ticks.values()))
allgaps = collections.Counter()
for name, ts in ticks.items():
    for p,t in zip(ts,ts[1:]):
        if lo<=p and t<=hi:
            g=(t-p)/1e6
            allgaps['>60' if g>60 else '45-60' if g>45 else '<45']+=1
inwin=0
for tid, dl, at, ov in misses:
    name = servers.get(tid)
    if name is None: cls['not a server tid']+=1; continue
    if not (lo <= at <= hi): continue
    inwin+=1
    ts = ticks[name]
    i = bisect.bisect_left(ts, at - 120e6); j = bisect.bisect_right(ts, at + 80e6)
    seg = ts[max(i-1,0):j+1]
    g = max(((t-p)/1e6 for p,t in zip(seg, seg[1:])), default=0)
    c = '>60' if g>60 else '45-60' if g>45 else '<45'
    cls[c]+=1
    over[(c, 'ov<15' if ov<15000 else 'ov>=15')]+=1
print("gaps in window", dict(allgaps)); print("misses in window", inwin, dict(cls)); print(dict(over))

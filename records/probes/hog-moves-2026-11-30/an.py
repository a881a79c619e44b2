"""Per cell of moves.sh: misses, the hogs' bogo-ops/s, their migrations and
switches per second over the window, and each tick_* BPF program's calls
and mean cost (with its share of the machine)."""
import glob, json, os, re, sys

d = sys.argv[1]
def hogs(f):
    v = {}
    for line in open(f):
        pid, key, n = line.split()
        v[(pid, key)] = float(n)
    return v
for cell in sorted(os.path.basename(f)[:-5] for f in glob.glob(d + '/*.json') if f.count('.') == 1):
    j = json.load(open(f'{d}/{cell}.json'))
    tot = j.get('total', j)
    secs = 8.0
    a, b = hogs(f'{d}/{cell}.hogs0'), hogs(f'{d}/{cell}.hogs1')
    mig = sum(b[k] - a[k] for k in b if k in a and 'migr' in k[1]) / secs
    sw = sum(b[k] - a[k] for k in b if k in a and 'switch' in k[1]) / secs
    m = re.search(r'cpu\s+(\d+)\s+\S+\s+\S+\s+\S+\s+(\S+)', open(f'{d}/{cell}.stress').read().split('bogo ops')[-1])
    ops = []
    try:
        be = {p['id']: p for p in json.load(open(f'{d}/{cell}.before.json'))}
        for p in json.load(open(f'{d}/{cell}.after.json')):
            n = str(p.get('name', ''))
            if p['id'] in be and n.startswith('tick_'):
                ns = p.get('run_time_ns', 0) - be[p['id']].get('run_time_ns', 0)
                cnt = p.get('run_cnt', 0) - be[p['id']].get('run_cnt', 0)
                if cnt:
                    ops.append(f"{n[5:]} {cnt / secs:.0f}/s x {ns / cnt / 1000:.0f}us ({100 * ns / secs / 4e9:.1f}%)")
    except Exception as e:
        ops.append(str(e))
    print(f"{cell:8s} miss {tot['miss_pct']:5.2f} hogs {m.group(2) if m else '?':>7s}/s moves {mig:6.1f}/s switches {sw:6.1f}/s | " + ', '.join(ops))

"""Per cell: each CPU's idle / user+nice / system+irq+softirq share of
tickload's window (/proc/stat), the hogs' bogo-ops/s, misses, and the
BPF programs' CPU time as a share of the machine."""
import json, glob, os, re, sys

d = sys.argv[1]
def stat(f):
    rows = {}
    for line in open(f):
        k, *v = line.split()
        rows[k] = list(map(int, v))
    return rows
for cell in sorted(os.path.basename(f)[:-6] for f in glob.glob(d + '/*.stat0')):
    a, b = stat(f'{d}/{cell}.stat0'), stat(f'{d}/{cell}.stat1')
    parts = []
    for k in sorted(a):
        if k == 'cpu':
            continue
        dv = [y - x for x, y in zip(a[k], b[k])]
        tot = sum(dv[:8]) or 1
        user, nice, sys_, idle, iow, irq, sirq, steal = dv[:8]
        parts.append(f"{k[3:]}: idle {100*(idle+iow)/tot:4.1f} sys {100*(sys_+irq+sirq)/tot:4.1f}")
    j = json.load(open(f'{d}/{cell}.json'))
    m = re.search(r'cpu\s+(\d+)\s+\S+\s+\S+\s+\S+\s+(\S+)', open(f'{d}/{cell}.stress').read().split('bogo ops')[-1])
    bpf = ''
    try:
        be = {p['id']: p for p in json.load(open(f'{d}/{cell}.before.json'))}
        af = json.load(open(f'{d}/{cell}.after.json'))
        ns = sum(p.get('run_time_ns', 0) - be[p['id']].get('run_time_ns', 0)
                 for p in af if p['id'] in be and str(p.get('name', '')).startswith('tick_'))
        wall = sum(a['cpu'][:8]) and (sum(b['cpu'][:8]) - sum(a['cpu'][:8])) / 100 * 1e9
        bpf = f" bpf {100*ns/wall:4.1f}% of machine"
    except Exception:
        pass
    print(f"{cell:8s} miss {j.get('total', j)['miss_pct']:5.2f} hogs {m.group(2) if m else '?':>7s}/s{bpf} | " + ' | '.join(parts))

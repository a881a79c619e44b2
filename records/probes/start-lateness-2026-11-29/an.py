import json, glob, os, re, statistics, sys
d = sys.argv[1] if len(sys.argv) > 1 else "/work/main/results/p27/out"
rows = {}
for f in sorted(glob.glob(f"{d}/*.json")):
    name = os.path.basename(f)[:-5]
    kind, r = name.rsplit("-", 1)
    j = json.load(open(f))
    lat = []
    per = {}
    for line in open(f"{d}/{name}.ticks"):
        n, due, b, e = line.split("\t")
        l = (int(b) - int(due)) / 1e6
        lat.append(l); per.setdefault(n, []).append(l)
    lat.sort()
    cyc = open(f"{d}/{name}.cyc").read() if os.path.exists(f"{d}/{name}.cyc") else ""
    m = re.search(r"Avg:\s*(\d+).*Max:\s*(\d+)", cyc)
    st = open(f"{d}/{name}.stress").read()
    b = re.search(r"cpu\s+\d+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+([\d.]+)", st)
    cpus = {}
    for ru in j["runners"]:
        for c, k in ru["cpus"].items(): cpus[c] = cpus.get(c, 0) + k
    rows.setdefault(kind, []).append((j["misses"] * 100 / max(1, j["ticks"]), lat[len(lat)//2], lat[len(lat)//4], lat[3*len(lat)//4],
        [round(statistics.median(v), 2) for k, v in sorted(per.items())], m and (int(m[1]), int(m[2])), b and float(b[1]), cpus))
for k, v in rows.items():
    print(k)
    for x in v:
        print("   miss %.2f p50 %.2f p25 %.2f p75 %.2f per-runner p50 %s cyc avg/max us %s hogs %s cpus %s" % x)

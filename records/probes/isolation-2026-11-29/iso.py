# p50 start lateness and misses of the well-behaved server, alone and beside, per build and round
import json, sys, glob, os, statistics as st
d = sys.argv[1]
rows = {}
for f in sorted(glob.glob(f"{d}/*.json")):
    n = os.path.basename(f)[:-5]
    if n.endswith(".bad"): continue
    v, kind, r = n.rsplit("-", 2)
    j = json.load(open(f))
    rows.setdefault((v, kind), []).append((j["lateness_quantiles_ms"]["50"] if isinstance(j.get("lateness_quantiles_ms"), dict) and "50" in j["lateness_quantiles_ms"] else st.median(x["lateness_p50_ms"] for x in j["runners"]), j["miss_pct"]))
for v in sorted(set(k[0] for k in rows)):
    a, b = rows.get((v, "alone"), []), rows.get((v, "beside"), [])
    ma, mb = st.median(x[0] for x in a), st.median(x[0] for x in b)
    print(f"{v}: p50 alone {' / '.join(f'{x[0]:.2f}' for x in a)} beside {' / '.join(f'{x[0]:.2f}' for x in b)} (medians {ma:.2f} / {mb:.2f}: {mb / ma:.2f} x); missed alone {' / '.join(f'{x[1]:.2f}' for x in a)} beside {' / '.join(f'{x[1]:.2f}' for x in b)}")

"""One line per cell: miss %, median of the runners' p50 and p99 start lateness."""
import glob, json, os, statistics as st, sys
d = sys.argv[1]
for f in sorted(glob.glob(d + '/*.json')):
    j = json.load(open(f))
    p50 = st.median(r['lateness_p50_ms'] for r in j['runners'])
    p99 = st.median(r['lateness_p99_ms'] for r in j['runners'])
    print(f"{os.path.basename(f)[:-5]:16s} miss {j['miss_pct']:5.2f} p50 {p50:5.2f} p99 {p99:6.2f}")

import json,sys,glob,statistics as st,os
d=sys.argv[1]
cells=sorted(set(os.path.basename(f)[:-5] for f in glob.glob(d+'/*.json') if '.before' not in f and '.after' not in f))
for cell in cells:
    j=json.load(open(f'{d}/{cell}.json'))
    p50=[r.get('lateness_p50_ms') for r in j['runners']]
    p99=[r.get('lateness_p99_ms') for r in j['runners']]
    line=f"{cell:10s} miss {j.get('miss_pct'):5.2f} p50 {st.median(p50):5.2f} (max {max(p50):5.2f}) p99 {st.median(p99):6.2f}"
    try:
        b={p['id']:p for p in json.load(open(f'{d}/{cell}.before.json'))}
        a={p['id']:p for p in json.load(open(f'{d}/{cell}.after.json'))}
        for i,p in a.items():
            n=p.get('name')
            if n in ('tick_dispatch','tick_enqueue','tick_select_cpu') and i in b:
                c=p['run_cnt']-b[i]['run_cnt']; t=p['run_time_ns']-b[i]['run_time_ns']
                line+=f" {n[5:]} {c}x{t/max(c,1)/1000:.0f}us"
    except Exception as e: pass
    try:
        s=open(f'{d}/{cell}.stress').read()
        import re
        m=re.search(r'cpu\s+(\d+)\s',s.split('bogo ops')[-1])
        line+=f" hogs {m.group(1)}" if m else ''
    except Exception: pass
    print(line)

source /work/main/tests/lib.sh
CG=$(make_cgroup tick)
for r in 1 2 3; do for v in main new; do
SCX=/work/main/results/p27/scx_tick.$v start_scx --tick-cgroup tick
"$TICKLOAD" -n 6 --period-ms 50 --work-ms 20 --seed 1 --duration-s 8 --cgroup "$CG" --json >/tmp/hi.json
stop_scx INT
read_totals
python3 -c "
import json; j=json.load(open('/tmp/hi.json')); rs=j['runners']
print('$v', 'r$r', 'miss', j['miss_pct'], 'p50', j.get('lateness_p50_ms', sorted(r['lateness_p50_ms'] for r in rs)[len(rs)//2]), 'steals', $tot_dispatch_stolen, 'changes', sum(r['cpu_changes'] for r in rs) if 'cpu_changes' in rs[0] else '-')"
done; done

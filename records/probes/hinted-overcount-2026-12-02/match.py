"""Match scx_tick's miss lines to the workload's ticks (see probe.sh)."""
import json, re, sys
ticks_log, misses, own = sys.argv[1:4]
own = json.load(open(own))
deadline = int(own["config"]["deadline_ms"] * 1e6)
ticks = {}  # (runner, deadline) -> (due, begin, end)
for line in open(ticks_log):
    name, due, begin, end = line.split("\t")
    ticks[(name, int(due) + deadline)] = (int(due), int(begin), int(end))
names = sorted({k[0] for k in ticks})
late = {k for k, (d, b, e) in ticks.items() if e > k[1]}
seen, rows = set(), []
for line in open(misses):
    m = re.search(r"miss: (.+?)\[(\d+)\] group \S+ cpu \d+ deadline (\d+) at (\d+)", line)
    if not m:
        continue
    comm, dl, at = m.group(1), int(m.group(3)), int(m.group(4))
    key = (comm, dl)
    if key not in ticks:
        rows.append(f"miss of {comm} deadline {dl}: no tick of the workload has it (at +{(at - dl) / 1e6:.1f} ms)")
        continue
    seen.add(key)
    due, begin, end = ticks[key]
    if end > dl:
        continue
    nxt = ticks.get((comm, dl + int(own["config"]["period_ms"] * 1e6)))
    after = (f"; the next tick (due at that deadline) began {(nxt[1] - dl) / 1e6:.1f} ms after it"
             if nxt else "; no next tick")
    rows.append(f"FALSE miss of {comm}: its tick began {(begin - due) / 1e6:.1f} ms late, "
                f"ended {(dl - end) / 1e6:.1f} ms before its deadline, counted {(at - dl) / 1e6:.1f} ms after it"
                + after)
print(f"workload {len(late)} late of {len(ticks)} ticks ({own['skipped']} skipped); scx_tick reported "
      f"{len(seen) + sum(1 for r in rows if r.startswith('miss of'))} misses: "
      f"{len(seen & late)} of late ticks, {sum(1 for r in rows if r.startswith('FALSE'))} false, "
      f"{sum(1 for r in rows if r.startswith('miss of'))} unmatched; late ticks not counted {len(late - seen)}")
print("runners: " + " ".join(names))
for r in rows:
    print(r)
# the late ticks no miss names: when they ran, and the runner's misses near them
by_runner = {}
for line in open(misses):
    m = re.search(r"miss: (.+?)\[(\d+)\] group \S+ cpu \d+ deadline (\d+) at (\d+)", line)
    if m:
        by_runner.setdefault(m.group(1), []).append((int(m.group(3)), int(m.group(4))))
period = int(own["config"]["period_ms"] * 1e6)
for key in sorted(late - seen, key=lambda k: k[1]):
    name, dl = key
    due, begin, end = ticks[key]
    prev = ticks.get((name, dl - period))
    near = [f"deadline {(d - dl) / 1e6:+.1f} at {(a - dl) / 1e6:+.1f}" for d, a in by_runner.get(name, [])
            if abs(d - dl) < 3 * period]
    print(f"UNCOUNTED late tick of {name}: began {(begin - due) / 1e6:.1f} ms after due, ended "
          f"{(end - dl) / 1e6:.1f} ms past its deadline; the tick before "
          + (f"ended {(prev[2] - due) / 1e6:+.1f} ms from this one's due" if prev else "skipped or none")
          + f"; its misses nearby (ms from this deadline): {', '.join(near) or 'none'}")

"""The late waiting ticks behind a spike, against the trace (probe.sh)."""
import re, sys
lead_f, wait_f, trace_f, wtid, ltid = sys.argv[1:6]
rows = lambda f: [tuple(int(x) for x in l.split('\t')[1:4]) for l in open(f) if l.strip()]
spikes = [(d, b, e) for d, b, e in rows(lead_f) if e - b > 10_000_000]
ev = []  # (ns, kind, tid, cpu)
for line in open(trace_f):
    m = re.search(r"\[(\d+)\]\s+\S+\s+(\d+)\.(\d+): (sched_wakeup|sched_switch): (.*)", line)
    if not m:
        continue
    cpu, ns = int(m.group(1)), int(m.group(2)) * 1_000_000_000 + int(m.group(3).ljust(9, "0")[:9])
    rest = m.group(5)
    if m.group(4) == "sched_wakeup":
        tid = re.search(r"pid=(\d+)", rest).group(1)
        tgt = re.search(r"target_cpu=(\d+)", rest)
        ev.append((ns, "wake", tid, int(tgt.group(1)) if tgt else cpu))
    else:
        tid = re.search(r"next_pid=(\d+)", rest).group(1)
        ev.append((ns, "run", tid, cpu))
ev.sort()
over = late = 0
for due, begin, _ in rows(wait_f):
    sp = [s for s in spikes if s[0] <= due and s[1] <= begin and s[2] - due > 10_000_000]
    if not sp:
        continue
    over += 1
    if begin - due <= 10_000_000:
        continue
    late += 1
    d, b, e = sp[0]
    w = next((x for x in ev if x[2] == wtid and x[1] == "wake" and x[0] >= due - 2_000_000), None)
    r = next((x for x in ev if x[2] == wtid and x[1] == "run" and w and x[0] >= w[0]), None)
    lw = next((x for x in ev if x[2] == ltid and x[1] == "wake" and x[0] >= d - 2_000_000), None)
    ms = lambda t: f"{(t - due) / 1e6:+.1f}" if t else "?"
    print(f"late waiting tick: began {ms(begin)} ms from due; its wake-up {ms(w and w[0])} (target CPU {w and w[3]}), "
          f"first run {ms(r and r[0])} on CPU {r and r[3]}; the lead's tick: due {ms(d)}, woke {ms(lw and lw[0])}, "
          f"began {ms(b)}, ended {ms(e)}")
print(f"{len(spikes)} spikes, {over} waiting ticks behind one, {late} started more than 10 ms late")

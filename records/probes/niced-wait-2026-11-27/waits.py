"""Long waits of the nice-19 probe (a 'Tick Runner' thread at prio 139) in an ftrace log."""
import re, sys, collections
sw = re.compile(r"\[(\d+)\].* (\d+\.\d+): sched_switch: prev_comm=(.*) prev_pid=(\d+) prev_prio=(\d+) prev_state=(\S+) ==> next_comm=(.*) next_pid=(\d+) next_prio=(\d+)")
wk = re.compile(r" (\d+\.\d+): sched_wakeup: comm=(.*) pid=(\d+) prio=(\d+) target_cpu=(\d+)")
events = []
for line in open(sys.argv[1], errors="replace"):
    m = sw.search(line)
    if m:
        cpu, ts, pc, pp, ppr, st, nc, npid, npr = m.groups()
        events.append(("sw", float(ts), int(cpu), pc, int(pp), int(ppr), st, nc, int(npid), int(npr)))
        continue
    m = wk.search(line)
    if m:
        ts, c, pid, prio, tcpu = m.groups()
        events.append(("wk", float(ts), c, int(pid), int(prio), int(tcpu)))
probe = {e[3] for e in events if e[0] == "wk" and e[2].startswith("Tick Runner") and e[4] == 139}
print(f"events {len(events)}, probe tids {probe}")
woke = None; ins = 0; pre = 0
for i, e in enumerate(events):
    if e[0] == "wk" and e[3] in probe:
        woke = (e[1], i, e[5]); ins = 0; pre = 0
    elif e[0] == "sw" and woke:
        if e[8] in probe:
            ins += 1
        if e[4] in probe:
            if e[6].startswith("R"):
                pre += 1
                continue
            wait = e[1] - woke[0]
            if wait > 0.3:
                ran = collections.Counter(); last = {}
                for f in events[woke[1]:i]:
                    if f[0] != "sw": continue
                    cpu = f[2]
                    if cpu in last:
                        t0, name = last[cpu]
                        ran[(cpu, name)] += f[1] - t0
                    last[cpu] = (f[1], f"{f[7]}/{f[9]}")
                sws = collections.Counter(f[2] for f in events[woke[1]:i] if f[0] == "sw")
                pids = collections.defaultdict(set)
                for f in events[woke[1]:i]:
                    if f[0] == "sw": pids[f[2]].add(f[8])
                print("   switches per cpu:", dict(sorted(sws.items())), "distinct pids:", {c: len(v) for c, v in sorted(pids.items())})
                for f in events[max(0, woke[1] - 3):woke[1] + 12]:
                    print("     ", f)
                for f in events[i - 4:i + 1]:
                    print("     ", f)
                per = collections.defaultdict(list)
                for (cpu, name), t in ran.most_common():
                    if len(per[cpu]) < 4: per[cpu].append(f"{name} {t*1000:.0f}ms")
                print(f"wait {wait*1000:.0f} ms from {woke[0]:.3f} (woken to cpu {woke[2]}), switched in {ins}x, preempted {pre}x")
                for cpu in sorted(per): print(f"   cpu{cpu}: " + ", ".join(per[cpu]))
            woke = None

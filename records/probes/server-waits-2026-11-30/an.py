#!/usr/bin/env python3
"""Summarise probe.sh outputs: per cell, late steps, the Server (step)
thread's CPUs, involuntary switches, migrations and run-queue wait per run,
how often a still-runnable Server thread lost its CPU (all, and to the
servers' light threads), and the hogs' CPUs.  an.py OUT..."""
import re
import sys

for path in sys.argv[1:]:
    print(f"== {path}")
    cells, order = {}, []
    for line in open(path, errors="replace"):
        line = line.strip()
        m = re.match(r"# (round \d+ [^:]+|idle machine): (.*)", line)
        if not m:
            continue
        cell, rest = m.groups()
        if cell not in cells:
            cells[cell] = {}
            order.append(cell)
        d = cells[cell]
        f = rest.split()
        if rest.startswith("steps late"):
            s = rest.split(":")[1].split()
            d["late"] = 100 * int(s[1]) / int(s[0])
            d["work"] = s[3]
        elif len(f) == 9 and f[0] in ("Server", "HOGS", "IDLE", "SCHEDULER") and f[1].isdigit():
            d[f[0]] = (f[2], f[7], f[5], f[8])
        elif len(f) >= 3 and f[1] == "->" and f[0] == "Server":
            n = float(f[-1])
            d["pre"] = d.get("pre", 0.0) + n
            if len(f) == 4 and f[2] in ("minetestserver", "ConnectionSend", "ConnectionRecei"):
                d["helper"] = d.get("helper", 0.0) + n
    for c in order:
        d = cells[c]
        s = d.get("Server", ("-",) * 4)
        h = d.get("HOGS", ("-",) * 4)
        print(f"{c:37s} late {d.get('late', 0):5.1f} % (step {d.get('work')} ms) | Server: "
              f"{s[0]} CPUs, {s[1]} inv/s, {s[2]} migr/s, {s[3]} ms wait/run | preempted "
              f"{d.get('pre', 0):4.1f}/s, by helpers {d.get('helper', 0):4.1f}/s | hogs {h[0]} CPUs"
              + (f" | idle {d['IDLE'][0]} CPUs" if "IDLE" in d else "")
              + (f" | scx_tick's process {d['SCHEDULER'][0]} CPUs" if "SCHEDULER" in d else ""))

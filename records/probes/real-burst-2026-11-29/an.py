#!/usr/bin/env python3
"""Medians (min-max) of late %, lost % and hog CPUs per scheduler of a probe's JSONL."""
import json, statistics, sys
from collections import defaultdict

rows = defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    rows[r["scheduler"]].append(r)
eevdf = statistics.median(r["hog_cpus"] for r in rows.get("eevdf", [])) if "eevdf" in rows else None
for s, rs in rows.items():
    late = sorted(r["late_pct"] for r in rs)
    hogs = statistics.median(r["hog_cpus"] for r in rs)
    line = f"{s:16} late {statistics.median(late):6.2f} % ({late[0]:.2f}-{late[-1]:.2f}; rounds {', '.join('%.2f' % r['late_pct'] for r in rs)})"
    if "lost_pct" in rs[0]:
        line += " lost %.2f %%" % statistics.median(r['lost_pct'] for r in rs)
    line += f" hogs {hogs:.2f} CPUs"
    if eevdf and s != "idle":
        line += f" ({hogs / eevdf:.2f} x EEVDF)"
    if "scx_ticks_per_s" in rs[0]:
        tps = statistics.median(r["scx_ticks_per_s"] * r["seconds"] / max(1, r["steps"]) for r in rs)
        line += f" ticks/step ~{tps:.2f}"
    print(line)

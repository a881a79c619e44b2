#!/usr/bin/env bash
# The pictures of docs/operating.md, from a real run: scripts/guest/monitoring.sh
# in a 4-vCPU guest (two tick groups under scx_tick, Prometheus scraping it;
# the runners alone, beside CPU hogs, one group overloaded), then drawn here:
# the live view (`scx_tick --monitor 1`) and the shipped Grafana dashboard's
# panels, laid out as the dashboard lays them out, from Prometheus's answers
# to the dashboard's own queries. Grafana itself is not in Debian; the
# panels are drawn with matplotlib (python3-matplotlib).
#
#   scripts/monitoring-pictures.sh [--phase-s S] [--out DIR]   (default docs/pictures)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/common.sh"
PHASE=75 OUT="$ROOT/docs/pictures"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --phase-s) PHASE=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    *) die "unknown option $1; allowed: --phase-s S, --out DIR" ;;
  esac
done
# Debian's python3, where python3-matplotlib is (not a python3 earlier on PATH)
PY=/usr/bin/python3
$PY -c "import matplotlib" 2>/dev/null || die "needs python3-matplotlib (apt-get install python3-matplotlib)"
mkdir -p "$OUT"
RAW=$(mktemp)
trap 'rm -f "$RAW"' EXIT
bash "$ROOT/scripts/vm.sh" --cpus 4 --timeout $((3 * PHASE + 240)) -- bash "$ROOT/scripts/guest/monitoring.sh" --phase-s "$PHASE" >"$RAW"
log "drawing into $OUT"
$PY - "$RAW" "$ROOT/examples/monitoring/grafana-dashboard.json" "$OUT" "$PHASE" <<'PY'
import json, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

raw, dash_file, out, phase = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
text = open(raw).read()
live = text.split("### live view: scx_tick --monitor 1\n")[1].split("### query_range\n")[0].rstrip("\n")
data = json.loads(text.split("### query_range\n")[1])

# the live view, as a terminal shows it
lines = live.splitlines()
fig = plt.figure(figsize=(max(len(l) for l in lines) * 0.075 + 0.4, len(lines) * 0.2 + 0.4))
fig.patch.set_facecolor("#1e1e1e")
fig.text(0.01, 0.98, live, family="monospace", size=9, color="#d4d4d4", va="top")
fig.savefig(f"{out}/live-view.png", dpi=110, facecolor=fig.get_facecolor())

# the dashboard: its panels at their grid positions (24 columns wide)
dash = json.load(open(dash_file))
rows = max(p["gridPos"]["y"] + p["gridPos"]["h"] for p in dash["panels"])
fig = plt.figure(figsize=(14, rows * 0.38))
fig.patch.set_facecolor("#181b1f")
scale = {"percent": (1, "%"), "ops": (1, "/s"), "s": (1000, "ms"), "short": (1, "")}
for p in dash["panels"]:
    g = p["gridPos"]
    ax = fig.add_axes([g["x"] / 24 + 0.035, 1 - (g["y"] + g["h"]) / rows + 0.045, g["w"] / 24 - 0.055, g["h"] / rows - 0.09])
    ax.set_facecolor("#181b1f")
    mult, unit = scale.get(p.get("fieldConfig", {}).get("defaults", {}).get("unit", "short"), (1, ""))
    for legend, points in sorted(data.get(p["title"], {}).items()):
        ax.plot([t for t, _ in points], [v * mult for _, v in points], label=legend, linewidth=1.4)
    for x in (phase, 2 * phase):
        ax.axvline(x, color="#555", linestyle=":", linewidth=1)
    ax.set_title(p["title"], color="#ccccdc", size=10, loc="left")
    ax.tick_params(colors="#9fa7b3", labelsize=8)
    ax.set_ylabel(unit, color="#9fa7b3", size=8)
    for s in ax.spines.values():
        s.set_color("#2c3235")
    ax.grid(color="#2c3235", linewidth=0.6)
    if ax.lines:
        ax.legend(fontsize=7, facecolor="#181b1f", edgecolor="#2c3235", labelcolor="#ccccdc", loc="upper left")
fig.text(0.5, 0.005, f"seconds; dotted: hogs start ({phase:.0f} s), world overloaded ({2 * phase:.0f} s)",
         color="#9fa7b3", size=8, ha="center")
fig.savefig(f"{out}/dashboard.png", dpi=90, facecolor=fig.get_facecolor())
print(f"{out}/live-view.png {out}/dashboard.png")
PY

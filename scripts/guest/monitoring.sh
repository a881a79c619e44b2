#!/usr/bin/env bash
# The guest half of scripts/monitoring-pictures.sh: two tick groups under
# scx_tick, scraped by Prometheus (examples/monitoring/alerts.yml loaded),
# through three phases of PHASE_S seconds each: the runners alone, beside
# 8 CPU hogs, and one group overloaded beside the hogs. Prints the live view
# (`scx_tick --monitor 1`, a few seconds of the last phase) and, after a
# line "### query_range", every query of the shipped Grafana dashboard over
# the run as one JSON object (panel title -> legend -> [[t, value]...]).
#
#   scripts/guest/monitoring.sh [--phase-s S]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$ROOT/scripts/common.sh"

PHASE=75
while [[ $# -gt 0 ]]; do
  case "$1" in
    --phase-s) PHASE=$2; shift 2 ;;
    *) die "unknown option $1; allowed: --phase-s S" ;;
  esac
done
command -v prometheus >/dev/null || die "no prometheus (scripts/setup.sh installs Debian's)"
W=$(mktemp -d /tmp/monitoring.XXXXXX)
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$W"' EXIT
mkdir -p /sys/fs/cgroup/world /sys/fs/cgroup/lobby

"$ROOT/target/release/scx_tick" --tick-cgroup world --tick-cgroup lobby \
  --metrics-addr 127.0.0.1:9470 >"$W/scx.out" 2>&1 &
PIDS+=($!)
wait_sched_state enabled 60 "${PIDS[0]}" || die "scx_tick did not attach: $(tail -5 "$W/scx.out")"
# shellcheck disable=SC2046 # the flags, split
prometheus $(prometheus_args "$W") >"$W/prom.out" 2>&1 &
PIDS+=($!)
START=$(date +%s)

load() { # GROUP RUNNERS WORK_MS
  "$ROOT/target/release/tickload" -n "$2" --period-ms 50 --work-ms "$3" \
    --duration-s "$PHASE" --cgroup "/sys/fs/cgroup/$1" >/dev/null 2>&1 &
}
echo "### phase 1: the runners alone" >&2
load world 4 10; load lobby 2 5
sleep "$PHASE"; sleep 1
echo "### phase 2: beside 8 CPU hogs" >&2
stress-ng --cpu 8 --temp-path /tmp --timeout $((2 * PHASE + 10))s >/dev/null 2>&1 &
PIDS+=($!)
load world 4 10; load lobby 2 5
sleep "$PHASE"; sleep 1
echo "### phase 3: world overloaded (6 x 20 ms per 50 ms tick) beside the hogs" >&2
load world 6 20; load lobby 2 5
sleep $((PHASE / 2))
echo "### live view: scx_tick --monitor 1"
timeout 4.5 "$ROOT/target/release/scx_tick" --monitor 1 || true
sleep $((PHASE - PHASE / 2))
END=$(date +%s)

echo "### query_range"
python3 - "$ROOT/examples/monitoring/grafana-dashboard.json" "$START" "$END" <<'PY'
import json, sys, urllib.parse, urllib.request
dash, start, end = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
out = {}
for p in dash["panels"]:
    series = out.setdefault(p["title"], {})
    for t in p.get("targets", []):
        q = {"query": t["expr"].replace("$instance", ".*"), "start": start, "end": end, "step": "2"}
        r = json.load(urllib.request.urlopen("http://127.0.0.1:9090/api/v1/query_range?" + urllib.parse.urlencode(q)))
        for s in r["data"]["result"]:
            legend = t.get("legendFormat", "{{group}}")
            for k, v in s["metric"].items():
                legend = legend.replace("{{" + k + "}}", v).replace("{{ " + k + " }}", v)
            series[legend] = [[float(ts) - float(start), float(v)] for ts, v in s["values"]]
print(json.dumps(out))
PY

#!/usr/bin/env bash
# guest: --cpus 4 --systemd
# The operator's guide (docs/operating.md), walked as written under a real
# systemd (PID 1 in this guest): its command blocks are read from the guide
# and run in order (as root: `sudo X` runs X; the build line ran on the
# host, where the suite built exactly that). Around them the
# unit is driven as systemd drives it: a server that is its own service,
# `enable --now`, the journal, the flags file, a restart after the kernel
# ejects scx_tick, a bad configuration refused once and not restarted, stop
# (every thread back in the server's cgroup), upgrade, uninstall.
source "$(dirname "$0")/../lib.sh"
GUIDE="$ROOT/docs/operating.md"
trap 'systemctl stop game.service scx_tick.service 2>/dev/null || true; cleanup' EXIT
[[ "$(readlink /proc/1/exe)" == */systemd ]] || skip "PID 1 is not systemd (boot the guest with scripts/vm.sh --systemd)"
need java javac

# the Nth ```sh block of the guide, one command per line
guide_block() {
  awk -v n="$1" '/^```sh$/ { b++; inb = 1; next } /^```/ { inb = 0 } inb && b == n' "$GUIDE"
}
# run the Nth block as written, each line's output in $WORK/guide-N.L
guide_run() {
  local n=$1 l=0 line rc secs
  [[ -n "$(guide_block "$n")" ]] || fail "the guide has no command block $n"
  while IFS= read -r line; do
    l=$((l + 1))
    [[ -z "$line" ]] && continue
    if [[ $line == cargo\ build* ]]; then note "guide $n.$l (on the host): $line"; continue; fi
    # what follows the live output forever is watched for a few seconds
    secs=120; [[ $line == journalctl*" -f"* || $line == *"scx_tick --monitor"* ]] && secs=6
    rc=0
    # root already: `sudo X` is X (this guest has no sudo)
    (cd "$ROOT" && eval "timeout $secs ${line#sudo }") >"$WORK/guide-$n.$l" 2>&1 </dev/null || rc=$?
    ((rc == 0 || (secs == 6 && rc == 124))) || fail "guide $n.$l ($line): exit $rc: $(tail -5 "$WORK/guide-$n.$l")"
    note "guide $n.$l: $line"
  done <<<"$(guide_block "$n")"
}
unit() { systemctl show scx_tick -P "$1"; }
wait_for() { # SECS DESCRIPTION COMMAND...
  local secs=$1 what=$2 i
  shift 2
  for ((i = 0; i < secs * 5; i++)); do "$@" && return 0; sleep 0.2; done
  fail "$what not within $secs s (unit: $(unit ActiveState)/$(unit SubState), sched_ext $(sched_state)); journal: $(journalctl -u scx_tick --no-pager | tail -8)"
}
enabled() { [[ "$(sched_state)" == enabled ]]; }
runners_in_child() { local n; n=$(grep -c . "$CHILD/cgroup.threads" 2>/dev/null) || true; ((${n:-0} >= 4)); }

# --- 2. install, as written
guide_run 1
for f in /usr/local/bin/scx_tick /usr/local/bin/scx_tick_user /etc/scx_tick.toml /etc/default/scx_tick /etc/systemd/system/scx_tick.service; do
  [[ -e $f ]] || fail "the guide's install left no $f"
done

# --- a Folia-like server, as its own systemd service (its own cgroup)
CLASSES=$(region_server_classes) || fail "javac failed"
systemd-run --quiet --unit=game -p WorkingDirectory="$WORK" \
  java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmx64m -cp "$CLASSES" RegionServer 3 0 0 600 ||
  fail "systemd-run could not start the server"
JVM=$(systemctl show game -P MainPID)
GAME=/sys/fs/cgroup$(systemctl show game -P ControlGroup)
CHILD=$GAME/scx_tick-world
region_threads() { (($(grep -lx "Folia Region Sc" /proc/"$JVM"/task/*/comm 2>/dev/null | wc -l) >= 4)); }
wait_for 60 "the server's 4 region threads" region_threads
note "server: game.service, JVM $JVM in $GAME"

# --- 3. what the shipped configuration selects
guide_run 2
grep -q "process $JVM (java): 4 of its [0-9]* threads" "$WORK/guide-2.2" ||
  fail "the guide's match did not list the JVM's 4 region threads: $(cat "$WORK/guide-2.2")"

# --- 4. (start) enabled now and at boot, the journal says what it found
guide_run 3
[[ "$(systemctl is-enabled scx_tick)" == enabled ]] || fail "scx_tick is not enabled after the guide's enable --now"
wait_for 120 "sched_ext enabled by the unit" enabled
wait_for 30 "the runners moved into $CHILD" runners_in_child
grep -q "tick group world: process $JVM (java) matches; 4 of its" "$WORK/guide-3.2" || {
  journalctl -u scx_tick --no-pager >"$WORK/guide-3.2"
  grep -q "tick group world: process $JVM (java) matches; 4 of its" "$WORK/guide-3.2" ||
    fail "the journal does not say what matched: $(tail -5 "$WORK/guide-3.2")"
  note "(journalctl -f had not shown the match within 6 s; the journal has it)"
}
grep -q "world" "$WORK/guide-3.3" || fail "scx_tick --monitor 1 showed no group: $(head -20 "$WORK/guide-3.3")"
note "monitor: $(grep -m1 world "$WORK/guide-3.3" | tr -s ' ' | cut -c1-120)"

# --- 4. (flags) the flags file, as the guide writes it, then a restart
flags=$(grep -m1 '^SCX_TICK_FLAGS=' "$GUIDE") || fail "the guide shows no SCX_TICK_FLAGS line"
sed -i "s|^SCX_TICK_FLAGS=.*|$flags|" /etc/default/scx_tick
systemctl restart scx_tick
wait_for 120 "sched_ext enabled after the restart with flags" enabled
scrape() { python3 -c 'import urllib.request; print(urllib.request.urlopen("http://127.0.0.1:9470/metrics", timeout=3).read().decode())' >"$WORK/scrape" 2>/dev/null; }
wait_for 60 "a metrics scrape on 127.0.0.1:9470" scrape
grep -q 'scx_tick_ticks_total{group="world"}' "$WORK/scrape" || fail "the scrape has no world ticks: $(head -5 "$WORK/scrape")"
json_lines() { [[ -s /var/log/scx_tick.jsonl ]]; }
wait_for 30 "JSON lines in /var/log/scx_tick.jsonl" json_lines
python3 - <<'PY' || fail "the JSON lines are not JSON without histograms"
import json
for line in open("/var/log/scx_tick.jsonl"):
    m = json.loads(line)
    assert "world" in m["groups"], m
    assert not any("hist" in k for g in m["groups"].values() for k in g), list(m["groups"]["world"])
PY
note "flags: $flags (scrape and JSON lines checked)"

# --- 5. Prometheus scrapes it with the shipped alert rules; every query of
# the shipped dashboard returns series
command -v prometheus >/dev/null || fail "no prometheus (scripts/setup.sh installs Debian's)"
promtool check rules "$ROOT/examples/monitoring/alerts.yml" >"$WORK/promtool.out" 2>&1 || fail "promtool: $(cat "$WORK/promtool.out")"
# shellcheck disable=SC2046 # the flags, split
systemd-run --quiet --unit=scx-test-prometheus prometheus $(prometheus_args "$WORK") || fail "prometheus did not start"
sleep 15 # enough samples for the dashboard's rate(...[1m])
python3 - "$ROOT/examples/monitoring/grafana-dashboard.json" <<'PY' >"$WORK/prom.out" 2>&1 || fail "Prometheus and the shipped monitoring: $(cat "$WORK/prom.out")"
import json, sys, time, urllib.parse, urllib.request
api = "http://127.0.0.1:9090/api/v1/"
def get(path, **q):
    for _ in range(30):
        try:
            r = json.load(urllib.request.urlopen(api + path + "?" + urllib.parse.urlencode(q), timeout=5))
            if r["status"] == "success":
                return r["data"]
        except OSError:
            pass
        time.sleep(1)
    sys.exit(f"{path} {q}: no answer")
up = get("query", query='up{job="scx_tick"}')["result"]
assert up and up[0]["value"][1] == "1", f"scx_tick is not up in Prometheus: {up}"
rules = [r for g in get("rules")["groups"] for r in g["rules"]]
bad = [(r["name"], r.get("lastError")) for r in rules if r["health"] != "ok"]
assert len(rules) >= 4 and not bad, f"alert rules not healthy: {bad or rules}"
dash = json.load(open(sys.argv[1]))
for p in dash["panels"]:
    for t in p.get("targets", []):
        expr = t["expr"].replace("$instance", ".*")
        res = get("query", query=expr)["result"]
        assert res, f"panel {p['title']!r}: no series for {expr}"
        print(f"{p['title']}: {len(res)} series")
print(f"{len(rules)} alert rules healthy")
PY
note "prometheus: $(tr '\n' ';' <"$WORK/prom.out")"
systemctl stop scx-test-prometheus

# --- the kernel ejects scx_tick: the unit starts it again
restarts=$(unit NRestarts)
echo 1 >/proc/sys/kernel/sysrq
echo S >/proc/sysrq-trigger
restarted() { (($(unit NRestarts) > restarts)) && enabled; }
wait_for 60 "a restart after the ejection" restarted
journalctl -u scx_tick --no-pager | grep -q "EXIT:.*sysrq" || fail "the journal does not say why scx_tick left"
wait_for 30 "the runners back in $CHILD after the restart" runners_in_child
note "ejected by sysrq-S: restarted (NRestarts $restarts -> $(unit NRestarts)), sched_ext enabled"

# --- a bad configuration: refused, said why, not restarted
cp /etc/scx_tick.toml "$WORK/good.toml"
sed -i 's/^period_ms *=.*/period_ms = -5/' /etc/scx_tick.toml
grep -q "period_ms = -5" /etc/scx_tick.toml || fail "the shipped configuration has no period_ms line to break"
systemctl reset-failed scx_tick # the restarts above count against StartLimitBurst
restarts=$(unit NRestarts)
rc=0; systemctl restart scx_tick 2>"$WORK/restart.err" || rc=$?
((rc != 0)) || fail "systemctl restart with a bad configuration succeeded"
sleep 6 # RestartSec is 2: a restart would have come
[[ "$(unit ActiveState)" == failed && "$(unit NRestarts)" == "$restarts" ]] ||
  fail "after a bad configuration the unit is $(unit ActiveState), restarts $restarts -> $(unit NRestarts) (want failed, no restart)"
[[ "$(sched_state)" == disabled ]] || fail "sched_ext is $(sched_state) with a bad configuration"
journalctl -u scx_tick --no-pager | grep -q "period_ms" || fail "the journal does not name the bad key: $(journalctl -u scx_tick --no-pager | tail -5)"
note "bad configuration: $(journalctl -u scx_tick --no-pager | grep -m1 period_ms | cut -c1-160)"
cp "$WORK/good.toml" /etc/scx_tick.toml
systemctl restart scx_tick
wait_for 120 "sched_ext enabled after the configuration was fixed" enabled

# --- stopped as an operator stops it: everything back in game.service
systemctl stop scx_tick
[[ "$(sched_state)" == disabled ]] || fail "sched_ext is $(sched_state) after systemctl stop"
[[ "$(unit ExecMainStatus)" == 0 ]] || fail "scx_tick exited $(unit ExecMainStatus) on stop"
[[ ! -d $CHILD ]] || fail "$CHILD left behind after stop"
for t in /proc/"$JVM"/task/*; do
  cg=$(cat "$t/cgroup" 2>/dev/null) && [[ -n $cg ]] || continue
  [[ "/sys/fs/cgroup${cg#0::}" == "$GAME" ]] || fail "thread ${t##*/} is in $cg after stop"
done
systemctl is-active -q game || fail "the server did not survive scx_tick's stop"
systemctl start scx_tick
wait_for 120 "sched_ext enabled again" enabled

# --- 7. (upgrade) the operator's configuration kept
echo "# the operator's edit" >>/etc/scx_tick.toml
guide_run 4
grep -q "# the operator's edit" /etc/scx_tick.toml || fail "the upgrade replaced /etc/scx_tick.toml"
wait_for 120 "sched_ext enabled after the upgrade" enabled

# --- 7. (remove)
guide_run 5
[[ ! -e /etc/systemd/system/scx_tick.service && ! -e /usr/local/bin/scx_tick ]] || fail "the uninstall left the unit or the binary"
[[ "$(sched_state)" == disabled ]] || fail "sched_ext is $(sched_state) after the uninstall"
[[ -e /etc/scx_tick.toml && -e /etc/default/scx_tick ]] && grep -q "kept /etc/scx_tick.toml" "$WORK/guide-5.1" ||
  fail "the uninstall did not keep the changed files, or did not say so: $(cat "$WORK/guide-5.1")"
systemctl is-active -q game || fail "the server did not survive the uninstall"
note "uninstall: $(tr '\n' ' ' <"$WORK/guide-5.1" | cut -c1-200)"
check_dmesg_clean

#!/usr/bin/env bash
# Installed with the documented command and started as its systemd unit
# would start it, scx_tick finds a JVM's region tick threads started after
# it, in the server's own (limited) cgroup, follows the server's restart
# within one scan, keeps --stats-json - pure JSON (with -vv: libbpf too), serves a scrape beside an
# idle connection, and moves everything back on SIGTERM. Its flags file
# (the unit's EnvironmentFile) sets the metrics address; the uninstall
# removes what the install put there and keeps the flags file it changed.
# Catches: nomoveback selectall
source "$(dirname "$0")/../lib.sh"
JVM=""
trap '[[ -n "$JVM" ]] && { kill -9 $JVM 2>/dev/null || true; }; cleanup' EXIT
need java javac

# --- install into the guest's writable overlays (/root, /etc), as the README says
PREFIX=/root/scx
bash "$ROOT/scripts/install.sh" --no-build --prefix $PREFIX 2>"$WORK/install.err" || fail "install failed: $(cat "$WORK/install.err")"
UNIT=/etc/systemd/system/scx_tick.service
for f in $PREFIX/bin/scx_tick $PREFIX/bin/scx_tick_user /etc/scx_tick.toml /etc/default/scx_tick $UNIT; do
  [[ -e $f ]] || fail "install left no $f"
done
EXEC=$(sed -n 's/^ExecStart=//p' $UNIT)
[[ "$EXEC" == "$PREFIX/bin/scx_tick --config /etc/scx_tick.toml \$SCX_TICK_FLAGS" ]] || fail "unit's ExecStart: $EXEC"
grep -qx "EnvironmentFile=-/etc/default/scx_tick" $UNIT || fail "the unit reads no flags file"
note "unit: ExecStart=$EXEC"
# the operator's flags, as systemd passes them: the variable split at spaces
echo 'SCX_TICK_FLAGS="--metrics-addr 127.0.0.1:9470 --stats 1"' >>/etc/default/scx_tick
# shellcheck disable=SC1091
SCX_TICK_FLAGS=$(source /etc/default/scx_tick && echo "$SCX_TICK_FLAGS")
EXEC=${EXEC//\$SCX_TICK_FLAGS/$SCX_TICK_FLAGS}
# a bad file is refused before anything loads with exit 2, which the unit
# does not restart (systemd itself: vm/operators_guide_runs_under_systemd)
grep -q "^ExecStartPre=" $UNIT && fail "the unit has an ExecStartPre= (systemd restarts its failures)"
grep -qx "RestartPreventExitStatus=2" $UNIT || fail "the unit restarts after a bad configuration"
printf '[[group]]\nname = "world"\nprocess = "^java$"\nperiod_ms = -5\n' >"$WORK/bad.toml"
rc=0; $PREFIX/bin/scx_tick check-config "$WORK/bad.toml" >/dev/null 2>"$WORK/bad.err" || rc=$?
((rc == 2)) || fail "check-config of a bad file: exit $rc (want 2): $(cat "$WORK/bad.err")"
rc=0; $PREFIX/bin/scx_tick --config "$WORK/bad.toml" >/dev/null 2>"$WORK/bad.err" || rc=$?
((rc == 2)) || fail "a run with a bad file: exit $rc (want 2, which the unit does not restart): $(cat "$WORK/bad.err")"
note "a bad file: exit 2 from check-config and from a run: $(head -c 160 "$WORK/bad.err")"

# --- the server's own cgroup, with limits (a systemd service's, a container's)
echo "+pids +memory" >/sys/fs/cgroup/cgroup.subtree_control
GAME=/sys/fs/cgroup/game.service
mkdir -p $GAME
echo 512 >$GAME/pids.max
echo $((1536 * 1024 * 1024)) >$GAME/memory.max
CLASSES=$(region_server_classes) || fail "javac failed"
server() { # RUNNERS START_DELAY_MS LATE_DELAY_MS SECONDS: a JVM in $GAME
  bash -c "echo \$\$ >$GAME/cgroup.procs; exec java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmx64m -cp $CLASSES RegionServer $*" >>"$WORK/server.out" 2>&1 &
  JVM=$!
}
CHILD=$GAME/scx_tick-world
runner_tids() { # the JVM's threads named like current Folia's region threads
  local t
  for t in /proc/$JVM/task/*; do
    if [[ "$(cat $t/comm 2>/dev/null)" == "Folia Region Sc" ]]; then basename $t; fi
  done | sort
}
# wait until N runners exist, then time how long until all are in the child
runners_follow() {
  local n=$1 i tids t0 missing
  for ((i = 0; i < 1200; i++)); do
    tids=$(runner_tids); (($(echo "$tids" | grep -c .) >= n)) && break; sleep 0.05
  done
  (($(echo "$tids" | grep -c .) >= n)) || fail "the server never started $n runners: $(cat "$WORK/server.out")"
  t0=$(date +%s%N)
  for ((i = 0; i < 200; i++)); do
    sort "$CHILD/cgroup.threads" >"$WORK/in_child" 2>/dev/null || : >"$WORK/in_child"
    missing=$(echo "$tids" | comm -23 - "$WORK/in_child")
    [[ -z "$missing" ]] && break; sleep 0.02
  done
  [[ -z "$missing" ]] || fail "runner thread(s) $missing not moved into $CHILD within 4 s"
  FOLLOW_MS=$((($(date +%s%N) - t0) / 1000000))
}

# --- the unit's command line, with its JSON on stdout into a parser for the whole run
mkfifo "$WORK/json.fifo"
python3 -u -c '
import json, sys
n = 0
with open(sys.argv[1], "w") as log:
    for line in sys.stdin:
        json.loads(line)
        n += 1
        log.write(line); log.flush()
print("parsed", n)
' "$WORK/json.log" <"$WORK/json.fifo" >"$WORK/parser.out" 2>&1 &
PARSER=$!
$EXEC -vv --stats-json - >"$WORK/json.fifo" 2>"$WORK/scx.err" &
SCX_PID=$!
for ((i = 0; i < 1200; i++)); do [[ "$(sched_state)" == enabled ]] && break; sleep 0.1; done
[[ "$(sched_state)" == enabled ]] || fail "the unit's command line did not enable scx_tick (state $(sched_state))"
grep -q "scx_tick .*(git " "$WORK/scx.err" || fail "no version in the start-up log"

# --- a server whose region threads appear after scx_tick started
server 2 2000 3000 120
runners_follow 2
note "2 runners of JVM $JVM in $CHILD after ${FOLLOW_MS} ms"
runners_follow 3
note "the late runner followed after ${FOLLOW_MS} ms"
# --- what the shipped configuration selects right now, as `scx_tick match` lists it
$PREFIX/bin/scx_tick match /etc/scx_tick.toml >"$WORK/match.out" 2>&1 || fail "scx_tick match failed: $(cat "$WORK/match.out")"
grep -q "process $JVM (java): 3 of its [0-9]* threads" "$WORK/match.out" \
  && (($(grep -c "^ *[0-9]* Folia Region Sc$" "$WORK/match.out") == 3)) \
  || fail "scx_tick match did not list the JVM's 3 region threads: $(cat "$WORK/match.out")"
# an operator's pattern for older Folia: nothing selected, and it says why
$PREFIX/bin/scx_tick match --tick-threads 'old,process=^java$,thread=^Region Schedule' >"$WORK/nomatch.out" 2>&1 \
  || fail "scx_tick match failed: $(cat "$WORK/nomatch.out")"
grep -q 'no thread matches; its thread names: .*"Folia Region Sc" x3' "$WORK/nomatch.out" \
  && grep -q "select no thread now" "$WORK/nomatch.out" \
  || fail "scx_tick match did not say why nothing matched: $(cat "$WORK/nomatch.out")"
note "match, shipped example: $(grep -m1 "process $JVM" "$WORK/match.out"); an old pattern: $(grep -o 'no thread matches.*' "$WORK/nomatch.out" | cut -c1-110)..."
# only the threads the group names are runners: the JVM's main thread stays
grep -qx "$JVM" $GAME/cgroup.threads || fail_catches selectall "the JVM's main thread left its cgroup"
grep -q "tick group world: process $JVM (java) matches" "$WORK/scx.err" || fail "the log does not say which process matched"
grep -q "libbpf" "$WORK/scx.err" || note "(no libbpf lines in the -vv log)"
[[ "$(cat $CHILD/cgroup.type)" == threaded ]] || fail "$CHILD is not threaded"
pids_now=$(cat $GAME/pids.current)
nthreads=$(ls /proc/$JVM/task | wc -l)
((pids_now >= nthreads)) || fail "$GAME's pids.current $pids_now does not count the JVM's $nthreads threads: its limits no longer apply to the runners"
note "$GAME: pids.current $pids_now for $nthreads JVM threads, memory.current $(cat $GAME/memory.current)"
sleep 2
ticks_before=$(tail -1 "$WORK/json.log" | python3 -c 'import json,sys; print(json.load(sys.stdin)["groups"]["world"]["ticks"])')
((ticks_before > 0)) || fail "no ticks counted for the runners: $(tail -1 "$WORK/json.log")"

# --- an idle connection to the metrics endpoint does not block a scrape
exec 3<>/dev/tcp/127.0.0.1/9470
python3 - <<'PY' >"$WORK/scrape" || fail "scrape beside an idle connection failed"
import urllib.request
print(urllib.request.urlopen("http://127.0.0.1:9470/metrics", timeout=3).read().decode())
PY
exec 3>&-
grep -q 'scx_tick_ticks_total{group="world"}' "$WORK/scrape" && grep -q "scx_tick_lends_total" "$WORK/scrape" \
  && grep -q "scx_tick_steals_refused_total" "$WORK/scrape" || fail "scrape lacks counters: $(head -5 "$WORK/scrape")"
note "scrape beside an idle connection: $(grep -c . "$WORK/scrape") lines"

# --- the server restarts: a new JVM, new threads, same cgroup
old=$JVM
kill -TERM $JVM; wait $JVM 2>/dev/null || true
server 2 0 600000 120
((JVM != old)) || fail "the restarted server has the old pid"
runners_follow 2
note "after the restart: runners of the new JVM $JVM in $CHILD after ${FOLLOW_MS} ms (one scan: 200 ms)"
((FOLLOW_MS <= 1500)) || fail "the restarted server's runners took ${FOLLOW_MS} ms, more than a scan (200 ms) plus emulation slack"
sleep 3
ticks_after=$(tail -1 "$WORK/json.log" | python3 -c 'import json,sys; print(json.load(sys.stdin)["groups"]["world"]["ticks"])')
((ticks_after >= ticks_before + 40)) || fail "the new runners are not scheduled as tick runners: ticks $ticks_before -> $ticks_after in 3 s"
note "ticks $ticks_before before the restart, $ticks_after 3 s after it"

# --- stopped as systemd stops it: everything back where it was
stop_scx TERM
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC after SIGTERM"
wait $PARSER || fail "the JSON stream did not parse: $(cat "$WORK/parser.out")"
note "$(cat "$WORK/parser.out") JSON lines, no other output on stdout"
[[ ! -d $CHILD ]] || fail_catches nomoveback "$CHILD left behind"
for t in $(ls /proc/$JVM/task); do
  # a JVM thread may end between the listing and the read (seen once: a
  # thread "in" no cgroup): only a thread still there counts
  cg=$(cat /proc/$JVM/task/$t/cgroup 2>/dev/null) && [[ -n $cg ]] || continue
  [[ $cg == "0::/game.service" ]] || fail_catches nomoveback "thread $t is in $cg after exit"
done
grep -q "scx_tick totals:" "$WORK/scx.err" || fail "no exit summary on stderr"
timestamp=$(tail -1 "$WORK/json.log" | python3 -c 'import json,sys,time; m=json.load(sys.stdin); print(abs(m["timestamp_s"]-time.time()) < 120)')
[[ $timestamp == True ]] || fail "JSON objects carry no wall-clock timestamp"
kill $JVM 2>/dev/null || true; wait $JVM 2>/dev/null || true; JVM=""

# --- uninstalled: what the install put there is gone, the changed flags file kept
bash "$ROOT/scripts/install.sh" --uninstall --prefix $PREFIX 2>"$WORK/uninstall.err" || fail "uninstall failed: $(cat "$WORK/uninstall.err")"
for f in $PREFIX/bin/scx_tick $PREFIX/bin/scx_tick_user /etc/scx_tick.toml $UNIT; do
  [[ ! -e $f ]] || fail "uninstall left $f"
done
[[ -e /etc/default/scx_tick ]] && grep -q "kept /etc/default/scx_tick" "$WORK/uninstall.err" ||
  fail "uninstall removed the changed flags file, or did not say it kept it: $(cat "$WORK/uninstall.err")"
note "uninstall: $(tr '\n' ' ' <"$WORK/uninstall.err" | cut -c1-240)"
check_dmesg_clean

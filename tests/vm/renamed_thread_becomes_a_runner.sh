#!/usr/bin/env bash
# A thread renamed to a group's thread name becomes a tick runner at once,
# and one renamed away stops being one: a server names its tick threads
# after it starts them (a JVM's threads get their names from Java, after
# the kernel made them), and scx_tick's scans run after a task event (a
# rename is one: bpf/events.bpf.c), else only every 5 s. From the
# workload's side: the renamed thread's own /proc cgroup file shows it
# moved into the group's child cgroup, and back, each time within 1.5 s
# (the scans run at most every 200 ms; 0.08-0.37 s in the emulated guest).
# Four renames, 1 s apart after each move (scx_tick's own move of a thread
# is a task event too, and the two scans after it must be over, or they
# would find the next rename): without the rename event the first waits
# for the next full scan wherever it falls, and each later one for the one
# 5 s after the scan that found the rename before it, about 3.5 s (the
# build without it: 4.0, 3.6, 3.7 and 3.8 s).
# Catches: norename
# guest: shared
source "$(dirname "$0")/../lib.sh"
start_scx --tick-threads 'rn,process=^rnprobe$,thread=^Renamed'
# a process of two light threads; the first renames itself (only a thread
# of the process may: /proc/PID/task/TID/comm refuses other writers) to
# what the file "name" says
echo "Tick Runner #0" >"$WORK/name"
python3 - "$WORK/name" <<'PY' &
import ctypes, sys, threading, time
libc = ctypes.CDLL(None)
def name(s): libc.prctl(15, s.encode()[:15], 0, 0, 0)
def worker(k):
    name(f"Tick Runner #{k}")
    have = f"Tick Runner #{k}"
    while True:
        if k == 0:
            want = open(sys.argv[1]).read().strip()
            if want and want != have:
                name(want)
                have = want
        time.sleep(0.02)
name("rnprobe")
for k in (0, 1):
    threading.Thread(target=worker, args=(k,), daemon=True).start()
time.sleep(120)
PY
probe=$!
# (python3 starts in seconds in the emulated guest)
pid="" tid="" other=""
for _ in $(seq 300); do
  pid=$(pgrep -x rnprobe | head -1) || true
  tid=$(grep -l '^Tick Runner #0' /proc/$pid/task/*/comm 2>/dev/null | head -1 | cut -d/ -f5) || true
  other=$(grep -l '^Tick Runner #1' /proc/$pid/task/*/comm 2>/dev/null | head -1 | cut -d/ -f5) || true
  [[ -n $tid && -n $other ]] && break
  sleep 0.1
done
[[ -n $tid && -n $other ]] || fail "the probe's threads not found: $(cat /proc/$pid/task/*/comm | tr '\n' ' ')"
# the process matched (its child cgroup made), and no scan pending
for _ in $(seq 200); do grep -q "process $pid (rnprobe) matches" "$WORK/scx.err" && break; sleep 0.1; done
grep -q "process $pid (rnprobe) matches" "$WORK/scx.err" || fail "scx_tick did not find the probe process: $(tail -3 "$WORK/scx.err")"
sleep 1
in_child() { grep -q '/scx_tick-rn$' "/proc/$pid/task/$1/cgroup"; }
in_child "$tid" && fail "thread $tid is a runner before its rename: $(cat /proc/$pid/task/$tid/cgroup)"
waits=()
# NAME, then whether the thread is to be in the child cgroup: the ms from
# its rename (seen in its comm) to its move
rename() {
  local t0 t1 i
  echo "$1" >"$WORK/name.new" && mv "$WORK/name.new" "$WORK/name"
  for ((i = 0; i < 300; i++)); do [[ $(cat "/proc/$pid/task/$tid/comm") == "$1" ]] && break; sleep 0.01; done
  [[ $(cat "/proc/$pid/task/$tid/comm") == "$1" ]] || fail "the probe did not rename thread $tid to \"$1\": $(cat "/proc/$pid/task/$tid/comm")"
  t0=$(date +%s%N)
  for ((i = 0; i < 200; i++)); do
    if [[ $2 == in ]]; then in_child "$tid" && break; else in_child "$tid" || break; fi
    sleep 0.025
  done
  t1=$(date +%s%N)
  waits+=($(((t1 - t0) / 1000000)))
  sleep 1
}
rename "Renamed #0" in
rename "Tick Runner #0" out
rename "Renamed #0" in
rename "Tick Runner #0" out
in_child "$other" && fail "thread $other, never renamed, became a runner: $(cat /proc/$pid/task/$other/cgroup)"
kill -TERM $pid $probe 2>/dev/null || true
wait $probe 2>/dev/null || true
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
note "ms from each rename to the thread's move (in, out, in, out): ${waits[*]}"
for w in "${waits[@]}"; do
  ((w <= 1500)) || fail_catches norename "a renamed thread moved only after ${w} ms (all: ${waits[*]}): the rename was no task event, the full scan found it"
done
check_dmesg_clean

#!/usr/bin/env bash
# Tick runner threads created and exiting by the thousand per second while
# cgroups below the tick group are created, populated, emptied and removed:
# scx_tick stays enabled with no sched_ext error, counts every churned
# thread's ticks, the home_cpus map only holds live runners, and the kernel
# memory charged to scx_tick (its BPF maps, per-task storage included) does
# not grow with the number of threads that came and went.
# SCX_TICK_CHURN_S sets the measured churn time (default 15 s).
# guest: shared
source "$(dirname "$0")/../lib.sh"
CHURN_S=${SCX_TICK_CHURN_S:-15}
CHURN="$ROOT/target/release/threadchurn"
BATCH=32
LEAST_ROUNDS=3 # cgroup rounds the measured churn makes, however slow the guest
CG=$(make_cgroup tick)

# scx_tick in a memory cgroup of its own: the BPF maps it creates are charged
# there, per-task storage included (kernel memory accounting of BPF maps)
echo +memory >/sys/fs/cgroup/cgroup.subtree_control
MEM=$(make_cgroup scx_mem)
kmem() { awk '$1 == "kernel" {print $2}' "$MEM/memory.stat"; }
echo $$ >"$MEM/cgroup.procs"
start_scx --tick-cpus 1,2 --tick-cgroup tick
echo $$ >/sys/fs/cgroup/cgroup.procs
k0=$(kmem)
home_entries() {
  local n dump
  dump=$(bpftool -j map dump name home_cpus) || fail "bpftool cannot dump home_cpus"
  # one raw "key" per entry, plus one inside "formatted" when the map has BTF
  n=$(($(grep -o '"key":' <<<"$dump" | wc -l) - $(grep -o '"formatted":' <<<"$dump" | wc -l)))
  [[ "$n" =~ ^[0-9]+$ ]] || fail "cannot count home_cpus entries: $n"
  echo "$n"
}
runners() { find "$CG" -name cgroup.threads -exec cat {} + | wc -l; }
# kernel memory after deferred frees (RCU) settle: the lowest of a few reads
settled_kmem() {
  local i k low
  low=$(kmem)
  for ((i = 0; i < 20; i++)); do
    sleep 0.2
    k=$(kmem)
    ((k < low)) && low=$k
  done
  echo "$low"
}

# a cgroup whose last task is still exiting is busy for a moment: retry, bounded
remove_cgroup() {
  local i
  for ((i = 0; i < 100; i++)); do rmdir "$1" 2>/dev/null && return 0; sleep 0.1; done
  fail "cannot remove $1: $(cat "$1/cgroup.threads" 2>&1 | head -3)"
}

# One round of churn: two thread generators, one of which moves through a
# new sub-cgroup of the tick group every round (the old one emptied and
# removed), beside short tickload processes in their own sub-cgroups.
churn() { # seconds, json output, fewest cgroup rounds (a slow guest makes 2-7 in 15 s)
  local secs=$1 out=$2 least=$3 end=$((SECONDS + $1)) i=0 prev="" d
  mkdir "$CG/gen" "$CG/gen2"
  "$CHURN" --duration-s "$secs" --batch $BATCH --ticks 1 --cgroup "$CG/gen" >"$out" &
  local gen=$!
  "$CHURN" --duration-s "$secs" --batch $BATCH --ticks 1 --cgroup "$CG/gen2" >"$out.2" &
  local gen2=$!
  while { kill -0 $gen 2>/dev/null && ((SECONDS < end)); } || ((i < least)); do
    d="$CG/sub$i"
    mkdir "$d"
    echo $gen >"$d/cgroup.procs" 2>/dev/null || true # it may just have exited
    [[ -n "$prev" ]] && remove_cgroup "$prev"
    mkdir "$d/load"
    "$TICKLOAD" -n 2 --work-ms 1 --duration-s 0.5 --cgroup "$d/load" >/dev/null || fail "tickload failed"
    remove_cgroup "$d/load"
    [[ "$(sched_state)" == enabled ]] || fail "scheduler left during churn (state $(sched_state))"
    n=$(home_entries) || fail "cannot read home_cpus"
    echo "$n" >>"$WORK/entries"
    prev=$d i=$((i + 1))
  done
  wait $gen || fail "threadchurn (gen) failed"
  wait $gen2 || fail "threadchurn (gen2) failed"
  [[ -n "$prev" ]] && remove_cgroup "$prev"
  remove_cgroup "$CG/gen"
  remove_cgroup "$CG/gen2"
  echo $i
}

churn 5 "$WORK/warm.json" 0 >/dev/null # warm-up: caches and allocator pools fill
k1=$(settled_kmem)
rounds=$(churn "$CHURN_S" "$WORK/churn.json" $LEAST_ROUNDS)
threads=$(($(json_field "$WORK/churn.json" threads) + $(json_field "$WORK/churn.json.2" threads)))
rate=$((threads / CHURN_S))
# the pinning scan (every 200 ms) forgets exited threads: poll, bounded
for ((i = 0; i < 50; i++)); do
  entries=$(home_entries)
  ((entries <= $(runners))) && break
  sleep 0.1
done
k2=$(settled_kmem)
max_entries=$(sort -n "$WORK/entries" | tail -1)
[[ "$(sched_state)" == enabled ]] || fail "state after churn: $(sched_state)"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
read_totals
grow=$((k2 - k1))
note "churn: $threads threads in ${CHURN_S}s ($rate/s), $rounds cgroups created/populated/emptied/removed"
note "home_cpus entries: at most $max_entries while churning, $entries after (live runners: $(runners))"
note "kernel memory charged to scx_tick: $k0 at start, $k1 after warm-up, $k2 after churn ($grow) over $threads thread lifetimes"
note "ticks counted: $tot_ticks"
# enough thread lifetimes that a per-thread leak stands out of the noise
((threads >= 2000)) || fail "only $threads threads churned"
((rounds >= LEAST_ROUNDS)) || fail "only $rounds cgroup rounds"
((entries == 0)) || fail "home_cpus still holds $entries entries for exited threads"
# at most a batch of each generator, 2 tickload runners and the main threads live at a scan
((max_entries <= 2 * (2 * BATCH + 5))) || fail "home_cpus grew to $max_entries entries"
# a task_ctx alone is 80 bytes: leaking it per thread would add > $((threads * 80)) bytes;
# the bound is 10 bytes per thread, whatever the count (records/tests
# 2026-11-25 to 26: -2.1 to +4.2 bytes per thread over 7,808-18,688 threads):
# a leak of 16 bytes or more per thread stands out
((grow < threads * 10)) || fail "kernel memory of scx_tick grew by $grow bytes over $threads threads (allowed: 10 per thread)"
# every churned thread woke at least twice (start, after its sleep): at least one tick each counted
((tot_ticks >= threads)) || fail "$tot_ticks ticks counted for $threads churned runners"
check_dmesg_clean

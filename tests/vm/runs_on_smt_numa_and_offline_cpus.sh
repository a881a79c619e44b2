#!/usr/bin/env bash
# guest: --cpus 8 --topology sockets=2,cores=2,threads=2 --nodes 2
# A big host's shape in a guest: 2 packages (2 NUMA nodes, 2 L3 caches) x
# 2 cores x 2 SMT threads, CPUs 5 and 6 taken offline first (possible CPUs
# beyond the online ones, as with SMT switched off, maxcpus= or a cloud
# VM's hot-pluggable vCPUs). scx_tick's tick CPUs are online, one per core
# (never two SMT siblings); 4 runners beside 8 hogs run without ejection,
# never on an offline CPU, and in 2 rounds (EEVDF, then scx_tick, in the
# same guest) they miss no more than under EEVDF plus 5 % of the ticks,
# and in no round does a runner wait more than a period past its deadline
# (issue 30's target; tickload's latest start was 28-85 ms after the tick
# was due in the 43 rounds the suite recorded to 2026-11-28, the limit
# 100, EEVDF's up to 107; past it, scx_tick's own wait from the wake-up
# decides, below). Rounds, not one run: 8 vCPUs emulated on 2
# host cores lose whole host time slices, and one run of either scheduler
# now and then misses 5-15 % (scx_tick 72 of 472 once, against 0-10 in
# most runs; EEVDF 12-63): no benchmark, the miss bound is loose.
# Locality: runners that start away from home go to another node while
# their home's has an idle CPU in under 10 % of the moves (scx_tick's
# moves_* counters), and every traced poll looked at the queues the
# model's nearest-first order names. Other work keeps to its cache: the
# hogs cross between the two L3 caches in fewer than half as many
# migrations as they make within one (a fair queue per LLC; with one
# machine-wide queue as many cross as stay: 1243-1320 against 1202-1228
# in a probe, 361-369 against 1893-1974 with it).
# Figures: where the runners ran, by node and cache; probes per decision;
# the hogs' migrations under EEVDF and scx_tick.
# Catches: nolocality onefairq
source "$(dirname "$0")/../lib.sh"
for c in 5 6; do echo 0 >/sys/devices/system/cpu/cpu$c/online; done
online=$(cat /sys/devices/system/cpu/online)
[[ $online == 0-4,7 && $(cat /sys/devices/system/cpu/possible) == 0-7 ]] ||
  fail "the guest is not the shape this scenario needs: online $online, possible $(cat /sys/devices/system/cpu/possible) (want 0-4,7 of 0-7)"
where() { # cpu: its node and L3 cache
  local d=/sys/devices/system/cpu/cpu$1
  echo "node$(basename "$(ls -d $d/node* | head -1)" | tr -dc 0-9)/l3:$(cat $d/cache/index3/shared_cpu_list)"
}
note "shape: $(for c in 0 1 2 3 4 7; do echo -n "cpu$c $(where $c) smt $(cat /sys/devices/system/cpu/cpu$c/topology/thread_siblings_list); "; done)"
[[ $(where 0) != "$(where 7)" ]] || fail "the guest has one node and cache, not two: $(where 0)"

CG=$(make_cgroup tick)
LOAD=(-n 4 --period-ms 50 --work-ms 5 --duration-s 6 --cgroup "$CG" --json)
# The hogs' migrations, counted by the kernel (a histogram of
# sched_migrate_task by source and destination CPU) while the runners run.
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
MIGRATE=/sys/kernel/tracing/events/sched/sched_migrate_task/trigger
HIST='hist:keys=orig_cpu,dest_cpu:vals=hitcount if comm ~ "stress-ng*"'
count_migrations() { # out: tickload's run, the hogs' migrations in out.hist
  echo "$HIST" >"$MIGRATE"
  "$TICKLOAD" "${LOAD[@]}" >"$1" || return 1
  cat "${MIGRATE%trigger}hist" >"$1.hist"
  echo "!$HIST" >"$MIGRATE"
}
# the hogs outlive the rounds and the traced run however slow scx_tick's loads are; ended after
stress-ng --cpu 8 --timeout 600s >/dev/null 2>&1 &
HOGS=$!
# 2 rounds, not 3 (until 2026-11-30), for the suite's time: the misses'
# margin is wide (scx_tick 14-19 of 480 a round, EEVDF 54-90)
ROUNDS=2
for r in $(seq $ROUNDS); do
  count_migrations "$WORK/eevdf-$r.json" || fail "tickload under EEVDF failed (round $r)"
  start_scx --tick-cgroup tick
  count_migrations "$WORK/scx-$r.json" || fail "tickload under scx_tick failed (round $r)"
  stop_scx INT
  [[ $SCX_RC -eq 0 ]] || fail "scx_tick exit status $SCX_RC (round $r)"
  grep "scx_tick summary:" "$WORK/scx.out" | sed "s/^/# round $r: /"
  exit_line >"$WORK/exit-$r.json"
done
# Nearest first, decision by decision: one more run traced, each poll's
# steal probes replayed through the model with this guest's spans (its
# LLC, its node, the rest): BPF looked where the model says.
start_scx --tick-cgroup tick --trace-decisions "$WORK/near.trace"
"$TICKLOAD" "${LOAD[@]}" >/dev/null || fail "tickload under traced scx_tick failed"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "traced scx_tick: exit status $SCX_RC"
"$TRACEREPLAY" "$WORK/near.trace" >"$WORK/near.replay" || { head -5 "$WORK/near.replay"; fail_catches nolocality "BPF's probes are not the model's nearest-first order"; }
note "traced: $(head -1 "$WORK/near.replay")"
grep -qE '[ (]steal [1-9]' "$WORK/near.replay" || fail "the traced run never stole: the probe order was not checked"
kill "$HOGS" 2>/dev/null || true
tick_cpus=$(sed -n 's/^scx_tick: tick CPUs: \[\(.*\)\]$/\1/p' "$WORK/scx.err" | head -1 | tr -d ' ')
note "tick CPUs: $tick_cpus"

# exit 3: other work does not keep to its cache (the rest may hold)
rc=0
python3 - "$WORK" "$tick_cpus" "$ROUNDS" <<'PY' || rc=$?
import json, sys, os
work, tick = sys.argv[1], [int(c) for c in sys.argv[2].split(",") if c]
nr = int(sys.argv[3])
online = {0, 1, 2, 3, 4, 7}
sys_cpu = "/sys/devices/system/cpu"
def read(c, f): return open(f"{sys_cpu}/cpu{c}/{f}").read().strip()
def node(c): return next(d for d in os.listdir(f"{sys_cpu}/cpu{c}") if d.startswith("node"))
l3 = {c: read(c, "cache/index3/shared_cpu_list") for c in online}
ok = bool(tick)
if not set(tick) <= online:
    print(f"# tick CPUs {tick} include offline ones"); ok = False
cores = [read(c, "topology/thread_siblings_list") for c in tick]
if len(set(cores)) != len(cores):
    print(f"# two tick CPUs are SMT siblings: {tick} (siblings {cores})"); ok = False
rounds = [tuple(json.load(open(f"{work}/{n}-{r}.json")) for n in ("eevdf", "scx")) for r in range(1, nr + 1)]
ran = {}
for _, scx in rounds:
    for runner in scx["runners"]:
        for c, n in runner["cpus"].items():
            ran[int(c)] = ran.get(int(c), 0) + n
if not set(ran) <= online:
    print(f"# runners ran on offline CPUs: {sorted(set(ran) - online)}"); ok = False
by = {}
for c, n in ran.items():
    k = f"{node(c)}/l3:{l3[c]}"
    by[k] = by.get(k, 0) + n
print(f"# ticks started per node/cache under scx_tick: {by}; per CPU {dict(sorted(ran.items()))}")
for r, (eevdf, scx) in enumerate(rounds, 1):
    print(f"# round {r}: misses EEVDF {eevdf['misses']} of {eevdf['ticks']}, scx_tick {scx['misses']} of {scx['ticks']}; "
          f"latest tick start {scx['lateness_quantiles_ms'][-1]:.1f} ms (EEVDF {eevdf['lateness_quantiles_ms'][-1]:.1f} ms)")
total = lambda i, k: sum(r[i][k] for r in rounds)
ticks, misses, eevdf_misses = total(1, "ticks"), total(1, "misses"), total(0, "misses")
if ticks == 0 or misses > eevdf_misses + ticks / 20:
    print(f"# scx_tick missed {misses} of {ticks} ticks in {nr} rounds, more than EEVDF's {eevdf_misses} + 5 % of the ticks"); ok = False
# Locality, from scx_tick's own counters: a runner started away from its
# home goes to another node while a CPU of its home's node is idle
# (moves_far_near_free) in under 10 % of the moves that had such a CPU
# near. With 8 hogs the home node's CPUs are rarely idle, and another
# node's idle CPU, or one that took a late runner, is then the right
# place: measured far moves 325-388 of 552-615 per 3 rounds (2 since), of them with
# an idle CPU near home 0 (the bound leaves 10 % to races: idle states
# change between the decision and the count). Probes per decision: at
# most 2 x MAX_PROBES = 16 in one decision by construction; measured
# 1.92-2.04 on average (bound 4).
exits = [json.load(open(f"{work}/exit-{r}.json")) for r in range(1, nr + 1)]
moves = {k: sum(e[f"moves_{k}"] for e in exits) for k in ("llc", "node", "far", "far_near_free")}
near = moves["llc"] + moves["node"]
decisions, probes = sum(e["decisions"] for e in exits), sum(e["probes"] for e in exits)
share = near / max(1, near + moves["far_near_free"])
print(f"# moves away from home: {moves}; near share where a near CPU was free {share:.2f}; "
      f"probes per decision {probes / max(1, decisions):.2f} ({probes} / {decisions})")
if near + moves["far_near_free"] < 30:
    print(f"# only {near + moves['far_near_free']} moves with a CPU free near home: too few to judge locality"); ok = False
elif share < 0.9:
    print(f"# {moves['far_near_free']} runners went to another node while their home's had a free CPU, against {near} that stayed: under 90 %"); ok = False
if decisions == 0 or probes > 4 * decisions:
    print(f"# {probes} probes for {decisions} decisions: more than 4 on average"); ok = False
# Other work keeps to its cache: a fair queue per LLC, taken from another
# LLC's only when that one waited a slice longer (here often: both CPUs of
# the second cache are tick CPUs). With one queue for the machine a hog
# goes to whichever CPU frees first, and about as many migrations cross
# caches as stay in one.
import re
def migrations(name):
    within = across = 0
    for r in range(1, nr + 1):
        text = open(f"{work}/{name}-{r}.json.hist").read()
        for a, b, n in re.findall(r"orig_cpu:\s*(\d+),?\s+dest_cpu:\s*(\d+)\s*\}\s*hitcount:\s*(\d+)", text):
            if l3[int(a)] == l3[int(b)]: within += int(n)
            else: across += int(n)
    return within, across
(ew, ea), (sw, sa) = migrations("eevdf"), migrations("scx")
cache_ok = True
other, far, looked, started, beside = (sum(e[k] for e in exits) for k in ("dispatch_other", "other_far", "other_probes", "other_started", "other_beside_runner"))
print(f"# the hogs' migrations in {nr} rounds: EEVDF {ew} within a cache, {ea} across; scx_tick {sw} within, {sa} across; "
      f"other work taken from another cache's queue {far} of {other}, queues looked at per dispatch {looked / max(1, other):.2f}; "
      f"other work started beside a running runner on its core {beside} of {started}")
if sw + sa < 100:
    print(f"# only {sw + sa} migrations of the hogs under scx_tick: too few to judge their cache"); ok = False
elif 2 * sa > sw:
    print(f"# the hogs crossed caches {sa} times against {sw} within one: other work does not keep to its cache"); cache_ok = False
if looked > 8 * other:
    print(f"# {looked} fair queues looked at for {other} dispatches: more than 8 each"); ok = False
# No runner waits more than a period past its deadline, in any round. From
# the workload's side: its latest tick start. Where that is past the limit
# (once in CI, 129.7 ms: the 8 emulated vCPUs lose whole host slices, and a
# timer on a vCPU the host does not run fires late), scx_tick's own
# longest wait from the wake-up to the CPU decides: the time the runner
# was runnable and waited for a scheduler.
limit = rounds[0][1]["config"]["deadline_ms"] + rounds[0][1]["config"]["period_ms"]
for r, (_, scx) in enumerate(rounds, 1):
    latest, waited = scx["lateness_quantiles_ms"][-1], max(g["lateness_max_us"] for g in exits[r - 1]["groups"].values()) / 1000
    if latest > limit and waited > limit:
        print(f"# round {r}: a runner waited {waited:.1f} ms from its wake-up to a CPU, more than a period past its deadline ({limit:.0f} ms)"); ok = False
    elif latest > limit:
        print(f"# round {r}: a tick started {latest:.1f} ms after it was due, but no runner waited more than {waited:.1f} ms from its wake-up (the timer fired late)")
sys.exit(3 if not cache_ok else 0 if ok else 1)
PY
((rc != 3)) || fail_catches onefairq "other work does not keep to its cache (see above)"
((rc == 0)) || fail "see above"
check_dmesg_clean

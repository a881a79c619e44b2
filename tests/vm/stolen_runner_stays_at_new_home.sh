#!/usr/bin/env bash
# Homes move: two runners forced onto one home (tick CPU 1), both running
# there (allowed CPU 1 only), then allowed CPUs 1 and 2, tick CPU 2 busy
# with other work. The runner that waits is predicted late, so tick CPU 2
# takes it (a steal), and CPU 2 becomes its home (it homes two runners
# fewer): it is not stolen again tick after tick. With fixed homes it would
# be stolen every tick (~100 steals in 5 s). (Under emulation a vCPU stall
# can make a runner late and move it once more; a few such moves pass.)
# Both start on CPU 1: a runner away from a shared home stays where it
# slept (vm/runner_away_from_shared_home_stays), so one left on CPU 2 would
# never wait at CPU 1 to be stolen.
# Catches: nosteal
# guest: shared
source "$(dirname "$0")/../lib.sh"
need bpftool # it forces both homes onto one CPU
CG=$(make_cgroup tick)
start_scx --tick-cpus 1,2 --tick-cgroup tick
taskset -c 2 stress-ng --cpu 1 --timeout 9s >/dev/null 2>&1 &
taskset -c 1 "$TICKLOAD" -n 2 --work-ms 8 --duration-s 7 --cgroup "$CG" --json >"$WORK/load" &
load=$!
sleep 1.5 # the pinning scan has given both runners their (different) homes
le32() { printf '%02x %02x %02x %02x' $(($1 & 255)) $(($1 >> 8 & 255)) $(($1 >> 16 & 255)) $(($1 >> 24 & 255)); }
for t in $(ls /proc/$load/task | grep -vx $load); do
  # shellcheck disable=SC2046
  bpftool map update name home_cpus key hex $(le32 "$t") value hex $(le32 1) || fail "bpftool map update failed"
done
note "both runners' homes set to CPU 1 by hand"
taskset -a -p -c 1,2 $load >/dev/null || fail "taskset failed"
wait $load || fail "tickload failed"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
read_totals
note "steals: $tot_dispatch_stolen of $tot_ticks ticks"
((tot_dispatch_stolen >= 1)) || fail_catches nosteal "the runner that waited behind the other was never stolen"
((tot_dispatch_stolen <= 10)) || fail "$tot_dispatch_stolen steals: the stolen runner did not stay at its new home"
check_dmesg_clean

# The table of bad inputs (sourced by tests/host/bad_input_is_refused.sh and
# tests/vm/bad_input_changes_nothing.sh, after tests/lib.sh): every flag,
# subcommand and config key with wrong types, out-of-range values,
# non-existent CPUs and cgroups and unreadable files. Each row is
# "ARGS|FRAGMENT": ARGS split on spaces (no globbing), FRAGMENT must appear in
# the first line of stderr.

NCPU=$(nproc)
if [[ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" == cgroup2fs ]]; then
  NO_CGROUP="does not exist" OUTSIDE="not below the cgroup2 mount" NOT_DIR="is not a cgroup directory"
else # a host without cgroup2 refuses every tick group first
  NO_CGROUP="not a cgroup v2 mount" OUTSIDE=$NO_CGROUP NOT_DIR=$NO_CGROUP
fi

toml() { printf '%b' "$2" >"$WORK/$1.toml"; }
toml typo 'steal_treshold_ms = 3\n'
toml syntax 'steal_threshold_ms = \n'
toml garbage '\xff\xfe\x00binary'
toml threshold_type 'steal_threshold_ms = "fast"\n'
toml threshold_range 'steal_threshold_ms = -1\n'
toml threshold_nan 'steal_threshold_ms = nan\n'
toml buffer_type 'run_tasks_buffer_ms = false\n'
toml buffer_range 'run_tasks_buffer_ms = 101\n'
toml slice_type 'slice_ms = "5"\n'
toml slice_range 'slice_ms = 0\n'
toml stealing_type 'work_stealing = 1\n'
toml midtick_type 'enableMidTickTasks = "no"\n'
toml pin_type 'pin = 1\n'
toml pin_value 'pin = "firm"\n'
toml cpus_type 'tick_cpus = true\n'
toml cpus_float 'tick_cpus = [1.5]\n'
toml cpus_zero 'tick_cpus = 0\n'
toml cpus_missing "tick_cpus = [$NCPU]\n"
toml cpus_huge 'tick_cpus = "0-99999999999"\n'
toml cpus_negative 'tickRegionAffinity = [-1]\n'
toml group_table 'group = 3\n'
toml group_nocgroup '[[group]]\nperiod_ms = 50\n'
toml group_cgroup_type '[[group]]\ncgroup = 5\n'
toml group_period_type '[[group]]\ncgroup = "t"\nperiod_ms = "50"\n'
toml group_period_range '[[group]]\ncgroup = "t"\nperiod_ms = 0\n'
toml group_deadline_range '[[group]]\ncgroup = "t"\ndeadline_ms = 201\n'
toml group_cpus_type '[[group]]\ncgroup = "t"\ncpus = 1.5\n'
toml group_unknown '[[group]]\ncgroup = "t"\nspeed = 1\n'
toml group_missing '[[group]]\ncgroup = "no/such/group"\n'
toml missing_value 'missing_cgroup = "later"\n'
toml seed_affinity_type 'enableAffinitySchedulerCpuAffinity = "yes"\n'
toml threads_noname '[[group]]\nprocess = "java"\n'
toml threads_long_name '[[group]]\nname = "w"\nprocess = "java"\nthread_name = "^Region Scheduler Thread"\n'
mkdir -p "$WORK/dir.toml"
toml unreadable 'steal_threshold_ms = 2\n'
chmod 000 "$WORK/unreadable.toml"
GROUPS17=$(for i in $(seq 17); do printf -- '--tick-cgroup g%s ' "$i"; done)

BAD_INPUTS=(
  # --config
  "--config $WORK/missing.toml|cannot read the configuration file"
  "--config $WORK/dir.toml|cannot read the configuration file"
  "--config $WORK/garbage.toml|cannot read the configuration file"
  "--config $WORK/syntax.toml|line 1 (\`steal_threshold_ms =\`)"
  "--config $WORK/typo.toml|unknown field \`steal_treshold_ms\`"
  "--config $WORK/threshold_type.toml|steal_threshold_ms = \"fast\""
  "--config $WORK/threshold_range.toml|steal_threshold_ms (--steal-threshold-ms) = -1: out of range"
  "--config $WORK/threshold_nan.toml|steal_threshold_ms (--steal-threshold-ms) = NaN: out of range"
  "--config $WORK/buffer_type.toml|run_tasks_buffer_ms = false"
  "--config $WORK/buffer_range.toml|run_tasks_buffer_ms (--run-tasks-buffer-ms) = 101: out of range"
  "--config $WORK/slice_type.toml|slice_ms = \"5\""
  "--config $WORK/slice_range.toml|slice_ms (--slice-ms) = 0: out of range"
  "--config $WORK/stealing_type.toml|work_stealing = 1"
  "--config $WORK/midtick_type.toml|enableMidTickTasks = \"no\""
  "--config $WORK/pin_type.toml|pin = 1"
  "--config $WORK/pin_value.toml|pin = \"firm\": allowed"
  "--config $WORK/cpus_type.toml|tick_cpus = true"
  "--config $WORK/cpus_float.toml|tick_cpus = [1.5]"
  "--config $WORK/cpus_zero.toml|tick_cpus = 0: allowed"
  "--config $WORK/cpus_missing.toml|CPU $NCPU does not exist or is offline"
  "--config $WORK/cpus_huge.toml|CPU 99999999999 is out of range"
  "--config $WORK/cpus_negative.toml|CPU id -1 is negative"
  "--config $WORK/group_table.toml|group = 3"
  "--config $WORK/group_nocgroup.toml|no runners given"
  "--config $WORK/group_cgroup_type.toml|cgroup = 5"
  "--config $WORK/group_period_type.toml|period_ms = \"50\""
  "--config $WORK/group_period_range.toml|period_ms = 0: out of range"
  "--config $WORK/group_deadline_range.toml|deadline_ms = 201: allowed: above 0 and at most 4 periods (200 ms)"
  "--config $WORK/group_cpus_type.toml|cpus = 1.5"
  "--config $WORK/group_unknown.toml|unknown field \`speed\`"
  "--missing-cgroup refuse --config $WORK/group_missing.toml|$NO_CGROUP"
  "--config $WORK/missing_value.toml|missing_cgroup = \"later\": allowed"
  "--config $WORK/seed_affinity_type.toml|enableAffinitySchedulerCpuAffinity = \"yes\""
  "--config $WORK/threads_noname.toml|needs a name"
  "--config $WORK/threads_long_name.toml|first 15 bytes"
  "--config|a value is required for '--config <FILE>'"
  # --tick-cgroup
  "--missing-cgroup refuse --tick-cgroup no/such/group|$NO_CGROUP"
  "--missing-cgroup later|invalid value 'later' for '--missing-cgroup"
  "--tick-threads w,thread=^Tick|needs a process or cmdline too"
  "--tick-threads w,process=(|not a valid regular expression"
  "--tick-threads w,speed=1|unknown option \"speed\""
  "--tick-threads process=java|the group name must come first"
  "--stats-json-append|the following required arguments were not provided"
  "--tick-cgroup /tmp|$OUTSIDE"
  "--tick-cgroup /sys/fs/cgroup/cgroup.procs|$NOT_DIR"
  "--tick-cgroup ,period=5|the cgroup path must come first"
  "--tick-cgroup tick,period=0|period_ms = 0: out of range"
  "--tick-cgroup tick,period=fast|period=\"fast\": not a number"
  "--tick-cgroup tick,period=1e400|not a finite number"
  "--tick-cgroup tick,deadline=201|deadline_ms = 201: allowed"
  "--tick-cgroup tick,deadline=0|deadline_ms = 0: allowed"
  "--tick-cgroup tick,cpus=|no CPU given"
  "--tick-cgroup tick,cpus=3-1|runs backwards"
  "--tick-cgroup tick,speed=1|unknown option \"speed\""
  "--cgroup-root /tmp --tick-cgroup tick|/tmp is not a cgroup v2 mount"
  "--tick-cpus 1-1 --tick-cgroup tick,cpus=0|CPU 0 is not a tick CPU"
  "$GROUPS17|17 tick groups given; allowed: at most 16"
  # --tick-cpus
  "--tick-cpus 0|allowed: a count of 1 or more"
  "--tick-cpus 999|tick CPUs requested"
  "--tick-cpus $NCPU-$((NCPU + 3))|does not exist or is offline"
  "--tick-cpus 0-$((NCPU - 1))|leave at least one"
  "--tick-cpus 1,1|listed twice"
  "--tick-cpus 3-1|runs backwards"
  "--tick-cpus x|allowed: ids and ranges"
  "--tick-cpus 0-99999999999|is out of range; allowed: CPU ids 0 to 1023"
  "--tick-cpus 0-18446744073709551615|is out of range"
  # times
  "--steal-threshold-ms -1|steal_threshold_ms (--steal-threshold-ms) = -1: out of range"
  "--steal-threshold-ms nan|steal_threshold_ms (--steal-threshold-ms) = NaN: out of range"
  "--steal-threshold-ms abc|invalid value 'abc' for '--steal-threshold-ms <MS>'"
  "--steal-threshold-ms 60 --tick-cgroup tick|below the tick period"
  "--run-tasks-buffer-ms 500|run_tasks_buffer_ms (--run-tasks-buffer-ms) = 500: out of range"
  "--run-tasks-buffer-ms -0.5|run_tasks_buffer_ms (--run-tasks-buffer-ms) = -0.5: out of range"
  "--run-tasks-buffer-ms x|invalid value 'x' for '--run-tasks-buffer-ms <MS>'"
  "--slice-ms 0|slice_ms (--slice-ms) = 0: out of range"
  "--slice-ms inf|slice_ms (--slice-ms) = inf: out of range"
  "--slice-ms 5s|invalid value '5s' for '--slice-ms <MS>'"
  "--watchdog-ms 50|--watchdog-ms 50: allowed: 0 (the kernel's default, 30 s) or 100 to 30000"
  "--watchdog-ms 40000|--watchdog-ms 40000: allowed"
  "--watchdog-ms 150|then for the runner on its CPU to end its slice (up to the longest tick deadline, 0 ms): a watchdog under twice that ejects scx_tick under load; allowed: 0 (the kernel's default, 30 s) or 200 to 30000"
  "--watchdog-ms 5s|invalid value '5s' for '--watchdog-ms <MS>'"
  # switches and choices
  "--pin firm|invalid value 'firm' for '--pin <PIN>'"
  "--no-work-stealing=yes|unexpected value 'yes' for '--no-work-stealing'"
  "--no-mid-tick=1|unexpected value '1' for '--no-mid-tick'"
  "--tick-speed 3|unexpected argument '--tick-speed'"
  # outputs
  "--stats -1|--stats -1: allowed"
  "--stats nan|--stats NaN: allowed"
  "--stats x|invalid value 'x' for '--stats <SECS>'"
  "--stats-json $WORK/no/such/dir/s.json|does not exist"
  "--stats-json $WORK|is a directory"
  "--metrics-addr 0.0.0.0:9470|only loopback addresses (127.0.0.0/8, ::1) are allowed unless --metrics-public"
  "--metrics-public|the following required arguments were not provided"
  "--metrics-addr localhost|expected IP:PORT"
  "--metrics-addr 127.0.0.1:99999|expected IP:PORT"
  "--monitor 0|--monitor 0: allowed"
  "--monitor -1|--monitor -1: allowed"
  "--monitor x|invalid value 'x' for '--monitor <SECS>'"
  # what the userspace policy mode cannot do, and its checks before loading
  "--userspace --pin hard|pin = hard (--pin): not available with --userspace"
  "--userspace --stats-json $WORK|is a directory"
  "--userspace --metrics-addr 127.0.0.1:9470|--metrics-addr: not available with --userspace"
  "--userspace --monitor 1|--monitor: not available with --userspace"
  "--userspace --steal-threshold-ms -1|steal_threshold_ms (--steal-threshold-ms) = -1: out of range"
  "--userspace --missing-cgroup refuse --tick-cgroup no/such/group|$NO_CGROUP"
  "--userspace --tick-threads w,process=java|--tick-threads (groups of threads selected by name): not available with --userspace"
  "--userspace=1|unexpected value '1' for '--userspace'"
  "--exit-dump-len -1|invalid value '-1' for '--exit-dump-len"
  "--exit-dump-len 1e3|invalid value '1e3' for '--exit-dump-len"
  # subcommands
  "topology --tick-cpus 0|a count of 0 leaves no CPU"
  "topology --tick-cpus 999|999 tick CPUs requested"
  "topology --tick-cpus x|expected a count of tick CPUs"
  "check-config $WORK/missing.toml|cannot read the configuration file"
  "check-config $WORK/dir.toml|cannot read the configuration file"
  "check-config $WORK/typo.toml|unknown field"
  "check-config|the following required arguments were not provided"
  "tag --group ../x --pid $$|--group \"../x\": allowed"
  "tag --group w|the following required arguments were not provided"
  "tag --group w --pid 999999|process 999999 does not exist"
  "tag --group w --tid 999999|thread 999999 does not exist"
  "tag --group w --tid abc|invalid value 'abc' for '--tid"
  "tag --group w --pid $$ --thread-name (|not a valid regular expression"
  "tag --group w --pid $$ --thread-name ^NoSuchThread$|no thread of process $$ matches"
  "untag --group no-such-group --pid $$|tick group no-such-group does not exist"
)

# Run every row; `after_case ARGS` (optional) checks more after each one.
run_bad_inputs() {
  local c args want rc n=0
  set -f
  for c in "${BAD_INPUTS[@]}"; do
    args=${c%%|*} want=${c#*|}
    set +e
    # shellcheck disable=SC2086
    # bounded: an accepted input would run the scheduler until stopped
    timeout 60 "$SCX" $args >"$WORK/out" 2>"$WORK/err" </dev/null
    rc=$?
    set -e
    ((rc != 0 && rc != 124)) || fail "'$args' was accepted: $(head -3 "$WORK/err")"
    ((rc < 128)) || fail "'$args' died with signal $((rc - 128)): $(cat "$WORK/err")"
    # a run's bad flags or file: exit 2, which the service does not retry
    if [[ $args == --* ]]; then
      ((rc == 2)) || fail "'$args': exit $rc, want 2 (bad input): $(cat "$WORK/err")"
    fi
    head -1 "$WORK/err" | grep -qF -- "$want" || fail "'$args': first line lacks '$want': $(cat "$WORK/err")"
    # scx_tick's own errors are one line; clap's usage errors start with one
    if head -1 "$WORK/err" | grep -q '^scx_tick: error:'; then
      (($(wc -l <"$WORK/err") == 1)) || fail "'$args': more than one line: $(cat "$WORK/err")"
    else
      head -1 "$WORK/err" | grep -q '^error: ' || fail "'$args': unexpected output: $(cat "$WORK/err")"
    fi
    if declare -F after_case >/dev/null; then after_case "$args"; fi
    n=$((n + 1))
  done
  set +f
  # an unreadable file, as a user without the rights to read it
  if id nobody >/dev/null 2>&1; then
    set +e
    setpriv --reuid=nobody --regid=nogroup --clear-groups "$SCX" --config "$WORK/unreadable.toml" >"$WORK/out" 2>"$WORK/err"
    rc=$?
    set -e
    ((rc != 0)) && grep -q "cannot read the configuration file .*Permission denied" "$WORK/err" ||
      fail "an unreadable config file: exit $rc: $(cat "$WORK/err")"
    n=$((n + 1))
  fi
  BAD_INPUTS_RUN=$n
}

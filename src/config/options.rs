//! The options, declared once. [`options!`] reads this table and hands it
//! to a generator; each part of the configuration generates its share,
//! as `output/stats.rs` does with the statistics.
//!
//! An entry of `before`, `scheduler` and `after` is one run flag: its help
//! text (the doc comment), its clap attributes, its name and type, and,
//! after `=>`, where it goes:
//!
//! - a `scheduler` option is also a key of the TOML file: its field in
//!   [`Config`](super::Config) (named as the key) with its default, its
//!   kind, and its field in the [`Plan`](super::plan::Plan). The kind says
//!   how the flag is read (`cli`) and how the plan value is checked and
//!   made (`plan`): `ms(lo, hi)` a time in ms within a range, in ns in the
//!   plan; `switch` on by default, its `--no-...` flag turns it off;
//!   `choice` one value of an enum; `cpus` the tick CPUs, resolved against
//!   the machine.
//! - another flag goes to the plan's `output` part (statistics, logging,
//!   traces) or its `kernel` part (what sched_ext and cgroup2 are told),
//!   or, `args`, is read from the arguments themselves (the file, the
//!   groups, the modes).
//!
//! The `file` section is the TOML file's schema, in the order an unknown
//! key's error lists the keys: each key, `or` its Canvas camelCase alias
//! (or `=` the name it is written as), its type, and how its value is read
//! (`file`): as it is, `parsed` from a string, a `cpu_value`, or
//! `canvas_pin`, Canvas's switch for `pin`.
//!
//! From it come: the flags (`cli::RunArgs`, in this order, which is the
//! order of `--help`) and each over the file's value; the file's schema
//! with the aliases (`file::FileConfig`) and each key over the default;
//! the `Config` fields and defaults; the range checks; the `Plan` fields;
//! the plan's `Output` and `Kernel` parts; the keys the fuzz tests try
//! (the flags they try are clap's). A new scheduler option of a known
//! kind is its entry in `scheduler`, its key in `file`, and the line that
//! uses its plan field (for BPF: one `rodata` line in `run/scheduler.rs`).
//! Tick groups (`[[group]]`, `--tick-cgroup`, `--tick-threads`) have their
//! own syntax, in `parse` and `file`.

/// The table: `options!(generator)` hands it, read once (`@read`), to
/// `generator!`. Names in it (`MAX_PERIOD_MS`, the enums) resolve where a
/// generator uses them.
macro_rules! options {
    ($generate:ident) => {
        options! { @read $generate
            before {
                /// TOML configuration file; flags given as well override its values.
                #[arg(long, value_name = "FILE")]
                config: Option<PathBuf> => args;

                /// A tick group: a cgroup v2 path (relative to the cgroup2 mount, or
                /// absolute) whose threads, and those of every cgroup below it, are tick
                /// runners. Options follow after commas:
                /// `PATH[,period=MS][,deadline=MS][,cpus=LIST][,tick=thread|process]`,
                /// defaults period=50, deadline=period (at most 4 periods: a server that
                /// catches up on late ticks tolerates that much), cpus=all tick CPUs, tick=thread
                /// (each runner thread its own tick loop; `process`: one tick per
                /// process per period, shared by its threads). Repeatable.
                #[arg(long = "tick-cgroup", value_name = "SPEC")]
                tick_cgroups: Vec<String> => args;

                /// A tick group of threads selected by name, found by scx_tick itself
                /// (restarted processes and new threads too) and moved into a threaded
                /// child cgroup of their process's own cgroup while it runs:
                /// `NAME,process=RE|cmdline=RE[,thread=RE][,period=MS][,deadline=MS][,cpus=LIST][,tick=thread|process]`.
                /// `process` matches the process name, `cmdline` its command line,
                /// `thread` the thread name (the kernel keeps its first 15 bytes).
                /// `period` and `deadline` as for --tick-cgroup (the deadline at most 4
                /// periods). `tick` defaults to `process` without `thread` (every thread of a
                /// server: one tick per step), else to `thread`. Repeatable.
                #[arg(long = "tick-threads", value_name = "SPEC")]
                tick_threads: Vec<String> => args;
            }
            scheduler {
                /// A tick group's cgroup does not exist: wait for it (default), create
                /// it, or refuse to start.
                #[arg(long, value_enum)]
                missing_cgroup: Option<MissingCgroup>
                    => missing_cgroup: MissingCgroup = MissingCgroup::Wait, choice,
                    plan missing_cgroup: MissingCgroup;

                /// Tick CPUs: a count (`4`) or a list with ranges (`2,4,6-7`).
                /// Default: chosen from the topology. (configuration key: tick_cpus,
                /// or tickRegionAffinity)
                #[arg(long, value_name = "N|LIST")]
                tick_cpus: Option<String>
                    => tick_cpus: TickCpus = TickCpus::Auto, cpus,
                    plan tick_cpus: Vec<usize>;

                /// Start lateness after which another tick CPU may steal a queued
                /// runner, in ms. (configuration key: steal_threshold_ms, or
                /// stealThresholdMillis)
                #[arg(long, value_name = "MS", allow_negative_numbers = true)]
                steal_threshold_ms: Option<f64>
                    => steal_threshold_ms: f64 = 3.0, ms(0.0, MAX_PERIOD_MS),
                    plan steal_threshold_ns: u64;

                /// Other work lent a tick CPU must end this long before the runner's
                /// predicted next wake, in ms. (configuration key: run_tasks_buffer_ms,
                /// or runTasksBufferMillis)
                #[arg(long, value_name = "MS", allow_negative_numbers = true)]
                run_tasks_buffer_ms: Option<f64>
                    => run_tasks_buffer_ms: f64 = 0.1, ms(0.0, 100.0),
                    plan run_tasks_buffer_ns: u64;

                /// Never steal runners queued on another tick CPU. (configuration key:
                /// work_stealing = false, or enableWorkStealing = false)
                #[arg(long)]
                no_work_stealing: bool
                    => work_stealing: bool = true, switch,
                    plan work_stealing: bool;

                /// Keep tick CPUs for tick runners: do not lend them to other work
                /// while runners sleep (tasks that can run nowhere else still run).
                /// (configuration key: mid_tick_tasks = false, or enableMidTickTasks =
                /// false)
                #[arg(long)]
                no_mid_tick: bool
                    => mid_tick_tasks: bool = true, switch,
                    plan mid_tick_tasks: bool;

                /// Keep runners on their home CPU softly (the BPF policy knows it, they
                /// stay stealable) or hard (sched_setaffinity, never stolen).
                /// (configuration key: pin = "hard", or
                /// enableAffinitySchedulerCpuAffinity = true)
                #[arg(long, value_enum)]
                pin: Option<Pin>
                    => pin: Pin = Pin::Soft, choice,
                    plan pin: Pin;

                /// Time slice of other (non-tick) tasks, in ms.
                #[arg(long, value_name = "MS", allow_negative_numbers = true)]
                slice_ms: Option<f64>
                    => slice_ms: f64 = 5.0, ms(0.05, 1000.0),
                    plan slice_ns: u64;
            }
            file {
                steal_threshold_ms or "stealThresholdMillis": f64;
                run_tasks_buffer_ms or "runTasksBufferMillis": f64;
                tick_cpus or "tickRegionAffinity": CpuValue => cpu_value;
                work_stealing or "enableWorkStealing": bool;
                mid_tick_tasks or "enableMidTickTasks": bool;
                pin: String => parsed;
                /// Canvas's switch for hard pinning: true = "hard", false = "soft".
                canvas_cpu_affinity = "enableAffinitySchedulerCpuAffinity": bool => canvas_pin;
                slice_ms: f64;
                missing_cgroup: String => parsed;
            }
            after {
                /// Print statistics every N seconds while running (0: off).
                #[arg(long, value_name = "SECS", default_value_t = 0.0, allow_negative_numbers = true)]
                stats: f64 => output;

                /// Write one JSON object of statistics per interval (--stats, or 1 s)
                /// to FILE, or to stdout with `-` (stdout then carries only JSON: the
                /// live view and the exit summary go to stderr).
                #[arg(long, value_name = "FILE|-")]
                stats_json: Option<PathBuf> => output;

                /// Append to the --stats-json FILE instead of truncating it.
                #[arg(long, requires = "stats_json")]
                stats_json_append: bool => output;

                /// Leave the two histograms per group (256 buckets each) out of the
                /// --stats-json lines; the percentiles, maxima and sums stay.
                #[arg(long, requires = "stats_json")]
                stats_json_no_histograms: bool => output;

                /// Describe every statistic (JSON fields, scx_stats) and exit.
                #[arg(long)]
                help_stats: bool => args;

                /// Serve OpenMetrics text (Prometheus) on this address, e.g.
                /// 127.0.0.1:9470: a loopback address unless --metrics-public. Off by
                /// default.
                #[arg(long, value_name = "IP:PORT")]
                metrics_addr: Option<String> => output;

                /// Allow a --metrics-addr that is not loopback (e.g. 0.0.0.0:9470, for
                /// a Prometheus on another machine): the statistics (group names,
                /// counts) become readable by anyone who can reach the port.
                #[arg(long, requires = "metrics_addr")]
                metrics_public: bool => output;

                /// Do not schedule: show the statistics of the running scx_tick every
                /// SECS seconds (an scx_stats client).
                #[arg(long, value_name = "SECS", allow_negative_numbers = true)]
                monitor: Option<f64> => args;

                /// Decide the same tick-group EDF in userspace (Rust, on
                /// scx_rustland_core) instead of in BPF: for experiments and overhead
                /// comparisons. Runs scx_tick_user, installed next to scx_tick.
                #[arg(long)]
                userspace: bool => args;

                /// The sched_ext watchdog: a runnable task left waiting this many ms
                /// ejects the scheduler (the kernel's default scheduler takes over).
                /// 0: the kernel's default (30 s). At least twice the longest wait of
                /// other work: 100 ms to its owed share, then a runner's slice (up to the
                /// longest tick deadline).
                #[arg(long, value_name = "MS", default_value_t = 0, allow_negative_numbers = true)]
                watchdog_ms: i64 => kernel;

                /// Tests only: write every BPF poll for a runner (its inputs and its
                /// pick) to FILE, for `tracereplay` to check against the model.
                #[arg(long, value_name = "FILE", hide = true)]
                trace_decisions: Option<PathBuf> => output;

                /// Exit debug dump buffer length (0: the kernel default).
                #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
                exit_dump_len: u32 => kernel;

                /// More output: -v debug (home CPUs, cgroup moves, per-CPU dispatches
                /// in the live view), -vv trace and libbpf's own messages.
                #[arg(short, long, action = clap::ArgAction::Count)]
                verbose: u8 => output;

                /// Where cgroup2 is mounted.
                #[arg(long, default_value = "/sys/fs/cgroup", hide = true)]
                cgroup_root: PathBuf => kernel;
            }
        }
    };
    // Each entry into one brace group of single parts: a generator matches
    // `{ [docs] (clap) flag [type] dest }` for a flag,
    // `{ [docs] (clap) flag [type] key [type] [default] kind [range] plan [type] }`
    // for a scheduler option, `{ [docs] key [alias] [rename] [type] [read] }`
    // for a file key.
    (@read $generate:ident
        before { $(
            $(#[doc = $bdoc:literal])* #[arg $barg:tt] $bflag:ident: $bty:ty => $bdest:ident;
        )* }
        scheduler { $(
            $(#[doc = $doc:literal])* #[arg $arg:tt] $flag:ident: $fty:ty
                => $key:ident: $ty:ty = $default:expr, $kind:ident $(($($range:expr),*))?,
                plan $plan:ident: $pty:ty;
        )* }
        file { $(
            $(#[doc = $fdoc:literal])*
            $fkey:ident $(or $alias:literal)? $(= $rename:literal)?: $fkty:ty $(=> $read:ident)?;
        )* }
        after { $(
            $(#[doc = $adoc:literal])* #[arg $aarg:tt] $aflag:ident: $aty:ty => $adest:ident;
        )* }
    ) => {
        $generate! {
            before [$({ [$(#[doc = $bdoc])*] $barg $bflag [$bty] $bdest })*]
            scheduler [$({
                [$(#[doc = $doc])*] $arg $flag [$fty]
                $key [$ty] [$default] $kind [$($($range),*)?] $plan [$pty]
            })*]
            file [$({ [$(#[doc = $fdoc])*] $fkey [$($alias)?] [$($rename)?] [$fkty] [$($read)?] })*]
            after [$({ [$(#[doc = $adoc])*] $aarg $aflag [$aty] $adest })*]
        }
    };
}

pub(crate) use options;

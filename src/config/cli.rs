//! Command-line interface. Flag names follow the design vocabulary; each
//! help text names the configuration key a flag mirrors (and its camelCase
//! alias).

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Parser, Subcommand};

use super::options::options;
use super::parse::{parse_group_spec, parse_threads_spec, parse_tick_cpus};
use super::{Config, MissingCgroup, Pin};

#[derive(Debug, Parser)]
#[command(
    name = "scx_tick",
    version = crate::version(),
    about = "Earliest-deadline-first sched_ext scheduling for tick-driven servers",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the CPU topology table and the tick CPUs scx_tick would choose.
    Topology(TopologyArgs),
    /// Check a configuration file (only the file: flags are refused) without
    /// loading anything.
    CheckConfig(CheckConfigArgs),
    /// Move threads into a tick group, creating the threaded cgroup it needs.
    Tag(TagArgs),
    /// Move tagged threads out of their tick group again.
    Untag(TagArgs),
    /// Watch a running server's threads and propose the tick group that
    /// selects its tick threads (those that work every tick, and those that
    /// wake at its tick rate).
    Suggest(SuggestArgs),
    /// List the processes and threads a configuration selects right now
    /// (a file, or the same flags as a run), group by group, and why a
    /// group selects nothing, without loading anything.
    Match(Box<MatchArgs>),
}

#[derive(Debug, Args)]
pub struct MatchArgs {
    /// The configuration file (as --config FILE).
    pub file: Option<PathBuf>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Args)]
pub struct SuggestArgs {
    /// The server's process id.
    #[arg(long)]
    pub pid: u32,
    /// How long to watch it, in seconds.
    #[arg(long, default_value_t = 5.0)]
    pub seconds: f64,
    /// The server's tick period in ms.
    #[arg(long, default_value_t = 50.0)]
    pub period_ms: f64,
    /// The name of the proposed tick group.
    #[arg(long, default_value = "server")]
    pub name: String,
}

#[derive(Debug, Args)]
pub struct CheckConfigArgs {
    /// The TOML configuration file.
    pub file: PathBuf,
    /// Where cgroup2 is mounted.
    #[arg(long, default_value = "/sys/fs/cgroup", hide = true)]
    pub cgroup_root: PathBuf,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("who").required(true).args(["pid", "tid"])))]
pub struct TagArgs {
    /// Tick group name: threads go to <cgroup2>/scx_tick/NAME/ticks.
    #[arg(long)]
    pub group: String,
    /// The process whose threads to (un)tag (all of them unless --thread-name).
    #[arg(long)]
    pub pid: Option<u32>,
    /// Only threads whose name matches this regular expression.
    #[arg(long, requires = "pid")]
    pub thread_name: Option<String>,
    /// Individual thread ids.
    #[arg(long, num_args = 1..)]
    pub tid: Vec<u32>,
    /// Where cgroup2 is mounted.
    #[arg(long, default_value = "/sys/fs/cgroup", hide = true)]
    pub cgroup_root: PathBuf,
}

#[derive(Debug, Args)]
pub struct TopologyArgs {
    /// Number of tick CPUs to choose (default: every physical core but CPU 0's).
    #[arg(long)]
    pub tick_cpus: Option<String>,
    /// Print JSON instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// The run's flags (`RunArgs`, in the table's order: the order of
/// `--help`), and each over the file's value of its option.
macro_rules! run_args {
    (
        before [$({ [$(#[$bdoc:meta])*] $barg:tt $bflag:ident [$bty:ty] $bdest:ident })*]
        scheduler [$({
            [$(#[$doc:meta])*] $arg:tt $flag:ident [$fty:ty] $key:ident $ty:tt $default:tt
            $kind:ident $($plan:tt)*
        })*]
        file $file:tt
        after [$({ [$(#[$adoc:meta])*] $aarg:tt $aflag:ident [$aty:ty] $adest:ident })*]
    ) => {
        #[derive(Debug, Clone, Args, Default)]
        pub struct RunArgs {
            $($(#[$bdoc])* #[arg $barg] pub $bflag: $bty,)*
            $($(#[$doc])* #[arg $arg] pub $flag: $fty,)*
            $($(#[$adoc])* #[arg $aarg] pub $aflag: $aty,)*
        }

        impl Config {
            /// The flags given over the values so far; the run's other
            /// flags into their part.
            fn merge_flags(&mut self, args: &RunArgs) -> Result<()> {
                $(flag_over!($kind, self.$key, args.$flag);)*
                $(flag_into!($adest, self.$aflag, args.$aflag);)*
                Ok(())
            }
        }
    };
}

/// A scheduler option's flag over its value, by the option's kind.
macro_rules! flag_over {
    (switch, $value:expr, $flag:expr) => {
        $value &= !$flag
    };
    (cpus, $value:expr, $flag:expr) => {
        if let Some(s) = &$flag {
            $value = parse_tick_cpus(s)?;
        }
    };
    ($kind:ident, $value:expr, $flag:expr) => {
        if let Some(v) = $flag {
            $value = v;
        }
    };
}

/// A run flag into the plan's `output` or `kernel` part.
macro_rules! flag_into {
    (args, $self:ident.$flag:ident, $arg:expr) => {};
    ($part:ident, $self:ident.$flag:ident, $arg:expr) => {
        $self.$part.$flag = $arg.clone()
    };
}

options!(run_args);

/// The exit of scx_tick and scx_tick_user: an error is one line, whatever
/// a library put into its message. A closed stdout (`scx_tick --help-stats
/// | head`) is no error: the reader has what it wanted.
pub fn finish(result: anyhow::Result<()>) -> std::process::ExitCode {
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) if is_broken_pipe(&e) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            log::error!("{}", error_line(&e));
            std::process::ExitCode::from(exit_status(&e))
        }
    }
}

/// A bad configuration (file or flags), refused before anything is
/// loaded: exit status [`EXIT_USAGE`], as clap's usage errors, which a
/// service does not retry (the unit's `RestartPreventExitStatus`).
#[derive(Debug)]
pub struct BadConfig;

impl std::fmt::Display for BadConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("bad configuration")
    }
}

impl std::error::Error for BadConfig {}

/// Mark `e` as a bad configuration.
pub fn bad_config(e: anyhow::Error) -> anyhow::Error {
    e.context(BadConfig)
}

pub fn exit_status(e: &anyhow::Error) -> u8 {
    if e.downcast_ref::<BadConfig>().is_some() {
        EXIT_USAGE
    } else {
        EXIT_ERROR
    }
}

/// The error and its causes in one line (the marker, the outermost
/// context, left out).
fn error_line(e: &anyhow::Error) -> String {
    let skip = usize::from(e.downcast_ref::<BadConfig>().is_some());
    let msg = (e.chain().skip(skip))
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(": ");
    msg.lines().map(str::trim).collect::<Vec<_>>().join(" ")
}

/// Whether `e` is, anywhere in its chain, a write to a closed pipe (EPIPE).
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Exit statuses (README "Exit status").
pub const EXIT_ERROR: u8 = 1;
/// A command-line usage error (clap's own status) or a bad configuration.
pub const EXIT_USAGE: u8 = 2;

pub fn init_logging(verbose: u8) {
    init_logging_to(verbose, None);
}

/// Logging to `target` (stderr when None).
pub fn init_logging_to(verbose: u8, target: Option<Box<dyn std::io::Write + Send>>) {
    let level = match verbose {
        0 => log::LevelFilter::Info,
        1 => log::LevelFilter::Debug,
        _ => log::LevelFilter::Trace,
    };
    let mut builder = env_logger::Builder::new();
    if let Some(t) = target {
        builder.target(env_logger::Target::Pipe(t));
    }
    builder
        .filter_level(level)
        .parse_env("RUST_LOG")
        .format(|buf, record| {
            use std::io::Write;
            match record.level() {
                log::Level::Info => writeln!(buf, "scx_tick: {}", record.args()),
                l => writeln!(
                    buf,
                    "scx_tick: {}: {}",
                    l.as_str().to_lowercase(),
                    record.args()
                ),
            }
        })
        .init();
}

// The flags over the configuration file: here, so that the model (config)
// imports no command-line type.
impl Config {
    /// Defaults, overridden by `--config FILE`, overridden by the flags.
    pub fn from_args(args: &RunArgs) -> Result<Config> {
        let mut c = match &args.config {
            Some(path) => Config::from_file(path)?,
            None => Config::default(),
        };
        c.merge_flags(args)?;
        if !args.tick_cgroups.is_empty() || !args.tick_threads.is_empty() {
            c.groups = args
                .tick_cgroups
                .iter()
                .map(|s| parse_group_spec(s))
                .chain(args.tick_threads.iter().map(|s| parse_threads_spec(s)))
                .collect::<Result<_>>()?;
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_stdout_ends_quietly_with_success() {
        use std::io::{Error, ErrorKind};
        let epipe = || anyhow::Error::from(Error::from(ErrorKind::BrokenPipe));
        assert!(is_broken_pipe(&epipe()));
        assert!(is_broken_pipe(&epipe().context("writing the statistics")));
        assert!(!is_broken_pipe(&anyhow::Error::from(Error::from(
            ErrorKind::PermissionDenied
        ))));
        assert!(!is_broken_pipe(&anyhow::anyhow!("Broken pipe")));
        assert_eq!(finish(Err(epipe())), std::process::ExitCode::SUCCESS);
    }

    #[test]
    fn a_bad_configuration_exits_2_with_its_own_message() {
        let e = bad_config(anyhow::anyhow!("inner").context("group \"w\": period_ms = -5"));
        assert_eq!(exit_status(&e), EXIT_USAGE);
        assert_eq!(error_line(&e), "group \"w\": period_ms = -5: inner");
        let e = anyhow::anyhow!("the kernel ejected it");
        assert_eq!(exit_status(&e), EXIT_ERROR);
        assert_eq!(error_line(&e), "the kernel ejected it");
    }

    #[test]
    fn check_config_says_it_checks_a_file() {
        use clap::CommandFactory;
        let mut cli = Cli::command();
        let cmd = cli.find_subcommand_mut("check-config").unwrap();
        let about = cmd.get_about().unwrap().to_string();
        assert!(about.contains("configuration file"), "{about}");
        assert!(!about.contains("and the flags"), "{about}");
        // and it does refuse a run flag
        let e = Cli::try_parse_from(["scx_tick", "check-config", "f.toml", "--slice-ms", "2"]);
        assert!(e.is_err(), "check-config accepted a run flag");
    }

    #[test]
    fn help_names_the_configuration_keys() {
        use clap::CommandFactory;
        let help = Cli::command().render_long_help().to_string();
        assert!(!help.contains("seed"), "{help}");
        for key in [
            "tick_cpus, or tickRegionAffinity",
            "steal_threshold_ms, or stealThresholdMillis",
            "run_tasks_buffer_ms, or runTasksBufferMillis",
            "work_stealing = false, or enableWorkStealing = false",
            "mid_tick_tasks = false, or enableMidTickTasks = false",
            "pin = \"hard\", or enableAffinitySchedulerCpuAffinity = true",
        ] {
            // the help wraps lines: compare with single spaces
            let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(flat.contains(key), "help lacks {key:?}");
        }
    }

    #[test]
    fn flags_override_the_file() {
        let dir = std::env::temp_dir().join(format!("scx_tick_cfg_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("c.toml");
        std::fs::write(&file, "steal_threshold_ms = 5\n[[group]]\ncgroup = \"a\"\n").unwrap();
        let args = RunArgs {
            config: Some(file.clone()),
            steal_threshold_ms: Some(7.0),
            no_mid_tick: true,
            ..Default::default()
        };
        let c = Config::from_args(&args).unwrap();
        assert_eq!(c.steal_threshold_ms, 7.0);
        assert!(!c.mid_tick_tasks);
        assert_eq!(
            c.groups[0].cgroup.as_deref(),
            Some("a"),
            "file groups kept when no flag gives groups"
        );
        let args = RunArgs {
            config: Some(file),
            tick_cgroups: vec!["b".into()],
            ..Default::default()
        };
        assert_eq!(
            Config::from_args(&args).unwrap().groups[0]
                .cgroup
                .as_deref(),
            Some("b")
        );
        let args = RunArgs {
            config: Some(dir.join("missing.toml")),
            ..Default::default()
        };
        let e = format!("{:#}", Config::from_args(&args).unwrap_err());
        assert!(e.contains("cannot read the configuration file"), "{e}");
        std::fs::remove_dir_all(dir).ok();
    }
}

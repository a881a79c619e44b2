//! Configuration as typed data, validated before anything is loaded.
//!
//! [`Config`] is what the user asked for: the flags ([`cli`]) over the
//! TOML file ([`file`](mod@file), which mirrors the same keys), their
//! values written as [`parse`] reads them. [`Config::validate`] turns it
//! into a [`plan::Plan`] with every value checked, every default resolved
//! and every error naming the key, the bad value and what is allowed.

use std::path::PathBuf;

use anyhow::{Result, bail};

use options::options;

pub mod cli;
pub mod file;
mod options;
pub mod parse;
pub mod plan;

#[cfg(any(test, fuzzing))]
pub mod fuzz;
#[cfg(test)]
mod tests;

pub const DEFAULT_PERIOD_MS: f64 = 50.0;

#[derive(Debug, Clone, PartialEq)]
pub enum TickCpus {
    Auto,
    Count(usize),
    List(Vec<usize>),
}

/// How runners are kept on their home CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Pin {
    /// The home CPU is known to the BPF policy only: runners stay stealable.
    #[default]
    Soft,
    /// sched_setaffinity to the home CPU: never stolen.
    Hard,
}

impl std::str::FromStr for Pin {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<Pin> {
        match s {
            "soft" => Ok(Pin::Soft),
            "hard" => Ok(Pin::Hard),
            _ => bail!("pin = {s:?}: allowed: \"soft\" or \"hard\""),
        }
    }
}

/// What to do about a tick group's cgroup that does not exist (yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum MissingCgroup {
    /// Start anyway; its threads become runners once it appears (at boot,
    /// before the server's service made it).
    #[default]
    Wait,
    /// Create it (mkdir) at start.
    Create,
    /// Refuse to start.
    Refuse,
}

impl std::str::FromStr for MissingCgroup {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<MissingCgroup> {
        match s {
            "wait" => Ok(MissingCgroup::Wait),
            "create" => Ok(MissingCgroup::Create),
            "refuse" => Ok(MissingCgroup::Refuse),
            _ => bail!("missing_cgroup = {s:?}: allowed: \"wait\", \"create\" or \"refuse\""),
        }
    }
}

/// What one tick is in a group (`tick = "thread"` or `"process"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TickUnit {
    /// Each runner thread runs its own tick loop: a pool of loops
    /// (Folia's region threads, tickload's runners).
    Thread,
    /// A process's runner threads share one tick per period: a server
    /// whose step spans threads (a clock, a loop, helpers it waits on).
    /// The tick's deadline is theirs while they work in it, and ticks and
    /// misses count the server's steps.
    Process,
}

impl std::str::FromStr for TickUnit {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<TickUnit> {
        match s {
            "thread" => Ok(TickUnit::Thread),
            "process" => Ok(TickUnit::Process),
            _ => bail!(
                "tick = {s:?}: allowed: \"thread\" (each runner thread its own tick loop) \
                 or \"process\" (one tick per process, shared by its threads)"
            ),
        }
    }
}

/// Threads selected by name (regular expressions): the process by its name
/// (`/proc/PID/comm`) and/or command line, its threads by their name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThreadSelectConfig {
    pub process: Option<String>,
    pub cmdline: Option<String>,
    pub thread_name: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct GroupConfig {
    /// The group's name in statistics (default: the cgroup path); required
    /// for thread-selected groups, whose threaded child cgroup it names.
    pub name: Option<String>,
    /// A cgroup whose threads are runners, or None with `select`.
    pub cgroup: Option<String>,
    pub select: Option<ThreadSelectConfig>,
    pub period_ms: f64,
    pub deadline_ms: Option<f64>,
    /// Home CPUs for this group's runners (a subset of the tick CPUs).
    pub cpus: Option<Vec<usize>>,
    /// None: [`GroupConfig::tick_unit`] decides.
    pub tick: Option<TickUnit>,
}

/// The `Config` fields of the scheduler options, each with its default,
/// and the run's `Output` and `Kernel` parts, from the options table.
macro_rules! config_fields {
    (
        before [$($before:tt)*]
        scheduler [$({
            [$(#[doc = $doc:literal])*] $arg:tt $flag:tt $fty:tt
            $key:ident [$ty:ty] [$default:expr] $($plan:tt)*
        })*]
        file $file:tt
        after [$($after:tt)*]
    ) => {
        /// What the user asked for: the scheduler options, the tick groups
        /// and the run's other flags.
        #[derive(Debug, Clone, PartialEq)]
        pub struct Config {
            $($(#[doc = $doc])* pub $key: $ty,)*
            pub groups: Vec<GroupConfig>,
            pub output: Output,
            pub kernel: Kernel,
        }

        impl Default for Config {
            fn default() -> Self {
                Config {
                    $($key: $default,)*
                    groups: Vec::new(),
                    output: Output::default(),
                    kernel: Kernel::default(),
                }
            }
        }

        run_parts!([] [] $($before)* $($after)*);
    };
}

/// The flags marked `output` and `kernel`, sorted into their parts.
macro_rules! run_parts {
    ([$($output:tt)*] [$($kernel:tt)*]) => {
        /// Where statistics, logs and traces go (flags only).
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct Output { $($output)* }

        /// What sched_ext and cgroup2 are told, and where cgroup2 is (flags only).
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct Kernel { $($kernel)* }
    };
    ($o:tt $k:tt { $docs:tt $arg:tt $flag:ident $ty:tt args } $($rest:tt)*) => {
        run_parts!($o $k $($rest)*);
    };
    ([$($o:tt)*] $k:tt { [$(#[$doc:meta])*] $arg:tt $flag:ident [$ty:ty] output } $($rest:tt)*) => {
        run_parts!([$($o)* $(#[$doc])* pub $flag: $ty,] $k $($rest)*);
    };
    ($o:tt [$($k:tt)*] { [$(#[$doc:meta])*] $arg:tt $flag:ident [$ty:ty] kernel } $($rest:tt)*) => {
        run_parts!($o [$($k)* $(#[$doc])* pub $flag: $ty,] $($rest)*);
    };
}

options!(config_fields);

impl GroupConfig {
    /// A group of every thread in `cgroup`, with the default period.
    pub fn of_cgroup(cgroup: &str) -> GroupConfig {
        GroupConfig {
            name: None,
            cgroup: Some(cgroup.to_string()),
            select: None,
            period_ms: DEFAULT_PERIOD_MS,
            deadline_ms: None,
            cpus: None,
            tick: None,
        }
    }

    /// One tick per thread, unless the group says otherwise or selects
    /// whole processes (a process or command line and no thread name:
    /// "this process is my server", whose step spans its threads).
    pub fn tick_unit(&self) -> TickUnit {
        self.tick.unwrap_or(match &self.select {
            Some(s) if s.thread_name.is_none() => TickUnit::Process,
            _ => TickUnit::Thread,
        })
    }

    /// How errors name this group.
    fn what(&self) -> String {
        match (&self.name, &self.cgroup) {
            (_, Some(c)) => format!("group {c:?}"),
            (Some(n), None) => format!("group {n:?}"),
            (None, None) => "group".into(),
        }
    }
}

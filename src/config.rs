//! Configuration as typed data, validated before anything is loaded.
//!
//! [`Config`] is what the user asked for (CLI flags today; the TOML file
//! mirrors the same keys). [`Config::validate`] turns it into a [`Plan`]
//! with every value checked, every default resolved and every error naming
//! the key, the bad value and what is allowed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use serde::Deserialize;

use crate::topology::{self, Machine};

pub const DEFAULT_PERIOD_MS: f64 = 50.0;
pub const DEFAULT_STEAL_THRESHOLD_MS: f64 = 3.0;
pub const DEFAULT_RUN_TASKS_BUFFER_MS: f64 = 0.1;
pub const DEFAULT_SLICE_MS: f64 = 5.0;
const MAX_PERIOD_MS: f64 = 10_000.0;
const MIN_PERIOD_MS: f64 = 1.0;
/// A deadline may be this many periods long: a server that catches up on
/// late ticks (runs them back to back) keeps its game on time while a tick
/// ends up to its catch-up allowance late; past a few ticks it is behind.
const MAX_DEADLINE_PERIODS: f64 = crate::bpf::intf::tick_consts_MAX_DEADLINE_PERIODS as f64;
/// CPU ids at or above this cannot exist (the BPF side's MAX_CPUS); checked
/// while parsing so that a range like `0-99999999999` is refused, not allocated.
const CPU_ID_LIMIT: usize = crate::bpf::intf::tick_consts_MAX_CPUS as usize;

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

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub tick_cpus: TickCpus,
    pub steal_threshold_ms: f64,
    pub run_tasks_buffer_ms: f64,
    pub work_stealing: bool,
    pub mid_tick_tasks: bool,
    pub slice_ms: f64,
    pub pin: Pin,
    pub missing_cgroup: MissingCgroup,
    pub groups: Vec<GroupConfig>,
}

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

impl Default for Config {
    fn default() -> Self {
        Config {
            tick_cpus: TickCpus::Auto,
            steal_threshold_ms: DEFAULT_STEAL_THRESHOLD_MS,
            run_tasks_buffer_ms: DEFAULT_RUN_TASKS_BUFFER_MS,
            work_stealing: true,
            mid_tick_tasks: true,
            slice_ms: DEFAULT_SLICE_MS,
            pin: Pin::Soft,
            missing_cgroup: MissingCgroup::Wait,
            groups: Vec::new(),
        }
    }
}

/// Which threads are a tick group's runners.
#[derive(Debug, Clone, PartialEq)]
pub enum Runners {
    /// Every thread of this cgroup and of the cgroups below it.
    Cgroup(PathBuf),
    /// Threads selected by name; scx_tick moves them into a threaded child
    /// cgroup of their process's own cgroup while it runs.
    Threads(ThreadSelect),
}

/// Compiled [`ThreadSelectConfig`].
#[derive(Debug, Clone)]
pub struct ThreadSelect {
    pub process: Option<regex::Regex>,
    pub cmdline: Option<regex::Regex>,
    pub thread_name: Option<regex::Regex>,
}

impl PartialEq for ThreadSelect {
    fn eq(&self, o: &ThreadSelect) -> bool {
        let s = |r: &Option<regex::Regex>| r.as_ref().map(|r| r.as_str().to_string());
        s(&self.process) == s(&o.process)
            && s(&self.cmdline) == s(&o.cmdline)
            && s(&self.thread_name) == s(&o.thread_name)
    }
}

impl ThreadSelect {
    /// Does a process with this name and command line qualify?
    pub fn process_matches(&self, comm: &str, cmdline: &str) -> bool {
        self.process.as_ref().is_none_or(|r| r.is_match(comm))
            && self.cmdline.as_ref().is_none_or(|r| r.is_match(cmdline))
    }

    pub fn thread_matches(&self, comm: &str) -> bool {
        self.thread_name.as_ref().is_none_or(|r| r.is_match(comm))
    }

    /// "process ~ /java/, thread_name ~ /^Region/".
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        for (k, r) in [
            ("process", &self.process),
            ("cmdline", &self.cmdline),
            ("thread_name", &self.thread_name),
        ] {
            if let Some(r) = r {
                parts.push(format!("{k} ~ /{}/", r.as_str()));
            }
        }
        parts.join(", ")
    }
}

/// Linux keeps 15 bytes of a thread's name (`/proc/TID/comm`).
pub const THREAD_NAME_MAX: usize = 15;

/// A tick group ready to run: times in ns.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// The name in statistics.
    pub name: String,
    pub runners: Runners,
    pub period_ns: u64,
    pub deadline_ns: u64,
    pub home_cpus: Vec<usize>,
    pub tick: TickUnit,
}

impl Group {
    /// The share of a CPU one runner may claim (admission, homes): its
    /// deadline over its period, at most the whole CPU (a deadline past the
    /// period tolerates lateness, it claims no more than a period per period).
    pub fn cpu_share(&self) -> f64 {
        self.deadline_ns.min(self.period_ns) as f64 / self.period_ns as f64
    }
}

/// A validated configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub tick_cpus: Vec<usize>,
    pub steal_threshold_ns: u64,
    pub run_tasks_buffer_ns: u64,
    pub slice_ns: u64,
    pub work_stealing: bool,
    pub mid_tick_tasks: bool,
    pub pin: Pin,
    pub missing_cgroup: MissingCgroup,
    pub groups: Vec<Group>,
}

impl Plan {
    /// What is valid but probably not meant, for check-config.
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.groups.is_empty() {
            w.push(
                "no tick group: every task would be scheduled as other work; expected at least \
                 one [[group]] with cgroup = \"PATH\" or process/cmdline/thread_name \
                 (or --tick-cgroup/--tick-threads given with --config)"
                    .to_string(),
            );
        }
        w
    }

    /// What will be scheduled how, for the start-up log and check-config.
    pub fn describe(&self) -> Vec<String> {
        let on_off = |b: bool| if b { "on" } else { "off" };
        let ms = |ns: u64| ns as f64 / 1e6;
        let mut lines = vec![
            format!("tick CPUs: {:?}", self.tick_cpus),
            format!(
                "steal threshold {} ms (work stealing {}), run-tasks buffer {} ms, mid-tick tasks {}, pin {:?}",
                ms(self.steal_threshold_ns),
                on_off(self.work_stealing),
                ms(self.run_tasks_buffer_ns),
                on_off(self.mid_tick_tasks),
                self.pin
            ),
        ];
        for g in &self.groups {
            let who = match &g.runners {
                Runners::Cgroup(path) => format!("{} (cgroup {})", g.name, path.display()),
                Runners::Threads(t) => format!("{} (threads: {})", g.name, t.describe()),
            };
            lines.push(format!(
                "tick group {who}: period {} ms, deadline {} ms, home CPUs {:?}, one tick per {}",
                ms(g.period_ns),
                ms(g.deadline_ns),
                g.home_cpus,
                match g.tick {
                    TickUnit::Thread => "thread",
                    TickUnit::Process => "process",
                }
            ));
        }
        lines
    }
}

fn ms_to_ns(ms: f64) -> u64 {
    (ms * 1e6).round() as u64
}

/// Parse a CPU list: `4-6,8,10-11`.
pub fn parse_cpu_list(key: &str, s: &str) -> Result<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || {
            anyhow!(
                "{key} {s:?}: {part:?} is not a CPU id or range; allowed: ids and ranges like 2,4,6-7"
            )
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let a: usize = a.trim().parse().map_err(|_| bad())?;
                let b: usize = b.trim().parse().map_err(|_| bad())?;
                if a > b {
                    bail!("{key} {s:?}: range {part:?} runs backwards; allowed: low-high");
                }
                check_cpu_id(key, b)?;
                cpus.extend(a..=b);
            }
            None => {
                let cpu = part.parse().map_err(|_| bad())?;
                check_cpu_id(key, cpu)?;
                cpus.push(cpu);
            }
        }
    }
    if cpus.is_empty() {
        bail!("{key} {s:?}: no CPU given; allowed: a count like 4 or a list like 2,4,6-7");
    }
    Ok(cpus)
}

fn check_cpu_id(key: &str, cpu: usize) -> Result<()> {
    if cpu >= CPU_ID_LIMIT {
        bail!(
            "{key}: CPU {cpu} is out of range; allowed: CPU ids 0 to {}",
            CPU_ID_LIMIT - 1
        );
    }
    Ok(())
}

/// `--tick-cpus`: a bare number is a count, anything else a list.
pub fn parse_tick_cpus(s: &str) -> Result<TickCpus> {
    let key = "tick_cpus (--tick-cpus)";
    let t = s.trim();
    if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit()) {
        let n: usize = t
            .parse()
            .map_err(|_| anyhow!("{key} {s:?}: count too large"))?;
        if n == 0 {
            bail!("{key} 0: no tick CPU; allowed: a count of 1 or more, or a CPU list");
        }
        return Ok(TickCpus::Count(n));
    }
    Ok(TickCpus::List(parse_cpu_list(key, s)?))
}

fn parse_ms(key: &str, v: &str) -> Result<f64> {
    let ms: f64 = v
        .trim()
        .trim_end_matches("ms")
        .parse()
        .map_err(|_| anyhow!("{key}={v:?}: not a number of milliseconds"))?;
    if !ms.is_finite() {
        bail!("{key}={v:?}: not a finite number of milliseconds");
    }
    Ok(ms)
}

/// `--tick-cgroup PATH[,period=MS][,deadline=MS][,cpus=LIST]`
pub fn parse_group_spec(spec: &str) -> Result<GroupConfig> {
    parse_spec(spec, false)
}

/// `--tick-threads NAME,process=RE|cmdline=RE[,thread=RE][,period=MS][,deadline=MS][,cpus=LIST]`
pub fn parse_threads_spec(spec: &str) -> Result<GroupConfig> {
    parse_spec(spec, true)
}

fn parse_spec(spec: &str, threads: bool) -> Result<GroupConfig> {
    let (flag, first, usage) = if threads {
        (
            "--tick-threads",
            "the group name",
            "NAME,process=RE|cmdline=RE[,thread=RE][,period=MS][,deadline=MS][,cpus=LIST]",
        )
    } else {
        (
            "--tick-cgroup",
            "the cgroup path",
            "PATH[,period=MS][,deadline=MS][,cpus=LIST]",
        )
    };
    // cpus lists contain commas too: split options on ",key=" boundaries.
    let mut parts: Vec<String> = Vec::new();
    for piece in spec.split(',') {
        if parts.is_empty() || piece.contains('=') {
            parts.push(piece.to_string());
        } else {
            let last = parts.last_mut().unwrap();
            last.push(',');
            last.push_str(piece);
        }
    }
    let head = parts[0].trim().to_string();
    if head.is_empty() || head.contains('=') {
        bail!("{flag} {spec:?}: {first} must come first; allowed: {usage}");
    }
    let mut g = GroupConfig::of_cgroup(&head);
    let mut select = ThreadSelectConfig::default();
    if threads {
        g.cgroup = None;
        g.name = Some(head);
    }
    for opt in &parts[1..] {
        let (k, v) = opt.split_once('=').unwrap();
        match k.trim() {
            "period" | "period_ms" => g.period_ms = parse_ms("period", v)?,
            "deadline" | "deadline_ms" => g.deadline_ms = Some(parse_ms("deadline", v)?),
            "cpus" => g.cpus = Some(parse_cpu_list("cpus", v)?),
            "tick" => g.tick = Some(v.trim().parse()?),
            "process" if threads => select.process = Some(v.to_string()),
            "cmdline" if threads => select.cmdline = Some(v.to_string()),
            "thread" | "thread_name" if threads => select.thread_name = Some(v.to_string()),
            other => bail!(
                "{flag} {spec:?}: unknown option {other:?}; allowed: {}",
                if threads {
                    "process, cmdline, thread, period, deadline, cpus, tick"
                } else {
                    "period, deadline, cpus, tick"
                }
            ),
        }
    }
    if threads {
        g.select = Some(select);
    }
    Ok(g)
}

impl Config {
    pub fn from_file(path: &Path) -> Result<Config> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the configuration file {}", path.display()))?;
        Config::from_toml(&text).with_context(|| format!("in {}", path.display()))
    }

    /// Parse a TOML configuration; keys mirror the seed's vocabulary (the
    /// seed's own camelCase names are accepted too).
    pub fn from_toml(text: &str) -> Result<Config> {
        // One line: "line N (`the line`): <what is wrong>", not toml's
        // multi-line excerpt; the quoted line names the key.
        let f: FileConfig = toml::from_str(text).map_err(|e| match e.span() {
            Some(span) => {
                let n = text[..span.start].matches('\n').count();
                let line: String = (text.lines().nth(n).unwrap_or("").trim().chars())
                    .map(|c| if c.is_control() { '?' } else { c })
                    .collect();
                anyhow!("line {} (`{line}`): {}", n + 1, one_line(e.message()))
            }
            None => anyhow!("{}", one_line(e.message())),
        })?;
        let mut c = Config::default();
        if let Some(v) = f.tick_cpus {
            c.tick_cpus = v.into_tick_cpus("tick_cpus")?;
        }
        c.steal_threshold_ms = f.steal_threshold_ms.unwrap_or(c.steal_threshold_ms);
        c.run_tasks_buffer_ms = f.run_tasks_buffer_ms.unwrap_or(c.run_tasks_buffer_ms);
        c.work_stealing = f.work_stealing.unwrap_or(c.work_stealing);
        c.mid_tick_tasks = f.mid_tick_tasks.unwrap_or(c.mid_tick_tasks);
        c.slice_ms = f.slice_ms.unwrap_or(c.slice_ms);
        if let Some(p) = &f.pin {
            c.pin = p.parse()?;
        }
        match (f.seed_cpu_affinity, f.pin.is_some()) {
            (Some(_), true) => bail!(
                "pin and enableAffinitySchedulerCpuAffinity are both given; allowed: one of them \
                 (enableAffinitySchedulerCpuAffinity = true is pin = \"hard\", false is \"soft\")"
            ),
            (Some(hard), false) => c.pin = if hard { Pin::Hard } else { Pin::Soft },
            (None, _) => {}
        }
        if let Some(m) = &f.missing_cgroup {
            c.missing_cgroup = m.parse()?;
        }
        for g in f.groups {
            let what = g.cgroup.as_ref().or(g.name.as_ref());
            let cpus = match g.cpus {
                None => None,
                Some(v) => match v.into_tick_cpus("group.cpus")? {
                    TickCpus::List(l) => Some(l),
                    _ => bail!(
                        "group {:?}: cpus must be a CPU list such as [2, 4] or \"2,4\"",
                        what.map_or("", |s| s.as_str())
                    ),
                },
            };
            let given = g.process.is_some() || g.cmdline.is_some() || g.thread_name.is_some();
            let select = given.then_some(ThreadSelectConfig {
                process: g.process,
                cmdline: g.cmdline,
                thread_name: g.thread_name,
            });
            c.groups.push(GroupConfig {
                name: g.name,
                cgroup: g.cgroup,
                select,
                period_ms: g.period_ms.unwrap_or(DEFAULT_PERIOD_MS),
                deadline_ms: g.deadline_ms,
                cpus,
                tick: g.tick.as_deref().map(str::parse).transpose()?,
            });
        }
        Ok(c)
    }

    /// After CPU hotplug: drop the offline CPUs from the lists the user gave,
    /// so scx_tick keeps running on what is left instead of refusing its own
    /// configuration. A tick CPU list left empty (or covering every online
    /// CPU) falls back to the automatic choice, a group's list left empty to
    /// all tick CPUs. The next restart, once the CPUs are back, starts from
    /// the user's lists again. Returns what was changed, for the log.
    pub fn keep_online(&mut self, machine: &Machine) -> Vec<String> {
        let online: BTreeSet<usize> = machine.cpus.iter().map(|c| c.id).collect();
        let mut notes = Vec::new();
        if let TickCpus::List(list) = &mut self.tick_cpus {
            let before = list.clone();
            list.retain(|c| online.contains(c));
            if list.is_empty() || list.len() >= online.len() {
                notes.push(format!(
                    "tick CPUs {before:?}: too few left online, choosing tick CPUs automatically"
                ));
                self.tick_cpus = TickCpus::Auto;
            } else if *list != before {
                notes.push(format!(
                    "tick CPUs {before:?}: using {list:?} while the others are offline"
                ));
            }
        }
        let tick_cpus = match &self.tick_cpus {
            TickCpus::List(l) => Some(l.clone()),
            _ => None,
        };
        for g in &mut self.groups {
            let what = g.what();
            if let Some(cpus) = &mut g.cpus {
                let before = cpus.clone();
                cpus.retain(|c| {
                    online.contains(c) && tick_cpus.as_ref().is_none_or(|t| t.contains(c))
                });
                if cpus.is_empty() {
                    notes.push(format!(
                        "{what}: cpus {before:?} offline, using all tick CPUs"
                    ));
                    g.cpus = None;
                } else if *cpus != before {
                    notes.push(format!(
                        "{what}: cpus {before:?}: using {cpus:?} while the others are offline"
                    ));
                }
            }
        }
        notes
    }

    /// Check everything against the machine; `resolve` turns a cgroup path
    /// into (absolute path, cgroup id) or explains why it cannot.
    pub fn validate(
        &self,
        machine: &Machine,
        resolve: &dyn Fn(&str) -> Result<(PathBuf, u64)>,
    ) -> Result<Plan> {
        let online: BTreeSet<usize> = machine.cpus.iter().map(|c| c.id).collect();
        let tick_cpus = match &self.tick_cpus {
            TickCpus::Auto => {
                topology::choose_tick_cpus(machine, topology::default_tick_cpu_count(machine))?
                    .tick_cpus
            }
            TickCpus::Count(n) => topology::choose_tick_cpus(machine, *n)?.tick_cpus,
            TickCpus::List(list) => {
                let mut seen = BTreeSet::new();
                for &cpu in list {
                    if !online.contains(&cpu) {
                        bail!(
                            "tick_cpus (--tick-cpus): CPU {cpu} does not exist or is offline; allowed: {}",
                            fmt_cpus(&online)
                        );
                    }
                    if !seen.insert(cpu) {
                        bail!(
                            "tick_cpus (--tick-cpus): CPU {cpu} is listed twice; each CPU may appear once"
                        );
                    }
                }
                if seen.len() >= online.len() {
                    bail!(
                        "tick_cpus (--tick-cpus): all {} online CPUs would be tick CPUs; \
                         leave at least one for the rest of the system",
                        online.len()
                    );
                }
                list.clone()
            }
        };

        check_range("slice_ms (--slice-ms)", self.slice_ms, 0.05, 1000.0)?;
        check_range(
            "run_tasks_buffer_ms (--run-tasks-buffer-ms)",
            self.run_tasks_buffer_ms,
            0.0,
            100.0,
        )?;
        check_range(
            "steal_threshold_ms (--steal-threshold-ms)",
            self.steal_threshold_ms,
            0.0,
            MAX_PERIOD_MS,
        )?;

        if self.groups.len() > crate::bpf::intf::tick_consts_MAX_GROUPS as usize {
            bail!(
                "group: {} tick groups given; allowed: at most {}",
                self.groups.len(),
                crate::bpf::intf::tick_consts_MAX_GROUPS
            );
        }
        let mut groups = Vec::new();
        let mut seen_ids = BTreeSet::new();
        let mut seen_names = BTreeSet::new();
        for g in &self.groups {
            let what = g.what();
            check_range(
                &format!("{what}: period_ms"),
                g.period_ms,
                MIN_PERIOD_MS,
                MAX_PERIOD_MS,
            )?;
            let deadline_ms = g.deadline_ms.unwrap_or(g.period_ms);
            if !(deadline_ms > 0.0 && deadline_ms <= g.period_ms * MAX_DEADLINE_PERIODS) {
                bail!(
                    "{what}: deadline_ms = {deadline_ms}: allowed: above 0 and at most \
                     {MAX_DEADLINE_PERIODS} periods ({} ms)",
                    g.period_ms * MAX_DEADLINE_PERIODS
                );
            }
            if self.work_stealing && self.steal_threshold_ms >= g.period_ms {
                bail!(
                    "steal_threshold_ms (--steal-threshold-ms) = {}: must be below the tick period \
                     of {what} ({} ms), or a late tick could never be stolen; \
                     to switch stealing off use --no-work-stealing",
                    self.steal_threshold_ms,
                    g.period_ms
                );
            }
            let home_cpus = match &g.cpus {
                None => tick_cpus.clone(),
                Some(cpus) => {
                    for cpu in cpus {
                        if !tick_cpus.contains(cpu) {
                            bail!(
                                "{what}: cpus: CPU {cpu} is not a tick CPU; allowed: {}",
                                fmt_cpus(&tick_cpus.iter().copied().collect())
                            );
                        }
                    }
                    cpus.clone()
                }
            };
            let (name, runners) = match (&g.cgroup, &g.select) {
                (Some(_), Some(_)) => bail!(
                    "{what}: give either cgroup or process/cmdline/thread_name, not both \
                     (a group is a cgroup's threads or threads selected by name)"
                ),
                (None, None) => bail!(
                    "{what}: no runners given; allowed: cgroup = PATH, or process/cmdline \
                     (and thread_name) regular expressions"
                ),
                (Some(c), None) => {
                    let (cgroup, cgroup_id) = resolve(c)?;
                    // a missing cgroup (waited for) has no id yet: its path decides
                    let key = if cgroup_id == 0 {
                        cgroup.display().to_string()
                    } else {
                        cgroup_id.to_string()
                    };
                    if !seen_ids.insert(key) {
                        bail!(
                            "{what}: the same cgroup is given twice; each tick group needs its own cgroup"
                        );
                    }
                    let rel = cgroup.display().to_string();
                    let rel = rel
                        .strip_prefix("/sys/fs/cgroup/")
                        .unwrap_or(&rel)
                        .to_string();
                    (g.name.clone().unwrap_or(rel), Runners::Cgroup(cgroup))
                }
                (None, Some(sel)) => {
                    let name = g.name.clone().ok_or_else(|| {
                        anyhow!("{what}: a group of threads selected by name needs a name (name = \"world\")")
                    })?;
                    (name, Runners::Threads(compile_select(&what, sel)?))
                }
            };
            check_group_name(&what, &name)?;
            if !seen_names.insert(name.clone()) {
                bail!(
                    "{what}: the name {name:?} is used twice; each tick group needs its own name"
                );
            }
            groups.push(Group {
                name,
                runners,
                period_ns: ms_to_ns(g.period_ms),
                deadline_ns: ms_to_ns(deadline_ms),
                home_cpus,
                tick: g.tick_unit(),
            });
        }

        Ok(Plan {
            tick_cpus,
            steal_threshold_ns: ms_to_ns(self.steal_threshold_ms),
            run_tasks_buffer_ns: ms_to_ns(self.run_tasks_buffer_ms),
            slice_ns: ms_to_ns(self.slice_ms),
            work_stealing: self.work_stealing,
            mid_tick_tasks: self.mid_tick_tasks,
            pin: self.pin,
            missing_cgroup: self.missing_cgroup,
            groups,
        })
    }
}

/// Group names become statistics labels and cgroup names.
fn check_group_name(what: &str, name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-/".contains(c));
    if !ok {
        bail!(
            "{what}: name {name:?}: allowed: 1 to 64 letters, digits, '_', '.', '-' (and '/' in cgroup paths)"
        );
    }
    Ok(())
}

fn compile_select(what: &str, sel: &ThreadSelectConfig) -> Result<ThreadSelect> {
    if sel.process.is_none() && sel.cmdline.is_none() {
        bail!(
            "{what}: thread_name needs a process or cmdline too (scx_tick looks at the threads \
             of matching processes only); allowed: process = REGEX (the process name, \
             e.g. \"^java$\") and/or cmdline = REGEX (e.g. \"folia.*\\\\.jar\")"
        );
    }
    let re = |key: &str, v: &Option<String>| -> Result<Option<regex::Regex>> {
        v.as_deref()
            .map(|r| {
                regex::Regex::new(r).map_err(|e| {
                    let msg = e.to_string();
                    let why = msg
                        .lines()
                        .rev()
                        .find(|l| !l.trim().is_empty())
                        .unwrap_or("");
                    anyhow!(
                        "{what}: {key} = {r:?}: not a valid regular expression ({})",
                        why.trim().trim_start_matches("error: ")
                    )
                })
            })
            .transpose()
    };
    if let Some(t) = &sel.thread_name {
        // a literal longer than the kernel keeps can never match
        let literal = t.trim_start_matches('^');
        if literal.len() > THREAD_NAME_MAX
            && literal
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || " _-#".contains(c))
        {
            bail!(
                "{what}: thread_name = {t:?}: the kernel keeps only the first {THREAD_NAME_MAX} bytes of a \
                 thread name, so this can never match; use a prefix such as \"^{}\"",
                &literal[..THREAD_NAME_MAX]
            );
        }
    }
    Ok(ThreadSelect {
        process: re("process", &sel.process)?,
        cmdline: re("cmdline", &sel.cmdline)?,
        thread_name: re("thread_name", &sel.thread_name)?,
    })
}

/// The TOML file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    #[serde(alias = "stealThresholdMillis")]
    steal_threshold_ms: Option<f64>,
    #[serde(alias = "runTasksBufferMillis")]
    run_tasks_buffer_ms: Option<f64>,
    #[serde(alias = "tickRegionAffinity")]
    tick_cpus: Option<CpuValue>,
    #[serde(alias = "enableWorkStealing")]
    work_stealing: Option<bool>,
    #[serde(alias = "enableMidTickTasks")]
    mid_tick_tasks: Option<bool>,
    pin: Option<String>,
    /// The seed's switch for hard pinning: true = "hard", false = "soft".
    #[serde(rename = "enableAffinitySchedulerCpuAffinity")]
    seed_cpu_affinity: Option<bool>,
    slice_ms: Option<f64>,
    missing_cgroup: Option<String>,
    #[serde(default, rename = "group")]
    groups: Vec<FileGroup>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileGroup {
    name: Option<String>,
    cgroup: Option<String>,
    process: Option<String>,
    cmdline: Option<String>,
    thread_name: Option<String>,
    period_ms: Option<f64>,
    deadline_ms: Option<f64>,
    cpus: Option<CpuValue>,
    tick: Option<String>,
}

/// `4`, `"2,4,6-7"`, `[2, 4]` or the seed's `["2", "4"]`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum CpuValue {
    Count(i64),
    Text(String),
    Ids(Vec<i64>),
    Strings(Vec<String>),
}

impl CpuValue {
    fn into_tick_cpus(self, key: &str) -> Result<TickCpus> {
        match self {
            CpuValue::Count(n) if n >= 1 => Ok(TickCpus::Count(n as usize)),
            CpuValue::Count(n) => {
                bail!("{key} = {n}: allowed: a count of 1 or more, or a CPU list")
            }
            CpuValue::Text(s) => Ok(TickCpus::List(parse_cpu_list(key, &s)?)),
            CpuValue::Ids(ids) => {
                let mut l = Vec::new();
                for id in ids {
                    if id < 0 {
                        bail!("{key}: CPU id {id} is negative; allowed: 0 or more");
                    }
                    check_cpu_id(key, id as usize)?;
                    l.push(id as usize);
                }
                if l.is_empty() {
                    bail!("{key} = []: no CPU given");
                }
                Ok(TickCpus::List(l))
            }
            CpuValue::Strings(v) => Ok(TickCpus::List(parse_cpu_list(key, &v.join(","))?)),
        }
    }
}

/// toml's messages may span lines ("invalid table header\nexpected ..."): join them.
fn one_line(msg: &str) -> String {
    msg.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

fn check_range(key: &str, v: f64, lo: f64, hi: f64) -> Result<()> {
    if !v.is_finite() || v < lo || v > hi {
        bail!("{key} = {v}: out of range; allowed: {lo} to {hi}");
    }
    Ok(())
}

fn fmt_cpus(set: &BTreeSet<usize>) -> String {
    set.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::tests::i9_14900hx;

    fn resolve_ok(p: &str) -> Result<(PathBuf, u64)> {
        Ok((PathBuf::from("/sys/fs/cgroup").join(p), p.len() as u64))
    }

    fn plan(c: &Config) -> Result<Plan> {
        c.validate(&i9_14900hx(), &resolve_ok)
    }

    #[test]
    fn defaults_match_the_seed() {
        let c = Config::default();
        assert_eq!(c.steal_threshold_ms, 3.0);
        assert_eq!(c.run_tasks_buffer_ms, 0.1);
        let p = plan(&c).unwrap();
        assert_eq!(p.steal_threshold_ns, 3_000_000);
        assert_eq!(p.run_tasks_buffer_ns, 100_000);
        // 24 cores on the i9: every one but CPU 0's.
        assert_eq!(p.tick_cpus.len(), 23);
    }

    #[test]
    fn a_plan_without_groups_is_warned_about() {
        let w = plan(&Config::from_toml("").unwrap()).unwrap().warnings();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("no tick group") && w[0].contains("[[group]]"),
            "{w:?}"
        );
        let c = Config::from_toml("[[group]]\ncgroup = \"a\"\n").unwrap();
        assert!(plan(&c).unwrap().warnings().is_empty());
    }

    #[test]
    fn group_spec_parses_options_and_cpu_lists() {
        let g = parse_group_spec("game/world,period=50,deadline=45ms,cpus=2,4,6-7").unwrap();
        assert_eq!(g.cgroup.as_deref(), Some("game/world"));
        assert_eq!(g.period_ms, 50.0);
        assert_eq!(g.deadline_ms, Some(45.0));
        assert_eq!(g.cpus, Some(vec![2, 4, 6, 7]));
        let g = parse_group_spec("/sys/fs/cgroup/tick").unwrap();
        assert_eq!((g.period_ms, g.deadline_ms, g.cpus), (50.0, None, None));
    }

    #[test]
    fn group_spec_errors_name_the_problem() {
        let e = parse_group_spec("tick,speed=3").unwrap_err().to_string();
        assert!(
            e.contains("unknown option \"speed\"") && e.contains("allowed"),
            "{e}"
        );
        let e = parse_group_spec("tick,period=fast")
            .unwrap_err()
            .to_string();
        assert!(e.contains("period") && e.contains("not a number"), "{e}");
        assert!(parse_group_spec(",period=5").is_err());
    }

    #[test]
    fn tick_cpus_count_or_list() {
        assert_eq!(parse_tick_cpus("4").unwrap(), TickCpus::Count(4));
        assert_eq!(
            parse_tick_cpus("2,4,6-7").unwrap(),
            TickCpus::List(vec![2, 4, 6, 7])
        );
        assert!(parse_tick_cpus("0").is_err());
        assert!(
            parse_tick_cpus("3-1")
                .unwrap_err()
                .to_string()
                .contains("backwards")
        );
        assert!(
            parse_tick_cpus("a")
                .unwrap_err()
                .to_string()
                .contains("allowed")
        );
    }

    #[test]
    fn bad_cpu_lists_are_refused() {
        let mut c = Config {
            tick_cpus: TickCpus::List(vec![2, 99]),
            ..Default::default()
        };
        let e = plan(&c).unwrap_err().to_string();
        assert!(
            e.contains("CPU 99 does not exist") && e.contains("allowed: 0,1,2"),
            "{e}"
        );
        c.tick_cpus = TickCpus::List(vec![2, 2]);
        assert!(plan(&c).unwrap_err().to_string().contains("listed twice"));
        c.tick_cpus = TickCpus::List((0..32).collect());
        assert!(
            plan(&c)
                .unwrap_err()
                .to_string()
                .contains("leave at least one")
        );
        c.tick_cpus = TickCpus::Count(30);
        assert!(plan(&c).unwrap_err().to_string().contains("at most 23"));
    }

    fn with_group(g: GroupConfig) -> Config {
        Config {
            groups: vec![g],
            ..Default::default()
        }
    }

    fn group(period_ms: f64, deadline_ms: Option<f64>) -> GroupConfig {
        GroupConfig {
            period_ms,
            deadline_ms,
            ..GroupConfig::of_cgroup("tick")
        }
    }

    #[test]
    fn periods_and_deadlines_are_checked() {
        for bad in [0.0, -5.0, 1e9, f64::NAN] {
            let e = plan(&with_group(group(bad, None))).unwrap_err().to_string();
            assert!(e.contains("period_ms") && e.contains("allowed"), "{e}");
        }
        let e = plan(&with_group(group(50.0, Some(201.0))))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("deadline_ms = 201") && e.contains("at most 4 periods (200 ms)"),
            "{e}"
        );
        // a server that catches up tolerates a tick's lateness: it claims
        // a whole CPU at most
        let p = plan(&with_group(group(30.0, Some(60.0)))).unwrap();
        assert_eq!(p.groups[0].deadline_ns, 60_000_000);
        assert_eq!(p.groups[0].cpu_share(), 1.0);
        let p = plan(&with_group(group(50.0, Some(45.0)))).unwrap();
        assert_eq!(p.groups[0].period_ns, 50_000_000);
        assert_eq!(p.groups[0].deadline_ns, 45_000_000);
        assert_eq!(p.groups[0].cpu_share(), 0.9);
        let p = plan(&with_group(group(16.0, None))).unwrap();
        assert_eq!(
            p.groups[0].deadline_ns, 16_000_000,
            "deadline defaults to the period"
        );
    }

    #[test]
    fn threshold_must_be_below_the_period_unless_stealing_is_off() {
        let mut c = with_group(group(20.0, None));
        c.steal_threshold_ms = 20.0;
        let e = plan(&c).unwrap_err().to_string();
        assert!(
            e.contains("steal_threshold_ms") && e.contains("below the tick period"),
            "{e}"
        );
        c.work_stealing = false;
        assert!(plan(&c).is_ok());
    }

    #[test]
    fn group_cpus_must_be_tick_cpus() {
        let mut g = group(50.0, None);
        g.cpus = Some(vec![3]);
        let mut c = with_group(g);
        c.tick_cpus = TickCpus::List(vec![2, 4]);
        let e = plan(&c).unwrap_err().to_string();
        assert!(
            e.contains("CPU 3 is not a tick CPU") && e.contains("allowed: 2,4"),
            "{e}"
        );
    }

    #[test]
    fn missing_cgroup_error_passes_through() {
        let c = with_group(group(50.0, None));
        let e = c
            .validate(&i9_14900hx(), &|p| bail!("cgroup {p:?} does not exist"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not exist"), "{e}");
    }

    #[test]
    fn duplicate_groups_are_refused() {
        let mut c = with_group(group(50.0, None));
        c.groups.push(group(50.0, None));
        assert!(plan(&c).unwrap_err().to_string().contains("given twice"));
    }

    #[test]
    fn a_group_ticks_per_thread_unless_it_says_per_process() {
        let c = Config::from_toml(
            "[[group]]\ncgroup = \"a\"\n[[group]]\ncgroup = \"bb\"\ntick = \"process\"",
        )
        .unwrap();
        assert_eq!(c.groups[0].tick_unit(), TickUnit::Thread);
        assert_eq!(c.groups[1].tick_unit(), TickUnit::Process);
        let plan = plan(&c).unwrap();
        assert_eq!(plan.groups[1].tick, TickUnit::Process);
        assert!(plan.describe()[3].ends_with("one tick per process"));
        let g = parse_threads_spec("mt,process=^minetestserver$,tick=process").unwrap();
        assert_eq!(g.tick_unit(), TickUnit::Process);
        // every thread of a process: its steps; named threads: each its own
        let every = parse_threads_spec("mt,process=^minetestserver$").unwrap();
        assert_eq!(every.tick_unit(), TickUnit::Process);
        let named = parse_threads_spec("w,process=^java$,thread=^Region").unwrap();
        assert_eq!(named.tick_unit(), TickUnit::Thread);
        let pool = parse_threads_spec("t,process=^tickload$,tick=thread").unwrap();
        assert_eq!(pool.tick_unit(), TickUnit::Thread);
        assert_eq!(
            parse_group_spec("w,tick=thread").unwrap().tick_unit(),
            TickUnit::Thread
        );
        for bad in [
            Config::from_toml("[[group]]\ncgroup = \"a\"\ntick = \"step\"").map(|_| ()),
            parse_group_spec("w,tick=steps").map(|_| ()),
        ] {
            let e = bad.unwrap_err().to_string();
            assert!(e.contains("tick = ") && e.contains("allowed"), "{e}");
        }
    }

    #[test]
    fn toml_mirrors_the_seed_vocabulary() {
        let c = Config::from_toml(
            r#"
            steal_threshold_ms = 5
            run_tasks_buffer_ms = 0.5
            tick_cpus = "2,4"
            work_stealing = false
            mid_tick_tasks = false
            pin = "hard"
            [[group]]
            cgroup = "world"
            period_ms = 50
            deadline_ms = 45
            [[group]]
            cgroup = "physics"
            period_ms = 16.6
            cpus = [4]
            "#,
        )
        .unwrap();
        assert_eq!(c.steal_threshold_ms, 5.0);
        assert_eq!(c.run_tasks_buffer_ms, 0.5);
        assert_eq!(c.tick_cpus, TickCpus::List(vec![2, 4]));
        assert!(!c.work_stealing && !c.mid_tick_tasks);
        assert_eq!(c.pin, Pin::Hard);
        assert_eq!(c.groups.len(), 2);
        assert_eq!(c.groups[1].cpus, Some(vec![4]));
        assert_eq!(c.groups[0].deadline_ms, Some(45.0));
    }

    #[test]
    fn toml_accepts_the_seeds_own_names() {
        let c = Config::from_toml(
            r#"
            stealThresholdMillis = 3
            runTasksBufferMillis = 0.1
            tickRegionAffinity = ["0", "2", "4", "6"]
            enableWorkStealing = true
            enableMidTickTasks = true
            "#,
        )
        .unwrap();
        assert_eq!(c.tick_cpus, TickCpus::List(vec![0, 2, 4, 6]));
        let c = Config::from_toml("tick_cpus = 3").unwrap();
        assert_eq!(c.tick_cpus, TickCpus::Count(3));
    }

    #[test]
    fn toml_errors_name_the_key() {
        let e = Config::from_toml("steal_treshold_ms = 3")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `steal_treshold_ms`"), "{e}");
        let e = Config::from_toml("steal_threshold_ms = \"fast\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("steal_threshold_ms"), "{e}");
        let e = Config::from_toml("pin = \"firm\"").unwrap_err().to_string();
        assert!(e.contains("pin") && e.contains("allowed"), "{e}");
        let e = Config::from_toml("tick_cpus = 0").unwrap_err().to_string();
        assert!(e.contains("tick_cpus = 0"), "{e}");
        // a group without runners: refused when checked, naming what is allowed
        let c = Config::from_toml("[[group]]\nperiod_ms = 50").unwrap();
        let e = plan(&c).unwrap_err().to_string();
        assert!(
            e.contains("no runners given") && e.contains("cgroup = PATH"),
            "{e}"
        );
        let e = Config::from_toml("[[group]]\ncgroup = \"w\"\nspeed = 1")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `speed`"), "{e}");
    }

    #[test]
    fn hotplug_keeps_the_online_part_of_the_users_lists() {
        let mut m = i9_14900hx();
        m.cpus.retain(|c| c.id != 4);
        let mut g = group(50.0, None);
        g.cpus = Some(vec![4]);
        let mut c = with_group(g);
        c.tick_cpus = TickCpus::List(vec![2, 4, 6]);
        let notes = c.keep_online(&m);
        assert_eq!(c.tick_cpus, TickCpus::List(vec![2, 6]));
        assert_eq!(
            c.groups[0].cpus, None,
            "a group whose CPUs are all offline uses all tick CPUs"
        );
        assert_eq!(notes.len(), 2, "{notes:?}");
        let p = c.validate(&m, &resolve_ok).unwrap();
        assert_eq!(p.groups[0].home_cpus, vec![2, 6]);
        // nothing offline: nothing changes
        let mut c = with_group(group(50.0, None));
        c.tick_cpus = TickCpus::List(vec![2, 4]);
        assert!(c.keep_online(&i9_14900hx()).is_empty());
        assert_eq!(c.tick_cpus, TickCpus::List(vec![2, 4]));
        // every listed CPU offline: automatic choice
        c.tick_cpus = TickCpus::List(vec![4]);
        c.keep_online(&m);
        assert_eq!(c.tick_cpus, TickCpus::Auto);
        assert!(c.validate(&m, &resolve_ok).is_ok());
    }

    #[test]
    fn the_seeds_affinity_switch_is_pin() {
        let c = Config::from_toml("enableAffinitySchedulerCpuAffinity = true").unwrap();
        assert_eq!(c.pin, Pin::Hard);
        let c = Config::from_toml("enableAffinitySchedulerCpuAffinity = false").unwrap();
        assert_eq!(c.pin, Pin::Soft);
        let e = Config::from_toml("pin = \"soft\"\nenableAffinitySchedulerCpuAffinity = true")
            .unwrap_err()
            .to_string();
        assert!(e.contains("both given"), "{e}");
    }

    #[test]
    fn groups_of_threads_selected_by_name() {
        let c = Config::from_toml(
            r#"
            missing_cgroup = "create"
            [[group]]
            name = "folia"
            process = "^java$"
            cmdline = "folia.*\\.jar"
            thread_name = "^Region Schedule"
            period_ms = 50
            "#,
        )
        .unwrap();
        assert_eq!(c.missing_cgroup, MissingCgroup::Create);
        let p = plan(&c).unwrap();
        assert_eq!(p.groups[0].name, "folia");
        let Runners::Threads(sel) = &p.groups[0].runners else {
            panic!("not a thread group: {:?}", p.groups[0].runners)
        };
        assert!(sel.process_matches("java", "java -jar folia-1.21.jar nogui"));
        assert!(!sel.process_matches("java", "java -jar paper.jar"));
        assert!(sel.thread_matches("Region Schedule"));
        assert!(!sel.thread_matches("Server thread"));
        assert!(
            p.describe()
                .iter()
                .any(|l| l.contains("thread_name ~ /^Region Schedule/"))
        );

        let g =
            parse_threads_spec("world,process=^tickload$,thread=^Tick Runner,period=25").unwrap();
        assert_eq!(g.name.as_deref(), Some("world"));
        assert_eq!(g.period_ms, 25.0);
        let sel = g.select.unwrap();
        assert_eq!(sel.thread_name.as_deref(), Some("^Tick Runner"));
        // a regex with a comma stays whole
        let g = parse_threads_spec("w,cmdline=x{1,3},thread=a").unwrap();
        assert_eq!(g.select.unwrap().cmdline.as_deref(), Some("x{1,3}"));
    }

    #[test]
    fn bad_thread_groups_are_refused_with_the_reason() {
        let cases = [
            ("[[group]]\nprocess = \"java\"", "needs a name"),
            (
                "[[group]]\nname = \"w\"\nthread_name = \"^Tick\"",
                "needs a process or cmdline",
            ),
            (
                "[[group]]\nname = \"w\"\nprocess = \"(\"",
                "not a valid regular expression",
            ),
            (
                "[[group]]\nname = \"w\"\ncgroup = \"t\"\nprocess = \"java\"",
                "not both",
            ),
            ("[[group]]\nname = \"w\"", "no runners given"),
            (
                "[[group]]\nname = \"a b\"\nprocess = \"java\"",
                "allowed: 1 to 64",
            ),
            (
                "[[group]]\nname = \"w\"\nprocess = \"java\"\nthread_name = \"^Region Scheduler Thread\"",
                "first 15 bytes",
            ),
            ("missing_cgroup = \"later\"", "allowed: \"wait\""),
        ];
        for (toml, want) in cases {
            let e = Config::from_toml(toml)
                .and_then(|c| plan(&c))
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{toml}: {e}");
        }
        let mut c = with_group(group(50.0, None));
        c.groups.push(GroupConfig {
            name: Some("tick".into()),
            ..GroupConfig::of_cgroup("other")
        });
        assert!(plan(&c).unwrap_err().to_string().contains("used twice"));
    }

    #[test]
    fn huge_cpu_ids_are_refused_not_allocated() {
        for s in [
            "0-99999999999",
            "0-18446744073709551615",
            "1024-1025",
            "5,4096",
        ] {
            let e = parse_tick_cpus(s).unwrap_err().to_string();
            assert!(e.contains("out of range") && e.contains("0 to 1023"), "{e}");
        }
        let e = Config::from_toml("tick_cpus = [1, 70000]")
            .unwrap_err()
            .to_string();
        assert!(e.contains("70000"), "{e}");
    }

    #[test]
    fn other_ranges() {
        let c = Config {
            slice_ms: 0.0,
            ..Default::default()
        };
        assert!(plan(&c).unwrap_err().to_string().contains("slice_ms"));
        let c = Config {
            run_tasks_buffer_ms: -1.0,
            ..Default::default()
        };
        assert!(
            plan(&c)
                .unwrap_err()
                .to_string()
                .contains("run_tasks_buffer_ms")
        );
    }
}

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

use crate::cli::RunArgs;
use crate::topology::{self, Machine};

pub const DEFAULT_PERIOD_MS: f64 = 50.0;
pub const DEFAULT_STEAL_THRESHOLD_MS: f64 = 3.0;
pub const DEFAULT_RUN_TASKS_BUFFER_MS: f64 = 0.1;
pub const DEFAULT_SLICE_MS: f64 = 5.0;
const MAX_PERIOD_MS: f64 = 10_000.0;
const MIN_PERIOD_MS: f64 = 1.0;
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
    /// sched_setaffinity to the home CPU, like the seed: never stolen.
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

#[derive(Debug, Clone, PartialEq)]
pub struct GroupConfig {
    pub cgroup: String,
    pub period_ms: f64,
    pub deadline_ms: Option<f64>,
    /// Home CPUs for this group's runners (a subset of the tick CPUs).
    pub cpus: Option<Vec<usize>>,
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
    pub groups: Vec<GroupConfig>,
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
            groups: Vec::new(),
        }
    }
}

/// A tick group ready to register: cgroup resolved, times in ns.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub cgroup: PathBuf,
    pub cgroup_id: u64,
    pub period_ns: u64,
    pub deadline_ns: u64,
    pub home_cpus: Vec<usize>,
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
    pub groups: Vec<Group>,
}

impl Plan {
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
            lines.push(format!(
                "tick group {}: period {} ms, deadline {} ms, home CPUs {:?}",
                g.cgroup.display(),
                ms(g.period_ns),
                ms(g.deadline_ns),
                g.home_cpus
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
    let path = parts[0].trim().to_string();
    if path.is_empty() || path.contains('=') {
        bail!(
            "--tick-cgroup {spec:?}: the cgroup path must come first; allowed: PATH[,period=MS][,deadline=MS][,cpus=LIST]"
        );
    }
    let mut g = GroupConfig {
        cgroup: path,
        period_ms: DEFAULT_PERIOD_MS,
        deadline_ms: None,
        cpus: None,
    };
    for opt in &parts[1..] {
        let (k, v) = opt.split_once('=').unwrap();
        match k.trim() {
            "period" | "period_ms" => g.period_ms = parse_ms("period", v)?,
            "deadline" | "deadline_ms" => g.deadline_ms = Some(parse_ms("deadline", v)?),
            "cpus" => g.cpus = Some(parse_cpu_list("cpus", v)?),
            other => bail!(
                "--tick-cgroup {spec:?}: unknown option {other:?}; allowed: period, deadline, cpus"
            ),
        }
    }
    Ok(g)
}

impl Config {
    /// Defaults, overridden by `--config FILE`, overridden by the flags.
    pub fn from_args(args: &RunArgs) -> Result<Config> {
        let mut c = match &args.config {
            Some(path) => Config::from_file(path)?,
            None => Config::default(),
        };
        if let Some(s) = &args.tick_cpus {
            c.tick_cpus = parse_tick_cpus(s)?;
        }
        if let Some(v) = args.steal_threshold_ms {
            c.steal_threshold_ms = v;
        }
        if let Some(v) = args.run_tasks_buffer_ms {
            c.run_tasks_buffer_ms = v;
        }
        if let Some(v) = args.slice_ms {
            c.slice_ms = v;
        }
        if let Some(p) = args.pin {
            c.pin = p;
        }
        c.work_stealing &= !args.no_work_stealing;
        c.mid_tick_tasks &= !args.no_mid_tick;
        if !args.tick_cgroups.is_empty() {
            c.groups = args
                .tick_cgroups
                .iter()
                .map(|s| parse_group_spec(s))
                .collect::<Result<_>>()?;
        }
        Ok(c)
    }

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
        if let Some(p) = f.pin {
            c.pin = p.parse()?;
        }
        for g in f.groups {
            let cpus = match g.cpus {
                None => None,
                Some(v) => match v.into_tick_cpus("group.cpus")? {
                    TickCpus::List(l) => Some(l),
                    _ => bail!(
                        "group {:?}: cpus must be a CPU list such as [2, 4] or \"2,4\"",
                        g.cgroup
                    ),
                },
            };
            c.groups.push(GroupConfig {
                cgroup: g.cgroup,
                period_ms: g.period_ms.unwrap_or(DEFAULT_PERIOD_MS),
                deadline_ms: g.deadline_ms,
                cpus,
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
            if let Some(cpus) = &mut g.cpus {
                let before = cpus.clone();
                cpus.retain(|c| {
                    online.contains(c) && tick_cpus.as_ref().is_none_or(|t| t.contains(c))
                });
                if cpus.is_empty() {
                    notes.push(format!(
                        "group {:?}: cpus {before:?} offline, using all tick CPUs",
                        g.cgroup
                    ));
                    g.cpus = None;
                } else if *cpus != before {
                    notes.push(format!(
                        "group {:?}: cpus {before:?}: using {cpus:?} while the others are offline",
                        g.cgroup
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
        for g in &self.groups {
            let what = format!("group {:?}", g.cgroup);
            check_range(
                &format!("{what}: period_ms"),
                g.period_ms,
                MIN_PERIOD_MS,
                MAX_PERIOD_MS,
            )?;
            let deadline_ms = g.deadline_ms.unwrap_or(g.period_ms);
            if !(deadline_ms > 0.0 && deadline_ms <= g.period_ms) {
                bail!(
                    "{what}: deadline_ms = {deadline_ms}: allowed: above 0 and at most the period ({} ms)",
                    g.period_ms
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
            let (cgroup, cgroup_id) = resolve(&g.cgroup)?;
            if !seen_ids.insert(cgroup_id) {
                bail!(
                    "{what}: the same cgroup is given twice; each tick group needs its own cgroup"
                );
            }
            groups.push(Group {
                cgroup,
                cgroup_id,
                period_ns: ms_to_ns(g.period_ms),
                deadline_ns: ms_to_ns(deadline_ms),
                home_cpus,
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
            groups,
        })
    }
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
    slice_ms: Option<f64>,
    #[serde(default, rename = "group")]
    groups: Vec<FileGroup>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileGroup {
    cgroup: String,
    period_ms: Option<f64>,
    deadline_ms: Option<f64>,
    cpus: Option<CpuValue>,
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
        // 24 cores on the i9: half of them.
        assert_eq!(p.tick_cpus.len(), 12);
    }

    #[test]
    fn group_spec_parses_options_and_cpu_lists() {
        let g = parse_group_spec("game/world,period=50,deadline=45ms,cpus=2,4,6-7").unwrap();
        assert_eq!(g.cgroup, "game/world");
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
            cgroup: "tick".into(),
            period_ms,
            deadline_ms,
            cpus: None,
        }
    }

    #[test]
    fn periods_and_deadlines_are_checked() {
        for bad in [0.0, -5.0, 1e9, f64::NAN] {
            let e = plan(&with_group(group(bad, None))).unwrap_err().to_string();
            assert!(e.contains("period_ms") && e.contains("allowed"), "{e}");
        }
        let e = plan(&with_group(group(50.0, Some(60.0))))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("deadline_ms = 60") && e.contains("at most the period"),
            "{e}"
        );
        let p = plan(&with_group(group(50.0, Some(45.0)))).unwrap();
        assert_eq!(p.groups[0].period_ns, 50_000_000);
        assert_eq!(p.groups[0].deadline_ns, 45_000_000);
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
        let e = Config::from_toml("[[group]]\nperiod_ms = 50")
            .unwrap_err()
            .to_string();
        assert!(e.contains("cgroup"), "{e}");
        let e = Config::from_toml("[[group]]\ncgroup = \"w\"\nspeed = 1")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `speed`"), "{e}");
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
            c.groups[0].cgroup, "a",
            "file groups kept when no flag gives groups"
        );
        let args = RunArgs {
            config: Some(file),
            tick_cgroups: vec!["b".into()],
            ..Default::default()
        };
        assert_eq!(Config::from_args(&args).unwrap().groups[0].cgroup, "b");
        let args = RunArgs {
            config: Some(dir.join("missing.toml")),
            ..Default::default()
        };
        let e = format!("{:#}", Config::from_args(&args).unwrap_err());
        assert!(e.contains("cannot read the configuration file"), "{e}");
        std::fs::remove_dir_all(dir).ok();
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

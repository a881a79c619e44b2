//! The plan: a [`Config`] checked against the machine, every default
//! resolved, times in ns; what both policy modes run.

use std::collections::BTreeSet;
use std::path::PathBuf;

use anyhow::{Result, anyhow, bail};

use super::options::options;
use super::parse::parse_regex;
use super::{Config, Kernel, MissingCgroup, Output, Pin, ThreadSelectConfig, TickCpus, TickUnit};
use crate::model::topology::{self, Machine};

const MAX_PERIOD_MS: f64 = 10_000.0;
const MIN_PERIOD_MS: f64 = 1.0;
/// A deadline may be this many periods long: a server that catches up on
/// late ticks (runs them back to back) keeps its game on time while a tick
/// ends up to its catch-up allowance late; past a few ticks it is behind.
const MAX_DEADLINE_PERIODS: f64 = crate::bpf::intf::tick_consts_MAX_DEADLINE_PERIODS as f64;

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

/// The `Plan` fields of the scheduler options, their range checks and
/// their values, from the options table.
macro_rules! plan_fields {
    (
        before $before:tt
        scheduler [$({
            $docs:tt $arg:tt $flag:ident $fty:tt $key:ident $ty:tt $default:tt
            $kind:ident $range:tt $plan:ident [$pty:ty]
        })*]
        file $file:tt
        after $after:tt
    ) => {
        /// A validated configuration.
        #[derive(Debug, Clone, PartialEq)]
        pub struct Plan {
            $(pub $plan: $pty,)*
            pub groups: Vec<Group>,
            pub output: Output,
            pub kernel: Kernel,
        }

        impl Config {
            /// Each option's range, the last declared first (the order
            /// of these errors since there were ranges).
            fn check_ranges(&self) -> Result<()> {
                let ranges = [$(range!($kind $range, self.$key, $flag)),*];
                for (key, flag, v, lo, hi) in ranges.into_iter().flatten().rev() {
                    check_range(&format!("{key} (--{})", flag.replace('_', "-")), v, lo, hi)?;
                }
                Ok(())
            }

            /// The plan of checked options, the tick CPUs and the groups.
            fn plan(&self, tick_cpus: Vec<usize>, groups: Vec<Group>) -> Plan {
                Plan {
                    $($plan: plan_value!($kind, self.$key, tick_cpus),)*
                    groups,
                    output: self.output.clone(),
                    kernel: self.kernel.clone(),
                }
            }
        }
    };
}

/// An `ms` option's (key, flag, value, lowest, highest); None for others.
macro_rules! range {
    (ms [$lo:expr, $hi:expr], $self:ident.$key:ident, $flag:ident) => {
        Some((stringify!($key), stringify!($flag), $self.$key, $lo, $hi))
    };
    ($kind:ident $range:tt, $self:ident.$key:ident, $flag:ident) => {
        None
    };
}

/// An option's value in the plan, by its kind: ms in ns, the tick CPUs
/// resolved, others as they are.
macro_rules! plan_value {
    (ms, $value:expr, $tick_cpus:ident) => {
        ms_to_ns($value)
    };
    (cpus, $value:expr, $tick_cpus:ident) => {
        $tick_cpus
    };
    ($kind:ident, $value:expr, $tick_cpus:ident) => {
        $value
    };
}

options!(plan_fields);

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

impl Config {
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

        self.check_ranges()?;

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

        Ok(self.plan(tick_cpus, groups))
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
            .map(|r| parse_regex(&format!("{what}: {key} ="), r))
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

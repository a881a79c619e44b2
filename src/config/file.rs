//! The TOML configuration file: its schema as written (`FileConfig`),
//! read into a [`Config`].

use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use serde::Deserialize;

use super::parse::{check_cpu_id, parse_cpu_list};
use super::{Config, DEFAULT_PERIOD_MS, GroupConfig, Pin, ThreadSelectConfig, TickCpus};

impl Config {
    pub fn from_file(path: &Path) -> Result<Config> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the configuration file {}", path.display()))?;
        Config::from_toml(&text).with_context(|| format!("in {}", path.display()))
    }

    /// Parse a TOML configuration; keys mirror the vocabulary of CanvasMC's
    /// Affinity scheduler (Canvas's configuration names, in camelCase, are
    /// accepted too).
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
        match (f.canvas_cpu_affinity, f.pin.is_some()) {
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
    /// Canvas's switch for hard pinning: true = "hard", false = "soft".
    #[serde(rename = "enableAffinitySchedulerCpuAffinity")]
    canvas_cpu_affinity: Option<bool>,
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

/// `4`, `"2,4,6-7"`, `[2, 4]` or Canvas's `["2", "4"]`.
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

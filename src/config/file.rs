//! The TOML configuration file: its schema as written (`FileConfig`),
//! read into a [`Config`].

use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use serde::Deserialize;

use super::options::options;
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
        let mut f: FileConfig = toml::from_str(text).map_err(|e| match e.span() {
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
        c.merge_file(&mut f)?;
        for g in std::mem::take(&mut f.groups) {
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

/// The TOML file as written (`FileConfig`: its keys in the order the
/// table's `file` section gives them, which is the order an unknown key's
/// error lists them in), and each key's value over the defaults.
macro_rules! file_schema {
    (
        before $before:tt
        scheduler $scheduler:tt
        file [$({
            [$(#[$doc:meta])*] $key:ident [$($alias:literal)?] [$($rename:literal)?] [$ty:ty]
            [$($read:ident)?]
        })*]
        after $after:tt
    ) => {
        /// Every key of the file (its name, its Canvas name or "") and
        /// its type, for the fuzz tests.
        #[cfg(test)]
        pub(super) const FILE_KEYS: &[(&str, &str, &str)] = &[$((
            key_name!($key $($rename)?),
            key_name!($($alias)?),
            stringify!($ty),
        )),*];

        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        struct FileConfig {
            $(
                $(#[$doc])*
                $(#[serde(alias = $alias)])?
                $(#[serde(rename = $rename)])?
                $key: Option<$ty>,
            )*
            #[serde(default, rename = "group")]
            groups: Vec<FileGroup>,
        }

        impl Config {
            /// The file's values over the defaults, key by key.
            fn merge_file(&mut self, f: &mut FileConfig) -> Result<()> {
                $(read_value!(self, f.$key $(=> $read)?);)*
                Ok(())
            }
        }
    };
}

/// A key as the file writes it: its field's name, or its rename; "" for
/// no alias.
#[cfg(test)]
macro_rules! key_name {
    ($key:ident) => {
        stringify!($key)
    };
    ($key:ident $rename:literal) => {
        $rename
    };
    ($alias:literal) => {
        $alias
    };
    () => {
        ""
    };
}

/// One key's value, as the table's `file` section says to read it: as it
/// is, `parsed` from a string, a `cpu_value`, or Canvas's pin switch.
macro_rules! read_value {
    ($c:ident, $f:ident.$key:ident) => {
        if let Some(v) = $f.$key.take() {
            $c.$key = v;
        }
    };
    ($c:ident, $f:ident.$key:ident => parsed) => {
        if let Some(v) = &$f.$key {
            $c.$key = v.parse()?;
        }
    };
    ($c:ident, $f:ident.$key:ident => cpu_value) => {
        if let Some(v) = $f.$key.take() {
            $c.$key = v.into_tick_cpus(stringify!($key))?;
        }
    };
    ($c:ident, $f:ident.$key:ident => canvas_pin) => {
        match ($f.$key, $f.pin.is_some()) {
            (Some(_), true) => bail!(
                "pin and enableAffinitySchedulerCpuAffinity are both given; allowed: one of them \
                 (enableAffinitySchedulerCpuAffinity = true is pin = \"hard\", false is \"soft\")"
            ),
            (Some(hard), false) => $c.pin = if hard { Pin::Hard } else { Pin::Soft },
            (None, _) => {}
        }
    };
}

options!(file_schema);

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

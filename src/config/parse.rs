//! The values as flags write them (and the file's strings): CPU lists
//! and counts, milliseconds, and a tick group's `--tick-cgroup` or
//! `--tick-threads` spec.

use anyhow::{Result, anyhow, bail};

use super::{GroupConfig, ThreadSelectConfig, TickCpus};

/// CPU ids at or above this cannot exist (the BPF side's MAX_CPUS); checked
/// while parsing so that a range like `0-99999999999` is refused, not allocated.
const CPU_ID_LIMIT: usize = crate::bpf::intf::tick_consts_MAX_CPUS as usize;

/// A regular expression, or the error `{name} "RE": not a valid regular
/// expression (why)`: regex's syntax errors span lines (pattern, caret,
/// error), and only the last says why.
pub fn parse_regex(name: &str, r: &str) -> Result<regex::Regex> {
    regex::Regex::new(r).map_err(|e| {
        let msg = e.to_string();
        let why = msg
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        anyhow!(
            "{name} {r:?}: not a valid regular expression ({})",
            why.trim().trim_start_matches("error: ")
        )
    })
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

pub(super) fn check_cpu_id(key: &str, cpu: usize) -> Result<()> {
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

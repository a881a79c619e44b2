//! `scx_tick suggest --pid PID`: watch a running server's threads for a few
//! seconds and propose the tick group that selects its tick threads.
//!
//! Two kinds of thread make a server's tick: the ones that do its work
//! every tick (they use the most CPU) and the ones that wake at its tick
//! rate doing little (a clock that gates the step). On Debian's
//! minetest-server, selecting its clock and its loop thread as runners
//! beat selecting every thread and the loop thread alone
//! (docs/benchmarks.md, "Real servers"); the other threads as runners only
//! compete with the loop. Reads /proc only: it needs neither root nor
//! sched_ext.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::config::cli::SuggestArgs;

/// One thread's counters at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub tid: u32,
    pub comm: String,
    /// utime + stime, in clock ticks.
    pub cpu_ticks: u64,
    /// Voluntary context switches: each is a sleep, ended by a wake-up.
    pub wakes: u64,
}

/// The threads of one name over the window.
#[derive(Debug, Clone, PartialEq)]
pub struct Rate {
    pub comm: String,
    pub threads: usize,
    /// CPU of the busiest thread of that name, % of one CPU.
    pub cpu_pct: f64,
    /// Wake-ups per second of that thread.
    pub wakes_per_s: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Does the server's work: a runner.
    Works,
    /// Wakes at the tick rate doing little (a clock that gates the step): a runner.
    Clock,
    /// Neither: left to the rest of the machine.
    Other,
}

/// Counters of threads sampled twice `secs` apart, by name (the busiest
/// thread of each name stands for it).
pub fn rates(before: &[Sample], after: &[Sample], secs: f64, clk_tck: u64) -> Vec<Rate> {
    let mut by_name: BTreeMap<&str, Rate> = BTreeMap::new();
    for a in after {
        let Some(b) = before.iter().find(|b| b.tid == a.tid) else {
            continue; // born during the window: no rate
        };
        let cpu_pct =
            100.0 * a.cpu_ticks.saturating_sub(b.cpu_ticks) as f64 / clk_tck as f64 / secs;
        let wakes_per_s = a.wakes.saturating_sub(b.wakes) as f64 / secs;
        let r = by_name.entry(&a.comm).or_insert(Rate {
            comm: a.comm.clone(),
            threads: 0,
            cpu_pct: 0.0,
            wakes_per_s: 0.0,
        });
        r.threads += 1;
        if cpu_pct >= r.cpu_pct {
            r.cpu_pct = cpu_pct;
            r.wakes_per_s = wakes_per_s;
        }
    }
    by_name.into_values().collect()
}

/// A thread works every tick if it uses at least a quarter of the busiest
/// thread's CPU (and 1 % of a CPU); it is a clock if it wakes within
/// -20/+25 % of the tick rate and does not.
pub fn role(r: &Rate, busiest_cpu_pct: f64, tick_hz: f64) -> Role {
    if r.cpu_pct >= 1.0 && r.cpu_pct >= busiest_cpu_pct / 4.0 {
        Role::Works
    } else if r.wakes_per_s >= tick_hz * 0.8 && r.wakes_per_s <= tick_hz * 1.25 {
        Role::Clock
    } else {
        Role::Other
    }
}

/// The pattern that selects these thread names: the kernel keeps 15 bytes
/// of a name, so a 15-byte name may be cut and is matched as a prefix.
pub fn thread_pattern(names: &[&str]) -> String {
    let alts: Vec<String> = names
        .iter()
        .map(|n| {
            let e = regex::escape(n);
            if n.len() >= 15 { e } else { format!("{e}$") }
        })
        .collect();
    match alts.as_slice() {
        [one] => format!("^{one}"),
        _ => format!("^({})", alts.join("|")),
    }
}

/// One tick per process (`tick = "process"`) when the chosen threads make
/// one step together: one thread does the work, the others are clocks it
/// waits for. Several threads that each work every tick are a pool of
/// loops, each its own tick (Folia's region threads, tickload's runners);
/// one thread alone is the same either way.
pub fn tick_per_process(chosen: &[(&Rate, Role)]) -> bool {
    let workers: usize = chosen
        .iter()
        .filter(|(_, role)| *role == Role::Works)
        .map(|(r, _)| r.threads)
        .sum();
    workers == 1 && chosen.len() > 1
}

/// The `[[group]]` (and the flag form) for the chosen threads.
pub fn proposal(
    name: &str,
    process: &str,
    threads: &[&str],
    period_ms: f64,
    per_process: bool,
) -> String {
    let process = format!("^{}$", regex::escape(process));
    let thread = thread_pattern(threads);
    let toml_str = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"");
    let (tick, tick_flag) = if per_process {
        (
            "tick = \"process\"     # its threads make one step: one tick, one deadline\n",
            ",tick=process",
        )
    } else {
        ("", "")
    };
    format!(
        "[[group]]\nname = \"{name}\"\nprocess = \"{}\"\nthread_name = \"{}\"\nperiod_ms = {period_ms}\n{tick}\n\
         # the same as a flag:\n# --tick-threads '{name},process={process},thread={thread},period={period_ms}{tick_flag}'\n",
        toml_str(&process),
        toml_str(&thread),
    )
}

fn read_samples(pid: u32) -> Result<Vec<Sample>> {
    let dir = format!("/proc/{pid}/task");
    let entries =
        std::fs::read_dir(&dir).with_context(|| format!("process {pid} does not exist ({dir})"))?;
    let mut out = Vec::new();
    for e in entries.flatten() {
        let Some(tid) = e.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        // a thread may exit between the listing and the reads: skip it
        let (Ok(stat), Ok(status)) = (
            std::fs::read_to_string(format!("{dir}/{tid}/stat")),
            std::fs::read_to_string(format!("{dir}/{tid}/status")),
        ) else {
            continue;
        };
        let Some(s) = parse_sample(tid, &stat, &status) else {
            continue;
        };
        out.push(s);
    }
    Ok(out)
}

/// A thread's sample from its /proc stat and status.
pub fn parse_sample(tid: u32, stat: &str, status: &str) -> Option<Sample> {
    let comm = &stat[stat.find('(')? + 1..stat.rfind(')')?];
    // after the name: state is field 3, utime 14, stime 15
    let rest: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    let cpu_ticks = rest.get(11)?.parse::<u64>().ok()? + rest.get(12)?.parse::<u64>().ok()?;
    let wakes = status
        .lines()
        .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))?
        .trim()
        .parse()
        .ok()?;
    Some(Sample {
        tid,
        comm: comm.to_string(),
        cpu_ticks,
        wakes,
    })
}

pub fn run(a: &SuggestArgs) -> Result<()> {
    if !(a.seconds > 0.0 && a.seconds <= 600.0) {
        bail!("--seconds {}: must be above 0 and at most 600", a.seconds);
    }
    if !(a.period_ms >= 1.0 && a.period_ms <= 10_000.0) {
        bail!("--period-ms {}: must be 1 to 10000", a.period_ms);
    }
    let process = std::fs::read_to_string(format!("/proc/{}/comm", a.pid))
        .with_context(|| format!("process {} does not exist", a.pid))?
        .trim_end()
        .to_string();
    let t0 = Instant::now();
    let before = read_samples(a.pid)?;
    std::thread::sleep(Duration::from_secs_f64(a.seconds));
    let after = read_samples(a.pid)?;
    let secs = t0.elapsed().as_secs_f64();
    // SAFETY: sysconf has no preconditions.
    let clk_tck = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    let mut rates = rates(&before, &after, secs, clk_tck);
    rates.sort_by(|x, y| y.cpu_pct.total_cmp(&x.cpu_pct));
    let busiest = rates.first().map_or(0.0, |r| r.cpu_pct);
    let tick_hz = 1000.0 / a.period_ms;
    println!(
        "{} ({}), {secs:.1} s, tick rate {tick_hz:.1}/s:",
        a.pid, process
    );
    println!(
        "{:<16} {:>7} {:>7} {:>10}  role",
        "thread", "threads", "CPU %", "wake-ups/s"
    );
    let mut chosen = Vec::new();
    let mut roles = Vec::new();
    for r in &rates {
        let role = role(r, busiest, tick_hz);
        let why = match role {
            Role::Works => "works every tick: a runner",
            Role::Clock => "wakes at the tick rate: a clock the tick may wait for, a runner",
            Role::Other => "-",
        };
        println!(
            "{:<16} {:>7} {:>7.1} {:>10.1}  {why}",
            r.comm, r.threads, r.cpu_pct, r.wakes_per_s
        );
        if role != Role::Other {
            chosen.push(r.comm.as_str());
            roles.push((r, role));
        }
    }
    chosen.sort_unstable();
    if chosen.is_empty() {
        bail!(
            "no thread of process {} used CPU or woke at the tick rate in {secs:.1} s: \
             is the server running its ticks? (--seconds longer, --period-ms its tick)",
            a.pid
        );
    }
    let per_process = tick_per_process(&roles);
    println!(
        "\n{}",
        proposal(&a.name, &process, &chosen, a.period_ms, per_process)
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(tid: u32, comm: &str, cpu: u64, wakes: u64) -> Sample {
        Sample {
            tid,
            comm: comm.into(),
            cpu_ticks: cpu,
            wakes,
        }
    }

    #[test]
    fn a_server_s_loop_and_clock_are_runners_and_its_helpers_are_not() {
        // minetest-like, 10 s at 100 ticks/s: the loop 24 % of a CPU, the
        // clock waking 20/s, a connection thread waking 200/s, an idle worker
        let before = [
            sample(1, "minetestserver", 10, 100),
            sample(2, "Server", 500, 1000),
            sample(3, "ConnectionSend", 30, 5000),
            sample(4, "Emerge-0", 0, 3),
        ];
        let after = [
            sample(1, "minetestserver", 12, 300),
            sample(2, "Server", 740, 1450),
            sample(3, "ConnectionSend", 40, 7000),
            sample(4, "Emerge-0", 0, 3),
            sample(5, "born-later", 50, 50),
        ];
        let rates = rates(&before, &after, 10.0, 100);
        assert_eq!(
            rates.len(),
            4,
            "a thread born during the window has no rate"
        );
        let r = |n: &str| rates.iter().find(|r| r.comm == n).unwrap();
        assert!((r("Server").cpu_pct - 24.0).abs() < 1e-9);
        assert!((r("minetestserver").wakes_per_s - 20.0).abs() < 1e-9);
        let role = |n| role(r(n), 24.0, 20.0);
        assert_eq!(role("Server"), Role::Works);
        assert_eq!(role("minetestserver"), Role::Clock);
        assert_eq!(role("ConnectionSend"), Role::Other);
        assert_eq!(role("Emerge-0"), Role::Other);
    }

    #[test]
    fn the_proposal_anchors_names_and_matches_cut_ones_as_prefixes() {
        assert_eq!(thread_pattern(&["Server"]), "^Server$");
        assert_eq!(
            thread_pattern(&["Server", "minetestserver"]),
            "^(Server$|minetestserver$)"
        );
        // 15 bytes: the kernel may have cut it
        assert_eq!(thread_pattern(&["Folia Region Sc"]), "^Folia Region Sc");
        assert_eq!(thread_pattern(&["Tick Runner #0"]), "^Tick Runner \\#0$");
        let p = proposal(
            "mt",
            "minetestserver",
            &["Server", "minetestserver"],
            50.0,
            true,
        );
        let cfg: toml::Value = toml::from_str(&p).expect("the proposal is TOML");
        let g = &cfg["group"][0];
        assert_eq!(g["process"].as_str(), Some("^minetestserver$"));
        assert_eq!(
            g["thread_name"].as_str(),
            Some("^(Server$|minetestserver$)")
        );
        assert_eq!(g["tick"].as_str(), Some("process"));
        assert!(p.contains("--tick-threads 'mt,process=^minetestserver$,thread=^(Server$|minetestserver$),period=50,tick=process'"));
        // and it is a configuration scx_tick takes
        crate::config::Config::from_toml(&p).expect("check-config takes it");
        let p = proposal("world", "java", &["Folia Region Sc"], 50.0, false);
        assert!(!p.contains("tick =") && !p.contains("tick="), "{p}");
    }

    #[test]
    fn a_step_spread_over_threads_is_one_tick_per_process_and_a_pool_one_per_thread() {
        let rate = |comm: &str, threads| Rate {
            comm: comm.into(),
            threads,
            cpu_pct: 30.0,
            wakes_per_s: 20.0,
        };
        let (server, clock) = (rate("Server", 1), rate("minetestserver", 1));
        assert!(tick_per_process(&[
            (&server, Role::Works),
            (&clock, Role::Clock)
        ]));
        assert!(!tick_per_process(&[(&server, Role::Works)]));
        // Folia: region threads are a pool of loops, each its own tick
        let regions = rate("Folia Region Sc", 4);
        assert!(!tick_per_process(&[
            (&regions, Role::Works),
            (&clock, Role::Clock)
        ]));
        // tickload: runners with names of their own, still a pool
        let (r0, r1) = (rate("Tick Runner #0", 1), rate("Tick Runner #1", 1));
        assert!(!tick_per_process(&[(&r0, Role::Works), (&r1, Role::Works)]));
    }

    #[test]
    fn proc_stat_and_status_parse_whatever_the_name() {
        let stat = "4242 (Tick (x) 1) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 30 0 987654 100000 200";
        let status = "Name:\tx\nvoluntary_ctxt_switches:\t77\nnonvoluntary_ctxt_switches:\t3\n";
        assert_eq!(
            parse_sample(4242, stat, status),
            Some(sample(4242, "Tick (x) 1", 8, 77))
        );
        assert_eq!(parse_sample(1, "garbage", status), None);
    }
}

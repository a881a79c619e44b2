//! tickload: a tick-server workload. N runner threads sleep until the next
//! absolute tick time, then burn W ms of CPU time; each keeps its own log of
//! every tick, which is the ground truth tests compare the scheduler with.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Parser;
use scx_tick::stats::percentile;
use serde::Serialize;

#[derive(Debug, Parser)]
#[command(
    name = "tickload",
    about = "Tick-runner workload with per-tick accounting"
)]
struct Args {
    /// Number of tick runner threads.
    #[arg(short = 'n', long, default_value_t = 2)]
    threads: usize,
    /// Tick period in ms (50 ms = 20 TPS).
    #[arg(long, default_value_t = 50.0)]
    period_ms: f64,
    /// Relative deadline of a tick in ms (default: the period).
    #[arg(long)]
    deadline_ms: Option<f64>,
    /// CPU time each tick burns, in ms.
    #[arg(long, default_value_t = 8.0)]
    work_ms: f64,
    /// How long to run, in seconds.
    #[arg(long, default_value_t = 10.0)]
    duration_s: f64,
    /// Move this process into this cgroup (v2 directory) before starting.
    #[arg(long)]
    cgroup: Option<PathBuf>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
    /// Publish each tick's exact deadline to scx_tick (deadline hints).
    #[arg(long)]
    hint: bool,
}

#[derive(Debug, Default, Serialize)]
struct RunnerReport {
    name: String,
    ticks: u64,
    misses: u64,
    miss_pct: f64,
    lateness_p50_ms: f64,
    lateness_p99_ms: f64,
    lateness_max_ms: f64,
    mspt_mean_ms: f64,
    mspt_p99_ms: f64,
    tps: f64,
    /// CPU each tick started on -> number of ticks.
    cpus: BTreeMap<i32, u64>,
}

fn now_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid pointer to a timespec.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn sleep_until(t_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (t_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (t_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: valid timespec; EINTR just ends the sleep early, the loop re-checks.
    unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    };
}

/// Burn `ns` of this thread's CPU time: a fixed amount of work, however
/// often the thread is preempted.
fn burn(ns: u64) {
    let end = now_ns(libc::CLOCK_THREAD_CPUTIME_ID) + ns;
    let mut x = 0u64;
    while now_ns(libc::CLOCK_THREAD_CPUTIME_ID) < end {
        for i in 0..1000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
        }
        std::hint::black_box(x);
    }
}

fn runner(
    name: String,
    period: u64,
    deadline: u64,
    work: u64,
    start: u64,
    end: u64,
    hint: Option<scx_tick_hint::DeadlineHint>,
) -> RunnerReport {
    let mut lateness = Vec::new();
    let mut mspt = Vec::new();
    let mut r = RunnerReport {
        name,
        ..Default::default()
    };
    let mut next = start;
    while next < end {
        if let Some(h) = &hint {
            h.set_deadline_ns(next + deadline);
        }
        sleep_until(next);
        let begin = now_ns(libc::CLOCK_MONOTONIC);
        // SAFETY: no arguments.
        let cpu = unsafe { libc::sched_getcpu() };
        burn(work);
        let done = now_ns(libc::CLOCK_MONOTONIC);
        r.ticks += 1;
        if done > next + deadline {
            r.misses += 1;
        }
        *r.cpus.entry(cpu).or_default() += 1;
        lateness.push(begin.saturating_sub(next));
        mspt.push(done - begin);
        next += period;
        // More than a whole tick behind: skip the lost ticks (a game server
        // would otherwise run them back to back and never catch up).
        if done > next + period {
            next += (done - next) / period * period;
        }
    }
    let ms = |v: u64| v as f64 / 1e6;
    r.miss_pct = if r.ticks > 0 {
        100.0 * r.misses as f64 / r.ticks as f64
    } else {
        0.0
    };
    lateness.sort_unstable();
    mspt.sort_unstable();
    r.lateness_p50_ms = ms(percentile(&lateness, 50.0));
    r.lateness_p99_ms = ms(percentile(&lateness, 99.0));
    r.lateness_max_ms = ms(lateness.last().copied().unwrap_or(0));
    r.mspt_mean_ms = ms(mspt.iter().sum::<u64>() / mspt.len().max(1) as u64);
    r.mspt_p99_ms = ms(percentile(&mspt, 99.0));
    r.tps = r.ticks as f64 / ((end - start) as f64 / 1e9);
    r
}

fn main() -> Result<()> {
    let a = Args::parse();
    if a.threads == 0 || a.period_ms <= 0.0 || a.work_ms < 0.0 || a.duration_s <= 0.0 {
        bail!("--threads, --period-ms and --duration-s must be above 0, --work-ms at least 0");
    }
    if let Some(cg) = &a.cgroup {
        std::fs::write(cg.join("cgroup.procs"), std::process::id().to_string())
            .with_context(|| format!("moving tickload into {}", cg.display()))?;
    }
    let ns = |ms: f64| (ms * 1e6) as u64;
    let (period, work) = (ns(a.period_ms), ns(a.work_ms));
    let deadline = ns(a.deadline_ms.unwrap_or(a.period_ms));
    // All runners tick in phase, like a game server's region tick runners.
    let start = now_ns(libc::CLOCK_MONOTONIC) + 20_000_000;
    let end = start + Duration::from_secs_f64(a.duration_s).as_nanos() as u64;
    let handles: Vec<_> = (0..a.threads)
        .map(|k| {
            let name = format!("Tick Runner #{k}");
            let want_hint = a.hint;
            std::thread::Builder::new()
                .name(name.clone())
                .spawn(move || -> Result<RunnerReport> {
                    // the slot belongs to the runner thread: register on it
                    let hint = want_hint
                        .then(scx_tick_hint::DeadlineHint::register)
                        .transpose()
                        .context("registering for deadline hints (is scx_tick running and this process in a tick group?)")?;
                    Ok(runner(name, period, deadline, work, start, end, hint))
                })
        })
        .collect::<std::io::Result<_>>()?;
    let reports: Vec<RunnerReport> = handles
        .into_iter()
        .map(|h| h.join().expect("runner thread panicked"))
        .collect::<Result<_>>()?;

    let ticks: u64 = reports.iter().map(|r| r.ticks).sum();
    let misses: u64 = reports.iter().map(|r| r.misses).sum();
    let miss_pct = if ticks > 0 {
        100.0 * misses as f64 / ticks as f64
    } else {
        0.0
    };
    if a.json {
        let v = serde_json::json!({
            "ticks": ticks, "misses": misses, "miss_pct": miss_pct, "runners": reports,
        });
        println!("{v}");
        return Ok(());
    }
    println!(
        "{:<16} {:>6} {:>6} {:>7} {:>8} {:>8} {:>8} {:>9} {:>8} {:>6}",
        "RUNNER",
        "TICKS",
        "MISSES",
        "MISS%",
        "LATE_P50",
        "LATE_P99",
        "LATE_MAX",
        "MSPT_AVG",
        "MSPT_P99",
        "TPS"
    );
    for r in &reports {
        println!(
            "{:<16} {:>6} {:>6} {:>6.2}% {:>8.2} {:>8.2} {:>8.2} {:>9.2} {:>8.2} {:>6.1}",
            r.name,
            r.ticks,
            r.misses,
            r.miss_pct,
            r.lateness_p50_ms,
            r.lateness_p99_ms,
            r.lateness_max_ms,
            r.mspt_mean_ms,
            r.mspt_p99_ms,
            r.tps
        );
    }
    println!("total: ticks={ticks} misses={misses} miss_pct={miss_pct:.2}");
    Ok(())
}

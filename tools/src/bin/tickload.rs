//! tickload: a tick-server workload. N runner threads sleep until the next
//! absolute tick time, then burn a drawn amount of CPU time (fixed, with
//! jitter, with occasional spikes; seeded, so every scheduler sees the same
//! ticks); each keeps its own log of every tick, which is the ground truth
//! tests and the benchmark compare schedulers with.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, OnceLock, mpsc};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Parser;
use scx_tick_tools::rtpolicy::{self, DlParams, Policy, Request};
use scx_tick_tools::workload::{
    Rng, Summary, Tick, WorkDist, clock_ns, lateness_quantiles_ms, steps, summarize,
};
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
    /// CPU time each tick burns, in ms (the mean with --jitter-ms).
    #[arg(long, default_value_t = 8.0)]
    work_ms: f64,
    /// Each tick's work is uniform in work ± jitter ms.
    #[arg(long, default_value_t = 0.0)]
    jitter_ms: f64,
    /// CPU time of a spike tick, in ms (used with --spike-pct).
    #[arg(long, default_value_t = 0.0)]
    spike_ms: f64,
    /// Percentage of ticks that are spikes (e.g. 1 = one tick in a hundred).
    #[arg(long, default_value_t = 0.0)]
    spike_pct: f64,
    /// Seed of the work draws; runner k uses seed + k.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// How long to run, in seconds (SIGTERM ends the run sooner: the
    /// report then covers the run up to it).
    #[arg(long, default_value_t = 10.0)]
    duration_s: f64,
    /// Scheduling policy of the runner threads.
    #[arg(long, value_enum, default_value_t = Policy::Other)]
    policy: Policy,
    /// SCHED_FIFO priority (1-99) with --policy fifo.
    #[arg(long, default_value_t = 50)]
    fifo_prio: u32,
    /// SCHED_DEADLINE runtime in ms (default: (work + jitter) x 1.1, at most the deadline).
    #[arg(long)]
    dl_runtime_ms: Option<f64>,
    /// SCHED_DEADLINE relative deadline in ms (default: the tick deadline).
    #[arg(long)]
    dl_deadline_ms: Option<f64>,
    /// SCHED_DEADLINE period in ms (default: the tick period).
    #[arg(long)]
    dl_period_ms: Option<f64>,
    /// Move this process into this cgroup (v2 directory) before starting.
    #[arg(long)]
    cgroup: Option<PathBuf>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
    /// Publish each tick's exact deadline to scx_tick (deadline hints).
    #[arg(long)]
    hint: bool,
    /// Behave like a game server's tick loop: a tick that is due already
    /// runs at once, without sleeping first (a server behind schedule, or
    /// one whose work exceeds the period, never sleeps).
    #[arg(long)]
    game_server: bool,
    /// Block this many times in the middle of each tick (a 1 ms sleep
    /// between equal parts of its work), as a server's loop does on a
    /// lock, a condition variable or a receive timeout: one tick, several
    /// wake-ups.
    #[arg(long, default_value_t = 0)]
    blocks: u32,
    /// After its own work, each runner hands this much CPU work (ms) to a
    /// helper thread of its own ("Tick Helper #K") and waits for it: a
    /// tick gated by a helper, as a server's step waits on a worker.
    #[arg(long, default_value_t = 0.0)]
    helper_ms: f64,
    /// Start the ticks at this offset (ms) into the period on
    /// CLOCK_MONOTONIC, so that separate tickload processes keep a fixed
    /// phase to each other (default: 20 ms from now, any phase).
    #[arg(long)]
    phase_ms: Option<f64>,
    /// Halfway through the run, move every runner's schedule this many ms
    /// later, once (a server that fell behind and reset its clock: its
    /// steps keep their period at a new phase).
    #[arg(long, default_value_t = 0.0)]
    phase_jump_ms: f64,
    /// Write every tick (runner, due, begin, end in CLOCK_MONOTONIC ns)
    /// to FILE, one per line: to set against scx_tick's miss log (-vv).
    #[arg(long, value_name = "FILE", hide = true)]
    ticks_log: Option<PathBuf>,
}

#[derive(Debug, Serialize)]
struct RunnerReport {
    name: String,
    #[serde(flatten)]
    summary: Summary,
    /// CPU each tick started on -> number of ticks.
    cpus: BTreeMap<i32, u64>,
    /// Ticks that started on another CPU than the runner's previous tick.
    cpu_changes: u64,
    /// Ticks of the period grid skipped because the runner was a whole
    /// period behind (--game-server): due, never run, so missed.
    skipped: u64,
}

/// When SIGTERM came (CLOCK_MONOTONIC ns; 0: it has not): each runner
/// stops at its next tick, and the report covers the run up to the signal,
/// so a caller can end a run whose length it could not know in advance.
static STOPPED_AT: AtomicU64 = AtomicU64::new(0);

extern "C" fn on_sigterm(_: libc::c_int) {
    // clock_gettime is async-signal-safe
    STOPPED_AT.store(clock_ns(libc::CLOCK_MONOTONIC).max(1), Ordering::Relaxed);
}

fn ns(ms: f64) -> u64 {
    (ms * 1e6).round() as u64
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
/// often the thread is preempted. Returns the longest wall-clock gap
/// between two progress stamps (each a few microseconds of work apart):
/// how long the thread waited for a CPU in the middle of its work.
fn burn(ns: u64) -> u64 {
    let end = clock_ns(libc::CLOCK_THREAD_CPUTIME_ID) + ns;
    let mut x = 0u64;
    let mut stamp = clock_ns(libc::CLOCK_MONOTONIC);
    let mut stall = 0;
    while clock_ns(libc::CLOCK_THREAD_CPUTIME_ID) < end {
        for i in 0..1000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
        }
        std::hint::black_box(x);
        let now = clock_ns(libc::CLOCK_MONOTONIC);
        stall = stall.max(now - stamp);
        stamp = now;
    }
    stall
}

struct Plan {
    period: u64,
    deadline: u64,
    work: WorkDist,
    start: u64,
    end: u64,
    hint: Option<scx_tick_hint::DeadlineHint>,
    game_server: bool,
    blocks: u32,
    /// The runner's helper: work sent, done replied.
    helper: Option<(mpsc::Sender<u64>, mpsc::Receiver<u64>)>,
    helper_ns: u64,
    /// (when, by how much): the one move of the schedule, --phase-jump-ms.
    jump: (u64, u64),
}

/// A runner's helper thread: burns the work it is handed, replies with its
/// longest stall; ends when its runner does.
fn spawn_helper(name: String) -> std::io::Result<(mpsc::Sender<u64>, mpsc::Receiver<u64>)> {
    let (work_tx, work_rx) = mpsc::channel::<u64>();
    let (done_tx, done_rx) = mpsc::channel::<u64>();
    std::thread::Builder::new().name(name).spawn(move || {
        for ns in work_rx {
            if done_tx.send(burn(ns)).is_err() {
                break;
            }
        }
    })?;
    Ok((work_tx, done_rx))
}

/// A tick's work, in `blocks + 1` equal parts with a 1 ms sleep between
/// them. Returns the longest stall (see [`burn`]).
fn work_blocking(ns: u64, blocks: u32) -> u64 {
    let parts = u64::from(blocks) + 1;
    let mut stall = burn(ns / parts);
    for _ in 0..blocks {
        std::thread::sleep(Duration::from_millis(1));
        stall = stall.max(burn(ns / parts));
    }
    stall
}

/// One runner: tick until `end`; the log of its ticks, the CPUs they
/// started on, how many started on another CPU than the tick before, and
/// how many ticks it skipped.
fn run_ticks(plan: &Plan, mut rng: Rng) -> (Vec<Tick>, BTreeMap<i32, u64>, u64, u64) {
    let mut ticks = Vec::new();
    let mut cpus = BTreeMap::new();
    let (mut changes, mut last_cpu) = (0, None);
    let mut skipped = 0;
    let mut next = plan.start;
    let mut jump = Some(plan.jump);
    while next < plan.end && STOPPED_AT.load(Ordering::Relaxed) == 0 {
        if let Some((at, by)) = jump
            && next >= at
        {
            next += by;
            jump = None;
        }
        if let Some(h) = &plan.hint {
            h.set_deadline_ns(next + plan.deadline);
        }
        // a sleep until a time already past still blocks for a moment, and
        // the scheduler would see a wake-up: a game server does not sleep
        if !(plan.game_server && clock_ns(libc::CLOCK_MONOTONIC) >= next) {
            sleep_until(next);
        }
        let begin = clock_ns(libc::CLOCK_MONOTONIC);
        // SAFETY: no arguments.
        let cpu = unsafe { libc::sched_getcpu() };
        let mut stall = work_blocking(plan.work.sample(&mut rng), plan.blocks);
        if let Some((tx, rx)) = &plan.helper {
            // the helper's stall counts too: the tick waits for it
            let helper_stall = tx.send(plan.helper_ns).ok().and_then(|()| rx.recv().ok());
            stall = stall.max(helper_stall.expect("the helper thread ended"));
        }
        let done = clock_ns(libc::CLOCK_MONOTONIC);
        ticks.push(Tick {
            due_ns: next,
            begin_ns: begin,
            end_ns: done,
            stall_ns: stall,
        });
        *cpus.entry(cpu).or_default() += 1;
        changes += u64::from(last_cpu.is_some_and(|c| c != cpu));
        last_cpu = Some(cpu);
        next += plan.period;
        // More than a whole tick behind: skip the lost ticks (a game server
        // would otherwise run them back to back and never catch up).
        if done > next + plan.period {
            let lost = (done - next) / plan.period;
            skipped += lost;
            next += lost * plan.period;
        }
    }
    (ticks, cpus, changes, skipped)
}

fn request(a: &Args, work: &WorkDist, deadline: u64, period: u64) -> Result<Request> {
    Ok(match a.policy {
        Policy::Other => Request::Other,
        Policy::Fifo => Request::Fifo { prio: a.fifo_prio },
        Policy::Deadline => Request::Deadline(
            DlParams::derive(
                work.max_regular_ns(),
                deadline,
                period,
                a.dl_runtime_ms.map(ns),
                a.dl_deadline_ms.map(ns),
                a.dl_period_ms.map(ns),
            )
            .map_err(anyhow::Error::msg)?,
        ),
    })
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tickload: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(a: Args) -> Result<()> {
    if a.threads == 0 || a.period_ms <= 0.0 || a.work_ms < 0.0 || a.duration_s <= 0.0 {
        bail!("--threads, --period-ms and --duration-s must be above 0, --work-ms at least 0");
    }
    if a.helper_ms < 0.0 || a.phase_ms.is_some_and(|p| !(0.0..a.period_ms).contains(&p)) {
        bail!("--helper-ms must be at least 0, --phase-ms from 0 to below the period");
    }
    let work = WorkDist {
        work_ns: ns(a.work_ms),
        jitter_ns: ns(a.jitter_ms),
        spike_ns: ns(a.spike_ms),
        spike_prob: a.spike_pct / 100.0,
    };
    work.validate().map_err(anyhow::Error::msg)?;
    let period = ns(a.period_ms);
    let deadline = ns(a.deadline_ms.unwrap_or(a.period_ms));
    let req = request(&a, &work, deadline, period)?;
    if let Some(cg) = &a.cgroup {
        std::fs::write(cg.join("cgroup.procs"), std::process::id().to_string())
            .with_context(|| format!("moving tickload into {}", cg.display()))?;
    }

    // Every runner sets its policy, then all start together, in phase, like
    // a game server's region tick runners; the start time is fixed once
    // every runner is ready.
    let barrier = Arc::new(Barrier::new(a.threads + 1));
    let times = Arc::new(OnceLock::new());
    // One runner refused its policy: the others do not run the whole duration.
    let refused = Arc::new(AtomicBool::new(false));
    let handles: Vec<_> = (0..a.threads)
        .map(|k| {
            let name = format!("Tick Runner #{k}");
            let (barrier, times, refused) = (barrier.clone(), times.clone(), refused.clone());
            let rng = Rng::new(a.seed.wrapping_add(k as u64));
            let want_hint = a.hint;
            let game_server = a.game_server;
            let blocks = a.blocks;
            let helper_ns = ns(a.helper_ms);
            let jump_by = ns(a.phase_jump_ms);
            let helper = (helper_ns > 0)
                .then(|| spawn_helper(format!("Tick Helper #{k}")))
                .transpose();
            std::thread::Builder::new()
                .name(name.clone())
                .spawn(move || {
                    // the hint slot belongs to the runner thread: register on it
                    let applied = rtpolicy::apply_to_current_thread(&req).and_then(|()| {
                        want_hint
                            .then(scx_tick_hint::DeadlineHint::register)
                            .transpose()
                            .map_err(|e| format!("registering for deadline hints (is scx_tick running and this process in a tick group?): {e:#}"))
                    });
                    if applied.is_err() {
                        refused.store(true, Ordering::Relaxed);
                    }
                    barrier.wait();
                    if refused.load(Ordering::Relaxed) {
                        return applied.map(|_| (name, Default::default()));
                    }
                    let &(start, end) = times.get().expect("set before the barrier");
                    let helper = helper.map_err(|e| format!("starting the helper thread: {e}"))?;
                    applied.map(|hint| {
                        let plan = Plan {
                            period,
                            deadline,
                            work,
                            start,
                            end,
                            hint,
                            game_server,
                            blocks,
                            helper,
                            helper_ns,
                            jump: (start + (end - start) / 2 / period * period, jump_by),
                        };
                        (name, run_ticks(&plan, rng))
                    })
                })
        })
        .collect::<std::io::Result<_>>()?;
    let mut start = clock_ns(libc::CLOCK_MONOTONIC) + 20_000_000;
    if let Some(phase) = a.phase_ms {
        start = start - start % period + period + ns(phase);
    }
    let end = start + Duration::from_secs_f64(a.duration_s).as_nanos() as u64;
    times.set((start, end)).expect("set once");
    // SAFETY: the handler only stores to an atomic after clock_gettime,
    // both async-signal-safe.
    unsafe { libc::signal(libc::SIGTERM, on_sigterm as *const () as libc::sighandler_t) };
    barrier.wait();

    let results: Vec<_> = handles
        .into_iter()
        .map(|h| h.join().expect("runner panicked"))
        .collect();
    let end = match STOPPED_AT.load(Ordering::Relaxed) {
        0 => end,
        t => t.clamp(start + 1, end),
    };
    let mut runners = Vec::new();
    let mut all = Vec::new();
    let mut log = String::new();
    for res in results {
        let (name, (ticks, cpus, cpu_changes, skipped)) = res.map_err(anyhow::Error::msg)?;
        for t in &ticks {
            log += &format!("{name}\t{}\t{}\t{}\n", t.due_ns, t.begin_ns, t.end_ns);
        }
        runners.push(RunnerReport {
            name,
            summary: summarize(&ticks, deadline, 1, end - start),
            cpus,
            cpu_changes,
            skipped,
        });
        all.extend(ticks);
    }
    if let Some(path) = &a.ticks_log {
        std::fs::write(path, log).with_context(|| format!("writing {}", path.display()))?;
    }
    let skipped: u64 = runners.iter().map(|r| r.skipped).sum();
    let total = summarize(&all, deadline, a.threads, end - start);
    if a.json {
        let v = serde_json::json!({
            "ticks": total.ticks, "misses": total.misses, "miss_pct": total.miss_pct,
            "skipped": skipped,
            "steps": steps(&all, deadline),
            "total": total,
            "lateness_quantiles_ms": lateness_quantiles_ms(&all),
            "config": {
                "runners": a.threads, "period_ms": a.period_ms, "deadline_ms": deadline as f64 / 1e6,
                "work_ms": a.work_ms, "jitter_ms": a.jitter_ms, "spike_ms": a.spike_ms,
                "spike_pct": a.spike_pct, "seed": a.seed, "duration_s": a.duration_s,
                "policy": req.policy().to_string(),
            },
            "runners": runners,
        });
        println!("{v}");
        return Ok(());
    }
    print_table(&runners, &total);
    Ok(())
}

fn print_table(runners: &[RunnerReport], total: &Summary) {
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
    let row = |name: &str, s: &Summary| {
        println!(
            "{:<16} {:>6} {:>6} {:>6.2}% {:>8.2} {:>8.2} {:>8.2} {:>9.2} {:>8.2} {:>6.1}",
            name,
            s.ticks,
            s.misses,
            s.miss_pct,
            s.lateness_p50_ms,
            s.lateness_p99_ms,
            s.lateness_max_ms,
            s.mspt_mean_ms,
            s.mspt_p99_ms,
            s.tps
        )
    };
    for r in runners {
        row(&r.name, &r.summary);
    }
    row("all (TPS/runner)", total);
    println!(
        "total: ticks={} misses={} miss_pct={:.2}",
        total.ticks, total.misses, total.miss_pct
    );
}

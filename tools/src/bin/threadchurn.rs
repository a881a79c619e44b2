//! threadchurn: short-lived tick runner threads, created and exiting at a
//! high rate. Batches of threads each run a few tiny ticks (burn, sleep)
//! and exit; the next batch starts when one is done. Prints one JSON object:
//! threads created, rate, and the time the run took.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Parser;

#[derive(Debug, Parser)]
#[command(
    name = "threadchurn",
    about = "Create and end tick runner threads at a high rate"
)]
struct Args {
    /// How long to keep creating threads, in seconds.
    #[arg(long, default_value_t = 10.0)]
    duration_s: f64,
    /// Threads alive at once (one batch).
    #[arg(long, default_value_t = 32)]
    batch: usize,
    /// Ticks each thread runs before it exits.
    #[arg(long, default_value_t = 2)]
    ticks: u32,
    /// CPU time each tick burns, in microseconds.
    #[arg(long, default_value_t = 100)]
    work_us: u64,
    /// Move this process into this cgroup (v2 directory) before starting.
    #[arg(long)]
    cgroup: Option<PathBuf>,
}

fn thread_cpu_ns() -> u64 {
    scx_tick_tools::workload::clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

fn tick_runner(ticks: u32, work_ns: u64) {
    for _ in 0..ticks {
        let end = thread_cpu_ns() + work_ns;
        while thread_cpu_ns() < end {
            std::hint::spin_loop();
        }
        // sleeping ends the tick; waking starts the next one
        std::thread::sleep(Duration::from_micros(500));
    }
}

fn main() -> Result<()> {
    let a = Args::parse();
    if a.batch == 0 || a.duration_s.is_nan() || a.duration_s <= 0.0 {
        bail!("--batch and --duration-s must be above 0");
    }
    if let Some(cg) = &a.cgroup {
        std::fs::write(cg.join("cgroup.procs"), std::process::id().to_string())
            .with_context(|| format!("moving threadchurn into {}", cg.display()))?;
    }
    let start = Instant::now();
    let until = Duration::from_secs_f64(a.duration_s);
    let (mut threads, mut batches) = (0u64, 0u64);
    while start.elapsed() < until {
        let handles: Vec<_> = (0..a.batch)
            .map(|i| {
                std::thread::Builder::new()
                    .name(format!("Churn Runner {i}"))
                    .stack_size(64 * 1024)
                    .spawn(move || tick_runner(a.ticks, a.work_us * 1000))
            })
            .collect::<std::io::Result<_>>()
            .context("creating a thread")?;
        for h in handles {
            h.join().expect("a churn thread panicked");
        }
        threads += a.batch as u64;
        batches += 1;
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{}",
        serde_json::json!({
            "threads": threads,
            "batches": batches,
            "seconds": secs,
            "threads_per_s": threads as f64 / secs,
        })
    );
    Ok(())
}

//! `scx_tick --monitor N`: a client of a running scx_tick's scx_stats
//! server, printing its statistics every N seconds.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Result;
use log::info;

use crate::config::cli::{RunArgs, bad_config};
use crate::output::stats::Metrics;
use crate::output::stats_server::STATS_SOCKET;

/// `scx_tick --monitor N`
pub fn run(args: &RunArgs) -> Result<()> {
    let secs = args.monitor.unwrap_or(1.0);
    if !(secs > 0.0 && secs.is_finite() && secs <= 86400.0) {
        return Err(bad_config(anyhow::anyhow!(
            "--monitor {secs}: allowed: a number of seconds above 0, at most 86400"
        )));
    }
    let shutdown = Arc::new(AtomicBool::new(false));
    let s = shutdown.clone();
    ctrlc::set_handler(move || s.store(true, Ordering::Relaxed))?;
    monitor(Duration::from_secs_f64(secs), &shutdown)
}

/// Print a running instance's statistics every `interval`.
fn monitor(interval: Duration, shutdown: &AtomicBool) -> Result<()> {
    if !Path::new(STATS_SOCKET).exists() {
        // scx_utils' client retries every second with a line of its own
        info!(
            "no scx_tick is running ({STATS_SOCKET} does not exist); waiting for one to start \
             (Ctrl-C to stop)"
        );
    }
    scx_utils::monitor_stats::<Metrics>(
        &[],
        interval,
        || shutdown.load(Ordering::Relaxed),
        |m| {
            println!("uptime {:.0}s", m.uptime_s);
            for (name, g) in &m.groups {
                println!("{}", g.line(name));
            }
            Ok(())
        },
    )
}

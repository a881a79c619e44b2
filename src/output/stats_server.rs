//! The scx_stats server, as every scx scheduler runs one, and the
//! description of every statistic it serves (`--help-stats`).

use std::io::Write;

use anyhow::{Context, Result};
use scx_stats::prelude::*;

use super::stats::{GroupMetrics, Metrics, Shared};

/// Where scx_stats serves (its default path, for every scx scheduler).
pub const STATS_SOCKET: &str = "/var/run/scx/root/stats";

/// The scx_stats server under /var/run/scx/root/stats, as every scx
/// scheduler runs one; `scx_tick --monitor N` is its client.
pub fn launch_stats_server(shared: Shared) -> Result<StatsServer<(), ()>> {
    StatsServer::new(stats_server_data(shared))
        .launch()
        .context("starting the stats server")
}

fn stats_server_data(shared: Shared) -> StatsServerData<(), ()> {
    StatsServerData::<(), ()>::new()
        .add_meta(Metrics::meta())
        .add_meta(GroupMetrics::meta())
        .add_stats(
            "top",
            Box::new(move |_args, _chan| shared.lock().unwrap().to_json()),
        )
}

/// `scx_tick --help-stats`: every statistic and what it means, as the scx
/// schedulers describe theirs.
pub fn describe_stats(out: &mut dyn Write) -> Result<()> {
    let mut w = out;
    stats_server_data(Shared::default()).describe_meta(&mut w, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_stats_describes_every_statistic() {
        let mut out = Vec::new();
        describe_stats(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        for field in [
            "timestamp_s",
            "steals_refused",
            "lends",
            "hints_used",
            "lateness_p99_us",
        ] {
            assert!(text.contains(field), "{field} missing in {text}");
        }
    }
}

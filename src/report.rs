//! Where statistics go: the live view on stdout, JSON lines, the scx_stats
//! server (`--monitor` and other clients), the OpenMetrics endpoint, the
//! summary of miss events, and the exit summary.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, LineWriter, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use log::{info, warn};
use scx_stats::prelude::*;

use crate::bpf::intf::miss_event;
use crate::stats::{Counters, GroupCounters, GroupMetrics, Metrics, fmt_us, hist_percentile_ns};

/// The latest metrics, shared with the server threads.
pub type Shared = Arc<Mutex<Metrics>>;

/// Live view lines shown per interval at most; the rest is counted.
const EVENTS_SHOWN: usize = 3;

/// A deadline miss as the live view shows it.
#[derive(Debug, Clone)]
pub struct MissEvent {
    pub tid: u32,
    pub comm: String,
    pub group: u32,
    pub cpu: i32,
    pub overshoot_ns: u64,
    pub stolen: bool,
}

impl MissEvent {
    pub fn parse(data: &[u8]) -> Option<MissEvent> {
        if data.len() < std::mem::size_of::<miss_event>() {
            return None;
        }
        // SAFETY: the ring buffer record is one struct miss_event.
        let e = unsafe { std::ptr::read_unaligned(data.as_ptr() as *const miss_event) };
        let comm: Vec<u8> = e
            .comm
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        Some(MissEvent {
            tid: e.tid,
            comm: String::from_utf8_lossy(&comm).into_owned(),
            group: e.group,
            cpu: e.cpu,
            overshoot_ns: e.overshoot_ns,
            stolen: e.stolen != 0,
        })
    }
}

/// One JSON object per line to a file or stdout (`-`).
pub struct JsonSink(Box<dyn Write>);

/// `--stats-json FILE`: `-`, or a file that can be created in an existing
/// directory. Checked before loading; nothing is created here.
pub fn check_json_path(path: &Path) -> Result<()> {
    if path == Path::new("-") {
        return Ok(());
    }
    if path.is_dir() {
        bail!(
            "--stats-json {}: is a directory; allowed: a file path or -",
            path.display()
        );
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        bail!(
            "--stats-json {}: directory {} does not exist",
            path.display(),
            dir.display()
        );
    }
    Ok(())
}

impl JsonSink {
    pub fn open(path: &Path) -> Result<JsonSink> {
        if path == Path::new("-") {
            return Ok(JsonSink(Box::new(std::io::stdout())));
        }
        let f = File::create(path).with_context(|| format!("--stats-json {}", path.display()))?;
        Ok(JsonSink(Box::new(LineWriter::new(f))))
    }

    /// JSON lines to any writer (the userspace mode's non-blocking stdout).
    pub fn from_writer(w: Box<dyn Write>) -> JsonSink {
        JsonSink(w)
    }

    pub fn write(&mut self, m: &Metrics) -> Result<()> {
        serde_json::to_writer(&mut self.0, m)?;
        self.0.write_all(b"\n")?;
        self.0.flush()?;
        Ok(())
    }
}

/// Builds metrics from counter snapshots and prints the live view.
pub struct Reporter {
    names: Vec<String>,
    started: Instant,
    verbose: bool,
    events: Vec<MissEvent>,
}

impl Reporter {
    pub fn new(names: Vec<String>, verbose: bool) -> Reporter {
        Reporter {
            names,
            started: Instant::now(),
            verbose,
            events: Vec::new(),
        }
    }

    pub fn record(&mut self, e: MissEvent) {
        self.events.push(e);
    }

    pub fn metrics(
        &self,
        cpu: &Counters,
        groups: &[GroupCounters],
        prev: &[GroupCounters],
        secs: f64,
    ) -> Metrics {
        let mut m = Metrics {
            uptime_s: self.started.elapsed().as_secs_f64(),
            interval_s: secs,
            dispatch_local: cpu.dispatch_local,
            dispatch_global: cpu.dispatch_global,
            dispatch_stolen: cpu.dispatch_stolen,
            dispatch_other: cpu.dispatch_other,
            steals_refused: cpu.steals_refused,
            lends: cpu.lends,
            groups: BTreeMap::new(),
        };
        for (i, name) in self.names.iter().enumerate() {
            let total = groups.get(i).cloned().unwrap_or_default();
            let before = prev.get(i).cloned().unwrap_or_default();
            m.groups.insert(
                name.clone(),
                GroupMetrics::new(&total, &total.delta(&before), secs),
            );
        }
        m
    }

    /// The live view: a line per group, per-CPU dispatches with -v, and a
    /// rate-limited summary of the miss events since the last call.
    pub fn print(&mut self, m: &Metrics, per_cpu: &[(usize, Counters)]) {
        // stdout gone (closed pipe): nothing to show it to
        let _ = self.write_live(&mut std::io::stdout().lock(), m, per_cpu);
    }

    /// The live view to `out`.
    pub fn write_live(
        &mut self,
        out: &mut dyn Write,
        m: &Metrics,
        per_cpu: &[(usize, Counters)],
    ) -> std::io::Result<()> {
        for (name, g) in &m.groups {
            writeln!(out, "{}", g.line(name))?;
        }
        if self.verbose {
            for (cpu, c) in per_cpu {
                writeln!(out, "  cpu{cpu:<3} {}", c.summary())?;
            }
        }
        let events = std::mem::take(&mut self.events);
        for e in events.iter().rev().take(EVENTS_SHOWN) {
            let group = self
                .names
                .get(e.group as usize)
                .map(String::as_str)
                .unwrap_or("?");
            writeln!(
                out,
                "  miss: tid {} ({}) in {group} on cpu {} overshoot {}{}",
                e.tid,
                e.comm,
                e.cpu,
                fmt_us(e.overshoot_ns as f64 / 1e3),
                if e.stolen { " (stolen)" } else { "" }
            )?;
        }
        if events.len() > EVENTS_SHOWN {
            writeln!(out, "  ... and {} more misses", events.len() - EVENTS_SHOWN)?;
        }
        Ok(())
    }

    /// Totals per group on exit.
    pub fn summary(&self, groups: &[GroupCounters]) {
        for (name, g) in self.names.iter().zip(groups) {
            println!(
                "scx_tick summary: {name}: ticks {} misses {} ({:.2}%) late starts {} steals {} hints {} (ignored {}) lateness p50 {} p99 {} max {} worst overshoot {}",
                g.ticks,
                g.misses,
                if g.ticks > 0 {
                    100.0 * g.misses as f64 / g.ticks as f64
                } else {
                    0.0
                },
                g.late_starts,
                g.stolen,
                g.hints_used,
                g.hints_ignored,
                fmt_us(
                    hist_percentile_ns(&g.lateness_hist, 50.0).min(g.lateness_max_ns) as f64 / 1e3
                ),
                fmt_us(
                    hist_percentile_ns(&g.lateness_hist, 99.0).min(g.lateness_max_ns) as f64 / 1e3
                ),
                fmt_us(g.lateness_max_ns as f64 / 1e3),
                fmt_us(g.overshoot_max_ns as f64 / 1e3),
            );
        }
    }
}

/// The scx_stats server under /var/run/scx/root/stats, as every scx
/// scheduler runs one; `scx_tick --monitor N` is its client.
pub fn launch_stats_server(shared: Shared) -> Result<StatsServer<(), ()>> {
    let data = StatsServerData::<(), ()>::new()
        .add_meta(Metrics::meta())
        .add_meta(GroupMetrics::meta())
        .add_stats(
            "top",
            Box::new(move |_args, _chan| shared.lock().unwrap().to_json()),
        );
    StatsServer::new(data)
        .launch()
        .context("starting the stats server")
}

/// `scx_tick --monitor N`: print a running instance's statistics.
pub fn monitor(interval: Duration, shutdown: &AtomicBool) -> Result<()> {
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

/// OpenMetrics over HTTP on a loopback address, for Prometheus scraping.
/// `--metrics-addr`: a loopback IP:PORT.
pub fn parse_metrics_addr(addr: &str) -> Result<SocketAddr> {
    let sa: SocketAddr = addr.parse().map_err(|_| {
        anyhow::anyhow!("--metrics-addr {addr:?}: expected IP:PORT, e.g. 127.0.0.1:9470")
    })?;
    if !sa.ip().is_loopback() {
        bail!("--metrics-addr {addr}: only loopback addresses (127.0.0.0/8, ::1) are allowed");
    }
    Ok(sa)
}

pub fn serve_openmetrics(addr: &str, shared: Shared) -> Result<()> {
    let sa = parse_metrics_addr(addr)?;
    let listener = TcpListener::bind(sa).with_context(|| format!("--metrics-addr {addr}"))?;
    info!("OpenMetrics on http://{sa}/metrics");
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(&stream);
            let mut request = String::new();
            // Read the request head; any path answers with the metrics.
            while reader
                .read_line(&mut request)
                .map(|n| n > 2)
                .unwrap_or(false)
            {}
            let body = shared.lock().unwrap().openmetrics();
            let mut w = &stream;
            let r = write!(
                w,
                "HTTP/1.1 200 OK\r\nContent-Type: application/openmetrics-text; version=1.0.0; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            if let Err(e) = r {
                warn!("metrics client: {e}");
            }
        }
    });
    Ok(())
}

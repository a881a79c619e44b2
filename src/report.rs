//! Where statistics go: the live view on stdout, JSON lines, the scx_stats
//! server (`--monitor` and other clients), the OpenMetrics endpoint, the
//! summary of miss events, and the exit summary.

use std::fs::File;
use std::io::{BufRead, BufReader, LineWriter, Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use log::{debug, info, warn};
use scx_stats::prelude::*;

use crate::bpf::intf::miss_event;
use crate::stats::{Counters, GroupCounters, GroupMetrics, Metrics, SUB, bucket_upper_ns, fmt_us};

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
    /// Its deadline and when the miss was seen (CLOCK_MONOTONIC ns), for -vv.
    pub deadline_ns: u64,
    pub at_ns: u64,
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
            deadline_ns: e.deadline_ns,
            at_ns: e.at_ns,
        })
    }
}

/// One JSON object per line to a file or stdout (`-`).
pub struct JsonSink {
    out: Box<dyn Write>,
    /// Write the groups' histograms (`--stats-json-no-histograms`: no).
    histograms: bool,
}

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
    /// `append`: keep what the file holds (a service restarting keeps its history).
    pub fn open(path: &Path, append: bool) -> Result<JsonSink> {
        if path == Path::new("-") {
            return Ok(JsonSink::from_writer(Box::new(std::io::stdout())));
        }
        let f = if append {
            std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(path)
        } else {
            File::create(path)
        }
        .with_context(|| format!("--stats-json {}", path.display()))?;
        Ok(JsonSink::from_writer(Box::new(LineWriter::new(f))))
    }

    /// JSON lines to any writer (the userspace mode's non-blocking stdout).
    pub fn from_writer(out: Box<dyn Write>) -> JsonSink {
        JsonSink {
            out,
            histograms: true,
        }
    }

    /// With the groups' histograms, or without them (`false`).
    pub fn histograms(self, histograms: bool) -> JsonSink {
        JsonSink { histograms, ..self }
    }

    pub fn write(&mut self, m: &Metrics) -> Result<()> {
        if self.histograms {
            serde_json::to_writer(&mut self.out, m)?;
        } else {
            // empty histograms are left out of the object (stats.rs)
            let mut m = m.clone();
            for g in m.groups.values_mut() {
                g.lateness_hist.clear();
                g.overshoot_hist.clear();
            }
            serde_json::to_writer(&mut self.out, &m)?;
        }
        self.out.write_all(b"\n")?;
        self.out.flush()?;
        Ok(())
    }
}

/// The periodic statistics both policy modes write: every `--stats`
/// interval (every second when only `--stats-json` is given), the metrics
/// of the interval that ended, to the live view and as one JSON line.
pub struct Intervals {
    every: Option<Duration>,
    live: bool,
    at: Instant,
    prev: Vec<GroupCounters>,
}

impl Intervals {
    /// `groups`: the counts the first interval starts from.
    pub fn new(print_every: Option<Duration>, json: bool, groups: &[GroupCounters]) -> Intervals {
        Intervals {
            every: print_every.or(json.then_some(Duration::from_secs(1))),
            live: print_every.is_some(),
            at: Instant::now(),
            prev: groups.to_vec(),
        }
    }

    /// Has an interval ended?
    pub fn due(&self) -> bool {
        self.every.is_some_and(|e| self.at.elapsed() >= e)
    }

    /// End the interval at the counts now: its metrics go to `live` (with
    /// `--stats`; the mode writes its live view) and to `json`. A sink that
    /// fails (its reader gone, a full disk) is logged and dropped: the
    /// scheduler and its other outputs go on.
    pub fn emit(
        &mut self,
        reporter: &mut Reporter,
        counters: &Counters,
        groups: &[GroupCounters],
        json: &mut Option<JsonSink>,
        live: impl FnOnce(&mut Reporter, &Metrics),
    ) {
        let secs = self.at.elapsed().as_secs_f64();
        let m = reporter.metrics(counters, groups, &self.prev, secs);
        if self.live {
            live(reporter, &m);
        }
        if let Some(Err(e)) = json.as_mut().map(|j| j.write(&m)) {
            warn!("--stats-json: {e:#}: no more JSON lines are written; scheduling goes on");
            *json = None;
        }
        (self.at, self.prev) = (Instant::now(), groups.to_vec());
    }
}

/// Builds metrics from counter snapshots and prints the live view.
pub struct Reporter {
    names: Vec<String>,
    started: Instant,
    verbose: bool,
    events: Vec<MissEvent>,
    /// The live view and the summary go to stderr when stdout carries JSON.
    human_to_stderr: bool,
    /// Runner threads per group, as membership counted them last.
    runners: Vec<u64>,
    /// Re-attaches so far (CPU hotplug).
    restarts: u64,
}

/// Seconds since the Unix epoch, for the JSON objects' `timestamp_s`.
pub fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

impl Reporter {
    pub fn new(names: Vec<String>, verbose: bool) -> Reporter {
        Reporter {
            names,
            started: Instant::now(),
            verbose,
            events: Vec::new(),
            human_to_stderr: false,
            runners: Vec::new(),
            restarts: 0,
        }
    }

    /// The scheduler re-attached (the kernel asked it to restart).
    pub fn restarted(&mut self) {
        self.restarts += 1;
    }

    /// Runner threads per group now, for the next metrics.
    pub fn set_runners(&mut self, counts: Vec<u64>) {
        self.runners = counts;
    }

    /// Send the live view and the exit summary to stderr, so that stdout
    /// carries only JSON (`--stats-json -`).
    pub fn human_to_stderr(&mut self, yes: bool) {
        self.human_to_stderr = yes;
    }

    fn human(&self) -> Box<dyn Write> {
        if self.human_to_stderr {
            Box::new(std::io::stderr().lock())
        } else {
            Box::new(std::io::stdout().lock())
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
        let mut m = Metrics::new(unix_now(), self.started.elapsed().as_secs_f64(), secs, cpu);
        m.restarts = self.restarts;
        for (i, name) in self.names.iter().enumerate() {
            let total = groups.get(i).cloned().unwrap_or_default();
            let before = prev.get(i).cloned().unwrap_or_default();
            let mut g = GroupMetrics::new(&total, &total.delta(&before), secs);
            g.runners = self.runners.get(i).copied().unwrap_or(0);
            m.groups.insert(name.clone(), g);
        }
        m
    }

    /// The live view: a line per group, per-CPU dispatches with -v, and a
    /// rate-limited summary of the miss events since the last call.
    pub fn print(&mut self, m: &Metrics, per_cpu: &[(usize, Counters)]) {
        // stdout gone (closed pipe): nothing to show it to
        let mut out = self.human();
        let _ = self.write_live(&mut out, m, per_cpu);
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

    /// Totals per group on exit, then the `totals` line (tests parse it).
    pub fn summary(&self, groups: &[GroupCounters], totals: &str) {
        let mut out = self.human();
        // stdout gone (closed pipe): nothing to show it to
        let _ = self.write_summary(&mut out, groups, totals);
    }

    fn write_summary(
        &self,
        out: &mut dyn Write,
        groups: &[GroupCounters],
        totals: &str,
    ) -> std::io::Result<()> {
        for (name, g) in self.names.iter().zip(groups) {
            writeln!(out, "scx_tick summary: {}", g.summary(name))?;
        }
        writeln!(out, "scx_tick totals: {totals}")
    }
}

/// Where scx_stats serves (its default path, for every scx scheduler).
const STATS_SOCKET: &str = "/var/run/scx/root/stats";

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

/// `scx_tick --monitor N`: print a running instance's statistics.
pub fn monitor(interval: Duration, shutdown: &AtomicBool) -> Result<()> {
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

/// The OpenMetrics text exposition of `m` (counters and histograms).
pub fn openmetrics(m: &Metrics) -> String {
    use std::fmt::Write as _;
    let mut o = String::new();
    let header = |o: &mut String, name: &str, kind: &str, help: &str| {
        writeln!(
            o,
            "# TYPE scx_tick_{name} {kind}\n# HELP scx_tick_{name} {help}"
        )
        .ok();
    };
    let label = |n: &str| n.replace('\\', "\\\\").replace('"', "\\\"");
    // each group's label and counters, once
    let groups: Vec<_> = (m.groups.iter())
        .map(|(n, g)| (label(n), g.counters()))
        .collect();
    for (k, (name, help, _)) in GroupMetrics::default().counters().into_iter().enumerate() {
        header(&mut o, name, "counter", help);
        for (label, counters) in &groups {
            let v = counters[k].2;
            writeln!(o, "scx_tick_{name}_total{{group=\"{label}\"}} {v}").ok();
        }
    }
    header(
        &mut o,
        "runners",
        "gauge",
        "Runner threads in the tick group now.",
    );
    for (n, g) in &m.groups {
        writeln!(
            o,
            "scx_tick_runners{{group=\"{}\"}} {}",
            label(n),
            g.runners
        )
        .ok();
    }
    for (name, help, v) in m.counters() {
        header(&mut o, name, "counter", help);
        writeln!(o, "scx_tick_{name}_total {v}").ok();
    }
    header(
        &mut o,
        "restarts",
        "counter",
        "Times scx_tick re-attached at the kernel's request (CPU hotplug).",
    );
    writeln!(o, "scx_tick_restarts_total {}", m.restarts).ok();
    header(
        &mut o,
        "build",
        "info",
        "The running scx_tick's version (with its git commit and target).",
    );
    writeln!(
        o,
        "scx_tick_build_info{{version=\"{}\"}} 1",
        label(crate::version())
    )
    .ok();
    for (name, help, pick) in [
        (
            "start_lateness_seconds",
            "Time from a tick runner's wake-up to its first CPU.",
            0,
        ),
        (
            "deadline_overshoot_seconds",
            "How far a missed tick ran past its deadline.",
            1,
        ),
    ] {
        header(&mut o, name, "histogram", help);
        for (n, g) in &m.groups {
            let (hist, sum_us) = if pick == 0 {
                (&g.lateness_hist, g.lateness_sum_us)
            } else {
                (&g.overshoot_hist, g.overshoot_sum_us)
            };
            let label = label(n);
            let mut cum = 0;
            for (b, c) in hist.iter().enumerate() {
                cum += c;
                // the same buckets, exported at each power of two (a
                // scrape of 256 buckets per group would be noise)
                if b + 1 < hist.len() && (b + 1) % SUB as usize == 0 {
                    let le = bucket_upper_ns(b) as f64 / 1e9;
                    writeln!(
                        o,
                        "scx_tick_{name}_bucket{{group=\"{label}\",le=\"{le}\"}} {cum}"
                    )
                    .ok();
                }
            }
            writeln!(
                o,
                "scx_tick_{name}_bucket{{group=\"{label}\",le=\"+Inf\"}} {cum}"
            )
            .ok();
            writeln!(o, "scx_tick_{name}_count{{group=\"{label}\"}} {cum}").ok();
            writeln!(
                o,
                "scx_tick_{name}_sum{{group=\"{label}\"}} {}",
                sum_us / 1e6
            )
            .ok();
        }
    }
    o.push_str("# EOF\n");
    o
}

/// OpenMetrics over HTTP, for Prometheus scraping. `--metrics-addr`: an
/// IP:PORT, loopback unless `public` (`--metrics-public`).
pub fn parse_metrics_addr(addr: &str, public: bool) -> Result<SocketAddr> {
    let sa: SocketAddr = addr.parse().map_err(|_| {
        anyhow::anyhow!("--metrics-addr {addr:?}: expected IP:PORT, e.g. 127.0.0.1:9470")
    })?;
    if !sa.ip().is_loopback() && !public {
        bail!(
            "--metrics-addr {addr}: only loopback addresses (127.0.0.0/8, ::1) are allowed \
             unless --metrics-public is given too (the statistics are then readable by anyone \
             who can reach the port)"
        );
    }
    Ok(sa)
}

/// Serve in the background; returns the address bound (port 0 picks one).
pub fn serve_openmetrics(addr: &str, public: bool, shared: Shared) -> Result<SocketAddr> {
    let sa = parse_metrics_addr(addr, public)?;
    let listener = TcpListener::bind(sa).with_context(|| format!("--metrics-addr {addr}"))?;
    let sa = listener.local_addr()?;
    info!("OpenMetrics on http://{sa}/metrics");
    let busy = Arc::new(AtomicUsize::new(0));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            // Each client in its own thread, with timeouts: an idle or slow
            // connection must never hold up the next scrape.
            if busy.load(Ordering::Relaxed) >= METRICS_CLIENTS {
                continue; // dropped: closes the connection
            }
            busy.fetch_add(1, Ordering::Relaxed);
            let (shared, busy) = (shared.clone(), busy.clone());
            std::thread::spawn(move || {
                if let Err(e) = answer_scrape(&stream, &shared) {
                    debug!("metrics client: {e}");
                }
                busy.fetch_sub(1, Ordering::Relaxed);
            });
        }
    });
    Ok(sa)
}

/// Connections served at once; more are closed at once.
const METRICS_CLIENTS: usize = 16;
/// A client that sends nothing for this long is dropped.
const METRICS_TIMEOUT: Duration = Duration::from_secs(5);

fn answer_scrape(stream: &std::net::TcpStream, shared: &Shared) -> std::io::Result<()> {
    stream.set_read_timeout(Some(METRICS_TIMEOUT))?;
    stream.set_write_timeout(Some(METRICS_TIMEOUT))?;
    let mut reader = BufReader::new(stream).take(64 * 1024);
    let mut request = String::new();
    // Read the request head; any path answers with the metrics.
    while reader.read_line(&mut request)? > 2 {}
    let body = openmetrics(&shared.lock().unwrap());
    let mut w = stream;
    write!(
        w,
        "HTTP/1.1 200 OK\r\nContent-Type: application/openmetrics-text; version=1.0.0; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use std::net::TcpStream;

    #[test]
    fn openmetrics_text_is_well_formed() {
        let mut m = Metrics::default();
        let mut total = GroupCounters {
            ticks: 100,
            misses: 3,
            hints_ignored: 4,
            ..Default::default()
        };
        total.lateness.sum_ns = 200_000;
        total.lateness.hist[0] = 90;
        total.lateness.hist[12] = 10; // [12, 14) us
        m.groups
            .insert("world".into(), GroupMetrics::new(&total, &total, 1.0));
        let text = openmetrics(&m);
        assert!(text.ends_with("# EOF\n"));
        assert!(text.contains("scx_tick_ticks_total{group=\"world\"} 100"));
        assert!(text.contains("scx_tick_deadline_misses_total{group=\"world\"} 3"));
        assert!(text.contains("scx_tick_steals_refused_total 0"));
        assert!(text.contains("scx_tick_lends_total 0"));
        assert!(text.contains("scx_tick_deadline_hints_ignored_total{group=\"world\"} 4"));
        // each family once, its TYPE before its samples
        let types: Vec<&str> = text.lines().filter(|l| l.starts_with("# TYPE")).collect();
        let mut names: Vec<&str> = types.iter().map(|l| l.split(' ').nth(2).unwrap()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), types.len(), "{types:?}");
        assert!(text.contains(
            "scx_tick_start_lateness_seconds_bucket{group=\"world\",le=\"0.000008\"} 90"
        ));
        assert!(text.contains(
            "scx_tick_start_lateness_seconds_bucket{group=\"world\",le=\"0.000016\"} 100"
        ));
        assert!(
            text.contains(
                "scx_tick_start_lateness_seconds_bucket{group=\"world\",le=\"+Inf\"} 100"
            )
        );
        assert!(text.contains("scx_tick_start_lateness_seconds_sum{group=\"world\"} 0.0002"));
        // every sample line: name{labels} value; buckets never decrease
        let mut last = 0u64;
        for l in text.lines().filter(|l| !l.starts_with('#')) {
            let (_, v) = l.rsplit_once(' ').unwrap();
            v.parse::<f64>().unwrap();
            if l.starts_with("scx_tick_start_lateness_seconds_bucket") {
                let v: u64 = v.parse().unwrap();
                assert!(v >= last);
                last = v;
            }
        }
    }

    #[test]
    fn a_failing_json_sink_is_dropped_and_the_rest_goes_on() {
        struct Gone;
        impl Write for Gone {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let groups = [GroupCounters::default()];
        let mut intervals = Intervals::new(Some(Duration::from_secs(1)), true, &groups);
        let mut reporter = Reporter::new(vec!["world".into()], false);
        let mut json = Some(JsonSink::from_writer(Box::new(Gone)));
        let mut live = 0;
        for _ in 0..2 {
            intervals.emit(
                &mut reporter,
                &Counters::default(),
                &groups,
                &mut json,
                |_, _| live += 1,
            );
            assert!(json.is_none(), "the failed sink is dropped");
        }
        assert_eq!(live, 2, "the live view goes on");
    }

    #[test]
    fn histograms_can_be_left_out_of_the_json_lines() {
        #[derive(Clone, Default)]
        struct Buf(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);
        impl Write for Buf {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.borrow_mut().extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let total = GroupCounters {
            ticks: 7,
            ..Default::default()
        };
        let reporter = Reporter::new(vec!["world".into()], false);
        let m = reporter.metrics(&Counters::default(), &[total], &[], 1.0);
        let line = |hist: bool| {
            let buf = Buf::default();
            let mut sink = JsonSink::from_writer(Box::new(buf.clone())).histograms(hist);
            sink.write(&m).unwrap();
            let text = String::from_utf8(buf.0.borrow().clone()).unwrap();
            serde_json::from_str::<serde_json::Value>(text.trim()).unwrap()
        };
        let (with, without) = (line(true), line(false));
        assert!(with["groups"]["world"]["lateness_hist"].is_array());
        assert!(without["groups"]["world"].get("lateness_hist").is_none());
        assert!(without["groups"]["world"].get("overshoot_hist").is_none());
        assert_eq!(without["groups"]["world"]["ticks"], 7);
        // what a client reads back still parses
        serde_json::from_value::<Metrics>(without).unwrap();
    }

    #[test]
    fn the_json_file_is_appended_to_or_started_anew() {
        let path = std::env::temp_dir().join(format!("scx_tick-json-{}", std::process::id()));
        std::fs::write(&path, "{\"earlier\":1}\n").unwrap();
        JsonSink::open(&path, true)
            .unwrap()
            .write(&Metrics::default())
            .unwrap();
        let kept = std::fs::read_to_string(&path).unwrap();
        assert_eq!(kept.lines().count(), 2, "{kept}");
        assert!(kept.starts_with("{\"earlier\":1}\n"), "{kept}");
        JsonSink::open(&path, false)
            .unwrap()
            .write(&Metrics::default())
            .unwrap();
        let fresh = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(fresh.lines().count(), 1, "{fresh}");
        serde_json::from_str::<serde_json::Value>(fresh.trim()).unwrap();
    }

    #[test]
    fn the_dashboard_and_alerts_name_metrics_that_exist() {
        let mut m = Metrics::default();
        let mut g = GroupMetrics::new(&GroupCounters::default(), &GroupCounters::default(), 1.0);
        g.lateness_hist = vec![0; 256];
        g.overshoot_hist = vec![0; 256];
        m.groups.insert("world".into(), g);
        let text = openmetrics(&m);
        let names: BTreeSet<&str> = (text.lines())
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split(['{', ' ']).next())
            .collect();
        for (file, body) in [
            (
                "grafana-dashboard.json",
                include_str!("../examples/monitoring/grafana-dashboard.json"),
            ),
            (
                "alerts.yml",
                include_str!("../examples/monitoring/alerts.yml"),
            ),
        ] {
            let used: BTreeSet<&str> = body
                .match_indices("scx_tick_")
                .map(|(i, _)| {
                    let rest = &body[i..];
                    let end = rest
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .unwrap_or(rest.len());
                    &rest[..end]
                })
                // prose: "scx_tick match", the test's own name
                .filter(|n| n.len() > "scx_tick_".len() && !n.starts_with("scx_tick_match"))
                .collect();
            assert!(used.len() >= 4, "{file}: {used:?}");
            for n in used {
                assert!(
                    names.contains(n),
                    "{file} names {n}, which scx_tick does not export"
                );
            }
        }
    }

    #[test]
    fn a_public_metrics_address_needs_its_own_flag() {
        let e = parse_metrics_addr("0.0.0.0:9470", false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("unless --metrics-public"), "{e}");
        assert!(parse_metrics_addr("0.0.0.0:9470", true).is_ok());
        assert!(parse_metrics_addr("127.0.0.1:9470", false).is_ok());
        assert!(parse_metrics_addr("[::1]:9470", false).is_ok());
        assert!(parse_metrics_addr("localhost:9470", true).is_err());
    }

    #[test]
    fn an_idle_connection_does_not_block_a_scrape() {
        let shared = Shared::default();
        shared.lock().unwrap().lends = 7;
        let sa = serve_openmetrics("127.0.0.1:0", false, shared).unwrap();
        let _idle = TcpStream::connect(sa).unwrap();
        let mut scrape = TcpStream::connect(sa).unwrap();
        scrape
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        scrape.write_all(b"GET /metrics HTTP/1.1\r\n\r\n").unwrap();
        let mut answer = String::new();
        scrape.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
        assert!(answer.contains("scx_tick_lends_total 7"), "{answer}");
        assert!(answer.ends_with("# EOF\n"));
    }

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

    #[test]
    fn the_summary_names_hints_and_ends_with_the_totals() {
        let r = Reporter::new(vec!["world".into()], false);
        let mut out = Vec::new();
        r.write_summary(&mut out, &[GroupCounters::default()], "ticks=0")
            .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("scx_tick summary: world: ticks 0")
                && text.contains("hints 0 (ignored 0)"),
            "{text}"
        );
        assert!(text.ends_with("scx_tick totals: ticks=0\n"), "{text}");
    }

    #[test]
    fn json_objects_carry_a_wall_clock_timestamp() {
        let r = Reporter::new(vec!["world".into()], false);
        let m = r.metrics(&Counters::default(), &[GroupCounters::default()], &[], 1.0);
        let now = unix_now();
        assert!((now - m.timestamp_s).abs() < 60.0, "{}", m.timestamp_s);
        let v: serde_json::Value = serde_json::to_value(&m).unwrap();
        assert!(v["timestamp_s"].as_f64().unwrap() > 1.7e9);
    }
}

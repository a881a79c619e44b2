//! OpenMetrics: the text exposition of the statistics and its HTTP
//! endpoint (`--metrics-addr`), for Prometheus.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use log::{debug, info};

use super::stats::{GroupMetrics, Metrics, Shared};
use crate::model::histogram::{SUB, bucket_upper_ns};

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
    use crate::output::stats::GroupCounters;
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
                include_str!("../../examples/monitoring/grafana-dashboard.json"),
            ),
            (
                "alerts.yml",
                include_str!("../../examples/monitoring/alerts.yml"),
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
}

//! The reporter: metrics from counter snapshots, and what a person reads
//! (on stdout, or stderr when stdout carries JSON): the live view with a
//! summary of the deadline misses the BPF side reported, and the exit
//! summary.

use std::io::Write;
use std::time::Instant;

use super::stats::{Counters, GroupCounters, GroupMetrics, Metrics, pct, us};
use crate::bpf::intf::miss_event;

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

    /// Seconds since scx_tick attached.
    pub fn uptime_s(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    pub fn metrics(
        &self,
        cpu: &Counters,
        groups: &[GroupCounters],
        prev: &[GroupCounters],
        secs: f64,
    ) -> Metrics {
        let mut m = Metrics::new(unix_now(), self.uptime_s(), secs, cpu);
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

impl GroupCounters {
    /// The exit summary's line for this group.
    pub fn summary(&self, name: &str) -> String {
        format!(
            "{name}: ticks {} misses {} ({:.2}%) late starts {} steals {} hints {} (ignored {}) lateness p50 {} p99 {} max {} worst overshoot {}",
            self.ticks,
            self.misses,
            pct(self.misses, self.ticks),
            self.late_starts,
            self.steals,
            self.hints_used,
            self.hints_ignored,
            fmt_us(us(self.lateness.percentile_ns(50.0))),
            fmt_us(us(self.lateness.percentile_ns(99.0))),
            fmt_us(us(self.lateness.max_ns)),
            fmt_us(us(self.overshoot.max_ns)),
        )
    }
}

impl GroupMetrics {
    /// The live view's line for this group.
    pub fn line(&self, name: &str) -> String {
        format!(
            "{name}: {:>3} runners {:>6.1} ticks/s  misses {:>4} ({:>5.2}%)  lateness p50 {} p99 {} max {}  steals {}",
            self.runners,
            self.ticks_per_s,
            self.interval_misses,
            self.interval_miss_pct,
            fmt_us(self.lateness_p50_us),
            fmt_us(self.lateness_p99_us),
            fmt_us(self.lateness_max_us),
            self.steals
        )
    }
}

/// "<=2ms" style bounds for the live view.
pub fn fmt_us(v: f64) -> String {
    if v >= 1000.0 {
        format!("{:.1}ms", v / 1000.0)
    } else {
        format!("{v:.0}us")
    }
}

impl Counters {
    /// key=value totals, printed on exit (tests parse this).
    pub fn summary(&self) -> String {
        let kv: Vec<String> = (self.fields().iter())
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        kv.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

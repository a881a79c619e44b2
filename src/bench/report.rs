//! The benchmark's results: one record per (vCPUs, scheduler, runners) run,
//! each compared with EEVDF from the same guest and the same run, and the
//! markdown tables written from them.

use std::collections::BTreeSet;
use std::fmt::Write;

use serde::{Deserialize, Serialize};

use super::parse::{BpfOverhead, Cyclictest};
use crate::workload::Summary;

/// The baseline every ratio is taken against.
pub const BASELINE: &str = "eevdf";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub vcpus: usize,
    pub tick_cpus: usize,
    pub scheduler: String,
    pub runners: usize,
    /// The headline scenario (the table's rows; cyclictest ran in it).
    pub headline: bool,
    pub duration_s: f64,
    /// Why this scheduler produced no numbers (failed to install or load).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    #[serde(default)]
    pub ticks: Summary,
    #[serde(default)]
    pub lateness_quantiles_ms: Vec<f64>,
    #[serde(default)]
    pub bogo_ops_per_s: Option<f64>,
    #[serde(default)]
    pub hackbench_per_s: Option<f64>,
    #[serde(default)]
    pub cyclictest: Option<Cyclictest>,
    #[serde(default)]
    pub cyclictest_policy: Option<String>,
    #[serde(default)]
    pub bpf: Option<BpfOverhead>,
    /// The scheduler process's own CPU time (share of all CPUs): where the
    /// userspace mode pays for deciding in userspace.
    #[serde(default)]
    pub sched_process_cpu_pct: Option<f64>,
}

/// `x` relative to the baseline's `base`: "0.42"; "-" when there is nothing
/// to divide by (the baseline measured 0, or a value is missing).
pub fn ratio(x: Option<f64>, base: Option<f64>) -> String {
    match (x, base) {
        (Some(x), Some(b)) if b > 0.0 => format!("{:.2}", x / b),
        (Some(x), Some(b)) if x == 0.0 && b == 0.0 => "=".into(),
        _ => "-".into(),
    }
}

fn num(x: Option<f64>, digits: usize) -> String {
    x.map_or("-".into(), |v| format!("{v:.digits$}"))
}

/// The vCPU counts present, ascending.
pub fn vcpu_counts(records: &[RunRecord]) -> Vec<usize> {
    records
        .iter()
        .map(|r| r.vcpus)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// Scheduler names in the order they first appear (the order they ran).
pub fn schedulers(records: &[RunRecord]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in records {
        if !out.contains(&r.scheduler) {
            out.push(r.scheduler.clone());
        }
    }
    out
}

fn find<'a>(
    records: &'a [RunRecord],
    vcpus: usize,
    sched: &str,
    runners: Option<usize>,
    headline: bool,
) -> Option<&'a RunRecord> {
    records.iter().find(|r| {
        r.vcpus == vcpus
            && r.scheduler == sched
            && r.skipped.is_none()
            && runners.is_none_or(|n| r.runners == n)
            && (!headline || r.headline)
    })
}

/// The headline table of one vCPU count: one row per scheduler.
pub fn headline_table(records: &[RunRecord], vcpus: usize) -> String {
    let mut s = String::new();
    let base = find(records, vcpus, BASELINE, None, true);
    let Some(any) = records.iter().find(|r| r.vcpus == vcpus && r.headline) else {
        return s;
    };
    let _ = writeln!(
        s,
        "{} vCPUs, {} tick CPU(s), {} runners, {} s per scheduler:\n",
        vcpus, any.tick_cpus, any.runners, any.duration_s
    );
    s.push_str(
        "| scheduler | miss % | x EEVDF | p99 start lateness ms | x EEVDF | MSPT p99 ms | x EEVDF \
         | background bogo-ops/s | x EEVDF | hackbench runs/s | cyclictest avg / max us | BPF ns/call | BPF CPU % \
         | scheduler process CPU % |\n",
    );
    s.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for name in schedulers(records) {
        let Some(r) = find(records, vcpus, &name, None, true) else {
            continue;
        };
        let b = base.map(|b| &b.ticks);
        let cyc = r.cyclictest.map_or("-".into(), |c| {
            let pol = match r.cyclictest_policy.as_deref() {
                Some(p) if p != "other" => format!(" ({p})"),
                _ => String::new(),
            };
            format!("{:.0} / {:.0}{pol}", c.avg_us, c.max_us)
        });
        let _ = writeln!(
            s,
            "| {} | {:.2} | {} | {:.2} | {} | {:.2} | {} | {} | {} | {} | {} | {} | {} | {} |",
            name,
            r.ticks.miss_pct,
            ratio(Some(r.ticks.miss_pct), b.map(|b| b.miss_pct)),
            r.ticks.lateness_p99_ms,
            ratio(Some(r.ticks.lateness_p99_ms), b.map(|b| b.lateness_p99_ms)),
            r.ticks.mspt_p99_ms,
            ratio(Some(r.ticks.mspt_p99_ms), b.map(|b| b.mspt_p99_ms)),
            num(r.bogo_ops_per_s, 0),
            ratio(r.bogo_ops_per_s, base.and_then(|b| b.bogo_ops_per_s)),
            num(r.hackbench_per_s, 2),
            cyc,
            num(r.bpf.as_ref().map(|o| o.ns_per_call), 0),
            num(r.bpf.as_ref().map(|o| o.cpu_pct), 3),
            num(r.sched_process_cpu_pct, 2),
        );
    }
    s
}

/// The scaling table of one vCPU count: miss % and BPF ns/call per runner count.
pub fn scaling_table(records: &[RunRecord], vcpus: usize) -> String {
    let counts: BTreeSet<usize> = records
        .iter()
        .filter(|r| r.vcpus == vcpus && r.skipped.is_none())
        .map(|r| r.runners)
        .collect();
    let mut s = String::new();
    if counts.len() < 2 {
        return s;
    }
    s.push_str("| scheduler |");
    for n in &counts {
        let _ = write!(s, " miss % @{n} |");
    }
    for n in &counts {
        let _ = write!(s, " BPF ns/call @{n} |");
    }
    s.push_str("\n|---|");
    s.push_str(&"---:|".repeat(2 * counts.len()));
    s.push('\n');
    for name in schedulers(records) {
        if find(records, vcpus, &name, None, false).is_none() {
            continue;
        }
        let _ = write!(s, "| {name} |");
        for &n in &counts {
            let r = find(records, vcpus, &name, Some(n), false);
            let _ = write!(s, " {} |", num(r.map(|r| r.ticks.miss_pct), 2));
        }
        for &n in &counts {
            let r = find(records, vcpus, &name, Some(n), false);
            let v = r.and_then(|r| r.bpf.as_ref()).map(|o| o.ns_per_call);
            let _ = write!(s, " {} |", num(v, 0));
        }
        s.push('\n');
    }
    s
}

/// Schedulers that gave no numbers, with the reason.
pub fn skipped(records: &[RunRecord]) -> Vec<String> {
    let mut out = Vec::new();
    for r in records.iter().filter(|r| r.skipped.is_some()) {
        let line = format!(
            "{} ({} vCPUs): {}",
            r.scheduler,
            r.vcpus,
            r.skipped.as_deref().unwrap_or_default()
        );
        if !out.contains(&line) {
            out.push(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(sched: &str, runners: usize, headline: bool, miss: f64, p99: f64) -> RunRecord {
        RunRecord {
            vcpus: 4,
            tick_cpus: 2,
            scheduler: sched.into(),
            runners,
            headline,
            duration_s: 8.0,
            ticks: Summary {
                ticks: 100,
                miss_pct: miss,
                lateness_p99_ms: p99,
                mspt_p99_ms: 10.0,
                ..Default::default()
            },
            bogo_ops_per_s: Some(1000.0 * (1.0 + miss)),
            ..Default::default()
        }
    }

    #[test]
    fn ratios() {
        assert_eq!(ratio(Some(1.0), Some(4.0)), "0.25");
        assert_eq!(ratio(Some(0.0), Some(0.0)), "=");
        assert_eq!(ratio(Some(3.0), Some(0.0)), "-");
        assert_eq!(ratio(None, Some(1.0)), "-");
    }

    #[test]
    fn headline_rows_are_compared_with_eevdf_of_the_same_vcpus() {
        let mut rs = vec![
            rec("eevdf", 4, true, 20.0, 8.0),
            rec("scx_tick", 4, true, 5.0, 2.0),
            rec("eevdf", 1, false, 0.0, 1.0),
        ];
        // an 8-vCPU EEVDF must not be the 4-vCPU baseline
        let mut other = rec("eevdf", 4, true, 1.0, 1.0);
        other.vcpus = 8;
        rs.insert(0, other);
        let t = headline_table(&rs, 4);
        let tick = t.lines().find(|l| l.starts_with("| scx_tick")).unwrap();
        assert!(
            tick.contains("| 5.00 | 0.25 | 2.00 | 0.25 | 10.00 | 1.00 |"),
            "{tick}"
        );
        // bogo-ops 6000 vs 21000
        assert!(tick.contains("| 6000 | 0.29 |"), "{tick}");
        assert!(t.starts_with("4 vCPUs, 2 tick CPU(s), 4 runners"), "{t}");
        assert_eq!(t.lines().filter(|l| l.starts_with("| eevdf")).count(), 1);
    }

    #[test]
    fn skipped_schedulers_have_no_row_but_a_reason() {
        let mut s = rec("scx_lavd", 4, true, 0.0, 0.0);
        s.skipped = Some("cargo install failed".into());
        let rs = vec![rec("eevdf", 4, true, 20.0, 8.0), s];
        assert!(!headline_table(&rs, 4).contains("scx_lavd"));
        assert_eq!(
            skipped(&rs),
            vec!["scx_lavd (4 vCPUs): cargo install failed"]
        );
    }

    #[test]
    fn scaling_has_a_column_per_runner_count() {
        let rs = vec![
            rec("eevdf", 1, false, 0.0, 1.0),
            rec("eevdf", 4, true, 20.0, 8.0),
            rec("scx_tick", 1, false, 0.0, 1.0),
            rec("scx_tick", 4, true, 5.0, 2.0),
        ];
        let t = scaling_table(&rs, 4);
        assert!(t.starts_with(
            "| scheduler | miss % @1 | miss % @4 | BPF ns/call @1 | BPF ns/call @4 |"
        ));
        assert!(t.contains("| scx_tick | 0.00 | 5.00 | - | - |"), "{t}");
        assert!(scaling_table(&rs[1..2], 4).is_empty());
    }
}

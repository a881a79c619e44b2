//! The benchmark's results: one record per run (vCPUs, scheduler, scenario,
//! runners, repetition), the repetitions of a cell summarised as median and
//! min-max, each compared with EEVDF from the same guest, and the markdown
//! tables and the targets check written from them.

use std::collections::BTreeSet;
use std::fmt::Write;

use serde::{Deserialize, Serialize};

use super::parse::{BpfOverhead, Cyclictest};
use super::schedulers::{SCHEDULERS, peers};
use crate::workload::Summary;

/// The baseline every ratio is taken against.
pub const BASELINE: &str = "eevdf";
/// The scheduler the targets are about.
pub const TICK: &str = "scx_tick";
/// SCHED_FIFO runners, the strongest non-sched_ext competitor.
pub const FIFO: &str = "fifo";

/// What ran beside the tick runners, and which runners.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum Scenario {
    /// The tick workload (8 ± 2 ms per 50 ms, spikes) at 1, T, 2T and 4T
    /// runners beside CPU hogs and a fork/pipe storm. Records written
    /// before scenarios existed are this one.
    #[default]
    Standard,
    /// 3T runners x 20 ms per 50 ms, nothing else running.
    HeavyIdle,
    /// 3T runners x 20 ms per 50 ms beside 2 x vCPUs CPU hogs.
    HeavyHogs,
    /// EEVDF only: the heavy runners beside one CPU hog, the uncontended
    /// floor heavy-hogs is measured against.
    HeavyFloor,
    /// Runners x 12 ms per 50 ms (no jitter) beside 2 x vCPUs CPU hogs,
    /// the count swept upward until misses pass 0.5 % (`capacity`).
    Capacity,
    /// A well-behaved server (vCPUs runners x 12 ms per 50 ms) beside
    /// vCPUs CPU hogs, alone.
    IsolationAlone,
    /// The same beside an overloaded server in its own tick group (3/4 x
    /// vCPUs runners that never sleep, 70 ms of work per 50 ms tick).
    IsolationBeside,
}

impl Scenario {
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Standard => "standard",
            Scenario::HeavyIdle => "heavy-idle",
            Scenario::HeavyHogs => "heavy-hogs",
            Scenario::HeavyFloor => "heavy-floor",
            Scenario::Capacity => "capacity",
            Scenario::IsolationAlone => "isolation-alone",
            Scenario::IsolationBeside => "isolation-beside",
        }
    }

    /// Whether background throughput was measured (and can be compared).
    pub fn has_background(self) -> bool {
        self != Scenario::HeavyIdle
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub vcpus: usize,
    /// T, the scenarios' unit of runners: half the guest's cores (scx_tick's
    /// default tick CPU count in the oldest records, which named it so)
    #[serde(alias = "tick_cpus")]
    pub t: usize,
    pub scheduler: String,
    #[serde(default)]
    pub scenario: Scenario,
    /// Repetition of the cell (0-based); cells run once have only 0.
    #[serde(default)]
    pub rep: usize,
    pub runners: usize,
    /// The standard scenario's headline runner count (the table's rows;
    /// cyclictest ran in it).
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
    /// isolation-beside: the CPUs the overloaded server's runners got (its
    /// ticks x their work, over the window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overloaded_cpus: Option<f64>,
}

/// The repetitions of one cell: their median and range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub n: usize,
}

/// Median (the mean of the middle two for an even count) and min-max of
/// `values`; None when there are none.
pub fn spread(values: &[f64]) -> Option<Spread> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    Some(Spread {
        median,
        min: v[0],
        max: v[n - 1],
        n,
    })
}

/// "1.20 (0.90-1.50)"; a single run is just its value; "-" for none.
pub fn fmt_spread(s: Option<Spread>, digits: usize) -> String {
    match s {
        None => "-".into(),
        Some(s) if s.n == 1 => format!("{:.digits$}", s.median),
        Some(s) => format!(
            "{:.digits$} ({:.digits$}-{:.digits$})",
            s.median, s.min, s.max
        ),
    }
}

fn median(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    spread(&values.into_iter().collect::<Vec<_>>()).map(|s| s.median)
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

pub fn num(x: Option<f64>, digits: usize) -> String {
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

/// Which runs of a scenario form its table's cell: the standard scenario's
/// headline runs, or every run of a heavy scenario.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cell {
    Headline,
    Runners(usize),
    Scenario(Scenario),
    /// A scenario's runs at one runner count (capacity).
    At(Scenario, usize),
}

/// The measured runs (repetitions) of one scheduler's cell.
pub fn cell<'a>(
    records: &'a [RunRecord],
    vcpus: usize,
    sched: &str,
    which: Cell,
) -> Vec<&'a RunRecord> {
    records
        .iter()
        .filter(|r| r.vcpus == vcpus && r.scheduler == sched && r.skipped.is_none())
        .filter(|r| match which {
            Cell::Headline => r.scenario == Scenario::Standard && r.headline,
            Cell::Runners(n) => r.scenario == Scenario::Standard && r.runners == n,
            Cell::Scenario(s) => r.scenario == s,
            Cell::At(s, n) => r.scenario == s && r.runners == n,
        })
        .collect()
}

pub fn cell_spread(runs: &[&RunRecord], f: impl Fn(&RunRecord) -> Option<f64>) -> Option<Spread> {
    spread(&runs.iter().filter_map(|r| f(r)).collect::<Vec<_>>())
}

pub fn cell_median(runs: &[&RunRecord], f: impl Fn(&RunRecord) -> Option<f64>) -> Option<f64> {
    cell_spread(runs, f).map(|s| s.median)
}

/// The row label and colour key of the floor in the heavy-hogs table.
pub const FLOOR_LABEL: &str = "eevdf, 1 hog (floor)";

/// The table of one scenario on one vCPU count: per scheduler, median and
/// min-max over the repetitions. heavy-hogs gets the floor as a last row.
pub fn scenario_table(records: &[RunRecord], vcpus: usize, scenario: Scenario) -> String {
    let which = match scenario {
        Scenario::Standard => Cell::Headline,
        s => Cell::Scenario(s),
    };
    let mut s = String::new();
    let rows: Vec<(String, Vec<&RunRecord>)> = schedulers(records)
        .into_iter()
        .map(|name| {
            let runs = cell(records, vcpus, &name, which);
            (name, runs)
        })
        .filter(|(_, runs)| !runs.is_empty())
        .collect();
    let Some(any) = rows.first().and_then(|(_, runs)| runs.first()) else {
        return s;
    };
    let reps = rows.iter().map(|(_, r)| r.len()).max().unwrap_or(0);
    let _ = writeln!(
        s,
        "{} vCPUs, T = {}, {} runners, {} s per run, median (min-max) of up to {} run(s):\n",
        vcpus, any.t, any.runners, any.duration_s, reps
    );
    let bg = scenario.has_background();
    s.push_str(
        "| scheduler | runs | miss % | p50 start lateness ms | p99 start lateness ms | MSPT p99 ms |",
    );
    if bg {
        s.push_str(" background bogo-ops/s x EEVDF |");
    }
    s.push_str("\n|---|---:|---:|---:|---:|---:|");
    if bg {
        s.push_str("---:|");
    }
    s.push('\n');
    let base = cell_median(&cell(records, vcpus, BASELINE, which), |r| r.bogo_ops_per_s)
        .filter(|&b| b > 0.0);
    let mut row = |label: &str, runs: &[&RunRecord], comparable: bool| {
        let _ = write!(
            s,
            "| {} | {} | {} | {} | {} | {} |",
            label,
            runs.len(),
            fmt_spread(cell_spread(runs, |r| Some(r.ticks.miss_pct)), 2),
            fmt_spread(cell_spread(runs, |r| Some(r.ticks.lateness_p50_ms)), 2),
            fmt_spread(cell_spread(runs, |r| Some(r.ticks.lateness_p99_ms)), 2),
            fmt_spread(cell_spread(runs, |r| Some(r.ticks.mspt_p99_ms)), 2),
        );
        if bg {
            // each run against EEVDF's median: the runs are not paired
            let x = match (comparable, base) {
                (true, Some(b)) => cell_spread(runs, |r| r.bogo_ops_per_s.map(|x| x / b)),
                _ => None,
            };
            let _ = write!(s, " {} |", fmt_spread(x, 2));
        }
        s.push('\n');
    };
    for (name, runs) in &rows {
        row(name, runs, true);
    }
    if scenario == Scenario::HeavyHogs {
        let floor = cell(
            records,
            vcpus,
            BASELINE,
            Cell::Scenario(Scenario::HeavyFloor),
        );
        if !floor.is_empty() {
            // one hog instead of 2 x vCPUs: its throughput is not comparable
            row(FLOOR_LABEL, &floor, false);
        }
    }
    s
}

/// The standard scenario's detailed headline table of one vCPU count: one
/// row per scheduler, every value the median over the repetitions.
pub fn headline_table(records: &[RunRecord], vcpus: usize) -> String {
    let mut s = String::new();
    let base = cell(records, vcpus, BASELINE, Cell::Headline);
    let Some(any) = records
        .iter()
        .find(|r| r.vcpus == vcpus && r.scenario == Scenario::Standard && r.headline)
    else {
        return s;
    };
    let _ = writeln!(
        s,
        "{} vCPUs, T = {}, {} runners, {} s per run, medians:\n",
        vcpus, any.t, any.runners, any.duration_s
    );
    s.push_str(
        "| scheduler | miss % | x EEVDF | p99 start lateness ms | x EEVDF | MSPT p99 ms | x EEVDF \
         | background bogo-ops/s | x EEVDF | hackbench runs/s | cyclictest avg / max us | BPF ns/call | BPF CPU % \
         | scheduler process CPU % |\n",
    );
    s.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    let b_miss = cell_median(&base, |r| Some(r.ticks.miss_pct));
    let b_late = cell_median(&base, |r| Some(r.ticks.lateness_p99_ms));
    let b_mspt = cell_median(&base, |r| Some(r.ticks.mspt_p99_ms));
    let b_bogo = cell_median(&base, |r| r.bogo_ops_per_s);
    for name in schedulers(records) {
        let runs = cell(records, vcpus, &name, Cell::Headline);
        if runs.is_empty() {
            continue;
        }
        let miss = cell_median(&runs, |r| Some(r.ticks.miss_pct));
        let late = cell_median(&runs, |r| Some(r.ticks.lateness_p99_ms));
        let mspt = cell_median(&runs, |r| Some(r.ticks.mspt_p99_ms));
        let bogo = cell_median(&runs, |r| r.bogo_ops_per_s);
        let cyc_avg = cell_median(&runs, |r| r.cyclictest.map(|c| c.avg_us));
        let cyc_max = cell_median(&runs, |r| r.cyclictest.map(|c| c.max_us));
        let cyc = match (cyc_avg, cyc_max) {
            (Some(avg), Some(max)) => {
                let pol = match runs[0].cyclictest_policy.as_deref() {
                    Some(p) if p != "other" => format!(" ({p})"),
                    _ => String::new(),
                };
                format!("{avg:.0} / {max:.0}{pol}")
            }
            _ => "-".into(),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            name,
            num(miss, 2),
            ratio(miss, b_miss),
            num(late, 2),
            ratio(late, b_late),
            num(mspt, 2),
            ratio(mspt, b_mspt),
            num(bogo, 0),
            ratio(bogo, b_bogo),
            num(cell_median(&runs, |r| r.hackbench_per_s), 2),
            cyc,
            num(
                cell_median(&runs, |r| r.bpf.as_ref().map(|o| o.ns_per_call)),
                0
            ),
            num(cell_median(&runs, |r| r.bpf.as_ref().map(|o| o.cpu_pct)), 3),
            num(cell_median(&runs, |r| r.sched_process_cpu_pct), 2),
        );
    }
    s
}

/// The runner counts of the standard scenario on one vCPU count, ascending.
pub fn runner_counts(records: &[RunRecord], vcpus: usize) -> Vec<usize> {
    runner_counts_of(records, vcpus, Scenario::Standard)
}

/// The runner counts measured in `scenario` on one vCPU count, ascending.
pub fn runner_counts_of(records: &[RunRecord], vcpus: usize, scenario: Scenario) -> Vec<usize> {
    records
        .iter()
        .filter(|r| r.vcpus == vcpus && r.skipped.is_none() && r.scenario == scenario)
        .map(|r| r.runners)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// The scaling table of one vCPU count (standard scenario): miss % and BPF
/// ns/call per runner count, medians where a count ran more than once.
pub fn scaling_table(records: &[RunRecord], vcpus: usize) -> String {
    let counts = runner_counts(records, vcpus);
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
        let cells: Vec<Vec<&RunRecord>> = counts
            .iter()
            .map(|&n| cell(records, vcpus, &name, Cell::Runners(n)))
            .collect();
        if cells.iter().all(Vec::is_empty) {
            continue;
        }
        let _ = write!(s, "| {name} |");
        for c in &cells {
            let _ = write!(
                s,
                " {} |",
                num(cell_median(c, |r| Some(r.ticks.miss_pct)), 2)
            );
        }
        for c in &cells {
            let v = cell_median(c, |r| r.bpf.as_ref().map(|o| o.ns_per_call));
            let _ = write!(s, " {} |", num(v, 0));
        }
        s.push('\n');
    }
    s
}

/// The median miss % per runner count of one scheduler (standard scenario),
/// for the scaling plot.
pub fn scaling_points(records: &[RunRecord], vcpus: usize, sched: &str) -> Vec<(usize, f64)> {
    runner_counts(records, vcpus)
        .into_iter()
        .filter_map(|n| {
            let c = cell(records, vcpus, sched, Cell::Runners(n));
            cell_median(&c, |r| Some(r.ticks.miss_pct)).map(|m| (n, m))
        })
        .collect()
}

/// The pointwise median of the runs' lateness quantile curves (each a
/// monotone list of 101 values, so the median curve is monotone too).
pub fn median_curve(runs: &[&RunRecord]) -> Vec<f64> {
    let len = runs
        .iter()
        .map(|r| r.lateness_quantiles_ms.len())
        .filter(|&l| l > 0)
        .min()
        .unwrap_or(0);
    (0..len)
        .filter_map(|i| {
            median(
                runs.iter()
                    .filter(|r| !r.lateness_quantiles_ms.is_empty())
                    .map(|r| r.lateness_quantiles_ms[i]),
            )
        })
        .collect()
}

/// Schedulers that gave no numbers, with the reason.
pub fn skipped(records: &[RunRecord]) -> Vec<String> {
    let mut out = Vec::new();
    for r in records.iter().filter(|r| r.skipped.is_some()) {
        let scenario = match r.scenario {
            Scenario::Standard => String::new(),
            s => format!(", {}", s.name()),
        };
        let line = format!(
            "{} ({} vCPUs{}): {}",
            r.scheduler,
            r.vcpus,
            scenario,
            r.skipped.as_deref().unwrap_or_default()
        );
        if !out.contains(&line) {
            out.push(line);
        }
    }
    out
}

/// The outcome of one target check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Met,
    NotMet,
    NotMeasured,
}

impl Verdict {
    fn word(self) -> &'static str {
        match self {
            Verdict::Met => "met",
            Verdict::NotMet => "NOT MET",
            Verdict::NotMeasured => "not measured",
        }
    }

    fn of(ok: bool) -> Self {
        if ok { Verdict::Met } else { Verdict::NotMet }
    }

    /// Several checks together: any failure fails, else any gap is a gap.
    fn all(vs: &[Verdict]) -> Self {
        if vs.contains(&Verdict::NotMet) {
            Verdict::NotMet
        } else if vs.is_empty() || vs.contains(&Verdict::NotMeasured) {
            Verdict::NotMeasured
        } else {
            Verdict::Met
        }
    }
}

/// One target: its verdict and the line that says it with the numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub verdict: Verdict,
    pub text: String,
}

fn miss_of(runs: &[&RunRecord]) -> Option<f64> {
    cell_median(runs, |r| Some(r.ticks.miss_pct))
}

/// The best (lowest) median of `f` among the peers measured in `which`.
fn best_peer(
    records: &[RunRecord],
    vcpus: usize,
    which: Cell,
    f: impl Fn(&[&RunRecord]) -> Option<f64>,
) -> Option<(&'static str, f64)> {
    peers()
        .filter_map(|p| f(&cell(records, vcpus, p, which)).map(|v| (p, v)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

/// The comparison a target asks for, or its negation when it failed.
fn le(ok: bool) -> &'static str {
    if ok { "<=" } else { ">" }
}

fn missing(what: &str) -> Target {
    Target {
        verdict: Verdict::NotMeasured,
        text: format!("no {what} measured"),
    }
}

/// The overload issue's targets for one vCPU count, checked against the
/// measured medians.
pub fn targets(records: &[RunRecord], vcpus: usize) -> Vec<(String, Target)> {
    let mut out = Vec::new();
    let miss = |sched: &str, which: Cell| miss_of(&cell(records, vcpus, sched, which));
    let idle = Cell::Scenario(Scenario::HeavyIdle);
    let hogs = Cell::Scenario(Scenario::HeavyHogs);

    // 1. heavy on an idle machine: no worse than EEVDF (+ 1 point)
    let t = match (miss(TICK, idle), miss(BASELINE, idle)) {
        (Some(t), Some(e)) => Target {
            verdict: Verdict::of(t <= e + 1.0),
            text: format!(
                "scx_tick {t:.2} % {} EEVDF {e:.2} % + 1 = {:.2} %",
                le(t <= e + 1.0),
                e + 1.0
            ),
        },
        _ => missing("scx_tick or EEVDF heavy-idle run"),
    };
    out.push(("heavy-idle: miss % <= EEVDF + 1 point".to_string(), t));

    // 2. heavy beside hogs: the background must not matter to ticks
    let floor = miss(BASELINE, Cell::Scenario(Scenario::HeavyFloor));
    let t = match (miss(TICK, hogs), floor) {
        (Some(t), Some(f)) => Target {
            verdict: Verdict::of(t <= f + 1.0),
            text: format!(
                "scx_tick {t:.2} % {} floor (EEVDF, 1 hog) {f:.2} % + 1 = {:.2} %",
                le(t <= f + 1.0),
                f + 1.0
            ),
        },
        _ => missing("scx_tick heavy-hogs or EEVDF heavy-floor run"),
    };
    out.push((
        "heavy-hogs: miss % <= the uncontended floor + 1 point".to_string(),
        t,
    ));
    let t = match (miss(TICK, hogs), best_peer(records, vcpus, hogs, miss_of)) {
        (Some(t), Some((p, b))) => Target {
            verdict: Verdict::of(t <= 0.1 * b),
            text: format!(
                "scx_tick {t:.2} % {} 0.1 x best peer ({p} {b:.2} %) = {:.2} %",
                le(t <= 0.1 * b),
                0.1 * b
            ),
        },
        _ => missing("scx_tick or peer heavy-hogs run"),
    };
    out.push((
        "heavy-hogs: miss % <= 0.1 x the best sched_ext peer".to_string(),
        t,
    ));

    // 3. the scaling table: at every runner count no worse than the best peer
    let counts = runner_counts(records, vcpus);
    let mut verdicts = Vec::new();
    let mut parts = Vec::new();
    for &n in &counts {
        let c = Cell::Runners(n);
        match (miss(TICK, c), best_peer(records, vcpus, c, miss_of)) {
            (Some(t), Some((p, b))) => {
                let ok = t <= b;
                verdicts.push(Verdict::of(ok));
                parts.push(format!("@{n}: {t:.2} {} {b:.2} ({p})", le(ok)));
            }
            _ => {
                verdicts.push(Verdict::NotMeasured);
                parts.push(format!("@{n}: not measured"));
            }
        }
    }
    let t = if counts.is_empty() {
        missing("standard run")
    } else {
        Target {
            verdict: Verdict::all(&verdicts),
            text: format!("scx_tick vs best peer, miss %: {}", parts.join("; ")),
        }
    };
    out.push((
        "scaling: miss % <= the best sched_ext peer at every runner count".to_string(),
        t,
    ));
    // T is the guest's, the same in every record of this vCPU count
    let unit = records
        .iter()
        .find(|r| r.vcpus == vcpus && r.skipped.is_none() && r.t > 0)
        .map(|r| r.t);
    let t = match unit {
        Some(unit) => {
            let n = 4 * unit;
            match (miss(TICK, Cell::Runners(n)), miss(FIFO, Cell::Runners(n))) {
                (Some(t), Some(f)) => Target {
                    verdict: Verdict::of(t <= f + 1.0),
                    text: format!(
                        "@{n} runners: scx_tick {t:.2} % {} SCHED_FIFO {f:.2} % + 1 = {:.2} %",
                        le(t <= f + 1.0),
                        f + 1.0
                    ),
                },
                _ => missing(&format!("scx_tick or fifo run at 4T = {n} runners")),
            }
        }
        None => missing("scx_tick standard run"),
    };
    out.push((
        "scaling: miss % at 4T <= SCHED_FIFO + 1 point".to_string(),
        t,
    ));

    // 4. the standard scenario: start lateness and the background
    let p50 = |runs: &[&RunRecord]| cell_median(runs, |r| Some(r.ticks.lateness_p50_ms));
    let head = |sched: &str| cell(records, vcpus, sched, Cell::Headline);
    let t = match (
        p50(&head(TICK)),
        best_peer(records, vcpus, Cell::Headline, p50),
    ) {
        (Some(t), Some((p, b))) => Target {
            verdict: Verdict::of(t <= b),
            text: format!(
                "scx_tick {t:.2} ms {} best peer ({p}) {b:.2} ms",
                le(t <= b)
            ),
        },
        _ => missing("scx_tick or peer standard headline run"),
    };
    out.push((
        "standard: p50 start lateness <= the best sched_ext peer".to_string(),
        t,
    ));
    let bogo = |sched: &str| cell_median(&head(sched), |r| r.bogo_ops_per_s);
    let t = match (bogo(TICK), bogo(BASELINE)) {
        (Some(t), Some(e)) => Target {
            verdict: Verdict::of(t >= 0.9 * e),
            text: format!(
                "scx_tick {t:.0} bogo-ops/s {} 0.9 x EEVDF {e:.0} = {:.0} ({} x EEVDF)",
                if t >= 0.9 * e { ">=" } else { "<" },
                0.9 * e,
                ratio(Some(t), Some(e))
            ),
        },
        _ => missing("scx_tick or EEVDF standard headline throughput"),
    };
    out.push((
        "standard: background throughput >= 0.9 x EEVDF".to_string(),
        t,
    ));
    out
}

/// The targets of one vCPU count as a markdown list.
pub fn targets_section(records: &[RunRecord], vcpus: usize) -> String {
    let mut s = String::new();
    for (what, t) in targets(records, vcpus) {
        let _ = writeln!(s, "- **{}**: {what}: {}", t.verdict.word(), t.text);
    }
    s
}

/// Every scheduler's plot colour, by name (scripts/bench-schedulers), so a
/// scheduler has the same colour in every plot whichever schedulers ran.
pub fn colour(name: &str) -> (u8, u8, u8) {
    if let Some(s) = SCHEDULERS.iter().find(|s| s.name == name) {
        return s.colour;
    }
    if name == FLOOR_LABEL {
        return (128, 128, 0);
    }
    // a name the bench does not know yet: stable, though not guaranteed unique
    let h = name
        .bytes()
        .fold(2166136261u32, |h, b| (h ^ b as u32).wrapping_mul(16777619));
    let [a, b, c, _] = h.to_le_bytes();
    // keep it dark enough to see on white
    (a / 2 + 30, b / 2 + 30, c / 2 + 30)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(sched: &str, runners: usize, headline: bool, miss: f64, p99: f64) -> RunRecord {
        RunRecord {
            vcpus: 4,
            t: 2,
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

    fn heavy(sched: &str, scenario: Scenario, rep: usize, miss: f64) -> RunRecord {
        RunRecord {
            scenario,
            rep,
            ..rec(sched, 6, false, miss, 1.0)
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
    fn median_and_range() {
        let s = spread(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.n), (2.0, 1.0, 3.0, 3));
        // an even count takes the mean of the middle two
        let s = spread(&[4.0, 1.0, 2.0, 10.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.n), (3.0, 1.0, 10.0, 4));
        assert_eq!(spread(&[5.0]).unwrap().median, 5.0);
        assert_eq!(spread(&[]), None);
        assert_eq!(spread(&[f64::NAN]), None);
        assert_eq!(fmt_spread(spread(&[0.5, 1.25, 2.0]), 2), "1.25 (0.50-2.00)");
        assert_eq!(fmt_spread(spread(&[7.0]), 1), "7.0");
        assert_eq!(fmt_spread(None, 2), "-");
    }

    #[test]
    fn records_without_scenario_read_as_standard_rep_0() {
        // a record as the bench wrote it before scenarios existed
        let old = r#"{"vcpus":4,"tick_cpus":2,"scheduler":"scx_flash","runners":4,"headline":true,
            "duration_s":8.0,"ticks":{"ticks":640,"misses":6,"miss_pct":0.94},
            "lateness_quantiles_ms":[0.1,0.2],"bogo_ops_per_s":98.0,"hackbench_per_s":2.0,
            "cyclictest":null,"cyclictest_policy":null,"bpf":null}"#;
        let r: RunRecord = serde_json::from_str(old).unwrap();
        assert_eq!((r.scenario, r.rep), (Scenario::Standard, 0));
        assert_eq!((r.ticks.misses, r.sched_process_cpu_pct), (6, None));
        let skipped = r#"{"vcpus":2,"tick_cpus":1,"scheduler":"scx_lavd","runners":2,
            "headline":true,"duration_s":8.0,"skipped":"not installed"}"#;
        let r: RunRecord = serde_json::from_str(skipped).unwrap();
        assert_eq!(r.scenario, Scenario::Standard);
        // and new ones keep theirs
        let n = heavy("scx_tick", Scenario::HeavyHogs, 2, 1.0);
        let line = serde_json::to_string(&n).unwrap();
        assert!(
            line.contains(r#""scenario":"heavy-hogs","rep":2"#),
            "{line}"
        );
        assert_eq!(serde_json::from_str::<RunRecord>(&line).unwrap(), n);
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
        // nor a heavy run of the same vCPUs
        rs.push(heavy("eevdf", Scenario::HeavyIdle, 0, 90.0));
        let t = headline_table(&rs, 4);
        let tick = t.lines().find(|l| l.starts_with("| scx_tick")).unwrap();
        assert!(
            tick.contains("| 5.00 | 0.25 | 2.00 | 0.25 | 10.00 | 1.00 |"),
            "{tick}"
        );
        // bogo-ops 6000 vs 21000
        assert!(tick.contains("| 6000 | 0.29 |"), "{tick}");
        assert!(t.starts_with("4 vCPUs, T = 2, 4 runners"), "{t}");
        assert_eq!(t.lines().filter(|l| l.starts_with("| eevdf")).count(), 1);
    }

    #[test]
    fn headline_values_are_medians_of_the_reps() {
        let rs: Vec<RunRecord> = [1.0, 9.0, 3.0]
            .iter()
            .enumerate()
            .map(|(i, &m)| RunRecord {
                rep: i,
                ..rec("scx_tick", 4, true, m, m)
            })
            .collect();
        let t = headline_table(&rs, 4);
        assert!(t.contains("| scx_tick | 3.00 | - | 3.00 |"), "{t}");
        let t = scenario_table(&rs, 4, Scenario::Standard);
        assert!(
            t.contains("| scx_tick | 3 | 3.00 (1.00-9.00) | 0.00 (0.00-0.00) | 3.00 (1.00-9.00) |"),
            "{t}"
        );
    }

    #[test]
    fn heavy_hogs_table_has_the_floor_row_without_a_throughput_ratio() {
        let mut rs = vec![
            heavy("eevdf", Scenario::HeavyHogs, 0, 40.0),
            heavy("eevdf", Scenario::HeavyHogs, 1, 60.0),
            heavy("scx_tick", Scenario::HeavyHogs, 0, 1.0),
            heavy("scx_tick", Scenario::HeavyHogs, 1, 3.0),
            heavy("eevdf", Scenario::HeavyFloor, 0, 2.0),
        ];
        // bogo-ops: eevdf 41000 and 61000 (median 51000), scx_tick 2000 and 4000
        let t = scenario_table(&rs, 4, Scenario::HeavyHogs);
        assert!(t.contains("| scx_tick | 2 | 2.00 (1.00-3.00) |"), "{t}");
        assert!(t.contains("| 0.06 (0.04-0.08) |\n"), "{t}");
        let floor = t.lines().last().unwrap();
        assert!(
            floor.starts_with("| eevdf, 1 hog (floor) | 1 | 2.00 |"),
            "{t}"
        );
        assert!(floor.ends_with("| - |"), "{floor}");
        // heavy-idle has no background column
        rs.push(heavy("scx_tick", Scenario::HeavyIdle, 0, 0.0));
        let t = scenario_table(&rs, 4, Scenario::HeavyIdle);
        assert!(!t.contains("bogo"), "{t}");
        assert!(
            t.contains("| scx_tick | 1 | 0.00 | 0.00 | 1.00 | 10.00 |"),
            "{t}"
        );
        assert!(scenario_table(&rs, 8, Scenario::HeavyIdle).is_empty());
    }

    #[test]
    fn skipped_schedulers_have_no_row_but_a_reason() {
        let mut s = rec("scx_lavd", 4, true, 0.0, 0.0);
        s.skipped = Some("cargo install failed".into());
        let rs = vec![rec("eevdf", 4, true, 20.0, 8.0), s];
        assert!(!headline_table(&rs, 4).contains("scx_lavd"));
        assert!(!scenario_table(&rs, 4, Scenario::Standard).contains("scx_lavd"));
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
            RunRecord {
                rep: 1,
                ..rec("scx_tick", 4, true, 7.0, 2.0)
            },
            // heavy runs are not a runner count of the scaling table
            heavy("scx_tick", Scenario::HeavyIdle, 0, 50.0),
        ];
        let t = scaling_table(&rs, 4);
        assert!(t.starts_with(
            "| scheduler | miss % @1 | miss % @4 | BPF ns/call @1 | BPF ns/call @4 |"
        ));
        assert!(t.contains("| scx_tick | 0.00 | 6.00 | - | - |"), "{t}");
        assert_eq!(scaling_points(&rs, 4, "scx_tick"), vec![(1, 0.0), (4, 6.0)]);
        assert!(scaling_table(&rs[1..2], 4).is_empty());
    }

    #[test]
    fn median_curve_is_pointwise() {
        let mut a = rec("x", 4, true, 0.0, 0.0);
        a.lateness_quantiles_ms = vec![0.0, 1.0, 5.0];
        let mut b = a.clone();
        b.lateness_quantiles_ms = vec![1.0, 2.0, 3.0];
        let mut c = a.clone();
        c.lateness_quantiles_ms = vec![2.0, 3.0, 4.0];
        let mut empty = a.clone();
        empty.lateness_quantiles_ms.clear();
        assert_eq!(median_curve(&[&a, &b, &c, &empty]), vec![1.0, 2.0, 4.0]);
        assert!(median_curve(&[&empty]).is_empty());
    }

    fn verdicts(rs: &[RunRecord]) -> Vec<Verdict> {
        targets(rs, 4).into_iter().map(|(_, t)| t.verdict).collect()
    }

    #[test]
    fn targets_follow_the_medians() {
        use Verdict::*;
        let mut rs = Vec::new();
        for (i, m) in [0.0, 5.0, 1.0].into_iter().enumerate() {
            rs.push(heavy("eevdf", Scenario::HeavyIdle, i, m));
            rs.push(heavy("scx_tick", Scenario::HeavyIdle, i, m + 1.0));
            rs.push(heavy("eevdf", Scenario::HeavyFloor, i, 0.5));
            rs.push(heavy("scx_tick", Scenario::HeavyHogs, i, 1.5));
            rs.push(heavy("scx_flash", Scenario::HeavyHogs, i, 20.0));
            rs.push(heavy("scx_lavd", Scenario::HeavyHogs, i, 12.0));
        }
        for n in [1, 2, 4, 8] {
            let head = n == 4;
            rs.push(rec("scx_tick", n, head, n as f64, 1.0));
            rs.push(rec("scx_flash", n, head, 4.0, 1.0));
            rs.push(rec("fifo", n, head, 6.0, 1.0));
        }
        rs.push(rec("eevdf", 4, true, 5.0, 1.0));
        let t = targets(&rs, 4);
        // idle: 2.00 <= 1.00 + 1; floor: 1.50 <= 0.50 + 1; peers: 1.50 > 0.1 x 12
        assert_eq!(t[0].1.text, "scx_tick 2.00 % <= EEVDF 1.00 % + 1 = 2.00 %");
        assert!(
            t[2].1.text.contains("(scx_lavd 12.00 %) = 1.20 %"),
            "{:?}",
            t[2]
        );
        // scaling: 8 > 4 at 8 runners; 4T = 8: 8 > 6 + 1
        assert!(
            t[3].1.text.contains("@8: 8.00 > 4.00 (scx_flash)"),
            "{:?}",
            t[3]
        );
        // p50 lateness 0 <= 0; bogo 5000 vs eevdf 6000: 0.83 < 0.9
        assert_eq!(
            verdicts(&rs),
            vec![Met, Met, NotMet, NotMet, NotMet, Met, NotMet]
        );
        // what was not run is not measured, not failed
        let only_idle: Vec<RunRecord> = rs
            .iter()
            .filter(|r| r.scenario == Scenario::HeavyIdle)
            .cloned()
            .collect();
        assert_eq!(
            verdicts(&only_idle),
            vec![
                Met,
                NotMeasured,
                NotMeasured,
                NotMeasured,
                NotMeasured,
                NotMeasured,
                NotMeasured
            ]
        );
        let s = targets_section(&only_idle, 4);
        assert!(s.starts_with("- **met**: heavy-idle"), "{s}");
        assert_eq!(s.lines().count(), 7);
    }

    #[test]
    fn every_scheduler_has_its_own_colour() {
        let mut names: Vec<&str> = SCHEDULERS.iter().map(|s| s.name).collect();
        names.push(FLOOR_LABEL);
        let colours: BTreeSet<(u8, u8, u8)> = names.iter().map(|n| colour(n)).collect();
        assert_eq!(colours.len(), names.len());
        assert!(!colours.contains(&(255, 255, 255)));
        // the two that were both black before
        assert_ne!(colour("eevdf"), colour("scx_tick-userspace"));
        assert_eq!(colour("something-new"), colour("something-new"));
    }
}

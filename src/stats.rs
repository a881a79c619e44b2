//! Statistics: counters and histograms read from the BPF side, the live
//! view, the scx_stats metrics, JSON lines and OpenMetrics text.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use scx_stats_derive::Stats;
use serde::{Deserialize, Serialize};

use crate::bpf::intf::{cpu_stats, group_stats, tick_consts_NR_HIST_BUCKETS};

pub const NR_BUCKETS: usize = tick_consts_NR_HIST_BUCKETS as usize;

const SUB_BITS: u32 = crate::bpf::intf::tick_consts_HIST_SUB_BITS;
const SUB: u64 = 1 << SUB_BITS;

/// The range of histogram bucket `b` in ns, [lower, upper): log-linear,
/// one bucket per us below 8 us, then 8 per power of two (bpf/intf.h).
pub fn bucket_range_ns(b: usize) -> (u64, u64) {
    let b = b as u64;
    if b < SUB {
        return (b * 1000, (b + 1) * 1000);
    }
    let shift = (b - SUB) / SUB;
    let sub = (b - SUB) % SUB;
    (
        ((SUB + sub) << shift) * 1000,
        ((SUB + sub + 1) << shift) * 1000,
    )
}

/// Upper bound of histogram bucket `b` in ns (the OpenMetrics `le`).
pub fn bucket_upper_ns(b: usize) -> u64 {
    bucket_range_ns(b).1
}

/// The histogram bucket of `ns`: `hist_bucket()` in bpf/main.bpf.c.
pub fn bucket_of(ns: u64) -> usize {
    let us = ns / 1000;
    if us < SUB {
        return us as usize;
    }
    let e = u64::BITS - 1 - us.leading_zeros(); // floor(log2(us)) >= SUB_BITS
    let b = SUB + (e - SUB_BITS) as u64 * SUB + ((us >> (e - SUB_BITS)) & (SUB - 1));
    (b as usize).min(NR_BUCKETS - 1)
}

/// The `p`-th percentile (nearest rank) of a histogram, interpolated
/// linearly inside its bucket (a bucket is at most 12.5 % wide, so the
/// error is well below that); 0 if the histogram is empty. Callers clamp it
/// to the true maximum.
pub fn hist_percentile_ns(hist: &[u64], p: f64) -> u64 {
    let total: u64 = hist.iter().sum();
    if total == 0 {
        return 0;
    }
    let rank = ((p / 100.0) * total as f64).ceil().max(1.0) as u64;
    let mut seen = 0;
    for (b, &n) in hist.iter().enumerate() {
        if n > 0 && seen + n >= rank {
            let (lo, hi) = bucket_range_ns(b);
            let frac = (rank - seen) as f64 - 0.5;
            return lo + ((hi - lo) as f64 * frac / n as f64) as u64;
        }
        seen += n;
    }
    bucket_upper_ns(hist.len() - 1)
}

/// One tick group's counters, summed over CPUs.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupCounters {
    pub ticks: u64,
    pub misses: u64,
    pub late_starts: u64,
    pub stolen: u64,
    pub lateness_max_ns: u64,
    pub lateness_sum_ns: u64,
    pub overshoot_max_ns: u64,
    pub overshoot_sum_ns: u64,
    pub hints_used: u64,
    pub hints_ignored: u64,
    pub lateness_hist: Vec<u64>,
    pub overshoot_hist: Vec<u64>,
}

impl Default for GroupCounters {
    fn default() -> Self {
        GroupCounters {
            ticks: 0,
            misses: 0,
            late_starts: 0,
            stolen: 0,
            lateness_max_ns: 0,
            lateness_sum_ns: 0,
            overshoot_max_ns: 0,
            overshoot_sum_ns: 0,
            hints_used: 0,
            hints_ignored: 0,
            lateness_hist: vec![0; NR_BUCKETS],
            overshoot_hist: vec![0; NR_BUCKETS],
        }
    }
}

impl GroupCounters {
    pub fn add_cpu(&mut self, s: &group_stats) {
        self.ticks += s.ticks;
        self.misses += s.misses;
        self.late_starts += s.late_starts;
        self.stolen += s.stolen;
        self.lateness_max_ns = self.lateness_max_ns.max(s.lateness_max_ns);
        self.lateness_sum_ns += s.lateness_sum_ns;
        self.overshoot_max_ns = self.overshoot_max_ns.max(s.overshoot_max_ns);
        self.overshoot_sum_ns += s.overshoot_sum_ns;
        self.hints_used += s.hints_used;
        self.hints_ignored += s.hints_ignored;
        for b in 0..NR_BUCKETS {
            self.lateness_hist[b] += s.lateness_hist[b];
            self.overshoot_hist[b] += s.overshoot_hist[b];
        }
    }

    /// A tick's first start, `lateness_ns` after its wake, as BPF's
    /// `account_start()` counts it (the userspace mode's bookkeeping).
    /// Returns whether it was a late start.
    pub fn add_start(&mut self, lateness_ns: u64) -> bool {
        let late = lateness_ns >= crate::bpf::intf::tick_consts_LATE_START_NS as u64;
        self.late_starts += late as u64;
        self.lateness_hist[bucket_of(lateness_ns)] += 1;
        self.lateness_sum_ns += lateness_ns;
        self.lateness_max_ns = self.lateness_max_ns.max(lateness_ns);
        late
    }

    /// A deadline missed by `over_ns`, as BPF's `account_miss()` counts it.
    pub fn add_miss(&mut self, over_ns: u64) {
        self.misses += 1;
        self.overshoot_hist[bucket_of(over_ns)] += 1;
        self.overshoot_sum_ns += over_ns;
        self.overshoot_max_ns = self.overshoot_max_ns.max(over_ns);
    }

    /// What happened since `prev`; maxima stay cumulative.
    pub fn delta(&self, prev: &GroupCounters) -> GroupCounters {
        let sub =
            |a: &[u64], b: &[u64]| a.iter().zip(b).map(|(x, y)| x.saturating_sub(*y)).collect();
        GroupCounters {
            ticks: self.ticks.saturating_sub(prev.ticks),
            misses: self.misses.saturating_sub(prev.misses),
            late_starts: self.late_starts.saturating_sub(prev.late_starts),
            stolen: self.stolen.saturating_sub(prev.stolen),
            lateness_max_ns: self.lateness_max_ns,
            lateness_sum_ns: self.lateness_sum_ns.saturating_sub(prev.lateness_sum_ns),
            overshoot_max_ns: self.overshoot_max_ns,
            overshoot_sum_ns: self.overshoot_sum_ns.saturating_sub(prev.overshoot_sum_ns),
            hints_used: self.hints_used.saturating_sub(prev.hints_used),
            hints_ignored: self.hints_ignored.saturating_sub(prev.hints_ignored),
            lateness_hist: sub(&self.lateness_hist, &prev.lateness_hist),
            overshoot_hist: sub(&self.overshoot_hist, &prev.overshoot_hist),
        }
    }
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1e3
}

/// One tick group in the metrics: cumulative counters plus the last interval.
#[derive(Clone, Debug, Default, Serialize, Deserialize, Stats)]
#[stat(desc = "tick group statistics", _om_prefix = "g_", _om_label = "group")]
pub struct GroupMetrics {
    #[stat(desc = "ticks started (runner wake-ups), cumulative")]
    pub ticks: u64,
    #[stat(desc = "deadline misses, once per tick, cumulative")]
    pub misses: u64,
    #[stat(desc = "ticks that started 1 ms or more late, cumulative")]
    pub late_starts: u64,
    #[stat(desc = "ticks stolen by another tick CPU, cumulative")]
    pub steals: u64,
    #[stat(desc = "ticks whose deadline came from a deadline hint, cumulative")]
    pub hints_used: u64,
    #[stat(desc = "deadline hints ignored as stale or absurd, cumulative")]
    pub hints_ignored: u64,
    #[stat(desc = "ticks per second over the last interval")]
    pub ticks_per_s: f64,
    #[stat(desc = "deadline misses in the last interval")]
    pub interval_misses: u64,
    #[stat(desc = "deadline misses in % of the ticks of the last interval")]
    pub interval_miss_pct: f64,
    #[stat(desc = "median start lateness of the last interval, us (interpolated in its bucket)")]
    pub lateness_p50_us: f64,
    #[stat(
        desc = "99th percentile start lateness of the last interval, us (interpolated in its bucket)"
    )]
    pub lateness_p99_us: f64,
    #[stat(desc = "largest start lateness so far, us")]
    pub lateness_max_us: f64,
    #[stat(desc = "largest deadline overshoot so far, us")]
    pub overshoot_max_us: f64,
    #[stat(
        desc = "start lateness histogram (log-linear us buckets, 8 per power of two), cumulative",
        _om_skip
    )]
    pub lateness_hist: Vec<u64>,
    #[stat(
        desc = "deadline overshoot histogram (log-linear us buckets, 8 per power of two), cumulative",
        _om_skip
    )]
    pub overshoot_hist: Vec<u64>,
    #[stat(desc = "sum of start lateness, us, cumulative", _om_skip)]
    pub lateness_sum_us: f64,
    #[stat(desc = "sum of overshoot, us, cumulative", _om_skip)]
    pub overshoot_sum_us: f64,
}

impl GroupMetrics {
    pub fn new(total: &GroupCounters, interval: &GroupCounters, secs: f64) -> GroupMetrics {
        GroupMetrics {
            ticks: total.ticks,
            misses: total.misses,
            late_starts: total.late_starts,
            steals: total.stolen,
            hints_used: total.hints_used,
            hints_ignored: total.hints_ignored,
            ticks_per_s: interval.ticks as f64 / secs.max(1e-9),
            interval_misses: interval.misses,
            interval_miss_pct: pct(interval.misses, interval.ticks),
            // a bucket bound can exceed the exact maximum: never show more
            lateness_p50_us: us(
                hist_percentile_ns(&interval.lateness_hist, 50.0).min(total.lateness_max_ns)
            ),
            lateness_p99_us: us(
                hist_percentile_ns(&interval.lateness_hist, 99.0).min(total.lateness_max_ns)
            ),
            lateness_max_us: us(total.lateness_max_ns),
            overshoot_max_us: us(total.overshoot_max_ns),
            lateness_hist: total.lateness_hist.clone(),
            overshoot_hist: total.overshoot_hist.clone(),
            lateness_sum_us: us(total.lateness_sum_ns),
            overshoot_sum_us: us(total.overshoot_sum_ns),
        }
    }

    /// The live view's line for this group.
    pub fn line(&self, name: &str) -> String {
        format!(
            "{name}: {:>6.1} ticks/s  misses {:>4} ({:>5.2}%)  lateness p50 {} p99 {} max {}  steals {}",
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

/// Everything scx_tick reports: what `--stats-json` writes, what
/// `--monitor` and other scx_stats clients receive.
#[derive(Clone, Debug, Default, Serialize, Deserialize, Stats)]
#[stat(top, desc = "scx_tick statistics")]
pub struct Metrics {
    #[stat(desc = "wall-clock time of this sample, seconds since the Unix epoch (UTC)")]
    pub timestamp_s: f64,
    #[stat(desc = "seconds since scx_tick attached")]
    pub uptime_s: f64,
    #[stat(desc = "length of the last interval, s")]
    pub interval_s: f64,
    #[stat(desc = "runners taken from their home CPU's EDF queue, cumulative")]
    pub dispatch_local: u64,
    #[stat(desc = "runners taken from the global EDF queue, cumulative")]
    pub dispatch_global: u64,
    #[stat(desc = "runners stolen from another tick CPU, cumulative")]
    pub dispatch_stolen: u64,
    #[stat(desc = "other tasks dispatched from the fair queue, cumulative")]
    pub dispatch_other: u64,
    #[stat(desc = "steal candidates below the threshold, cumulative")]
    pub steals_refused: u64,
    #[stat(desc = "times a tick CPU ran other work while its runners slept, cumulative")]
    pub lends: u64,
    #[stat(desc = "per tick group")]
    pub groups: BTreeMap<String, GroupMetrics>,
}

impl Metrics {
    /// OpenMetrics text exposition (counters, gauges, histograms).
    pub fn openmetrics(&self) -> String {
        let mut o = String::new();
        let counter = |o: &mut String,
                       name: &str,
                       help: &str,
                       vals: &mut dyn Iterator<Item = (String, u64)>| {
            writeln!(
                o,
                "# TYPE scx_tick_{name} counter\n# HELP scx_tick_{name} {help}"
            )
            .ok();
            for (labels, v) in vals {
                writeln!(o, "scx_tick_{name}_total{labels} {v}").ok();
            }
        };
        let g = |n: &str| {
            format!(
                "{{group=\"{}\"}}",
                n.replace('\\', "\\\\").replace('"', "\\\"")
            )
        };
        counter(
            &mut o,
            "ticks",
            "Ticks started (tick runner wake-ups).",
            &mut self.groups.iter().map(|(n, m)| (g(n), m.ticks)),
        );
        counter(
            &mut o,
            "deadline_misses",
            "Ticks that ended or ran past their deadline.",
            &mut self.groups.iter().map(|(n, m)| (g(n), m.misses)),
        );
        counter(
            &mut o,
            "late_starts",
            "Ticks that started 1 ms or more after their wake-up.",
            &mut self.groups.iter().map(|(n, m)| (g(n), m.late_starts)),
        );
        counter(
            &mut o,
            "steals",
            "Ticks stolen by another tick CPU.",
            &mut self.groups.iter().map(|(n, m)| (g(n), m.steals)),
        );
        counter(
            &mut o,
            "deadline_hints_used",
            "Ticks whose deadline came from the runner's deadline hint.",
            &mut self.groups.iter().map(|(n, m)| (g(n), m.hints_used)),
        );
        counter(
            &mut o,
            "deadline_hints_ignored",
            "Deadline hints ignored as stale or absurd.",
            &mut self.groups.iter().map(|(n, m)| (g(n), m.hints_ignored)),
        );
        for (kind, help, v) in [
            ("local", "home CPU queue", self.dispatch_local),
            ("global", "global queue", self.dispatch_global),
            (
                "stolen",
                "stolen from another tick CPU",
                self.dispatch_stolen,
            ),
            ("other", "fair queue of other tasks", self.dispatch_other),
        ] {
            counter(
                &mut o,
                &format!("dispatch_{kind}"),
                &format!("Dispatches from the {help}."),
                &mut std::iter::once((String::new(), v)),
            );
        }
        counter(
            &mut o,
            "steals_refused",
            "Steal candidates whose start lateness was below the steal threshold.",
            &mut std::iter::once((String::new(), self.steals_refused)),
        );
        counter(
            &mut o,
            "lends",
            "Times a tick CPU ran other work while its runners slept.",
            &mut std::iter::once((String::new(), self.lends)),
        );
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
            writeln!(
                o,
                "# TYPE scx_tick_{name} histogram\n# HELP scx_tick_{name} {help}"
            )
            .ok();
            for (n, m) in &self.groups {
                let (hist, sum_us) = if pick == 0 {
                    (&m.lateness_hist, m.lateness_sum_us)
                } else {
                    (&m.overshoot_hist, m.overshoot_sum_us)
                };
                let label = n.replace('\\', "\\\\").replace('"', "\\\"");
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
}

/// Totals over all CPUs of `struct cpu_stats`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Counters {
    pub ticks: u64,
    pub misses: u64,
    pub late_starts: u64,
    pub dispatch_local: u64,
    pub dispatch_global: u64,
    pub dispatch_stolen: u64,
    pub dispatch_other: u64,
    pub steals_refused: u64,
    pub lends: u64,
}

impl Counters {
    pub fn sum(per_cpu: impl Iterator<Item = cpu_stats>) -> Counters {
        let mut c = Counters::default();
        for s in per_cpu {
            c.add(&Counters {
                ticks: s.ticks,
                misses: s.misses,
                late_starts: s.late_starts,
                dispatch_local: s.dispatch_local,
                dispatch_global: s.dispatch_global,
                dispatch_stolen: s.dispatch_stolen,
                dispatch_other: s.dispatch_other,
                steals_refused: s.steals_refused,
                lends: s.lends,
            });
        }
        c
    }

    pub fn add(&mut self, o: &Counters) {
        self.ticks += o.ticks;
        self.misses += o.misses;
        self.late_starts += o.late_starts;
        self.dispatch_local += o.dispatch_local;
        self.dispatch_global += o.dispatch_global;
        self.dispatch_stolen += o.dispatch_stolen;
        self.dispatch_other += o.dispatch_other;
        self.steals_refused += o.steals_refused;
        self.lends += o.lends;
    }

    /// Counts since `prev` (counters only grow while attached).
    pub fn delta(&self, prev: &Counters) -> Counters {
        Counters {
            ticks: self.ticks.saturating_sub(prev.ticks),
            misses: self.misses.saturating_sub(prev.misses),
            late_starts: self.late_starts.saturating_sub(prev.late_starts),
            dispatch_local: self.dispatch_local.saturating_sub(prev.dispatch_local),
            dispatch_global: self.dispatch_global.saturating_sub(prev.dispatch_global),
            dispatch_stolen: self.dispatch_stolen.saturating_sub(prev.dispatch_stolen),
            dispatch_other: self.dispatch_other.saturating_sub(prev.dispatch_other),
            steals_refused: self.steals_refused.saturating_sub(prev.steals_refused),
            lends: self.lends.saturating_sub(prev.lends),
        }
    }

    pub fn miss_pct(&self) -> f64 {
        if self.ticks == 0 {
            0.0
        } else {
            100.0 * self.misses as f64 / self.ticks as f64
        }
    }

    /// One live line per interval.
    pub fn line(&self, over: Duration) -> String {
        let secs = over.as_secs_f64().max(1e-9);
        format!(
            "ticks/s {:>7.1} misses {:>5} ({:>5.2}%) late {:>5} | local {} global {} stolen {} refused {} | other {} lent {}",
            self.ticks as f64 / secs,
            self.misses,
            self.miss_pct(),
            self.late_starts,
            self.dispatch_local,
            self.dispatch_global,
            self.dispatch_stolen,
            self.steals_refused,
            self.dispatch_other,
            self.lends,
        )
    }

    /// key=value totals, printed on exit (tests parse this).
    pub fn summary(&self) -> String {
        format!(
            "ticks={} misses={} late_starts={} dispatch_local={} dispatch_global={} dispatch_stolen={} dispatch_other={} steals_refused={} lends={}",
            self.ticks,
            self.misses,
            self.late_starts,
            self.dispatch_local,
            self.dispatch_global,
            self.dispatch_stolen,
            self.dispatch_other,
            self.steals_refused,
            self.lends
        )
    }
}

/// Nearest-rank percentile `p` (0..=100) of an ascending slice; 0 if empty.
pub fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_match_the_bpf_histogram() {
        assert_eq!(bucket_of(0), 0);
        assert_eq!(bucket_of(999), 0);
        assert_eq!(bucket_of(1_000), 1);
        assert_eq!(bucket_of(7_999), 7);
        assert_eq!(bucket_of(8_000), 8);
        assert_eq!(bucket_of(8_999), 8);
        assert_eq!(bucket_of(9_000), 9);
        assert_eq!(bucket_of(16_000), 16); // the next power of two: [16, 18) us
        assert_eq!(bucket_range_ns(16), (16_000, 18_000));
        assert_eq!(bucket_of(u64::MAX), NR_BUCKETS - 1);
        // every bucket is contiguous with the next, at most 12.5 % wide
        for b in 0..NR_BUCKETS - 1 {
            let (lo, hi) = bucket_range_ns(b);
            assert_eq!(hi, bucket_range_ns(b + 1).0, "{b}");
            assert_eq!(bucket_of(lo), b);
            assert_eq!(bucket_of(hi - 1), b);
            assert!(lo < 8_000 || (hi - lo) * 8 <= lo, "{b}: {lo}..{hi}");
        }
    }

    /// The percentile a user reads is within the bucket width of the exact
    /// one: checked on generated samples (log-uniform 1 us .. 2 s, and a
    /// narrow cluster like a steady server) against exact nearest ranks.
    #[test]
    fn histogram_percentiles_are_within_the_error_bound() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut rand = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64
        };
        let sets: Vec<Vec<u64>> = vec![
            (0..20_000)
                .map(|_| (1_000.0 * 2f64.powf(rand() * 21.0)) as u64)
                .collect(),
            (0..5_000)
                .map(|_| 19_000_000 + (rand() * 3_000_000.0) as u64)
                .collect(),
        ];
        for mut samples in sets {
            let mut h = vec![0u64; NR_BUCKETS];
            for &v in &samples {
                h[bucket_of(v)] += 1;
            }
            samples.sort_unstable();
            for p in [1.0, 10.0, 50.0, 90.0, 99.0, 99.9] {
                let exact = percentile(&samples, p) as f64;
                let est = hist_percentile_ns(&h, p) as f64;
                let err = (est - exact).abs() / exact;
                assert!(
                    err <= 0.125,
                    "p{p}: exact {exact} est {est} ({:.1} %)",
                    err * 100.0
                );
            }
        }
    }

    #[test]
    fn starts_and_misses_are_counted_like_bpf_does() {
        let mut g = GroupCounters::default();
        assert!(!g.add_start(200_000));
        assert!(g.add_start(3_000_000));
        g.add_miss(5_000_000);
        assert_eq!((g.late_starts, g.misses), (1, 1));
        assert_eq!(
            (g.lateness_max_ns, g.lateness_sum_ns),
            (3_000_000, 3_200_000)
        );
        assert_eq!(g.lateness_hist.iter().sum::<u64>(), 2);
        assert_eq!(g.overshoot_hist[bucket_of(5_000_000)], 1);
        // 3 ms falls in [2816, 3072) us; a single value reads as mid-bucket
        assert_eq!(hist_percentile_ns(&g.lateness_hist, 99.0), 2_944_000);
    }

    #[test]
    fn histogram_percentiles_interpolate_inside_their_bucket() {
        let mut h = vec![0u64; NR_BUCKETS];
        assert_eq!(hist_percentile_ns(&h, 50.0), 0);
        h[0] = 50; // < 1 us
        h[5] = 49; // [5, 6) us
        h[bucket_of(1_500_000)] = 1;
        assert_eq!(hist_percentile_ns(&h, 50.0), 990); // the 50th of 50 in [0, 1) us
        assert_eq!(hist_percentile_ns(&h, 51.0), 5_010);
        let p100 = hist_percentile_ns(&h, 100.0);
        assert!((1_408_000..1_536_000).contains(&p100), "{p100}");
    }

    #[test]
    fn group_delta_keeps_maxima_and_subtracts_histograms() {
        let mut a = GroupCounters {
            ticks: 10,
            lateness_max_ns: 5,
            ..Default::default()
        };
        a.lateness_hist[2] = 4;
        let mut b = a.clone();
        b.ticks = 25;
        b.misses = 2;
        b.lateness_max_ns = 9;
        b.lateness_hist[2] = 7;
        let d = b.delta(&a);
        assert_eq!(
            (d.ticks, d.misses, d.lateness_max_ns, d.lateness_hist[2]),
            (15, 2, 9, 3)
        );
        let m = GroupMetrics::new(&b, &d, 1.5);
        assert_eq!(m.ticks_per_s, 10.0);
        assert!((m.interval_miss_pct - 100.0 * 2.0 / 15.0).abs() < 1e-9);
        assert!(
            m.line("world")
                .starts_with("world:   10.0 ticks/s  misses    2")
        );
    }

    #[test]
    fn openmetrics_text_is_well_formed() {
        let mut m = Metrics::default();
        let mut total = GroupCounters {
            ticks: 100,
            misses: 3,
            lateness_sum_ns: 200_000,
            ..Default::default()
        };
        total.lateness_hist[0] = 90;
        total.lateness_hist[12] = 10; // [12, 14) us
        m.groups
            .insert("world".into(), GroupMetrics::new(&total, &total, 1.0));
        let text = m.openmetrics();
        assert!(text.ends_with("# EOF\n"));
        assert!(text.contains("scx_tick_ticks_total{group=\"world\"} 100"));
        assert!(text.contains("scx_tick_deadline_misses_total{group=\"world\"} 3"));
        assert!(text.contains("scx_tick_steals_refused_total 0"));
        assert!(text.contains("scx_tick_lends_total 0"));
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
    fn nearest_rank_percentiles() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 50.0), 50);
        assert_eq!(percentile(&v, 99.0), 99);
        assert_eq!(percentile(&v, 100.0), 100);
        assert_eq!(percentile(&v, 0.0), 1);
        assert_eq!(percentile(&[7], 99.0), 7);
        assert_eq!(percentile(&[], 50.0), 0);
        assert_eq!(percentile(&[1, 2, 3, 4], 50.0), 2);
    }

    #[test]
    fn delta_and_miss_pct() {
        let a = Counters {
            ticks: 100,
            misses: 5,
            ..Default::default()
        };
        let b = Counters {
            ticks: 300,
            misses: 7,
            ..Default::default()
        };
        let d = b.delta(&a);
        assert_eq!((d.ticks, d.misses), (200, 2));
        assert!((d.miss_pct() - 1.0).abs() < 1e-9);
        assert_eq!(Counters::default().miss_pct(), 0.0);
        assert!(d.summary().starts_with("ticks=200 misses=2 "));
    }
}

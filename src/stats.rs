//! Statistics: counters and histograms read from the BPF side, the live
//! view, and the scx_stats metrics (JSON, `--monitor`, what OpenMetrics shows).

use std::collections::BTreeMap;

use scx_stats_derive::Stats;
use serde::{Deserialize, Serialize};

use crate::bpf::intf::{cpu_stats, group_stats, tick_consts_NR_HIST_BUCKETS};

pub const NR_BUCKETS: usize = tick_consts_NR_HIST_BUCKETS as usize;

const SUB_BITS: u32 = crate::bpf::intf::tick_consts_HIST_SUB_BITS;
/// Histogram buckets per power of two.
pub const SUB: u64 = 1 << SUB_BITS;

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

/// The counted statistics, declared once. A line names a field of
/// `struct cpu_stats` or `struct group_stats` (bpf/intf.h) and says what it
/// counts; for a group counter also its OpenMetrics name. From this table
/// come the Rust mirrors (`Counters`, `GroupCounters`) with their sum and
/// delta, the exit summary's key=value list, the cumulative fields of
/// `Metrics` and `GroupMetrics` (JSON, `--monitor`, `--help-stats`) and the
/// OpenMetrics counters `scx_tick_<name>_total`. A new statistic is one line
/// here, its field in bpf/intf.h and its increment in BPF.
macro_rules! statistics {
    (
        cpu_totals_only { $($t:ident: $tdesc:tt,)* }
        cpu { $($c:ident: $cdesc:tt,)* }
        group { $($g:ident as $gom:ident: $gdesc:tt,)* }
    ) => {
        /// Totals over CPUs of `struct cpu_stats`.
        #[derive(Debug, Clone, Copy, Default, PartialEq)]
        pub struct Counters {
            $(#[doc = $tdesc] pub $t: u64,)*
            $(#[doc = $cdesc] pub $c: u64,)*
        }

        impl Counters {
            fn of(s: &cpu_stats) -> Counters {
                Counters { $($t: s.$t,)* $($c: s.$c,)* }
            }

            pub fn add(&mut self, o: &Counters) {
                $(self.$t += o.$t;)*
                $(self.$c += o.$c;)*
            }

            /// Counts since `prev` (counters only grow while attached).
            pub fn delta(&self, prev: &Counters) -> Counters {
                Counters {
                    $($t: self.$t.saturating_sub(prev.$t),)*
                    $($c: self.$c.saturating_sub(prev.$c),)*
                }
            }

            /// Every counter by name, in declaration order.
            pub fn fields(&self) -> Vec<(&'static str, u64)> {
                vec![$((stringify!($t), self.$t),)* $((stringify!($c), self.$c),)*]
            }
        }

        /// One tick group's counters, summed over CPUs.
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct GroupCounters {
            $(#[doc = $gdesc] pub $g: u64,)*
            /// Time from a runner's wake-up to its first CPU.
            pub lateness: Dist,
            /// How far a missed tick ran past its deadline.
            pub overshoot: Dist,
        }

        impl GroupCounters {
            pub fn add_cpu(&mut self, s: &group_stats) {
                $(self.$g += s.$g;)*
                self.lateness.merge(s.lateness_max_ns, s.lateness_sum_ns, &s.lateness_hist);
                self.overshoot.merge(s.overshoot_max_ns, s.overshoot_sum_ns, &s.overshoot_hist);
            }

            /// What happened since `prev`; maxima stay cumulative.
            pub fn delta(&self, prev: &GroupCounters) -> GroupCounters {
                GroupCounters {
                    $($g: self.$g.saturating_sub(prev.$g),)*
                    lateness: self.lateness.delta(&prev.lateness),
                    overshoot: self.overshoot.delta(&prev.overshoot),
                }
            }
        }

        /// One tick group in the metrics: cumulative counters plus the last interval.
        #[derive(Clone, Debug, Default, Serialize, Deserialize, Stats)]
        #[stat(desc = "tick group statistics", _om_prefix = "g_", _om_label = "group")]
        pub struct GroupMetrics {
            $(#[stat(desc = $gdesc)] pub $g: u64,)*
            #[stat(desc = "ticks per second over the last interval")]
            pub ticks_per_s: f64,
            #[stat(desc = "runner threads in the group now (its cgroups' threads; 0 in the userspace mode, which does not count them)")]
            pub runners: u64,
            #[stat(desc = "deadline misses in the last interval")]
            pub interval_misses: u64,
            #[stat(desc = "deadline misses in % of the ticks of the last interval")]
            pub interval_miss_pct: f64,
            #[stat(desc = "median start lateness of the last interval, us (interpolated in its bucket)")]
            pub lateness_p50_us: f64,
            #[stat(desc = "99th percentile start lateness of the last interval, us (interpolated in its bucket)")]
            pub lateness_p99_us: f64,
            #[stat(desc = "largest start lateness so far, us")]
            pub lateness_max_us: f64,
            #[stat(desc = "largest deadline overshoot so far, us")]
            pub overshoot_max_us: f64,
            #[stat(desc = "start lateness histogram (log-linear us buckets, 8 per power of two), cumulative", _om_skip)]
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub lateness_hist: Vec<u64>,
            #[stat(desc = "deadline overshoot histogram (log-linear us buckets, 8 per power of two), cumulative", _om_skip)]
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub overshoot_hist: Vec<u64>,
            #[stat(desc = "sum of start lateness, us, cumulative", _om_skip)]
            pub lateness_sum_us: f64,
            #[stat(desc = "sum of overshoot, us, cumulative", _om_skip)]
            pub overshoot_sum_us: f64,
        }

        impl GroupMetrics {
            pub fn new(total: &GroupCounters, interval: &GroupCounters, secs: f64) -> GroupMetrics {
                GroupMetrics {
                    $($g: total.$g,)*
                    ticks_per_s: interval.ticks as f64 / secs.max(1e-9),
                    runners: 0,
                    interval_misses: interval.misses,
                    interval_miss_pct: pct(interval.misses, interval.ticks),
                    lateness_p50_us: us(interval.lateness.percentile_ns(50.0)),
                    lateness_p99_us: us(interval.lateness.percentile_ns(99.0)),
                    lateness_max_us: us(total.lateness.max_ns),
                    overshoot_max_us: us(total.overshoot.max_ns),
                    lateness_hist: total.lateness.hist.clone(),
                    overshoot_hist: total.overshoot.hist.clone(),
                    lateness_sum_us: us(total.lateness.sum_ns),
                    overshoot_sum_us: us(total.overshoot.sum_ns),
                }
            }

            /// OpenMetrics name, help and value of every group counter.
            pub fn counters(&self) -> [(&'static str, &'static str, u64); [$(stringify!($g)),*].len()] {
                [$((stringify!($gom), $gdesc, self.$g)),*]
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
            #[stat(desc = "times scx_tick re-attached at the kernel's request (CPU hotplug), cumulative")]
            #[serde(default)]
            pub restarts: u64,
            $(#[stat(desc = $cdesc)] pub $c: u64,)*
            #[stat(desc = "per tick group")]
            pub groups: BTreeMap<String, GroupMetrics>,
        }

        impl Metrics {
            /// A sample of the cumulative counters `cpu`, without groups yet.
            pub fn new(timestamp_s: f64, uptime_s: f64, interval_s: f64, cpu: &Counters) -> Metrics {
                Metrics {
                    timestamp_s,
                    uptime_s,
                    interval_s,
                    restarts: 0,
                    $($c: cpu.$c,)*
                    groups: BTreeMap::new(),
                }
            }

            /// OpenMetrics name, help and value of every machine-wide counter.
            pub fn counters(&self) -> [(&'static str, &'static str, u64); [$(stringify!($c)),*].len()] {
                [$((stringify!($c), $cdesc, self.$c)),*]
            }
        }
    };
}

statistics! {
    cpu_totals_only {
        ticks: "ticks started (wake-ups, and grid starts of runners that did not sleep)",
        misses: "deadline misses, once per tick",
        late_starts: "ticks that started 1 ms or more late",
    }
    cpu {
        dispatch_local: "runners taken from their home CPU's EDF queue, cumulative",
        dispatch_global: "runners taken from the global EDF queue, cumulative",
        dispatch_stolen: "runners stolen from another tick CPU, cumulative",
        dispatch_other: "other tasks dispatched from the fair queue, cumulative",
        steals_refused: "steal candidates below the threshold, cumulative",
        lends: "times a tick CPU ran other work while its runners slept, cumulative",
    }
    group {
        ticks as ticks: "ticks started (runner wake-ups), cumulative",
        misses as deadline_misses: "deadline misses, once per tick, cumulative",
        late_starts as late_starts: "ticks that started 1 ms or more late, cumulative",
        steals as steals: "ticks stolen by another tick CPU, cumulative",
        hints_used as deadline_hints_used: "ticks whose deadline came from a deadline hint, cumulative",
        hints_ignored as deadline_hints_ignored: "deadline hints ignored as stale or absurd, cumulative",
    }
}

/// A tick group's start lateness or deadline overshoot: its largest value,
/// sum and log-linear histogram, in ns.
#[derive(Debug, Clone, PartialEq)]
pub struct Dist {
    pub max_ns: u64,
    pub sum_ns: u64,
    pub hist: Vec<u64>,
}

impl Default for Dist {
    fn default() -> Self {
        Dist {
            max_ns: 0,
            sum_ns: 0,
            hist: vec![0; NR_BUCKETS],
        }
    }
}

impl Dist {
    /// One value, as BPF's `account_start()`/`account_miss()` counts it.
    pub fn add(&mut self, ns: u64) {
        self.hist[bucket_of(ns)] += 1;
        self.sum_ns += ns;
        self.max_ns = self.max_ns.max(ns);
    }

    fn merge(&mut self, max_ns: u64, sum_ns: u64, hist: &[u64]) {
        self.max_ns = self.max_ns.max(max_ns);
        self.sum_ns += sum_ns;
        for (h, n) in self.hist.iter_mut().zip(hist) {
            *h += n;
        }
    }

    /// Since `prev`; the maximum stays cumulative.
    fn delta(&self, prev: &Dist) -> Dist {
        Dist {
            max_ns: self.max_ns,
            sum_ns: self.sum_ns.saturating_sub(prev.sum_ns),
            hist: (self.hist.iter().zip(&prev.hist))
                .map(|(x, y)| x.saturating_sub(*y))
                .collect(),
        }
    }

    /// Percentile `p`, interpolated in its bucket; a bucket bound can exceed
    /// the exact maximum, so never more than that.
    pub fn percentile_ns(&self, p: f64) -> u64 {
        hist_percentile_ns(&self.hist, p).min(self.max_ns)
    }
}

impl GroupCounters {
    /// A tick's first start, `lateness_ns` after its wake, as BPF's
    /// `account_start()` counts it (the userspace mode's bookkeeping).
    /// Returns whether it was a late start.
    pub fn add_start(&mut self, lateness_ns: u64) -> bool {
        let late = lateness_ns >= crate::bpf::intf::tick_consts_LATE_START_NS as u64;
        self.late_starts += late as u64;
        self.lateness.add(lateness_ns);
        late
    }

    /// A deadline missed by `over_ns`, as BPF's `account_miss()` counts it.
    pub fn add_miss(&mut self, over_ns: u64) {
        self.misses += 1;
        self.overshoot.add(over_ns);
    }

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
    pub fn sum(per_cpu: impl Iterator<Item = cpu_stats>) -> Counters {
        let mut c = Counters::default();
        for s in per_cpu {
            c.add(&Counters::of(&s));
        }
        c
    }

    pub fn miss_pct(&self) -> f64 {
        pct(self.misses, self.ticks)
    }

    /// key=value totals, printed on exit (tests parse this).
    pub fn summary(&self) -> String {
        let kv: Vec<String> = (self.fields().iter())
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        kv.join(" ")
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
    fn the_docs_give_the_histograms_length() {
        let doc = include_str!("../docs/stats.md");
        let want = format!("int[{NR_BUCKETS}]");
        assert!(doc.contains(&want), "docs/stats.md does not say {want}");
    }

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
            (g.lateness.max_ns, g.lateness.sum_ns),
            (3_000_000, 3_200_000)
        );
        assert_eq!(g.lateness.hist.iter().sum::<u64>(), 2);
        assert_eq!(g.overshoot.hist[bucket_of(5_000_000)], 1);
        // 3 ms falls in [2816, 3072) us; a single value reads as mid-bucket
        assert_eq!(hist_percentile_ns(&g.lateness.hist, 99.0), 2_944_000);
        // ... but is never shown above the exact maximum
        let mut one = GroupCounters::default();
        one.add_start(2_820_000);
        assert_eq!(one.lateness.percentile_ns(50.0), 2_820_000);
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
            ..Default::default()
        };
        a.lateness.max_ns = 5;
        a.lateness.hist[2] = 4;
        let mut b = a.clone();
        b.ticks = 25;
        b.misses = 2;
        b.lateness.max_ns = 9;
        b.lateness.hist[2] = 7;
        let d = b.delta(&a);
        assert_eq!(
            (d.ticks, d.misses, d.lateness.max_ns, d.lateness.hist[2]),
            (15, 2, 9, 3)
        );
        let m = GroupMetrics::new(&b, &d, 1.5);
        assert_eq!(m.ticks_per_s, 10.0);
        assert!((m.interval_miss_pct - 100.0 * 2.0 / 15.0).abs() < 1e-9);
        assert!(
            m.line("world")
                .starts_with("world:   0 runners   10.0 ticks/s  misses    2")
        );
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

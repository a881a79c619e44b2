//! Statistics, declared once: the counters read from the BPF side (summed
//! over CPUs, with their deltas) and the metrics every output shows
//! (JSON, `--monitor`, OpenMetrics).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use scx_stats_derive::Stats;
use serde::{Deserialize, Serialize};

use crate::bpf::intf::{cpu_stats, group_stats};
use crate::model::histogram::Dist;

/// The latest metrics, shared with the server threads.
pub type Shared = Arc<Mutex<Metrics>>;

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
        /// Totals over CPUs of `struct cpu_stats`, and (`cpu_totals_only`)
        /// of the tick groups' `struct group_stats`.
        #[derive(Debug, Clone, Copy, Default, PartialEq)]
        pub struct Counters {
            $(#[doc = $tdesc] pub $t: u64,)*
            $(#[doc = $cdesc] pub $c: u64,)*
        }

        impl Counters {
            /// One CPU's counters; its ticks, misses and late starts come
            /// from its group counters (`add_group`).
            pub fn of(s: &cpu_stats) -> Counters {
                Counters { $($t: 0,)* $($c: s.$c,)* }
            }

            /// A tick group's counts on this CPU.
            pub fn add_group(&mut self, s: &group_stats) {
                $(self.$t += s.$t;)*
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
            #[stat(desc = "\"interval\": one interval's sample; \"exit\": the last line, written as scx_tick exits, whose interval is the whole run (scripts read the totals there)")]
            #[serde(default)]
            pub sample: String,
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
                    sample: "interval".into(),
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
        dispatch_other: "other tasks dispatched from a fair queue (one per LLC), cumulative",
        other_far: "of dispatch_other, those taken from another LLC's fair queue, cumulative",
        other_local: "of dispatch_other, those that last ran on the CPU taking them, taken ahead of the queue's head, cumulative",
        other_probes: "other LLCs' fair queues looked at for them, cumulative (at most 8 per dispatch, none while the own queue's head is fresh)",
        other_started: "other tasks started on a CPU, from any queue, cumulative",
        other_beside_runner: "of other_started, those on an SMT thread whose core's other thread ran a runner, cumulative",
        steals_refused: "steal candidates below the threshold, cumulative",
        lends: "times a tick CPU ran other work while its runners slept, cumulative",
        decisions: "scheduling decisions that may look at other CPUs (polls, runner placements, steal-timer expiries), cumulative",
        probes: "other CPUs and queues those decisions looked at, cumulative (bounded per decision: probes / decisions stays small on any machine)",
        moves_llc: "runners started away from their home CPU, in its last-level cache, cumulative",
        moves_node: "runners started away from their home CPU, in another cache of its NUMA node, cumulative",
        moves_far: "runners started away from their home CPU, on another NUMA node, cumulative",
        moves_far_near_free: "of moves_far, those made while a CPU of the home's node was idle, cumulative",
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
}

pub(super) fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

pub(super) fn us(ns: u64) -> f64 {
    ns as f64 / 1e3
}

impl Counters {
    pub fn miss_pct(&self) -> f64 {
        pct(self.misses, self.ticks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::histogram::{bucket_of, hist_percentile_ns};

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

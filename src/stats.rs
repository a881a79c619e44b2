//! Counters read from the BPF side, and their formatting.

use std::time::Duration;

use crate::bpf::intf::cpu_stats;

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

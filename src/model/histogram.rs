//! Log-linear histograms as the BPF side keeps them (bpf/intf.h): bucket
//! bounds, the bucket of a value, percentiles read from the buckets, and a
//! tick group's distribution ([`Dist`]); and nearest-rank percentiles of
//! exact samples.

use crate::bpf::intf::tick_consts_NR_HIST_BUCKETS;

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

/// The histogram bucket of `ns`: `hist_bucket()` in bpf/stats.bpf.c.
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

    pub(crate) fn merge(&mut self, max_ns: u64, sum_ns: u64, hist: &[u64]) {
        self.max_ns = self.max_ns.max(max_ns);
        self.sum_ns += sum_ns;
        for (h, n) in self.hist.iter_mut().zip(hist) {
            *h += n;
        }
    }

    /// Since `prev`; the maximum stays cumulative.
    pub(crate) fn delta(&self, prev: &Dist) -> Dist {
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
        let doc = include_str!("../../docs/stats.md");
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
}

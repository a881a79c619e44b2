//! The tick workload's pure parts (used by the `tickload` binary): how much
//! work each tick does (a seeded, reproducible distribution with jitter and
//! spikes) and what a run's tick log adds up to (misses, start lateness
//! percentiles, MSPT, TPS). No clocks or threads here, so all of it is
//! unit-tested on any host.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use scx_tick::model::histogram::percentile;

/// `clock`'s current time in ns (CLOCK_MONOTONIC: what deadlines use).
pub fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid pointer to a timespec.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// xorshift64*: tiny, fast and good enough to draw work times; the same seed
/// always gives the same sequence, so two schedulers see the same ticks.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        // splitmix64 of the seed: neighbouring seeds (runner 0, 1, ...) give
        // unrelated streams, and the state is never 0 (xorshift's fixed point).
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Rng((z ^ (z >> 31)) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// CPU time of one tick: `work` ± `jitter` (uniform), replaced by `spike`
/// with probability `spike_prob` (a chunk load, a big explosion).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WorkDist {
    pub work_ns: u64,
    pub jitter_ns: u64,
    pub spike_ns: u64,
    pub spike_prob: f64,
}

impl WorkDist {
    pub fn fixed(work_ns: u64) -> Self {
        WorkDist {
            work_ns,
            jitter_ns: 0,
            spike_ns: 0,
            spike_prob: 0.0,
        }
    }

    /// Refuse distributions that make no sense, naming the flag.
    pub fn validate(&self) -> Result<(), String> {
        if self.jitter_ns > self.work_ns {
            return Err(format!(
                "--jitter-ms ({} ms) must not exceed --work-ms ({} ms): work cannot be negative",
                ms(self.jitter_ns),
                ms(self.work_ns)
            ));
        }
        if !(0.0..=1.0).contains(&self.spike_prob) {
            return Err(format!(
                "--spike-pct ({}) must be between 0 and 100",
                self.spike_prob * 100.0
            ));
        }
        if self.spike_prob > 0.0 && self.spike_ns == 0 {
            return Err("--spike-pct needs --spike-ms above 0".into());
        }
        Ok(())
    }

    /// The longest a tick's work can be without a spike.
    pub fn max_regular_ns(&self) -> u64 {
        self.work_ns + self.jitter_ns
    }

    pub fn sample(&self, rng: &mut Rng) -> u64 {
        // Always draw both numbers, so enabling spikes does not shift the
        // jitter sequence of the ticks that do not spike.
        let j = rng.next_f64();
        let s = rng.next_f64();
        if s < self.spike_prob {
            return self.spike_ns;
        }
        let offset = ((2.0 * j - 1.0) * self.jitter_ns as f64).round() as i64;
        (self.work_ns as i64 + offset).max(0) as u64
    }
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// What one tick did, as the runner saw it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tick {
    /// When the tick was due (the absolute next-tick time).
    pub due_ns: u64,
    /// When the runner was back on a CPU after its sleep.
    pub begin_ns: u64,
    /// When its work was done.
    pub end_ns: u64,
    /// The longest wall-clock gap between two progress stamps of its work:
    /// how long the runner waited for a CPU in the middle of a tick.
    pub stall_ns: u64,
}

impl Tick {
    /// Start lateness: how long after its due time the tick started.
    pub fn lateness_ns(&self) -> u64 {
        self.begin_ns.saturating_sub(self.due_ns)
    }
    /// Milliseconds per tick: the wall time the tick's work took.
    pub fn mspt_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.begin_ns)
    }
    /// A deadline miss: the work ended after due time + relative deadline.
    pub fn missed(&self, deadline_ns: u64) -> bool {
        self.end_ns > self.due_ns + deadline_ns
    }
}

/// The statistics of a set of ticks (one runner's, or all runners' pooled).
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Summary {
    pub ticks: u64,
    pub misses: u64,
    pub miss_pct: f64,
    pub lateness_p50_ms: f64,
    pub lateness_p99_ms: f64,
    pub lateness_max_ms: f64,
    pub mspt_mean_ms: f64,
    pub mspt_p99_ms: f64,
    /// The longest a runner waited for a CPU in the middle of a tick (a
    /// stall probe seen from the workload's side).
    pub stall_max_ms: f64,
    /// Ticks per second of wall time, per runner (a 20 TPS server that
    /// keeps up shows 20 however many runners it has).
    pub tps: f64,
}

/// Summarise `ticks` of `runners` runners over `duration_ns` of wall time.
pub fn summarize(ticks: &[Tick], deadline_ns: u64, runners: usize, duration_ns: u64) -> Summary {
    let n = ticks.len() as u64;
    let misses = ticks.iter().filter(|t| t.missed(deadline_ns)).count() as u64;
    let mut late: Vec<u64> = ticks.iter().map(Tick::lateness_ns).collect();
    let mut mspt: Vec<u64> = ticks.iter().map(Tick::mspt_ns).collect();
    late.sort_unstable();
    mspt.sort_unstable();
    let secs = duration_ns as f64 / 1e9;
    Summary {
        ticks: n,
        misses,
        miss_pct: if n > 0 {
            100.0 * misses as f64 / n as f64
        } else {
            0.0
        },
        lateness_p50_ms: ms(percentile(&late, 50.0)),
        lateness_p99_ms: ms(percentile(&late, 99.0)),
        lateness_max_ms: ms(late.last().copied().unwrap_or(0)),
        mspt_mean_ms: if n > 0 {
            ms(mspt.iter().sum::<u64>()) / n as f64
        } else {
            0.0
        },
        mspt_p99_ms: ms(percentile(&mspt, 99.0)),
        stall_max_ms: ms(ticks.iter().map(|t| t.stall_ns).max().unwrap_or(0)),
        tps: if secs > 0.0 && runners > 0 {
            n as f64 / secs / runners as f64
        } else {
            0.0
        },
    }
}

/// The ticks of all runners as one process's steps (scx_tick's `tick =
/// "process"`): a step is a due time, missed if any runner's tick due then
/// missed. Returns (steps, missed steps).
pub fn steps(ticks: &[Tick], deadline_ns: u64) -> (u64, u64) {
    let mut due: BTreeMap<u64, bool> = BTreeMap::new();
    for t in ticks {
        *due.entry(t.due_ns).or_default() |= t.missed(deadline_ns);
    }
    (
        due.len() as u64,
        due.values().filter(|&&m| m).count() as u64,
    )
}

/// The start-lateness distribution as 101 quantiles in ms (p0, p1, ...,
/// p100): enough to draw it, small enough to ship in a JSON line.
pub fn lateness_quantiles_ms(ticks: &[Tick]) -> Vec<f64> {
    let mut late: Vec<u64> = ticks.iter().map(Tick::lateness_ns).collect();
    late.sort_unstable();
    if late.is_empty() {
        return Vec::new();
    }
    (0..=100)
        .map(|p| {
            if p == 0 {
                ms(late[0])
            } else {
                ms(percentile(&late, p as f64))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn tick(due: u64, begin: u64, end: u64) -> Tick {
        Tick {
            due_ns: due * MS,
            begin_ns: begin * MS,
            end_ns: end * MS,
            stall_ns: 0,
        }
    }

    #[test]
    fn a_step_is_missed_when_any_runner_misses_it() {
        // two runners, three due times; one runner late at 100, both at 150
        let t = [
            tick(50, 50, 60),
            tick(50, 51, 70),
            tick(100, 100, 110),
            tick(100, 120, 160),
            tick(150, 190, 210),
            tick(150, 195, 220),
        ];
        assert_eq!(steps(&t, 50 * MS), (3, 2));
    }

    #[test]
    fn rng_is_deterministic_and_seeds_differ() {
        let a: Vec<u64> = (0..5)
            .scan(Rng::new(7), |r, _| Some(r.next_u64()))
            .collect();
        let b: Vec<u64> = (0..5)
            .scan(Rng::new(7), |r, _| Some(r.next_u64()))
            .collect();
        let c: Vec<u64> = (0..5)
            .scan(Rng::new(8), |r, _| Some(r.next_u64()))
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        // seed 0 must not get stuck at xorshift's fixed point
        let mut z = Rng::new(0);
        assert!((0..10).map(|_| z.next_u64()).any(|x| x != 0));
    }

    #[test]
    fn rng_f64_is_uniform_enough() {
        let mut r = Rng::new(1);
        let n = 100_000;
        let xs: Vec<f64> = (0..n).map(|_| r.next_f64()).collect();
        assert!(xs.iter().all(|x| (0.0..1.0).contains(x)));
        let mean = xs.iter().sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 0.01, "mean {mean}");
        let below_tenth = xs.iter().filter(|&&x| x < 0.1).count() as f64 / n as f64;
        assert!((below_tenth - 0.1).abs() < 0.01, "P(x<0.1) = {below_tenth}");
    }

    #[test]
    fn fixed_work_is_exact() {
        let d = WorkDist::fixed(8 * MS);
        let mut r = Rng::new(3);
        assert!((0..1000).all(|_| d.sample(&mut r) == 8 * MS));
    }

    #[test]
    fn jitter_stays_in_range_and_averages_to_work() {
        let d = WorkDist {
            work_ns: 8 * MS,
            jitter_ns: 2 * MS,
            ..WorkDist::fixed(0)
        };
        let mut r = Rng::new(42);
        let xs: Vec<u64> = (0..20_000).map(|_| d.sample(&mut r)).collect();
        assert!(xs.iter().all(|&x| (6 * MS..=10 * MS).contains(&x)));
        let mean = xs.iter().sum::<u64>() as f64 / xs.len() as f64;
        assert!((mean - 8e6).abs() < 0.05e6, "mean {mean}");
        assert!(xs.iter().any(|&x| x < 6_500_000) && xs.iter().any(|&x| x > 9_500_000));
    }

    #[test]
    fn spikes_come_at_the_given_rate() {
        let d = WorkDist {
            work_ns: 8 * MS,
            jitter_ns: 0,
            spike_ns: 40 * MS,
            spike_prob: 0.01,
        };
        let mut r = Rng::new(9);
        let n = 100_000;
        let spikes = (0..n).filter(|_| d.sample(&mut r) == 40 * MS).count();
        assert!((800..1200).contains(&spikes), "{spikes} spikes in {n}");
    }

    #[test]
    fn bad_distributions_are_refused_naming_the_flag() {
        let mut d = WorkDist {
            work_ns: MS,
            jitter_ns: 2 * MS,
            ..WorkDist::fixed(0)
        };
        assert!(d.validate().unwrap_err().contains("--jitter-ms"));
        d.jitter_ns = 0;
        d.spike_prob = 1.5;
        assert!(d.validate().unwrap_err().contains("--spike-pct"));
        d.spike_prob = 0.1;
        assert!(d.validate().unwrap_err().contains("--spike-ms"));
        d.spike_ns = 5 * MS;
        assert!(d.validate().is_ok());
    }

    #[test]
    fn misses_lateness_and_mspt() {
        // deadline 20 ms: the second tick ends at 125 > 100 + 20
        let ticks = [tick(50, 51, 60), tick(100, 110, 125), tick(150, 150, 170)];
        let s = summarize(&ticks, 20 * MS, 1, 150 * MS);
        assert_eq!(s.ticks, 3);
        assert_eq!(s.misses, 1);
        assert!((s.miss_pct - 100.0 / 3.0).abs() < 1e-9);
        assert_eq!(s.lateness_p50_ms, 1.0);
        assert_eq!(s.lateness_max_ms, 10.0);
        assert_eq!(s.lateness_p99_ms, 10.0);
        assert!((s.mspt_mean_ms - (9.0 + 15.0 + 20.0) / 3.0).abs() < 1e-9);
        assert_eq!(s.mspt_p99_ms, 20.0);
        assert!((s.tps - 20.0).abs() < 1e-9);
    }

    #[test]
    fn ending_exactly_at_the_deadline_is_no_miss() {
        assert!(!tick(0, 0, 20).missed(20 * MS));
        assert!(tick(0, 0, 21).missed(20 * MS));
    }

    #[test]
    fn tps_is_per_runner() {
        let ticks: Vec<Tick> = (0..40).map(|k| tick(k * 50, k * 50, k * 50 + 1)).collect();
        // 40 ticks of 2 runners in one second: each runner ticked 20 times
        let s = summarize(&ticks, 50 * MS, 2, 1000 * MS);
        assert!((s.tps - 20.0).abs() < 1e-9);
    }

    #[test]
    fn empty_runs_summarise_to_zeros() {
        let s = summarize(&[], MS, 1, MS);
        assert_eq!(s, Summary::default());
        assert!(lateness_quantiles_ms(&[]).is_empty());
    }

    #[test]
    fn quantiles_are_monotonic_and_end_at_min_and_max() {
        let ticks: Vec<Tick> = (0..1000u64)
            .map(|k| Tick {
                due_ns: 0,
                begin_ns: (k * 7919) % 1000 * 1000,
                end_ns: 2_000_000,
                stall_ns: 0,
            })
            .collect();
        let q = lateness_quantiles_ms(&ticks);
        assert_eq!(q.len(), 101);
        assert_eq!(q[0], 0.0);
        assert_eq!(q[100], 0.999);
        assert!(q.windows(2).all(|w| w[0] <= w[1]));
        assert!((q[50] - 0.499).abs() < 1e-9);
    }
}

//! The tick-group EDF decided in userspace. Pure: no BPF, no clock, no
//! /proc; the scheduler loop (`sched.rs`) feeds it events and carries out
//! what it returns, host tests drive it directly.
//!
//! Runners wait here in one EDF queue per tick CPU (their home) and one
//! global queue (no home CPU allowed), as in the BPF policy. A tick CPU is
//! free when the runner last sent to it has left it; every free tick CPU is
//! then polled with `scx_tick::model::dispatch::poll`, the same local/global/steal
//! order the BPF code mirrors, and the runner it picks is sent to that CPU.
//! So a runner waits for a busy home CPU in userspace, where an idle tick
//! CPU can still steal it once it is late by more than the threshold.

use std::collections::{BTreeMap, HashMap};

use scx_tick::breakages::SCX_TICK_BREAK_USER_NOMISS;
use scx_tick::model::dispatch::{self, Head, Pick};

pub type Pid = i32;

/// A runnable tick runner as rustland hands it over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Runner {
    pub pid: Pid,
    /// rustland's enqueue counter: a dispatch carrying an older one is dropped.
    pub enq_cnt: u64,
    pub flags: u64,
    pub deadline: u64,
    pub wake_at: u64,
}

/// How a runner was picked; the names of the BPF counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    Local,
    Global,
    Stolen,
}

/// Send `runner` to tick CPU `cpu_idx` (an index into the tick CPUs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Send {
    pub runner: Runner,
    pub cpu_idx: usize,
    pub how: How,
}

/// EDF key: deadline, then arrival order.
type Key = (u64, u64);

pub struct EdfQueues {
    policy: dispatch::Policy,
    local: Vec<BTreeMap<Key, Runner>>,
    global: BTreeMap<Key, Runner>,
    /// The runner last sent to each tick CPU, until it is seen to leave it.
    inflight: Vec<Option<Pid>>,
    steal_rr: Vec<u32>,
    /// Where each waiting runner is (home index, None = global) and its key.
    index: HashMap<Pid, (Option<usize>, Key)>,
    seq: u64,
    pub steals_refused: u64,
}

impl Runner {
    /// What a poll sees of this runner at a queue's head.
    fn head(&self) -> Head {
        Head {
            deadline: self.deadline,
            tick_start: self.wake_at,
            // this mode does not predict: a head is stealable by lateness alone
            ahead: 0,
        }
    }
}

fn head(q: &BTreeMap<Key, Runner>) -> Option<Head> {
    q.first_key_value().map(|(_, r)| r.head())
}

impl EdfQueues {
    pub fn new(nr_tick_cpus: usize, policy: dispatch::Policy) -> EdfQueues {
        EdfQueues {
            policy,
            local: vec![BTreeMap::new(); nr_tick_cpus],
            global: BTreeMap::new(),
            inflight: vec![None; nr_tick_cpus],
            steal_rr: vec![0; nr_tick_cpus],
            index: HashMap::new(),
            seq: 0,
            steals_refused: 0,
        }
    }

    /// Runners waiting here (what rustland is told is still pending).
    pub fn held(&self) -> usize {
        self.index.len()
    }

    /// Is anything sent to tick CPU `i` still believed to be on it?
    pub fn busy(&self, i: usize) -> bool {
        self.inflight[i].is_some()
    }

    /// Tick CPU `i` runs no runner of ours and none waits for it.
    pub fn free(&self, i: usize) -> bool {
        !self.busy(i) && self.local[i].is_empty()
    }

    /// Forget runners sent earlier that have left their CPU since.
    pub fn refresh(&mut self, on_cpu: &mut dyn FnMut(Pid) -> bool) {
        for slot in &mut self.inflight {
            if slot.is_some_and(|pid| !on_cpu(pid)) {
                *slot = None;
            }
        }
    }

    /// A runner became runnable (woke, or was preempted). Being enqueued
    /// means it is off its CPU; a newer enqueue replaces an older one.
    pub fn push(&mut self, home: Option<usize>, r: Runner) {
        self.left_cpu(r.pid);
        self.forget(r.pid);
        self.seq += 1;
        let key = (r.deadline, self.seq);
        match home {
            Some(i) => self.local[i].insert(key, r),
            None => self.global.insert(key, r),
        };
        self.index.insert(r.pid, (home, key));
    }

    /// Drop a waiting runner (it exited or was enqueued again).
    pub fn forget(&mut self, pid: Pid) {
        if let Some((home, key)) = self.index.remove(&pid) {
            match home {
                Some(i) => self.local[i].remove(&key),
                None => self.global.remove(&key),
            };
        }
    }

    /// `pid` is no longer on the tick CPU it was sent to.
    pub fn left_cpu(&mut self, pid: Pid) {
        for slot in &mut self.inflight {
            if *slot == Some(pid) {
                *slot = None;
            }
        }
    }

    /// Poll every free tick CPU once, in order. `on_cpu(pid)` tells whether
    /// a runner sent earlier is still runnable (then its CPU stays busy);
    /// `allowed(pid, i)` whether a runner may run on tick CPU i.
    pub fn poll(
        &mut self,
        now: u64,
        on_cpu: &mut dyn FnMut(Pid) -> bool,
        allowed: &dyn Fn(Pid, usize) -> bool,
    ) -> Vec<Send> {
        let mut sends = Vec::new();
        if self.index.is_empty() {
            return sends;
        }
        self.refresh(on_cpu);
        let nr = self.local.len();
        for me in 0..nr {
            if self.busy(me) {
                continue;
            }
            // Only a busy CPU's queue is a steal candidate (a free one
            // takes its own head in this round); each candidate head
            // looked at is stolen or refused.
            let looked = std::cell::Cell::new(0u64);
            let (local, inflight) = (&self.local, &self.inflight);
            let peek = |j: usize| {
                if j == me {
                    return head(&local[j]);
                }
                let (_, r) = local[j].first_key_value()?;
                if inflight[j].is_none() || !allowed(r.pid, me) {
                    return None;
                }
                looked.set(looked.get() + 1);
                Some(r.head())
            };
            // the global queue's first runner that may run here
            let global = self
                .global
                .iter()
                .find(|(_, r)| allowed(r.pid, me))
                .map(|(k, r)| (*k, *r));
            let pick = dispatch::poll(
                self.policy,
                now,
                me,
                nr,
                &mut self.steal_rr[me],
                dispatch::Search::flat(nr),
                global.map(|(_, r)| r.head()),
                &peek,
            );
            let stolen = matches!(pick, Pick::Steal(_)) as u64;
            self.steals_refused += looked.get() - stolen;
            let (runner, how) = match pick {
                Pick::Local => (self.local[me].pop_first().map(|(_, r)| r), How::Local),
                Pick::Steal(v) => (self.local[v].pop_first().map(|(_, r)| r), How::Stolen),
                Pick::Global => (
                    global.and_then(|(k, _)| self.global.remove(&k)),
                    How::Global,
                ),
                Pick::Nothing => continue,
            };
            let runner = runner.expect("poll picked an empty queue");
            self.index.remove(&runner.pid);
            self.inflight[me] = Some(runner.pid);
            sends.push(Send {
                runner,
                cpu_idx: me,
                how,
            });
            if self.index.is_empty() {
                break;
            }
        }
        sends
    }
}

/// What scx_tick learns about one runner from its enqueues.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunnerInfo {
    pub group: usize,
    pub home: usize,
    pub deadline: u64,
    pub wake_at: u64,
    /// Wake-to-wake interval, smoothed: predicts the next wake.
    pub interval: u64,
    /// When the current tick first got a CPU (seen once it is preempted).
    pub first_start: Option<u64>,
    /// The current tick began with a wake-up: a runner first seen while
    /// running (it was moved into the group) has no tick to count yet, as
    /// in BPF, where ticks start at wake-ups only.
    pub counted: bool,
}

impl RunnerInfo {
    pub fn next_wake(&self) -> Option<u64> {
        (self.interval > 0).then(|| self.wake_at + self.interval)
    }
}

/// Its last stint on a CPU, as rustland reports it with each enqueue
/// (start_ts, stop_ts), already in CLOCK_MONOTONIC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ran {
    pub start: u64,
    pub stop: u64,
}

/// A finished tick: it went to sleep at its last stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TickOutcome {
    pub group: usize,
    /// From its wake to its first start.
    pub lateness_ns: u64,
    /// By how much it ended after its deadline, if it did.
    pub overshoot_ns: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Enqueued {
    pub info: RunnerInfo,
    /// A new tick started with this enqueue.
    pub tick: bool,
    /// The tick this wake-up ended.
    pub closed: Option<TickOutcome>,
}

/// Tick runners by thread id: home CPU, current deadline, wake prediction.
#[derive(Default)]
pub struct Runners {
    pub by_pid: HashMap<Pid, RunnerInfo>,
}

impl Runners {
    /// An enqueue of runner `pid` of `group`. A `fresh` wake (it slept)
    /// ends the previous tick at `ran.stop` and starts a new one: deadline =
    /// now + the group's relative deadline. Otherwise (it was preempted
    /// mid-tick) the tick keeps its deadline. New runners get the
    /// least-loaded of `home_cpus` (indices into the tick CPUs).
    #[allow(clippy::too_many_arguments)]
    pub fn enqueue(
        &mut self,
        pid: Pid,
        group: usize,
        home_cpus: &[usize],
        rel_deadline: u64,
        fresh: bool,
        now: u64,
        ran: Option<Ran>,
    ) -> Enqueued {
        let known = self.by_pid.get(&pid).filter(|r| r.group == group).copied();
        let home = match known {
            Some(r) if home_cpus.contains(&r.home) => r.home,
            _ => self.least_loaded(home_cpus),
        };
        let mut info = known.unwrap_or(RunnerInfo {
            group,
            home,
            deadline: now + rel_deadline,
            wake_at: now,
            interval: 0,
            first_start: None,
            counted: false,
        });
        info.home = home;
        let mut closed = None;
        let tick = fresh;
        if let (Some(prev), Some(ran)) = (known, ran) {
            let start = prev.first_start.unwrap_or(ran.start);
            if fresh && prev.counted && ran.stop >= prev.wake_at {
                // a stint before this tick's wake is not this tick's
                closed = Some(TickOutcome {
                    group,
                    lateness_ns: start.saturating_sub(prev.wake_at),
                    overshoot_ns: ran
                        .stop
                        .checked_sub(prev.deadline)
                        .filter(|&o| o > 0 && !SCX_TICK_BREAK_USER_NOMISS),
                });
            } else if !fresh && ran.start >= prev.wake_at {
                info.first_start = Some(start);
            }
        }
        if tick {
            if known.is_some() {
                let gap = now.saturating_sub(info.wake_at);
                // ewma 1/4: follows a changed tick rate within a few ticks
                info.interval = if info.interval == 0 {
                    gap
                } else {
                    (3 * info.interval + gap) / 4
                };
            }
            info.wake_at = now;
            info.deadline = now + rel_deadline;
            info.first_start = None;
            info.counted = true;
        }
        self.by_pid.insert(pid, info);
        Enqueued { info, tick, closed }
    }

    fn least_loaded(&self, home_cpus: &[usize]) -> usize {
        let load = |c: usize| self.by_pid.values().filter(|r| r.home == c).count();
        scx_tick::run::pinning::least_loaded(home_cpus, load)
            .expect("a tick group has at least one home CPU")
    }

    /// The earliest predicted wake among runners homed on each tick CPU.
    pub fn next_wakes(&self, nr_tick_cpus: usize) -> Vec<Option<u64>> {
        let mut out = vec![None; nr_tick_cpus];
        for r in self.by_pid.values() {
            if let Some(w) = r.next_wake() {
                let slot: &mut Option<u64> = &mut out[r.home];
                *slot = Some(slot.map_or(w, |s: u64| s.min(w)));
            }
        }
        out
    }
}

/// rustland stamps start_ts/stop_ts with the BPF clock (scx_bpf_now());
/// tick deadlines are CLOCK_MONOTONIC. The offset between the two is the
/// smallest difference seen between our clock, read as soon as we run, and
/// the BPF clock's stamp of when we started running (any delay only makes
/// the difference larger). Estimated over one-second windows, so drift
/// between the clocks is followed.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClockOffset {
    offset: Option<i64>,
    window_min: Option<i64>,
}

impl ClockOffset {
    pub fn sample(&mut self, mono: u64, bpf: u64) {
        if bpf == 0 {
            return;
        }
        let d = mono as i64 - bpf as i64;
        self.window_min = Some(self.window_min.map_or(d, |m| m.min(d)));
        // a smaller difference is a better estimate at once
        self.offset = Some(self.offset.map_or(d, |o| o.min(d)));
    }

    /// Start a new window (once a second): the last window's minimum
    /// replaces the estimate, so it can also grow with drift.
    pub fn roll(&mut self) {
        if self.window_min.is_some() {
            self.offset = self.window_min;
        }
        self.window_min = None;
    }

    /// A BPF clock stamp in CLOCK_MONOTONIC, once an offset is known.
    pub fn mono(self, bpf: u64) -> Option<u64> {
        let o = self.offset?;
        (bpf > 0).then(|| (bpf as i64 + o).max(0) as u64)
    }
}

/// Where other (non-tick) work goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OtherDest {
    /// Lent to this free tick CPU (an index into the tick CPUs) for a slice
    /// that ends before its runners' next predicted wake.
    Lend { cpu_idx: usize, slice_ns: u64 },
    /// A non-tick CPU, full slice (the caller picks which).
    Other,
}

/// Shortest lend worth it here: a lend costs a round trip through this
/// scheduler (BPF lends down to 50 us).
pub const MIN_LEND_NS: u64 = 500_000;

/// How long other work may run on a tick CPU whose runners next wake at
/// `next_wake`: `lend_window()` in bpf/other.bpf.c.
pub fn lend_window(now: u64, next_wake: Option<u64>, buffer_ns: u64, slice_ns: u64) -> u64 {
    match next_wake {
        Some(w) if w > now => (w - now).saturating_sub(buffer_ns),
        _ => slice_ns, // no prediction, or it is already due: a full slice
    }
}

/// Lends tick CPUs to other work one task at a time: a free tick CPU
/// (no runner sent, none waiting for it) with a window of at least
/// `MIN_LEND_NS` gets one task, and no other until that slice is over.
pub struct Lender {
    lent_until: Vec<u64>,
    rr: usize,
}

impl Lender {
    pub fn new(nr_tick_cpus: usize) -> Lender {
        Lender {
            lent_until: vec![0; nr_tick_cpus],
            rr: 0,
        }
    }

    /// `free[i]`, `next_wakes[i]`: tick CPU i's state this round;
    /// `may_run(i)`: the task's affinity allows tick CPU i.
    pub fn place(
        &mut self,
        now: u64,
        free: &[bool],
        next_wakes: &[Option<u64>],
        buffer_ns: u64,
        slice_ns: u64,
        may_run: &dyn Fn(usize) -> bool,
    ) -> OtherDest {
        let nr = free.len();
        for k in 0..nr {
            let i = (self.rr + k) % nr;
            if !free[i] || self.lent_until[i] > now || !may_run(i) {
                continue;
            }
            let window = lend_window(now, next_wakes[i], buffer_ns, slice_ns).min(slice_ns);
            if window >= MIN_LEND_NS {
                self.lent_until[i] = now + window;
                self.rr = i + 1;
                return OtherDest::Lend {
                    cpu_idx: i,
                    slice_ns: window,
                };
            }
        }
        OtherDest::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;
    const POLICY: dispatch::Policy = dispatch::Policy {
        work_stealing: true,
        steal_threshold_ns: 3 * MS,
    };

    fn runner(pid: Pid, deadline: u64, wake_at: u64) -> Runner {
        Runner {
            pid,
            enq_cnt: 1,
            flags: 0,
            deadline,
            wake_at,
        }
    }

    fn never_on_cpu(_: Pid) -> bool {
        false
    }

    fn anywhere(_: Pid, _: usize) -> bool {
        true
    }

    #[test]
    fn a_free_cpu_takes_its_earliest_deadline_first() {
        let mut q = EdfQueues::new(2, POLICY);
        q.push(Some(0), runner(1, 50 * MS, 0));
        q.push(Some(0), runner(2, 20 * MS, 0));
        let sends = q.poll(MS, &mut never_on_cpu, &anywhere);
        assert_eq!(sends.len(), 1, "CPU 1 steals nothing that is not late");
        assert_eq!((sends[0].runner.pid, sends[0].how), (2, How::Local));
        assert_eq!(q.held(), 1);
    }

    #[test]
    fn a_busy_cpu_keeps_its_runners_waiting() {
        let mut q = EdfQueues::new(1, POLICY);
        q.push(Some(0), runner(1, 10 * MS, 0));
        q.push(Some(0), runner(2, 20 * MS, 0));
        assert_eq!(q.poll(0, &mut never_on_cpu, &anywhere).len(), 1);
        // runner 1 still runs: runner 2 waits
        assert!(q.poll(MS, &mut |p| p == 1, &anywhere).is_empty());
        assert!(q.busy(0));
        // runner 1 slept: the CPU is free again
        let sends = q.poll(2 * MS, &mut never_on_cpu, &anywhere);
        assert_eq!(sends[0].runner.pid, 2);
    }

    #[test]
    fn an_idle_cpu_steals_only_past_the_threshold() {
        let mut q = EdfQueues::new(2, POLICY);
        q.push(Some(0), runner(1, 50 * MS, 0));
        q.push(Some(0), runner(2, 60 * MS, 0));
        // CPU 0 takes runner 1; at 2 ms runner 2 is not late enough for CPU 1
        let sends = q.poll(2 * MS, &mut never_on_cpu, &anywhere);
        assert_eq!(sends.len(), 1);
        assert_eq!(q.steals_refused, 1);
        // at 4 ms it is: CPU 1 steals it while CPU 0 is still busy
        let sends = q.poll(4 * MS, &mut |p| p == 1, &anywhere);
        assert_eq!(
            sends,
            vec![Send {
                runner: runner(2, 60 * MS, 0),
                cpu_idx: 1,
                how: How::Stolen
            }]
        );
    }

    #[test]
    fn a_free_cpu_is_not_robbed_in_the_same_round() {
        let mut q = EdfQueues::new(2, POLICY);
        q.push(Some(1), runner(1, 50 * MS, 0));
        // late by 10 ms, yet CPU 1 is free and takes it itself
        let sends = q.poll(10 * MS, &mut never_on_cpu, &anywhere);
        assert_eq!((sends[0].cpu_idx, sends[0].how), (1, How::Local));
        assert_eq!(q.steals_refused, 0);
    }

    #[test]
    fn runners_go_only_where_their_affinity_allows() {
        let mut q = EdfQueues::new(2, POLICY);
        // runner 2 may not run on tick CPU 0
        let allowed = |p: Pid, i: usize| p != 2 || i != 0;
        q.push(None, runner(2, 10 * MS, 0));
        let sends = q.poll(MS, &mut never_on_cpu, &allowed);
        assert_eq!((sends[0].runner.pid, sends[0].cpu_idx), (2, 1));
        // a late runner homed on busy CPU 1 is not stolen by CPU 0
        q.push(Some(1), runner(3, 50 * MS, 0));
        q.push(Some(1), runner(2, 60 * MS, 0));
        q.poll(MS, &mut never_on_cpu, &allowed);
        let sends = q.poll(20 * MS, &mut |p| p == 3, &allowed);
        assert!(sends.is_empty(), "{sends:?}");
    }

    #[test]
    fn no_stealing_when_switched_off() {
        let mut q = EdfQueues::new(
            2,
            dispatch::Policy {
                work_stealing: false,
                ..POLICY
            },
        );
        q.push(Some(0), runner(1, 50 * MS, 0));
        q.push(Some(0), runner(2, 60 * MS, 0));
        q.poll(0, &mut never_on_cpu, &anywhere);
        assert!(q.poll(40 * MS, &mut |p| p == 1, &anywhere).is_empty());
    }

    #[test]
    fn an_overdue_global_head_beats_a_later_local_one() {
        let mut q = EdfQueues::new(1, POLICY);
        q.push(Some(0), runner(1, 50 * MS, 0));
        q.push(None, runner(2, 5 * MS, 0));
        let sends = q.poll(10 * MS, &mut never_on_cpu, &anywhere);
        assert_eq!((sends[0].runner.pid, sends[0].how), (2, How::Global));
    }

    #[test]
    fn a_newer_enqueue_replaces_the_waiting_one() {
        let mut q = EdfQueues::new(1, POLICY);
        q.push(Some(0), runner(1, 50 * MS, 0));
        q.push(
            Some(0),
            Runner {
                enq_cnt: 2,
                ..runner(1, 50 * MS, 0)
            },
        );
        assert_eq!(q.held(), 1);
        let sends = q.poll(0, &mut never_on_cpu, &anywhere);
        assert_eq!(sends[0].runner.enq_cnt, 2);
        assert_eq!(q.held(), 0);
    }

    #[test]
    fn an_enqueue_frees_the_cpu_the_runner_was_sent_to() {
        let mut q = EdfQueues::new(1, POLICY);
        q.push(Some(0), runner(1, 10 * MS, 0));
        q.poll(0, &mut never_on_cpu, &anywhere);
        assert!(q.busy(0));
        q.push(Some(0), runner(1, 10 * MS, 0)); // preempted: back here
        assert!(!q.busy(0));
    }

    fn ran(start_ms: u64, stop_ms: u64) -> Option<Ran> {
        Some(Ran {
            start: start_ms * MS,
            stop: stop_ms * MS,
        })
    }

    #[test]
    fn ticks_start_on_fresh_wakes_and_keep_their_deadline_when_preempted() {
        let mut rs = Runners::default();
        let a = rs.enqueue(7, 0, &[0, 1], 50 * MS, true, 100 * MS, ran(1, 2));
        assert!(a.tick);
        assert_eq!(a.closed, None, "no tick of a runner seen first");
        let a = a.info;
        assert_eq!((a.deadline, a.wake_at, a.interval), (150 * MS, 100 * MS, 0));
        let b = rs.enqueue(7, 0, &[0, 1], 50 * MS, false, 120 * MS, ran(105, 120));
        assert!(!b.tick);
        assert_eq!(
            b.info.deadline,
            150 * MS,
            "preempted mid-tick: same deadline"
        );
        let c = rs.enqueue(7, 0, &[0, 1], 50 * MS, true, 150 * MS, ran(125, 140));
        assert!(c.tick);
        assert_eq!((c.info.deadline, c.info.interval), (200 * MS, 50 * MS));
        assert_eq!(c.info.next_wake(), Some(200 * MS));
        assert_eq!(c.info.home, a.home, "a runner keeps its home CPU");
        // the tick woke at 100, first ran at 105 (not 125), slept at 140
        assert_eq!(
            c.closed,
            Some(TickOutcome {
                group: 0,
                lateness_ns: 5 * MS,
                overshoot_ns: None
            })
        );
    }

    #[test]
    fn a_runner_first_seen_while_running_has_no_tick_to_count() {
        let mut rs = Runners::default();
        let e = rs.enqueue(7, 0, &[0], 50 * MS, false, 0, ran(0, 1));
        assert!(!e.tick);
        assert_eq!(
            e.info.deadline,
            50 * MS,
            "it still gets a deadline to queue by"
        );
        // it sleeps 80 ms later: no miss, the tick was never started
        let e = rs.enqueue(7, 0, &[0], 50 * MS, true, 100 * MS, ran(2, 80));
        assert!(e.tick);
        assert_eq!(e.closed, None);
    }

    #[test]
    fn a_tick_that_sleeps_after_its_deadline_is_a_miss() {
        let mut rs = Runners::default();
        rs.enqueue(7, 0, &[0], 20 * MS, true, 0, None);
        let e = rs.enqueue(7, 0, &[0], 20 * MS, true, 50 * MS, ran(2, 27));
        let o = e.closed.unwrap();
        assert_eq!((o.lateness_ns, o.overshoot_ns), (2 * MS, Some(7 * MS)));
        // a stint from before the tick's wake closes nothing
        let e = rs.enqueue(7, 0, &[0], 20 * MS, true, 100 * MS, ran(2, 27));
        assert_eq!(e.closed, None);
    }

    #[test]
    fn the_clock_offset_is_the_smallest_difference_per_window() {
        let mut c = ClockOffset::default();
        assert_eq!(c.mono(5), None);
        c.sample(1_000 + 300, 1_000); // ran 300 ns after the stamp
        assert_eq!(
            c.mono(10_000),
            Some(10_300),
            "the first sample is used at once"
        );
        c.sample(2_000 + 100, 2_000);
        assert_eq!(c.mono(10_000), Some(10_100), "and a better one too");
        c.sample(2_500 + 900, 2_500); // a stale stamp changes nothing
        c.roll();
        assert_eq!(c.mono(10_000), Some(10_100));
        c.sample(3_000 + 150, 3_000); // the clocks drifted
        c.roll();
        assert_eq!(c.mono(10_000), Some(10_150));
        c.roll(); // an empty window keeps the last estimate
        assert_eq!(c.mono(10_000), Some(10_150));
        assert_eq!(c.mono(0), None, "0: never ran");
    }

    #[test]
    fn new_runners_spread_over_the_home_cpus() {
        let mut rs = Runners::default();
        let homes: Vec<usize> = (1..=4)
            .map(|pid| rs.enqueue(pid, 0, &[0, 1], MS, true, 0, None).info.home)
            .collect();
        assert_eq!(homes.iter().filter(|&&h| h == 0).count(), 2);
        assert_eq!(homes.iter().filter(|&&h| h == 1).count(), 2);
        assert_eq!(rs.next_wakes(2), vec![None, None]);
    }

    #[test]
    fn other_work_is_lent_only_with_room_before_the_next_wake() {
        const BUF: u64 = MS / 10;
        let now = 10 * MS;
        let all = |_: usize| true;
        let mut l = Lender::new(2);
        // tick CPU 1 is free, its runner is due in 3 ms: lent 2.9 ms
        assert_eq!(
            l.place(
                now,
                &[false, true],
                &[None, Some(13 * MS)],
                BUF,
                5 * MS,
                &all
            ),
            OtherDest::Lend {
                cpu_idx: 1,
                slice_ns: 3 * MS - BUF
            }
        );
        // one lend per CPU until its slice is over
        let again = l.place(
            now,
            &[false, true],
            &[None, Some(13 * MS)],
            BUF,
            5 * MS,
            &all,
        );
        assert_eq!(again, OtherDest::Other);
        // due too soon, or the task may not run there: not lent
        let mut l = Lender::new(1);
        let soon = [Some(now + MS / 2)];
        assert_eq!(
            l.place(now, &[true], &soon, BUF, 5 * MS, &all),
            OtherDest::Other
        );
        assert_eq!(
            l.place(now, &[true], &[None], BUF, 5 * MS, &|_| false),
            OtherDest::Other
        );
        // no prediction, or the wake is already past: a full slice, as in BPF
        for wake in [None, Some(now - MS)] {
            let mut l = Lender::new(1);
            assert_eq!(
                l.place(now, &[true], &[wake], BUF, 5 * MS, &all),
                OtherDest::Lend {
                    cpu_idx: 0,
                    slice_ns: 5 * MS
                }
            );
        }
    }
}

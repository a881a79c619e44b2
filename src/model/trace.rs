//! The decision trace, for tests (`scx_tick --trace-decisions FILE`): BPF
//! records every poll of a CPU for a runner (its inputs: the queue heads it
//! saw, its steal cursor; and its pick) and every check of `ops.tick`
//! whether a runner yields its CPU (the heads, its key, whether a runner is
//! parked there; and the decision), every wake-up of a runner (its tick
//! in progress on the grid, and the tick the wake-up belongs to), and this
//! replays each through the model: `dispatch::poll` on a tick CPU,
//! `dispatch::poll_spill` on any other, `dispatch::yields` for the checks,
//! `dispatch::wake` for the wake-ups. No disagreement means the BPF policy
//! decides what `src/model/dispatch.rs` says it does.

use std::cell::Cell;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result};

use super::dispatch::{self, Head, MAX_PROBES, Pick, Policy, Search, Wake};
use super::locality::Span;
use crate::bpf::intf::{
    decision, trace_head, trace_kind_TRACE_ROLLOVER, trace_kind_TRACE_WAKEUP,
    trace_kind_TRACE_YIELD, trace_pick_TRACE_GLOBAL, trace_pick_TRACE_LOCAL,
    trace_pick_TRACE_NOTHING, trace_pick_TRACE_STEAL,
};

/// The BPF ring buffer's size while tracing: room for ~40,000 decisions
/// between two reads (every 100 ms).
pub const RING_BYTES: u32 = 16 << 20;

/// The trace file: the BPF records as they come, back to back.
pub struct TraceSink {
    out: BufWriter<File>,
    pub written: u64,
}

impl TraceSink {
    pub fn create(path: &Path) -> Result<TraceSink> {
        let f = File::create(path)
            .with_context(|| format!("--trace-decisions {}: cannot create it", path.display()))?;
        Ok(TraceSink {
            out: BufWriter::new(f),
            written: 0,
        })
    }

    pub fn write(&mut self, record: &[u8]) -> std::io::Result<()> {
        if record.len() == size_of::<decision>() {
            self.out.write_all(record)?;
            self.written += 1;
        }
        Ok(())
    }

    pub fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// The records of a trace file (a torn last record is left out).
pub fn parse(bytes: &[u8]) -> Vec<decision> {
    bytes
        .chunks_exact(size_of::<decision>())
        // SAFETY: each chunk is one struct decision as BPF wrote it.
        .map(|c| unsafe { std::ptr::read_unaligned(c.as_ptr() as *const decision) })
        .collect()
}

/// A deliberately altered model, to show the replay finds a difference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// `src/model/dispatch.rs` as it is.
    AsIs,
    /// Steals without waiting for the threshold (threshold 0).
    NoThreshold,
    /// Gives a runner parked behind another no turn.
    NoParkedTurn,
    /// A spilled runner on a non-tick CPU takes turns with its home's queue.
    HomeTurns,
    /// A tick CPU steals a candidate even when its own head is late enough
    /// to be stolen (replayed as if its own head had just woken).
    StealOverLateLocal,
    /// Every wake-up starts a tick (no identity from the period grid).
    WakeTicks,
    /// A process's light threads are no helpers: they start and split its
    /// ticks like its stepping threads.
    NoHelpers,
    /// A process's step that starts late is no miss.
    NoLateSteps,
    /// A process's tick never rolls over into the next.
    NoRollOver,
}

fn is_yield_check(d: &decision) -> bool {
    d.kind == trace_kind_TRACE_YIELD
}

pub fn is_wake(d: &decision) -> bool {
    d.kind == trace_kind_TRACE_WAKEUP
}

pub fn is_roll_over_check(d: &decision) -> bool {
    d.kind == trace_kind_TRACE_ROLLOVER
}

/// Replay one check of a process's tick at work past its next grid point
/// (BPF: `proc_roll_over()`): does it roll over, into which tick, and is
/// that a late step? Traced while the process's tick is the thread's.
fn replay_roll_over(d: &decision, model: Model) -> Result<(), String> {
    let mut pt = dispatch::ProcessTick {
        grid: Some(d.grid_before),
        started: (d.proc_started != 0).then_some(d.proc_started),
        ..Default::default()
    };
    let rolled = pt
        .roll_over(
            d.grid_before,
            d.own_deadline,
            d.period_ns,
            d.rel_deadline_ns,
            d.now,
            d.ran,
            d.mspt,
        )
        .filter(|_| model != Model::NoRollOver);
    let late = rolled
        .and_then(|(_, _, late)| late)
        .filter(|_| model != Model::NoLateSteps);
    let want = (rolled.map(|(grid, deadline, _)| (grid, deadline)), late);
    let bpf = (
        (d.grid_after != 0).then_some((d.grid_after, d.deadline_after)),
        (d.late_step != 0).then_some(d.late_step),
    );
    if d.raced == 0 && want != bpf {
        return Err(format!(
            "a process's tick at {} due {} at work at {} ({} ns of CPU, a step's {}): \
             BPF (rolled over into, late step) {bpf:?}, the model {want:?}",
            d.grid_before, d.own_deadline, d.now, d.ran, d.mspt
        ));
    }
    Ok(())
}

/// Replay one wake-up of a runner: does it continue its tick, or start the
/// next one where the model says? (Runners that publish deadline hints
/// start ticks with their hints, and are not traced here.)
fn replay_wake(d: &decision, model: Model) -> Result<(), String> {
    if d.proc_wake != 0 {
        return replay_proc_wake(d, model);
    }
    let grid = (d.grid_before != 0 && model != Model::WakeTicks).then_some(d.grid_before);
    let want = dispatch::thread_wake(
        grid,
        d.grid_guess != 0,
        d.period_ns,
        d.rel_deadline_ns,
        d.now,
        d.work_done != 0,
    );
    let bpf = match d.grid_after {
        0 => Wake::Continues,
        g => Wake::Starts {
            grid: g,
            deadline: d.deadline_after,
        },
    };
    if want != bpf {
        return Err(format!(
            "a runner waking at {} in its tick at {:?} (period {}, deadline {}): BPF {bpf:?}, the model {want:?}",
            d.now, grid, d.period_ns, d.rel_deadline_ns
        ));
    }
    Ok(())
}

/// Replay one wake-up of a thread of a `tick = "process"` group: is it a
/// helper, and which tick does it work for, with which deadline, started
/// by it or not? The process's tick and heaviest thread, the thread's own
/// tick and whether it ended a quiet spell are the trace's (the quiet
/// spell is the process's threads' state, not this decision's).
fn replay_proc_wake(d: &decision, model: Model) -> Result<(), String> {
    let mut pt = dispatch::ProcessTick {
        grid: (d.grid_before != 0).then_some(d.grid_before),
        deadline: d.proc_deadline,
        started: (d.proc_started != 0).then_some(d.proc_started),
        idle_since: d.proc_idle_since,
        heavy: d.heavy,
        heavy_tid: d.heavy_tid,
        heavy_at: d.heavy_at,
        ..Default::default()
    };
    let helper = pt.helper(d.tid as u32, d.mspt, d.now, d.period_ns) && model != Model::NoHelpers;
    let prev = pt.started;
    let (grid, deadline, started) = if helper {
        let (grid, deadline) = pt.join(d.rel_deadline_ns, d.now);
        (grid.unwrap_or(0), deadline, None)
    } else {
        let own = (d.own_grid != 0).then_some((d.own_grid, d.own_deadline, d.work_done != 0));
        let (grid, deadline, started) =
            pt.wake(d.period_ns, d.rel_deadline_ns, d.now, own, d.fresh != 0);
        (grid, deadline, started.then_some(grid))
    };
    let late = started
        .filter(|_| d.fresh != 0)
        .and_then(|_| dispatch::late_step(prev, d.proc_idle_since, d.period_ns, d.now))
        .filter(|_| model != Model::NoLateSteps);
    let bpf = (
        d.helper != 0,
        d.grid_joined,
        d.deadline_after,
        (d.grid_after != 0).then_some(d.grid_after),
        (d.late_step != 0).then_some(d.late_step),
    );
    let want = (helper, grid, deadline, started, late);
    if d.raced == 0 && want != bpf {
        return Err(format!(
            "a process's thread {} waking at {} (its tick at {}, the thread's at {}, fresh {}): \
             BPF (helper, works for, deadline, starts, late step) {bpf:?}, the model {want:?}",
            d.tid, d.now, d.grid_before, d.own_grid, d.fresh,
        ));
    }
    Ok(())
}

/// Replay one check of `ops.tick`: does the running runner yield?
fn replay_yield(d: &decision, model: Model) -> Result<(), String> {
    let key = |h: &trace_head| head(h).map(|h| h.deadline);
    let want = yield_want(d, model);
    if want != (d.yielded != 0) {
        return Err(format!(
            "a runner with key {} after {} ns on CPU #{} at {}: BPF {}, the model {} \
             (queued {:?}, global {:?}, parked {})",
            d.key,
            d.ran,
            d.me,
            d.now,
            if d.yielded != 0 {
                "yielded"
            } else {
                "kept the CPU"
            },
            if want { "yields" } else { "keeps it" },
            key(&d.local),
            key(&d.global),
            d.parked != 0
        ));
    }
    Ok(())
}

/// Does `model` have the running runner yield at check `d`?
fn yield_want(d: &decision, model: Model) -> bool {
    let parked = d.parked != 0 && model != Model::NoParkedTurn;
    let key = |h: &trace_head| head(h).map(|h| h.deadline);
    let turn = dispatch::turn_head(d.me >= 0 || model == Model::HomeTurns, key(&d.local));
    dispatch::yields(d.key, d.ran, turn, key(&d.global), parked)
}

/// Did a parked runner's turn alone make the model yield at this check?
fn parked_turn(d: &decision) -> bool {
    d.parked != 0 && yield_want(d, Model::AsIs) != yield_want(d, Model::NoParkedTurn)
}

fn head(h: &trace_head) -> Option<Head> {
    (h.present != 0).then_some(Head {
        deadline: h.deadline,
        tick_start: h.tick_start,
        ahead: h.ahead,
    })
}

fn bpf_pick(d: &decision) -> Option<Pick> {
    #[allow(non_upper_case_globals)]
    match d.pick as u32 {
        trace_pick_TRACE_LOCAL => Some(Pick::Local),
        trace_pick_TRACE_GLOBAL => Some(Pick::Global),
        trace_pick_TRACE_STEAL => Some(Pick::Steal(d.victim as usize)),
        trace_pick_TRACE_NOTHING => Some(Pick::Nothing),
        _ => None,
    }
}

/// Replay one decision; Err says how the model differs.
pub fn replay_one(d: &decision, model: Model) -> Result<(), String> {
    if is_yield_check(d) {
        return replay_yield(d, model);
    }
    if is_wake(d) {
        return replay_wake(d, model);
    }
    if is_roll_over_check(d) {
        return replay_roll_over(d, model);
    }
    let policy = Policy {
        work_stealing: d.work_stealing != 0,
        steal_threshold_ns: match model {
            Model::NoThreshold => 0,
            _ => d.steal_threshold_ns,
        },
    };
    let me = usize::try_from(d.me).ok();
    let probed = &d.probed[..(d.nr_probed as usize).min(MAX_PROBES)];
    let looked = std::cell::RefCell::new(Vec::new());
    let unseen = Cell::new(None);
    let heads = |i: usize| {
        if Some(i) == me {
            return head(&d.local).map(|h| match model {
                Model::StealOverLateLocal => Head {
                    tick_start: d.now,
                    ..h
                },
                _ => h,
            });
        }
        looked.borrow_mut().push(i);
        match probed.iter().find(|h| h.queue as usize == i) {
            Some(h) => head(h),
            None => {
                unseen.set(unseen.get().or(Some(i)));
                None
            }
        }
    };
    let mut rr = d.rr_before;
    let nr = d.nr_tick_cpus as usize;
    let global = head(&d.global);
    let search = Search {
        span: Span {
            llc_lo: d.span.llc_lo,
            llc_hi: d.span.llc_hi,
            node_lo: d.span.node_lo,
            node_hi: d.span.node_hi,
        },
        hint: usize::try_from(d.hint).ok(),
        throttled: d.throttled != 0,
    };
    let pick = match me {
        Some(me) => dispatch::poll(policy, d.now, me, nr, &mut rr, search, global, &heads),
        None => dispatch::poll_spill(policy, d.now, nr, &mut rr, search, global, &heads),
    };
    let bpf = bpf_pick(d).ok_or_else(|| format!("unknown pick {}", d.pick))?;
    let at = match me {
        Some(m) => format!("tick CPU #{m}"),
        None => "a non-tick CPU".into(),
    };
    if let Some(q) = unseen.get() {
        return Err(format!(
            "{at} at {}: the model looked at queue #{q}, BPF did not",
            d.now
        ));
    }
    if pick != bpf {
        return Err(format!(
            "{at} at {}: BPF picked {bpf:?}, the model {pick:?} (local {:?}, global {:?}, probed {:?})",
            d.now,
            head(&d.local),
            global,
            probed
                .iter()
                .map(|h| (h.queue, head(h)))
                .collect::<Vec<_>>()
        ));
    }
    // a raced pick ran later steps too: its cursor and probes are not the decision's
    let looked = looked.into_inner();
    let bpf_order: Vec<usize> = probed.iter().map(|h| h.queue as usize).collect();
    if d.raced == 0 && (rr != d.rr_after || looked != bpf_order) {
        return Err(format!(
            "{at} at {}: steal cursor {} -> {} after probes {bpf_order:?} in BPF, -> {rr} after {looked:?} in the model",
            d.now, d.rr_before, d.rr_after,
        ));
    }
    Ok(())
}

/// What a replay found.
#[derive(Debug, Default)]
pub struct Replay {
    pub decisions: u64,
    /// Per pick: local, global, steal, nothing.
    pub picks: [u64; 4],
    /// Checks of `ops.tick`: how many, how many yielded, how many with a
    /// runner parked on the CPU, and in how many of those the parked
    /// runner's turn decided (the runner yields only because of it: the
    /// checks a model without that turn gets wrong).
    pub yield_checks: u64,
    pub yielded: u64,
    pub parked: u64,
    pub parked_turns: u64,
    /// Wake-ups of runners, and how many continued their tick; of them,
    /// wake-ups of a process tick's threads, and how many were helpers'.
    pub wakes: u64,
    pub continued: u64,
    pub proc_wakes: u64,
    pub helpers: u64,
    /// Checks of a process's tick past its next grid point, and how many
    /// rolled over.
    pub roll_over_checks: u64,
    pub rolled_over: u64,
    pub raced: u64,
    pub disagreements: u64,
    /// The first few, described.
    pub examples: Vec<String>,
}

pub fn replay(trace: &[decision], model: Model) -> Replay {
    let mut r = Replay::default();
    for d in trace {
        r.decisions += 1;
        if is_yield_check(d) {
            r.yield_checks += 1;
            r.yielded += u64::from(d.yielded != 0);
            r.parked += u64::from(d.parked != 0);
            r.parked_turns += u64::from(parked_turn(d));
        } else if is_wake(d) {
            r.wakes += 1;
            r.continued += u64::from(d.grid_after == 0);
            r.proc_wakes += u64::from(d.proc_wake != 0);
            r.helpers += u64::from(d.proc_wake != 0 && d.helper != 0);
        } else if is_roll_over_check(d) {
            r.roll_over_checks += 1;
            r.rolled_over += u64::from(d.grid_after != 0);
        } else if let Some(n) = r.picks.get_mut(d.pick as usize) {
            *n += 1;
        }
        r.raced += u64::from(d.raced != 0);
        if let Err(e) = replay_one(d, model) {
            r.disagreements += 1;
            if r.examples.len() < 5 {
                r.examples.push(e);
            }
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn th(queue: i32, h: Option<Head>) -> trace_head {
        let h = h.unwrap_or(Head {
            deadline: 0,
            tick_start: 0,
            ahead: 0,
        });
        trace_head {
            deadline: h.deadline,
            tick_start: h.tick_start,
            ahead: h.ahead,
            queue,
            present: u32::from(h.deadline != 0),
        }
    }

    /// A decision as BPF would record it, made by the model itself.
    fn recorded(me: Option<usize>, local: Option<Head>, victims: &[Option<Head>]) -> decision {
        let nr = 3;
        let now = 100 * MS;
        let policy = Policy {
            work_stealing: true,
            steal_threshold_ns: 3 * MS,
        };
        let mut d: decision = unsafe { std::mem::zeroed() };
        let others: Vec<usize> = (0..nr).filter(|&i| Some(i) != me).collect();
        let seen = std::cell::RefCell::new(Vec::new());
        let heads = |i: usize| {
            if Some(i) == me {
                return local;
            }
            let h = victims[others.iter().position(|&o| o == i).unwrap()];
            seen.borrow_mut().push((i, h));
            h
        };
        let mut rr = 0;
        let search = Search::flat(nr);
        let pick = match me {
            Some(m) => dispatch::poll(policy, now, m, nr, &mut rr, search, None, &heads),
            None => dispatch::poll_spill(policy, now, nr, &mut rr, search, None, &heads),
        };
        d.span = crate::bpf::intf::span {
            llc_lo: search.span.llc_lo,
            llc_hi: search.span.llc_hi,
            node_lo: search.span.node_lo,
            node_hi: search.span.node_hi,
        };
        d.hint = -1;
        d.now = now;
        d.steal_threshold_ns = policy.steal_threshold_ns;
        d.me = me.map_or(-1, |m| m as i32);
        d.nr_tick_cpus = nr as u32;
        d.work_stealing = 1;
        d.rr_after = rr;
        (d.pick, d.victim) = match pick {
            Pick::Local => (0, -1),
            Pick::Global => (1, -1),
            Pick::Steal(v) => (2, v as i32),
            Pick::Nothing => (3, -1),
        };
        d.local = th(d.me, local);
        for (n, (i, h)) in seen.borrow().iter().enumerate() {
            d.probed[n] = th(*i as i32, *h);
        }
        d.nr_probed = seen.borrow().len() as u32;
        d
    }

    fn late(ms_waited: u64) -> Option<Head> {
        Some(Head {
            deadline: 150 * MS,
            tick_start: 100 * MS - ms_waited * MS,
            ahead: 0,
        })
    }

    #[test]
    fn the_model_agrees_with_itself_and_an_altered_one_does_not() {
        let cases = [
            recorded(Some(0), None, &[late(10), None]),
            recorded(Some(0), None, &[late(1), late(1)]),
            recorded(Some(1), late(0), &[late(10), None]),
            recorded(None, None, &[late(1), late(10), None]),
            recorded(None, None, &[None, None, None]),
        ];
        let r = replay(&cases, Model::AsIs);
        assert_eq!((r.decisions, r.disagreements), (5, 0), "{:?}", r.examples);
        // without the threshold the 1 ms waiters are stolen too
        let r = replay(&cases, Model::NoThreshold);
        assert_eq!(r.disagreements, 2, "{:?}", r.examples);
    }

    #[test]
    fn a_different_pick_or_probe_is_a_disagreement() {
        let mut d = recorded(Some(0), None, &[late(10), None]);
        assert_eq!(d.pick, 2);
        d.pick = 3;
        assert!(replay_one(&d, Model::AsIs).is_err());
        // BPF looked at one queue less than the model asks for
        let mut d = recorded(Some(0), None, &[None, late(1)]);
        d.nr_probed = 1;
        let e = replay_one(&d, Model::AsIs).unwrap_err();
        assert!(e.contains("BPF did not"), "{e}");
        // the same queues looked at in another order
        let mut d = recorded(None, None, &[None, None, None]);
        d.probed.swap(0, 1);
        let e = replay_one(&d, Model::AsIs).unwrap_err();
        assert!(e.contains("after probes [1, 0, 2]"), "{e}");
        // another cursor
        let mut d = recorded(None, None, &[None, None, None]);
        d.rr_after += 1;
        assert!(replay_one(&d, Model::AsIs).is_err());
        // ... which a raced decision does not compare
        d.raced = 1;
        assert!(replay_one(&d, Model::AsIs).is_ok());
    }

    /// A check of ops.tick as BPF would record it.
    fn check(key: u64, queued: Option<u64>, parked: bool, yielded: bool) -> decision {
        let mut d: decision = unsafe { std::mem::zeroed() };
        let at = |k: Option<u64>| {
            k.map(|deadline| Head {
                deadline,
                tick_start: 0,
                ahead: 0,
            })
        };
        d.kind = trace_kind_TRACE_YIELD;
        d.now = 100 * MS;
        d.key = key;
        d.ran = dispatch::RUNNER_QUANTUM_NS;
        d.local = th(0, at(queued));
        d.parked = u32::from(parked);
        d.yielded = u32::from(yielded);
        d
    }

    #[test]
    fn yield_checks_replay_and_a_model_without_the_parked_turn_disagrees() {
        let cases = [
            check(150 * MS, Some(140 * MS), false, true),
            check(150 * MS, Some(160 * MS), false, false),
            check(150 * MS, None, true, true),
            check(150 * MS, None, false, false),
            // parked, but the running runner's quantum is not used up: no turn yet
            decision {
                ran: dispatch::RUNNER_QUANTUM_NS - 1,
                ..check(150 * MS, None, true, false)
            },
        ];
        let r = replay(&cases, Model::AsIs);
        assert_eq!(
            (r.yield_checks, r.yielded, r.parked, r.parked_turns),
            (5, 2, 2, 1)
        );
        assert_eq!(r.disagreements, 0, "{:?}", r.examples);
        let r = replay(&cases, Model::NoParkedTurn);
        assert_eq!(r.disagreements, 1, "{:?}", r.examples);
        // BPF keeping the CPU with a parked runner waiting is a disagreement
        assert!(replay_one(&check(150 * MS, None, true, false), Model::AsIs).is_err());
    }

    #[test]
    fn a_spilled_runner_keeps_its_non_tick_cpu_and_a_model_with_home_turns_disagrees() {
        // on a non-tick CPU, the home's head (earlier key) is traced but takes no turn
        let mut kept = check(150 * MS, Some(140 * MS), false, false);
        kept.me = -1;
        assert_eq!(replay_one(&kept, Model::AsIs), Ok(()));
        assert!(replay_one(&kept, Model::HomeTurns).is_err());
        let mut yielded = kept;
        yielded.yielded = 1;
        assert!(replay_one(&yielded, Model::AsIs).is_err());
    }

    #[test]
    fn a_trace_file_parses_back() {
        let d = recorded(Some(0), None, &[late(10), None]);
        // SAFETY: plain old data
        let bytes = unsafe {
            std::slice::from_raw_parts(&d as *const decision as *const u8, size_of::<decision>())
        };
        let mut file = bytes.to_vec();
        file.extend_from_slice(bytes);
        file.extend_from_slice(&bytes[..10]);
        let back = parse(&file);
        assert_eq!(back.len(), 2);
        assert!(replay_one(&back[1], Model::AsIs).is_ok());
    }
}

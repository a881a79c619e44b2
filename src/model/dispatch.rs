//! A pure model of scx_tick's scheduling decisions, mirrored by the BPF
//! policy (bpf/queues.bpf.c, placement.bpf.c, ticks.bpf.c, other.bpf.c):
//! the same decisions in the same order; each BPF function says which
//! function here it mirrors ("Mirrors dispatch::..."), as the names differ
//! where BPF needs more than one. The BPF code can only run in a VM; this
//! model is tested everywhere, exhaustively.
//!
//! On a tick CPU, the order is the poll of CanvasMC's Affinity scheduler
//! ([`poll`]):
//! 1. peek the local and the global queue head; an overdue head wins, and
//!    if both are overdue the earlier deadline wins;
//! 2. otherwise look at one steal candidate, the nearest of the other tick
//!    CPUs in turn (its LLC, node, the rest: [`locality`]), and take its
//!    head if it is stealable (predicted to
//!    start more than the threshold after its tick started); a CPU with
//!    nothing else to run looks at up to [`MAX_PROBES`] candidates;
//! 3. otherwise take the earlier of the two heads (a tie goes to local).
//!
//! The tick CPUs are the runners' home, not their fence:
//! - a runner predicted to start late at its busy home starts at once
//!   elsewhere ([`place`]): an idle CPU, else a CPU running other work;
//! - a non-tick CPU takes a late runner before its other work
//!   ([`poll_spill`]);
//! - a runner that another tick CPU took makes that CPU its home
//!   ([`moved_home`]);
//! - a runner still running or runnable at its deadline starts its next
//!   tick one period later on the grid ([`replenish`]), so runners that
//!   share a CPU take turns;
//! - runners never stall other work: once the fair queue's head has
//!   waited [`OTHER_SHARE_PERIOD_NS`], a CPU that started no other work for
//!   as long runs it first, for [`OTHER_SHARE_SLICE_NS`] that no runner
//!   preempts ([`other_owed`]).
//! - a tick CPU lends itself to other work while its runners sleep, up to
//!   `run_tasks_buffer` before the next predicted wake-up ([`lend_window`]);
//!   lent work whose window closed leaves the CPU ([`keep_prev`]).

/// Remote queues (or CPUs) one dispatch or placement looks at, at most:
/// the cost of a decision must not grow with the machine (bpf/intf.h).
pub const MAX_PROBES: usize = crate::bpf::intf::tick_consts_MAX_PROBES as usize;

use super::locality::{self, Span};

/// The head of an EDF queue as a poll sees it (peeking never dequeues).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    pub deadline: u64,
    /// When its tick started (wake-up, or grid time after replenishment).
    pub tick_start: u64,
    /// Predicted CPU time still needed by the runner its own CPU runs
    /// (0 for other work or idle): when this head would start there.
    pub ahead: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    Local,
    Global,
    /// Steal the head of this tick CPU's queue (an index into the tick CPUs).
    Steal(usize),
    /// Nothing for a tick runner: lend the CPU to other work or idle.
    Nothing,
}

#[derive(Debug, Clone, Copy)]
pub struct Policy {
    pub work_stealing: bool,
    pub steal_threshold_ns: u64,
}

/// `now - since`, never negative: a stamp taken on another CPU may be a
/// little ahead of this CPU's clock (BPF: `elapsed()`).
pub fn elapsed(now: u64, since: u64) -> u64 {
    (now.wrapping_sub(since) as i64).max(0) as u64
}

pub fn is_overdue(h: Head, now: u64) -> bool {
    (h.deadline.wrapping_sub(now) as i64) < 0
}

/// Predictive threshold stealing: the tick is predicted to start at
/// `now + ahead`; it is stealable when that start lateness is above the
/// threshold. A tick predicted to start within the threshold never is.
pub fn is_stealable(tick_start: u64, now: u64, ahead: u64, threshold_ns: u64) -> bool {
    elapsed(now.wrapping_add(ahead), tick_start) > threshold_ns
}

fn head_stealable(h: Head, now: u64, policy: Policy) -> bool {
    is_stealable(h.tick_start, now, h.ahead, policy.steal_threshold_ns)
}

/// How a CPU searches the other tick CPUs' queues for a runner to steal
/// (BPF: `steal_round()`'s inputs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Search {
    /// The searching CPU's LLC and node among the tick CPUs: nearest first.
    pub span: Span,
    /// The queue (tick index) a steal timer woke this CPU for: looked at first.
    pub hint: Option<usize>,
    /// Half the tick CPUs search already: a CPU that would look at several
    /// queues looks at one (throttled stealing).
    pub throttled: bool,
}

impl Search {
    /// All `nr` tick CPUs in one LLC: nearest first is plain round-robin
    /// (the userspace mode, which knows no topology).
    pub fn flat(nr: usize) -> Search {
        Search {
            span: Span {
                llc_lo: 0,
                llc_hi: nr as u16,
                node_lo: 0,
                node_hi: nr as u16,
            },
            ..Search::default()
        }
    }
}

/// Look at up to `tries` (at most [`MAX_PROBES`]) of the `nr` tick CPUs'
/// queues from `me` (None: a CPU that is not one): the hinted queue first,
/// then nearest first ([`locality::nth_near`]), each ring started at
/// `steal_rr`, which moves once a round. `heads(i)` is None for an empty
/// queue or a head that may not run here.
#[allow(clippy::too_many_arguments)]
pub fn steal_round(
    policy: Policy,
    now: u64,
    me: Option<usize>,
    nr: usize,
    tries: usize,
    steal_rr: &mut u32,
    search: Search,
    heads: &dyn Fn(usize) -> Option<Head>,
) -> Option<usize> {
    let rot = *steal_rr;
    *steal_rr = rot.wrapping_add(1);
    let mut tries = tries.min(MAX_PROBES);
    if tries > 1 && search.throttled {
        tries = 1;
    }
    let hint = search.hint.filter(|&h| Some(h) != me && h < nr);
    let nearest = (0..)
        .map_while(|k| locality::nth_near(nr, search.span, me, rot, k))
        .filter(|&v| Some(v) != hint);
    hint.into_iter()
        .chain(nearest)
        .take(tries)
        .find(|&v| heads(v).is_some_and(|h| head_stealable(h, now, policy)))
}

/// One poll of tick CPU `me` (of `nr` tick CPUs). `heads(i)` peeks tick CPU
/// i's queue (None: empty, or its head may not run on `me`); `local` is
/// `heads(me)`.
#[allow(clippy::too_many_arguments)]
pub fn poll(
    policy: Policy,
    now: u64,
    me: usize,
    nr: usize,
    steal_rr: &mut u32,
    search: Search,
    global: Option<Head>,
    heads: &dyn Fn(usize) -> Option<Head>,
) -> Pick {
    let local = heads(me);
    let local_overdue = local.is_some_and(|h| is_overdue(h, now));
    let global_overdue = global.is_some_and(|h| is_overdue(h, now));
    let local_first = |l: Head, g: Option<Head>| g.is_none_or(|g| g.deadline >= l.deadline);

    // 1. an overdue head wins; both overdue: the earlier deadline
    if local_overdue || global_overdue {
        let pick_local = local_overdue && (!global_overdue || local_first(local.unwrap(), global));
        return if pick_local {
            Pick::Local
        } else {
            Pick::Global
        };
    }

    // 2. one steal candidate, nearest first; an otherwise idle CPU looks
    // further. A local head late enough to be stolen itself goes first
    // instead: it is as late as any candidate, and taking it moves no
    // runner.
    let local_late = local.is_some_and(|h| head_stealable(h, now, policy));
    if policy.work_stealing && !local_late {
        let tries = if local.is_some() || global.is_some() {
            1
        } else {
            nr.saturating_sub(1)
        };
        if let Some(v) = steal_round(policy, now, Some(me), nr, tries, steal_rr, search, heads) {
            return Pick::Steal(v);
        }
    }

    // 3. the earlier of the two heads
    match local {
        Some(l) if local_first(l, global) => Pick::Local,
        _ if global.is_some() => Pick::Global,
        _ => Pick::Nothing,
    }
}

/// A non-tick CPU, before its other work: the global head once its
/// lateness passes the threshold, else a stealable head among up to
/// [`MAX_PROBES`] tick CPU queues, nearest first; Nothing means: run other
/// work.
pub fn poll_spill(
    policy: Policy,
    now: u64,
    nr: usize,
    steal_rr: &mut u32,
    search: Search,
    global: Option<Head>,
    heads: &dyn Fn(usize) -> Option<Head>,
) -> Pick {
    if global.is_some_and(|g| is_stealable(g.tick_start, now, 0, policy.steal_threshold_ns)) {
        return Pick::Global;
    }
    if policy.work_stealing
        && let Some(v) = steal_round(policy, now, None, nr, nr, steal_rr, search, heads)
    {
        return Pick::Steal(v);
    }
    Pick::Nothing
}

/// A runner's key in the EDF queues (BPF: `runner_key()`): its deadline
/// plus the CPU time `ran` this tick has had. Runners with close deadlines
/// then take turns, a quantum each: the one that ran falls behind the ones
/// that waited, so stacked runners share the CPUs (as McNaughton's
/// schedule does) instead of the last of them ending late; deadlines
/// further apart than a tick's work keep EDF order. Overrun work adds a
/// period ([`overrun_key`]).
pub fn queue_key(deadline: u64, ran: u64) -> u64 {
    deadline.wrapping_add(ran)
}

/// Overrun work ranks a period behind on-time work (BPF: `runner_key()`):
/// the key of a runner whose own work overran ([`overrun_after_miss`]) is
/// [`queue_key`] plus one `period`. A server
/// that is always behind then cannot hold CPUs on its replenished
/// deadlines ahead of a neighbour's fresh ticks, yet still goes before the
/// ticks of later periods, and such runners take turns among themselves.
pub fn overrun_key(key: u64, overrun: bool, period: u64) -> u64 {
    if overrun {
        key.wrapping_add(period)
    } else {
        key
    }
}

/// Is the tick [`replenish`] starts after a miss overrun work? Yes when the
/// missed tick was on a CPU at its deadline (`ran_on`) and was itself a
/// replenished one (`replenished`: its runner has not slept since an
/// earlier miss, so its own work overran a whole period), or was overrun
/// work already. Not a tick that only started late and runs past its
/// deadline once (demoted, it would end later still, and so would its
/// runner's next ticks), nor one that waited for a CPU all along. A sleep
/// ends both ([`sleep_ends_overrun`]).
pub fn overrun_after_miss(was_overrun: bool, ran_on: bool, replenished: bool) -> bool {
    was_overrun || (ran_on && replenished)
}

/// Does a runner that wakes after `slept` asleep stop being overrun work,
/// and its tick one begun at a replenishment (BPF: `sleep_ends_overrun()`,
/// in `select_runner_cpu()` and `wake_tick()`)? Yes after an eighth of a
/// period, whether the wake-up starts a tick or continues one: its work
/// ended and new work begins. Ended only by a new tick, a runner demoted
/// once stayed demoted: its on-time wake-ups fell in its replenished tick
/// and continued it, so it waited behind later deadlines and missed again
/// (`vm/groups_keep_edf_order`: 137-150 of 160 ticks on a second run in one
/// guest). A moment's block (a lock, a receive timeout) ends nothing: a
/// server that is always behind and blocks now and then stays demoted.
pub fn sleep_ends_overrun(slept: u64, period: u64) -> bool {
    slept >= period / 8
}

/// Does a runner with `key` preempt what a CPU runs? Other work
/// (`running` = None) always; a runner only when its key is later by more
/// than a quantum (a clearly later deadline). Closer keys take turns after
/// a quantum (`yields`): preempting at once would hand the CPU back and
/// forth between runners in phase, a few microseconds each.
pub fn preempts(key: u64, running: Option<u64>) -> bool {
    running.is_none_or(|k| before(key.wrapping_add(RUNNER_QUANTUM_NS), k))
}

fn before(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) < 0
}

/// The runner a CPU is running, as placement sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Running {
    /// Its queue key when it started.
    pub key: u64,
    /// Predicted CPU time it still needs.
    pub left: u64,
}

/// [`Running::left`]: what a runner still needs before its CPU is free.
/// `tick_left`: the rest of its tick's usual CPU time (its MSPT less what
/// the tick ran; the whole MSPT at a wake-up, whose tick may be new);
/// `burst`: its usual CPU time from a wake-up to its sleep (an EWMA, 0:
/// none yet), `burst_ran`: what it ran since its last wake-up. The rest of
/// its burst, if that ends first: a thread that wakes many times a tick (a
/// 1 kHz clock or network thread in the tick group) sleeps again long
/// before its tick's CPU time is used up. BPF: `runner_left()`.
pub fn runner_left(tick_left: u64, burst: u64, burst_ran: u64) -> u64 {
    let rest = burst.saturating_sub(burst_ran);
    if burst > 0 && rest < tick_left {
        rest
    } else {
        tick_left
    }
}

/// How long a runner with `key` would wait at its home: the rest of the
/// runner there that it cannot preempt, plus the predicted work (MSPT) of
/// the runners queued there with an earlier or equal key, at most
/// [`MAX_PROBES`] of them. An unknown MSPT (0) still counts as 1 ns: a
/// runner ahead is a wait, even one we cannot size.
pub fn wait_at_home(key: u64, running: Option<Running>, queued: &[(u64, u64)]) -> u64 {
    let mut wait = match running {
        Some(r) if !preempts(key, Some(r.key)) => r.left.max(1),
        _ => 0,
    };
    for &(d, mspt) in queued.iter().take(MAX_PROBES) {
        if (d.wrapping_sub(key) as i64) > 0 {
            break;
        }
        wait += mspt.max(1);
    }
    wait
}

/// What a CPU other than the home runs, as spill-over sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runs {
    /// Other work (a CPU hog, a server's own non-tick threads).
    Other,
    /// A runner; `overrun`: its own work overran ([`overrun_after_miss`]).
    Runner { overrun: bool },
}

/// May a runner (`overrun`: its own work overran) spill onto a CPU that
/// runs `runs`, preempting it (BPF: `free_for_runner()`, which also wants
/// no share owed or running there and nothing in its local queue)? Other
/// work, and, for on-time work, overrun work: an overloaded server's
/// runners never sleep and sat on every tick CPU, so a neighbour's runner
/// that would wait behind another at home had nowhere to go (4 runners of
/// 12 ms beside 3 that never sleep missed 1-15 % of their ticks, none
/// alone). Overrun work preempts no runner anywhere: it takes idle CPUs
/// only ([`place`]), as it goes behind on-time work at home.
pub fn spills_onto(runs: Runs, overrun: bool) -> bool {
    match runs {
        Runs::Other => true,
        Runs::Runner { overrun: theirs } => theirs && !overrun,
    }
}

/// Where a queued runner with a home goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// Its home's EDF queue (and the home is kicked or preempted).
    Home,
    /// An idle CPU, at once.
    Idle(usize),
    /// A CPU running other work, preempted.
    Preempt(usize),
}

/// Where the runner would start, as placement sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HomeState {
    /// Predicted wait at home ([`wait_at_home`]).
    pub wait: u64,
    /// Home runs a runner (one the newcomer would preempt, if wait is 0).
    pub runs_runner: bool,
}

/// Spill-over: a runner that would wait at its home, or would preempt a
/// runner there, starts at once on an idle CPU (the one it slept on, which
/// its timer woke already; else near home, tick CPUs first): runners in
/// phase have deadlines microseconds apart, and an EDF preemption would
/// only stall the other one while a CPU idles. One
/// predicted to start late at home (past the threshold) preempts a CPU
/// running other work (BPF: the CPU handling its wake-up, if it runs other
/// work: no IPI; else one near home; never a CPU with a task waiting in its
/// local queue, which the runner would overtake). Home and its cache stay
/// the first choice otherwise. (BPF makes a wake-up's choice in
/// `ops.select_cpu`, so the runner is never queued on its busy home first;
/// a `Home` that may run it now, idle or running other work with nothing
/// in its local queue, gets it there directly, skipping its EDF queue: the
/// runner is that queue's head anyway.)
/// `other_work`: a CPU running what the runner may preempt there
/// ([`spills_onto`]: other work, or overrun work). Overrun work (`overrun`)
/// takes idle CPUs but preempts none: an overloaded server must not take
/// CPUs from other work either.
pub fn place(
    policy: Policy,
    now: u64,
    tick_start: u64,
    home: HomeState,
    idle: Option<usize>,
    other_work: Option<usize>,
    overrun: bool,
) -> Place {
    let wait = home.wait;
    if wait == 0 && !home.runs_runner {
        return Place::Home;
    }
    if let Some(cpu) = idle {
        return Place::Idle(cpu);
    }
    match other_work {
        Some(cpu) if !overrun && is_stealable(tick_start, now, wait, policy.steal_threshold_ns) => {
            Place::Preempt(cpu)
        }
        _ => Place::Home,
    }
}

/// Before [`place`]: a runner away from a shared home (`homed_at_home`
/// runners have it as their home, more than one) wakes on the CPU it slept
/// on (`slept`, not its home, one it may run on; `same_node`: in its
/// home's NUMA node, as BPF asks) if that CPU may run it now: idle
/// (`slept_idle`), or running what it may preempt (`slept_runs`, see
/// [`spills_onto`]). Its timer fired there, so no other CPU is woken for it
/// (in a 4-vCPU guest a cross-CPU wake-up waited 2-3 ms at the median for
/// the target vCPU), and it does not trade places with the other runner at
/// its home tick after tick (4 runners on 3 tick CPUs: 190 of 640 ticks
/// woke or ran away from where they were queued, about 6 ms late each; 55
/// with this rule). `None`: [`place`] decides. BPF: `select_runner_cpu()`.
pub fn where_it_slept(
    home: usize,
    homed_at_home: u32,
    slept: usize,
    same_node: bool,
    slept_idle: bool,
    slept_runs: Option<Runs>,
    overrun: bool,
) -> Option<Place> {
    if slept == home || homed_at_home <= 1 || !same_node {
        return None;
    }
    if slept_idle {
        return Some(Place::Idle(slept));
    }
    // overrun work preempts nothing (as in [`place`])
    slept_runs
        .filter(|&r| !overrun && spills_onto(r, false))
        .map(|_| Place::Preempt(slept))
}

/// Does a tick CPU that took a runner (`homed_there` runners homed on it)
/// become its home (`homed_at_home` homed there)? Only where that evens
/// the homes out: a steal from a shared home moves the stolen runner's
/// home, a steal of a runner alone at its home does not (it would make
/// the stealer's home shared, and the two would trade places tick after
/// tick). BPF: `homes_here()`.
pub fn home_moves(homed_there: u32, homed_at_home: u32) -> bool {
    homed_there + 1 < homed_at_home
}

/// Spill-over, locality first ([`place`] with the CPUs running other work
/// looked for in two steps): an idle CPU, nearest first (the kernel's idle
/// selection looks at the home's LLC, then its node, then the rest; an
/// idle CPU costs no other task); then, for a runner predicted late, a CPU
/// running other work in the home's NUMA node (`near_other`), and only
/// then one elsewhere (`far_other`). BPF: `claim_idle_for()`, then
/// `preempt_target()` near and far.
#[allow(clippy::too_many_arguments)]
pub fn place_near_first(
    policy: Policy,
    now: u64,
    tick_start: u64,
    home: HomeState,
    idle: Option<usize>,
    near_other: Option<usize>,
    far_other: Option<usize>,
    overrun: bool,
) -> Place {
    place(
        policy,
        now,
        tick_start,
        home,
        idle,
        near_other.or(far_other),
        overrun,
    )
}

/// Homes move: a tick CPU (allowed by its group) that took the runner is
/// its home from then on, as the Affinity scheduler moves a stolen region
/// to the stealer's queue, within the home's NUMA node (its memory stays
/// there; a steal across nodes helps one tick out), where that evens the
/// homes out ([`home_moves`]; `homed`: runners homed on `ran_on` and on
/// `home`). A non-tick CPU only helps out. BPF: `tick_running()`.
pub fn moved_home(
    home: usize,
    ran_on: usize,
    is_tick_cpu: bool,
    group_allows: bool,
    same_node: bool,
    homed: (u32, u32),
) -> usize {
    if ran_on != home && is_tick_cpu && group_allows && same_node && home_moves(homed.0, homed.1) {
        ran_on
    } else {
        home
    }
}

/// A runner still running or runnable at `now` >= its deadline has missed
/// that tick; the next tick starts whole periods later on the same grid
/// (SCHED_DEADLINE's replenishment), its deadline the first grid deadline
/// after `now`. Returns (tick start, deadline) of the next tick.
pub fn replenish(tick_start: u64, deadline: u64, period: u64, now: u64) -> (u64, u64) {
    let period = period.max(MIN_RUNNER_SLICE_NS);
    let k = 1 + elapsed(now, deadline) / period;
    (tick_start + k * period, deadline + k * period)
}

/// What a runner's wake-up is to its ticks ([`wake`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// Inside the tick in progress: the same tick, its deadline kept, not
    /// counted again (a server blocked mid-tick on a lock, a condition
    /// variable or a receive timeout).
    Continues,
    /// The next tick: its place on the group's period grid and its deadline.
    Starts { grid: u64, deadline: u64 },
}

/// A tick's identity comes from the group's period grid, not from each
/// wake-up (BPF: `grid_tick()`). `grid`: where the runner's tick in
/// progress started on the grid (None: it has none yet, or its tick did
/// not start at a wake-up: a new thread's); `done`: the tick has had the
/// CPU time its ticks usually take (7/8 of the runner's MSPT). Measured
/// from `grid`, a wake-up
/// - in the first half of the period continues the tick (blocked mid-tick
///   on a lock, a condition variable, a receive timeout);
/// - in the second half continues it too, unless its work looks done or
///   the wake-up is within an eighth of a period of the next grid point
///   (clocks read on different CPUs differ by a millisecond or two): then
///   it starts the next tick, early, and the phase moves an eighth of the
///   way to it (moved all the way, it followed a server's helper threads
///   that wake just before its clock);
/// - later, starts the next tick at the grid point before it; a timer
///   that fired late, or a runner that changed its phase, moves the phase
///   an eighth of the way. (Moving it all the way to a wake-up more than
///   half a period late put the next on-time wake-up in the first half of
///   the period: the late tick and the next one became one tick, with the
///   late one's deadline.)
///
/// A new tick's deadline is its wake-up plus the relative deadline, or its
/// grid point's when it starts early: a wake-up in the second half of a
/// tick whose work looked done but was not (the last part of a tick
/// blocked mid-tick) gave the next tick a deadline up to half a period
/// early, and the next tick's on-time wake-ups joined it (`vm/stats_follow_
/// the_period_grid` counted 4 x the blocking runners' misses). The grid
/// never makes a deadline earlier than the wake-up's own. (A late tick blocked
/// across its deadline and woken just after a grid point is taken for the
/// next tick: its miss is not counted.)
pub fn wake(grid: Option<u64>, period: u64, rel_deadline: u64, now: u64, done: bool) -> Wake {
    let period = period.max(MIN_RUNNER_SLICE_NS);
    let starts = |grid: u64| Wake::Starts {
        grid,
        deadline: grid.max(now) + rel_deadline,
    };
    let Some(grid) = grid else {
        return starts(now);
    };
    if now < grid {
        return Wake::Continues; // a tick that started early on the grid
    }
    let d = now - grid;
    if d < period / 2 || (d < period - period / 8 && !done) {
        return Wake::Continues;
    }
    // the grid point at or before the wake-up, or the next one: early
    let point = grid + (d + period / 8) / period * period;
    let point = if d < period { grid + period } else { point };
    if now < point {
        return starts(point - (point - now) / 8);
    }
    starts(point + (now - point) / 8)
}

/// A thread's wake-up (BPF: `grid_tick()`): as [`wake`], except that a
/// guessed phase gives way. The first wake-up that puts a thread on the
/// grid only guesses its phase (a server's threads start at a latch or a
/// barrier, not at a tick); the next wake-up a quarter period or more
/// after it starts a tick there, with the grid all the way at it. (Kept,
/// a guess up to half a period behind the server's phase locked in:
/// each on-time wake-up fell in the guessed tick's second half and
/// continued it, its deadline passed while the runner worked, and the
/// replenished tick kept the guessed phase: `vm/stats_follow_the_period_
/// grid` counted 5 misses in a row where the server missed none.)
pub fn thread_wake(
    grid: Option<u64>,
    guess: bool,
    period: u64,
    rel_deadline: u64,
    now: u64,
    done: bool,
) -> Wake {
    let period = period.max(MIN_RUNNER_SLICE_NS);
    match grid {
        Some(g) if guess && now >= g && now - g >= period / 4 => Wake::Starts {
            grid: now,
            deadline: now + rel_deadline,
        },
        _ => wake(grid, period, rel_deadline, now, done),
    }
}

/// Where a process's step that starts at `now` (a wake-up after a quiet
/// spell, [`ProcessTick`]) puts its grid, `from` the grid of its tick in
/// progress (BPF: `step_grid()`): within a quarter period of a grid point
/// (clocks read on different CPUs, a helper that wakes just before the
/// clock, a timer the emulated guest fired 9 ms late) the phase moves an
/// eighth of the way, as [`wake`] moves it; farther off, the grid was
/// wrong (set at a start-up wake-up, or the server changed its phase) and
/// the step sets it.
pub fn step_grid(from: u64, period: u64, now: u64) -> u64 {
    let point = from + (now - from + period / 2) / period * period;
    if now < point {
        if point - now <= period / 4 {
            point - (point - now) / 8
        } else {
            now
        }
    } else if now - point <= period / 4 {
        point + (now - point) / 8
    } else {
        now
    }
}

/// A process's tick that a wake-up starts at `now`, the one before it
/// started at `prev` ([`ProcessTick::started`]), is a late step when it
/// came more than 1.5 periods after the one before, as the servers count
/// their own late steps (minetest's and OpenTTD's logs). Returns that
/// latest on-time start. Its tick is missed (BPF: `late_step()`,
/// `account_late_step()`): a step whose wake-up came late (the timer it
/// slept on fired late, its server ran behind) works to a deadline of its
/// own and ends in time, so only its start shows it (minetest: 0.08
/// misses per late step without this). Measured from the step before, not
/// from the grid: minetest stepped every 60 ms on a 50 ms grid, whose
/// phase follows the steps an eighth at a time, and from the grid 5 x its
/// late steps were counted.
///
/// Only a step that ends a quiet spell of the process which began by the
/// next step's time (`quiet_from`, [`ProcessTick::idle_since`]): busy past
/// it (a long step, or catch-up steps back to back without a sleep, as
/// OpenTTD runs them), the lateness is the server's own, a miss when past
/// its deadline. (Unseen, OpenTTD's catch-up steps made the wake-up after
/// them look 1.5 periods after the step before: 32 of 196 misses in a
/// probe.)
pub fn late_step(prev: Option<u64>, quiet_from: u64, period: u64, now: u64) -> Option<u64> {
    let period = period.max(MIN_RUNNER_SLICE_NS);
    let prev = prev?;
    let limit = prev + period + period / 2;
    (now > limit && quiet_from <= prev + period).then_some(limit)
}

/// The tick of one process in a `tick = "process"` group (BPF: `struct
/// proc_tick`): a server whose step spans threads (a clock, a loop thread
/// that wakes several times per step, helpers it waits on) has one tick
/// per period, not one per thread. A step of a tick server is a busy spell
/// of its threads: a wake-up that ends a quiet spell of the whole process
/// (a quarter period or more with none of its threads awake, [`awake`])
/// at least an eighth of a period into its tick starts the next, and sets
/// the phase when the grid is far off ([`step_grid`]). Any other wake-up
/// starts one only near the next grid point or later ([`wake`] with its
/// work not done): the CPU time of the process's threads says nothing of
/// a step's end (the process's in all took the last thread's mid-step
/// wake-up for the next step; a thread's own part, learnt from ticks split
/// that way, did too; the grid, guessed at a start-up wake-up and moved an
/// eighth per tick, stayed up to 30 ms off the steps for a second, and
/// `vm/stats_follow_the_period_grid` counted 7-12 misses for 2). The
/// thread that starts a tick counts it, the others join it and work to
/// its deadline; a miss is counted once, whichever thread is late, and a
/// step that starts late is one ([`late_step`]). Its helpers (threads of
/// little CPU time, [`helper`]) only join.
///
/// [`awake`]: ProcessTick::awake
/// [`helper`]: ProcessTick::helper
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ProcessTick {
    /// Where its tick in progress started on the grid (None: none yet).
    pub grid: Option<u64>,
    pub deadline: u64,
    /// The last tick whose miss was counted.
    pub missed_grid: u64,
    /// When its tick in progress started: a wake-up, or a replenishment
    /// ([`late_step`]'s `prev`).
    pub started: Option<u64>,
    /// Its stepping threads awake (runnable or running), and since when
    /// none is.
    pub busy: u64,
    pub idle_since: u64,
    /// The MSPT of its heaviest thread, that thread, and when it last woke.
    pub heavy: u64,
    pub heavy_tid: u32,
    pub heavy_at: u64,
}

impl ProcessTick {
    /// Thread `tid`, whose ticks usually take `mspt` of CPU time, wakes at
    /// `now` (BPF: `proc_helper()`): is it a helper of the step, under an
    /// eighth of the heaviest thread's CPU time (a main thread's
    /// housekeeping, a connection thread's send, a clock)? A helper joins
    /// the tick in progress ([`join`]), never starts one, and is not
    /// counted [`awake`]: minetest's main and connection threads wake about
    /// every 50 ms on clocks of their own beside a step loop that ran every
    /// 60 ms in a loaded guest, and their wake-ups started ticks too (1.22
    /// ticks per step). A helper's tick counts no miss and starts no tick
    /// when it is replenished (BPF: `account_miss()`, `replenish()`; one
    /// that woke just before the deadline inherits a spent one, and a step
    /// whose helper is late ends late in a stepping thread, which counts
    /// it). The heaviest thread is noted as it wakes; not seen for 4
    /// periods (paused, exited), the next thread to wake takes its place.
    ///
    /// [`join`]: ProcessTick::join
    /// [`awake`]: ProcessTick::awake
    pub fn helper(&mut self, tid: u32, mspt: u64, now: u64, period: u64) -> bool {
        if tid == self.heavy_tid
            || mspt >= self.heavy
            || now.saturating_sub(self.heavy_at) > 4 * period
        {
            self.heavy = mspt;
            self.heavy_tid = tid;
            self.heavy_at = now;
            return false;
        }
        mspt * 8 < self.heavy
    }

    /// A helper, or a new thread, at `now` (BPF: `proc_join()`): the tick
    /// in progress and its deadline, or with none in progress (none yet,
    /// or past its deadline) a tick of its own off the grid (`None`), due
    /// `rel_deadline` later, not counted.
    pub fn join(&self, rel_deadline: u64, now: u64) -> (Option<u64>, u64) {
        match self.grid {
            Some(grid) if now < self.deadline => (Some(grid), self.deadline),
            _ => (None, now + rel_deadline),
        }
    }

    /// A thread is awake from `now` on (BPF: `proc_awake()`): did it wake
    /// the process after a quarter period or more asleep in all?
    pub fn awake(&mut self, now: u64, period: u64) -> bool {
        self.busy += 1;
        self.busy == 1 && now.saturating_sub(self.idle_since) >= period / 4
    }

    /// A thread goes to sleep at `now` (BPF: `proc_asleep()`).
    pub fn asleep(&mut self, now: u64) {
        self.busy = self.busy.saturating_sub(1);
        if self.busy == 0 {
            self.idle_since = now;
        }
    }

    /// A thread wakes at `now` (BPF: `proc_wake()`): the tick it works
    /// for (grid, deadline), and whether this wake-up started it (a tick to
    /// count). `fresh`: it ended a quiet spell of the process ([`awake`]).
    /// `own`: the thread's own last tick (grid, deadline, and whether its
    /// part of the work looked done): a thread blocked part-way through its
    /// work for an earlier tick keeps that tick, as a thread-ticked runner
    /// does, while the process has moved on.
    ///
    /// [`awake`]: ProcessTick::awake
    pub fn wake(
        &mut self,
        period: u64,
        rel_deadline: u64,
        now: u64,
        own: Option<(u64, u64, bool)>,
        fresh: bool,
    ) -> (u64, u64, bool) {
        let period = period.max(MIN_RUNNER_SLICE_NS);
        let starts = match self.grid {
            Some(from) if fresh && now >= from + period / 8 => {
                let grid = step_grid(from, period, now);
                Wake::Starts {
                    grid,
                    deadline: grid.max(now) + rel_deadline,
                }
            }
            _ => {
                if let Some((grid, deadline, false)) = own
                    && self.grid != Some(grid)
                    && wake(Some(grid), period, rel_deadline, now, false) == Wake::Continues
                {
                    return (grid, deadline, false);
                }
                wake(self.grid, period, rel_deadline, now, false)
            }
        };
        match starts {
            Wake::Continues => (self.grid.unwrap_or(now), self.deadline, false),
            Wake::Starts { grid, deadline } => {
                self.begin(grid, deadline, now);
                (grid, deadline, true)
            }
        }
    }

    /// A thread working for the tick at `grid` is still at work past its
    /// deadline (BPF: `account_miss()`): count it, unless that tick's
    /// miss, or a later one's, is counted already.
    pub fn miss(&mut self, grid: u64) -> bool {
        if grid <= self.missed_grid {
            return false;
        }
        self.missed_grid = grid;
        true
    }

    /// A thread still running at its deadline, in the tick at `from`
    /// (BPF: `replenish()`): the process's next tick is [`replenish`]'s,
    /// unless another thread moved it on already. Returns the tick the
    /// thread works for next, and whether it is counted here.
    pub fn replenish(
        &mut self,
        from: u64,
        deadline: u64,
        period: u64,
        now: u64,
    ) -> (u64, u64, bool) {
        let (grid, next) = replenish(from, deadline, period, now);
        if self.grid != Some(from) {
            return (self.grid.unwrap_or(grid), self.deadline, false);
        }
        // started now, not at its grid point (a period and more ago after
        // a run of late ticks back to back, as OpenTTD runs them): the
        // on-time wake-up after the run is no late step
        self.begin(grid, next, now);
        (grid, next, true)
    }

    /// A thread of the process still at work at `now`, in the tick at
    /// `from` due at `deadline`, having had `tick_runtime` of CPU time in
    /// it where a step usually takes it `step_cpu` (BPF: `proc_roll_over()`,
    /// at each scheduler tick; `step_cpu` is learnt only from steps that
    /// began at a wake-up and ended in a sleep, 0: none yet): past the next
    /// grid point, before its deadline, a step's work done, the tick rolls
    /// over into the next, due `rel_deadline` after that grid point,
    /// counted, and the one before ends in time. A server that runs late
    /// steps back to back to catch up (OpenTTD) runs several steps in one
    /// busy spell: as one tick it ended past its deadline (OpenTTD: 4.96
    /// misses per late tick it logged) and ticks per second read below the
    /// server's steps (0.84-0.96); rolled over once per spell, a catch-up of
    /// 10-25 periods was still a miss every period after the first (5.44
    /// per late tick). A process that never sleeps has no such step and
    /// never rolls over: missed every period, as the grid says. A roll-over
    /// more than 1.5 periods after the tick before started is a late step
    /// ([`late_step`] with no quiet spell: the thread waited for a CPU
    /// mid-spell, and the server logs that step late though the spell's
    /// deadlines are kept). Only in a group whose deadline is longer than
    /// its period. Returns the tick it works for next (grid, deadline) when
    /// it rolled over, and [`late_step`]'s latest on-time start when that
    /// is a late step.
    #[allow(clippy::too_many_arguments)]
    pub fn roll_over(
        &mut self,
        from: u64,
        deadline: u64,
        period: u64,
        rel_deadline: u64,
        now: u64,
        tick_runtime: u64,
        step_cpu: u64,
    ) -> Option<(u64, u64, Option<u64>)> {
        // with a deadline of one period, a tick that began at a wake-up
        // after its grid point is due just after the next one: rolling
        // over there counted 54-61 misses for none in
        // vm/stats_follow_the_period_grid's process case
        let next = from + period.max(MIN_RUNNER_SLICE_NS);
        if rel_deadline <= period
            || self.grid != Some(from)
            || now < next
            || now >= deadline
            || step_cpu == 0
            || !tick_done(tick_runtime, step_cpu)
        {
            return None;
        }
        let late = late_step(self.started, 0, period, now);
        self.begin(next, next + rel_deadline, now);
        Some((next, next + rel_deadline, late))
    }

    /// A thread's usual CPU time in a step (`step_cpu` of [`roll_over`]),
    /// as a tick it worked for ends (BPF: `proc_tick_join()`): learnt from
    /// `tick_runtime` only when that tick began at a wake-up (`began_woken`)
    /// and the thread slept before the next (`woke`): a tick ended by a
    /// roll-over or a replenishment was part of a longer spell.
    pub fn learn_step_cpu(step_cpu: u64, tick_runtime: u64, began_woken: bool, woke: bool) -> u64 {
        if began_woken && woke {
            ewma(step_cpu, tick_runtime)
        } else {
            step_cpu
        }
    }

    fn begin(&mut self, grid: u64, deadline: u64, start: u64) {
        self.grid = Some(grid);
        self.deadline = deadline;
        self.started = Some(start);
    }
}

/// A runner's learnt CPU time per tick moves a quarter of the way to each
/// new `sample` (BPF: `ewma()`); the first sample is taken whole.
pub fn ewma(avg: u64, sample: u64) -> u64 {
    if avg == 0 {
        sample
    } else {
        (avg * 3 + sample) / 4
    }
}

/// A thread's wake-up finds the work of its tick done ([`wake`]'s `done`,
/// BPF: `wake_done()`): it had its usual CPU time, or the tick began at a
/// replenishment (the CPU time since was the late tick's; the wake-up that
/// follows its sleep begins new work). Kept going, a replenished tick took
/// the next on-time wake-up for its own, and a tick that woke late (an
/// emulated timer fired 34 ms late) passed its deadline's offset on to
/// every replenished tick after it: 24 misses in a row where the server
/// kept its ticks.
pub fn wake_done(tick_runtime: u64, mspt: u64, replenished: bool) -> bool {
    tick_done(tick_runtime, mspt) || replenished
}

/// Has the tick in progress had the CPU time its runner's ticks usually
/// take ([`wake`]'s `done`)? With no history yet, yes.
pub fn tick_done(tick_runtime: u64, mspt: u64) -> bool {
    tick_runtime * 8 >= mspt * 7
}

/// Other work's share of a CPU that runners keep busy (bpf/intf.h): at
/// most 5 % of it, as the kernel's RT throttling leaves.
pub const OTHER_SHARE_PERIOD_NS: u64 = crate::bpf::intf::tick_consts_OTHER_SHARE_PERIOD_NS as u64;
pub const OTHER_SHARE_SLICE_NS: u64 = crate::bpf::intf::tick_consts_OTHER_SHARE_SLICE_NS as u64;
const _: () = assert!(
    OTHER_SHARE_SLICE_NS * 20 <= OTHER_SHARE_PERIOD_NS,
    "at most 5 %"
);

/// Is other work owed this CPU before any runner? The head of the fair
/// queue (`head_queued_at`: when it was queued, None: the queue is empty)
/// has waited [`OTHER_SHARE_PERIOD_NS`], and no other work started here
/// for as long (BPF: `other_owed()`).
pub fn other_owed(other_at: u64, now: u64, head_queued_at: Option<u64>) -> bool {
    elapsed(now, other_at) > OTHER_SHARE_PERIOD_NS
        && head_queued_at.is_some_and(|q| elapsed(now, q) > OTHER_SHARE_PERIOD_NS)
}

/// Which fair queue a CPU takes other work from: `heads[0]` is its own
/// LLC's, the rest those nearby in the order it looks at them (when each
/// head was queued, None: empty). Its own, unless that head has waited
/// more than `slice` (or there is none) and a queue nearby has a head
/// queued more than `slice` earlier than the best so far: an LLC short of
/// CPUs for other work does not keep its tasks waiting while the rest of
/// the machine runs newer ones. `looked` counts the queues nearby looked
/// at (BPF: `take_other()`, at most MAX_PROBES of them).
pub fn take_other_from(
    heads: &[Option<u64>],
    now: u64,
    slice: u64,
    looked: &mut usize,
) -> Option<usize> {
    let mut best = heads.first().copied().flatten().map(|at| (0, at));
    if best.is_some_and(|(_, at)| elapsed(now, at) <= slice) {
        return Some(0);
    }
    for (q, head) in heads.iter().enumerate().skip(1).take(MAX_PROBES) {
        *looked += 1;
        if let Some(at) = *head
            && best.is_none_or(|(_, b)| before(at.wrapping_add(slice), b))
        {
            best = Some((q, at));
        }
    }
    best.map(|(q, _)| q)
}

/// Which task of a fair queue a CPU takes, given the queue in key order as
/// (key, whether it last ran on this CPU and may run here): the first that
/// last ran here among those within `slice` of the head's key (at most
/// MAX_PROBES looked at), else the head. A CPU hog preempted by a runner
/// so resumes on its CPU instead of moving at every slice's end; taken
/// out of order, it is at most a slice ahead of its turn. A share `owed`
/// to other work ([`other_owed`]) goes to the head, which waited for it
/// (BPF: `take_other()`, `move_local_other()`).
pub fn pick_other(queue: &[(u64, bool)], slice: u64, owed: bool) -> Option<usize> {
    let (head, _) = *queue.first()?;
    if owed {
        return Some(0);
    }
    let until = head.wrapping_add(slice);
    queue
        .iter()
        .take(MAX_PROBES)
        .take_while(|&&(key, _)| !before(until, key))
        .position(|&(_, here)| here)
        .or(Some(0))
}

/// The shortest lend worth a dispatch (bpf/intf.h).
pub const MIN_LEND_NS: u64 = crate::bpf::intf::tick_consts_MIN_LEND_NS as u64;
/// The slice of a task that keeps its CPU (bpf/intf.h: the kernel's
/// `SCX_SLICE_DFL`).
pub const KEEP_SLICE_NS: u64 = crate::bpf::intf::tick_consts_KEEP_SLICE_NS as u64;

/// How long a tick CPU may lend itself to other work before its next
/// runner's predicted wake-up (`next_wake`, None: none predicted or
/// already past): up to `run_tasks_buffer` before it, nothing within it,
/// a whole `other_slice` with no wake-up ahead (BPF: `lend_window()`).
pub fn lend_window(next_wake: Option<u64>, now: u64, buffer: u64, other_slice: u64) -> u64 {
    match next_wake.filter(|&w| before(now, w)) {
        None => other_slice,
        Some(w) => (w - now).saturating_sub(buffer),
    }
}

/// What happens to the task whose slice ended on a CPU where nothing else
/// was dispatched ([`keep_prev`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kept {
    /// It runs on with this fresh slice.
    Runs(u64),
    /// It goes back to the fair queue and the CPU idles until its runner
    /// wakes (`SCX_OPS_ENQ_LAST`).
    Leaves,
}

/// The task whose slice ended here, with nothing else to run, keeps the
/// CPU, except lent work on a tick CPU (`lent`: other work, past any owed
/// share) whose lend `window` has closed: it leaves, so the run-tasks
/// buffer holds, when it may run elsewhere (`may_leave`) and no higher
/// class waits for this CPU (leaving would hand the CPU to it and stop the
/// kernel's ext deadline server, which gives our tasks there their time).
/// Lent work that stays is clipped to its window (BPF: `keep_prev()`).
pub fn keep_prev(
    lent: bool,
    window: u64,
    other_slice: u64,
    may_leave: bool,
    higher_class_waits: bool,
) -> Kept {
    if !lent {
        return Kept::Runs(KEEP_SLICE_NS);
    }
    if window >= MIN_LEND_NS {
        return Kept::Runs(window.min(other_slice));
    }
    if may_leave && !higher_class_waits {
        Kept::Leaves
    } else {
        Kept::Runs(KEEP_SLICE_NS)
    }
}

/// A runner's slice, mirrored from bpf/intf.h.
pub const MIN_RUNNER_SLICE_NS: u64 = crate::bpf::intf::tick_consts_MIN_RUNNER_SLICE_NS as u64;
pub const RUNNER_QUANTUM_NS: u64 = crate::bpf::intf::tick_consts_RUNNER_QUANTUM_NS as u64;

/// A runner's slice ends at its deadline (never sooner than the minimum):
/// if it still runs then, [`replenish`] starts its next tick and it
/// competes again. Before that it may yield ([`yields`]).
pub fn runner_slice(deadline: u64, now: u64) -> u64 {
    elapsed(deadline, now).max(MIN_RUNNER_SLICE_NS)
}

/// The head a runner on a CPU takes turns with ([`yields`]): on a tick CPU
/// the head of that CPU's queue; a non-tick CPU has none, and the runner
/// spilled there keeps it: its home serves its own queue by turns, and a
/// turn here would move two runners between CPUs (the yielder back to its
/// home's queue, the head here), each move a lock of the other CPU's run
/// queue. `head`: the head of this tick CPU's queue, or of the runner's
/// home queue on a non-tick CPU (BPF traces it, to show it is not used).
pub fn turn_head(on_tick_cpu: bool, head: Option<u64>) -> Option<u64> {
    head.filter(|_| on_tick_cpu)
}

/// A runner with `key` (now) that has run `ran` since it got its CPU
/// yields it once that is a quantum, to a runner waiting for it
/// with an earlier key (`queued`: the head of the CPU's queue, see
/// [`turn_head`]; `global`: of the global queue), or to a runner parked in
/// the CPU's local queue (`parked`: a spill-over that raced with another
/// put it there; it waits for this CPU alone, so it gets its turn by the
/// quantum, whatever its key; a task pinned to the CPU is other work and
/// gets none).
/// BPF: `tick_tick()`.
pub fn yields(key: u64, ran: u64, queued: Option<u64>, global: Option<u64>, parked: bool) -> bool {
    // a waiting runner with an earlier key
    let goes_before = |h: Option<u64>| h.is_some_and(|k| before(k, key));
    ran >= RUNNER_QUANTUM_NS && (goes_before(queued) || goes_before(global) || parked)
}

#[cfg(test)]
#[path = "dispatch_tests.rs"]
mod tests;

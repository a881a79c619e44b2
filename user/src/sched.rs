//! The rustland loop: take what the BPF side queued, classify it, and
//! carry out the policy (`policy.rs`): runners to the tick CPU their poll
//! picked, with vtime = deadline; other work to a non-tick CPU, or lent to
//! free tick CPUs through rustland's shared queue.

use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::mem::MaybeUninit;
use std::time::{Duration, Instant};

use anyhow::Result;
use libbpf_rs::OpenObject;
use log::warn;
use scx_tick::config::plan::Plan;
use scx_tick::model::dispatch;
use scx_tick::output::intervals::Intervals;
use scx_tick::output::json::JsonSink;
use scx_tick::output::reporter::Reporter;
use scx_tick::output::stats::{Counters, GroupCounters};
use scx_utils::UserExitInfo;

use crate::bpf::{BpfScheduler, DispatchedTask, QueuedTask, RL_CPU_ANY};
use crate::classify::{Classifier, Kind};
use crate::output::NonBlocking;
use crate::policy::{
    ClockOffset, EdfQueues, How, Lender, OtherDest, Pid, Ran, Runner, Runners, TickOutcome,
};

/// sched_ext's SCX_ENQ_WAKEUP: the enqueue of a task that was asleep.
const SCX_ENQ_WAKEUP: u64 = 1;

/// CLOCK_MONOTONIC in ns: deadlines and wake times, as tick runners see them.
fn now_ns() -> u64 {
    let t = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC)
        .expect("CLOCK_MONOTONIC is always readable");
    t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64
}

/// Still running or runnable? (The only way userspace learns that a runner
/// it sent has gone to sleep: rustland reports enqueues, not sleeps.)
fn runnable(pid: Pid) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rfind(')')
                .and_then(|i| s[i + 1..].trim_start().chars().next())
        })
        == Some('R')
}

/// rustland locks all our memory right after it attaches. Faulting in file
/// pages then can wait for I/O whose kernel workers are queued to this very
/// process, which is stuck in mlockall: a stall until the watchdog fires
/// (seen in the test guest, whose root is 9p). Locking before attaching
/// does the faulting while the kernel's scheduler still runs everything.
fn lock_memory_now() -> Result<()> {
    let unlimited = libc::rlimit {
        rlim_cur: libc::RLIM_INFINITY,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: plain syscalls on our own process with valid arguments.
    let ok = unsafe {
        libc::setrlimit(libc::RLIMIT_MEMLOCK, &unlimited) == 0
            && libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) == 0
    };
    if !ok {
        anyhow::bail!(
            "locking scx_tick_user's memory before attaching: {}",
            std::io::Error::last_os_error()
        );
    }
    Ok(())
}

fn thread_exists(pid: Pid) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// The CPUs `pid` may run on (asked only for tasks rustland reports as
/// allowed on fewer CPUs than are online).
fn affinity(pid: Pid) -> Option<Vec<usize>> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; the kernel fills it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(pid, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return None;
        }
        Some(
            (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| libc::CPU_ISSET(c, &set))
                .collect(),
        )
    }
}

pub struct Sched<'a> {
    bpf: BpfScheduler<'a>,
    plan: &'a Plan,
    queues: EdfQueues,
    runners: Runners,
    classifier: Classifier,
    /// Each group's home CPUs as indices into the tick CPUs.
    group_homes: Vec<Vec<usize>>,
    other_cpus: Vec<usize>,
    other_rr: usize,
    nr_online: u64,
    lender: Lender,
    /// Tick CPUs (by index) a runner with a narrowed affinity may use.
    runner_masks: HashMap<Pid, Vec<bool>>,
    /// Other work the dispatch ring had no room for: sent next round.
    backlog: VecDeque<(QueuedTask, bool)>,
    ring_full: u64,
    clock: ClockOffset,
    last_ran_at: u64,
    /// The BPF mode's counters, kept here: same names, same meaning.
    pub counters: Counters,
    pub groups: Vec<GroupCounters>,
    print_every: Option<Duration>,
    pub json: Option<JsonSink>,
    pub out: NonBlocking,
    verbose: bool,
    /// The admission check's last verdict, warned about when it changes.
    last_admission: Option<String>,
}

impl<'a> Sched<'a> {
    pub fn init(plan: &'a Plan, open_object: &'a mut MaybeUninit<OpenObject>) -> Result<Sched<'a>> {
        let group_homes = plan
            .groups
            .iter()
            .map(|g| {
                g.home_cpus
                    .iter()
                    .filter_map(|c| plan.tick_cpus.iter().position(|t| t == c))
                    .collect()
            })
            .collect();
        let online = scx_tick::model::topology::Machine::read()?;
        let other_cpus: Vec<usize> = online
            .cpus
            .iter()
            .map(|c| c.id)
            .filter(|c| !plan.tick_cpus.contains(c))
            .collect();
        // scx_tick::run::userspace::check_args refused groups of threads selected by name
        let groups: Vec<&std::path::Path> = plan
            .groups
            .iter()
            .filter_map(|g| match &g.runners {
                scx_tick::config::plan::Runners::Cgroup(p) => Some(p.as_path()),
                scx_tick::config::plan::Runners::Threads(_) => None,
            })
            .collect();
        let classifier = Classifier::new(&plan.kernel.cgroup_root, &groups);
        let policy = dispatch::Policy {
            work_stealing: plan.work_stealing,
            steal_threshold_ns: plan.steal_threshold_ns,
        };
        // files are opened before rustland forbids new mappings
        let stdout = NonBlocking::reopen(1);
        // `--stats-json -`: stdout carries only JSON, the live view goes to stderr
        let o = &plan.output;
        let json_to_stdout = o.stats_json.as_deref() == Some(std::path::Path::new("-"));
        let out = if json_to_stdout {
            NonBlocking::reopen(2)
        } else {
            stdout.clone()
        };
        let json = match o.stats_json.as_deref() {
            Some(_) if json_to_stdout => Some(
                JsonSink::from_writer(Box::new(stdout)).histograms(!o.stats_json_no_histograms),
            ),
            Some(p) => Some(
                JsonSink::open(p, o.stats_json_append)?.histograms(!o.stats_json_no_histograms),
            ),
            None => None,
        };
        let nr_online = online.cpus.len() as u64;
        lock_memory_now()?;
        let bpf = BpfScheduler::init(
            open_object,
            None,
            plan.kernel.exit_dump_len,
            false, // every task: tick CPUs are ours to keep
            o.verbose > 1,
            false, // no built-in idle shortcut: every wakeup is decided here
            false,
            plan.slice_ns,
            "scx_tick_user",
        )?;
        Ok(Sched {
            bpf,
            plan,
            queues: EdfQueues::new(plan.tick_cpus.len(), policy),
            runners: Runners::default(),
            classifier,
            group_homes,
            other_cpus,
            other_rr: 0,
            nr_online,
            lender: Lender::new(plan.tick_cpus.len()),
            runner_masks: HashMap::new(),
            backlog: VecDeque::new(),
            ring_full: 0,
            last_admission: None,
            clock: ClockOffset::default(),
            last_ran_at: 0,
            counters: Counters::default(),
            groups: vec![GroupCounters::default(); plan.groups.len()],
            print_every: (o.stats > 0.0).then(|| Duration::from_secs_f64(o.stats)),
            json,
            out,
            verbose: o.verbose > 0,
        })
    }

    pub fn bounced(&mut self) -> u64 {
        *self.bpf.nr_bounce_dispatches_mut()
    }

    pub fn congested(&mut self) -> u64 {
        *self.bpf.nr_sched_congested_mut()
    }

    /// Hand a decision to rustland; false when its ring is full (counted,
    /// reported with the statistics: logging here could block).
    fn send(&mut self, t: DispatchedTask) -> bool {
        let ok = self.bpf.dispatch_task(&t).is_ok();
        self.ring_full += !ok as u64;
        ok
    }

    /// Tick CPU indices a task allowed on fewer than all CPUs may use.
    fn tick_mask(&self, cpus: &[usize]) -> Vec<bool> {
        self.plan
            .tick_cpus
            .iter()
            .map(|c| cpus.contains(c))
            .collect()
    }

    /// A runner's enqueue: tick bookkeeping, then into its EDF queue.
    fn enqueue_runner(&mut self, t: &QueuedTask, g: usize, now: u64) -> bool {
        // where its affinity lets it run: its home CPUs, other tick CPUs
        // (the global queue), or no tick CPU at all (then it is other work)
        let mask = (t.nr_cpus_allowed < self.nr_online)
            .then(|| affinity(t.pid))
            .flatten()
            .map(|cpus| self.tick_mask(&cpus));
        let homes: Vec<usize> = match &mask {
            Some(m) => self.group_homes[g]
                .iter()
                .copied()
                .filter(|&i| m[i])
                .collect(),
            None => self.group_homes[g].clone(),
        };
        let global = homes.is_empty();
        if global && !mask.as_ref().is_some_and(|m| m.contains(&true)) {
            return false;
        }
        match mask {
            Some(m) => self.runner_masks.insert(t.pid, m),
            None => self.runner_masks.remove(&t.pid),
        };
        let fresh = t.exec_runtime == 0 && t.flags & SCX_ENQ_WAKEUP != 0;
        let ran = self.clock.mono(t.start_ts).zip(self.clock.mono(t.stop_ts));
        // a tick starts at the wake-up (BPF's stamp), not when we see it:
        // the time it waited for this scheduler is lateness too
        let at = match self.clock.mono(t.wake_ts) {
            Some(w) if fresh => w.min(now),
            _ => now,
        };
        let homes = if global { &self.group_homes[g] } else { &homes };
        let e = self.runners.enqueue(
            t.pid,
            g,
            homes,
            self.plan.groups[g].deadline_ns,
            fresh,
            at,
            ran.map(|(start, stop)| Ran { start, stop }),
        );
        if let Some(o) = e.closed {
            self.account(o);
        }
        if e.tick {
            self.counters.ticks += 1;
            self.groups[g].ticks += 1;
        }
        let r = Runner {
            pid: t.pid,
            enq_cnt: t.enq_cnt,
            flags: t.flags,
            deadline: e.info.deadline,
            wake_at: e.info.wake_at,
        };
        self.queues.push((!global).then_some(e.info.home), r);
        true
    }

    /// `pid` is not (or no longer) a runner: nothing of it may stay queued
    /// or hold a tick CPU.
    fn not_a_runner(&mut self, pid: Pid) {
        if self.runners.by_pid.remove(&pid).is_some() {
            self.queues.forget(pid);
            self.queues.left_cpu(pid);
            self.runner_masks.remove(&pid);
        }
    }

    /// One round: drain the queued tasks, poll free tick CPUs, place others.
    fn schedule(&mut self) {
        let now = now_ns();
        let ran_at = self
            .bpf
            .skel
            .maps
            .bss_data
            .as_ref()
            .map_or(0, |b| b.usersched_last_run_at);
        // only a new stamp is a sample: between two stamps we may have
        // run on without being switched out
        if ran_at != self.last_ran_at {
            self.clock.sample(now, ran_at);
            self.last_ran_at = ran_at;
        }
        let mut others = std::mem::take(&mut self.backlog);
        let had_backlog = !others.is_empty();
        while let Ok(Some(t)) = self.bpf.dequeue_task() {
            if had_backlog {
                // a newer enqueue replaces one still waiting to be sent
                others.retain(|(o, _)| o.pid != t.pid);
            }
            let kind = self.classifier.kind(t.pid, now);
            let runner = match kind {
                Kind::Runner(g) => self.enqueue_runner(&t, g, now),
                _ => false,
            };
            if !runner {
                self.not_a_runner(t.pid);
                others.push_back((t, kind == Kind::Kernel));
            }
        }

        // poll checks which runners left their tick CPU only while some wait
        let polled = self.queues.held() > 0;
        let masks = &self.runner_masks;
        let allowed = |pid: Pid, i: usize| masks.get(&pid).is_none_or(|m| m[i]);
        for s in self.queues.poll(now, &mut runnable, &allowed) {
            let r = s.runner;
            let group = self.runners.by_pid.get(&r.pid).map(|i| i.group);
            let slice_ns = group.map_or(self.plan.slice_ns, |g| self.plan.groups[g].deadline_ns);
            let ok = self.send(DispatchedTask {
                pid: r.pid,
                cpu: self.plan.tick_cpus[s.cpu_idx] as i32,
                flags: r.flags,
                slice_ns,
                vtime: r.deadline,
                enq_cnt: r.enq_cnt,
            });
            if !ok {
                // back where it waited: its home queue, or the global one
                let home = self.runners.by_pid.get(&r.pid).map(|i| i.home);
                self.queues.push(home.filter(|_| s.how != How::Global), r);
                continue;
            }
            match s.how {
                How::Local => self.counters.dispatch_local += 1,
                How::Global => self.counters.dispatch_global += 1,
                How::Stolen => {
                    self.counters.dispatch_stolen += 1;
                    if let Some(g) = group {
                        self.groups[g].steals += 1;
                    }
                }
            }
        }
        self.counters.steals_refused = self.queues.steals_refused;

        if !others.is_empty() {
            let nr = self.plan.tick_cpus.len();
            let mid_tick = self.plan.mid_tick_tasks;
            if mid_tick && !polled {
                self.queues.refresh(&mut runnable);
            }
            let free: Vec<bool> = (0..nr).map(|i| mid_tick && self.queues.free(i)).collect();
            let wakes = self.runners.next_wakes(nr);
            while let Some((t, kernel)) = others.pop_front() {
                let cpus = (t.nr_cpus_allowed < self.nr_online)
                    .then(|| affinity(t.pid))
                    .flatten();
                let may_run = |cpu: usize| cpus.as_ref().is_none_or(|c| c.contains(&cpu));
                let tick_cpus = &self.plan.tick_cpus;
                let prev = t.cpu as usize;
                // a task that may run on one CPU only goes there, lent or not
                let dest = if t.nr_cpus_allowed == 1 {
                    OtherDest::Other
                } else {
                    self.lender.place(
                        now,
                        &free,
                        &wakes,
                        self.plan.run_tasks_buffer_ns,
                        self.plan.slice_ns,
                        &|i| may_run(tick_cpus[i]),
                    )
                };
                let (cpu, slice_ns) = match dest {
                    OtherDest::Lend { cpu_idx, slice_ns } => (tick_cpus[cpu_idx] as i32, slice_ns),
                    OtherDest::Other if t.nr_cpus_allowed == 1 => (prev as i32, self.plan.slice_ns),
                    // A kernel thread goes to whichever CPU takes work first.
                    // Sent to one CPU that is being taken offline (inactive,
                    // still in the kernel's sched_ext state while the hotplug
                    // waits for an RCU grace period), the RCU kthread was
                    // stranded there and the hotplug with it: a stall.
                    OtherDest::Other if kernel => (RL_CPU_ANY, self.plan.slice_ns),
                    OtherDest::Other if self.other_cpus.contains(&prev) && may_run(prev) => {
                        (prev as i32, self.plan.slice_ns)
                    }
                    OtherDest::Other => {
                        // the next non-tick CPU it may use; none: where it was
                        let n = self.other_cpus.len();
                        let pick = (1..=n)
                            .map(|k| self.other_cpus[(self.other_rr + k) % n])
                            .find(|&c| may_run(c));
                        self.other_rr = (self.other_rr + 1) % n;
                        (pick.unwrap_or(prev) as i32, self.plan.slice_ns)
                    }
                };
                let ok = self.send(DispatchedTask {
                    pid: t.pid,
                    cpu,
                    flags: t.flags,
                    slice_ns,
                    vtime: now,
                    enq_cnt: t.enq_cnt,
                });
                if !ok {
                    self.backlog.push_back((t, kernel));
                    self.backlog.extend(others.drain(..));
                    break;
                }
                self.counters.dispatch_other += 1;
                self.counters.lends += matches!(dest, OtherDest::Lend { .. }) as u64;
            }
        }

        self.bpf
            .notify_complete((self.queues.held() + self.backlog.len()) as u64);
    }

    /// A finished tick, counted as the BPF mode counts it.
    fn account(&mut self, o: TickOutcome) {
        let g = &mut self.groups[o.group];
        self.counters.late_starts += g.add_start(o.lateness_ns) as u64;
        if let Some(over) = o.overshoot_ns {
            g.add_miss(over);
            self.counters.misses += 1;
        }
    }

    /// Forget runners that exited and cached answers nobody asks for.
    fn housekeeping(&mut self) {
        let now = now_ns();
        self.clock.roll();
        self.classifier.expire(now);
        let gone: Vec<Pid> = self
            .runners
            .by_pid
            .keys()
            .copied()
            .filter(|&p| !thread_exists(p))
            .collect();
        for pid in gone {
            self.not_a_runner(pid);
        }
        // the admission check, as the BPF mode's pinner makes it
        let load: Vec<(usize, f64, &[usize])> = self
            .plan
            .groups
            .iter()
            .enumerate()
            .map(|(g, plan)| {
                let runners = self
                    .runners
                    .by_pid
                    .values()
                    .filter(|r| r.group == g)
                    .count();
                let share = plan.cpu_share();
                (runners, share, self.group_homes[g].as_slice())
            })
            .collect();
        let verdict = scx_tick::run::pinning::admission(&load);
        if verdict != self.last_admission {
            if let Some(w) = &verdict {
                warn!("{w}");
            }
            self.last_admission = verdict;
        }
    }

    pub fn run(&mut self, reporter: &mut Reporter) -> Result<UserExitInfo> {
        let mut last_housekeeping = Instant::now();
        let mut intervals = Intervals::new(self.print_every, self.json.is_some(), &self.groups);
        while !self.bpf.exited() {
            self.schedule();
            if last_housekeeping.elapsed() >= Duration::from_secs(1) {
                self.housekeeping();
                last_housekeeping = Instant::now();
            }
            if intervals.due() {
                intervals.emit(
                    reporter,
                    &self.counters,
                    &self.groups,
                    &mut self.json,
                    |r, m| {
                        // NonBlocking never fails: it drops instead
                        let _ = r.write_live(&mut self.out, m, &[]);
                        if self.verbose {
                            let _ = writeln!(
                                self.out,
                                "  userspace: {} runners known, {} waiting, dispatch ring full {}x, clock offset {:?}, {}",
                                self.runners.by_pid.len(),
                                self.queues.held(),
                                self.ring_full,
                                self.clock,
                                self.counters.summary()
                            );
                        }
                    },
                );
            }
        }
        self.bpf.shutdown_and_report()
    }
}

//! The rustland loop: take what the BPF side queued, classify it, and
//! carry out the policy (`policy.rs`): runners to the tick CPU their poll
//! picked, with vtime = deadline; other work to a non-tick CPU, or lent to
//! free tick CPUs through rustland's shared queue.

use std::collections::VecDeque;
use std::mem::MaybeUninit;
use std::time::{Duration, Instant};

use anyhow::Result;
use libbpf_rs::OpenObject;
use log::warn;
use scx_tick::cli::RunArgs;
use scx_tick::config::Plan;
use scx_tick::dispatch;
use scx_tick::report::{JsonSink, Reporter};
use scx_tick::stats::{Counters, GroupCounters};
use scx_utils::UserExitInfo;

use crate::bpf::{BpfScheduler, DispatchedTask, QueuedTask, RL_CPU_ANY};
use crate::classify::Classifier;
use crate::policy::{
    ClockOffset, EdfQueues, How, OtherDest, Pid, Ran, Runner, Runners, TickOutcome, place_other,
};

/// CLOCK_MONOTONIC in ns: deadlines and wake times, as tick runners see them.
fn now_ns() -> u64 {
    scx_tick::workload::clock_ns(libc::CLOCK_MONOTONIC)
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
    /// Other work the dispatch ring had no room for: sent next round.
    backlog: VecDeque<QueuedTask>,
    clock: ClockOffset,
    /// The BPF mode's counters, kept here: same names, same meaning.
    pub counters: Counters,
    pub groups: Vec<GroupCounters>,
    print_every: Option<Duration>,
    json: Option<JsonSink>,
    verbose: bool,
}

impl<'a> Sched<'a> {
    pub fn init(
        plan: &'a Plan,
        args: &RunArgs,
        open_object: &'a mut MaybeUninit<OpenObject>,
    ) -> Result<Sched<'a>> {
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
        let online = scx_tick::topology::Machine::read()?;
        let other_cpus: Vec<usize> = online
            .cpus
            .iter()
            .map(|c| c.id)
            .filter(|c| !plan.tick_cpus.contains(c))
            .collect();
        let groups: Vec<&std::path::Path> =
            plan.groups.iter().map(|g| g.cgroup.as_path()).collect();
        let classifier = Classifier::new(&args.cgroup_root, &groups);
        let policy = dispatch::Policy {
            work_stealing: plan.work_stealing,
            steal_threshold_ns: plan.steal_threshold_ns,
        };
        // files are opened before rustland forbids new mappings
        let json = args.stats_json.as_deref().map(JsonSink::open).transpose()?;
        lock_memory_now()?;
        let bpf = BpfScheduler::init(
            open_object,
            None,
            args.exit_dump_len,
            false, // every task: tick CPUs are ours to keep
            args.verbose > 1,
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
            backlog: VecDeque::new(),
            clock: ClockOffset::default(),
            counters: Counters::default(),
            groups: vec![GroupCounters::default(); plan.groups.len()],
            print_every: (args.stats > 0.0).then(|| Duration::from_secs_f64(args.stats)),
            json,
            verbose: args.verbose > 0,
        })
    }

    pub fn bounced(&mut self) -> u64 {
        *self.bpf.nr_bounce_dispatches_mut()
    }

    pub fn congested(&mut self) -> u64 {
        *self.bpf.nr_sched_congested_mut()
    }

    fn send(&mut self, t: DispatchedTask) -> bool {
        match self.bpf.dispatch_task(&t) {
            Ok(()) => true,
            Err(e) => {
                warn!("dispatch ring full ({e}); retrying next round");
                false
            }
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
        self.clock.sample(now, ran_at);
        let mut others = std::mem::take(&mut self.backlog);
        while let Ok(Some(t)) = self.bpf.dequeue_task() {
            match self.classifier.group(t.pid, now) {
                Some(g) => {
                    let fresh = t.exec_runtime == 0;
                    let ran = self.clock.mono(t.start_ts).zip(self.clock.mono(t.stop_ts));
                    let e = self.runners.enqueue(
                        t.pid,
                        g,
                        &self.group_homes[g],
                        self.plan.groups[g].deadline_ns,
                        fresh,
                        now,
                        ran.map(|(start, stop)| Ran { start, stop }),
                    );
                    if let Some(o) = e.closed {
                        self.account(o);
                    }
                    if e.tick {
                        self.counters.ticks += 1;
                        self.groups[g].ticks += 1;
                    }
                    let info = e.info;
                    let r = Runner {
                        pid: t.pid,
                        enq_cnt: t.enq_cnt,
                        flags: t.flags,
                        deadline: info.deadline,
                        wake_at: info.wake_at,
                    };
                    self.queues.push(Some(info.home), r);
                }
                None => others.push_back(t),
            }
        }

        for s in self.queues.poll(now, &mut runnable) {
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
                self.queues
                    .push(self.runners.by_pid.get(&r.pid).map(|i| i.home), r);
                continue;
            }
            match s.how {
                How::Local => self.counters.dispatch_local += 1,
                How::Global => self.counters.dispatch_global += 1,
                How::Stolen => {
                    self.counters.dispatch_stolen += 1;
                    if let Some(g) = group {
                        self.groups[g].stolen += 1;
                    }
                }
            }
        }
        self.counters.steals_refused = self.queues.steals_refused;

        if !others.is_empty() {
            let nr = self.plan.tick_cpus.len();
            if self.plan.mid_tick_tasks {
                self.queues.refresh(&mut runnable);
            }
            let free: Vec<bool> = (0..nr).map(|i| self.queues.free(i)).collect();
            let wakes = self.runners.next_wakes(nr);
            while let Some(t) = others.pop_front() {
                let dest = place_other(
                    now,
                    self.plan.mid_tick_tasks,
                    &free,
                    &wakes,
                    self.plan.run_tasks_buffer_ns,
                    self.plan.slice_ns,
                    &self.other_cpus,
                    &mut self.other_rr,
                );
                let (cpu, slice_ns) = match dest {
                    // a task that may run on one CPU only goes there, lent or not
                    _ if t.nr_cpus_allowed == 1 => (t.cpu, self.plan.slice_ns),
                    OtherDest::Lend { slice_ns } => (RL_CPU_ANY, slice_ns),
                    OtherDest::Cpu(_) if self.other_cpus.contains(&(t.cpu as usize)) => {
                        (t.cpu, self.plan.slice_ns)
                    }
                    OtherDest::Cpu(c) => (c as i32, self.plan.slice_ns),
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
                    self.backlog.push_back(t);
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
            self.runners.by_pid.remove(&pid);
            self.queues.forget(pid);
            self.queues.left_cpu(pid);
        }
    }

    pub fn run(&mut self, reporter: &mut Reporter) -> Result<UserExitInfo> {
        let mut last_housekeeping = Instant::now();
        let every = self
            .print_every
            .or(self.json.is_some().then_some(Duration::from_secs(1)));
        let (mut print_at, mut print_prev) = (Instant::now(), self.groups.clone());
        while !self.bpf.exited() {
            self.schedule();
            if last_housekeeping.elapsed() >= Duration::from_secs(1) {
                self.housekeeping();
                last_housekeeping = Instant::now();
            }
            if let Some(every) = every
                && print_at.elapsed() >= every
            {
                let secs = print_at.elapsed().as_secs_f64();
                let m = reporter.metrics(&self.counters, &self.groups, &print_prev, secs);
                if self.print_every.is_some() {
                    reporter.print(&m, &[]);
                    if self.verbose {
                        println!(
                            "  userspace: {} runners known, {} waiting, clock offset {:?}, {}",
                            self.runners.by_pid.len(),
                            self.queues.held(),
                            self.clock,
                            self.counters.summary()
                        );
                    }
                }
                if let Some(j) = &mut self.json {
                    j.write(&m)?;
                }
                (print_at, print_prev) = (Instant::now(), self.groups.clone());
            }
        }
        self.bpf.shutdown_and_report()
    }
}

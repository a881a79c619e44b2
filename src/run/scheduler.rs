//! Loading, attaching and running the BPF scheduler.
//!
//! Order on start: validate the configuration, check the kernel and our
//! rights, then open/load/attach. The kernel may ask for a restart (CPU
//! hotplug): we re-open and re-attach. On SIGINT/SIGTERM we detach and exit 0.

use std::cell::RefCell;
use std::mem::MaybeUninit;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use libbpf_rs::OpenObject;
use libbpf_rs::{MapCore, RingBufferBuilder};
use log::{debug, info, trace, warn};
use scx_utils::{UserExitInfo, scx_ops_attach, scx_ops_load, scx_ops_open, uei_exited, uei_report};

use super::events::{ScanGate, TaskEvents};
use super::hints::Hints;
use super::membership::{Membership, Table};
use super::pinning::Pinner;
use super::startup::{attached, check_outputs, group_name, plan, preflight, replan};
use crate::bpf::{BpfSkel, BpfSkelBuilder, intf, types};
use crate::breakages::SCX_TICK_BREAK_STALEPLAN;
use crate::config::TickUnit;
use crate::config::cli::{RunArgs, bad_config};
use crate::config::plan::Plan;
use crate::model::locality;
use crate::model::topology::Machine;
use crate::model::trace::{self, TraceSink};
use crate::output::intervals::{Intervals, write_exit_line};
use crate::output::json::JsonSink;
use crate::output::openmetrics::serve_openmetrics;
use crate::output::reporter::{MissEvent, Reporter};
use crate::output::stats::{Counters, GroupCounters, Metrics, Shared};
use crate::output::stats_server::launch_stats_server;

const MAX_CPUS: usize = intf::tick_consts_MAX_CPUS as usize;

pub fn run(args: &RunArgs) -> Result<()> {
    let mut plan = plan(args).map_err(bad_config)?;
    check_outputs(&plan).map_err(bad_config)?;
    preflight()?;

    info!("scx_tick {}", crate::version());
    // libbpf's messages go through our log (stderr), never to stdout.
    // where the outputs go: the flags', the same in every re-plan
    let o = plan.output.clone();
    scx_utils::init_libbpf_logging(Some(if o.verbose > 1 {
        libbpf_rs::PrintLevel::Debug
    } else {
        libbpf_rs::PrintLevel::Warn
    }));
    let shutdown = Arc::new(AtomicBool::new(false));
    {
        let shutdown = shutdown.clone();
        ctrlc::set_handler(move || shutdown.store(true, Ordering::Relaxed))
            .context("installing the SIGINT/SIGTERM handler")?;
    }

    for line in plan.describe() {
        info!("{line}");
    }

    let names: Vec<String> = plan.groups.iter().map(group_name).collect();
    let shared: Shared = Arc::new(Mutex::new(Metrics::default()));
    let _server = launch_stats_server(shared.clone())
        .map_err(|e| warn!("no stats server, --monitor will not work: {e:#}"))
        .ok();
    if let Some(addr) = &o.metrics_addr {
        serve_openmetrics(addr, o.metrics_public, shared.clone())?;
    }
    let mut out = Outputs {
        print_every: (o.stats > 0.0).then(|| Duration::from_secs_f64(o.stats)),
        json: o
            .stats_json
            .as_deref()
            .map(|p| {
                JsonSink::open(p, o.stats_json_append)
                    .map(|s| s.histograms(!o.stats_json_no_histograms))
            })
            .transpose()?,
        shared,
        reporter: Reporter::new(names, o.verbose > 0),
        trace: o
            .trace_decisions
            .as_deref()
            .map(TraceSink::create)
            .transpose()?
            .map(RefCell::new),
        trace_dropped: 0,
    };
    // `--stats-json -`: stdout carries only JSON
    out.reporter
        .human_to_stderr(o.stats_json.as_deref() == Some(Path::new("-")));

    // Counters start from zero with every attach: carry them across restarts.
    let mut base = Snapshot::new(plan.groups.len());
    let result = schedule(args, &mut plan, &shutdown, &mut out, &mut base);
    // The summary also when the kernel ejected us or something failed.
    out.reporter.summary(&base.groups, &base.cpu.summary());
    write_exit_line(&out.reporter, &base.cpu, &base.groups, &mut out.json);
    if let (Some(t), Some(path)) = (&out.trace, &o.trace_decisions) {
        let mut t = t.borrow_mut();
        t.flush()
            .with_context(|| format!("writing {}", path.display()))?;
        info!(
            "decision trace: {} decisions written to {}, {} lost (the ring buffer was full)",
            t.written,
            path.display(),
            out.trace_dropped
        );
    }
    result
}

/// Attach, run until asked to stop, re-attach on the kernel's restart
/// requests. `base` holds the counts so far, also when this fails.
fn schedule(
    args: &RunArgs,
    plan: &mut Plan,
    shutdown: &AtomicBool,
    out: &mut Outputs,
    base: &mut Snapshot,
) -> Result<()> {
    let mut hints = Hints::new(plan, &plan.kernel.cgroup_root)?;
    // Outlives re-attaches; dropping it (any exit) moves every thread back.
    let mut membership = Membership::new(plan, &plan.kernel.cgroup_root);
    loop {
        let mut open_object = MaybeUninit::uninit();
        let mut sched = Scheduler::init(plan, &hints, &mut membership, &mut open_object)?;
        let uei = sched.run(shutdown, out, base, &mut hints, &mut membership)?;
        drop(sched);
        if uei.should_restart() && !shutdown.load(Ordering::Relaxed) {
            // CPUs came or went: check and choose again against the CPUs online now.
            info!("the kernel asked for a restart (CPU hotplug?): re-attaching");
            out.reporter.restarted();
            if !SCX_TICK_BREAK_STALEPLAN {
                *plan = replan(args)?;
            }
            for line in plan.describe() {
                info!("{line}");
            }
            continue;
        }
        return Ok(());
    }
}

/// Where statistics go while running.
struct Outputs {
    print_every: Option<Duration>,
    json: Option<JsonSink>,
    shared: Shared,
    reporter: Reporter,
    /// --trace-decisions (tests): the file (written from the ring buffer's
    /// callback), and records BPF could not send.
    trace: Option<RefCell<TraceSink>>,
    trace_dropped: u64,
}

/// All counters at one moment (cumulative since scx_tick started).
#[derive(Clone)]
struct Snapshot {
    cpu: Counters,
    per_cpu: Vec<(usize, Counters)>,
    groups: Vec<GroupCounters>,
}

impl Snapshot {
    fn new(nr_groups: usize) -> Snapshot {
        Snapshot {
            cpu: Counters::default(),
            per_cpu: Vec::new(),
            groups: vec![GroupCounters::default(); nr_groups],
        }
    }

    /// Read the BPF maps and add `base` (the counts of earlier attaches).
    fn read(skel: &BpfSkel, base: &Snapshot) -> Result<Snapshot> {
        let mut per_cpu: Vec<Counters> = read_percpu::<intf::cpu_stats>(&skel.maps.stats, 0)?
            .iter()
            .map(Counters::of)
            .collect();
        let mut groups = base.groups.clone();
        for (i, g) in groups.iter_mut().enumerate() {
            let stats = read_percpu::<intf::group_stats>(&skel.maps.group_stats, i as u32)?;
            for (c, s) in per_cpu.iter_mut().zip(&stats) {
                c.add_group(s);
            }
            for s in &stats {
                g.add_cpu(s);
            }
        }
        let mut cpu = base.cpu;
        for c in &per_cpu {
            cpu.add(c);
        }
        Ok(Snapshot {
            cpu,
            per_cpu: per_cpu.into_iter().enumerate().collect(),
            groups,
        })
    }
}

/// One entry of a per-CPU array map, as one value per possible CPU.
fn read_percpu<T: Copy>(map: &dyn MapCore, key: u32) -> Result<Vec<T>> {
    let values = map
        .lookup_percpu(&key.to_ne_bytes(), libbpf_rs::MapFlags::ANY)?
        .unwrap_or_default();
    Ok(values
        .iter()
        .filter(|b| b.len() >= std::mem::size_of::<T>())
        // SAFETY: each value is one T as written by the BPF side.
        .map(|b| unsafe { std::ptr::read_unaligned(b.as_ptr() as *const T) })
        .collect())
}

fn bpf_span(s: locality::Span) -> types::span {
    types::span {
        llc_lo: s.llc_lo,
        llc_hi: s.llc_hi,
        node_lo: s.node_lo,
        node_hi: s.node_hi,
    }
}

struct Scheduler<'a> {
    skel: BpfSkel<'a>,
    link: Option<libbpf_rs::Link>,
    pinner: Pinner,
    /// When the membership and pinning scans run: one decision for both,
    /// after the task events read at the loop's turn.
    gate: ScanGate,
}

impl<'a> Scheduler<'a> {
    fn init(
        plan: &Plan,
        hints: &Hints,
        membership: &mut Membership,
        open_object: &'a mut MaybeUninit<OpenObject>,
    ) -> Result<Self> {
        let builder = BpfSkelBuilder::default();
        let mut skel = scx_ops_open!(builder, open_object, tick_ops, None)?;
        skel.struct_ops.tick_ops_mut().exit_dump_len = plan.kernel.exit_dump_len;
        skel.struct_ops.tick_ops_mut().timeout_ms = plan.kernel.watchdog_ms as u32;
        let machine = Machine::read()?;

        let rodata = skel
            .maps
            .rodata_data
            .as_mut()
            .context("BPF rodata missing")?;
        if let Some(&cpu) = plan.tick_cpus.iter().find(|&&c| c >= MAX_CPUS) {
            bail!(
                "tick CPU {cpu} is above the supported maximum of {}",
                MAX_CPUS - 1
            );
        }
        // BPF lists the tick CPUs, and all online CPUs, nearest first
        // (model/locality.rs): steals, spill-overs and kicks look at a
        // CPU's LLC, then its node, then the rest. machine.cpus: the
        // online ones, so no offline CPU is ever a spill-over's target.
        let (tick_order, tick_spans) = locality::near_order(&machine, &plan.tick_cpus);
        let online: Vec<usize> = machine
            .cpus
            .iter()
            .map(|c| c.id)
            .filter(|&c| c < MAX_CPUS)
            .collect();
        let (cpu_order, cpu_spans) = locality::near_order(&machine, &online);
        rodata.nr_tick_cpus = tick_order.len() as u32;
        for (i, &cpu) in tick_order.iter().enumerate() {
            rodata.tick_cpus[i] = cpu as i32;
            rodata.tick_index_plus1[cpu] = i as u32 + 1;
        }
        rodata.nr_cpu_order = cpu_order.len() as u32;
        for (i, &cpu) in cpu_order.iter().enumerate() {
            rodata.cpu_order[i] = cpu as i32;
            rodata.cpu_pos_plus1[cpu] = i as u32 + 1;
        }
        // one fair queue of other work per LLC, its node's looked at first
        let (cpu_fair_q, fair_spans) = locality::fair_queues(&machine);
        rodata.nr_fair_qs = fair_spans.len().min(MAX_CPUS) as u32;
        for (q, &span) in fair_spans.iter().take(MAX_CPUS).enumerate() {
            rodata.fair_q_span[q] = bpf_span(span);
        }
        for c in machine.cpus.iter().filter(|c| c.id < MAX_CPUS) {
            rodata.cpu_fair_q[c.id] = cpu_fair_q[c.id] as u32;
            if let Some(s) = machine.sibling(c.id).filter(|&s| s < MAX_CPUS) {
                rodata.cpu_sibling_plus1[c.id] = s as u32 + 1;
            }
            rodata.cpu_llc[c.id] = c.llc as u32;
            rodata.cpu_node[c.id] = c.node as u32;
            rodata.cpu_online[c.id] = true;
            rodata.tick_span[c.id] = bpf_span(tick_spans[c.id]);
            rodata.cpu_span[c.id] = bpf_span(cpu_spans[c.id]);
        }
        for (i, g) in plan.groups.iter().enumerate() {
            rodata.group_deadline_ns[i] = g.deadline_ns;
            rodata.group_period_ns[i] = g.period_ns;
            rodata.group_process_tick[i] = g.tick == TickUnit::Process;
            // a runner's home moves only within its group's CPUs
            for &cpu in g.home_cpus.iter().filter(|&&c| c < MAX_CPUS) {
                rodata.group_home_mask[i][cpu / 64] |= 1 << (cpu % 64);
            }
        }
        rodata.steal_threshold_ns = plan.steal_threshold_ns;
        rodata.run_tasks_buffer_ns = plan.run_tasks_buffer_ns;
        rodata.other_slice_ns = plan.slice_ns;
        rodata.work_stealing = plan.work_stealing;
        rodata.mid_tick_tasks = plan.mid_tick_tasks;
        if plan.output.trace_decisions.is_some() {
            rodata.trace_decisions = true;
            skel.maps.decisions.set_max_entries(trace::RING_BYTES)?;
        }

        let mut skel = scx_ops_load!(skel, tick_ops, uei)?;

        // the tick groups' cgroups known so far and those found now; later
        // ones on each scan
        membership.attach(&skel)?;
        let mut gate = ScanGate::default();
        gate.ran(&TaskEvents::read(&skel), Instant::now());
        membership.scan(&mut Table {
            map: &skel.maps.tick_groups,
            groups_gen: skel.maps.bss_data.as_mut().map(|b| &mut b.groups_gen),
        });
        if let Some(bss) = skel.maps.bss_data.as_mut() {
            bss.groups_gen = bss.groups_gen.wrapping_add(1);
        }
        hints.attach(&skel)?;

        let link = scx_ops_attach!(skel, tick_ops)?;
        info!("scx_tick attached");
        attached();
        let pinner = Pinner::new(plan);
        Ok(Scheduler {
            skel,
            link: Some(link),
            pinner,
            gate,
        })
    }

    /// Schedule until stopped; `counts` starts as the counts of earlier
    /// attaches and ends as everything counted, whatever the outcome.
    fn run(
        &mut self,
        shutdown: &AtomicBool,
        out: &mut Outputs,
        counts: &mut Snapshot,
        hints: &mut Hints,
        membership: &mut Membership,
    ) -> Result<UserExitInfo> {
        let base = counts.clone();
        let result = self.run_from(shutdown, out, &base, counts, hints, membership);
        // Everything up to the detach counts.
        if let Ok(s) = Snapshot::read(&self.skel, &base) {
            *counts = s;
        }
        if let Some(bss) = self.skel.maps.bss_data.as_ref() {
            out.trace_dropped += bss.decisions_dropped;
        }
        self.detach();
        let uei = uei_report!(&self.skel, uei);
        result?;
        uei
    }

    fn run_from(
        &mut self,
        shutdown: &AtomicBool,
        out: &mut Outputs,
        base: &Snapshot,
        last: &mut Snapshot,
        hints: &mut Hints,
        membership: &mut Membership,
    ) -> Result<()> {
        let pending = RefCell::new(Vec::new());
        let mut rb = RingBufferBuilder::new();
        rb.add(&self.skel.maps.miss_events, |data: &[u8]| {
            if let Some(e) = MissEvent::parse(data) {
                trace!(
                    "miss: {}[{}] group {} cpu {} deadline {} at {} (+{} us)",
                    e.comm,
                    e.tid,
                    e.group,
                    e.cpu,
                    e.deadline_ns,
                    e.at_ns,
                    e.overshoot_ns / 1000
                );
                pending.borrow_mut().push(e);
            }
            0
        })?;
        if let Some(trace) = &out.trace {
            rb.add(&self.skel.maps.decisions, |data: &[u8]| {
                match trace.borrow_mut().write(data) {
                    Ok(()) => 0,
                    Err(_) => -1,
                }
            })?;
        }
        let rb = rb.build()?;
        let (mut snap_at, mut snap_prev) = (Instant::now(), base.groups.clone());
        let mut intervals = Intervals::new(out.print_every, out.json.is_some(), &base.groups);
        while !shutdown.load(Ordering::Relaxed) && !uei_exited!(&self.skel, uei) {
            // counters first: an event during the scans shows at the next
            let scan = self.gate.due(&TaskEvents::read(&self.skel), Instant::now());
            let due = scan.is_some();
            if let Some(scan) = scan {
                membership.refresh(
                    &mut Table {
                        map: &self.skel.maps.tick_groups,
                        groups_gen: self.skel.maps.bss_data.as_mut().map(|b| &mut b.groups_gen),
                    },
                    scan,
                );
            }
            match self.pinner.refresh(&self.skel, &membership.cgroups(), due) {
                Ok(gone) => hints.forget(&self.skel, &gone),
                Err(e) => warn!("pinning: {e:#}"),
            }
            hints.serve(&self.skel);
            // The loop's pace: 100 ms, less only when the miss ring fills
            // (the BPF side wakes it then, not for every miss).
            // EINTR: a signal (our own SIGINT/SIGTERM) cut the wait short
            if let Err(e) = rb.poll(Duration::from_millis(100))
                && e.kind() != libbpf_rs::ErrorKind::Interrupted
            {
                warn!("reading miss events: {e}");
            }
            for e in pending.borrow_mut().drain(..) {
                out.reporter.record(e);
            }
            // The scx_stats server and the metrics endpoint see 1 s windows.
            if snap_at.elapsed() >= Duration::from_secs(1) {
                out.reporter.set_runners(membership.runner_counts());
                *last = Snapshot::read(&self.skel, base)?;
                let secs = snap_at.elapsed().as_secs_f64();
                *out.shared.lock().unwrap() =
                    out.reporter
                        .metrics(&last.cpu, &last.groups, &snap_prev, secs);
                (snap_at, snap_prev) = (Instant::now(), last.groups.clone());
            }
            if intervals.due() {
                *last = Snapshot::read(&self.skel, base)?;
                let per_cpu = &last.per_cpu;
                intervals.emit(
                    &mut out.reporter,
                    &last.cpu,
                    &last.groups,
                    &mut out.json,
                    |r, m| r.print(m, per_cpu),
                );
            }
        }
        rb.consume().ok();
        for e in pending.borrow_mut().drain(..) {
            out.reporter.record(e);
        }
        Ok(())
    }

    fn detach(&mut self) {
        if self.link.take().is_some() {
            debug!("scx_tick detached");
        }
        self.pinner.restore();
    }
}

impl Drop for Scheduler<'_> {
    fn drop(&mut self) {
        // Every exit path, errors included, detaches and restores affinities.
        self.detach();
    }
}

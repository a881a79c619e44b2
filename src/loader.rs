//! Loading, attaching and running the BPF scheduler.
//!
//! Order on start: validate the configuration, check the kernel and our
//! rights, then open/load/attach. The kernel may ask for a restart (CPU
//! hotplug): we re-open and re-attach. On SIGINT/SIGTERM we detach and exit 0.

use std::mem::MaybeUninit;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use libbpf_rs::MapCore;
use libbpf_rs::OpenObject;
use log::{debug, info, warn};
use scx_utils::{UserExitInfo, scx_ops_attach, scx_ops_load, scx_ops_open, uei_exited, uei_report};

use crate::bpf::{BpfSkel, BpfSkelBuilder, intf};
use crate::cgroup;
use crate::cli::{CheckConfigArgs, RunArgs};
use crate::config::{Config, Plan};
use crate::pinning::Pinner;
use crate::stats::Counters;
use crate::topology::Machine;

const SCHED_EXT_SYSFS: &str = "/sys/kernel/sched_ext";

/// Refuse early, in plain words, what would otherwise fail deep in libbpf.
fn preflight() -> Result<()> {
    if !Path::new(SCHED_EXT_SYSFS).exists() {
        bail!(
            "this kernel ({}) has no sched_ext support ({SCHED_EXT_SYSFS} is missing); \
             run scx_tick on a kernel built with CONFIG_SCHED_CLASS_EXT=y, \
             e.g. inside a VM with scripts/vm.sh",
            nix::sys::utsname::uname()
                .map(|u| u.release().to_string_lossy().into_owned())
                .unwrap_or_else(|_| "unknown".into())
        );
    }
    if !nix::unistd::geteuid().is_root() {
        bail!(
            "scx_tick must run as root: loading a sched_ext scheduler needs CAP_SYS_ADMIN and CAP_BPF"
        );
    }
    if scx_utils::compat::is_sched_ext_enabled().unwrap_or(false) {
        let ops = std::fs::read_to_string(format!("{SCHED_EXT_SYSFS}/root/ops"))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unknown".into());
        bail!(
            "another sched_ext scheduler ({ops}) is already running; stop it before starting scx_tick"
        );
    }
    Ok(())
}

fn plan(args: &RunArgs) -> Result<Plan> {
    let config = Config::from_args(args)?;
    let machine = Machine::read()?;
    config.validate(&machine, &|p| cgroup::resolve(&args.cgroup_root, p))
}

/// `scx_tick check-config FILE`: everything `run` checks, nothing loaded.
pub fn check_config(args: &CheckConfigArgs) -> Result<()> {
    let plan = plan(&RunArgs {
        config: Some(args.file.clone()),
        cgroup_root: args.cgroup_root.clone(),
        ..Default::default()
    })?;
    println!("{}: valid", args.file.display());
    for line in plan.describe() {
        println!("  {line}");
    }
    Ok(())
}

pub fn run(args: &RunArgs) -> Result<()> {
    let mut plan = plan(args)?;
    preflight()?;

    let shutdown = Arc::new(AtomicBool::new(false));
    {
        let shutdown = shutdown.clone();
        ctrlc::set_handler(move || shutdown.store(true, Ordering::Relaxed))
            .context("installing the SIGINT/SIGTERM handler")?;
    }

    for line in plan.describe() {
        info!("{line}");
    }

    let mut totals = Counters::default();
    loop {
        let mut open_object = MaybeUninit::uninit();
        let mut sched = Scheduler::init(&plan, args, &mut open_object)?;
        let (uei, counters) = sched.run(&shutdown, args.stats)?;
        totals.add(&counters);
        drop(sched);
        if uei.should_restart() && !shutdown.load(Ordering::Relaxed) {
            // CPUs came or went: check and choose again against the CPUs online now.
            info!("the kernel asked for a restart (CPU hotplug?): re-attaching");
            plan = self::plan(args)?;
            for line in plan.describe() {
                info!("{line}");
            }
            continue;
        }
        println!("scx_tick totals: {}", totals.summary());
        return Ok(());
    }
}

struct Scheduler<'a> {
    skel: BpfSkel<'a>,
    link: Option<libbpf_rs::Link>,
    pinner: Pinner,
}

impl<'a> Scheduler<'a> {
    fn init(
        plan: &Plan,
        args: &RunArgs,
        open_object: &'a mut MaybeUninit<OpenObject>,
    ) -> Result<Self> {
        let mut builder = BpfSkelBuilder::default();
        builder.obj_builder.debug(args.verbose > 1);
        let mut skel = scx_ops_open!(builder, open_object, tick_ops, None)?;
        skel.struct_ops.tick_ops_mut().exit_dump_len = args.exit_dump_len;

        let rodata = skel
            .maps
            .rodata_data
            .as_mut()
            .context("BPF rodata missing")?;
        rodata.nr_tick_cpus = plan.tick_cpus.len() as u32;
        for (i, &cpu) in plan.tick_cpus.iter().enumerate() {
            if cpu >= intf::tick_consts_MAX_CPUS as usize {
                bail!(
                    "tick CPU {cpu} is above the supported maximum of {}",
                    intf::tick_consts_MAX_CPUS - 1
                );
            }
            rodata.tick_cpus[i] = cpu as i32;
            rodata.tick_index_plus1[cpu] = i as u32 + 1;
        }
        for (i, g) in plan.groups.iter().enumerate() {
            rodata.group_deadline_ns[i] = g.deadline_ns;
        }
        rodata.steal_threshold_ns = plan.steal_threshold_ns;
        rodata.run_tasks_buffer_ns = plan.run_tasks_buffer_ns;
        rodata.other_slice_ns = plan.slice_ns;
        rodata.work_stealing = plan.work_stealing;
        rodata.mid_tick_tasks = plan.mid_tick_tasks;

        let mut skel = scx_ops_load!(skel, tick_ops, uei)?;

        for (i, g) in plan.groups.iter().enumerate() {
            let value = intf::tick_group {
                idx: i as u32,
                pad: 0,
                period_ns: g.period_ns,
                deadline_ns: g.deadline_ns,
            };
            // SAFETY: tick_group is a plain C struct without padding holes.
            let bytes = unsafe {
                std::slice::from_raw_parts(
                    &value as *const _ as *const u8,
                    std::mem::size_of::<intf::tick_group>(),
                )
            };
            skel.maps
                .tick_groups
                .update(&g.cgroup_id.to_ne_bytes(), bytes, libbpf_rs::MapFlags::ANY)
                .context("registering a tick group")?;
        }
        if let Some(bss) = skel.maps.bss_data.as_mut() {
            bss.groups_gen = bss.groups_gen.wrapping_add(1);
        }

        let link = scx_ops_attach!(skel, tick_ops)?;
        info!("scx_tick attached");
        let pinner = Pinner::new(plan);
        Ok(Scheduler {
            skel,
            link: Some(link),
            pinner,
        })
    }

    fn read_counters(&self) -> Result<Counters> {
        let per_cpu = self
            .skel
            .maps
            .stats
            .lookup_percpu(&0u32.to_ne_bytes(), libbpf_rs::MapFlags::ANY)?
            .unwrap_or_default();
        Ok(Counters::sum(per_cpu.iter().map(|b| {
            // SAFETY: each value is one struct cpu_stats as written by BPF.
            unsafe { std::ptr::read_unaligned(b.as_ptr() as *const intf::cpu_stats) }
        })))
    }

    fn run(&mut self, shutdown: &AtomicBool, stats_secs: f64) -> Result<(UserExitInfo, Counters)> {
        let stats_every = (stats_secs > 0.0).then(|| Duration::from_secs_f64(stats_secs));
        let mut last_stats = Instant::now();
        let mut prev = Counters::default();
        while !shutdown.load(Ordering::Relaxed) && !uei_exited!(&self.skel, uei) {
            if let Err(e) = self.pinner.refresh(&mut self.skel) {
                warn!("pinning: {e:#}");
            }
            if let Some(every) = stats_every
                && last_stats.elapsed() >= every
            {
                let now = self.read_counters()?;
                println!("{}", now.delta(&prev).line(last_stats.elapsed()));
                prev = now;
                last_stats = Instant::now();
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let counters = self.read_counters().unwrap_or_default();
        self.detach();
        let uei = uei_report!(&self.skel, uei)?;
        Ok((uei, counters))
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

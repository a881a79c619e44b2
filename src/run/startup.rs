//! Start-up, shared by both policy modes (BPF, and `--userspace`): checks
//! before anything is loaded (preflight, outputs), the plan from the flags
//! and the configuration (again after CPU hotplug), and the word to systemd
//! once attached.

use std::path::Path;

use anyhow::{Result, bail};
use log::warn;

use super::cgroup;
use crate::config::Config;
use crate::config::cli::RunArgs;
use crate::config::plan::{Group, Plan};
use crate::model::dispatch::OTHER_SHARE_PERIOD_NS;
use crate::model::topology::Machine;
use crate::output::json::check_json_path;
use crate::output::openmetrics::parse_metrics_addr;

const SCHED_EXT_SYSFS: &str = "/sys/kernel/sched_ext";

/// Refuse early, in plain words, what would otherwise fail deep in libbpf.
pub fn preflight() -> Result<()> {
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

pub fn plan(args: &RunArgs) -> Result<Plan> {
    let config = Config::from_args(args)?;
    let machine = Machine::read()?;
    let (root, missing) = (&config.kernel.cgroup_root, config.missing_cgroup);
    config.validate(&machine, &|p| cgroup::resolve(root, p, missing))
}

/// The plan after CPU hotplug: the user's CPU lists without the CPUs that
/// are offline now (the user's lists come back with the CPUs).
pub fn replan(args: &RunArgs) -> Result<Plan> {
    let mut config = Config::from_args(args)?;
    let machine = Machine::read()?;
    for note in config.keep_online(&machine) {
        warn!("after hotplug: {note}");
    }
    let (root, missing) = (&config.kernel.cgroup_root, config.missing_cgroup);
    config.validate(&machine, &|p| cgroup::resolve(root, p, missing))
}

/// The plan's output and kernel flags, checked before anything is loaded
/// (after the configuration).
pub fn check_outputs(plan: &Plan) -> Result<()> {
    let (out, kernel) = (&plan.output, &plan.kernel);
    if !(out.stats.is_finite() && out.stats >= 0.0) {
        bail!(
            "--stats {}: allowed: a number of seconds, 0 (off) or more",
            out.stats
        );
    }
    if kernel.watchdog_ms != 0 && !(100..=30_000).contains(&kernel.watchdog_ms) {
        bail!(
            "--watchdog-ms {}: allowed: 0 (the kernel's default, 30 s) or 100 to 30000",
            kernel.watchdog_ms
        );
    }
    // Other work waits up to its owed share's period, then for the runner
    // on its CPU to end its slice (at the runner's deadline): a watchdog
    // under twice that ejects scx_tick under load.
    let longest_ns = plan.groups.iter().map(|g| g.deadline_ns).max().unwrap_or(0);
    let floor_ms = (2 * (OTHER_SHARE_PERIOD_NS + longest_ns)).div_ceil(1_000_000);
    if kernel.watchdog_ms != 0 && (kernel.watchdog_ms as u64) < floor_ms {
        bail!(
            "--watchdog-ms {}: other work waits up to {} ms for its owed share and then for the \
             runner on its CPU to end its slice (up to the longest tick deadline, {} ms): a \
             watchdog under twice that ejects scx_tick under load; allowed: 0 (the kernel's \
             default, 30 s) or {floor_ms} to 30000",
            kernel.watchdog_ms,
            OTHER_SHARE_PERIOD_NS / 1_000_000,
            longest_ns / 1_000_000
        );
    }
    if let Some(path) = &out.stats_json {
        check_json_path(path)?;
    }
    if let Some(addr) = &out.metrics_addr {
        parse_metrics_addr(addr, out.metrics_public)?;
    }
    Ok(())
}

/// A tick group's name in statistics: its `name`, by default its path
/// below the cgroup2 mount.
pub fn group_name(g: &Group) -> String {
    g.name.clone()
}

/// The scheduler is attached: both policy modes say so to systemd (the
/// unit is `Type=notify`, so `systemctl start` waits for this and fails if
/// scx_tick exits first: a bad file or a failed load). Outside systemd
/// (no `NOTIFY_SOCKET`) this does nothing.
pub fn attached() {
    if let Err(e) = sd_notify::notify(&[sd_notify::NotifyState::Ready]) {
        warn!("could not tell systemd that scx_tick is ready: {e}");
    }
}

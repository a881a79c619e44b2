//! Start-up, shared by both policy modes (BPF, and `--userspace`) and the
//! subcommands that load nothing: checks before anything is loaded
//! (preflight, outputs), the plan from the flags and the configuration
//! (again after CPU hotplug), `check-config`, `topology` and `--monitor`.

use std::cell::RefCell;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Result, bail};
use log::warn;

use crate::cgroup;
use crate::cli::{CheckConfigArgs, RunArgs, TopologyArgs};
use crate::config::{Config, Plan};
use crate::report;
use crate::topology::{Machine, choose_tick_cpus, default_tick_cpu_count, max_tick_cpus, table};

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
    let missing = config.missing_cgroup;
    config.validate(&machine, &|p| {
        cgroup::resolve(&args.cgroup_root, p, missing)
    })
}

/// The plan after CPU hotplug: the user's CPU lists without the CPUs that
/// are offline now (the user's lists come back with the CPUs).
pub fn replan(args: &RunArgs) -> Result<Plan> {
    let mut config = Config::from_args(args)?;
    let machine = Machine::read()?;
    for note in config.keep_online(&machine) {
        warn!("after hotplug: {note}");
    }
    let missing = config.missing_cgroup;
    config.validate(&machine, &|p| {
        cgroup::resolve(&args.cgroup_root, p, missing)
    })
}

/// `scx_tick check-config FILE`: everything `run` checks that does not
/// depend on the moment (cgroups may not exist yet: the file is meant for
/// boot), nothing loaded; says what it did not check.
pub fn check_config(args: &CheckConfigArgs) -> Result<()> {
    check_config_file(args).map_err(crate::cli::bad_config)
}

fn check_config_file(args: &CheckConfigArgs) -> Result<()> {
    let config = Config::from_args(&RunArgs {
        config: Some(args.file.clone()),
        cgroup_root: args.cgroup_root.clone(),
        ..Default::default()
    })?;
    let machine = Machine::read()?;
    let root = &args.cgroup_root;
    let unchecked = RefCell::new(Vec::new());
    let plan = config.validate(&machine, &|p| {
        if !cgroup::is_cgroup2(root) {
            unchecked.borrow_mut().push(format!(
                "cgroup {p:?}: {} is not a cgroup v2 mount here",
                root.display()
            ));
            return Ok((root.join(p.trim_start_matches('/')), 0));
        }
        let (path, id) = cgroup::resolve(root, p, crate::config::MissingCgroup::Wait)?;
        if id == 0 {
            let then = match config.missing_cgroup {
                crate::config::MissingCgroup::Wait => "scx_tick will wait for it",
                crate::config::MissingCgroup::Create => "scx_tick will create it",
                crate::config::MissingCgroup::Refuse => {
                    "scx_tick will refuse to start unless it exists (missing_cgroup = \"refuse\")"
                }
            };
            unchecked.borrow_mut().push(format!(
                "cgroup {} does not exist now; {then}",
                path.display()
            ));
        }
        Ok((path, id))
    })?;
    println!("{}: valid", args.file.display());
    for w in plan.warnings() {
        warn!("{}: {w}", args.file.display());
    }
    for line in plan.describe() {
        println!("  {line}");
    }
    for g in &plan.groups {
        if let crate::config::Runners::Threads(_) = g.runners {
            unchecked.borrow_mut().push(format!(
                "which processes and threads tick group {} selects (scx_tick finds them while it runs)",
                g.name
            ));
        }
    }
    unchecked
        .borrow_mut()
        .push("that this kernel has sched_ext and that scx_tick runs as root".into());
    println!("not checked:");
    for line in unchecked.into_inner() {
        println!("  {line}");
    }
    Ok(())
}

/// The output flags, checked before anything is loaded (like the config).
pub fn check_outputs(args: &RunArgs) -> Result<()> {
    if !(args.stats.is_finite() && args.stats >= 0.0) {
        bail!(
            "--stats {}: allowed: a number of seconds, 0 (off) or more",
            args.stats
        );
    }
    if args.watchdog_ms != 0 && !(100..=30_000).contains(&args.watchdog_ms) {
        bail!(
            "--watchdog-ms {}: allowed: 0 (the kernel's default, 30 s) or 100 to 30000",
            args.watchdog_ms
        );
    }
    if let Some(path) = &args.stats_json {
        report::check_json_path(path)?;
    }
    if let Some(addr) = &args.metrics_addr {
        report::parse_metrics_addr(addr, args.metrics_public)?;
    }
    Ok(())
}

/// `scx_tick --monitor N`
pub fn monitor(args: &RunArgs) -> Result<()> {
    let secs = args.monitor.unwrap_or(1.0);
    if !(secs > 0.0 && secs.is_finite() && secs <= 86400.0) {
        return Err(crate::cli::bad_config(anyhow::anyhow!(
            "--monitor {secs}: allowed: a number of seconds above 0, at most 86400"
        )));
    }
    let shutdown = Arc::new(AtomicBool::new(false));
    let s = shutdown.clone();
    ctrlc::set_handler(move || s.store(true, Ordering::Relaxed))?;
    report::monitor(Duration::from_secs_f64(secs), &shutdown)
}

/// A tick group's name in statistics: its `name`, by default its path
/// below the cgroup2 mount.
pub fn group_name(g: &crate::config::Group) -> String {
    g.name.clone()
}

/// `scx_tick topology`
pub fn topology(args: &TopologyArgs) -> Result<()> {
    let m = Machine::read()?;
    let count = match &args.tick_cpus {
        Some(s) => s.trim().parse::<usize>().map_err(|_| {
            anyhow::anyhow!("--tick-cpus {s:?}: expected a count of tick CPUs (1 or more)")
        })?,
        None => default_tick_cpu_count(&m),
    };
    let choice = choose_tick_cpus(&m, count);
    if args.json {
        let v = serde_json::json!({
            "machine": m,
            "choice": choice.as_ref().ok(),
            "max_tick_cpus": max_tick_cpus(&m),
            "error": choice.as_ref().err().map(|e| e.to_string()),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        if args.tick_cpus.is_some() {
            choice?;
        }
        return Ok(());
    }
    print!("{}", table(&m));
    println!();
    match choice {
        Ok(c) => {
            println!(
                "Tick CPUs scx_tick would choose ({count}): {:?}",
                c.tick_cpus
            );
            for r in &c.reasons {
                println!("  {r}");
            }
            Ok(())
        }
        // an explicit count that cannot be chosen is the user's error,
        // said once (on stderr, by the caller)
        Err(e) if args.tick_cpus.is_some() => Err(e),
        Err(e) => {
            println!("No tick CPU choice: {e:#}");
            Ok(())
        }
    }
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

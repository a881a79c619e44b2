//! `scx_tick check-config FILE`: a configuration file checked as a run
//! would check it, nothing loaded.

use std::cell::RefCell;

use anyhow::Result;
use log::warn;

use crate::config::cli::{CheckConfigArgs, RunArgs, bad_config};
use crate::config::plan::Runners;
use crate::config::{Config, MissingCgroup};
use crate::model::topology::Machine;
use crate::run::cgroup;

/// `scx_tick check-config FILE`: everything `run` checks that does not
/// depend on the moment (cgroups may not exist yet: the file is meant for
/// boot), nothing loaded; says what it did not check.
pub fn run(args: &CheckConfigArgs) -> Result<()> {
    check_config_file(args).map_err(bad_config)
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
        let (path, id) = cgroup::resolve(root, p, MissingCgroup::Wait)?;
        if id == 0 {
            let then = match config.missing_cgroup {
                MissingCgroup::Wait => "scx_tick will wait for it",
                MissingCgroup::Create => "scx_tick will create it",
                MissingCgroup::Refuse => {
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
        if let Runners::Threads(_) = g.runners {
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

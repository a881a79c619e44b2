//! `scx_tick match`: which processes and threads a configuration selects
//! right now, group by group, without loading anything. A group that
//! selects nothing says why: no process matches, or a process matches and
//! none of its threads does (with the names its threads have), or its
//! cgroup does not exist or holds no thread.

use std::path::Path;

use anyhow::Result;
use log::warn;

use crate::config::cli::{MatchArgs, RunArgs, bad_config};
use crate::config::plan::{Plan, Runners};
use crate::config::{Config, MissingCgroup};
use crate::model::topology::Machine;
use crate::run::cgroup;
use crate::run::membership::{all_pids, matching_processes, name_summary, own_lineage, threads_of};

/// Distinct thread names shown per process: all of them (a JVM has a few
/// dozen; the one the operator looks for may be anywhere).
const NAMES_SHOWN: usize = usize::MAX;

pub fn run(args: &MatchArgs) -> Result<()> {
    let plan = plan_of(args).map_err(bad_config)?;
    show(&plan);
    Ok(())
}

/// The configuration's plan; a cgroup missing now is a finding, not an error.
fn plan_of(args: &MatchArgs) -> Result<Plan> {
    let run = RunArgs {
        config: args.file.clone().or_else(|| args.run.config.clone()),
        ..args.run.clone()
    };
    let config = Config::from_args(&run)?;
    let machine = Machine::read()?;
    let root = &run.cgroup_root;
    config.validate(&machine, &|p| cgroup::resolve(root, p, MissingCgroup::Wait))
}

/// Each group: what it selects now.
fn show(plan: &Plan) {
    if plan.groups.is_empty() {
        warn!("the configuration has no tick group: nothing is selected");
        return;
    }
    let pids = all_pids();
    let ours = own_lineage();
    let mut empty = Vec::new();
    for g in &plan.groups {
        let found = match &g.runners {
            Runners::Cgroup(path) => cgroup_group(&g.name, path),
            Runners::Threads(select) => {
                println!("tick group {} (threads: {}):", g.name, select.describe());
                let procs = matching_processes(select, &pids, &ours);
                if procs.is_empty() {
                    println!("  no process matches now");
                }
                let mut found = 0;
                for (pid, (_, comm)) in procs {
                    let threads = threads_of(pid);
                    let runners: Vec<&(u32, String)> = threads
                        .iter()
                        .filter(|(_, n)| select.thread_matches(n))
                        .collect();
                    found += runners.len();
                    println!(
                        "  process {pid} ({comm}): {} of its {} threads",
                        runners.len(),
                        threads.len()
                    );
                    for (tid, name) in &runners {
                        println!("    {tid} {name}");
                    }
                    if runners.is_empty() {
                        println!(
                            "    no thread matches; its thread names: {}",
                            name_summary(threads.iter().map(|(_, n)| n.as_str()), NAMES_SHOWN)
                        );
                    }
                }
                found
            }
        };
        if found == 0 {
            empty.push(g.name.clone());
        }
    }
    if !empty.is_empty() {
        warn!(
            "tick group(s) {} select no thread now: scx_tick would schedule nothing there until \
             one appears (it looks every 200 ms while it runs)",
            empty.join(", ")
        );
    }
}

/// A cgroup group: its threads now (the cgroup's and its descendants').
fn cgroup_group(name: &str, path: &Path) -> usize {
    println!("tick group {name} (cgroup {}):", path.display());
    if cgroup::id_of(path).is_none() {
        println!("  the cgroup does not exist now");
        return 0;
    }
    let tids = cgroup::threads(path).unwrap_or_default();
    if tids.is_empty() {
        println!("  no thread in it now");
    }
    for tid in &tids {
        let name = std::fs::read_to_string(format!("/proc/{tid}/comm")).unwrap_or_default();
        println!("    {tid} {}", name.trim_end());
    }
    tids.len()
}

//! scx_tick_user: scx_tick's tick-group EDF decided in userspace, on
//! scx_rustland_core. Started by `scx_tick --userspace`, same flags.

// scx_rustland_core's connector (with the wake stamp): not all of it is used here
#[allow(dead_code, clippy::all)]
#[path = "../vendor/scx_rustland_core/src/bpf.rs"]
mod bpf;
#[path = "../vendor/scx_rustland_core/src/bpf_intf.rs"]
mod bpf_intf;
#[path = "../vendor/scx_rustland_core/src/bpf_skel.rs"]
mod bpf_skel;
mod classify;
mod output;
mod policy;
mod sched;

use std::mem::MaybeUninit;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Parser;
use log::info;
use scx_tick::breakages::SCX_TICK_BREAK_USER_RESTARTOK;
use scx_tick::config::cli;
use scx_tick::output::intervals::write_exit_line;
use scx_tick::output::reporter::Reporter;
use scx_tick::run::{startup, userspace};

fn run(args: &cli::RunArgs) -> Result<()> {
    userspace::check_args(args).map_err(cli::bad_config)?;
    let plan = startup::plan(args).map_err(cli::bad_config)?;
    startup::check_outputs(&plan).map_err(cli::bad_config)?;
    startup::preflight()?;
    info!(
        "scx_tick {}, userspace policy mode (scx_rustland_core {})",
        scx_tick::version(),
        scx_rustland_core::VERSION
    );
    for line in plan.describe() {
        info!("{line}");
    }
    let names = plan.groups.iter().map(startup::group_name).collect();
    let mut reporter = Reporter::new(names, plan.output.verbose > 0);
    // `--stats-json -`: stdout carries only JSON
    reporter.human_to_stderr(plan.output.stats_json.as_deref() == Some(std::path::Path::new("-")));
    let mut open_object = MaybeUninit::uninit();
    let mut s = sched::Sched::init(&plan, &mut open_object)?;
    let uei = s.run(&mut reporter)?;
    let (bounced, congested) = (s.bounced(), s.congested());
    let (counters, groups, dropped) = (s.counters, s.groups.clone(), s.out.dropped());
    let mut json = s.json.take();
    drop(s);
    if dropped > 0 {
        log::warn!("{dropped} bytes of statistics were dropped while their reader was behind");
    }
    // the BPF mode's exit lines, plus what only rustland counts
    reporter.summary(
        &groups,
        &format!(
            "{} bounced={bounced} congested={congested}",
            counters.summary()
        ),
    );
    write_exit_line(&reporter, &counters, &groups, &mut json);
    if uei.should_restart() && !SCX_TICK_BREAK_USER_RESTARTOK {
        // scx_rustland_core forbids new memory mappings (seccomp) once it
        // runs, and a new attach needs them: only a new process can.
        bail!(
            "the kernel asked for a restart (CPU hotplug?) and the userspace mode cannot re-attach \
             in the same process; the kernel's scheduler runs again: start scx_tick --userspace again"
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    // log lines must not block the scheduling thread either
    cli::init_logging_to(
        cli.run.verbose,
        Some(Box::new(output::NonBlocking::reopen(2))),
    );
    let result = match cli.command {
        Some(_) => Err(anyhow::anyhow!(
            "scx_tick_user only schedules; run subcommands with scx_tick"
        )),
        None => run(&cli.run),
    };
    cli::finish(result)
}

//! `scx_tick --userspace`: the same tick-group EDF decided in userspace on
//! scx_rustland_core, by the `scx_tick_user` binary installed next to
//! scx_tick. It is a binary of its own because scx_rustland_core brings a
//! global allocator and a Ctrl-C handler that scx_tick must not have.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};

use crate::config::cli::RunArgs;
use crate::config::{Config, Pin};

pub const BINARY: &str = "scx_tick_user";

/// What the userspace mode cannot do, refused before anything is loaded.
pub fn check_args(args: &RunArgs) -> Result<()> {
    // Both would serve from a thread of the scheduling process: a thread it
    // schedules itself, which can hold a lock the scheduler then waits for.
    let unsupported = [
        (args.metrics_addr.is_some(), "--metrics-addr"),
        (args.monitor.is_some(), "--monitor"),
        (args.trace_decisions.is_some(), "--trace-decisions"),
    ];
    if let Some((_, flag)) = unsupported.iter().find(|(given, _)| *given) {
        bail!(
            "{flag}: not available with --userspace; allowed there: --stats N, --stats-json FILE and the scheduling flags"
        );
    }
    let config = Config::from_args(args)?;
    if config.groups.iter().any(|g| g.select.is_some()) {
        bail!(
            "--tick-threads (groups of threads selected by name): not available with --userspace; \
             allowed there: groups given by cgroup (--tick-cgroup, cgroup = PATH)"
        );
    }
    if config.pin == Pin::Hard {
        bail!(
            "pin = hard (--pin): not available with --userspace, which sends each runner to the CPU its poll picks; allowed: soft"
        );
    }
    Ok(())
}

/// The scx_tick_user binary beside the running scx_tick.
fn binary() -> Result<PathBuf> {
    let me = std::env::current_exe().context("finding scx_tick's own path")?;
    let path = me.with_file_name(BINARY);
    if !path.exists() {
        bail!(
            "--userspace needs {} next to scx_tick; build it with `cargo build --release --workspace`",
            path.display()
        );
    }
    Ok(path)
}

/// Become scx_tick_user with the same arguments; it checks them all
/// (`check_args`, the plan, the outputs) before it loads anything.
pub fn exec() -> Result<()> {
    let path = binary()?;
    let err = std::process::Command::new(&path)
        .args(std::env::args_os().skip(1))
        .exec();
    Err(err).with_context(|| format!("running {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(args: RunArgs) -> String {
        format!("{:#}", check_args(&args).unwrap_err())
    }

    #[test]
    fn what_the_userspace_mode_cannot_do_is_refused_by_name() {
        assert!(check_args(&RunArgs::default()).is_ok());
        let e = refused(RunArgs {
            pin: Some(Pin::Hard),
            ..Default::default()
        });
        assert!(
            e.starts_with("pin = hard (--pin): not available with --userspace"),
            "{e}"
        );
        assert!(
            check_args(&RunArgs {
                stats_json: Some("-".into()),
                stats: 1.0,
                ..Default::default()
            })
            .is_ok()
        );
        let e = refused(RunArgs {
            metrics_addr: Some("127.0.0.1:9470".into()),
            ..Default::default()
        });
        assert!(e.starts_with("--metrics-addr: not available"), "{e}");
        let e = refused(RunArgs {
            monitor: Some(1.0),
            ..Default::default()
        });
        assert!(e.starts_with("--monitor: not available"), "{e}");
    }
}

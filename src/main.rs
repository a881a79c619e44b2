//! scx_tick: a sched_ext scheduler for tick-driven servers.
//!
//! `main` only parses arguments and wires the modules together; each
//! concern lives in its own module.

mod bpf;
mod cgroup;
mod cli;
mod config;
mod dispatch;
mod loader;
mod pinning;
mod stats;
mod topology;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    cli::init_logging(cli.run.verbose);
    let result = match &cli.command {
        None => loader::run(&cli.run),
        Some(cli::Command::Topology(args)) => topology::print(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One clear message, not a backtrace: "error: <what>: <why>".
            log::error!("{e:#}");
            ExitCode::FAILURE
        }
    }
}

//! scx_tick: parse arguments, run the subcommand, report errors in one line.

use std::process::ExitCode;

use clap::Parser;
use scx_tick::{cli, loader, topology};

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
            log::error!("{e:#}");
            ExitCode::FAILURE
        }
    }
}

//! scx_tick: parse arguments, run the subcommand, report errors in one line.

use std::process::ExitCode;

use clap::Parser;
use scx_tick::commands::{check_config, matching, monitor, suggest, tagging, topology};
use scx_tick::config::cli;
use scx_tick::output::stats_server;
use scx_tick::run::{scheduler, userspace};

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    cli::init_logging(cli.run.verbose);
    let result = match &cli.command {
        None if cli.run.help_stats => stats_server::describe_stats(&mut std::io::stdout()),
        None if cli.run.userspace => userspace::exec(),
        None if cli.run.monitor.is_some() => monitor::run(&cli.run),
        None => scheduler::run(&cli.run),
        Some(cli::Command::Topology(args)) => topology::run(args),
        Some(cli::Command::CheckConfig(args)) => check_config::run(args),
        Some(cli::Command::Tag(args)) => tagging::tag(args),
        Some(cli::Command::Untag(args)) => tagging::untag(args),
        Some(cli::Command::Suggest(args)) => suggest::run(args),
        Some(cli::Command::Match(args)) => matching::run(args),
    };
    cli::finish(result)
}

//! scx_tick: parse arguments, run the subcommand, report errors in one line.

use std::process::ExitCode;

use clap::Parser;
use scx_tick::{cli, loader, matching, report, startup, suggest, tagging, userspace};

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    cli::init_logging(cli.run.verbose);
    let result = match &cli.command {
        None if cli.run.help_stats => report::describe_stats(&mut std::io::stdout()),
        None if cli.run.userspace => userspace::exec(),
        None if cli.run.monitor.is_some() => startup::monitor(&cli.run),
        None => loader::run(&cli.run),
        Some(cli::Command::Topology(args)) => startup::topology(args),
        Some(cli::Command::CheckConfig(args)) => startup::check_config(args),
        Some(cli::Command::Tag(args)) => tagging::tag(args),
        Some(cli::Command::Untag(args)) => tagging::untag(args),
        Some(cli::Command::Suggest(args)) => suggest::run(args),
        Some(cli::Command::Match(args)) => matching::run(args),
    };
    cli::finish(result)
}

//! scx_tick: a sched_ext scheduler for tick-driven servers.
//!
//! One module per concern; `main.rs` only parses arguments and wires them.

/// The version with the git commit it was built from (`--version`, the start-up log).
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (git ",
    env!("SCX_TICK_GIT"),
    ")"
);

pub mod bpf;
pub mod cgroup;
pub mod cli;
pub mod config;
#[cfg(test)]
mod config_fuzz;
pub mod dispatch;
pub mod hints;
pub mod loader;
pub mod membership;
pub mod pinning;
pub mod report;
pub mod startup;
pub mod stats;
pub mod suggest;
pub mod tagging;
pub mod topology;
pub mod trace;
pub mod userspace;

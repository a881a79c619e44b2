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

#[cfg(test)]
mod tests {
    /// README's `cat /sys/kernel/sched_ext/root/ops` shows the name the
    /// kernel shows: scx_ops_open! appends scx_utils' version suffix.
    #[test]
    fn the_readme_shows_the_kernels_ops_name() {
        let suffix = scx_utils::build_id::ops_version_suffix(env!("CARGO_PKG_VERSION"));
        let name = format!("scx_tick{}", suffix.trim_end_matches("_debug"));
        let line = include_str!("../README.md")
            .lines()
            .find(|l| l.starts_with("cat /sys/kernel/sched_ext/root/ops"))
            .expect("README has no root/ops line");
        if cfg!(all(
            target_arch = "x86_64",
            target_os = "linux",
            target_env = "gnu"
        )) {
            assert!(
                line.ends_with(&format!("# {name}")),
                "README: {line:?}, kernel: {name}"
            );
        } else {
            assert!(
                line.contains(&format!("# scx_tick_{}_", env!("CARGO_PKG_VERSION"))),
                "{line}"
            );
        }
    }
}

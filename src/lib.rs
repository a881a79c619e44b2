//! scx_tick: a sched_ext scheduler for tick-driven servers.
//!
//! One module per concern, in layers that import only from the layers
//! below: [`commands`] (the subcommands that load nothing) over [`run`]
//! (the scheduler running) over [`config`] and [`output`], over [`model`]
//! and [`bpf`]. `main.rs` only parses arguments and wires them.

/// The version with the git commit it was built from ("-dirty": with
/// uncommitted changes) and, as scx schedulers print it, the target triple
/// (scx_utils' full_version): `--version`, the start-up log.
pub fn version() -> &'static str {
    static VERSION: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        scx_utils::build_id::full_version(concat!(
            env!("CARGO_PKG_VERSION"),
            " (git ",
            env!("SCX_TICK_GIT"),
            ")"
        ))
    });
    &VERSION
}

pub mod bpf;
/// Test-only deliberate breakages (bpf/breakages.h, scripts/mutants.sh):
/// all `false` unless built with `SCX_TICK_BREAK=<name>`.
pub mod breakages {
    include!(concat!(env!("OUT_DIR"), "/breakages.rs"));
}
pub mod commands;
pub mod config;
pub mod model;
pub mod output;
pub mod run;

#[cfg(test)]
mod tests {
    #[test]
    fn the_version_names_the_commit_and_the_target() {
        let v = super::version();
        let (head, target) = v.rsplit_once(' ').unwrap();
        assert!(
            head.starts_with(concat!(env!("CARGO_PKG_VERSION"), " (git ")) && head.ends_with(')'),
            "{v}"
        );
        // a triple such as x86_64-unknown-linux-gnu, "/debug" in debug builds
        assert!(
            target.split('/').next().unwrap().split('-').count() >= 3,
            "{v}"
        );
    }

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

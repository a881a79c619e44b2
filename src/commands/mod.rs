//! The subcommands that load nothing: [`topology`], [`check_config`],
//! `tag`/`untag` ([`tagging`]), [`matching`] (`match`), [`suggest`], and
//! the `--monitor` client ([`monitor`]).

pub mod check_config;
pub mod matching;
pub mod monitor;
pub mod suggest;
pub mod tagging;
pub mod topology;

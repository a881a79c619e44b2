//! The models both policy modes and the tools share: the scheduling
//! decisions as pure functions ([`dispatch`]) and the replay of BPF's
//! decision trace through them ([`trace`]), the log-linear histograms
//! ([`histogram`]), and the machine with the choice of tick CPUs
//! ([`topology`]).

pub mod dispatch;
pub mod histogram;
pub mod locality;
pub mod topology;
pub mod trace;

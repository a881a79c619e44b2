//! scx_tick's tools, apart from the scheduler: the tick workload
//! (`tickload`, with its scheduling-policy requests), the thread churn
//! generator, the benchmark's records and report, and the decision trace's
//! replay. Nothing here is installed with scx_tick.

pub mod bench;
pub mod rtpolicy;
pub mod workload;

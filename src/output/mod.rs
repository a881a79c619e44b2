//! Where statistics go: declared once ([`stats`]), they reach the live view
//! and the exit summary ([`reporter`]), JSON lines ([`json`]) on the
//! interval clock ([`intervals`]), the scx_stats server ([`stats_server`],
//! for `--monitor` and other clients) and the OpenMetrics endpoint
//! ([`openmetrics`]).

pub mod intervals;
pub mod json;
pub mod openmetrics;
pub mod reporter;
pub mod stats;
pub mod stats_server;

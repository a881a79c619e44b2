//! The benchmark's pure parts (used by `benchreport`): reading what the guest
//! measured, and turning the records into tables.

pub mod capacity;
pub mod parse;
pub mod report;
pub mod schedulers;

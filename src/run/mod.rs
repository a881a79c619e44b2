//! Running the scheduler: the BPF policy's run loop ([`scheduler`]) with what
//! it keeps in step while it runs (tick group [`membership`], home CPU
//! [`pinning`], deadline [`hints`]), when their scans run ([`events`]), the
//! cgroup v2 helpers they share ([`cgroup`]), the start-up both policy modes go through ([`startup`]),
//! and the hand-over to the userspace mode ([`userspace`]).

pub mod cgroup;
pub mod events;
pub mod hints;
pub mod membership;
pub mod pinning;
pub mod scheduler;
pub mod startup;
pub mod userspace;

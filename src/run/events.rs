//! When the membership and pinning scans run, and which processes they
//! read again: after the kernel's task events (bpf/events.bpf.c counts
//! forks and exits and cgroups made or removed, and keeps the processes
//! that exec'd, renamed a thread or moved a thread to another cgroup), at
//! most every [`SCAN_EVERY`], and in full every [`RECHECK_EVERY`]
//! regardless. Reading /proc and cgroup files five times a second whether
//! or not anything changed was most of scx_tick's own CPU beside busy
//! servers (records/probes/scan-events-2026-12-01/).

use std::time::{Duration, Instant};

use crate::bpf::BpfSkel;

/// New threads are runners within this long of their first event.
pub const SCAN_EVERY: Duration = Duration::from_millis(200);

/// A full scan this often with no event: what no event reports (a command
/// line rewritten in place) is found within this long.
pub const RECHECK_EVERY: Duration = Duration::from_secs(5);

/// The BPF side's event counts, as read at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Processes and threads created or exited.
    pub tasks: u64,
    /// Cgroups made or removed.
    pub cgroups: u64,
    /// Processes that exec'd, renamed a thread or had a thread move cgroup.
    pub changed: u64,
}

/// The counts and the ring of changed processes, read in that order.
#[derive(Clone, Debug, Default)]
pub struct TaskEvents {
    pub counts: Counts,
    /// The i-th changed process is `changed_tgids[i % len]`.
    pub changed_tgids: Vec<u32>,
}

impl TaskEvents {
    pub fn read(skel: &BpfSkel) -> TaskEvents {
        let Some(b) = skel.maps.bss_data.as_ref() else {
            return TaskEvents::default();
        };
        // written by BPF programs on any CPU meanwhile: the counts first, so
        // a slot counted is at worst written after this read (the next
        // scan reads its range again)
        // SAFETY: plain loads of the mapped .bss, which outlives `skel`'s borrow
        let counts = unsafe {
            Counts {
                tasks: std::ptr::read_volatile(&b.tasks_gen),
                cgroups: std::ptr::read_volatile(&b.cgroups_gen),
                changed: std::ptr::read_volatile(&b.changed_gen),
            }
        };
        // SAFETY: as above
        let ring = unsafe { std::ptr::read_volatile(&b.changed_tgids) };
        TaskEvents {
            counts,
            changed_tgids: ring.to_vec(),
        }
    }

    /// The processes changed in `lo..hi`, sorted; None when the ring no
    /// longer holds them all.
    fn changed(&self, lo: u64, hi: u64) -> Option<Vec<u32>> {
        let len = self.changed_tgids.len() as u64;
        if hi.wrapping_sub(lo) > len {
            return None;
        }
        let mut out: Vec<u32> = (lo..hi)
            .map(|i| self.changed_tgids[(i % len) as usize])
            .collect();
        out.sort_unstable();
        out.dedup();
        Some(out)
    }
}

/// What a scan due now reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scan {
    /// The lists of processes and threads, and the names and cgroups of
    /// the new processes and of these (sorted), which changed.
    Lists(Vec<u32>),
    /// Everything: a cgroup came or went, more changed than the ring
    /// holds, or nothing was read for [`RECHECK_EVERY`].
    Full,
}

/// The scans' pace, one decision for the membership and the pinning scans
/// (`super::scheduler`): read the events first, then ask [`ScanGate::due`].
#[derive(Debug, Default)]
pub struct ScanGate {
    last_scan: Option<Instant>,
    last_full: Option<Instant>,
    /// The counts at the last scan, and the changed count at the one before.
    seen: Option<Counts>,
    changed_before: u64,
    /// The last scan came after events: the next one is due as well, and
    /// reads their changed processes again (a slot written late, a process
    /// read between its fork and its exec).
    again: bool,
}

impl ScanGate {
    /// Whether a scan runs now, given the events read just before (one
    /// during the scan moves the counts again: the next call sees it).
    pub fn due(&mut self, events: &TaskEvents, now: Instant) -> Option<Scan> {
        if self
            .last_scan
            .is_some_and(|t| now.duration_since(t) < SCAN_EVERY)
        {
            return None;
        }
        let c = events.counts;
        let moved = self.seen.is_some_and(|s| s != c);
        let lists = match self.seen {
            Some(s)
                if s.cgroups == c.cgroups
                    && self
                        .last_full
                        .is_some_and(|t| now.duration_since(t) < RECHECK_EVERY) =>
            {
                events.changed(self.changed_before, c.changed)
            }
            _ => None,
        };
        let scan = match lists {
            None => Scan::Full,
            Some(_) if !moved && !self.again => return None,
            Some(changed) => Scan::Lists(changed),
        };
        // once more after events, even after a full scan: some are counted
        // before their effect shows (an exit, a rename)
        self.again = moved;
        self.last_scan = Some(now);
        // a full scan read every process: the ring's older slots no longer count
        self.changed_before = match (&scan, self.seen) {
            (Scan::Full, _) | (_, None) => c.changed,
            (_, Some(s)) => s.changed,
        };
        if scan == Scan::Full {
            self.last_full = Some(now);
        }
        self.seen = Some(c);
        Some(scan)
    }

    /// A full scan ran outside the gate (before the first attach): the
    /// pace counts from it.
    pub fn ran(&mut self, events: &TaskEvents, now: Instant) {
        self.last_scan = Some(now);
        self.last_full = Some(now);
        self.changed_before = events.counts.changed;
        self.seen = Some(events.counts);
        self.again = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(t0: Instant, ms: u64) -> Instant {
        t0 + Duration::from_millis(ms)
    }

    fn events(tasks: u64, cgroups: u64, changed: &[u32]) -> TaskEvents {
        let mut ring = vec![0; 8];
        for (i, p) in changed.iter().enumerate() {
            ring[i % 8] = *p;
        }
        TaskEvents {
            counts: Counts {
                tasks,
                cgroups,
                changed: changed.len() as u64,
            },
            changed_tgids: ring,
        }
    }

    #[test]
    fn first_call_scans_everything() {
        let mut g = ScanGate::default();
        assert_eq!(g.due(&events(0, 0, &[]), Instant::now()), Some(Scan::Full));
    }

    #[test]
    fn quiet_counts_skip_scans_until_the_recheck() {
        let (mut g, t0, e) = (ScanGate::default(), Instant::now(), events(0, 0, &[]));
        g.due(&e, t0);
        for ms in [200, 1000, 4999] {
            assert_eq!(g.due(&e, at(t0, ms)), None, "{ms} ms");
        }
        assert_eq!(g.due(&e, t0 + RECHECK_EVERY), Some(Scan::Full));
    }

    #[test]
    fn a_new_task_scans_the_lists_twice_at_the_scan_pace() {
        let (mut g, t0) = (ScanGate::default(), Instant::now());
        g.due(&events(0, 0, &[]), t0);
        let forked = events(1, 0, &[]);
        assert_eq!(g.due(&forked, at(t0, 100)), None);
        assert_eq!(g.due(&forked, at(t0, 200)), Some(Scan::Lists(vec![])));
        // once more, for a task counted before its effect shows (an exit)
        assert_eq!(g.due(&forked, at(t0, 400)), Some(Scan::Lists(vec![])));
        assert_eq!(g.due(&forked, at(t0, 600)), None);
    }

    #[test]
    fn changed_processes_are_read_in_two_scans() {
        let (mut g, t0) = (ScanGate::default(), Instant::now());
        g.due(&events(0, 0, &[]), t0);
        assert_eq!(
            g.due(&events(0, 0, &[30, 10, 30]), at(t0, 200)),
            Some(Scan::Lists(vec![10, 30]))
        );
        // a slot written after the count moved is read the second time
        assert_eq!(
            g.due(&events(0, 0, &[30, 10, 30, 20]), at(t0, 400)),
            Some(Scan::Lists(vec![10, 20, 30]))
        );
        assert_eq!(
            g.due(&events(0, 0, &[30, 10, 30, 20]), at(t0, 600)),
            Some(Scan::Lists(vec![20]))
        );
        assert_eq!(g.due(&events(0, 0, &[30, 10, 30, 20]), at(t0, 800)), None);
    }

    #[test]
    fn more_changes_than_the_ring_holds_scan_everything() {
        let (mut g, t0) = (ScanGate::default(), Instant::now());
        g.due(&events(0, 0, &[]), t0);
        let many: Vec<u32> = (1..=9).collect();
        assert_eq!(g.due(&events(0, 0, &many), at(t0, 200)), Some(Scan::Full));
        // that scan read everything: the next is of the lists, not full again
        let one_more: Vec<u32> = (1..=10).collect();
        assert_eq!(
            g.due(&events(0, 0, &one_more), at(t0, 400)),
            Some(Scan::Lists(vec![10]))
        );
    }

    #[test]
    fn a_slot_written_after_its_count_is_read_the_second_time() {
        let (mut g, t0) = (ScanGate::default(), Instant::now());
        g.due(&events(0, 0, &[]), t0);
        // counted, not yet written: the slot still holds 0
        assert_eq!(
            g.due(&events(0, 0, &[0]), at(t0, 200)),
            Some(Scan::Lists(vec![0]))
        );
        assert_eq!(
            g.due(&events(0, 0, &[7]), at(t0, 400)),
            Some(Scan::Lists(vec![7]))
        );
    }

    #[test]
    fn a_cgroup_made_or_removed_scans_everything() {
        let (mut g, t0) = (ScanGate::default(), Instant::now());
        g.due(&events(0, 0, &[]), t0);
        assert_eq!(g.due(&events(0, 1, &[]), at(t0, 200)), Some(Scan::Full));
    }

    #[test]
    fn a_scan_outside_the_gate_sets_the_pace() {
        let (mut g, t0, e) = (ScanGate::default(), Instant::now(), events(2, 1, &[5]));
        g.ran(&e, t0);
        assert_eq!(g.due(&e, at(t0, 200)), None);
        assert_eq!(g.due(&e, at(t0, 4000)), None);
    }
}

//! Home CPUs for tick runners: each thread of a tick group gets one of the
//! group's tick CPUs, round-robin, and the BPF side learns it through the
//! `home_cpus` map (soft pinning: the runner stays stealable).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Result;
use libbpf_rs::{MapCore, MapFlags};
use log::debug;

use crate::bpf::BpfSkel;
use crate::cgroup;
use crate::config::Plan;

/// New threads are picked up within this time. Reading cgroup.threads is
/// cheap; a faster scan would only burn CPU on tick servers.
const SCAN_EVERY: Duration = Duration::from_millis(200);

struct GroupHomes {
    cgroup: PathBuf,
    cpus: Vec<usize>,
    next: usize,
    homes: BTreeMap<u32, usize>,
}

pub struct Pinner {
    groups: Vec<GroupHomes>,
    last_scan: Option<Instant>,
}

/// Assign homes round-robin to `tids` not yet homed; forget those gone.
/// Returns (added, removed).
fn reassign(
    homes: &mut BTreeMap<u32, usize>,
    cpus: &[usize],
    next: &mut usize,
    tids: &[u32],
) -> (Vec<(u32, usize)>, Vec<u32>) {
    let removed: Vec<u32> = homes
        .keys()
        .filter(|t| tids.binary_search(t).is_err())
        .copied()
        .collect();
    for t in &removed {
        homes.remove(t);
    }
    let mut added = Vec::new();
    for &t in tids {
        if !homes.contains_key(&t) && !cpus.is_empty() {
            let cpu = cpus[*next % cpus.len()];
            *next += 1;
            homes.insert(t, cpu);
            added.push((t, cpu));
        }
    }
    (added, removed)
}

impl Pinner {
    pub fn new(plan: &Plan) -> Pinner {
        Pinner {
            groups: plan
                .groups
                .iter()
                .map(|g| GroupHomes {
                    cgroup: g.cgroup.clone(),
                    cpus: g.home_cpus.clone(),
                    next: 0,
                    homes: BTreeMap::new(),
                })
                .collect(),
            last_scan: None,
        }
    }

    pub fn refresh(&mut self, skel: &mut BpfSkel) -> Result<()> {
        if self.last_scan.is_some_and(|t| t.elapsed() < SCAN_EVERY) {
            return Ok(());
        }
        self.last_scan = Some(Instant::now());
        for g in &mut self.groups {
            // A removed group simply has no threads any more.
            let tids = cgroup::threads(&g.cgroup).unwrap_or_default();
            let (added, removed) = reassign(&mut g.homes, &g.cpus, &mut g.next, &tids);
            for (tid, cpu) in added {
                debug!("tid {tid} of {}: home CPU {cpu}", g.cgroup.display());
                skel.maps.home_cpus.update(
                    &tid.to_ne_bytes(),
                    &(cpu as i32).to_ne_bytes(),
                    MapFlags::ANY,
                )?;
            }
            for tid in removed {
                // ignore ENOENT: nothing to clean up
                let _ = skel.maps.home_cpus.delete(&tid.to_ne_bytes());
            }
        }
        Ok(())
    }

    /// Undo whatever pinning changed outside the scheduler (nothing for
    /// soft pinning: the map dies with the scheduler).
    pub fn restore(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn homes_are_round_robin_and_follow_threads() {
        let mut homes = BTreeMap::new();
        let mut next = 0;
        let (added, removed) = reassign(&mut homes, &[2, 4], &mut next, &[10, 11, 12]);
        assert_eq!(added, vec![(10, 2), (11, 4), (12, 2)]);
        assert!(removed.is_empty());
        // 11 exits, 13 appears: 13 continues the rotation, 10 and 12 keep theirs.
        let (added, removed) = reassign(&mut homes, &[2, 4], &mut next, &[10, 12, 13]);
        assert_eq!(added, vec![(13, 4)]);
        assert_eq!(removed, vec![11]);
        assert_eq!(homes.get(&10), Some(&2));
    }
}

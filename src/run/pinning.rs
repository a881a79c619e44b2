//! Home CPUs for tick runners: each thread of a tick group gets one of the
//! group's tick CPUs, the least loaded (`least_loaded`, the rule both policy
//! modes use), and the BPF side learns it through the
//! `home_cpus` map. Soft pinning stops there (the runner stays stealable);
//! hard pinning also sets the thread's affinity to its home CPU, like
//! CanvasMC's Affinity scheduler, and restores the original affinity on
//! exit.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::Result;
use libbpf_rs::{MapCore, MapFlags};
use log::{debug, warn};
use nix::sched::{CpuSet, sched_getaffinity, sched_setaffinity};
use nix::unistd::Pid;

use super::cgroup;
use crate::bpf::BpfSkel;
use crate::breakages::{SCX_TICK_BREAK_NOPIN, SCX_TICK_BREAK_NORESTORE, SCX_TICK_BREAK_SAMEHOME};
use crate::config::Pin;
use crate::config::plan::Plan;

struct GroupHomes {
    cpus: Vec<usize>,
    /// relative deadline / period, at most 1: the CPU share one runner may claim
    share: f64,
    homes: BTreeMap<u32, usize>,
}

pub struct Pinner {
    groups: Vec<GroupHomes>,
    pin: Pin,
    /// Affinities changed by hard pinning, to restore.
    saved: BTreeMap<u32, CpuSet>,
    /// Per process: the affinity it had before we pinned any of its threads.
    process_original: BTreeMap<u32, CpuSet>,
    /// The cgroups the last scan of their cgroup.threads read.
    last_cgroups: Vec<Vec<PathBuf>>,
    last_admission: Option<String>,
}

/// The admission check: each runner may claim its group's CPU share
/// (`Group::cpu_share`: deadline/period, at most 1);
/// warn when the groups' runners together claim more than their tick CPUs.
/// `groups` holds (runners, share, home CPUs) per group.
pub fn admission(groups: &[(usize, f64, &[usize])]) -> Option<String> {
    let demand: f64 = groups.iter().map(|(n, share, _)| *n as f64 * share).sum();
    let cpus: std::collections::BTreeSet<usize> = groups
        .iter()
        .flat_map(|(_, _, c)| c.iter().copied())
        .collect();
    let busy = groups.iter().any(|(n, _, _)| *n > 0);
    (busy && demand > cpus.len() as f64 + 1e-9).then(|| {
        format!(
            "admission: tick runners may claim {demand:.2} CPUs (runners x deadline/period, at most 1 each) \
             but have {} tick CPU(s): the excess spills over to the other CPUs; more tick CPUs, if the machine has cores to spare (--tick-cpus), keep runners on their homes",
            cpus.len()
        )
    })
}

/// The home of a new runner, in both policy modes: the CPU of `cpus` with
/// the fewest runners homed on it (`load`), the first of them on a tie.
pub fn least_loaded(cpus: &[usize], load: impl Fn(usize) -> usize) -> Option<usize> {
    if SCX_TICK_BREAK_SAMEHOME {
        return cpus.first().copied();
    }
    cpus.iter().copied().min_by_key(|&c| load(c))
}

/// Give `tids` not yet homed the least loaded home; forget those gone.
/// Returns (added, removed).
fn reassign(
    homes: &mut BTreeMap<u32, usize>,
    cpus: &[usize],
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
        if homes.contains_key(&t) {
            continue;
        }
        if let Some(cpu) = least_loaded(cpus, |c| homes.values().filter(|&&h| h == c).count()) {
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
                    cpus: g.home_cpus.clone(),
                    share: g.cpu_share(),
                    homes: BTreeMap::new(),
                })
                .collect(),
            pin: plan.pin,
            saved: BTreeMap::new(),
            process_original: BTreeMap::new(),
            last_cgroups: Vec::new(),
            last_admission: None,
        }
    }

    /// Hard pinning: remember the thread's affinity, then pin it to `cpu`.
    fn pin_hard(&mut self, tid: u32, cpu: usize) {
        let pid = Pid::from_raw(tid as i32);
        let Ok(current) = sched_getaffinity(pid) else {
            return; // exited
        };
        // A thread created by a thread we pinned inherited our pinning: its
        // original is its process's affinity as we first saw it.
        let tgid = cgroup::tgid_of(tid).unwrap_or(tid);
        let original = match self.process_original.get(&tgid) {
            Some(orig) if self.is_our_pinning(&current) => *orig,
            _ => current,
        };
        self.process_original.entry(tgid).or_insert(original);
        let mut set = CpuSet::new();
        if set.set(cpu).is_err() || sched_setaffinity(pid, &set).is_err() {
            warn!("could not pin thread {tid} to CPU {cpu}");
            return;
        }
        self.saved.entry(tid).or_insert(original);
    }

    /// Exactly one CPU, and one we pin runners to.
    fn is_our_pinning(&self, set: &CpuSet) -> bool {
        let cpus: Vec<usize> = (0..CpuSet::count())
            .filter(|&c| set.is_set(c).unwrap_or(false))
            .collect();
        cpus.len() == 1 && self.groups.iter().any(|g| g.cpus.contains(&cpus[0]))
    }

    /// Keep homes up to date; `cgroups` holds each group's cgroups now,
    /// `due` whether the scans are due (the scheduler's [`super::events::ScanGate`],
    /// as for the membership scan). Returns
    /// the threads that left their group.
    pub fn refresh(
        &mut self,
        skel: &BpfSkel,
        cgroups: &[Vec<PathBuf>],
        due: bool,
    ) -> Result<Vec<u32>> {
        if !due && self.last_cgroups.as_slice() == cgroups {
            return Ok(Vec::new());
        }
        self.last_cgroups = cgroups.to_vec();
        let mut added_all: Vec<(u32, usize)> = Vec::new();
        let mut removed_all = Vec::new();
        for (i, g) in self.groups.iter_mut().enumerate() {
            // A removed group simply has no threads any more.
            let mut tids: Vec<u32> = cgroups
                .get(i)
                .into_iter()
                .flatten()
                .flat_map(|dir| cgroup::threads(dir).unwrap_or_default())
                .collect();
            tids.sort_unstable();
            tids.dedup();
            let (added, removed) = reassign(&mut g.homes, &g.cpus, &tids);
            for &tid in &removed {
                // ignore ENOENT: nothing to clean up
                let _ = skel.maps.home_cpus.delete(&tid.to_ne_bytes());
                self.saved.remove(&tid);
            }
            removed_all.extend(removed);
            added_all.extend(added);
        }
        for (tid, cpu) in added_all {
            // Hard: the affinity is set before the BPF side learns the home,
            // so the runner is never stealable, not even for a moment.
            if self.pin == Pin::Hard && !SCX_TICK_BREAK_NOPIN {
                self.pin_hard(tid, cpu);
            }
            debug!("tid {tid}: home CPU {cpu}");
            let home = (cpu as i32).to_ne_bytes();
            skel.maps
                .home_cpus
                .update(&tid.to_ne_bytes(), &home, MapFlags::ANY)?;
        }
        if self.pin == Pin::Hard {
            self.process_original
                .retain(|tgid, _| std::path::Path::new(&format!("/proc/{tgid}")).exists());
        }
        self.check_admission();
        Ok(removed_all)
    }

    fn check_admission(&mut self) {
        let load: Vec<(usize, f64, &[usize])> = self
            .groups
            .iter()
            .map(|g| (g.homes.len(), g.share, g.cpus.as_slice()))
            .collect();
        let verdict = admission(&load);
        if verdict != self.last_admission {
            if let Some(w) = &verdict {
                warn!("{w}");
            }
            self.last_admission = verdict;
        }
    }

    /// Give every hard-pinned thread its original affinity back (soft
    /// pinning changed nothing outside the scheduler).
    pub fn restore(&mut self) {
        if SCX_TICK_BREAK_NORESTORE {
            return;
        }
        for (tid, set) in std::mem::take(&mut self.saved) {
            // ESRCH: the thread is gone, nothing to restore
            let _ = sched_setaffinity(Pid::from_raw(tid as i32), &set);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admission_warns_only_when_claims_exceed_tick_cpus() {
        let two: &[usize] = &[1, 2];
        assert_eq!(admission(&[(2, 1.0, two)]), None);
        assert_eq!(admission(&[(0, 1.0, two)]), None);
        let w = admission(&[(3, 1.0, two)]).unwrap();
        assert!(
            w.contains("3.00 CPUs") && w.contains("2 tick CPU(s)"),
            "{w}"
        );
        // shorter deadlines claim less: 4 runners x 0.5 fit on 2 CPUs
        assert_eq!(admission(&[(4, 0.5, two)]), None);
        // two groups sharing CPU 2 count it once
        assert!(admission(&[(2, 0.8, two), (1, 0.8, &[2])]).is_some());
    }

    #[test]
    fn homes_are_least_loaded_and_follow_threads() {
        let mut homes = BTreeMap::new();
        let (added, removed) = reassign(&mut homes, &[2, 4], &[10, 11, 12]);
        assert_eq!(added, vec![(10, 2), (11, 4), (12, 2)]);
        assert!(removed.is_empty());
        // 11 exits, 13 appears: it goes where 11 left room, 10 and 12 keep theirs.
        let (added, removed) = reassign(&mut homes, &[2, 4], &[10, 12, 13]);
        assert_eq!(added, vec![(13, 4)]);
        assert_eq!(removed, vec![11]);
        assert_eq!(homes.get(&10), Some(&2));
        // 10 and 12 exit: the next two fill CPU 2 before 4 gets a second
        let (added, _) = reassign(&mut homes, &[2, 4], &[13, 14, 15]);
        assert_eq!(added, vec![(14, 2), (15, 2)]);
    }
}

//! Which tick group a thread belongs to, from /proc/<tid>/cgroup: the
//! nearest group at or above its cgroup (`scx_tick::run::cgroup::nearest_group`,
//! as the BPF policy decides it).
//! Answers are cached for a quarter second, so cgroup moves are seen within
//! one: the operator moving a thread out expects it to stop counting at once,
//! and a re-read four times a second per waking thread is cheap beside that.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use scx_tick::run::cgroup;

use crate::policy::Pid;

const RECHECK_NS: u64 = 250_000_000;

/// A kernel thread, from the flags field of a /proc/<tid>/stat text.
pub fn is_kthread(proc_stat: &str) -> bool {
    const PF_KTHREAD: u64 = 0x0020_0000;
    // after the parenthesised name: state is field 3, flags field 9
    proc_stat
        .rfind(')')
        .and_then(|i| proc_stat[i + 1..].split_whitespace().nth(6))
        .and_then(|f| f.parse::<u64>().ok())
        .is_some_and(|f| f & PF_KTHREAD != 0)
}

/// What a thread is to the scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Runner(usize),
    Other,
    Kernel,
}

pub struct Classifier {
    root: PathBuf,
    /// The tick groups' cgroup directories.
    groups: Vec<PathBuf>,
    cache: HashMap<Pid, (Kind, u64)>,
}

impl Classifier {
    /// `group_cgroups`: the tick groups' absolute cgroup directories.
    pub fn new(cgroup_root: &Path, group_cgroups: &[&Path]) -> Classifier {
        Classifier {
            root: cgroup_root.to_path_buf(),
            groups: group_cgroups
                .iter()
                .map(|g| g.components().collect())
                .collect(),
            cache: HashMap::new(),
        }
    }

    pub fn kind(&mut self, pid: Pid, now: u64) -> Kind {
        if let Some(&(k, at)) = self.cache.get(&pid)
            && now.saturating_sub(at) < RECHECK_NS
        {
            return k;
        }
        let group = cgroup::cgroup_of(pid as u32).and_then(|rel| {
            cgroup::nearest_group(&self.root, &rel, |d| {
                self.groups.iter().position(|g| g == d)
            })
        });
        let k = match group {
            Some((g, _)) => Kind::Runner(g),
            None if std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| is_kthread(&s)) =>
            {
                Kind::Kernel
            }
            None => Kind::Other,
        };
        self.cache.insert(pid, (k, now));
        k
    }

    /// Drop answers nobody asked for lately (threads come and go).
    pub fn expire(&mut self, now: u64) {
        self.cache
            .retain(|_, (_, at)| now.saturating_sub(*at) < 20 * RECHECK_NS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_threads_are_told_by_their_flags() {
        // rcu_preempt: PF_KTHREAD (0x200000) among its flags
        let rcu = "15 (rcu_preempt) I 2 0 0 0 -1 2129984 0 0 0 0 0 1 0 0 20 0 1 0 4";
        let bash = "150 (bash (x)) S 1 150 150 34816 150 4194560 300 0 0 0 1 2 0 0 20 0 1 0 90";
        assert!(is_kthread(rcu));
        assert!(!is_kthread(bash));
        assert!(!is_kthread("garbage"));
    }

    #[test]
    fn group_dirs_match_with_or_without_a_trailing_slash() {
        let root = Path::new("/sys/fs/cgroup");
        let c = Classifier::new(root, &[Path::new("/sys/fs/cgroup/scx_tick/mc/ticks/")]);
        let dir = root.join("scx_tick/mc/ticks");
        assert_eq!(c.groups[0], dir);
        assert_eq!(
            cgroup::nearest_group(root, "/scx_tick/mc/ticks/x", |d| c
                .groups
                .iter()
                .position(|g| g == d)),
            Some((0, dir))
        );
    }
}

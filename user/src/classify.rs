//! Which tick group a thread belongs to, from /proc/<tid>/cgroup: the
//! nearest group at or above its cgroup, as the BPF policy decides it.
//! Answers are cached for a second, so cgroup moves are seen within one.

use std::collections::HashMap;
use std::path::Path;

use crate::policy::Pid;

const RECHECK_NS: u64 = 1_000_000_000;

/// The nearest of `groups` (cgroup paths below the cgroup2 mount, like
/// `/tick`) at or above `cgroup`.
pub fn nearest_group(groups: &[String], cgroup: &str) -> Option<usize> {
    groups
        .iter()
        .enumerate()
        .filter(|(_, g)| {
            g.as_str() == "/"
                || cgroup == g.as_str()
                || cgroup
                    .strip_prefix(g.as_str())
                    .is_some_and(|rest| rest.starts_with('/'))
        })
        .max_by_key(|(_, g)| g.len())
        .map(|(i, _)| i)
}

/// The cgroup v2 path in a /proc/<tid>/cgroup text (the `0::` line).
pub fn cgroup_of(proc_cgroup: &str) -> Option<&str> {
    proc_cgroup.lines().find_map(|l| l.strip_prefix("0::"))
}

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
    groups: Vec<String>,
    cache: HashMap<Pid, (Kind, u64)>,
}

impl Classifier {
    /// `group_cgroups`: the tick groups' absolute cgroup directories.
    pub fn new(cgroup_root: &Path, group_cgroups: &[&Path]) -> Classifier {
        let groups = group_cgroups
            .iter()
            .map(|g| {
                let rel = g.strip_prefix(cgroup_root).unwrap_or(g);
                format!("/{}", rel.display()).replace("//", "/")
            })
            .map(|g| {
                if g.len() > 1 {
                    g.trim_end_matches('/').to_string()
                } else {
                    g
                }
            })
            .collect();
        Classifier {
            groups,
            cache: HashMap::new(),
        }
    }

    pub fn kind(&mut self, pid: Pid, now: u64) -> Kind {
        if let Some(&(k, at)) = self.cache.get(&pid)
            && now.saturating_sub(at) < RECHECK_NS
        {
            return k;
        }
        let group = std::fs::read_to_string(format!("/proc/{pid}/cgroup"))
            .ok()
            .and_then(|text| cgroup_of(&text).and_then(|cg| nearest_group(&self.groups, cg)));
        let k = match group {
            Some(g) => Kind::Runner(g),
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
            .retain(|_, (_, at)| now.saturating_sub(*at) < 5 * RECHECK_NS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_group_at_or_above_wins() {
        let groups = vec!["/tick".to_string(), "/tick/fast".to_string()];
        assert_eq!(nearest_group(&groups, "/tick"), Some(0));
        assert_eq!(nearest_group(&groups, "/tick/slow/x"), Some(0));
        assert_eq!(nearest_group(&groups, "/tick/fast"), Some(1));
        assert_eq!(nearest_group(&groups, "/tick/fast/ticks"), Some(1));
        assert_eq!(
            nearest_group(&groups, "/ticker"),
            None,
            "a name prefix is not a parent"
        );
        assert_eq!(nearest_group(&groups, "/"), None);
    }

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
    fn proc_cgroup_gives_the_v2_path() {
        assert_eq!(cgroup_of("0::/tick/ticks\n"), Some("/tick/ticks"));
        assert_eq!(cgroup_of("1:name=systemd:/x\n0::/y\n"), Some("/y"));
        assert_eq!(cgroup_of(""), None);
    }

    #[test]
    fn group_paths_are_made_relative_to_the_mount() {
        let root = Path::new("/sys/fs/cgroup");
        let c = Classifier::new(
            root,
            &[
                Path::new("/sys/fs/cgroup/tick"),
                Path::new("/sys/fs/cgroup/scx_tick/mc/ticks/"),
            ],
        );
        assert_eq!(c.groups, vec!["/tick", "/scx_tick/mc/ticks"]);
    }
}

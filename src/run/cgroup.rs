//! cgroup v2 helpers, the one home of thread -> cgroup -> tick group:
//! resolve tick group paths to cgroup ids, list threads, find a thread's
//! cgroup, process and nearest tick group.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::config::MissingCgroup;

/// cgroup2 superblock magic (linux/magic.h).
const CGROUP2_SUPER_MAGIC: i64 = 0x6367_7270;

pub fn is_cgroup2(root: &Path) -> bool {
    nix::sys::statfs::statfs(root)
        .map(|s| s.filesystem_type().0 == CGROUP2_SUPER_MAGIC)
        .unwrap_or(false)
}

/// Absolute path and cgroup id (the directory's inode number, which is
/// what the kernel's kernfs node id is on 64-bit) of a tick group; id 0 for
/// a cgroup that does not exist yet when `missing` allows that.
pub fn resolve(root: &Path, path: &str, missing: MissingCgroup) -> Result<(PathBuf, u64)> {
    if !is_cgroup2(root) {
        bail!(
            "{} is not a cgroup v2 mount; tick groups need the unified cgroup v2 hierarchy \
             (cgroup v1-only hosts are not supported)",
            root.display()
        );
    }
    let p = Path::new(path);
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        root.join(p)
    };
    if !abs.starts_with(root) {
        bail!(
            "tick group {path:?}: not below the cgroup2 mount {}",
            root.display()
        );
    }
    let meta = match std::fs::metadata(&abs) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && missing != MissingCgroup::Refuse => {
            return Ok((abs, 0));
        }
        Err(e) => bail!(
            "tick group {path:?}: cgroup {} does not exist ({e}); create it first (mkdir), use \
             `scx_tick tag`, or let scx_tick wait for it (--missing-cgroup wait) or create it \
             (--missing-cgroup create)",
            abs.display()
        ),
        Ok(m) => m,
    };
    if !meta.is_dir() || !abs.join("cgroup.procs").exists() {
        bail!(
            "tick group {path:?}: {} is not a cgroup directory",
            abs.display()
        );
    }
    Ok((abs, meta.ino()))
}

/// Thread ids in `cgroup` and every cgroup below it.
pub fn threads(cgroup: &Path) -> Result<Vec<u32>> {
    let mut tids = Vec::new();
    let mut stack = vec![cgroup.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let text = match std::fs::read_to_string(dir.join("cgroup.threads")) {
            Ok(t) => t,
            // removed while we walked it
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("reading {}", dir.display())),
        };
        tids.extend(text.lines().filter_map(|l| l.trim().parse::<u32>().ok()));
        // the entry's own type, from the directory: no stat of each of a
        // cgroup's ~40 control files (the pinning scan walks every group's
        // cgroups every 200 ms)
        if let Ok(entries) = std::fs::read_dir(&dir) {
            stack.extend(
                entries
                    .flatten()
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                    .map(|e| e.path()),
            );
        }
    }
    tids.sort_unstable();
    Ok(tids)
}

/// The cgroup id of an existing cgroup directory (its inode number).
pub fn id_of(dir: &Path) -> Option<u64> {
    let meta = std::fs::metadata(dir).ok()?;
    (meta.is_dir() && dir.join("cgroup.procs").exists()).then(|| meta.ino())
}

/// The cgroup v2 path (relative to the mount, with a leading '/') of a
/// thread or process.
pub fn cgroup_of(tid: u32) -> Option<String> {
    let text = std::fs::read_to_string(format!("/proc/{tid}/cgroup")).ok()?;
    v2_path(&text).map(str::to_string)
}

/// The cgroup v2 path in a /proc/<tid>/cgroup text (its `0::` line).
pub fn v2_path(proc_cgroup: &str) -> Option<&str> {
    proc_cgroup.lines().find_map(|l| l.strip_prefix("0::"))
}

/// The process (thread group) of thread `tid`.
pub fn tgid_of(tid: u32) -> Option<u32> {
    std::fs::read_to_string(format!("/proc/{tid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse().ok())
}

/// The tick group of a thread in cgroup `rel` (below the mount at `root`),
/// as the BPF policy classifies it: the nearest directory at or above it
/// that `group_at` names a group, and that directory.
pub fn nearest_group(
    root: &Path,
    rel: &str,
    group_at: impl Fn(&Path) -> Option<usize>,
) -> Option<(usize, PathBuf)> {
    let mut dir = root.join(rel.trim_start_matches('/'));
    loop {
        if let Some(g) = group_at(&dir) {
            return Some((g, dir));
        }
        if dir == root || !dir.pop() {
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_group_at_or_above_wins() {
        let root = Path::new("/sys/fs/cgroup");
        let groups = [root.join("tick"), root.join("tick/fast")];
        let at = |d: &Path| groups.iter().position(|g| g == d);
        let group = |rel| nearest_group(root, rel, at).map(|(g, _)| g);
        assert_eq!(group("/tick"), Some(0));
        assert_eq!(group("/tick/slow/x"), Some(0));
        assert_eq!(group("/tick/fast"), Some(1));
        assert_eq!(group("/tick/fast/ticks"), Some(1));
        assert_eq!(group("/ticker"), None, "a name prefix is not a parent");
        assert_eq!(group("/"), None);
        let everything = |d: &Path| (d == root).then_some(7);
        assert_eq!(
            nearest_group(root, "/a/b", everything),
            Some((7, root.into()))
        );
    }

    #[test]
    fn proc_cgroup_gives_the_v2_path() {
        assert_eq!(v2_path("0::/tick/ticks\n"), Some("/tick/ticks"));
        assert_eq!(v2_path("1:name=systemd:/x\n0::/y\n"), Some("/y"));
        assert_eq!(v2_path(""), None);
    }
}

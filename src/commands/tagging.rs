//! `scx_tick tag` / `untag`: move threads into a tick group.
//!
//! A JVM's tick threads are threads of one process, so the tick group must
//! be a threaded cgroup v2 subtree: the process goes into the domain
//! `<cgroup2>/scx_tick/NAME` and the chosen threads into its threaded child
//! `NAME/ticks`, which is the tick group (`--tick-cgroup scx_tick/NAME/ticks`).

use std::collections::BTreeSet;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use log::{info, warn};

use crate::breakages::SCX_TICK_BREAK_TAGALL;
use crate::config::cli::TagArgs;
use crate::config::parse::parse_regex;
use crate::run::cgroup;

/// Where a tagged process came from, so `untag` can put it back.
const ORIGIN_DIR: &str = "/run/scx_tick/origin";

pub struct GroupDirs {
    pub domain: PathBuf,
    pub ticks: PathBuf,
}

pub fn group_dirs(root: &Path, name: &str) -> Result<GroupDirs> {
    let ok = !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
    if !ok {
        bail!("--group {name:?}: allowed: letters, digits, '_', '.', '-'");
    }
    let domain = root.join("scx_tick").join(name);
    Ok(GroupDirs {
        ticks: domain.join("ticks"),
        domain,
    })
}

fn write_file(path: &Path, value: &str) -> std::io::Result<()> {
    std::fs::write(path, value)
}

fn explain(e: std::io::Error, what: String) -> anyhow::Error {
    match e.kind() {
        ErrorKind::PermissionDenied => anyhow!("{what}: permission denied; run as root"),
        _ => anyhow!("{what}: {e}"),
    }
}

/// Create the domain cgroup and its threaded `ticks` child if needed.
fn ensure_group(root: &Path, dirs: &GroupDirs) -> Result<()> {
    if !cgroup::is_cgroup2(root) {
        bail!(
            "{} is not a cgroup v2 mount: tagging needs the unified cgroup v2 hierarchy \
             (cgroup v1-only hosts are not supported)",
            root.display()
        );
    }
    std::fs::create_dir_all(&dirs.ticks)
        .map_err(|e| explain(e, format!("creating {}", dirs.ticks.display())))?;
    let ty = std::fs::read_to_string(dirs.ticks.join("cgroup.type")).unwrap_or_default();
    if ty.trim() != "threaded" {
        write_file(&dirs.ticks.join("cgroup.type"), "threaded").map_err(|e| {
            explain(
                e,
                format!("making {} a threaded cgroup", dirs.ticks.display()),
            )
        })?;
    }
    Ok(())
}

fn comm(tid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{tid}/comm"))
        .ok()
        .map(|s| s.trim_end().to_string())
}

/// The process (thread group) of thread `tid`.
fn tgid_of(tid: u32) -> Result<u32> {
    cgroup::tgid_of(tid).ok_or_else(|| anyhow!("thread {tid} does not exist (it may have exited)"))
}

/// The threads the arguments select, with their processes.
fn select(args: &TagArgs) -> Result<(Vec<u32>, BTreeSet<u32>)> {
    let mut tids = Vec::new();
    let mut pids = BTreeSet::new();
    if let Some(pid) = args.pid {
        let re = match &args.thread_name {
            Some(r) => Some(parse_regex("--thread-name", r)?),
            None => None,
        };
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
            .map_err(|_| anyhow!("process {pid} does not exist (it may have exited)"))?;
        for t in tasks.flatten() {
            let Some(tid) = t.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            let name = comm(tid).unwrap_or_default();
            if re
                .as_ref()
                .is_none_or(|re| re.is_match(&name) || SCX_TICK_BREAK_TAGALL)
            {
                tids.push(tid);
            }
        }
        if tids.is_empty() {
            bail!(
                "no thread of process {pid} matches --thread-name {:?}",
                args.thread_name.as_deref().unwrap_or("")
            );
        }
        pids.insert(pid);
    }
    for &tid in &args.tid {
        pids.insert(tgid_of(tid)?);
        tids.push(tid);
    }
    tids.sort_unstable();
    tids.dedup();
    Ok((tids, pids))
}

/// Move `ids` into `file` (cgroup.procs or cgroup.threads) one by one: a
/// thread that exited meanwhile is reported, not fatal.
fn move_ids(file: &Path, ids: &[u32]) -> Result<usize> {
    let mut moved = 0;
    for &id in ids {
        match write_file(file, &id.to_string()) {
            Ok(()) => moved += 1,
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {
                warn!("thread {id} vanished before it could be moved")
            }
            Err(e) => return Err(explain(e, format!("moving {id} into {}", file.display()))),
        }
    }
    Ok(moved)
}

pub fn tag(args: &TagArgs) -> Result<()> {
    let root = &args.cgroup_root;
    let dirs = group_dirs(root, &args.group)?;
    let (tids, pids) = select(args)?;
    ensure_group(root, &dirs)?;

    let domain_rel = format!("/{}", dirs.domain.strip_prefix(root)?.display());
    for &pid in &pids {
        let current =
            cgroup::cgroup_of(pid).ok_or_else(|| anyhow!("process {pid} does not exist"))?;
        if current.starts_with(&domain_rel) {
            continue;
        }
        // Remember the process's cgroup so untag can put it back.
        std::fs::create_dir_all(ORIGIN_DIR).ok();
        std::fs::write(format!("{ORIGIN_DIR}/{pid}"), &current).ok();
        move_ids(&dirs.domain.join("cgroup.procs"), &[pid])
            .with_context(|| format!("moving process {pid} into {}", dirs.domain.display()))?;
    }
    let moved = move_ids(&dirs.ticks.join("cgroup.threads"), &tids)?;
    info!(
        "tagged {moved} thread(s) into tick group {} ({}); schedule them with: scx_tick --tick-cgroup scx_tick/{}/ticks",
        args.group,
        dirs.ticks.display(),
        args.group
    );
    Ok(())
}

pub fn untag(args: &TagArgs) -> Result<()> {
    let root = &args.cgroup_root;
    let dirs = group_dirs(root, &args.group)?;
    if !dirs.ticks.exists() {
        bail!(
            "tick group {} does not exist ({} is missing)",
            args.group,
            dirs.ticks.display()
        );
    }
    let (tids, pids) = select(args)?;
    let moved = move_ids(&dirs.domain.join("cgroup.threads"), &tids)?;
    info!("untagged {moved} thread(s) from tick group {}", args.group);
    // A whole process goes back where it came from.
    if args.thread_name.is_none() && args.tid.is_empty() {
        for pid in pids {
            let origin = format!("{ORIGIN_DIR}/{pid}");
            if let Ok(rel) = std::fs::read_to_string(&origin) {
                let back = root.join(rel.trim().trim_start_matches('/'));
                move_ids(&back.join("cgroup.procs"), &[pid])?;
                std::fs::remove_file(&origin).ok();
                info!("process {pid} is back in {}", back.display());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_names_are_checked() {
        let d = group_dirs(Path::new("/sys/fs/cgroup"), "world-1").unwrap();
        assert_eq!(d.ticks, Path::new("/sys/fs/cgroup/scx_tick/world-1/ticks"));
        for bad in ["", "..", "a/b", "x y"] {
            let e = group_dirs(Path::new("/sys/fs/cgroup"), bad)
                .err()
                .unwrap()
                .to_string();
            assert!(e.contains("allowed"), "{e}");
        }
    }

    #[test]
    fn vanished_threads_are_named() {
        let e = tgid_of(u32::MAX - 1).unwrap_err().to_string();
        assert!(e.contains("does not exist"), "{e}");
    }
}

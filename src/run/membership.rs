//! Which cgroups hold each tick group's runners, kept in step with the BPF
//! `tick_groups` map while scx_tick runs (a scan after the kernel's task
//! events, at most every 200 ms, reads the name of a new process and of
//! one that exec'd, renamed a thread or had a thread moved, and every
//! process's every 5 s regardless: [`super::events`]):
//!
//! - a group given by cgroup: the cgroup may appear after scx_tick started
//!   (at boot, before the server's service made it) or be removed and made
//!   again (a restarted service gets a new cgroup id): its id is looked up
//!   on every scan, and the cgroup is created first with
//!   `missing_cgroup = "create"`;
//! - a group of threads selected by name: each matching process gets a
//!   threaded child cgroup `scx_tick-NAME` inside its own cgroup, so the
//!   limits of that cgroup (memory, pids: a systemd service's, a
//!   container's) keep applying to every thread. Matching threads move
//!   there; restarted processes and new threads are found by the next scan;
//!   on exit every thread moves back and the child is removed.
//!
//! A cgroup id is in the BPF map before any thread is moved into it, and
//! `groups_gen` is bumped on every change, so no runner is ever classified
//! against a stale table.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::events::Scan;

use anyhow::{Context, Result, anyhow};
use libbpf_rs::{MapCore, MapFlags};
use log::{debug, info, warn};

use super::cgroup;
use crate::bpf::{BpfSkel, intf};
use crate::breakages::{SCX_TICK_BREAK_NOMOVEBACK, SCX_TICK_BREAK_SELECTALL};
use crate::config::MissingCgroup;
use crate::config::plan::{Plan, Runners, ThreadSelect};

/// The processes a scan sees, and which of them it reads.
struct Listing {
    all: BTreeSet<u32>,
    /// Whose name and command line are read: new ones and changed ones (a
    /// scan of the lists reads of another tracked process only its thread
    /// list, its new threads' names when it changed), or all on a recheck.
    read: Vec<u32>,
    /// The processes the kernel's events say changed (sorted): an exec, a
    /// renamed thread, a thread moved to another cgroup.
    changed: Vec<u32>,
    recheck: bool,
}

/// Name prefix of the threaded child cgroups scx_tick makes in a process's cgroup.
pub const CHILD_PREFIX: &str = "scx_tick-";

/// The BPF table holds at most this many cgroups (all groups together).
const TABLE_SIZE: usize = intf::tick_consts_MAX_GROUPS as usize;

/// The BPF side's view of the groups: the `tick_groups` map and the
/// `groups_gen` counter that makes every task be classified again.
pub struct Table<'a> {
    pub map: &'a dyn MapCore,
    pub groups_gen: Option<&'a mut u32>,
}

impl Table<'_> {
    fn changed(&mut self) {
        if let Some(g) = self.groups_gen.as_deref_mut() {
            *g = g.wrapping_add(1);
        }
    }
}

/// A process whose threads are (partly) in our child cgroup.
struct Proc {
    start: u64,
    comm: String,
    domain: PathBuf,
    child: PathBuf,
    /// When it first matched, and whether its having no runner was said.
    seen: Instant,
    no_runner_said: bool,
    /// Its threads (sorted) and its child's cgroup id as of the last read.
    tids: Vec<u32>,
    child_id: u64,
}

/// A matched process may start its tick threads late (a JVM names them
/// after loading its world): its having none is said after this long.
const NO_RUNNER_GRACE: Duration = Duration::from_secs(30);

/// Is it time to say that a matched process has no runner? Once, after
/// [`NO_RUNNER_GRACE`] without one.
fn says_no_runner(runners: usize, matched_for: Duration, said: bool) -> bool {
    runners == 0 && !said && matched_for >= NO_RUNNER_GRACE
}

enum Source {
    Cgroup {
        path: PathBuf,
        create: bool,
        waiting_said: bool,
    },
    Threads {
        select: ThreadSelect,
        child_name: String,
        procs: BTreeMap<u32, Proc>,
        /// (pid, start) whose threads could not be split off: said once.
        refused: BTreeSet<(u32, u64)>,
    },
}

struct Entry {
    name: String,
    value: intf::tick_group,
    source: Source,
    /// Since when it has had no runner thread, and whether that was said.
    empty_since: Option<Instant>,
    empty_said: bool,
}

/// A group without a runner thread for this long is said (once; again
/// after it had runners).
const EMPTY_GROUP_GRACE: Duration = Duration::from_secs(60);

pub struct Membership {
    root: PathBuf,
    groups: Vec<Entry>,
    /// cgroup id -> (group index, cgroup dir): what the BPF map holds.
    registered: BTreeMap<u64, (usize, PathBuf)>,
    /// scx_tick itself and its ancestors (sudo, a shell): their command
    /// lines may contain the very patterns we look for.
    ours: BTreeSet<u32>,
    /// The processes of the last two scans.
    listed: [BTreeSet<u32>; 2],
    full_said: bool,
}

/// The domain cgroup a process belongs to: its cgroup, or the parent of our
/// child when its main thread is a runner itself (or a killed scx_tick left
/// it there).
pub fn domain_of(root: &Path, rel: &str) -> PathBuf {
    let p = root.join(rel.trim_start_matches('/'));
    match p.file_name().and_then(|n| n.to_str()) {
        Some(n) if n.starts_with(CHILD_PREFIX) => p.parent().unwrap_or(root).to_path_buf(),
        _ => p,
    }
}

/// Field 22 of /proc/PID/stat (start time in clock ticks): tells a
/// restarted process from an old one with a recycled pid.
pub fn parse_start_time(stat: &str) -> Option<u64> {
    // the name (field 2) may contain spaces and parentheses: skip past the last ')'
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

fn start_time(pid: u32) -> Option<u64> {
    parse_start_time(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// The processes of `pids` not in both of the last two scans' `listed`.
fn fresh(pids: &[u32], listed: &[BTreeSet<u32>; 2]) -> Vec<u32> {
    let old = |p: &u32| listed.iter().all(|l| l.contains(p));
    pids.iter().filter(|p| !old(p)).copied().collect()
}

/// Every process id now.
pub fn all_pids() -> Vec<u32> {
    list_ids("/proc")
}

/// scx_tick itself and its ancestors up to init (sudo, a shell): their
/// command lines may contain the very patterns a group looks for.
pub fn own_lineage() -> BTreeSet<u32> {
    let mut ours = BTreeSet::new();
    let mut pid = std::process::id();
    while pid > 1 && ours.insert(pid) {
        let Some(ppid) = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| {
                let rest = s[s.rfind(')')? + 1..].to_string();
                rest.split_whitespace().nth(1)?.parse().ok()
            })
        else {
            break;
        };
        pid = ppid;
    }
    ours
}

/// The processes among `pids` that `select` matches now, but `skip`:
/// pid -> (start time, name). Kernel threads (no command line) never do.
pub fn matching_processes(
    select: &ThreadSelect,
    pids: &[u32],
    skip: &BTreeSet<u32>,
) -> BTreeMap<u32, (u64, String)> {
    let mut matched = BTreeMap::new();
    for &pid in pids {
        if skip.contains(&pid) {
            continue;
        }
        let Some(comm) = read_comm(&format!("/proc/{pid}/comm")) else {
            continue;
        };
        if select.process.as_ref().is_some_and(|r| !r.is_match(&comm)) {
            continue;
        }
        let cmdline = read_cmdline(pid);
        if cmdline.is_empty() || !select.process_matches(&comm, &cmdline) {
            continue;
        }
        if let Some(start) = start_time(pid) {
            matched.insert(pid, (start, comm));
        }
    }
    matched
}

/// A process's threads now, with their names (15 bytes, as the kernel
/// keeps them).
pub fn threads_of(pid: u32) -> Vec<(u32, String)> {
    list_ids(&format!("/proc/{pid}/task"))
        .into_iter()
        .filter_map(|tid| Some((tid, read_comm(&format!("/proc/{pid}/task/{tid}/comm"))?)))
        .collect()
}

/// The distinct names among `names`, in first-seen order, a repeated one
/// with its count ("Netty Epoll Ser x4"), at most `max` of them.
pub fn name_summary<'a>(names: impl IntoIterator<Item = &'a str>, max: usize) -> String {
    let mut seen: Vec<(&str, usize)> = Vec::new();
    for n in names {
        match seen.iter_mut().find(|(s, _)| *s == n) {
            Some((_, c)) => *c += 1,
            None => seen.push((n, 1)),
        }
    }
    let mut out: Vec<String> = seen
        .iter()
        .take(max)
        .map(|(n, c)| {
            if *c > 1 {
                format!("{n:?} x{c}")
            } else {
                format!("{n:?}")
            }
        })
        .collect();
    if seen.len() > max {
        out.push(format!("and {} more", seen.len() - max));
    }
    out.join(", ")
}

/// A comm file: at most 16 bytes, read in one call (no stat for a size
/// hint: every process's is read on each full scan).
fn read_comm(path: &str) -> Option<String> {
    let mut buf = [0u8; 64];
    let n = std::fs::File::open(path).ok()?.read(&mut buf).ok()?;
    let s = String::from_utf8_lossy(&buf[..n]);
    Some(s.trim_end_matches('\n').to_string())
}

/// The command line with NULs as spaces; empty for kernel threads.
fn read_cmdline(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            String::from_utf8_lossy(&b)
                .trim_end_matches('\0')
                .replace('\0', " ")
        })
        .unwrap_or_default()
}

fn list_ids(dir: &str) -> Vec<u32> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

fn threads_in(dir: &Path) -> BTreeSet<u32> {
    std::fs::read_to_string(dir.join("cgroup.threads"))
        .map(|t| t.lines().filter_map(|l| l.trim().parse().ok()).collect())
        .unwrap_or_default()
}

/// Move thread `tid` into `dir`; a thread that exited meanwhile is no error.
fn move_thread(dir: &Path, tid: u32) -> std::io::Result<()> {
    match std::fs::write(dir.join("cgroup.threads"), tid.to_string()) {
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => Ok(()),
        r => r,
    }
}

/// Make `child` a threaded cgroup below `domain` (or find it made).
fn make_threaded_child(domain: &Path, child: &Path) -> Result<()> {
    match std::fs::create_dir(child) {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
        Err(e) => return Err(anyhow!("creating {}: {e}", child.display())),
    }
    let ty = std::fs::read_to_string(child.join("cgroup.type")).unwrap_or_default();
    if ty.trim() == "threaded" {
        return Ok(());
    }
    if let Err(e) = std::fs::write(child.join("cgroup.type"), "threaded") {
        let _ = std::fs::remove_dir(child);
        let controllers =
            std::fs::read_to_string(domain.join("cgroup.subtree_control")).unwrap_or_default();
        return Err(anyhow!(
            "cgroup v2 refuses to make {} threaded ({e}): this works only when {} enables no \
             domain controllers for its children (its cgroup.subtree_control: {:?}) and has no \
             child cgroups with processes; give the group a cgroup of its own instead \
             (cgroup = PATH, e.g. made by `scx_tick tag`)",
            child.display(),
            domain.display(),
            controllers.trim()
        ));
    }
    Ok(())
}

impl Membership {
    pub fn new(plan: &Plan, root: &Path) -> Membership {
        let groups = plan
            .groups
            .iter()
            .enumerate()
            .map(|(i, g)| Entry {
                name: g.name.clone(),
                value: intf::tick_group { idx: i as u32 },
                source: match &g.runners {
                    Runners::Cgroup(path) => Source::Cgroup {
                        path: path.clone(),
                        create: plan.missing_cgroup == MissingCgroup::Create,
                        waiting_said: false,
                    },
                    Runners::Threads(select) => Source::Threads {
                        select: select.clone(),
                        child_name: format!("{CHILD_PREFIX}{}", g.name.replace('/', "_")),
                        procs: BTreeMap::new(),
                        refused: BTreeSet::new(),
                    },
                },
                empty_since: Some(Instant::now()),
                empty_said: false,
            })
            .collect();
        Membership {
            root: root.to_path_buf(),
            groups,
            registered: BTreeMap::new(),
            ours: own_lineage(),
            listed: Default::default(),
            full_said: false,
        }
    }

    /// A freshly loaded scheduler learns every cgroup known so far (before
    /// it attaches: no runner is ever seen unclassified).
    pub fn attach(&self, skel: &BpfSkel) -> Result<()> {
        for (&id, &(i, _)) in &self.registered {
            Self::write_entry(&skel.maps.tick_groups, id, &self.groups[i].value)?;
        }
        Ok(())
    }

    fn write_entry(map: &dyn MapCore, id: u64, value: &intf::tick_group) -> Result<()> {
        // SAFETY: tick_group is a plain C struct without padding holes.
        let bytes = unsafe {
            std::slice::from_raw_parts(
                value as *const _ as *const u8,
                std::mem::size_of::<intf::tick_group>(),
            )
        };
        map.update(&id.to_ne_bytes(), bytes, MapFlags::ANY)
            .context("registering a tick group cgroup")
    }

    /// Put cgroup `id` of group `i` into the BPF table; false when it is full.
    fn register(&mut self, t: &mut Table, id: u64, i: usize, dir: &Path) -> bool {
        if self.registered.get(&id).is_some_and(|(g, _)| *g == i) {
            return true;
        }
        if !self.registered.contains_key(&id) && self.registered.len() >= TABLE_SIZE {
            if !self.full_said {
                warn!(
                    "tick group {}: {} not scheduled as tick runners: the BPF table holds at most \
                     {TABLE_SIZE} tick group cgroups at once (all groups and matched processes together)",
                    self.groups[i].name,
                    dir.display()
                );
                self.full_said = true;
            }
            return false;
        }
        if let Err(e) = Self::write_entry(t.map, id, &self.groups[i].value) {
            warn!("{e:#}");
            return false;
        }
        t.changed();
        self.registered.insert(id, (i, dir.to_path_buf()));
        debug!(
            "tick group {}: cgroup {} (id {id}) registered",
            self.groups[i].name,
            dir.display()
        );
        true
    }

    /// Runner threads per group now: the threads of its cgroups and their
    /// descendants (statistics' `runners`). A group that has had none for
    /// [`EMPTY_GROUP_GRACE`] is said once, with where to look.
    pub fn runner_counts(&mut self) -> Vec<u64> {
        let mut counts = vec![0u64; self.groups.len()];
        for (i, dir) in self.registered.values() {
            counts[*i] += cgroup::threads(dir).map_or(0, |t| t.len() as u64);
        }
        for (g, &n) in self.groups.iter_mut().zip(&counts) {
            if n > 0 {
                (g.empty_since, g.empty_said) = (None, false);
                continue;
            }
            let since = *g.empty_since.get_or_insert_with(Instant::now);
            if !g.empty_said && since.elapsed() >= EMPTY_GROUP_GRACE {
                let what = match &g.source {
                    Source::Cgroup { path, .. } => format!("cgroup {}", path.display()),
                    Source::Threads { select, .. } => select.describe(),
                };
                warn!(
                    "tick group {}: no runner thread for {} s ({what} selects none): nothing is \
                     scheduled as its tick runners; `scx_tick match` lists what it selects now",
                    g.name,
                    since.elapsed().as_secs()
                );
                g.empty_said = true;
            }
        }
        counts
    }

    /// The cgroups holding group `i`'s runners now (for the pinning scan).
    pub fn cgroups(&self) -> Vec<Vec<PathBuf>> {
        let mut out = vec![Vec::new(); self.groups.len()];
        for (i, dir) in self.registered.values() {
            out[*i].push(dir.clone());
        }
        out
    }

    /// A full scan now, whenever the last one was (before the first
    /// attach: runners are known from the scheduler's first moment, as
    /// they were when every group was registered at load).
    pub fn scan(&mut self, t: &mut Table) {
        // events before this attach were not counted (a re-attach): every
        // process is new to the two scans after it
        self.listed = Default::default();
        self.refresh(t, Scan::Full);
    }

    /// The scan the scheduler's [`super::events::ScanGate`] says is due:
    /// look up the groups' cgroups, find the selected threads, move them,
    /// and bring the BPF table in step.
    pub fn refresh(&mut self, t: &mut Table, scan: Scan) {
        let mut want: BTreeSet<u64> = BTreeSet::new();
        let pids = if self
            .groups
            .iter()
            .any(|g| matches!(g.source, Source::Threads { .. }))
        {
            self.listing(all_pids(), scan)
        } else {
            Listing {
                all: BTreeSet::new(),
                read: Vec::new(),
                changed: Vec::new(),
                recheck: true,
            }
        };
        for i in 0..self.groups.len() {
            match &self.groups[i].source {
                Source::Cgroup { .. } => {
                    if let Some((id, dir)) = self.find_cgroup(i)
                        && self.register(t, id, i, &dir)
                    {
                        want.insert(id);
                    }
                }
                Source::Threads { .. } => self.scan_threads(t, i, &pids, &mut want),
            }
        }
        // cgroups gone (removed, their processes gone): out of the table
        let stale: Vec<u64> = self
            .registered
            .keys()
            .filter(|id| !want.contains(id))
            .copied()
            .collect();
        for id in &stale {
            let (i, dir) = self.registered.remove(id).unwrap();
            // ENOENT: already gone with its scheduler
            let _ = t.map.delete(&id.to_ne_bytes());
            if matches!(self.groups[i].source, Source::Threads { .. }) {
                // our child of an exited process: empty, or removed with its parent
                let _ = std::fs::remove_dir(&dir);
            }
            debug!(
                "tick group {}: cgroup {} (id {id}) unregistered",
                self.groups[i].name,
                dir.display()
            );
        }
        if !stale.is_empty() {
            t.changed();
        }
    }

    /// The processes now, and whose names this scan reads: the ones new in
    /// this scan or the last and those the kernel's events say changed, or
    /// all of them on a full scan (`recheck`).
    fn listing(&mut self, pids: Vec<u32>, scan: Scan) -> Listing {
        let (recheck, changed) = match scan {
            Scan::Full => (true, Vec::new()),
            Scan::Lists(changed) => (false, changed),
        };
        let all: BTreeSet<u32> = pids.iter().copied().collect();
        let mut read = if recheck {
            pids
        } else {
            let mut read = fresh(&pids, &self.listed);
            read.extend(changed.iter().filter(|p| all.contains(p)));
            read
        };
        read.sort_unstable(); // searched per tracked process
        read.dedup();
        self.listed.swap(0, 1);
        self.listed[0] = all.clone();
        Listing {
            all,
            read,
            changed,
            recheck,
        }
    }

    /// A cgroup group's cgroup, created or waited for; logs each change.
    fn find_cgroup(&mut self, i: usize) -> Option<(u64, PathBuf)> {
        let name = self.groups[i].name.clone();
        let Source::Cgroup {
            path,
            create,
            waiting_said,
        } = &mut self.groups[i].source
        else {
            return None;
        };
        if let Some(id) = cgroup::id_of(path) {
            if *waiting_said {
                info!(
                    "tick group {name}: cgroup {} exists now; its threads are tick runners",
                    path.display()
                );
                *waiting_said = false;
            }
            return Some((id, path.clone()));
        }
        if *create {
            match std::fs::create_dir_all(&*path) {
                Ok(()) => {
                    info!(
                        "tick group {name}: created cgroup {} (missing_cgroup = \"create\")",
                        path.display()
                    );
                    return cgroup::id_of(path).map(|id| (id, path.clone()));
                }
                Err(e) if !*waiting_said => warn!(
                    "tick group {name}: cannot create cgroup {}: {e}; waiting for it",
                    path.display()
                ),
                Err(_) => {}
            }
        } else if !*waiting_said {
            info!(
                "tick group {name}: cgroup {} does not exist (yet); waiting for it, its threads \
                 become tick runners once it does",
                path.display()
            );
        }
        *waiting_said = true;
        None
    }

    /// Group `i` of threads selected by name: every matching process's
    /// threads into its child cgroup.
    fn scan_threads(&mut self, t: &mut Table, i: usize, pids: &Listing, want: &mut BTreeSet<u64>) {
        let Source::Threads { select, procs, .. } = &self.groups[i].source else {
            return;
        };
        let matched = matching_processes(select, &pids.read, &self.ours);
        // processes that exited, were replaced (same pid, new start) or,
        // read again (a process may exec into another), no longer match:
        // their threads go back, their child may go
        let gone: Vec<u32> = procs
            .iter()
            .filter(|(pid, p)| match pids.read.binary_search(pid) {
                Ok(_) => matched.get(pid).is_none_or(|(s, _)| *s != p.start),
                Err(_) => !pids.all.contains(pid),
            })
            .map(|(pid, _)| *pid)
            .collect();
        for pid in gone {
            self.release(i, pid);
        }
        let Source::Threads { procs, .. } = &self.groups[i].source else {
            return;
        };
        let kept: Vec<(u32, (u64, String))> = procs
            .iter()
            .filter(|(pid, _)| !matched.contains_key(pid))
            .map(|(pid, p)| (*pid, (p.start, p.comm.clone())))
            .collect();
        for (pid, (start, comm)) in matched.into_iter().chain(kept) {
            // between rechecks, a tracked process whose threads are the
            // same, none of them renamed or moved, needs nothing more
            if !pids.recheck
                && pids.changed.binary_search(&pid).is_err()
                && let Some(id) = self.unchanged(i, pid)
            {
                want.insert(id);
                continue;
            }
            self.take_threads(t, i, pid, start, comm, want);
        }
    }

    /// The registered child of group `i`'s tracked process `pid`, when its
    /// threads are those of the last read.
    fn unchanged(&self, i: usize, pid: u32) -> Option<u64> {
        let Source::Threads { procs, .. } = &self.groups[i].source else {
            return None;
        };
        let p = procs.get(&pid)?;
        let mut tids = list_ids(&format!("/proc/{pid}/task"));
        tids.sort_unstable();
        (self.registered.contains_key(&p.child_id) && tids == p.tids).then_some(p.child_id)
    }

    /// A process left the group: its live threads back into its cgroup.
    fn release(&mut self, i: usize, pid: u32) {
        let name = self.groups[i].name.clone();
        let Source::Threads { procs, .. } = &mut self.groups[i].source else {
            return;
        };
        let Some(p) = procs.remove(&pid) else {
            return;
        };
        let mut moved = 0;
        for tid in threads_in(&p.child) {
            if cgroup_tgid(tid) == Some(pid) && move_thread(&p.domain, tid).is_ok() {
                moved += 1;
            }
        }
        if moved > 0 {
            info!(
                "tick group {name}: process {pid} ({}) no longer matches; {moved} thread(s) back in {}",
                p.comm,
                p.domain.display()
            );
        } else {
            info!("tick group {name}: process {pid} ({}) exited", p.comm);
        }
    }

    fn take_threads(
        &mut self,
        t: &mut Table,
        i: usize,
        pid: u32,
        start: u64,
        comm: String,
        want: &mut BTreeSet<u64>,
    ) {
        let name = self.groups[i].name.clone();
        let Source::Threads {
            select,
            child_name,
            procs,
            refused,
        } = &mut self.groups[i].source
        else {
            return;
        };
        if refused.contains(&(pid, start)) {
            return;
        }
        let Some(rel) = cgroup::cgroup_of(pid) else {
            return; // exited
        };
        let domain = domain_of(&self.root, &rel);
        let child = domain.join(&*child_name);
        let select = select.clone();
        let known = procs.get(&pid).is_some_and(|p| p.domain == domain);
        if !known {
            if let Some(old) = procs.remove(&pid) {
                info!(
                    "tick group {name}: process {pid} moved from {} to {}",
                    old.domain.display(),
                    domain.display()
                );
            }
            if let Err(e) = make_threaded_child(&domain, &child) {
                warn!("tick group {name}: process {pid} ({comm}): {e:#}");
                refused.insert((pid, start));
                return;
            }
        }
        let Some(id) = cgroup::id_of(&child) else {
            return; // removed under us (the service stopped): next scan
        };
        // in the table before any thread moves in
        if !self.register(t, id, i, &child) {
            return;
        }
        want.insert(id);
        let in_child = threads_in(&child);
        let (mut moved_in, mut moved_out) = (0, 0);
        let threads = threads_of(pid);
        let mut tids: Vec<u32> = threads.iter().map(|(t, _)| *t).collect();
        tids.sort_unstable();
        let is_runner = |name: &str| select.thread_matches(name) || SCX_TICK_BREAK_SELECTALL;
        let runners = threads.iter().filter(|(_, n)| is_runner(n)).count();
        for (tid, tname) in threads.iter().map(|(t, n)| (*t, n.as_str())) {
            let runner = is_runner(tname);
            let target = match (runner, in_child.contains(&tid)) {
                (true, false) => &child,
                (false, true) => &domain,
                _ => continue,
            };
            match move_thread(target, tid) {
                Ok(()) if runner => {
                    moved_in += 1;
                    debug!(
                        "tick group {name}: thread {tid} ({tname}) of process {pid} is a tick runner"
                    );
                }
                Ok(()) => moved_out += 1,
                Err(e) => warn!(
                    "tick group {name}: moving thread {tid} ({tname}) of process {pid} into {}: {e}",
                    target.display()
                ),
            }
        }
        let Source::Threads { procs, .. } = &mut self.groups[i].source else {
            return;
        };
        let (seen, mut no_runner_said) = procs
            .get(&pid)
            .map_or((Instant::now(), false), |p| (p.seen, p.no_runner_said));
        if says_no_runner(runners, seen.elapsed(), no_runner_said) {
            warn!(
                "tick group {name}: process {pid} ({comm}) has matched for {} s, but none of its \
                 {} threads matches {}, so nothing of it is scheduled as a tick runner. Its \
                 thread names: {} (`scx_tick match` lists them any time)",
                seen.elapsed().as_secs(),
                threads.len(),
                select.describe(),
                name_summary(threads.iter().map(|(_, n)| n.as_str()), 32)
            );
            no_runner_said = true;
        }
        if !known {
            info!(
                "tick group {name}: process {pid} ({comm}) matches; {runners} of its {} threads \
                 are runners, in {}",
                threads.len(),
                child.display()
            );
        }
        if moved_in + moved_out > 0 && known {
            debug!(
                "tick group {name}: process {pid}: {moved_in} new runner(s), {moved_out} renamed away"
            );
        }
        procs.insert(
            pid,
            Proc {
                start,
                comm,
                domain,
                child,
                seen,
                no_runner_said,
                tids,
                child_id: id,
            },
        );
    }

    /// Every thread back into its process's cgroup, our children removed.
    pub fn restore(&mut self) {
        if SCX_TICK_BREAK_NOMOVEBACK {
            return;
        }
        let mut moved = 0;
        let mut children = BTreeSet::new();
        for g in &mut self.groups {
            if let Source::Threads { procs, .. } = &mut g.source {
                for (_, p) in std::mem::take(procs) {
                    for tid in threads_in(&p.child) {
                        if move_thread(&p.domain, tid).is_ok() {
                            moved += 1;
                        }
                    }
                    children.insert(p.child);
                }
            }
        }
        for child in &children {
            if let Err(e) = std::fs::remove_dir(child)
                && e.kind() != ErrorKind::NotFound
            {
                warn!("could not remove {}: {e}", child.display());
            }
        }
        if !children.is_empty() {
            info!(
                "{moved} tick runner thread(s) back in their processes' cgroups, {} child cgroup(s) removed",
                children.len()
            );
        }
    }
}

impl Drop for Membership {
    fn drop(&mut self) {
        // every exit path, errors included
        self.restore();
    }
}

/// The process of thread `tid`.
fn cgroup_tgid(tid: u32) -> Option<u32> {
    std::fs::read_to_string(format!("/proc/{tid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse().ok())
}

#[cfg(test)]
#[path = "membership_tests.rs"]
mod tests;

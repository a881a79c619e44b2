//! Deadline hints: a tick runner that knows when its next tick is due
//! writes that deadline into shared memory, and the BPF policy uses it
//! instead of guessing (wake time + relative deadline). No syscall on the
//! tick path: the runner's slot lives in a memory-mapped BPF array.
//!
//! Each tick group has its own array (an inner map of `group_hints`), so a
//! process can only ever write the slots of its own group. A runner
//! registers once through the Unix socket [`SOCKET`]: scx_tick checks the
//! caller's credentials (SO_PEERCRED), that the thread belongs to the caller
//! and sits in a tick group, and that the caller is root or owns the
//! group's cgroup directory (cgroup delegation); then it assigns a slot and
//! passes the group's array as a file descriptor (SCM_RIGHTS) to mmap.
//! The client side is the `scx_tick_hint` crate in `hint/`.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use libbpf_rs::{MapCore, MapFlags, MapHandle, MapType};
use log::{debug, info};
use nix::sys::socket::{ControlMessage, MsgFlags, getsockopt, sendmsg, sockopt};
use scx_tick_hint::protocol::{self, Framing, REQUEST_MAX};

use super::cgroup;
use super::membership::CHILD_PREFIX;
use crate::bpf::{BpfSkel, intf};
use crate::breakages::SCX_TICK_BREAK_NOAUTH;
use crate::config::plan::{Plan, Runners};

/// Where runners register (the lines: `scx_tick_hint::protocol`).
pub const SOCKET: &str = scx_tick_hint::DEFAULT_SOCKET;

const SLOTS: usize = intf::tick_consts_MAX_HINT_SLOTS as usize;

/// The socket is open to every local user and served by the main loop
/// (thread scans, statistics, shutdown): a registration is one short line
/// that a client sends at once. Each pass of the loop accepts what waits in
/// the backlog (for at most [`SERVE_TIME`]) and reads, without blocking,
/// every connection whose line is not complete yet; one that sends more
/// than a line, or has not sent it within [`CLIENT_TIME`], is dropped. So
/// idle or trickling connections cost a read each, not a wait. When each
/// accepted connection was read in turn for up to 20 ms, a registration
/// behind 800 idle ones failed after the client's 5 s in both probe runs
/// (records/probes/hint-backlog-2026-11-30/), behind 150 once in the suite.
const CLIENT_TIME: Duration = Duration::from_millis(500);
const SERVE_TIME: Duration = Duration::from_millis(50);
/// Connections kept waiting for their line (file descriptors): past it the
/// one that waited longest is dropped for the newest.
const MAX_PENDING: usize = 256;

/// A connection whose request line is not complete yet.
struct Pending {
    stream: UnixStream,
    since: Instant,
    buf: Vec<u8>,
}

/// What a pending connection has sent so far.
enum Request {
    Line(Vec<u8>),
    Wait,
    Drop(String),
}

struct GroupHints {
    /// The group's cgroup; None for threads selected by name, whose cgroups
    /// are the child cgroups named `child` that scx_tick makes for them.
    cgroup: Option<PathBuf>,
    child: String,
    /// The memory-mappable array of this group's slots.
    map: MapHandle,
    /// slot -> tid holding it
    owners: Vec<Option<u32>>,
}

pub struct Hints {
    groups: Vec<GroupHints>,
    /// tid -> (group, slot)
    slots: BTreeMap<u32, (usize, usize)>,
    listener: UnixListener,
    pending: Vec<Pending>,
    path: PathBuf,
    /// Where cgroup2 is mounted (--cgroup-root).
    cgroup_root: PathBuf,
}

impl Hints {
    /// Create the groups' hint arrays and open the registration socket.
    /// They outlive attaches (CPU hotplug restarts): mapped slots stay valid.
    pub fn new(plan: &Plan, cgroup_root: &Path) -> Result<Hints> {
        let opts = libbpf_rs::libbpf_sys::bpf_map_create_opts {
            sz: std::mem::size_of::<libbpf_rs::libbpf_sys::bpf_map_create_opts>() as _,
            map_flags: libbpf_rs::libbpf_sys::BPF_F_MMAPABLE,
            ..Default::default()
        };
        let groups = plan
            .groups
            .iter()
            .map(|g| {
                let map = MapHandle::create(
                    MapType::Array,
                    Some("tick_hints"),
                    4,
                    8,
                    SLOTS as u32,
                    &opts,
                )
                .context("creating a deadline hint array")?;
                Ok(GroupHints {
                    cgroup: match &g.runners {
                        Runners::Cgroup(p) => Some(p.clone()),
                        Runners::Threads(_) => None,
                    },
                    child: format!("{}{}", CHILD_PREFIX, g.name.replace('/', "_")),
                    map,
                    owners: vec![None; SLOTS],
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let path = PathBuf::from(SOCKET);
        let listener = listen(&path)?;
        info!("deadline hints: runners register at {}", path.display());
        Ok(Hints {
            groups,
            slots: BTreeMap::new(),
            listener,
            pending: Vec::new(),
            path,
            cgroup_root: cgroup_root.to_path_buf(),
        })
    }

    /// Give a freshly loaded scheduler the hint arrays and every registration.
    pub fn attach(&self, skel: &BpfSkel) -> Result<()> {
        for (i, g) in self.groups.iter().enumerate() {
            let fd = g.map.as_fd().as_raw_fd() as u32;
            skel.maps
                .group_hints
                .update(&(i as u32).to_ne_bytes(), &fd.to_ne_bytes(), MapFlags::ANY)
                .context("installing a deadline hint array")?;
        }
        for (&tid, &(group, slot)) in &self.slots {
            publish(skel, tid, group, slot)?;
        }
        Ok(())
    }

    /// Accept what waits in the backlog (for at most [`SERVE_TIME`]) and
    /// answer every connection whose request line has come.
    pub fn serve(&mut self, skel: &BpfSkel) {
        let start = Instant::now();
        while start.elapsed() < SERVE_TIME {
            let Ok((stream, _)) = self.listener.accept() else {
                break;
            };
            let _ = admit(&mut self.pending, stream, Instant::now());
        }
        let mut pending = std::mem::take(&mut self.pending);
        sweep(&mut pending, Instant::now(), |stream, line| {
            self.answer(skel, stream, line)
        });
        self.pending = pending;
    }

    /// Threads gone from their tick group give their slots back.
    pub fn forget(&mut self, skel: &BpfSkel, tids: &[u32]) {
        for tid in tids {
            if let Some((group, slot)) = self.slots.remove(tid) {
                self.groups[group].owners[slot] = None;
                let _ = skel.maps.hint_slots.delete(&tid.to_ne_bytes());
                debug!("tid {tid}: hint slot {slot} of group {group} released");
            }
        }
    }

    /// Reply to a request line, without blocking: the reply is short and
    /// the client's socket buffer empty, unless the client is hostile.
    fn answer(&mut self, skel: &BpfSkel, stream: &UnixStream, line: &[u8]) -> Result<()> {
        match self.register(skel, stream, line) {
            Ok((slot, fd)) => {
                let reply = protocol::reply_slot(slot, SLOTS);
                let fds = [fd];
                sendmsg::<()>(
                    stream.as_raw_fd(),
                    &[std::io::IoSlice::new(reply.as_bytes())],
                    &[ControlMessage::ScmRights(&fds)],
                    MsgFlags::MSG_DONTWAIT,
                    None,
                )?;
            }
            Err(e) => {
                debug!("refused a deadline hint registration: {e:#}");
                let mut w = stream;
                w.write_all(protocol::reply_refused(&format!("{e:#}")).as_bytes())?;
            }
        }
        Ok(())
    }

    /// Check the caller and give its thread a slot: (slot, map fd).
    fn register(
        &mut self,
        skel: &BpfSkel,
        stream: &UnixStream,
        line: &[u8],
    ) -> Result<(usize, i32)> {
        let tid = protocol::parse_request(line).map_err(anyhow::Error::msg)?;
        let cred = getsockopt(stream, sockopt::PeerCredentials)?;
        if !Path::new(&format!("/proc/{}/task/{tid}", cred.pid())).exists() {
            bail!(
                "thread {tid} is not a thread of the calling process {}",
                cred.pid()
            );
        }
        let (group, dir) = self.group_of(tid)?;
        let owner = std::fs::metadata(&dir)?.uid();
        if cred.uid() != 0 && cred.uid() != owner && !SCX_TICK_BREAK_NOAUTH {
            bail!(
                "uid {} may not write deadline hints of tick group {}: only root or the \
                 cgroup's owner (uid {owner}) may",
                cred.uid(),
                dir.display()
            );
        }
        let slot = match self.slots.get(&tid) {
            Some(&(g, s)) if g == group => s,
            _ => {
                self.forget(skel, &[tid]);
                let g = &mut self.groups[group];
                let s = g.owners.iter().position(Option::is_none).with_context(|| {
                    format!("all {SLOTS} hint slots of the tick group are taken")
                })?;
                g.owners[s] = Some(tid);
                self.slots.insert(tid, (group, s));
                s
            }
        };
        // a fresh slot starts without a hint (a previous owner's is void)
        self.groups[group].map.update(
            &(slot as u32).to_ne_bytes(),
            &0u64.to_ne_bytes(),
            MapFlags::ANY,
        )?;
        publish(skel, tid, group, slot)?;
        debug!(
            "tid {tid} (pid {}): hint slot {slot} of group {group}",
            cred.pid()
        );
        Ok((slot, self.groups[group].map.as_fd().as_raw_fd()))
    }

    /// The tick group a thread is in, as the BPF side classifies it: the
    /// nearest configured group at or above the thread's cgroup.
    fn group_of(&self, tid: u32) -> Result<(usize, PathBuf)> {
        let rel = cgroup::cgroup_of(tid).with_context(|| {
            format!("thread {tid} does not exist or has no cgroup v2 membership")
        })?;
        // a group of selected threads lives in a child cgroup of that name
        let group_at = |dir: &Path| {
            let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
            self.groups.iter().position(|g| match &g.cgroup {
                Some(c) => c == dir,
                None => name == g.child,
            })
        };
        cgroup::nearest_group(&self.cgroup_root, &rel, group_at)
            .with_context(|| format!("thread {tid} is not in a tick group (its cgroup is {rel})"))
    }
}

impl Drop for Hints {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

fn publish(skel: &BpfSkel, tid: u32, group: usize, slot: usize) -> Result<()> {
    let r = intf::hint_slot_ref {
        group: group as u32,
        slot: slot as u32,
    };
    let mut bytes = [0u8; 8];
    bytes[..4].copy_from_slice(&r.group.to_ne_bytes());
    bytes[4..].copy_from_slice(&r.slot.to_ne_bytes());
    skel.maps
        .hint_slots
        .update(&tid.to_ne_bytes(), &bytes, MapFlags::ANY)
        .context("publishing a hint slot")?;
    Ok(())
}

/// Read what a pending connection has sent (its stream is non-blocking):
/// its request line once complete (at most [`REQUEST_MAX`] bytes without
/// the newline), Wait while it may still come, Drop when it is too long,
/// the client left, or [`CLIENT_TIME`] since `p.since` passed first.
fn poll_request(p: &mut Pending, now: Instant) -> Request {
    let mut chunk = [0u8; REQUEST_MAX + 1];
    loop {
        match (&p.stream).read(&mut chunk) {
            Ok(0) => return Request::Drop("closed before a complete request".into()),
            Ok(n) => p.buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Request::Drop(e.to_string()),
        }
        match protocol::frame_request(&p.buf) {
            Framing::Incomplete => {}
            Framing::TooLong => {
                return Request::Drop(format!(
                    "a request longer than {REQUEST_MAX} bytes: dropped"
                ));
            }
            Framing::Line(line) => return Request::Line(line.to_vec()),
        }
    }
    if now.saturating_duration_since(p.since) > CLIENT_TIME {
        return Request::Drop(format!(
            "no complete request within {CLIENT_TIME:?}: dropped"
        ));
    }
    Request::Wait
}

/// Keep a new connection waiting for its request line; past
/// [`MAX_PENDING`] the one that waited longest makes room.
fn admit(pending: &mut Vec<Pending>, stream: UnixStream, now: Instant) -> std::io::Result<()> {
    stream.set_nonblocking(true)?;
    if pending.len() >= MAX_PENDING {
        pending.remove(0);
    }
    pending.push(Pending {
        stream,
        since: now,
        buf: Vec::new(),
    });
    Ok(())
}

/// Answer each pending connection whose request line has come (`answer`),
/// drop those that failed, keep the rest waiting: one read each, no wait.
fn sweep(
    pending: &mut Vec<Pending>,
    now: Instant,
    mut answer: impl FnMut(&UnixStream, &[u8]) -> Result<()>,
) {
    pending.retain_mut(|p| {
        // a client's failure is the client's: logged for the operator
        // who asks (-v), not at every attempt of a hostile one
        match poll_request(p, now) {
            Request::Wait => return true,
            Request::Drop(why) => debug!("deadline hint registration: {why}"),
            Request::Line(line) => {
                if let Err(e) = answer(&p.stream, &line) {
                    debug!("deadline hint registration: {e:#}");
                }
            }
        }
        false
    });
}

/// The registration socket: anyone may connect, the credentials decide.
fn listen(path: &Path) -> Result<UnixListener> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    // a socket left by an instance that was killed
    let _ = std::fs::remove_file(path);
    let l = UnixListener::bind(path).with_context(|| format!("binding {}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666))?;
    l.set_nonblocking(true)?;
    Ok(l)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(server: UnixStream, since: Instant) -> Pending {
        let mut p = Vec::new();
        admit(&mut p, server, since).unwrap();
        p.pop().unwrap()
    }

    fn dropped(r: Request) -> String {
        match r {
            Request::Drop(why) => why,
            Request::Line(l) => panic!("a line: {l:?}"),
            Request::Wait => panic!("still waiting"),
        }
    }

    #[test]
    fn a_request_is_one_short_line_sent_at_once_or_it_is_dropped() {
        let t0 = Instant::now();
        let late = t0 + CLIENT_TIME + Duration::from_millis(1);
        let (mut client, server) = UnixStream::pair().unwrap();
        client.write_all(b"REGISTER 42\n").unwrap();
        match poll_request(&mut pending(server, t0), t0) {
            Request::Line(l) => assert_eq!(l, b"REGISTER 42"),
            _ => panic!("no line"),
        }

        // a client that trickles its line waits, and is dropped past CLIENT_TIME
        let (mut client, server) = UnixStream::pair().unwrap();
        let mut p = pending(server, t0);
        client.write_all(b"REG").unwrap();
        assert!(matches!(poll_request(&mut p, t0), Request::Wait));
        client.write_all(b"IS").unwrap();
        let e = dropped(poll_request(&mut p, late));
        assert!(e.contains("no complete request"), "{e}");
        // ...and its line completed in time is answered
        let (mut client, server) = UnixStream::pair().unwrap();
        let mut p = pending(server, t0);
        client.write_all(b"REGISTER").unwrap();
        assert!(matches!(poll_request(&mut p, t0), Request::Wait));
        client.write_all(b" 7\n").unwrap();
        assert!(matches!(poll_request(&mut p, t0), Request::Line(_)));

        // longer than a request can be, with or without its newline
        for long in [vec![b'x'; 4096], [vec![b'x'; 100], b"\n".to_vec()].concat()] {
            let (mut client, server) = UnixStream::pair().unwrap();
            client.write_all(&long).unwrap();
            let e = dropped(poll_request(&mut pending(server, t0), t0));
            assert!(e.contains("longer than"), "{e}");
        }

        // silent, or gone before a line
        let (client, server) = UnixStream::pair().unwrap();
        let mut p = pending(server, t0);
        assert!(matches!(poll_request(&mut p, t0), Request::Wait));
        drop(client);
        assert!(dropped(poll_request(&mut p, t0)).contains("closed"));
    }

    #[test]
    fn idle_connections_do_not_delay_a_registration() {
        let t0 = Instant::now();
        let mut pending = Vec::new();
        let mut clients = Vec::new();
        for _ in 0..150 {
            let (client, server) = UnixStream::pair().unwrap();
            admit(&mut pending, server, t0).unwrap();
            clients.push(client);
        }
        let (mut client, server) = UnixStream::pair().unwrap();
        client.write_all(b"REGISTER 42\n").unwrap();
        admit(&mut pending, server, t0).unwrap();
        // one sweep answers the registration behind 150 idle connections
        let mut answered = Vec::new();
        sweep(&mut pending, t0, |_, line| {
            answered.push(line.to_vec());
            Ok(())
        });
        assert_eq!(answered, [b"REGISTER 42".to_vec()]);
        assert_eq!(pending.len(), 150, "the idle ones wait");
        // past CLIENT_TIME the idle ones are dropped
        sweep(&mut pending, t0 + CLIENT_TIME * 2, |_, _| Ok(()));
        assert!(pending.is_empty());

        // past MAX_PENDING the connection that waited longest makes room
        for i in 0..MAX_PENDING + 1 {
            let (client, server) = UnixStream::pair().unwrap();
            admit(&mut pending, server, t0 + Duration::from_millis(i as u64)).unwrap();
            clients.push(client);
        }
        assert_eq!(pending.len(), MAX_PENDING);
        assert_eq!(pending[0].since, t0 + Duration::from_millis(1));
    }
}

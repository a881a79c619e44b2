//! Deadline hints for scx_tick: a tick runner tells the scheduler the exact
//! deadline of its next tick, without a syscall on the tick path.
//!
//! ```no_run
//! let hint = scx_tick_hint::DeadlineHint::register()?; // once, on the runner thread
//! loop {
//!     // ... run the tick ...
//!     let next_tick = 0; // CLOCK_MONOTONIC ns of the next tick's start
//!     hint.set_deadline_ns(next_tick + 50_000_000); // before sleeping
//!     // ... sleep until next_tick ...
//! #   break;
//! }
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! `register` must be called by the runner thread itself (the slot belongs
//! to that thread), which must already be in a tick group; scx_tick must be
//! running. The hint written before the thread sleeps applies to the tick
//! that starts at its next wake-up, once: scx_tick clears the slot when it
//! takes it. A hint more than one period old or more than four periods
//! ahead is ignored and the implicit deadline (wake time + the group's
//! relative deadline) is used.
//!
//! The C API (`include/scx_tick_hint.h`) wraps the same calls for C, C++
//! and a JVM's foreign-function API.

use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char};
use std::io::{Error, ErrorKind, Read, Result, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use protocol::Reply;

pub mod protocol;

/// Where scx_tick listens for registrations.
pub const DEFAULT_SOCKET: &str = "/run/scx_tick/hints.sock";

/// A registered runner's slot in its tick group's shared hint array.
pub struct DeadlineHint {
    base: *mut libc::c_void,
    len: usize,
    slot: usize,
    _map: OwnedFd,
}

// The mapping is shared memory written with atomics only.
unsafe impl Send for DeadlineHint {}
unsafe impl Sync for DeadlineHint {}

impl DeadlineHint {
    /// Register the calling thread at the default socket.
    pub fn register() -> Result<DeadlineHint> {
        Self::register_at(Path::new(DEFAULT_SOCKET))
    }

    /// Register the calling thread at `socket`.
    pub fn register_at(socket: &Path) -> Result<DeadlineHint> {
        // SAFETY: gettid has no arguments and cannot fail.
        let tid = unsafe { libc::gettid() };
        let mut s = UnixStream::connect(socket)?;
        s.set_read_timeout(Some(Duration::from_secs(5)))?;
        s.write_all(protocol::request(tid as u32).as_bytes())?;
        let (reply, fd) = recv_with_fd(&s)?;
        let (slot, slots) = match protocol::parse_reply(&reply) {
            Ok(Reply::Slot { slot, slots }) => (slot, slots),
            Ok(Reply::Refused(why)) => return Err(Error::new(ErrorKind::PermissionDenied, why)),
            Err(e) => return Err(Error::new(ErrorKind::InvalidData, e)),
        };
        let Some(map) = fd else {
            return Err(Error::new(
                ErrorKind::InvalidData,
                format!("scx_tick gave slot {slot} without its array: {reply:?}"),
            ));
        };
        let len = (slots.checked_mul(8))
            .and_then(|b| b.checked_next_multiple_of(page_size()))
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::InvalidData,
                    format!("{slots} slots cannot be mapped"),
                )
            })?;
        // SAFETY: mapping a BPF array fd we own; checked for MAP_FAILED.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                map.as_raw_fd(),
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(Error::last_os_error());
        }
        Ok(DeadlineHint {
            base,
            len,
            slot,
            _map: map,
        })
    }

    /// This runner's slot in its group's array.
    pub fn slot(&self) -> usize {
        self.slot
    }

    fn cell(&self) -> &AtomicU64 {
        // SAFETY: slot < slots, the mapping covers slots * 8 bytes, u64-aligned.
        unsafe { &*(self.base as *const AtomicU64).add(self.slot) }
    }

    /// Publish the absolute deadline (CLOCK_MONOTONIC, ns) of the tick that
    /// starts at this thread's next wake-up. Call it before sleeping.
    pub fn set_deadline_ns(&self, deadline_ns: u64) {
        self.cell().store(deadline_ns, Ordering::Release);
    }

    /// The hint not yet taken by the scheduler (0: none).
    pub fn pending_ns(&self) -> u64 {
        self.cell().load(Ordering::Acquire)
    }
}

impl Drop for DeadlineHint {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly what register_at mapped.
        unsafe { libc::munmap(self.base, self.len) };
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf has no memory effects.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 { p as usize } else { 4096 }
}

/// Read the one-line reply and the file descriptor that comes with it.
fn recv_with_fd(s: &UnixStream) -> Result<(String, Option<OwnedFd>)> {
    let mut buf = [0u8; 512];
    let mut cmsg = [0u64; 8]; // u64 for alignment, 64 bytes of control space
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: msghdr is plain data; every pointer set below outlives recvmsg.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cmsg.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&cmsg) as _;
    // SAFETY: a valid socket and a msghdr set up above.
    let n = unsafe { libc::recvmsg(s.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC) };
    if n < 0 {
        return Err(Error::last_os_error());
    }
    let mut fd = None;
    // SAFETY: walking the control messages the kernel wrote into cmsg.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_RIGHTS {
                let raw = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const i32);
                fd = Some(OwnedFd::from_raw_fd(raw));
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    let mut text = String::from_utf8_lossy(&buf[..n as usize]).into_owned();
    if !text.ends_with('\n') {
        // an error reply may arrive in more than one piece
        let mut rest = String::new();
        let _ = (&*s).read_to_string(&mut rest);
        text.push_str(&rest);
    }
    Ok((text, fd))
}

// --- C API (include/scx_tick_hint.h) ---

thread_local! {
    /// Why the last registration on this thread failed, for C callers.
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Why the last `scx_tick_hint_register` on this thread failed, in words
/// (e.g. "thread 42 is not in a tick group ..."); "" after a success. Valid
/// until the next registration on this thread.
#[unsafe(no_mangle)]
pub extern "C" fn scx_tick_hint_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// Register the calling thread; `socket` may be NULL for the default.
/// Returns NULL with errno set on failure.
///
/// # Safety
/// `socket` is NULL or a valid NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn scx_tick_hint_register(socket: *const c_char) -> *mut DeadlineHint {
    let r = if socket.is_null() {
        DeadlineHint::register()
    } else {
        // SAFETY: the caller passes a valid C string.
        let s = unsafe { CStr::from_ptr(socket) };
        DeadlineHint::register_at(Path::new(&*s.to_string_lossy()))
    };
    let why = r.as_ref().err().map(|e| e.to_string()).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = CString::new(why.replace('\0', " ")).unwrap_or_default());
    match r {
        Ok(h) => Box::into_raw(Box::new(h)),
        Err(e) => {
            let code = e.raw_os_error().unwrap_or(match e.kind() {
                ErrorKind::PermissionDenied => libc::EACCES,
                _ => libc::EPROTO,
            });
            // SAFETY: errno is thread-local.
            unsafe { *libc::__errno_location() = code };
            std::ptr::null_mut()
        }
    }
}

/// Publish the deadline (CLOCK_MONOTONIC ns) of the next tick.
///
/// # Safety
/// `h` comes from `scx_tick_hint_register` and was not freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn scx_tick_hint_set_deadline(h: *const DeadlineHint, deadline_ns: u64) {
    // SAFETY: per the contract above.
    if let Some(h) = unsafe { h.as_ref() } {
        h.set_deadline_ns(deadline_ns);
    }
}

/// Unmap and free a registration.
///
/// # Safety
/// `h` comes from `scx_tick_hint_register` (or is NULL), freed only once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn scx_tick_hint_free(h: *mut DeadlineHint) {
    if !h.is_null() {
        // SAFETY: per the contract above.
        drop(unsafe { Box::from_raw(h) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixListener;

    #[test]
    fn a_refusal_is_an_error_naming_the_reason() {
        let dir = std::env::temp_dir().join(format!("scx_tick_hint_test_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s");
        let _ = std::fs::remove_file(&path);
        let l = UnixListener::bind(&path).unwrap();
        let server = std::thread::spawn(move || {
            let (mut c, _) = l.accept().unwrap();
            let mut line = [0u8; 64];
            let n = c.read(&mut line).unwrap();
            assert!(String::from_utf8_lossy(&line[..n]).starts_with("REGISTER "));
            c.write_all(b"ERR thread 1 is not in a tick group\n")
                .unwrap();
        });
        let err = DeadlineHint::register_at(&path).err().expect("refused");
        assert_eq!(err.kind(), ErrorKind::PermissionDenied);
        assert!(err.to_string().contains("not in a tick group"), "{err}");
        server.join().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn no_scheduler_is_an_error() {
        let err = DeadlineHint::register_at(Path::new("/nonexistent/scx_tick.sock"))
            .err()
            .expect("no socket");
        assert_eq!(err.kind(), ErrorKind::NotFound);
    }
}

//! Output that never blocks the scheduling thread. Whoever reads our stdout
//! or stderr (a pipe, a terminal) is a task this very process schedules: if
//! a write waited for that reader, nothing would be scheduled any more and
//! the kernel's watchdog would eject us. So writes are non-blocking, and
//! what does not fit right now is dropped and counted.

use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Clone)]
pub struct NonBlocking {
    fd: Option<Arc<OwnedFd>>,
    dropped: Arc<AtomicU64>,
}

impl NonBlocking {
    /// `fd` (1 or 2) opened anew with O_NONBLOCK, so the flag does not
    /// change the file description the shell shares with us. Where a new
    /// open is impossible (a socket), a duplicate made non-blocking; where
    /// even that fails, output is dropped.
    /// A regular file behind `fd` is switched to O_APPEND too: writes
    /// through `fd` itself (exit lines, rustland's own messages) and
    /// through the new description then both land at the end, instead of
    /// each at its own offset over the other's.
    pub fn reopen(fd: i32) -> NonBlocking {
        // SAFETY: fstat/fcntl on a descriptor number, with valid pointers.
        unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            if libc::fstat(fd, &mut st) == 0 && st.st_mode & libc::S_IFMT == libc::S_IFREG {
                let fl = libc::fcntl(fd, libc::F_GETFL);
                libc::fcntl(fd, libc::F_SETFL, fl | libc::O_APPEND);
            }
        }
        let path = format!("/proc/self/fd/{fd}\0");
        let flags = libc::O_WRONLY | libc::O_APPEND | libc::O_NONBLOCK | libc::O_CLOEXEC;
        // SAFETY: a NUL-terminated path; the fds returned are ours to own.
        let raw = unsafe {
            let r = libc::open(path.as_ptr().cast(), flags);
            if r >= 0 {
                r
            } else {
                let d = libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3);
                if d >= 0 {
                    let fl = libc::fcntl(d, libc::F_GETFL);
                    libc::fcntl(d, libc::F_SETFL, fl | libc::O_NONBLOCK);
                }
                d
            }
        };
        NonBlocking {
            // SAFETY: raw is a fresh descriptor nobody else owns.
            fd: (raw >= 0).then(|| Arc::new(unsafe { OwnedFd::from_raw_fd(raw) })),
            dropped: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Bytes dropped so far because the reader was behind (or gone).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

impl Write for NonBlocking {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let Some(fd) = &self.fd else {
            self.dropped.fetch_add(buf.len() as u64, Ordering::Relaxed);
            return Ok(buf.len());
        };
        // SAFETY: writing from a valid buffer to a descriptor we own.
        let n = unsafe { libc::write(fd.as_raw_fd(), buf.as_ptr().cast(), buf.len()) };
        if n < 0 {
            // EAGAIN (full), EPIPE (reader gone), anything else: never wait
            self.dropped.fetch_add(buf.len() as u64, Ordering::Relaxed);
            return Ok(buf.len());
        }
        Ok(n as usize)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_pipe_drops_instead_of_waiting() {
        let mut fds = [0; 2];
        // SAFETY: a valid array for pipe(2).
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let mut out = NonBlocking::reopen(fds[1]);
        let line = [b'x'; 4096];
        // far more than a pipe holds; nobody reads: must return, not block
        for _ in 0..64 {
            out.write_all(&line).unwrap();
        }
        assert!(out.dropped() > 0);
        assert!(out.dropped() < 64 * 4096, "some of it fit");
        // SAFETY: closing the pipe ends we created.
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
    }
}

//! Kernel scheduling policies a tick runner can ask for instead of (or
//! without) scx_tick: SCHED_FIFO and SCHED_DEADLINE. The benchmark compares
//! them with sched_ext schedulers, so tickload applies them per runner thread.

use std::fmt;

/// SCHED_DEADLINE, not exported by the libc crate.
const SCHED_DEADLINE: u32 = 6;
/// The smallest runtime the kernel accepts (it rounds to 2^10 ns).
const DL_MIN_RUNTIME_NS: u64 = 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Policy {
    /// SCHED_OTHER: the default scheduler (EEVDF, or the sched_ext one).
    Other,
    /// SCHED_FIFO at --fifo-prio.
    Fifo,
    /// SCHED_DEADLINE with runtime/deadline/period (see --dl-*).
    Deadline,
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Policy::Other => "SCHED_OTHER",
            Policy::Fifo => "SCHED_FIFO",
            Policy::Deadline => "SCHED_DEADLINE",
        })
    }
}

/// SCHED_DEADLINE's three parameters, in ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DlParams {
    pub runtime_ns: u64,
    pub deadline_ns: u64,
    pub period_ns: u64,
}

impl DlParams {
    /// Derive the reservation from the tick: the runtime covers a regular
    /// tick's longest work plus 10% (the kernel also charges the wake-up and
    /// clock reads; without a margin every tick is throttled), spikes overrun
    /// it and are throttled, as they would be on a real server; deadline and
    /// period are the tick's. Explicit
    /// values override each part; the kernel's rule is checked here so the
    /// error names the flag.
    pub fn derive(
        max_regular_work_ns: u64,
        tick_deadline_ns: u64,
        tick_period_ns: u64,
        runtime_ns: Option<u64>,
        deadline_ns: Option<u64>,
        period_ns: Option<u64>,
    ) -> Result<DlParams, String> {
        let deadline_ns = deadline_ns.unwrap_or(tick_deadline_ns);
        let period_ns = period_ns.unwrap_or(tick_period_ns);
        let runtime_ns =
            runtime_ns.unwrap_or((max_regular_work_ns + max_regular_work_ns / 10).min(deadline_ns));
        let p = DlParams {
            runtime_ns,
            deadline_ns,
            period_ns,
        };
        if runtime_ns < DL_MIN_RUNTIME_NS {
            return Err(format!(
                "SCHED_DEADLINE runtime {} ms is below the kernel's minimum of 1024 ns (--dl-runtime-ms or --work-ms)",
                ms(runtime_ns)
            ));
        }
        if !(runtime_ns <= deadline_ns && deadline_ns <= period_ns) {
            return Err(format!(
                "SCHED_DEADLINE needs runtime <= deadline <= period, got {p} (--dl-runtime-ms, --dl-deadline-ms, --dl-period-ms)"
            ));
        }
        Ok(p)
    }
}

impl fmt::Display for DlParams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "runtime {} ms, deadline {} ms, period {} ms",
            ms(self.runtime_ns),
            ms(self.deadline_ns),
            ms(self.period_ns)
        )
    }
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// What to ask the kernel for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Request {
    Other,
    Fifo { prio: u32 },
    Deadline(DlParams),
}

impl Request {
    pub fn policy(&self) -> Policy {
        match self {
            Request::Other => Policy::Other,
            Request::Fifo { .. } => Policy::Fifo,
            Request::Deadline(_) => Policy::Deadline,
        }
    }
}

/// The kernel's `struct sched_attr` (SCHED_ATTR_SIZE_VER0, 48 bytes).
#[repr(C)]
#[derive(Default)]
struct SchedAttr {
    size: u32,
    sched_policy: u32,
    sched_flags: u64,
    sched_nice: i32,
    sched_priority: u32,
    sched_runtime: u64,
    sched_deadline: u64,
    sched_period: u64,
}

/// Apply `req` to the calling thread. The error is one line saying why.
pub fn apply_to_current_thread(req: &Request) -> Result<(), String> {
    let attr = match *req {
        Request::Other => return Ok(()),
        Request::Fifo { prio } => SchedAttr {
            sched_policy: libc::SCHED_FIFO as u32,
            sched_priority: prio,
            ..Default::default()
        },
        Request::Deadline(p) => SchedAttr {
            sched_policy: SCHED_DEADLINE,
            sched_runtime: p.runtime_ns,
            sched_deadline: p.deadline_ns,
            sched_period: p.period_ns,
            ..Default::default()
        },
    };
    let attr = SchedAttr {
        size: std::mem::size_of::<SchedAttr>() as u32,
        ..attr
    };
    // SAFETY: pid 0 is the calling thread; attr is a valid, sized sched_attr.
    let rc = unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &attr as *const SchedAttr, 0) };
    if rc == 0 {
        return Ok(());
    }
    let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
    Err(explain_refusal(req, errno))
}

/// Why the kernel said no, in words a user can act on.
pub fn explain_refusal(req: &Request, errno: i32) -> String {
    let what = match req {
        Request::Deadline(p) => format!("{} ({p})", req.policy()),
        Request::Fifo { prio } => format!("{} priority {prio}", req.policy()),
        Request::Other => req.policy().to_string(),
    };
    let why = match (req.policy(), errno) {
        (Policy::Deadline, libc::EBUSY) => {
            "admission control: the runners' total bandwidth (runtime/period each) does not fit \
             the CPUs' deadline capacity (kernel.sched_rt_runtime_us / sched_rt_period_us); \
             use fewer runners or a shorter --dl-runtime-ms"
                .to_string()
        }
        (Policy::Deadline, libc::EPERM) => {
            "not permitted: needs root (CAP_SYS_NICE), and an affinity that spans the whole \
             root domain (SCHED_DEADLINE refuses pinned threads)"
                .to_string()
        }
        (Policy::Deadline, libc::EINVAL) => {
            "invalid: the kernel wants 1024 ns <= runtime <= deadline <= period and a kernel \
             with SCHED_DEADLINE"
                .to_string()
        }
        (Policy::Fifo, libc::EPERM) => {
            "not permitted: needs root (CAP_SYS_NICE) or an RLIMIT_RTPRIO at least this \
             priority, and with RT group scheduling the cgroup needs cpu.rt_runtime_us"
                .to_string()
        }
        (Policy::Fifo, libc::EINVAL) => "invalid priority: SCHED_FIFO takes 1..=99".to_string(),
        (_, e) => std::io::Error::from_raw_os_error(e).to_string(),
    };
    format!("{what} refused: {why}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn sched_attr_has_the_kernels_layout() {
        assert_eq!(std::mem::size_of::<SchedAttr>(), 48);
    }

    #[test]
    fn deadline_parameters_follow_the_tick() {
        let p = DlParams::derive(10 * MS, 50 * MS, 50 * MS, None, None, None).unwrap();
        assert_eq!(
            p,
            DlParams {
                runtime_ns: 11 * MS,
                deadline_ns: 50 * MS,
                period_ns: 50 * MS
            }
        );
        // work longer than the deadline: the runtime is clipped to it
        let p = DlParams::derive(60 * MS, 40 * MS, 50 * MS, None, None, None).unwrap();
        assert_eq!(p.runtime_ns, 40 * MS);
        // explicit values win
        let p = DlParams::derive(
            10 * MS,
            50 * MS,
            50 * MS,
            Some(12 * MS),
            Some(30 * MS),
            None,
        )
        .unwrap();
        assert_eq!(
            (p.runtime_ns, p.deadline_ns, p.period_ns),
            (12 * MS, 30 * MS, 50 * MS)
        );
    }

    #[test]
    fn deadline_parameters_out_of_order_are_refused_naming_flags() {
        let e = DlParams::derive(
            10 * MS,
            50 * MS,
            50 * MS,
            Some(20 * MS),
            Some(10 * MS),
            None,
        )
        .unwrap_err();
        assert!(e.contains("runtime <= deadline <= period") && e.contains("--dl-runtime-ms"));
        let e = DlParams::derive(10 * MS, 60 * MS, 50 * MS, None, None, None).unwrap_err();
        assert!(e.contains("deadline 60 ms, period 50 ms"), "{e}");
        let e = DlParams::derive(0, 50 * MS, 50 * MS, None, None, None).unwrap_err();
        assert!(e.contains("1024 ns"), "{e}");
    }

    #[test]
    fn refusals_say_why() {
        let dl = Request::Deadline(DlParams {
            runtime_ns: 10 * MS,
            deadline_ns: 50 * MS,
            period_ns: 50 * MS,
        });
        let e = explain_refusal(&dl, libc::EBUSY);
        assert!(e.starts_with("SCHED_DEADLINE (runtime 10 ms"), "{e}");
        assert!(e.contains("admission control"));
        assert!(explain_refusal(&dl, libc::EPERM).contains("CAP_SYS_NICE"));
        let fifo = Request::Fifo { prio: 50 };
        assert!(explain_refusal(&fifo, libc::EPERM).contains("RLIMIT_RTPRIO"));
        assert!(explain_refusal(&fifo, libc::EINVAL).contains("1..=99"));
        assert!(!explain_refusal(&fifo, libc::ENOSYS).contains('\n'));
    }

    #[test]
    fn other_needs_no_syscall() {
        assert_eq!(apply_to_current_thread(&Request::Other), Ok(()));
    }
}

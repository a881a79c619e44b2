//! A pure model of the dispatch decision on a tick CPU, mirrored by
//! `poll_tick()` in bpf/main.bpf.c (same names, same order). The BPF code
//! can only run in a VM; this model is tested everywhere, exhaustively.
//!
//! The order is the seed's Affinity scheduler poll:
//! 1. peek the local and the global queue head; an overdue head wins, and
//!    if both are overdue the earlier deadline wins;
//! 2. otherwise look at one steal candidate, chosen round-robin among the
//!    other tick CPUs, and take its head if it is stealable (its start
//!    lateness is above the threshold); a CPU with nothing else to run keeps
//!    polling the candidates, as the seed's idle runner would;
//! 3. otherwise take the earlier of the two heads (a tie goes to local).

/// The head of an EDF queue as a poll sees it (peeking never dequeues).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    pub deadline: u64,
    pub wake_at: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    Local,
    Global,
    /// Steal the head of this tick CPU's queue (an index into the tick CPUs).
    Steal(usize),
    /// Nothing for a tick runner: lend the CPU to other work or idle.
    Nothing,
}

#[derive(Debug, Clone, Copy)]
pub struct Policy {
    pub work_stealing: bool,
    pub steal_threshold_ns: u64,
}

pub fn is_overdue(h: Head, now: u64) -> bool {
    h.deadline < now
}

/// Start lateness so far of a queued tick is `now - wake_at`.
pub fn is_stealable(h: Head, now: u64, threshold_ns: u64) -> bool {
    now.saturating_sub(h.wake_at) > threshold_ns
}

/// Round-robin over the other `nr` tick CPUs, never `me`.
pub fn next_victim(steal_rr: &mut u32, me: usize, nr: usize) -> Option<usize> {
    if nr < 2 {
        return None;
    }
    *steal_rr = (*steal_rr + 1) % (nr as u32 - 1);
    Some((me + 1 + *steal_rr as usize) % nr)
}

/// One poll of tick CPU `me` (of `nr` tick CPUs). `heads(i)` peeks tick CPU
/// i's queue; `local` is `heads(me)`.
pub fn poll(
    policy: Policy,
    now: u64,
    me: usize,
    nr: usize,
    steal_rr: &mut u32,
    global: Option<Head>,
    heads: &dyn Fn(usize) -> Option<Head>,
) -> Pick {
    let local = heads(me);
    let local_overdue = local.is_some_and(|h| is_overdue(h, now));
    let global_overdue = global.is_some_and(|h| is_overdue(h, now));
    let local_first = |l: Head, g: Option<Head>| g.is_none_or(|g| g.deadline >= l.deadline);

    // 1. an overdue head wins; both overdue: the earlier deadline
    if local_overdue || global_overdue {
        let pick_local = local_overdue && (!global_overdue || local_first(local.unwrap(), global));
        return if pick_local {
            Pick::Local
        } else {
            Pick::Global
        };
    }

    // 2. one steal candidate, round-robin; an otherwise idle CPU polls them all
    if policy.work_stealing {
        let tries = if local.is_some() || global.is_some() {
            1
        } else {
            nr.saturating_sub(1)
        };
        for _ in 0..tries {
            let Some(victim) = next_victim(steal_rr, me, nr) else {
                break;
            };
            if heads(victim).is_some_and(|h| is_stealable(h, now, policy.steal_threshold_ns)) {
                return Pick::Steal(victim);
            }
        }
    }

    // 3. the earlier of the two heads
    match local {
        Some(l) if local_first(l, global) => Pick::Local,
        _ if global.is_some() => Pick::Global,
        _ => Pick::Nothing,
    }
}

/// Does a waking runner with `deadline` preempt what its home CPU runs?
/// Other work (`running` = None) always; a runner only when the newcomer's
/// deadline is strictly earlier (preemptive EDF; a tie keeps the CPU, which
/// avoids ping-pong between runners of equal deadlines).
pub fn preempts(deadline: u64, running: Option<u64>) -> bool {
    running.is_none_or(|d| deadline < d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_waking_runner_preempts_other_work_and_later_deadlines_only() {
        assert!(preempts(10, None));
        assert!(preempts(10, Some(11)));
        assert!(!preempts(10, Some(10)));
        assert!(!preempts(12, Some(11)));
    }

    const MS: u64 = 1_000_000;
    const NOW: u64 = 1000 * MS;
    const POLICY: Policy = Policy {
        work_stealing: true,
        steal_threshold_ns: 3 * MS,
    };

    fn head(deadline: u64, wake_at: u64) -> Option<Head> {
        Some(Head { deadline, wake_at })
    }

    /// Poll tick CPU 0 of `queues.len()` with the given queues.
    fn poll_with(policy: Policy, queues: &[Option<Head>], global: Option<Head>) -> Pick {
        let mut rr = 0;
        poll(policy, NOW, 0, queues.len(), &mut rr, global, &|i| {
            queues[i]
        })
    }

    #[test]
    fn both_overdue_the_earlier_deadline_wins() {
        let early = head(NOW - 10 * MS, NOW - 60 * MS);
        let late = head(NOW - 5 * MS, NOW - 55 * MS);
        assert_eq!(poll_with(POLICY, &[early, None], late), Pick::Local);
        assert_eq!(poll_with(POLICY, &[late, None], early), Pick::Global);
        // tie: local
        assert_eq!(poll_with(POLICY, &[early, None], early), Pick::Local);
    }

    #[test]
    fn an_overdue_head_beats_an_earlier_or_stealable_one() {
        let overdue = head(NOW - MS, NOW - 51 * MS);
        let fresh = head(NOW + 40 * MS, NOW - 10 * MS);
        let stealable = head(NOW + 30 * MS, NOW - 20 * MS);
        assert_eq!(poll_with(POLICY, &[overdue, stealable], fresh), Pick::Local);
        assert_eq!(
            poll_with(POLICY, &[fresh, stealable], overdue),
            Pick::Global
        );
    }

    #[test]
    fn neither_overdue_a_stealable_candidate_is_taken() {
        let mine = head(NOW + 45 * MS, NOW - MS);
        let theirs = head(NOW + 46 * MS, NOW - 4 * MS);
        assert_eq!(poll_with(POLICY, &[mine, theirs], None), Pick::Steal(1));
    }

    #[test]
    fn a_candidate_at_or_below_the_threshold_is_not_stolen() {
        let mine = head(NOW + 45 * MS, NOW - MS);
        let theirs = head(NOW + 10 * MS, NOW - 3 * MS);
        assert_eq!(poll_with(POLICY, &[mine, theirs], None), Pick::Local);
        assert_eq!(poll_with(POLICY, &[None, theirs], None), Pick::Nothing);
    }

    #[test]
    fn stealing_off_never_steals() {
        let off = Policy {
            work_stealing: false,
            ..POLICY
        };
        let theirs = head(NOW + 10 * MS, NOW - 30 * MS);
        assert_eq!(poll_with(off, &[None, theirs, theirs], None), Pick::Nothing);
    }

    #[test]
    fn neither_overdue_the_earlier_head_wins() {
        let a = head(NOW + 10 * MS, NOW);
        let b = head(NOW + 20 * MS, NOW);
        assert_eq!(poll_with(POLICY, &[a, None], b), Pick::Local);
        assert_eq!(poll_with(POLICY, &[b, None], a), Pick::Global);
        assert_eq!(poll_with(POLICY, &[None, None], a), Pick::Global);
        assert_eq!(poll_with(POLICY, &[a, None], None), Pick::Local);
        assert_eq!(poll_with(POLICY, &[None, None], None), Pick::Nothing);
    }

    #[test]
    fn a_busy_cpu_looks_at_one_candidate_an_idle_one_at_all() {
        let mine = head(NOW + 45 * MS, NOW);
        let stealable = head(NOW + 10 * MS, NOW - 10 * MS);
        // Candidate order from rr=0 for CPU 0 of 4: 2, 3, 1, 2, ...
        let queues = [mine, None, None, stealable];
        let mut rr = 0;
        let p = poll(POLICY, NOW, 0, 4, &mut rr, None, &|i| queues[i]);
        assert_eq!(p, Pick::Local, "busy: only CPU 2 was looked at");
        let p = poll(POLICY, NOW, 0, 4, &mut rr, None, &|i| queues[i]);
        assert_eq!(p, Pick::Steal(3), "next poll looks at CPU 3");
        let idle = [None, None, None, stealable];
        let mut rr = 0;
        let p = poll(POLICY, NOW, 0, 4, &mut rr, None, &|i| idle[i]);
        assert_eq!(p, Pick::Steal(3), "idle: keeps polling until it finds one");
    }

    #[test]
    fn round_robin_visits_every_other_cpu_equally_and_never_itself() {
        for nr in 2..9 {
            for me in 0..nr {
                let mut rr = 0;
                let mut seen = vec![0; nr];
                for _ in 0..(nr - 1) * 10 {
                    seen[next_victim(&mut rr, me, nr).unwrap()] += 1;
                }
                assert_eq!(seen[me], 0);
                assert!(seen.iter().enumerate().all(|(i, &n)| i == me || n == 10));
            }
        }
        assert_eq!(next_victim(&mut 0, 0, 1), None);
    }

    /// Every combination of small queue states: the pick always follows the
    /// seed's order, stated as properties rather than expected values.
    #[test]
    fn exhaustive_order_properties() {
        let deadlines = [NOW - 5 * MS, NOW - MS, NOW, NOW + MS, NOW + 30 * MS];
        let wakes = [NOW - 20 * MS, NOW - 3 * MS, NOW - MS, NOW];
        let mut heads = vec![None];
        for &d in &deadlines {
            for &w in &wakes {
                heads.push(head(d, w));
            }
        }
        let mut cases = 0;
        for policy in [
            POLICY,
            Policy {
                work_stealing: false,
                ..POLICY
            },
        ] {
            for &l in &heads {
                for &g in &heads {
                    for &v in &heads {
                        let queues = [l, v];
                        let pick = poll_with(policy, &queues, g);
                        check(policy, l, g, v, pick);
                        cases += 1;
                    }
                }
            }
        }
        assert!(cases > 10_000);
    }

    fn check(policy: Policy, l: Option<Head>, g: Option<Head>, v: Option<Head>, pick: Pick) {
        let od = |h: Option<Head>| h.is_some_and(|h| is_overdue(h, NOW));
        let ctx = format!("l={l:?} g={g:?} v={v:?} -> {pick:?}");
        match pick {
            Pick::Local => {
                let l = l.expect(&ctx);
                if od(g) {
                    assert!(od(Some(l)) && l.deadline <= g.unwrap().deadline, "{ctx}");
                }
                if !od(Some(l)) {
                    assert!(g.is_none_or(|g| l.deadline <= g.deadline), "{ctx}");
                    assert!(
                        !policy.work_stealing
                            || !v.is_some_and(|v| is_stealable(v, NOW, policy.steal_threshold_ns)),
                        "{ctx}"
                    );
                }
            }
            Pick::Global => {
                let g = g.expect(&ctx);
                if od(l) {
                    assert!(od(Some(g)) && g.deadline < l.unwrap().deadline, "{ctx}");
                }
                if !od(Some(g)) {
                    assert!(l.is_none_or(|l| g.deadline < l.deadline), "{ctx}");
                }
            }
            Pick::Steal(i) => {
                assert_eq!(i, 1, "{ctx}");
                assert!(policy.work_stealing && !od(l) && !od(g), "{ctx}");
                assert!(
                    is_stealable(v.unwrap(), NOW, policy.steal_threshold_ns),
                    "{ctx}"
                );
            }
            Pick::Nothing => {
                assert!(l.is_none() && g.is_none(), "{ctx}");
            }
        }
    }
}

//! Locality order: which CPUs a CPU looks at first when it steals, spills
//! a runner over or wakes a CPU for one. Nearest first, as the NUMA-aware
//! Go scheduler design steals: the CPUs of its own last-level cache, then
//! of its node, then the rest; equally near CPUs in turn (a rotation), and
//! never more than a fixed number of them per decision, whatever the size
//! of the machine.
//!
//! The CPUs are listed sorted by (node, LLC, id), so that an LLC and a node
//! are each one run of the list; a CPU's [`Span`] says where its LLC and its
//! node lie there. BPF gets the lists and spans as rodata
//! (run/scheduler.rs) and computes [`nth_near`] the same way
//! (bpf/placement.bpf.c: `nth_near()`), without a loop.

use super::topology::Machine;

/// Where a CPU's LLC and node lie in a list sorted by (node, LLC, id):
/// `[llc_lo, llc_hi)` inside `[node_lo, node_hi)` (an empty LLC run when
/// none of the listed CPUs shares its LLC). Mirrors BPF's `struct span`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Span {
    pub llc_lo: u16,
    pub llc_hi: u16,
    pub node_lo: u16,
    pub node_hi: u16,
}

/// `list` sorted by (node, LLC, id), and the span of every CPU of
/// `machine` in it (indexed by CPU id; CPUs the machine does not have get
/// an empty span at 0).
pub fn near_order(machine: &Machine, list: &[usize]) -> (Vec<usize>, Vec<Span>) {
    let key = |id: usize| {
        machine
            .cpu(id)
            .map_or((usize::MAX, usize::MAX, id), |c| (c.node, c.llc, id))
    };
    let mut sorted = list.to_vec();
    sorted.sort_by_key(|&id| key(id));
    let keys: Vec<_> = sorted.iter().map(|&id| key(id)).collect();
    let nr_ids = machine.cpus.iter().map(|c| c.id + 1).max().unwrap_or(0);
    let mut spans = vec![Span::default(); nr_ids];
    for c in &machine.cpus {
        let node_lo = keys.partition_point(|k| k.0 < c.node);
        let node_hi = keys.partition_point(|k| k.0 <= c.node);
        let llc_lo = node_lo + keys[node_lo..node_hi].partition_point(|k| k.1 < c.llc);
        let llc_hi = node_lo + keys[node_lo..node_hi].partition_point(|k| k.1 <= c.llc);
        spans[c.id] = Span {
            llc_lo: llc_lo as u16,
            llc_hi: llc_hi as u16,
            node_lo: node_lo as u16,
            node_hi: node_hi as u16,
        };
    }
    (sorted, spans)
}

/// The fair queues of other work, one per LLC, listed as the CPUs are (by
/// node, then LLC): each CPU's queue (indexed by CPU id; 0 for ids the
/// machine does not have) and each queue's [`Span`] among the queues. A
/// queue's LLC run is itself and its node run its node's queues, so
/// [`nth_near`] gives the queues of its node first, then the rest (BPF:
/// `near_fair_q()`).
pub fn fair_queues(machine: &Machine) -> (Vec<usize>, Vec<Span>) {
    // each LLC stands in the list as its lowest CPU id
    let mut first: std::collections::BTreeMap<(usize, usize), usize> = Default::default();
    for c in &machine.cpus {
        let id = first.entry((c.node, c.llc)).or_insert(c.id);
        *id = (*id).min(c.id);
    }
    let (queues, spans) = near_order(machine, &first.values().copied().collect::<Vec<_>>());
    let nr_ids = machine.cpus.iter().map(|c| c.id + 1).max().unwrap_or(0);
    let mut cpu_queue = vec![0; nr_ids];
    for c in &machine.cpus {
        let stands_for = first[&(c.node, c.llc)];
        cpu_queue[c.id] = queues.iter().position(|&q| q == stands_for).unwrap_or(0);
    }
    (cpu_queue, queues.iter().map(|&q| spans[q]).collect())
}

/// The `k`-th CPU (a position in a list of `n`) near the CPU whose span is
/// `span`, never `me` (its own position, if it is in the list): first its
/// LLC, then the rest of its node, then the rest of the list. Each of the
/// three rings is `[lo, hi)` without the ring before it (`[xlo, xhi)`),
/// started `rot` places on so that equally near CPUs take turns. None once
/// `k` passes the list.
pub fn nth_near(n: usize, span: Span, me: Option<usize>, rot: u32, k: usize) -> Option<usize> {
    let (llc_lo, llc_hi) = (span.llc_lo as usize, span.llc_hi as usize);
    let (node_lo, node_hi) = (span.node_lo as usize, span.node_hi as usize);
    let (mlo, mhi) = match me {
        Some(m) if (llc_lo..llc_hi).contains(&m) => (m, m + 1),
        _ => (llc_lo, llc_lo),
    };
    let mut k = k;
    for (lo, hi, xlo, xhi) in [
        (llc_lo, llc_hi, mlo, mhi),
        (node_lo, node_hi, llc_lo, llc_hi),
        (0, n, node_lo, node_hi),
    ] {
        let size = (hi - lo) - (xhi - xlo);
        if k < size {
            let i = lo + (rot.wrapping_add(k as u32) as usize) % size;
            return Some(if i >= xlo { i + (xhi - xlo) } else { i });
        }
        k -= size;
    }
    None
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::topology::CpuInfo;

    /// `nodes` x `llcs` per node x `cores` per LLC x `smt` threads, numbered
    /// as servers do: a core's siblings are `n` and `n + cores in total`.
    pub fn machine(nodes: usize, llcs: usize, cores: usize, smt: usize) -> Machine {
        let nr_cores = nodes * llcs * cores;
        let mut cpus = Vec::new();
        for t in 0..smt {
            for core in 0..nr_cores {
                let llc = core / cores;
                cpus.push(CpuInfo {
                    id: t * nr_cores + core,
                    core,
                    core_id: core,
                    socket: llc / llcs,
                    node: llc / llcs,
                    llc,
                    caches: [None; 4],
                    capacity: 1024,
                    max_freq_khz: 0,
                    core_type: "Big".into(),
                });
            }
        }
        cpus.sort_by_key(|c| c.id);
        Machine {
            model: "test".into(),
            cpus,
        }
    }

    fn order(m: &Machine, list: &[usize], me: usize, rot: u32) -> Vec<usize> {
        let (sorted, spans) = near_order(m, list);
        let pos = sorted.iter().position(|&c| c == me);
        (0..)
            .map_while(|k| nth_near(sorted.len(), spans[me], pos, rot, k))
            .map(|i| sorted[i])
            .collect()
    }

    #[test]
    fn every_other_cpu_once_nearest_first() {
        // 2 nodes x 2 LLCs x 2 cores x SMT 2 (the topology guest)
        let m = machine(2, 2, 2, 2);
        let all: Vec<usize> = (0..16).collect();
        for me in 0..16 {
            for rot in 0..5 {
                let got = order(&m, &all, me, rot);
                let mut seen = got.clone();
                seen.sort();
                let others: Vec<usize> = all.iter().copied().filter(|&c| c != me).collect();
                assert_eq!(seen, others, "me {me} rot {rot}: {got:?}");
                let dist = |c: usize| {
                    let (a, b) = (m.cpu(me).unwrap(), m.cpu(c).unwrap());
                    if a.llc == b.llc {
                        0
                    } else if a.node == b.node {
                        1
                    } else {
                        2
                    }
                };
                assert!(
                    got.windows(2).all(|w| dist(w[0]) <= dist(w[1])),
                    "me {me} rot {rot}: {got:?} is not nearest first"
                );
            }
        }
    }

    #[test]
    fn equally_near_cpus_take_turns() {
        let m = machine(1, 1, 8, 1);
        let all: Vec<usize> = (0..8).collect();
        let firsts: Vec<usize> = (0..7).map(|rot| order(&m, &all, 3, rot)[0]).collect();
        let mut seen = firsts.clone();
        seen.sort();
        assert_eq!(seen, vec![0, 1, 2, 4, 5, 6, 7]);
    }

    #[test]
    fn a_cpu_outside_the_list_looks_at_its_llc_first() {
        // tick CPUs 1, 5, 9, 13 of a 2-node, 2-LLC-per-node machine; CPU 4
        // (LLC 1, node 0) is not one of them
        let m = machine(2, 2, 4, 1);
        let tick = [13, 1, 9, 5];
        assert_eq!(order(&m, &tick, 4, 0), vec![5, 1, 9, 13]);
        assert_eq!(order(&m, &tick, 4, 1), vec![5, 1, 13, 9]);
        // an LLC without a listed CPU goes to its node first
        let tick = [1, 9, 13];
        assert_eq!(order(&m, &tick, 4, 0), vec![1, 9, 13]);
    }

    #[test]
    fn a_bounded_look_stays_in_the_llc_while_it_has_candidates() {
        // 256 CPUs: 2 nodes x 4 LLCs x 16 cores x SMT 2; 8 probes from any
        // CPU never leave its LLC (31 others there)
        let m = machine(2, 4, 16, 2);
        let all: Vec<usize> = (0..256).collect();
        let (sorted, spans) = near_order(&m, &all);
        for me in [0, 17, 100, 255] {
            let pos = sorted.iter().position(|&c| c == me);
            for k in 0..8 {
                let c = sorted[nth_near(256, spans[me], pos, 7, k).unwrap()];
                assert_eq!(m.cpu(c).unwrap().llc, m.cpu(me).unwrap().llc);
            }
        }
    }

    #[test]
    fn each_llc_has_one_fair_queue_and_looks_in_its_node_first() {
        // 2 nodes x 2 LLCs x 2 cores x SMT 2: 4 queues, siblings share one
        let m = machine(2, 2, 2, 2);
        let (cpu_queue, spans) = fair_queues(&m);
        assert_eq!(spans.len(), 4);
        for c in &m.cpus {
            for d in &m.cpus {
                assert_eq!(
                    cpu_queue[c.id] == cpu_queue[d.id],
                    c.llc == d.llc,
                    "{} {}",
                    c.id,
                    d.id
                );
            }
        }
        for (q, &span) in spans.iter().enumerate() {
            let near: Vec<usize> = (0..)
                .map_while(|k| nth_near(4, span, Some(q), 0, k))
                .collect();
            assert_eq!(near.len(), 3, "queue {q}: every other queue once: {near:?}");
            assert!(!near.contains(&q));
            assert_eq!(
                near[0] / 2,
                q / 2,
                "queue {q}: its node's other queue first: {near:?}"
            );
        }
        // one LLC: one queue, nothing else to look at
        let (cpu_queue, spans) = fair_queues(&machine(1, 1, 4, 2));
        assert!(cpu_queue.iter().all(|&q| q == 0) && spans.len() == 1);
        assert_eq!(nth_near(1, spans[0], Some(0), 0, 0), None);
    }
}

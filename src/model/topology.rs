//! CPU topology: the table CanvasMC's Affinity scheduler prints, and the
//! choice of tick CPUs.
//!
//! `choose_tick_cpus` is a pure function over [`Machine`] so it can be
//! tested on synthetic machines; `Machine::read` fills it from sysfs via
//! scx_utils.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use anyhow::{Context, Result, bail};
use serde::Serialize;

/// One logical CPU, as much as the tick-CPU choice and the table need.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CpuInfo {
    pub id: usize,
    /// Physical core: CPUs sharing it are SMT siblings. Unique machine-wide.
    pub core: usize,
    /// The kernel's core id (what the Affinity scheduler's table shows as
    /// CORE).
    pub core_id: usize,
    pub socket: usize,
    pub node: usize,
    pub llc: usize,
    /// Cache ids, L1d:L1i:L2:L3 as in the Affinity scheduler's table (None:
    /// unknown).
    pub caches: [Option<usize>; 4],
    /// Relative performance (1024 = the fastest core), P-cores above E-cores.
    pub capacity: usize,
    pub max_freq_khz: usize,
    pub core_type: String,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Machine {
    pub model: String,
    /// Online CPUs, by id.
    pub cpus: Vec<CpuInfo>,
}

impl Machine {
    /// Read the running machine's topology (online CPUs only).
    pub fn read() -> Result<Machine> {
        let topo = scx_utils::Topology::new().context("reading the CPU topology from sysfs")?;
        let mut cpus = Vec::new();
        for core in topo.all_cores.values() {
            for cpu in core.cpus.values() {
                cpus.push(CpuInfo {
                    id: cpu.id,
                    core: core.id,
                    core_id: core.kernel_id,
                    socket: cpu.package_id,
                    node: cpu.node_id,
                    llc: cpu.llc_id,
                    caches: read_cache_ids(cpu.id),
                    capacity: cpu.cpu_capacity,
                    max_freq_khz: cpu.max_freq,
                    core_type: core_type_name(&core.core_type).into(),
                });
            }
        }
        cpus.sort_by_key(|c| c.id);
        Ok(Machine {
            model: read_cpu_model(),
            cpus,
        })
    }

    /// Another online SMT thread of `id`'s core, if it has one.
    pub fn sibling(&self, id: usize) -> Option<usize> {
        let core = self.cpu(id)?.core;
        self.cpus
            .iter()
            .find(|c| c.core == core && c.id != id)
            .map(|c| c.id)
    }

    pub fn cpu(&self, id: usize) -> Option<&CpuInfo> {
        self.cpus.iter().find(|c| c.id == id)
    }

    pub fn nr_cores(&self) -> usize {
        self.cpus
            .iter()
            .map(|c| c.core)
            .collect::<BTreeSet<_>>()
            .len()
    }
}

fn core_type_name(t: &scx_utils::CoreType) -> &'static str {
    match t {
        scx_utils::CoreType::Big { turbo: true } => "P-core (turbo)",
        scx_utils::CoreType::Big { turbo: false } => "P-core",
        scx_utils::CoreType::Little => "E-core",
    }
}

fn read_cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// L1d, L1i, L2, L3 cache ids of `cpu` from sysfs.
fn read_cache_ids(cpu: usize) -> [Option<usize>; 4] {
    let mut ids = [None; 4];
    let base = format!("/sys/devices/system/cpu/cpu{cpu}/cache");
    let Ok(entries) = std::fs::read_dir(&base) else {
        return ids;
    };
    for entry in entries.flatten() {
        let dir = entry.path();
        let read = |f: &str| std::fs::read_to_string(dir.join(f)).map(|s| s.trim().to_string());
        let (Ok(level), Ok(kind), Ok(id)) = (read("level"), read("type"), read("id")) else {
            continue;
        };
        let slot = match (level.as_str(), kind.as_str()) {
            ("1", "Data") => 0,
            ("1", "Instruction") => 1,
            ("2", _) => 2,
            ("3", _) => 3,
            _ => continue,
        };
        ids[slot] = id.parse().ok();
    }
    ids
}

/// Why each tick CPU was chosen, for `scx_tick topology` and `-v`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Choice {
    pub tick_cpus: Vec<usize>,
    pub reasons: Vec<String>,
}

/// Default number of tick CPUs: every core the machine can spare, so that
/// in-phase runners get a home each before they share one. Measured against
/// half the cores (docs/benchmarks.md): fewer misses in every cell, also
/// where the runners fit, at no measurable cost to background throughput.
/// A tick CPU whose runners sleep runs other work like any other CPU.
pub fn default_tick_cpu_count(m: &Machine) -> usize {
    max_tick_cpus(m).max(1)
}

/// The CPUs that may become tick CPUs: one per physical core (its
/// lowest-numbered CPU), never on CPU 0's core, which does housekeeping
/// (interrupts, timers).
fn spare_cores(m: &Machine) -> Vec<&CpuInfo> {
    let reserved_core = m.cpu(0).map(|c| c.core);
    let mut cores: BTreeMap<usize, &CpuInfo> = BTreeMap::new();
    for c in m.cpus.iter().filter(|c| Some(c.core) != reserved_core) {
        cores
            .entry(c.core)
            .and_modify(|r| {
                if c.id < r.id {
                    *r = c
                }
            })
            .or_insert(c);
    }
    cores.into_values().collect()
}

/// The most tick CPUs this machine can spare: one per spare core, and at
/// least one core left to the rest of the system.
pub fn max_tick_cpus(m: &Machine) -> usize {
    spare_cores(m).len().min(m.nr_cores().saturating_sub(1))
}

/// Choose `count` tick CPUs: one SMT sibling per physical core, the fastest
/// cores first (P-cores before E-cores), inside one LLC and then one node
/// before spilling over, leaving CPU 0's core and at least one core to the
/// rest of the system.
pub fn choose_tick_cpus(m: &Machine, count: usize) -> Result<Choice> {
    if count == 0 {
        bail!("tick_cpus: a count of 0 leaves no CPU for tick runners; allowed: 1 or more");
    }
    let nr_cores = m.nr_cores();
    if nr_cores < 2 {
        bail!(
            "tick_cpus: this machine has {} physical core(s); scx_tick needs at least 2 \
             (one for tick runners, one for the rest of the system)",
            nr_cores
        );
    }
    let mut candidates = spare_cores(m);
    let max = max_tick_cpus(m);
    if count > max {
        bail!(
            "tick_cpus: {count} tick CPUs requested, but this machine can spare at most {max} \
             (one per physical core, leaving CPU 0's core to the system); allowed: 1..={max}"
        );
    }

    // Fastest first; ties keep the lowest ids.
    candidates.sort_by(|a, b| {
        b.capacity
            .cmp(&a.capacity)
            .then(b.max_freq_khz.cmp(&a.max_freq_khz))
            .then(a.id.cmp(&b.id))
    });
    let best_capacity = candidates[0].capacity;

    // Anchor LLC: the one holding the most of the fastest cores (ties: the
    // LLC of the fastest, lowest-numbered core). Fill it, then its node,
    // then the rest, keeping speed order inside each tier.
    let mut fast_per_llc: BTreeMap<usize, usize> = BTreeMap::new();
    for c in candidates.iter().filter(|c| c.capacity == best_capacity) {
        *fast_per_llc.entry(c.llc).or_default() += 1;
    }
    let top = fast_per_llc.values().copied().max().unwrap_or(0);
    let anchor = candidates
        .iter()
        .find(|c| c.capacity == best_capacity && fast_per_llc[&c.llc] == top)
        .copied()
        .unwrap_or(candidates[0]);
    let tier = |c: &CpuInfo| {
        if c.llc == anchor.llc {
            0
        } else if c.node == anchor.node {
            1
        } else {
            2
        }
    };
    // Speed dominates locality only across capacity classes: a slower core
    // in the anchor LLC must not beat a faster one elsewhere.
    candidates.sort_by(|a, b| {
        b.capacity
            .cmp(&a.capacity)
            .then(tier(a).cmp(&tier(b)))
            .then(b.max_freq_khz.cmp(&a.max_freq_khz))
            .then(a.id.cmp(&b.id))
    });

    let chosen: Vec<&CpuInfo> = candidates.into_iter().take(count).collect();
    let mut tick_cpus: Vec<usize> = chosen.iter().map(|c| c.id).collect();
    tick_cpus.sort_unstable();
    let mut reasons = vec![format!(
        "one CPU per physical core, fastest first; CPU 0's core{} left to the system",
        if m.cpu(0).is_some() { "" } else { " (absent)" }
    )];
    for c in &chosen {
        let mut why = format!(
            "CPU {}: core {} ({}, capacity {}), LLC {}, node {}",
            c.id, c.core_id, c.core_type, c.capacity, c.llc, c.node
        );
        if tier(c) > 0 {
            write!(why, " (spilled over from LLC {})", anchor.llc).ok();
        }
        reasons.push(why);
    }
    Ok(Choice { tick_cpus, reasons })
}

fn fmt_id(id: Option<usize>) -> String {
    id.map(|i| i.to_string()).unwrap_or_else(|| "-".into())
}

/// The Affinity scheduler's table, plus node, capacity, max frequency and
/// core type.
pub fn table(m: &Machine) -> String {
    let mut out = String::new();
    writeln!(out, "CPU Model: {}", m.model).ok();
    writeln!(out, "{}", "=".repeat(72)).ok();
    writeln!(
        out,
        "{:>4} {:>5} {:>6} {:>4} {:>15} {:>8} {:>9} TYPE",
        "CPU", "CORE", "SOCKET", "NODE", "L1d:L1i:L2:L3", "CAPACITY", "MAX_MHZ"
    )
    .ok();
    for c in &m.cpus {
        let caches = c
            .caches
            .iter()
            .map(|i| fmt_id(*i))
            .collect::<Vec<_>>()
            .join(":");
        writeln!(
            out,
            "{:>4} {:>5} {:>6} {:>4} {:>15} {:>8} {:>9} {}",
            c.id,
            c.core_id,
            c.socket,
            c.node,
            caches,
            c.capacity,
            c.max_freq_khz / 1000,
            c.core_type
        )
        .ok();
    }
    out
}

// the fuzz targets validate on its machines (src/config/fuzz.rs)
#[cfg(any(test, fuzzing))]
#[cfg_attr(fuzzing, allow(dead_code))]
pub mod tests {
    use super::*;

    fn cpu(id: usize, core: usize, llc: usize, node: usize, capacity: usize) -> CpuInfo {
        CpuInfo {
            id,
            core,
            core_id: core,
            socket: node,
            node,
            llc,
            caches: [Some(core), Some(core), Some(core), Some(llc)],
            capacity,
            max_freq_khz: capacity * 5000,
            core_type: if capacity == 1024 { "Big" } else { "Little" }.into(),
        }
    }

    /// The i9-14900HX of the Affinity scheduler's documentation: CPUs 0-15
    /// are 8 P-cores with 2 threads, 16-31 are 16 E-cores (no SMT), one L3.
    pub fn i9_14900hx() -> Machine {
        let mut cpus = Vec::new();
        for id in 0..16 {
            cpus.push(cpu(id, (id / 2) * 4, 0, 0, 1024));
        }
        for id in 16..32 {
            cpus.push(cpu(id, 16 + id, 0, 0, 640));
        }
        Machine {
            model: "Intel(R) Core(TM) i9-14900HX".into(),
            cpus,
        }
    }

    /// Two sockets, 8 cores with 2 threads each per socket; siblings are
    /// numbered n and n+32 as on most servers.
    fn two_socket_numa() -> Machine {
        let mut cpus = Vec::new();
        for id in 0..64 {
            let core = id % 32;
            let node = core / 16;
            cpus.push(cpu(id, core, node, node, 1024));
        }
        Machine {
            model: "2-socket".into(),
            cpus,
        }
    }

    fn flat_vm(n: usize) -> Machine {
        Machine {
            model: "vm".into(),
            cpus: (0..n).map(|id| cpu(id, id, 0, 0, 1024)).collect(),
        }
    }

    /// big.LITTLE: 4 little cores (0-3), 4 big cores (4-7) in another cluster.
    fn big_little() -> Machine {
        let mut cpus: Vec<_> = (0..4).map(|id| cpu(id, id, 0, 0, 430)).collect();
        cpus.extend((4..8).map(|id| cpu(id, id, 1, 0, 1024)));
        Machine {
            model: "arm".into(),
            cpus,
        }
    }

    #[test]
    fn i9_four_runners_get_one_sibling_per_p_core_and_leave_cpu0() {
        let c = choose_tick_cpus(&i9_14900hx(), 4).unwrap();
        // CPU 0's core is reserved, so the next four P-cores: 2,4,6,8.
        assert_eq!(c.tick_cpus, vec![2, 4, 6, 8]);
    }

    #[test]
    fn i9_never_picks_two_siblings_and_prefers_p_cores() {
        let m = i9_14900hx();
        let c = choose_tick_cpus(&m, 10).unwrap();
        let cores: BTreeSet<_> = c
            .tick_cpus
            .iter()
            .map(|&i| m.cpu(i).unwrap().core)
            .collect();
        assert_eq!(cores.len(), 10, "one CPU per core");
        // 7 P-cores are free (core 0 reserved); the remaining 3 are E-cores.
        let p = c.tick_cpus.iter().filter(|&&i| i < 16).count();
        assert_eq!(p, 7);
    }

    #[test]
    fn numa_server_fills_one_node_before_spilling() {
        let m = two_socket_numa();
        let node_of = |i: &usize| m.cpu(*i).unwrap().node;
        let c = choose_tick_cpus(&m, 6).unwrap();
        let nodes: BTreeSet<_> = c.tick_cpus.iter().map(node_of).collect();
        assert_eq!(nodes.len(), 1, "{:?}", c.tick_cpus);
        assert!(!c.tick_cpus.contains(&0) && !c.tick_cpus.contains(&32));
        // Node 1 has 16 free cores (node 0 gives core 0 to the system):
        // 20 runners fill node 1 and spill 4 onto node 0.
        let c = choose_tick_cpus(&m, 20).unwrap();
        let on_node0 = c.tick_cpus.iter().filter(|i| node_of(i) == 0).count();
        assert_eq!(on_node0, 4, "{:?}", c.tick_cpus);
        let cores: BTreeSet<_> = c
            .tick_cpus
            .iter()
            .map(|i| m.cpu(*i).unwrap().core)
            .collect();
        assert_eq!(cores.len(), 20, "never two siblings of one core");
    }

    #[test]
    fn vm_without_smt_leaves_cpu0() {
        let c = choose_tick_cpus(&flat_vm(4), 2).unwrap();
        assert_eq!(c.tick_cpus, vec![1, 2]);
        let c = choose_tick_cpus(&flat_vm(4), 3).unwrap();
        assert_eq!(c.tick_cpus, vec![1, 2, 3]);
        assert!(choose_tick_cpus(&flat_vm(4), 4).is_err());
        assert_eq!(max_tick_cpus(&flat_vm(4)), 3);
        assert_eq!(max_tick_cpus(&flat_vm(2)), 1);
    }

    #[test]
    fn a_cpu_s_sibling_is_the_other_thread_of_its_core() {
        // the i9's P-cores have two threads (CPUs 2n, 2n + 1), its E-cores one
        let m = i9_14900hx();
        assert_eq!(m.sibling(2), Some(3));
        assert_eq!(m.sibling(3), Some(2));
        assert_eq!(m.sibling(20), None, "an E-core: no sibling");
        assert_eq!(flat_vm(4).sibling(1), None, "no SMT: none");
        assert_eq!(m.sibling(99), None);
    }

    #[test]
    fn default_takes_every_spare_core() {
        assert_eq!(default_tick_cpu_count(&flat_vm(4)), 3);
        assert_eq!(default_tick_cpu_count(&flat_vm(8)), 7);
        let c = choose_tick_cpus(&flat_vm(4), default_tick_cpu_count(&flat_vm(4))).unwrap();
        assert_eq!(c.tick_cpus, vec![1, 2, 3]);
    }

    #[test]
    fn two_cpu_machine_still_works() {
        let m = flat_vm(2);
        assert_eq!(default_tick_cpu_count(&m), 1);
        let c = choose_tick_cpus(&m, 1).unwrap();
        assert_eq!(c.tick_cpus, vec![1]);
        let e = choose_tick_cpus(&m, 2).unwrap_err().to_string();
        assert!(e.contains("at most 1"), "{e}");
    }

    #[test]
    fn one_cpu_machine_is_refused_clearly() {
        let e = choose_tick_cpus(&flat_vm(1), 1).unwrap_err().to_string();
        assert!(e.contains("at least 2"), "{e}");
    }

    #[test]
    fn big_little_prefers_big_cores() {
        let c = choose_tick_cpus(&big_little(), 3).unwrap();
        assert_eq!(c.tick_cpus, vec![4, 5, 6]);
        // More than the big cores: the rest are little ones, never CPU 0.
        let c = choose_tick_cpus(&big_little(), 6).unwrap();
        assert_eq!(c.tick_cpus, vec![1, 2, 4, 5, 6, 7]);
    }

    #[test]
    fn zero_count_is_refused() {
        assert!(choose_tick_cpus(&flat_vm(4), 0).is_err());
    }

    #[test]
    fn table_has_the_affinity_schedulers_columns() {
        let t = table(&i9_14900hx());
        assert!(t.contains("CPU  CORE SOCKET"));
        assert!(t.contains("L1d:L1i:L2:L3"));
        // CPU 3 is the sibling of CPU 2 on core 4.
        assert!(
            t.lines()
                .any(|l| l.split_whitespace().take(2).eq(["3", "4"])),
            "{t}"
        );
    }
}

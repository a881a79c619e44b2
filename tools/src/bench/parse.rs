//! Readers for the raw outputs the benchmark collects in the guest: stress-ng's
//! `--metrics-brief` lines, cyclictest's `-q` summary and bpftool's program
//! list with `kernel.bpf_stats_enabled` run-time counters.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Sum of "bogo ops/s (real time)" over the stressors in stress-ng's
/// `--metrics-brief` output; None when it printed no metrics line.
pub fn stress_ng_bogo_ops_per_s(text: &str) -> Option<f64> {
    // stress-ng: metrc: [PID] cpu   1206   1.00   0.82   0.00   1203.97   1467.59
    let mut sum = None;
    for line in text.lines() {
        let Some(rest) = line.split("metrc:").nth(1) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // [PID] name ops real usr sys ops/s(real) ops/s(cpu): 8 fields, numeric from 2
        if fields.len() < 8 || fields[2].parse::<u64>().is_err() {
            continue;
        }
        if let Ok(v) = fields[6].parse::<f64>() {
            *sum.get_or_insert(0.0) += v;
        }
    }
    sum
}

/// cyclictest's per-thread summary: the worst average and the worst maximum
/// over its threads, in µs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Cyclictest {
    pub avg_us: f64,
    pub max_us: f64,
    pub samples: u64,
}

pub fn cyclictest_summary(text: &str) -> Option<Cyclictest> {
    // T: 0 (11327) P: 0 I:1000 C:    985 Min:     22 Act:   73 Avg:  104 Max:    3917
    let mut out: Option<Cyclictest> = None;
    for line in text.lines().filter(|l| l.trim_start().starts_with("T:")) {
        let value = |key: &str| -> Option<f64> {
            let rest = line.split(key).nth(1)?;
            rest.split_whitespace().next()?.parse().ok()
        };
        let (Some(avg), Some(max), Some(c)) = (value("Avg:"), value("Max:"), value("C:")) else {
            continue;
        };
        let o = out.get_or_insert(Cyclictest {
            avg_us: 0.0,
            max_us: 0.0,
            samples: 0,
        });
        o.avg_us = o.avg_us.max(avg);
        o.max_us = o.max_us.max(max);
        o.samples += c as u64;
    }
    out
}

/// One BPF program's counters from `bpftool -j prog show`.
#[derive(Debug, Clone, Deserialize)]
pub struct BpfProg {
    pub id: u64,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub run_time_ns: u64,
    #[serde(default)]
    pub run_cnt: u64,
}

pub fn bpftool_progs(json: &str) -> Result<Vec<BpfProg>, serde_json::Error> {
    serde_json::from_str(json)
}

/// The scheduler's BPF cost over a measured window: struct_ops programs only
/// (a sched_ext scheduler's callbacks), counters as differences.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BpfOverhead {
    pub calls: u64,
    pub run_ns: u64,
    pub ns_per_call: f64,
    /// BPF run time as a share of all CPUs' time over the window.
    pub cpu_pct: f64,
    /// Callback name -> (calls, ns per call), for the busiest callbacks.
    pub callbacks: BTreeMap<String, (u64, f64)>,
}

pub fn bpf_overhead(
    before: &[BpfProg],
    after: &[BpfProg],
    window_s: f64,
    cpus: usize,
) -> Option<BpfOverhead> {
    let base: BTreeMap<u64, &BpfProg> = before.iter().map(|p| (p.id, p)).collect();
    let mut o = BpfOverhead::default();
    let mut any = false;
    for p in after.iter().filter(|p| p.kind == "struct_ops") {
        any = true;
        // A program loaded during the window counts from zero.
        let (c0, t0) = base
            .get(&p.id)
            .map_or((0, 0), |b| (b.run_cnt, b.run_time_ns));
        let (calls, ns) = (
            p.run_cnt.saturating_sub(c0),
            p.run_time_ns.saturating_sub(t0),
        );
        o.calls += calls;
        o.run_ns += ns;
        if calls > 0 {
            let e = o.callbacks.entry(p.name.clone()).or_default();
            let total = e.0 as f64 * e.1 + ns as f64;
            e.0 += calls;
            e.1 = total / e.0 as f64;
        }
    }
    if !any {
        return None;
    }
    o.ns_per_call = if o.calls > 0 {
        o.run_ns as f64 / o.calls as f64
    } else {
        0.0
    };
    if window_s > 0.0 && cpus > 0 {
        o.cpu_pct = 100.0 * o.run_ns as f64 / (window_s * 1e9 * cpus as f64);
    }
    Some(o)
}

/// CPU time (user + system, in clock ticks) of a process, from the text
/// of its /proc/PID/stat.
pub fn proc_cpu_ticks(stat: &str) -> Option<u64> {
    // fields after the parenthesised name: state is the first, utime the 12th
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

/// The scheduler process's CPU time over a window, as a share of all CPUs'
/// time (like `BpfOverhead::cpu_pct`).
pub fn process_cpu_pct(
    before: &str,
    after: &str,
    clk_tck: u64,
    window_s: f64,
    cpus: usize,
) -> Option<f64> {
    let ticks = proc_cpu_ticks(after)?.checked_sub(proc_cpu_ticks(before)?)?;
    (window_s > 0.0 && cpus > 0 && clk_tck > 0)
        .then(|| 100.0 * ticks as f64 / clk_tck as f64 / (window_s * cpus as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn process_cpu_time_comes_from_utime_and_stime() {
        let before =
            "321 (scx_tick_user) R 1 321 1 0 -1 4194560 10 0 0 0 100 50 0 0 20 0 2 0 5 1 1";
        let after =
            "321 (scx_tick_user) S 1 321 1 0 -1 4194560 10 0 0 0 400 150 0 0 20 0 2 0 5 1 1";
        assert_eq!(proc_cpu_ticks(before), Some(150));
        // 400 ticks at 100/s over 10 s on 4 CPUs: 10%
        assert_eq!(process_cpu_pct(before, after, 100, 10.0, 4), Some(10.0));
        assert_eq!(proc_cpu_ticks("garbage"), None);
        // a name with spaces and parentheses
        assert_eq!(
            proc_cpu_ticks("7 (a) b) R 1 1 1 0 -1 0 0 0 0 0 3 4 0"),
            Some(7)
        );
    }

    #[test]
    fn stress_ng_metrics_brief() {
        let text = "\
stress-ng: info:  [11316] setting to a 1 second run per stressor
stress-ng: info:  [11316] dispatching hogs: 1 cpu
stress-ng: metrc: [11316] stressor       bogo ops real time  usr time  sys time   bogo ops/s     bogo ops/s
stress-ng: metrc: [11316]                           (secs)    (secs)    (secs)   (real time) (usr+sys time)
stress-ng: metrc: [11316] cpu                1206      1.00      0.82      0.00      1203.97        1467.59
stress-ng: metrc: [11316] matrix              100      1.00      0.82      0.00        96.03         120.00
stress-ng: info:  [11316] successful run completed in 1.01s
";
        assert_eq!(stress_ng_bogo_ops_per_s(text), Some(1300.0));
        assert_eq!(
            stress_ng_bogo_ops_per_s("stress-ng: info: [1] no metrics"),
            None
        );
    }

    #[test]
    fn cyclictest_quiet_summary() {
        let text = "# /dev/cpu_dma_latency set to 0us\n\
T: 0 (11327) P: 0 I:1000 C:    985 Min:     22 Act:   73 Avg:  104 Max:    3917\n\
T: 1 (11328) P: 0 I:1500 C:    600 Min:     20 Act:   70 Avg:  150 Max:    2000\n";
        let c = cyclictest_summary(text).unwrap();
        assert_eq!(
            c,
            Cyclictest {
                avg_us: 150.0,
                max_us: 3917.0,
                samples: 1585
            }
        );
        assert_eq!(cyclictest_summary("cyclictest: permission denied"), None);
    }

    fn prog(id: u64, kind: &str, name: &str, ns: u64, cnt: u64) -> BpfProg {
        BpfProg {
            id,
            kind: kind.into(),
            name: name.into(),
            run_time_ns: ns,
            run_cnt: cnt,
        }
    }

    #[test]
    fn bpftool_json_parses() {
        let j = r#"[{"id":12,"type":"struct_ops","name":"tick_enqueue","tag":"ab","run_time_ns":5000,"run_cnt":10},
                    {"id":3,"type":"cgroup_skb","tag":"cd"}]"#;
        let p = bpftool_progs(j).unwrap();
        assert_eq!((p[0].id, p[0].run_cnt, p[0].run_time_ns), (12, 10, 5000));
        assert_eq!((p[1].run_cnt, p[1].name.as_str()), (0, ""));
    }

    #[test]
    fn overhead_is_the_difference_of_struct_ops_counters() {
        let before = [
            prog(1, "struct_ops", "enqueue", 1_000, 10),
            prog(2, "struct_ops", "dispatch", 0, 0),
            prog(9, "tracing", "other", 0, 0),
        ];
        let after = [
            prog(1, "struct_ops", "enqueue", 5_000, 30),
            prog(2, "struct_ops", "dispatch", 6_000, 20),
            prog(3, "struct_ops", "init_task", 1_000, 10),
            prog(9, "tracing", "other", 1_000_000, 1000),
        ];
        let o = bpf_overhead(&before, &after, 1.0, 2).unwrap();
        assert_eq!(o.calls, 20 + 20 + 10);
        assert_eq!(o.run_ns, 4_000 + 6_000 + 1_000);
        assert!((o.ns_per_call - 11_000.0 / 50.0).abs() < 1e-9);
        assert!((o.cpu_pct - 100.0 * 11_000.0 / 2e9).abs() < 1e-12);
        assert_eq!(o.callbacks["dispatch"], (20, 300.0));
        assert_eq!(o.callbacks["enqueue"], (20, 200.0));
    }

    #[test]
    fn no_struct_ops_means_no_sched_ext_overhead() {
        let p = [prog(9, "tracing", "x", 1, 1)];
        assert_eq!(bpf_overhead(&p, &p, 1.0, 1), None);
    }
}

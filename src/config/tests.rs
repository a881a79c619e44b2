//! The configuration's unit tests: the flags' values, the file, the plan.

use std::path::PathBuf;

use super::parse::{parse_group_spec, parse_threads_spec, parse_tick_cpus};
use super::plan::{Plan, Runners};
use super::*;
use crate::model::topology::tests::i9_14900hx;

fn resolve_ok(p: &str) -> Result<(PathBuf, u64)> {
    Ok((PathBuf::from("/sys/fs/cgroup").join(p), p.len() as u64))
}

fn plan(c: &Config) -> Result<Plan> {
    c.validate(&i9_14900hx(), &resolve_ok)
}

#[test]
fn defaults_match_the_affinity_scheduler() {
    let c = Config::default();
    assert_eq!(c.steal_threshold_ms, 3.0);
    assert_eq!(c.run_tasks_buffer_ms, 0.1);
    let p = plan(&c).unwrap();
    assert_eq!(p.steal_threshold_ns, 3_000_000);
    assert_eq!(p.run_tasks_buffer_ns, 100_000);
    // 24 cores on the i9: every one but CPU 0's.
    assert_eq!(p.tick_cpus.len(), 23);
}

#[test]
fn a_plan_without_groups_is_warned_about() {
    let w = plan(&Config::from_toml("").unwrap()).unwrap().warnings();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("no tick group") && w[0].contains("[[group]]"),
        "{w:?}"
    );
    let c = Config::from_toml("[[group]]\ncgroup = \"a\"\n").unwrap();
    assert!(plan(&c).unwrap().warnings().is_empty());
}

#[test]
fn group_spec_parses_options_and_cpu_lists() {
    let g = parse_group_spec("game/world,period=50,deadline=45ms,cpus=2,4,6-7").unwrap();
    assert_eq!(g.cgroup.as_deref(), Some("game/world"));
    assert_eq!(g.period_ms, 50.0);
    assert_eq!(g.deadline_ms, Some(45.0));
    assert_eq!(g.cpus, Some(vec![2, 4, 6, 7]));
    let g = parse_group_spec("/sys/fs/cgroup/tick").unwrap();
    assert_eq!((g.period_ms, g.deadline_ms, g.cpus), (50.0, None, None));
}

#[test]
fn group_spec_errors_name_the_problem() {
    let e = parse_group_spec("tick,speed=3").unwrap_err().to_string();
    assert!(
        e.contains("unknown option \"speed\"") && e.contains("allowed"),
        "{e}"
    );
    let e = parse_group_spec("tick,period=fast")
        .unwrap_err()
        .to_string();
    assert!(e.contains("period") && e.contains("not a number"), "{e}");
    assert!(parse_group_spec(",period=5").is_err());
}

#[test]
fn tick_cpus_count_or_list() {
    assert_eq!(parse_tick_cpus("4").unwrap(), TickCpus::Count(4));
    assert_eq!(
        parse_tick_cpus("2,4,6-7").unwrap(),
        TickCpus::List(vec![2, 4, 6, 7])
    );
    assert!(parse_tick_cpus("0").is_err());
    assert!(
        parse_tick_cpus("3-1")
            .unwrap_err()
            .to_string()
            .contains("backwards")
    );
    assert!(
        parse_tick_cpus("a")
            .unwrap_err()
            .to_string()
            .contains("allowed")
    );
}

#[test]
fn bad_cpu_lists_are_refused() {
    let mut c = Config {
        tick_cpus: TickCpus::List(vec![2, 99]),
        ..Default::default()
    };
    let e = plan(&c).unwrap_err().to_string();
    assert!(
        e.contains("CPU 99 does not exist") && e.contains("allowed: 0,1,2"),
        "{e}"
    );
    c.tick_cpus = TickCpus::List(vec![2, 2]);
    assert!(plan(&c).unwrap_err().to_string().contains("listed twice"));
    c.tick_cpus = TickCpus::List((0..32).collect());
    assert!(
        plan(&c)
            .unwrap_err()
            .to_string()
            .contains("leave at least one")
    );
    c.tick_cpus = TickCpus::Count(30);
    assert!(plan(&c).unwrap_err().to_string().contains("at most 23"));
}

fn with_group(g: GroupConfig) -> Config {
    Config {
        groups: vec![g],
        ..Default::default()
    }
}

fn group(period_ms: f64, deadline_ms: Option<f64>) -> GroupConfig {
    GroupConfig {
        period_ms,
        deadline_ms,
        ..GroupConfig::of_cgroup("tick")
    }
}

#[test]
fn periods_and_deadlines_are_checked() {
    for bad in [0.0, -5.0, 1e9, f64::NAN] {
        let e = plan(&with_group(group(bad, None))).unwrap_err().to_string();
        assert!(e.contains("period_ms") && e.contains("allowed"), "{e}");
    }
    let e = plan(&with_group(group(50.0, Some(201.0))))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("deadline_ms = 201") && e.contains("at most 4 periods (200 ms)"),
        "{e}"
    );
    // a server that catches up tolerates a tick's lateness: it claims
    // a whole CPU at most
    let p = plan(&with_group(group(30.0, Some(60.0)))).unwrap();
    assert_eq!(p.groups[0].deadline_ns, 60_000_000);
    assert_eq!(p.groups[0].cpu_share(), 1.0);
    let p = plan(&with_group(group(50.0, Some(45.0)))).unwrap();
    assert_eq!(p.groups[0].period_ns, 50_000_000);
    assert_eq!(p.groups[0].deadline_ns, 45_000_000);
    assert_eq!(p.groups[0].cpu_share(), 0.9);
    let p = plan(&with_group(group(16.0, None))).unwrap();
    assert_eq!(
        p.groups[0].deadline_ns, 16_000_000,
        "deadline defaults to the period"
    );
}

#[test]
fn threshold_must_be_below_the_period_unless_stealing_is_off() {
    let mut c = with_group(group(20.0, None));
    c.steal_threshold_ms = 20.0;
    let e = plan(&c).unwrap_err().to_string();
    assert!(
        e.contains("steal_threshold_ms") && e.contains("below the tick period"),
        "{e}"
    );
    c.work_stealing = false;
    assert!(plan(&c).is_ok());
}

#[test]
fn group_cpus_must_be_tick_cpus() {
    let mut g = group(50.0, None);
    g.cpus = Some(vec![3]);
    let mut c = with_group(g);
    c.tick_cpus = TickCpus::List(vec![2, 4]);
    let e = plan(&c).unwrap_err().to_string();
    assert!(
        e.contains("CPU 3 is not a tick CPU") && e.contains("allowed: 2,4"),
        "{e}"
    );
}

#[test]
fn missing_cgroup_error_passes_through() {
    let c = with_group(group(50.0, None));
    let e = c
        .validate(&i9_14900hx(), &|p| bail!("cgroup {p:?} does not exist"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("does not exist"), "{e}");
}

#[test]
fn duplicate_groups_are_refused() {
    let mut c = with_group(group(50.0, None));
    c.groups.push(group(50.0, None));
    assert!(plan(&c).unwrap_err().to_string().contains("given twice"));
}

#[test]
fn a_group_ticks_per_thread_unless_it_says_per_process() {
    let c = Config::from_toml(
        "[[group]]\ncgroup = \"a\"\n[[group]]\ncgroup = \"bb\"\ntick = \"process\"",
    )
    .unwrap();
    assert_eq!(c.groups[0].tick_unit(), TickUnit::Thread);
    assert_eq!(c.groups[1].tick_unit(), TickUnit::Process);
    let plan = plan(&c).unwrap();
    assert_eq!(plan.groups[1].tick, TickUnit::Process);
    assert!(plan.describe()[3].ends_with("one tick per process"));
    let g = parse_threads_spec("mt,process=^minetestserver$,tick=process").unwrap();
    assert_eq!(g.tick_unit(), TickUnit::Process);
    // every thread of a process: its steps; named threads: each its own
    let every = parse_threads_spec("mt,process=^minetestserver$").unwrap();
    assert_eq!(every.tick_unit(), TickUnit::Process);
    let named = parse_threads_spec("w,process=^java$,thread=^Region").unwrap();
    assert_eq!(named.tick_unit(), TickUnit::Thread);
    let pool = parse_threads_spec("t,process=^tickload$,tick=thread").unwrap();
    assert_eq!(pool.tick_unit(), TickUnit::Thread);
    assert_eq!(
        parse_group_spec("w,tick=thread").unwrap().tick_unit(),
        TickUnit::Thread
    );
    for bad in [
        Config::from_toml("[[group]]\ncgroup = \"a\"\ntick = \"step\"").map(|_| ()),
        parse_group_spec("w,tick=steps").map(|_| ()),
    ] {
        let e = bad.unwrap_err().to_string();
        assert!(e.contains("tick = ") && e.contains("allowed"), "{e}");
    }
}

#[test]
fn toml_mirrors_the_affinity_scheduler_vocabulary() {
    let c = Config::from_toml(
        r#"
            steal_threshold_ms = 5
            run_tasks_buffer_ms = 0.5
            tick_cpus = "2,4"
            work_stealing = false
            mid_tick_tasks = false
            pin = "hard"
            [[group]]
            cgroup = "world"
            period_ms = 50
            deadline_ms = 45
            [[group]]
            cgroup = "physics"
            period_ms = 16.6
            cpus = [4]
            "#,
    )
    .unwrap();
    assert_eq!(c.steal_threshold_ms, 5.0);
    assert_eq!(c.run_tasks_buffer_ms, 0.5);
    assert_eq!(c.tick_cpus, TickCpus::List(vec![2, 4]));
    assert!(!c.work_stealing && !c.mid_tick_tasks);
    assert_eq!(c.pin, Pin::Hard);
    assert_eq!(c.groups.len(), 2);
    assert_eq!(c.groups[1].cpus, Some(vec![4]));
    assert_eq!(c.groups[0].deadline_ms, Some(45.0));
}

#[test]
fn toml_accepts_canvas_configuration_names() {
    let c = Config::from_toml(
        r#"
            stealThresholdMillis = 3
            runTasksBufferMillis = 0.1
            tickRegionAffinity = ["0", "2", "4", "6"]
            enableWorkStealing = true
            enableMidTickTasks = true
            "#,
    )
    .unwrap();
    assert_eq!(c.tick_cpus, TickCpus::List(vec![0, 2, 4, 6]));
    let c = Config::from_toml("tick_cpus = 3").unwrap();
    assert_eq!(c.tick_cpus, TickCpus::Count(3));
}

#[test]
fn toml_errors_name_the_key() {
    let e = Config::from_toml("steal_treshold_ms = 3")
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown field `steal_treshold_ms`"), "{e}");
    let e = Config::from_toml("steal_threshold_ms = \"fast\"")
        .unwrap_err()
        .to_string();
    assert!(e.contains("steal_threshold_ms"), "{e}");
    let e = Config::from_toml("pin = \"firm\"").unwrap_err().to_string();
    assert!(e.contains("pin") && e.contains("allowed"), "{e}");
    let e = Config::from_toml("tick_cpus = 0").unwrap_err().to_string();
    assert!(e.contains("tick_cpus = 0"), "{e}");
    // a group without runners: refused when checked, naming what is allowed
    let c = Config::from_toml("[[group]]\nperiod_ms = 50").unwrap();
    let e = plan(&c).unwrap_err().to_string();
    assert!(
        e.contains("no runners given") && e.contains("cgroup = PATH"),
        "{e}"
    );
    let e = Config::from_toml("[[group]]\ncgroup = \"w\"\nspeed = 1")
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown field `speed`"), "{e}");
}

#[test]
fn hotplug_keeps_the_online_part_of_the_users_lists() {
    let mut m = i9_14900hx();
    m.cpus.retain(|c| c.id != 4);
    let mut g = group(50.0, None);
    g.cpus = Some(vec![4]);
    let mut c = with_group(g);
    c.tick_cpus = TickCpus::List(vec![2, 4, 6]);
    let notes = c.keep_online(&m);
    assert_eq!(c.tick_cpus, TickCpus::List(vec![2, 6]));
    assert_eq!(
        c.groups[0].cpus, None,
        "a group whose CPUs are all offline uses all tick CPUs"
    );
    assert_eq!(notes.len(), 2, "{notes:?}");
    let p = c.validate(&m, &resolve_ok).unwrap();
    assert_eq!(p.groups[0].home_cpus, vec![2, 6]);
    // nothing offline: nothing changes
    let mut c = with_group(group(50.0, None));
    c.tick_cpus = TickCpus::List(vec![2, 4]);
    assert!(c.keep_online(&i9_14900hx()).is_empty());
    assert_eq!(c.tick_cpus, TickCpus::List(vec![2, 4]));
    // every listed CPU offline: automatic choice
    c.tick_cpus = TickCpus::List(vec![4]);
    c.keep_online(&m);
    assert_eq!(c.tick_cpus, TickCpus::Auto);
    assert!(c.validate(&m, &resolve_ok).is_ok());
}

#[test]
fn canvas_affinity_switch_is_pin() {
    let c = Config::from_toml("enableAffinitySchedulerCpuAffinity = true").unwrap();
    assert_eq!(c.pin, Pin::Hard);
    let c = Config::from_toml("enableAffinitySchedulerCpuAffinity = false").unwrap();
    assert_eq!(c.pin, Pin::Soft);
    let e = Config::from_toml("pin = \"soft\"\nenableAffinitySchedulerCpuAffinity = true")
        .unwrap_err()
        .to_string();
    assert!(e.contains("both given"), "{e}");
}

#[test]
fn groups_of_threads_selected_by_name() {
    let c = Config::from_toml(
        r#"
            missing_cgroup = "create"
            [[group]]
            name = "folia"
            process = "^java$"
            cmdline = "folia.*\\.jar"
            thread_name = "^Region Schedule"
            period_ms = 50
            "#,
    )
    .unwrap();
    assert_eq!(c.missing_cgroup, MissingCgroup::Create);
    let p = plan(&c).unwrap();
    assert_eq!(p.groups[0].name, "folia");
    let Runners::Threads(sel) = &p.groups[0].runners else {
        panic!("not a thread group: {:?}", p.groups[0].runners)
    };
    assert!(sel.process_matches("java", "java -jar folia-1.21.jar nogui"));
    assert!(!sel.process_matches("java", "java -jar paper.jar"));
    assert!(sel.thread_matches("Region Schedule"));
    assert!(!sel.thread_matches("Server thread"));
    assert!(
        p.describe()
            .iter()
            .any(|l| l.contains("thread_name ~ /^Region Schedule/"))
    );

    let g = parse_threads_spec("world,process=^tickload$,thread=^Tick Runner,period=25").unwrap();
    assert_eq!(g.name.as_deref(), Some("world"));
    assert_eq!(g.period_ms, 25.0);
    let sel = g.select.unwrap();
    assert_eq!(sel.thread_name.as_deref(), Some("^Tick Runner"));
    // a regex with a comma stays whole
    let g = parse_threads_spec("w,cmdline=x{1,3},thread=a").unwrap();
    assert_eq!(g.select.unwrap().cmdline.as_deref(), Some("x{1,3}"));
}

#[test]
fn bad_thread_groups_are_refused_with_the_reason() {
    let cases = [
        ("[[group]]\nprocess = \"java\"", "needs a name"),
        (
            "[[group]]\nname = \"w\"\nthread_name = \"^Tick\"",
            "needs a process or cmdline",
        ),
        (
            "[[group]]\nname = \"w\"\nprocess = \"(\"",
            "not a valid regular expression",
        ),
        (
            "[[group]]\nname = \"w\"\ncgroup = \"t\"\nprocess = \"java\"",
            "not both",
        ),
        ("[[group]]\nname = \"w\"", "no runners given"),
        (
            "[[group]]\nname = \"a b\"\nprocess = \"java\"",
            "allowed: 1 to 64",
        ),
        (
            "[[group]]\nname = \"w\"\nprocess = \"java\"\nthread_name = \"^Region Scheduler Thread\"",
            "first 15 bytes",
        ),
        ("missing_cgroup = \"later\"", "allowed: \"wait\""),
    ];
    for (toml, want) in cases {
        let e = Config::from_toml(toml)
            .and_then(|c| plan(&c))
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{toml}: {e}");
    }
    let mut c = with_group(group(50.0, None));
    c.groups.push(GroupConfig {
        name: Some("tick".into()),
        ..GroupConfig::of_cgroup("other")
    });
    assert!(plan(&c).unwrap_err().to_string().contains("used twice"));
}

#[test]
fn huge_cpu_ids_are_refused_not_allocated() {
    for s in [
        "0-99999999999",
        "0-18446744073709551615",
        "1024-1025",
        "5,4096",
    ] {
        let e = parse_tick_cpus(s).unwrap_err().to_string();
        assert!(e.contains("out of range") && e.contains("0 to 1023"), "{e}");
    }
    let e = Config::from_toml("tick_cpus = [1, 70000]")
        .unwrap_err()
        .to_string();
    assert!(e.contains("70000"), "{e}");
}

#[test]
fn other_ranges() {
    let c = Config {
        slice_ms: 0.0,
        ..Default::default()
    };
    assert!(plan(&c).unwrap_err().to_string().contains("slice_ms"));
    let c = Config {
        run_tasks_buffer_ms: -1.0,
        ..Default::default()
    };
    assert!(
        plan(&c)
            .unwrap_err()
            .to_string()
            .contains("run_tasks_buffer_ms")
    );
}

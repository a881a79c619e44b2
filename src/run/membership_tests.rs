//! The membership's unit tests.

use super::*;

#[test]
fn a_process_without_runners_is_said_once_after_the_grace() {
    let g = NO_RUNNER_GRACE;
    assert!(
        !says_no_runner(0, g - Duration::from_secs(1), false),
        "a JVM still starting"
    );
    assert!(says_no_runner(0, g, false));
    assert!(!says_no_runner(0, g * 10, true), "said once");
    assert!(!says_no_runner(3, g * 10, false));
}

#[test]
fn thread_names_are_summarised_with_counts() {
    let names = [
        "main",
        "Folia Region Sc",
        "Netty Epoll Ser",
        "Folia Region Sc",
        "main2",
    ];
    assert_eq!(
        name_summary(names, 12),
        r#""main", "Folia Region Sc" x2, "Netty Epoll Ser", "main2""#
    );
    assert_eq!(
        name_summary(names, 2),
        r#""main", "Folia Region Sc" x2, and 2 more"#
    );
    assert_eq!(name_summary([], 2), "");
}

#[test]
fn the_domain_is_the_processs_own_cgroup() {
    let root = Path::new("/sys/fs/cgroup");
    assert_eq!(
        domain_of(root, "/system.slice/minecraft.service"),
        Path::new("/sys/fs/cgroup/system.slice/minecraft.service")
    );
    // main thread in our child (a runner itself, or left by a killed scx_tick)
    assert_eq!(
        domain_of(root, "/system.slice/minecraft.service/scx_tick-world"),
        Path::new("/sys/fs/cgroup/system.slice/minecraft.service")
    );
    assert_eq!(domain_of(root, "/"), Path::new("/sys/fs/cgroup"));
}

#[test]
fn start_times_survive_odd_process_names() {
    let stat = "4242 (Region Schedule) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 30 0 987654 100000 200";
    assert_eq!(parse_start_time(stat), Some(987654));
    let stat = "7 (a) b (c)) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55 0 0";
    assert_eq!(parse_start_time(stat), Some(55));
    assert_eq!(parse_start_time("garbage"), None);
    let own = start_time(std::process::id()).unwrap();
    assert!(own > 0);
}

#[test]
fn our_own_process_and_its_callers_are_never_matched() {
    let plan = Plan {
        tick_cpus: vec![1],
        steal_threshold_ns: 0,
        run_tasks_buffer_ns: 0,
        slice_ns: 1,
        work_stealing: true,
        mid_tick_tasks: true,
        pin: crate::config::Pin::Soft,
        missing_cgroup: MissingCgroup::Wait,
        groups: Vec::new(),
        output: Default::default(),
        kernel: Default::default(),
    };
    let m = Membership::new(&plan, Path::new("/sys/fs/cgroup"));
    assert!(m.ours.contains(&std::process::id()));
    assert!(
        m.ours.len() >= 2,
        "the test runner's parent too: {:?}",
        m.ours
    );
}

#[test]
fn a_new_process_is_read_in_two_scans_then_left_to_the_recheck() {
    let mut listed: [BTreeSet<u32>; 2] = Default::default();
    let mut scan = |pids: &[u32]| {
        let read = fresh(pids, &listed);
        listed.swap(0, 1);
        listed[0] = pids.iter().copied().collect();
        read
    };
    assert_eq!(scan(&[1, 2]), vec![1, 2]);
    assert_eq!(scan(&[1, 2, 7]), vec![1, 2, 7], "1 and 2 were seen once");
    // 7 (a shell's child, maybe not exec'd yet when first read) once more
    assert_eq!(scan(&[1, 2, 7]), vec![7]);
    assert_eq!(scan(&[1, 2, 7]), Vec::<u32>::new());
    // a pid gone for a scan and back is new again
    assert_eq!(scan(&[1, 2]), Vec::<u32>::new());
    assert_eq!(scan(&[1, 2, 7]), vec![7]);
}

//! The dispatch model's unit tests.

use super::*;

/// A seeded xorshift: `rnd(n)` draws in 0..n, the same every run.
fn xorshift(mut seed: u64) -> impl FnMut(u64) -> u64 {
    move |n| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    }
}

#[test]
fn overrun_work_yields_to_a_neighbours_fresh_tick_but_not_to_later_ones() {
    const MS: u64 = 1_000_000;
    const P: u64 = 50 * MS;
    let t = 1_000 * P;
    // a server always behind: its tick was on a CPU at its deadline,
    // 20 ms before a neighbour wakes, and has run 10 ms since
    let missed = t - 20 * MS;
    let (_, deadline) = replenish(missed - P, missed, P, missed);
    // a first miss on a CPU: not yet (a late start), the second: overrun
    assert!(!overrun_after_miss(false, true, false));
    let overrun = overrun_after_miss(false, true, true);
    let key = overrun_key(queue_key(deadline, 10 * MS), overrun, P);
    let fresh = queue_key(t + P, 0);
    assert!(
        preempts(fresh, Some(key)),
        "the neighbour's fresh tick goes first"
    );
    // without the rule the replenished deadline would hold the CPU
    assert!(!preempts(fresh, Some(queue_key(deadline, 10 * MS))));
    // it still goes before the neighbour's tick a period later
    assert!(before(key, queue_key(t + 2 * P, 0)));
    // its next miss keeps it overrun; a runner that only waited is not
    assert!(overrun_after_miss(overrun, false, true));
    assert!(!overrun_after_miss(false, false, true));
    assert_eq!(overrun_key(key, false, P), key);
    // a sleep between its ticks ends it, a moment's block mid-tick does not
    assert!(sleep_ends_overrun(P / 8, P) && sleep_ends_overrun(40 * MS, P));
    assert!(!sleep_ends_overrun(MS, P));
}

#[test]
fn an_on_time_runner_spills_onto_overrun_work_but_not_onto_other_runners() {
    assert!(spills_onto(Runs::Other, false));
    assert!(
        spills_onto(Runs::Runner { overrun: true }, false),
        "an overloaded server's runner gives its CPU to a neighbour's on-time one"
    );
    assert!(!spills_onto(Runs::Runner { overrun: false }, false));
    // overrun work takes nothing from anyone: other work, on-time or overrun runners
    assert!(!spills_onto(Runs::Runner { overrun: true }, true));
    assert!(!spills_onto(Runs::Runner { overrun: false }, true));
    // and places only on idle CPUs or home, whatever it could preempt
    let home = HomeState {
        wait: 30_000_000,
        runs_runner: true,
    };
    let p = place(POLICY, NOW, NOW - 10_000_000, home, None, Some(3), true);
    assert_eq!(p, Place::Home);
    // an on-time runner predicted late at home takes the CPU found for it
    let p = place(POLICY, NOW, NOW, home, None, Some(3), false);
    assert_eq!(p, Place::Preempt(3));
}

#[test]
fn a_wake_up_inside_the_tick_keeps_its_deadline_and_the_next_tick_stays_on_the_grid() {
    const P: u64 = 50_000_000;
    const D: u64 = 40_000_000;
    let g = 1_000 * P;
    let at = |grid: u64, now: u64| Wake::Starts {
        grid,
        deadline: grid.max(now) + D,
    };
    let w = |now, done| wake(Some(g), P, D, now, done);
    assert_eq!(
        wake(None, P, D, g + 7, false),
        at(g + 7, g + 7),
        "the first tick starts at its wake-up"
    );
    // blocked mid-tick: the same tick, however often
    for d in [0, 1, P / 2 - 1] {
        assert_eq!(w(g + d, true), Wake::Continues, "{d}");
    }
    for d in [P / 2, P - P / 8 - 1] {
        assert_eq!(w(g + d, false), Wake::Continues, "{d}: work left");
        assert_eq!(
            w(g + d, true),
            at(g + P - (P - d) / 8, g + d),
            "{d}: work done, an early next tick, the phase an eighth of the way"
        );
    }
    // just before the next grid point: the next tick, early, done or not
    for done in [false, true] {
        assert_eq!(w(g + P - P / 8, done), at(g + P - P / 64, g + P - P / 8));
        assert_eq!(w(g + P - 1, done), at(g + P, g + P - 1));
    }
    // a grid point in the future (a tick that started early): still that tick
    assert_eq!(w(g - 1, true), Wake::Continues);
    // the next tick on the grid: a late timer moves the phase an eighth of the way
    for done in [false, true] {
        assert_eq!(w(g + P, done), at(g + P, g + P));
        assert_eq!(w(g + P + P / 4, done), at(g + P + P / 32, g + P + P / 4));
        // idle for ticks: the grid point before it
        assert_eq!(w(g + 7 * P + 8, done), at(g + 7 * P + 1, g + 7 * P + 8));
        // far from every grid point (a timer very late, or a new
        // phase): an eighth of the way from the grid point before it
        for l in [P / 4 + 1, P / 2, P - P / 8 - 1] {
            assert_eq!(w(g + 2 * P + l, done), at(g + 2 * P + l / 8, g + 2 * P + l));
        }
        // within an eighth of a period before a grid point: early
        let now = g + 3 * P - P / 8;
        assert_eq!(w(now, done), at(g + 3 * P - P / 64, now));
    }
    // the next on-time wake-up after a very late one is the next tick
    let late = g + P + P * 7 / 10;
    let Wake::Starts { grid: g2, .. } = w(late, true) else {
        panic!()
    };
    assert!(matches!(
        wake(Some(g2), P, D, g + 2 * P, true),
        Wake::Starts { .. }
    ));
    assert!(tick_done(0, 0) && tick_done(7, 8) && !tick_done(6, 8));
}

#[test]
fn every_wake_up_is_one_tick_or_part_of_one_and_ticks_follow_the_period() {
    // a runner that wakes w times per period, at its tick (the timer
    // up to P/4 late; one tick in 7 up to 4/5 of a period late, alone)
    // and then mid-tick with work left: one tick per period, never
    // two, each deadline from its wake-up, the grid near the period's
    const P: u64 = 50_000_000;
    let mut rnd = xorshift(0x9e37_79b9_u64);
    for w in 1..5u64 {
        let (mut grid, mut ticks) = (None, 0);
        for t in 0..200u64 {
            // clocks of different CPUs: up to P/16 early
            let nominal = 1_000 * P + t * P;
            let very_late = t % 7 == 3;
            let tick = nominal - P / 16
                + if very_late {
                    P / 2 + rnd(P * 3 / 10)
                } else {
                    rnd(P / 4)
                };
            let mut wakes = vec![(tick, true)];
            if !very_late {
                wakes.extend((1..w).map(|_| (tick + 1 + rnd(P * 5 / 8), false)));
            }
            wakes.sort();
            for (now, done) in wakes {
                if let Wake::Starts { grid: g, deadline } = wake(grid, P, P, now, done) {
                    assert_eq!(deadline, g.max(now) + P);
                    assert!(
                        g <= now + P / 2 && g + P / 16 >= nominal && g <= nominal + P / 4,
                        "{t}: {g} {now}"
                    );
                    grid = Some(g);
                    ticks += 1;
                }
            }
        }
        assert_eq!(ticks, 200, "{w} wake-ups per period");
    }
}

#[test]
fn a_guessed_phase_gives_way_to_the_next_wake_up() {
    // threads released from a barrier 33 ms before their first tick,
    // 18 ms of work per tick that starts up to 5 ms late, each
    // wake-up before the runner's usual CPU time (what BPF saw at
    // start-up): the guess at the barrier gives way at the first
    // tick, and no deadline falls before the end of a tick the
    // server kept
    const P: u64 = 50_000_000;
    const MS: u64 = 1_000_000;
    let due = |t: u64| 1_000 * P + t * P;
    let mut rnd = xorshift(0x5851_f42d_u64);
    let (mut grid, mut guess) = (None, false);
    let on_wake = |now: u64, grid: &mut Option<u64>, guess: &mut bool| {
        if let Wake::Starts {
            grid: g,
            deadline: d,
        } = thread_wake(*grid, *guess, P, P, now, false)
        {
            *guess = grid.is_none();
            *grid = Some(g);
            return Some(d);
        }
        None
    };
    let mut deadline = on_wake(due(0) - 33 * MS, &mut grid, &mut guess).unwrap();
    assert!(guess, "the first wake-up only guesses");
    for t in 0..50 {
        let end = due(t) + rnd(5 * MS) + 18 * MS;
        deadline = on_wake(due(t) + rnd(MS), &mut grid, &mut guess).unwrap_or(deadline);
        assert!(
            !guess && deadline >= end,
            "{t}: deadline {deadline} before the end {end}"
        );
    }
    // kept, the guess makes the first tick end past its deadline
    let g = due(0) - 33 * MS;
    assert_eq!(wake(Some(g), P, P, due(0), false), Wake::Continues);
    assert!(g + P < due(0) + 18 * MS);
}

#[test]
fn a_late_wake_up_does_not_make_later_ticks_miss() {
    // a runner on a busy machine that sleeps until each tick (its
    // timer 1-3 ms late) and takes 40 ms for its work; its timer
    // fires 40 ms late once, and that tick ends 43 ms after it, so the
    // next begins without a wake-up. Each wake-up comes before the
    // runner's usual CPU time (the worst case). scx_tick misses what
    // the runner missed, not a miss per tick from then on
    const P: u64 = 50_000_000;
    const MS: u64 = 1_000_000;
    let count = |replenished_done: bool| {
        let (mut grid, mut guess, mut deadline) = (None::<u64>, false, 0);
        let (mut replenished, mut end, mut misses, mut late) = (false, 0, 0, 0);
        for t in 1..60u64 {
            let due = 1_000 * P + t * P;
            let (lateness, wall) = match t {
                0..3 => (3 * MS, 40 * MS),
                3 => (40 * MS, 43 * MS),
                4 => (0, 15 * MS),
                _ => (MS, 40 * MS),
            };
            let begin = if end < due {
                let now = due + lateness;
                let done = if replenished_done {
                    wake_done(0, MS, replenished)
                } else {
                    false
                };
                if let Wake::Starts {
                    grid: g,
                    deadline: d,
                } = thread_wake(grid, guess, P, P, now, done)
                {
                    guess = grid.is_none();
                    (grid, deadline, replenished) = (Some(g), d, false);
                }
                // a tick it continues after a sleep is no replenished one any more
                replenished &= !sleep_ends_overrun(now - end, P);
                now
            } else {
                end
            };
            end = begin + wall;
            late += u64::from(end > due + P);
            // busy at its deadline: a miss, the next tick on the grid
            while deadline > begin && deadline <= end {
                misses += 1;
                let (g, d) = replenish(grid.unwrap(), deadline, P, deadline);
                (grid, deadline, replenished) = (Some(g), d, true);
            }
        }
        (misses, late)
    };
    let (misses, late) = count(true);
    assert!(misses <= late + 1, "{misses} misses for {late} late ticks");
    let (kept, _) = count(false);
    assert!(
        kept > late + 10,
        "the replenished tick kept: {kept} misses for {late}"
    );
}

#[test]
fn a_process_tick_is_one_per_period_whatever_its_threads_do() {
    // a server: a clock thread wakes at the tick (up to P/8 late) and
    // works 1 ms; its loop thread wakes 1-4 times per tick (receive
    // timeouts, the clock's signal), works 10 ms in all, and once in 5
    // ticks overruns past the deadline; a helper wakes at random
    const P: u64 = 50_000_000;
    const MS: u64 = 1_000_000;
    let mut rnd = xorshift(0x2545_f491_u64);
    let mut pt = ProcessTick::default();
    let mut own: [Option<(u64, u64)>; 3] = [None; 3];
    let (mut ticks, mut misses, mut late) = (0, 0, 0);
    for t in 0..300u64 {
        let nominal = 1_000 * P + t * P;
        let clock = nominal + rnd(P / 8);
        // (when, CPU time, thread, its part of the step done before)
        let mut wakes = vec![(clock, MS, 0, true)];
        let n = 1 + rnd(4);
        let overrun = t % 5 == 2;
        for i in 0..n {
            let at = clock + MS + i * (P / 2 / n) + rnd(MS);
            let work = if overrun && i == n - 1 {
                P
            } else {
                10 * MS / n
            };
            wakes.push((at, work, 1, i == 0));
        }
        wakes.push((nominal + rnd(P * 3 / 4), MS / 10, 2, true));
        wakes.sort();
        let mut tick_late = false;
        for (now, work, thread, done) in wakes {
            let mine = own[thread].map(|(g, d)| (g, d, done));
            let (grid, deadline, started) = pt.wake(P, P, now, mine, false);
            own[thread] = Some((grid, deadline));
            ticks += started as u64;
            if now + work > deadline && pt.miss(grid) {
                misses += 1;
            }
            tick_late |= now + work > nominal + P + P / 8;
        }
        late += tick_late as u64;
    }
    assert!((297..=303).contains(&ticks), "{ticks} ticks for 300 steps");
    assert!(
        misses * 2 >= late && misses <= late * 2,
        "{misses} misses for {late} late steps"
    );
    // a miss is counted once per tick, whichever thread is late
    let mut pt = ProcessTick::default();
    let (grid, deadline, started) = pt.wake(P, P, 7 * P, None, false);
    assert!(started);
    assert_eq!(
        pt.wake(P, P, 7 * P + 3 * MS, None, false),
        (grid, deadline, false)
    );
    // the next tick started by another thread (after a quiet spell of
    // the process): one blocked part-way through its work for this
    // tick keeps this tick
    let (next, _, started) = pt.wake(P, P, 7 * P + 30 * MS, None, true);
    assert!(started && next > grid);
    let mid = Some((grid, deadline, false));
    assert_eq!(
        pt.wake(P, P, 7 * P + 35 * MS, mid, false),
        (grid, deadline, false)
    );
    // its part done, it joins the process's tick
    let done = Some((grid, deadline, true));
    assert_eq!(pt.wake(P, P, 7 * P + 35 * MS, done, false).0, next);
    assert!(pt.miss(grid) && !pt.miss(grid));
    // two threads overrun: the process's next tick is started once
    let mut pt = ProcessTick::default();
    let (grid, deadline, _) = pt.wake(P, P, 7 * P, None, false);
    let next = pt.replenish(grid, deadline, P, deadline + MS);
    assert_eq!(next, (grid + P, deadline + P, true));
    assert_eq!(
        pt.replenish(grid, deadline, P, deadline + 2 * MS),
        (grid + P, deadline + P, false)
    );
}

#[test]
fn a_step_that_starts_late_is_a_miss_as_the_server_counts_it() {
    // a server's step loop (minetest's) works 10 ms and sleeps until a
    // step after the last step's start (50 ms, then 60 ms as in a loaded
    // guest: the grid's phase follows such steps an eighth at a time); one
    // wake-up in 8 comes 20-45 ms late (the timer it slept on fired late),
    // and the step ends well inside its own deadline: the server logs it
    // late when it came more than 1.5 steps after the one before, and so
    // must scx_tick
    const P: u64 = 50_000_000;
    const MS: u64 = 1_000_000;
    let mut rnd = xorshift(0x9e37_79b9_u64);
    let mut pt = ProcessTick::default();
    let (mut ticks, mut misses, mut ends_late, mut late) = (0, 0u64, 0, 0u64);
    let mut prev: Option<u64> = None;
    for step in 0..400 {
        let delay = if rnd(8) == 0 {
            20 * MS + rnd(25 * MS)
        } else {
            rnd(MS)
        };
        let cadence = if step < 200 { P } else { 60 * MS };
        let now = prev.unwrap_or(1_000 * P) + cadence + delay;
        let before = pt.started;
        let (grid, deadline, started) = pt.wake(P, P, now, None, true);
        ticks += started as u64;
        // the process went quiet when the step before ended, 10 ms in
        let quiet = prev.map_or(0, |p| p + 10 * MS);
        if started && late_step(before, quiet, P, now).is_some() && pt.miss(grid) {
            misses += 1;
        }
        if now + 10 * MS > deadline && pt.miss(grid) {
            misses += 1;
            ends_late += 1;
        }
        late += prev.is_some_and(|p| now - p > P + P / 2) as u64;
        prev = Some(now);
    }
    assert_eq!(ticks, 400);
    assert_eq!(ends_late, 0, "every step ends in time for its own deadline");
    assert!(late >= 20, "the server logged {late} late steps");
    assert_eq!(misses, late, "{misses} misses for {late} late steps");
    // a step on time, or a first one, is none
    assert_eq!(late_step(None, 0, P, 7 * P), None);
    let quiet = 7 * P + 10 * MS;
    assert_eq!(late_step(Some(7 * P), quiet, P, 8 * P + P / 2), None);
    assert_eq!(
        late_step(Some(7 * P), quiet, P, 8 * P + P / 2 + 1),
        Some(8 * P + P / 2)
    );
    // busy past the next step's time (catch-up steps back to back, unseen:
    // OpenTTD's), the wake-up after is the server's own lateness, no late step
    assert_eq!(late_step(Some(7 * P), 8 * P + MS, P, 9 * P), None);
    // a server that runs its late ticks back to back past a deadline of 2
    // periods (OpenTTD catching up) is replenished; its next wake-up, on
    // time, is no late step: the replenished tick started when it was
    // replenished, not at its grid point, a period and more before
    let mut pt = ProcessTick::default();
    let (grid, deadline, _) = pt.wake(P, 2 * P, 7 * P, None, true);
    pt.replenish(grid, deadline, P, deadline + MS);
    assert_eq!(pt.started, Some(deadline + MS));
    assert_eq!(late_step(pt.started, 0, P, deadline + P), None);
    assert!(late_step(pt.grid, 0, P, deadline + P).is_some());
}

#[test]
fn catch_up_steps_back_to_back_are_ticks_of_their_own() {
    // OpenTTD: 30 ms steps, deadline 60 ms, 20 ms of work each; one
    // wake-up in 3 fires 10-14 ms late, and one in 40 comes 100-130 ms
    // late (a stall: the server is 4 steps behind and catches up for
    // many periods); the steps due meanwhile run back to back, without a
    // sleep. Every step is a tick of its own, and about the steps the
    // server logs late (1.5 periods or more after the one before: a
    // stall's) are missed; scheduler ticks every 4 ms while it works
    const P: u64 = 30_000_000;
    const MS: u64 = 1_000_000;
    let run = |roll: bool| {
        let mut rnd = xorshift(0x1234_5678_u64);
        let mut pt = ProcessTick::default();
        let (mut ticks, mut misses, mut late, mut end) = (0u64, 0u64, 0u64, 0u64);
        let mut prev_start = 0;
        let mut own: Option<(u64, u64)> = None;
        let (mut runtime, mut step_cpu, mut woken) = (0, 0, false);
        for k in 1..=600u64 {
            let due = 1_000 * P + k * P;
            let delay = match rnd(40) {
                0 => 100 * MS + rnd(30 * MS),
                1..=13 => 10 * MS + rnd(4 * MS),
                _ => rnd(MS),
            };
            let start = end.max(due + delay);
            late += (prev_start > 0 && start - prev_start > P + P / 2) as u64;
            prev_start = start;
            if start > end {
                // asleep since the last step ended
                pt.asleep(end);
                let fresh = pt.awake(start, P);
                let mine = own.map(|(g, d)| (g, d, true));
                let before = pt.started;
                let (grid, deadline, started) = pt.wake(P, 2 * P, start, mine, fresh);
                ticks += started as u64;
                if started && fresh && late_step(before, pt.idle_since, P, start).is_some() {
                    misses += pt.miss(grid) as u64;
                }
                if own.is_none_or(|(g, _)| g != grid) {
                    step_cpu = ProcessTick::learn_step_cpu(step_cpu, runtime, woken, true);
                    runtime = 0;
                    woken = true;
                }
                own = Some((grid, deadline));
            }
            end = start + 20 * MS;
            let mut at = start;
            while at < end {
                at += 4 * MS;
                runtime += 4 * MS;
                let (grid, deadline) = own.unwrap();
                if at >= deadline {
                    misses += pt.miss(grid) as u64;
                    let (g, d, counted) = pt.replenish(grid, deadline, P, at);
                    ticks += counted as u64;
                    own = Some((g, d));
                    (runtime, woken) = (0, false);
                } else if roll
                    && let Some((g, d, late)) =
                        pt.roll_over(grid, deadline, P, 2 * P, at, runtime, step_cpu)
                {
                    // a roll-over 1.5 periods after the tick before started:
                    // the thread waited mid-spell, a late step
                    if late.is_some() {
                        misses += pt.miss(g) as u64;
                    }
                    ticks += 1;
                    own = Some((g, d));
                    (runtime, woken) = (0, false);
                }
            }
        }
        (ticks, misses, late)
    };
    let (ticks, misses, late) = run(true);
    assert!(
        (10..=30).contains(&late),
        "the server ran {late} steps late by its own measure"
    );
    // within 10 % (554 here): a stall's grid points pass without a tick
    // (the wake-up after it sets the grid), and catch-up steps come faster
    // than the grid's, one tick per grid point
    assert!((540..=612).contains(&ticks), "{ticks} ticks for 600 steps");
    assert!(
        misses * 2 >= late && misses <= late * 2,
        "{misses} misses for {late} late steps"
    );
    // without rolling over, a catch-up is one tick, missed every period
    // (446 ticks, 82 misses for 16 late steps)
    let (ticks, misses, _) = run(false);
    assert!(
        ticks < 500,
        "without roll-over: {ticks} ticks for 600 steps"
    );
    assert!(
        misses > 2 * late,
        "without roll-over: {misses} misses for {late} late steps"
    );

    // the rule itself: past the next grid point, a step's work done,
    // before the deadline
    let mut pt = ProcessTick::default();
    let (grid, deadline, _) = pt.wake(P, 2 * P, 7 * P, None, true);
    let roll =
        |pt: &mut ProcessTick, at, cpu, step| pt.roll_over(grid, deadline, P, 2 * P, at, cpu, step);
    assert_eq!(roll(&mut pt, grid + P - 1, 20 * MS, 20 * MS), None);
    assert_eq!(roll(&mut pt, grid + P, 10 * MS, 20 * MS), None);
    // no step that ended in a sleep yet (a process that never sleeps)
    assert_eq!(roll(&mut pt, grid + P, 30 * MS, 0), None);
    assert_eq!(
        roll(&mut pt, grid + P, 20 * MS, 20 * MS),
        Some((grid + P, grid + 3 * P, None))
    );
    assert_eq!(pt.started, Some(grid + P));
    // another thread of the tick before joins the one rolled into
    assert_eq!(roll(&mut pt, grid + P, 20 * MS, 20 * MS), None);
    // and again at the next grid point, a step's work done again
    let (g, d) = (grid + P, grid + 3 * P);
    assert_eq!(
        pt.roll_over(g, d, P, 2 * P, g + P, 20 * MS, 20 * MS),
        Some((g + P, g + 3 * P, None))
    );
    // 1.5 periods after the one before started (the thread waited for a
    // CPU mid-spell): a late step
    let (g, d) = (g + P, g + 3 * P);
    assert_eq!(
        pt.roll_over(g, d, P, 2 * P, g + P + 20 * MS, 20 * MS, 20 * MS),
        Some((g + P, g + 3 * P, Some(g + P + P / 2)))
    );
    // a deadline of one period: never, not even for a tick that began at
    // a wake-up after its grid point, due just after the next one
    let mut pt = ProcessTick::default();
    let (grid, deadline, _) = pt.wake(P, P, 7 * P, None, true);
    let roll =
        |pt: &mut ProcessTick, due| pt.roll_over(grid, due, P, P, grid + P, 20 * MS, 20 * MS);
    assert_eq!(roll(&mut pt, deadline), None);
    assert_eq!(roll(&mut pt, deadline + 5 * MS), None);
    // a step's CPU time is learnt only from a tick that began at a
    // wake-up and ended in a sleep
    assert_eq!(ProcessTick::learn_step_cpu(0, 20 * MS, true, true), 20 * MS);
    assert_eq!(
        ProcessTick::learn_step_cpu(20 * MS, 60 * MS, false, true),
        20 * MS
    );
    assert_eq!(
        ProcessTick::learn_step_cpu(20 * MS, 60 * MS, true, false),
        20 * MS
    );
    assert_eq!(
        ProcessTick::learn_step_cpu(20 * MS, 24 * MS, true, true),
        21 * MS
    );
}

#[test]
fn a_process_helpers_join_its_steps_and_split_none() {
    // minetest in a loaded guest: its step loop (thread 1) works 25 ms,
    // then waits out the step, one every 60 ms (off the 50 ms grid); its
    // main thread (2) and a connection thread (3) wake every 50 ms on
    // clocks of their own and work 50 us
    const P: u64 = 50_000_000;
    const MS: u64 = 1_000_000;
    let mut rnd = xorshift(0x1234_5678_u64);
    let base = 1_000 * P;
    let mspt = [0, 25 * MS, MS / 20, MS / 20];
    // (when, thread, wakes (else sleeps))
    let mut events = Vec::new();
    for t in 0..200u64 {
        let step = base + t * 60 * MS + rnd(2 * MS);
        events.push((step, 1, true));
        events.push((step + mspt[1], 1, false));
        for (thread, phase) in [(2, 7 * MS), (3, 31 * MS)] {
            let at = base + t * P + phase + rnd(MS);
            events.push((at, thread, true));
            events.push((at + mspt[thread], thread, false));
        }
    }
    events.sort();
    let steps = |helpers: bool| {
        let mut pt = ProcessTick::default();
        let mut own: [Option<(u64, u64)>; 4] = [None; 4];
        let mut counted = [false; 4];
        let (mut ticks, mut worst) = (0u64, 0u64);
        for &(now, thread, wakes) in &events {
            if !wakes {
                if std::mem::take(&mut counted[thread]) {
                    pt.asleep(now);
                }
                continue;
            }
            if pt.helper(thread as u32, mspt[thread], now, P) && helpers {
                let (grid, deadline) = pt.join(P, now);
                own[thread] = grid.map(|g| (g, deadline));
                continue;
            }
            counted[thread] = true;
            let fresh = pt.awake(now, P);
            let mine = own[thread].map(|(g, d)| (g, d, true));
            let (grid, deadline, started) = pt.wake(P, P, now, mine, fresh);
            own[thread] = Some((grid, deadline));
            ticks += started as u64;
            // the step's deadline: a period after it starts
            if thread == 1 && now > base + P {
                worst = worst.max(deadline.abs_diff(now + P));
            }
        }
        (ticks, worst)
    };
    let (ticks, worst) = steps(true);
    assert!((199..=201).contains(&ticks), "{ticks} ticks for 200 steps");
    assert!(
        worst <= 2 * MS,
        "a step's deadline {worst} ns off its start's"
    );
    // the helpers' wake-ups starting ticks too: more ticks than steps
    let (ticks, _) = steps(false);
    assert!(ticks >= 220, "{ticks} ticks for 200 steps without helpers");
    // a helper joins the tick in progress, or past its deadline has one
    // of its own off the grid
    let mut pt = ProcessTick::default();
    assert!(!pt.helper(1, 20 * MS, 7 * P, P));
    assert!(pt.helper(2, 2 * MS, 7 * P, P) && !pt.helper(3, 3 * MS, 7 * P, P));
    let (grid, deadline, _) = pt.wake(P, P, 7 * P, None, false);
    assert_eq!(pt.join(P, 7 * P + MS), (Some(grid), deadline));
    assert_eq!(pt.join(P, deadline + MS), (None, deadline + MS + P));
    // the heaviest thread gone for 4 periods: the next to wake takes its place
    assert!(!pt.helper(2, 2 * MS, 7 * P + 4 * P + 1, P));
}

#[test]
fn a_process_step_is_a_busy_spell_of_its_threads() {
    // tickload's process case: 3 threads leave a start-up barrier
    // 20 ms before the first step, then wake at each step (a timer,
    // now and then 9 ms late), each works in 3 parts blocked 1 ms
    // apart, slowed by CPU hogs; the slowest thread's last part wakes
    // late in the step, when the others sleep already
    const P: u64 = 50_000_000;
    const MS: u64 = 1_000_000;
    let mut rnd = xorshift(0x9e37_79b9_u64);
    let base = 1_000 * P;
    // (when, thread, wakes (else sleeps), its part of the step done before)
    let mut events = Vec::new();
    for thread in 0..3 {
        events.push((base - 20 * MS, thread, true, true));
        events.push((base - 20 * MS + MS / 5, thread, false, true));
    }
    for t in 0..300u64 {
        let nominal = base + t * P;
        let timer = if t % 37 == 5 { 9 * MS } else { rnd(MS / 2) };
        for thread in 0..3 {
            let mut at = nominal + timer + rnd(MS / 4);
            for part in 0..3 {
                events.push((at, thread, true, part == 0));
                let stall = rnd(if thread == 2 { 12 * MS } else { 4 * MS });
                at += 10 * MS / 3 + stall;
                events.push((at, thread, false, false));
                at += MS;
            }
        }
    }
    events.sort();
    let steps = |pt: &mut ProcessTick, fresh_wakes: bool| {
        let mut own: [Option<(u64, u64)>; 3] = [None; 3];
        let (mut ticks, mut worst) = (0, 0);
        for &(now, thread, wakes, done) in &events {
            if !wakes {
                pt.asleep(now);
                continue;
            }
            let fresh = pt.awake(now, P) && fresh_wakes;
            let mine = own[thread].map(|(g, d)| (g, d, done));
            let (grid, deadline, started) = pt.wake(P, P, now, mine, fresh);
            own[thread] = Some((grid, deadline));
            ticks += started as u64;
            // a step's deadline is its due time's, or later when its
            // timer fired late (never earlier than the wake-up's own)
            let t = now.saturating_sub(base) / P;
            if now >= base && t % 37 != 5 {
                worst = worst.max(deadline.abs_diff(base + t * P + P));
            }
        }
        (ticks, worst)
    };
    // one tick at the barrier, then one per step, each with its
    // step's deadline (a 9 ms late timer moves the phase an eighth
    // of that)
    let (ticks, worst) = steps(&mut ProcessTick::default(), true);
    assert_eq!(ticks, 301, "{ticks} ticks for 300 steps and a start");
    assert!(worst <= 2 * MS, "a deadline {worst} ns off its step's");
    // the grid alone: the barrier's phase stays, 20 ms off
    let (_, worst) = steps(&mut ProcessTick::default(), false);
    assert!(worst > 10 * MS, "{worst}");
}

#[test]
fn a_runner_preempts_other_work_and_later_deadlines_only() {
    assert!(preempts(10, None));
    assert!(preempts(10, Some(10 + RUNNER_QUANTUM_NS + 1)));
    // in phase: turns after a quantum, not a preemption at once
    assert!(!preempts(10, Some(11)));
    assert!(!preempts(10, Some(10 + RUNNER_QUANTUM_NS)));
    assert!(!preempts(12, Some(11)));
}

const MS: u64 = 1_000_000;
const NOW: u64 = 1000 * MS;
const POLICY: Policy = Policy {
    work_stealing: true,
    steal_threshold_ns: 3 * MS,
};

fn head(deadline: u64, tick_start: u64) -> Option<Head> {
    Some(Head {
        deadline,
        tick_start,
        ahead: 0,
    })
}

fn behind(h: Option<Head>, ahead: u64) -> Option<Head> {
    h.map(|h| Head { ahead, ..h })
}

/// Poll tick CPU 0 of `queues.len()` with the given queues.
fn poll_with(policy: Policy, queues: &[Option<Head>], global: Option<Head>) -> Pick {
    let mut rr = 0;
    let nr = queues.len();
    poll(
        policy,
        NOW,
        0,
        nr,
        &mut rr,
        Search::flat(nr),
        global,
        &|i| queues[i],
    )
}

#[test]
fn other_work_comes_from_its_own_cache_unless_a_queue_nearby_waited_a_slice_longer() {
    const MS: u64 = 1_000_000;
    let (now, slice) = (1_000 * MS, 5 * MS);
    let mut looked = 0;
    // its own head is fresh: taken, nothing else looked at
    let fresh = [Some(now - MS), Some(now - 900 * MS)];
    assert_eq!(take_other_from(&fresh, now, slice, &mut looked), Some(0));
    assert_eq!(looked, 0);
    // its own waited past a slice: a neighbour's head older by more than a slice wins
    let heads = [
        Some(now - 10 * MS),
        Some(now - 14 * MS),
        Some(now - 40 * MS),
    ];
    assert_eq!(take_other_from(&heads, now, slice, &mut looked), Some(2));
    assert_eq!(looked, 2);
    // within a slice of each other: the nearer one stays
    let heads = [Some(now - 10 * MS), Some(now - 12 * MS)];
    assert_eq!(take_other_from(&heads, now, slice, &mut 0), Some(0));
    // its own empty: the nearest non-empty, unless a later one waited a slice longer
    assert_eq!(
        take_other_from(&[None, None, Some(now - MS)], now, slice, &mut 0),
        Some(2)
    );
    assert_eq!(
        take_other_from(
            &[None, Some(now - MS), Some(now - 3 * MS)],
            now,
            slice,
            &mut 0
        ),
        Some(1)
    );
    assert_eq!(take_other_from(&[None, None], now, slice, &mut 0), None);
    // never more than MAX_PROBES queues nearby, however many there are
    let mut many = vec![None; 300];
    many[299] = Some(0);
    let mut looked = 0;
    assert_eq!(take_other_from(&many, now, slice, &mut looked), None);
    assert_eq!(looked, MAX_PROBES);
}

#[test]
fn a_cpu_takes_the_other_work_that_last_ran_on_it_within_a_slice_of_the_head_unless_owed() {
    const MS: u64 = 1_000_000;
    let slice = 5 * MS;
    assert_eq!(pick_other(&[], slice, false), None);
    // nothing of its own: the head
    assert_eq!(
        pick_other(&[(100 * MS, false), (101 * MS, false)], slice, false),
        Some(0)
    );
    // its own within a slice of the head goes first; the head is its own: the head
    let q = [(100 * MS, false), (103 * MS, false), (105 * MS, true)];
    assert_eq!(pick_other(&q, slice, false), Some(2));
    assert_eq!(
        pick_other(&[(100 * MS, true), (101 * MS, true)], slice, false),
        Some(0)
    );
    // more than a slice behind the head: not ahead of it
    let q = [(100 * MS, false), (105 * MS + 1, true)];
    assert_eq!(pick_other(&q, slice, false), Some(0));
    // at most MAX_PROBES looked at
    let mut q = vec![(100 * MS, false); MAX_PROBES];
    q.push((100 * MS, true));
    assert_eq!(pick_other(&q, slice, false), Some(0));
    q[MAX_PROBES - 1].1 = true;
    assert_eq!(pick_other(&q, slice, false), Some(MAX_PROBES - 1));
    // a share owed to other work goes to the head that waited for it
    assert_eq!(pick_other(&q, slice, true), Some(0));
    assert_eq!(pick_other(&[], slice, true), None);
}

#[test]
fn other_work_is_owed_a_cpu_only_after_it_waited_a_period_without_it() {
    let t = OTHER_SHARE_PERIOD_NS;
    assert!(!other_owed(0, t, Some(0)), "exactly one period: not yet");
    assert!(other_owed(0, t + 1, Some(0)));
    assert!(!other_owed(0, 10 * t, None), "nothing waits: nothing owed");
    // a task queued a moment ago is not starved, however long the CPU ran runners
    assert!(!other_owed(0, 10 * t, Some(10 * t - 1000)));
    // other work started here recently: the debt is paid
    assert!(!other_owed(5 * t, 5 * t + 1000, Some(0)));
    // stamps from another CPU a little ahead are no debt
    assert!(!other_owed(t + 10, t, Some(0)));
    assert!(!other_owed(0, t, Some(t + 10)));
}

#[test]
fn a_clock_a_little_behind_is_no_lateness() {
    assert_eq!(elapsed(NOW, NOW + 5), 0);
    assert_eq!(elapsed(NOW + 5, NOW), 5);
    // a stamp from a CPU slightly ahead: not late, let alone stealable
    assert!(!is_stealable(NOW + 1000, NOW, 0, 3 * MS));
    assert!(!is_overdue(head(NOW + 1, 0).unwrap(), NOW));
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
fn a_candidate_predicted_to_start_late_is_stolen_before_it_is_late() {
    let mine = head(NOW + 45 * MS, NOW - MS);
    // woke 1 ms ago, 20 ms of another runner's work ahead of it
    let theirs = behind(head(NOW + 49 * MS, NOW - MS), 20 * MS);
    assert_eq!(poll_with(POLICY, &[mine, theirs], None), Pick::Steal(1));
    // 1 ms ahead: predicted to start within the threshold, never stolen
    let soon = behind(head(NOW + 49 * MS, NOW - MS), MS);
    assert_eq!(poll_with(POLICY, &[mine, soon], None), Pick::Local);
}

#[test]
fn a_local_head_late_enough_to_be_stolen_goes_before_a_candidate() {
    let mine = head(NOW + 45 * MS, NOW - 5 * MS);
    let theirs = head(NOW + 40 * MS, NOW - 10 * MS);
    assert_eq!(poll_with(POLICY, &[mine, theirs], None), Pick::Local);
    // within the threshold, it waits for its own CPU: the candidate first
    let fresh = head(NOW + 45 * MS, NOW - 3 * MS);
    assert_eq!(poll_with(POLICY, &[fresh, theirs], None), Pick::Steal(1));
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
    let mut rr = 0;
    assert_eq!(
        poll_spill(off, NOW, 2, &mut rr, Search::flat(2), None, &|_| theirs),
        Pick::Nothing
    );
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
fn a_busy_cpu_looks_at_one_candidate_an_idle_one_at_more() {
    let mine = head(NOW + 45 * MS, NOW);
    let stealable = head(NOW + 10 * MS, NOW - 10 * MS);
    // Candidate order from rr=0 for CPU 0 of 4 in one LLC: 1, 2, 3, 1, ...
    let queues = [mine, None, None, stealable];
    let mut rr = 0;
    let p = poll(POLICY, NOW, 0, 4, &mut rr, Search::flat(4), None, &|i| {
        queues[i]
    });
    assert_eq!(p, Pick::Local, "busy: only CPU 1 was looked at");
    let p = poll(POLICY, NOW, 0, 4, &mut rr, Search::flat(4), None, &|i| {
        queues[i]
    });
    assert_eq!(p, Pick::Local, "then CPU 2");
    let p = poll(POLICY, NOW, 0, 4, &mut rr, Search::flat(4), None, &|i| {
        queues[i]
    });
    assert_eq!(p, Pick::Steal(3), "the third poll looks at CPU 3");
    let idle = [None, None, None, stealable];
    let mut rr = 0;
    let p = poll(POLICY, NOW, 0, 4, &mut rr, Search::flat(4), None, &|i| {
        idle[i]
    });
    assert_eq!(p, Pick::Steal(3), "idle: keeps looking until it finds one");
}

#[test]
fn probes_per_poll_are_bounded_whatever_the_machine() {
    for nr in [2, 9, 64, 1024] {
        let looked = std::cell::Cell::new(0);
        let mut rr = 0;
        let p = poll(POLICY, NOW, 0, nr, &mut rr, Search::flat(nr), None, &|i| {
            if i != 0 {
                looked.set(looked.get() + 1);
            }
            None
        });
        assert_eq!(p, Pick::Nothing);
        assert!(looked.get() <= MAX_PROBES, "{nr} CPUs: {}", looked.get());
        let looked = std::cell::Cell::new(0);
        poll_spill(POLICY, NOW, nr, &mut rr, Search::flat(nr), None, &|_| {
            looked.set(looked.get() + 1);
            None
        });
        assert!(looked.get() <= MAX_PROBES, "{nr} CPUs: {}", looked.get());
    }
}

#[test]
fn equally_near_candidates_are_visited_equally_and_never_itself() {
    let first = |me: Option<usize>, nr: usize, rr: &mut u32| {
        let looked = std::cell::Cell::new(None);
        let heads = |i: usize| {
            looked.set(looked.get().or(Some(i)));
            None
        };
        steal_round(POLICY, NOW, me, nr, 1, rr, Search::flat(nr), &heads);
        looked.get()
    };
    for nr in 2..9 {
        for me in 0..nr {
            let mut rr = 0;
            let mut seen = vec![0; nr];
            for _ in 0..(nr - 1) * 10 {
                seen[first(Some(me), nr, &mut rr).unwrap()] += 1;
            }
            assert_eq!(seen[me], 0);
            assert!(seen.iter().enumerate().all(|(i, &n)| i == me || n == 10));
        }
        let mut rr = 0;
        let mut seen = vec![0; nr];
        for _ in 0..nr * 10 {
            seen[first(None, nr, &mut rr).unwrap()] += 1;
        }
        assert!(seen.iter().all(|&n| n == 10));
    }
    assert_eq!(first(Some(0), 1, &mut 0), None);
    assert_eq!(first(None, 0, &mut 0), None);
}

#[test]
fn a_steal_timers_queue_is_looked_at_first_and_a_throttled_search_looks_once() {
    let late = head(NOW + 10 * MS, NOW - 10 * MS);
    let queues = [None, None, None, None, None, late];
    let looked = std::cell::RefCell::new(Vec::new());
    let heads = |i: usize| {
        looked.borrow_mut().push(i);
        queues[i]
    };
    let hinted = Search {
        hint: Some(5),
        ..Search::flat(6)
    };
    let mut rr = 0;
    assert_eq!(
        steal_round(POLICY, NOW, Some(0), 6, 1, &mut rr, hinted, &heads),
        Some(5)
    );
    assert_eq!(*looked.borrow(), vec![5], "the hinted queue, and only it");
    looked.borrow_mut().clear();
    let throttled = Search {
        throttled: true,
        ..Search::flat(6)
    };
    assert_eq!(
        steal_round(POLICY, NOW, Some(0), 6, 5, &mut 0, throttled, &heads),
        None
    );
    assert_eq!(*looked.borrow(), vec![1], "one queue, the nearest");
    looked.borrow_mut().clear();
    // a hint is never looked at twice, and never its own queue
    let own = Search {
        hint: Some(0),
        ..Search::flat(6)
    };
    steal_round(POLICY, NOW, Some(0), 6, 5, &mut 0, own, &heads);
    assert_eq!(*looked.borrow(), vec![1, 2, 3, 4, 5]);
}

/// Probes per decision on simulated machines of 8, 64 and 256 CPUs (2
/// nodes of 2-4 LLCs, SMT 2): the nearest queues first, never more than
/// MAX_PROBES, whatever the machine; with a stealable runner in the
/// searcher's LLC and one on the other node, the near one is taken.
#[test]
fn searches_are_bounded_and_nearest_first_on_big_machines() {
    use crate::model::locality::{near_order, tests::machine};
    for (llcs, cores, cpus) in [(2, 1, 8), (4, 4, 64), (4, 16, 256)] {
        let m = machine(2, llcs, cores, 2);
        assert_eq!(m.cpus.len(), cpus);
        let all: Vec<usize> = (0..cpus).collect();
        let (order, spans) = near_order(&m, &all);
        let me_cpu = order[0];
        let llc_of = |pos: usize| m.cpu(order[pos]).unwrap().llc;
        let node_of = |pos: usize| m.cpu(order[pos]).unwrap().node;
        let late = head(NOW + 10 * MS, NOW - 10 * MS);
        for rot in 0..8u32 {
            let looked = std::cell::RefCell::new(Vec::new());
            let heads = |i: usize| {
                if i != 0 {
                    looked.borrow_mut().push(i);
                }
                None
            };
            let search = Search {
                span: spans[me_cpu],
                ..Search::default()
            };
            let mut rr = rot;
            let p = poll(POLICY, NOW, 0, cpus, &mut rr, search, None, &heads);
            assert_eq!(p, Pick::Nothing);
            let looked = looked.into_inner();
            assert!(
                looked.len() <= MAX_PROBES && !looked.is_empty(),
                "{cpus}: {looked:?}"
            );
            // nearest first: no probe farther than a later one
            let dist = |pos: usize| {
                if llc_of(pos) == llc_of(0) {
                    0
                } else if node_of(pos) == node_of(0) {
                    1
                } else {
                    2
                }
            };
            assert!(
                looked.windows(2).all(|w| dist(w[0]) <= dist(w[1])),
                "{looked:?}"
            );
        }
        // one late runner on the far node, one in the same node: the near one
        let far = (0..cpus).find(|&p| node_of(p) != node_of(0)).unwrap();
        let near = (1..cpus).find(|&p| node_of(p) == node_of(0)).unwrap();
        let heads = |i: usize| if i == far || i == near { late } else { None };
        let search = Search {
            span: spans[me_cpu],
            ..Search::default()
        };
        assert_eq!(
            poll(POLICY, NOW, 0, cpus, &mut 0, search, None, &heads),
            Pick::Steal(near),
            "{cpus} CPUs"
        );
    }
}

#[test]
fn a_non_tick_cpu_takes_only_late_runners() {
    let fresh = head(NOW + 45 * MS, NOW - MS);
    let late = head(NOW + 40 * MS, NOW - 10 * MS);
    let predicted_late = behind(fresh, 20 * MS);
    let mut rr = 0;
    assert_eq!(
        poll_spill(POLICY, NOW, 2, &mut rr, Search::flat(2), late, &|_| None),
        Pick::Global
    );
    assert_eq!(
        poll_spill(POLICY, NOW, 2, &mut rr, Search::flat(2), fresh, &|_| fresh),
        Pick::Nothing,
        "nobody is late: other work runs"
    );
    let queues = [None, predicted_late];
    let p = poll_spill(POLICY, NOW, 2, &mut rr, Search::flat(2), fresh, &|i| {
        queues[i]
    });
    assert_eq!(p, Pick::Steal(1));
}

#[test]
fn a_runner_waking_many_times_a_tick_frees_its_cpu_after_its_burst() {
    // one wake-up a tick: its burst is its tick, the rest of its MSPT
    assert_eq!(runner_left(8 * MS, 12 * MS, 4 * MS), 8 * MS);
    // a 1 kHz waker: 40 us a burst, 30 us of it run, 2 ms of its tick left
    assert_eq!(runner_left(2 * MS, 40_000, 30_000), 10_000);
    // past its usual burst: free any moment
    assert_eq!(runner_left(2 * MS, 40_000, 50_000), 0);
    // no burst measured yet: its MSPT alone
    assert_eq!(runner_left(3 * MS, 0, 0), 3 * MS);
    // and what a wait at home makes of it
    let running = |left| Some(Running { key: NOW, left });
    assert_eq!(
        wait_at_home(
            NOW + 50 * MS,
            running(runner_left(2 * MS, 40_000, 30_000)),
            &[]
        ),
        10_000
    );
}

#[test]
fn the_wait_at_home_counts_only_runners_that_go_first() {
    let running = Some(Running {
        key: NOW + 10 * MS,
        left: 7 * MS,
    });
    // a later deadline: waits for the rest of the runner and the queue ahead
    let queued = [(NOW + 20 * MS, 5 * MS), (NOW + 60 * MS, 9 * MS)];
    assert_eq!(wait_at_home(NOW + 50 * MS, running, &queued), 12 * MS);
    // an earlier deadline preempts it, and nobody queued goes first
    assert_eq!(wait_at_home(NOW + 5 * MS, running, &queued), 0);
    // an unknown MSPT still counts as somebody ahead
    assert_eq!(wait_at_home(NOW + 50 * MS, None, &[(NOW, 0)]), 1);
    // at most MAX_PROBES queued runners are looked at
    let many = vec![(NOW, MS); 100];
    assert_eq!(
        wait_at_home(NOW + 50 * MS, None, &many),
        MAX_PROBES as u64 * MS
    );
}

#[test]
fn a_runner_that_would_wait_at_home_starts_elsewhere_at_once() {
    let waits = |wait| HomeState {
        wait,
        runs_runner: true,
    };
    // behind another runner at home: an idle CPU, at once
    assert_eq!(
        place(POLICY, NOW, NOW, waits(2 * MS), Some(3), Some(2), false),
        Place::Idle(3)
    );
    assert_eq!(
        place(POLICY, NOW, NOW, waits(1), Some(3), None, false),
        Place::Idle(3)
    );
    // it would preempt a runner at home: an idle CPU instead
    assert_eq!(
        place(POLICY, NOW, NOW, waits(0), Some(3), None, false),
        Place::Idle(3)
    );
    // ... and with no idle CPU the EDF preemption at home
    assert_eq!(
        place(POLICY, NOW, NOW, waits(0), None, Some(2), false),
        Place::Home
    );
    // predicted to start late at home: other work is preempted for it
    assert_eq!(
        place(POLICY, NOW, NOW, waits(20 * MS), None, Some(2), false),
        Place::Preempt(2)
    );
    // within the threshold, other work keeps its CPU
    assert_eq!(
        place(POLICY, NOW, NOW, waits(2 * MS), None, Some(2), false),
        Place::Home
    );
    assert_eq!(
        place(POLICY, NOW, NOW, waits(20 * MS), None, None, false),
        Place::Home
    );
    // home free (idle or other work) and nobody queued: home and its cache
    let free = HomeState {
        wait: 0,
        runs_runner: false,
    };
    assert_eq!(
        place(POLICY, NOW, NOW, free, Some(3), Some(2), false),
        Place::Home
    );
    // overrun work predicted late: an idle CPU, but no preemption
    assert_eq!(
        place(POLICY, NOW, NOW, waits(20 * MS), None, Some(2), true),
        Place::Home
    );
    assert_eq!(
        place(POLICY, NOW, NOW, waits(20 * MS), Some(3), Some(2), true),
        Place::Idle(3)
    );
}

#[test]
fn a_spill_over_takes_an_idle_cpu_then_other_work_in_the_home_node_first() {
    let busy = HomeState {
        wait: 20 * MS,
        runs_runner: true,
    };
    // late (it waits 20 ms at home): an idle CPU, wherever the nearest is
    assert_eq!(
        place_near_first(POLICY, NOW, NOW, busy, Some(9), Some(2), Some(10), false),
        Place::Idle(9)
    );
    // none idle: other work in the home's node before other work elsewhere
    assert_eq!(
        place_near_first(POLICY, NOW, NOW, busy, None, Some(2), Some(10), false),
        Place::Preempt(2)
    );
    assert_eq!(
        place_near_first(POLICY, NOW, NOW, busy, None, None, Some(10), false),
        Place::Preempt(10)
    );
    // not late: idle CPUs only
    let short = HomeState {
        wait: MS,
        runs_runner: true,
    };
    assert_eq!(
        place_near_first(POLICY, NOW, NOW, short, None, Some(2), Some(10), false),
        Place::Home
    );
    // overrun work preempts nobody, near or far
    assert_eq!(
        place_near_first(POLICY, NOW, NOW, busy, None, Some(2), Some(10), true),
        Place::Home
    );
}

#[test]
fn homes_move_only_to_tick_cpus_of_the_group_in_their_node() {
    // the stealer homes none, the home two: the move evens them out
    let evens = (0, 2);
    assert_eq!(moved_home(1, 2, true, true, true, evens), 2);
    assert_eq!(
        moved_home(1, 3, false, true, true, evens),
        1,
        "non-tick CPU"
    );
    assert_eq!(
        moved_home(1, 2, true, false, true, evens),
        1,
        "outside the group's cpus"
    );
    assert_eq!(
        moved_home(1, 2, true, true, false, evens),
        1,
        "on another node"
    );
    assert_eq!(moved_home(1, 1, true, true, true, evens), 1);
    assert_eq!(
        moved_home(1, 2, true, true, true, (0, 1)),
        1,
        "alone at home"
    );
}

#[test]
fn replenishment_keeps_the_grid_and_lands_after_now() {
    let p = 50 * MS;
    // at the deadline: one period later
    assert_eq!(replenish(0, p, p, p), (p, 2 * p));
    // 2.5 periods past it: whole periods, first deadline after now
    assert_eq!(replenish(0, p, p, p + 125 * MS), (3 * p, 4 * p));
    // a deadline shorter than the period keeps its offset
    assert_eq!(replenish(0, 20 * MS, p, 25 * MS), (p, p + 20 * MS));
    // a deadline of two periods (a server that catches up): the next
    // tick is the earliest on the grid still due ahead, the one
    // that began a period ago
    assert_eq!(replenish(0, 2 * p, p, 2 * p), (p, 3 * p));
    assert_eq!(replenish(0, 2 * p, p, 2 * p + 10 * MS), (p, 3 * p));
    for now_past in (0..500).map(|i| i * 777_777) {
        let (s, d) = replenish(0, p, p, p + now_past);
        assert!(d > p + now_past && d - (p + now_past) <= p);
        assert_eq!(d - s, p);
        assert_eq!(s % p, 0);
    }
}

/// Six runners of 20 ms woken together on 4 CPUs (the heavy scenario):
/// with plain EDF the two that queued behind others end at 40 ms; keys
/// that grow with the CPU time had and a quantum let them take turns,
/// and the last one ends near 120 / 4 = 30 ms.
#[test]
fn stacked_runners_take_turns_and_end_sooner() {
    let (n, cpus, work, deadline) = (6, 4, 20 * MS, 50 * MS);
    let last_end = |rotate: bool| {
        let mut ran = vec![0u64; n];
        let mut end = vec![0u64; n];
        let mut on: Vec<usize> = (0..cpus).collect();
        let mut now = 0;
        while end.contains(&0) {
            // each CPU's runner runs one quantum (or to its end)
            let step = on
                .iter()
                .map(|&i| (work - ran[i]).min(RUNNER_QUANTUM_NS))
                .min()
                .unwrap();
            now += step;
            for &i in &on {
                ran[i] += step;
                if ran[i] == work {
                    end[i] = now;
                }
            }
            let key = |i: usize| queue_key(deadline, ran[i]);
            let waiting: Vec<usize> = (0..n).filter(|i| end[*i] == 0 && !on.contains(i)).collect();
            let mut next = Vec::new();
            for &i in &on {
                if end[i] != 0 {
                    continue;
                }
                let head = waiting
                    .iter()
                    .filter(|w| !next.contains(*w))
                    .map(|&w| key(w))
                    .min();
                if !rotate || !yields(key(i), RUNNER_QUANTUM_NS, head, None, false) {
                    next.push(i);
                }
            }
            let mut queue: Vec<usize> = waiting
                .into_iter()
                .chain(
                    on.iter()
                        .copied()
                        .filter(|i| end[*i] == 0 && !next.contains(i)),
                )
                .collect();
            queue.sort_by_key(|&i| key(i));
            for i in queue {
                if next.len() < cpus && !next.contains(&i) {
                    next.push(i);
                }
            }
            on = next;
        }
        *end.iter().max().unwrap()
    };
    let (edf, turns) = (last_end(false), last_end(true));
    assert_eq!(edf, 40 * MS);
    assert!(
        turns <= 30 * MS + RUNNER_QUANTUM_NS,
        "last ends at {} ms",
        turns / MS
    );
}

/// The yield rule: never before a quantum; then to an earlier key in
/// the CPU's or the global queue, or to a runner parked in the CPU's
/// local queue (stacked there by a racing spill-over, which no other
/// CPU can take), never to a later key.
#[test]
fn a_runner_yields_after_a_quantum_to_earlier_keys_and_local_waiters() {
    let q = RUNNER_QUANTUM_NS;
    let k = 100 * MS;
    assert!(!yields(k, q - 1, Some(k - MS), Some(k - MS), true));
    assert!(yields(k, q, Some(k - 1), None, false));
    assert!(yields(k, q, None, Some(k - 1), false));
    assert!(yields(k, q, Some(k + MS), None, true));
    assert!(!yields(k, q, Some(k), Some(k + MS), false));
    assert!(!yields(k, 10 * q, None, None, false));
    // a spilled runner on a non-tick CPU takes no turns with its home's queue
    assert!(!yields(k, q, turn_head(false, Some(k - MS)), None, false));
    assert!(yields(k, q, turn_head(true, Some(k - MS)), None, false));
}

/// Three runners that never sleep share one CPU: with the slice ending
/// at the deadline and replenishment, EDF gives each a turn every
/// period or so; without replenishment the oldest deadline would win
/// every slice and the others would wait for ever.
#[test]
fn runners_that_never_sleep_take_turns() {
    let p = 50 * MS;
    let mut d = [p; 3];
    let mut start = [0u64; 3];
    let mut longest_wait = [0u64; 3];
    let mut last_ran = [0u64; 3];
    let mut now = 0u64;
    while now < 60_000 * MS {
        // EDF: the earliest deadline (a tie: the lowest index, FIFO)
        let i = (0..3).min_by_key(|&i| d[i]).unwrap();
        longest_wait[i] = longest_wait[i].max(now - last_ran[i]);
        if d[i] <= now {
            (start[i], d[i]) = replenish(start[i], d[i], p, now);
        }
        now += runner_slice(d[i], now);
        last_ran[i] = now;
        if d[i] <= now {
            (start[i], d[i]) = replenish(start[i], d[i], p, now);
        }
    }
    for w in longest_wait {
        assert!(w <= 3 * p, "a runner waited {} ms", w / MS);
    }
}

/// Every combination of small queue states on 3 and 4 tick CPUs, with
/// affinity (a head that may not run here is invisible) and tick
/// starts later than `now` (a stamp from a CPU ahead): the pick always
/// follows the Affinity scheduler's order, stated as properties rather
/// than expected values.
#[test]
fn exhaustive_order_properties() {
    let deadlines = [NOW - 5 * MS, NOW - MS, NOW, NOW + MS, NOW + 30 * MS];
    let starts = [NOW - 20 * MS, NOW - 3 * MS, NOW - MS, NOW, NOW + MS];
    let aheads = [0, 2 * MS, 20 * MS];
    let mut heads = vec![None];
    for &d in &deadlines {
        for &w in &starts {
            heads.push(head(d, w));
        }
    }
    let mut victims = vec![None];
    for &d in &[NOW - MS, NOW + 30 * MS] {
        for &w in &starts {
            for &a in &aheads {
                victims.push(behind(head(d, w), a));
            }
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
        for nr in [3, 4] {
            for &l in &heads {
                for &g in &heads {
                    for &v in &victims {
                        for allowed in [true, false] {
                            // one candidate queue (the last CPU), the
                            // others empty; `allowed`: may it run here
                            let mut queues = vec![None; nr];
                            queues[0] = l;
                            queues[nr - 1] = v;
                            let seen = |i: usize| {
                                if i == nr - 1 && !allowed {
                                    None
                                } else {
                                    queues[i]
                                }
                            };
                            let mut rr = 0;
                            let pick =
                                poll(policy, NOW, 0, nr, &mut rr, Search::flat(nr), g, &seen);
                            check(policy, l, g, seen(nr - 1), pick, nr);
                            let mut rr = 0;
                            let spill =
                                poll_spill(policy, NOW, nr, &mut rr, Search::flat(nr), g, &seen);
                            check_spill(policy, g, &seen, spill, nr);
                            cases += 2;
                        }
                    }
                }
            }
        }
    }
    assert!(cases > 100_000, "{cases}");
}

fn stealable(h: Option<Head>) -> bool {
    h.is_some_and(|h| head_stealable(h, NOW, POLICY))
}

fn check(policy: Policy, l: Option<Head>, g: Option<Head>, v: Option<Head>, pick: Pick, nr: usize) {
    let od = |h: Option<Head>| h.is_some_and(|h| is_overdue(h, NOW));
    let ctx = format!("nr={nr} l={l:?} g={g:?} v={v:?} -> {pick:?}");
    match pick {
        Pick::Local => {
            let l = l.expect(&ctx);
            if od(g) {
                assert!(od(Some(l)) && l.deadline <= g.unwrap().deadline, "{ctx}");
            }
            if !od(Some(l)) {
                assert!(g.is_none_or(|g| l.deadline <= g.deadline), "{ctx}");
                assert!(
                    stealable(Some(l)) || !looked_at_and_missed(policy, v, nr),
                    "{ctx}"
                );
            }
        }
        Pick::Global => {
            let g = g.expect(&ctx);
            if od(l) {
                assert!(od(Some(g)) && g.deadline < l.unwrap().deadline, "{ctx}");
            }
            if !od(Some(g)) && !od(l) {
                assert!(l.is_none_or(|l| g.deadline < l.deadline), "{ctx}");
                assert!(
                    stealable(l) || !looked_at_and_missed(policy, v, nr),
                    "{ctx}"
                );
            }
        }
        Pick::Steal(i) => {
            assert_eq!(i, nr - 1, "{ctx}");
            assert!(policy.work_stealing && !od(l) && !od(g), "{ctx}");
            assert!(stealable(v) && !stealable(l), "{ctx}");
        }
        Pick::Nothing => {
            assert!(l.is_none() && g.is_none(), "{ctx}");
            // an idle CPU looks at every other queue (nr - 1 <= MAX_PROBES here)
            assert!(!policy.work_stealing || !stealable(v), "{ctx}");
        }
    }
}

/// A busy CPU looks at one candidate, the nearest first: was that the
/// stealable queue, and was it passed over?
fn looked_at_and_missed(policy: Policy, v: Option<Head>, nr: usize) -> bool {
    let first = crate::model::locality::nth_near(nr, Search::flat(nr).span, Some(0), 0, 0);
    policy.work_stealing && first == Some(nr - 1) && stealable(v)
}

/// A non-tick CPU sees every tick CPU's queue (nr <= MAX_PROBES here).
fn check_spill(
    policy: Policy,
    g: Option<Head>,
    seen: &dyn Fn(usize) -> Option<Head>,
    pick: Pick,
    nr: usize,
) {
    let ctx = format!("spill nr={nr} g={g:?} -> {pick:?}");
    let g_late = g.is_some_and(|g| is_stealable(g.tick_start, NOW, 0, 3 * MS));
    let any_stealable = (0..nr).any(|i| stealable(seen(i)));
    match pick {
        Pick::Global => assert!(g_late, "{ctx}"),
        Pick::Steal(i) => {
            assert!(
                !g_late && policy.work_stealing && stealable(seen(i)),
                "{ctx}"
            )
        }
        Pick::Nothing => {
            assert!(
                !g_late && (!policy.work_stealing || !any_stealable),
                "{ctx}"
            )
        }
        Pick::Local => panic!("{ctx}"),
    }
}

#[test]
fn lend_window_ends_the_buffer_before_the_next_wake() {
    let (buffer, slice) = (45 * MS, 5 * MS);
    assert_eq!(lend_window(Some(NOW + 48 * MS), NOW, buffer, slice), 3 * MS);
    assert_eq!(lend_window(Some(NOW + 45 * MS), NOW, buffer, slice), 0);
    assert_eq!(lend_window(Some(NOW + 10 * MS), NOW, buffer, slice), 0);
    // no wake-up ahead (none predicted, or it has passed): a whole slice
    assert_eq!(lend_window(None, NOW, buffer, slice), slice);
    assert_eq!(lend_window(Some(NOW), NOW, buffer, slice), slice);
    assert_eq!(lend_window(Some(NOW - MS), NOW, buffer, slice), slice);
}

#[test]
fn only_lent_work_past_its_window_leaves_the_cpu() {
    let slice = 5 * MS;
    for lent in [false, true] {
        for window in [0, MIN_LEND_NS - 1, MIN_LEND_NS, 3 * MS, 50 * MS] {
            for may_leave in [false, true] {
                for higher in [false, true] {
                    let ctx = format!(
                        "lent={lent} window={window} may_leave={may_leave} higher={higher}"
                    );
                    match keep_prev(lent, window, slice, may_leave, higher) {
                        Kept::Leaves => {
                            assert!(
                                lent && window < MIN_LEND_NS && may_leave && !higher,
                                "{ctx}"
                            )
                        }
                        Kept::Runs(s) if lent && window >= MIN_LEND_NS => {
                            assert_eq!(s, window.min(slice), "{ctx}: clipped to its window")
                        }
                        Kept::Runs(s) => assert_eq!(s, KEEP_SLICE_NS, "{ctx}"),
                    }
                }
            }
        }
    }
}

#[test]
fn a_runner_away_from_a_shared_home_wakes_where_it_slept_if_it_may_run_there() {
    // home 3 shared by two runners, slept on CPU 0
    assert_eq!(
        where_it_slept(3, 2, 0, true, true, None, false),
        Some(Place::Idle(0))
    );
    assert_eq!(
        where_it_slept(3, 2, 0, true, false, Some(Runs::Other), false),
        Some(Place::Preempt(0))
    );
    // a runner runs there: placement decides as before
    assert_eq!(
        where_it_slept(
            3,
            2,
            0,
            true,
            false,
            Some(Runs::Runner { overrun: false }),
            false
        ),
        None
    );
    // alone at its home, or it slept at home, or in another node: home first, as before
    assert_eq!(where_it_slept(3, 1, 0, true, true, None, false), None);
    assert_eq!(where_it_slept(3, 2, 0, false, true, None, false), None);
    assert_eq!(where_it_slept(3, 2, 3, true, true, None, false), None);
    // overrun work preempts nothing, but takes an idle CPU
    assert_eq!(
        where_it_slept(3, 2, 0, true, false, Some(Runs::Other), true),
        None
    );
    assert_eq!(
        where_it_slept(3, 2, 0, true, true, None, true),
        Some(Place::Idle(0))
    );
}

#[test]
fn a_home_moves_to_a_stealer_only_where_that_evens_the_homes_out() {
    assert!(home_moves(0, 2));
    assert!(home_moves(1, 3));
    assert!(!home_moves(0, 1), "a runner alone at its home keeps it");
    assert!(
        !home_moves(1, 2),
        "the stealer's home would be shared instead"
    );
}

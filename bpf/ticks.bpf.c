/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tick model (part of main.bpf.c): the tick a runner's wake-up belongs
 * to on its group's period grid, its deadline or the hint the runner
 * published, the tick a process's threads share, replenishment past a
 * deadline, the queue key, and the MSPT that predicts a tick's CPU time.
 */

static bool has_hint_slot(struct task_struct *p, s32 group)
{
	u32 tid = p->pid;
	struct hint_slot_ref *ref = bpf_map_lookup_elem(&hint_slots, &tid);

	return ref && ref->group == (u32)group;
}

/*
 * The deadline hint a registered runner left for this tick, taken (the slot
 * is cleared: one hint, one tick), in CLOCK_MONOTONIC like clock_now(). A
 * hint more than two periods old (stale: a server that is behind publishes
 * deadlines just past, and the scheduler may see one a period after it was
 * written) or further ahead than
 * HINT_MAX_AHEAD_PERIODS periods (absurd) is ignored: 0.
 */
static u64 take_hint(struct task_struct *p, s32 group, u64 now, struct group_stats *gs)
{
	struct hint_slot_ref *ref;
	u32 tid = p->pid, slot;
	u64 *hint, h, period = group_period(group);
	void *slots;
	s64 ahead;

	ref = bpf_map_lookup_elem(&hint_slots, &tid);
	if (!ref || ref->group != (u32)group)
		return 0;
	slots = bpf_map_lookup_elem(&group_hints, &ref->group);
	if (!slots)
		return 0;
	slot = ref->slot;
	hint = bpf_map_lookup_elem(slots, &slot);
	if (!hint)
		return 0;
	h = *hint;
	if (!h)
		return 0;
	*hint = 0;
	ahead = (s64)(h - now);
	if ((ahead < -(s64)(2 * period) || ahead > (s64)(period * HINT_MAX_AHEAD_PERIODS)) &&
	    !SCX_TICK_BREAK_NOHINTFILTER) {
		if (gs)
			gs->hints_ignored++;
		return 0;
	}
	if (gs)
		gs->hints_used++;
	return h;
}

/*
 * A runner's key in the EDF queues: its deadline plus the CPU time this
 * tick has had (@ran: of the stint in progress). Runners with close
 * deadlines then take turns, a quantum each: the one that ran falls behind
 * the ones that waited, so stacked runners share the CPUs (as McNaughton's
 * schedule does) instead of the last of them ending late, while deadlines
 * further apart than a tick's work keep EDF order. (Less a prediction of
 * the work left, i.e. least laxity, would favour the runners that got the
 * most CPU before: among runners that never sleep, one took 5 x the
 * others' ticks.) Mirrors dispatch::queue_key().
 */
static u64 runner_key(struct task_ctx *tctx, u64 ran)
{
	u64 key;

	if (SCX_TICK_BREAK_FIFO)
		return tctx->tick_start;
	key = tctx->deadline + tctx->tick_runtime + ran;
	/*
	 * Overrun work (replenish()) ranks a period behind on-time work: one
	 * server that is always behind (a lag machine) would otherwise, on its
	 * replenished deadlines, hold CPUs ahead of a neighbour's fresh ticks
	 * for up to a period (beside 3 runners that never sleep, 4 others of
	 * 12 ms missed 50 % of their ticks). It still goes before later
	 * periods' ticks, and overrun runners take turns among themselves.
	 * Mirrors dispatch::overrun_key().
	 */
	if (tctx->overrun && !SCX_TICK_BREAK_NODEMOTE)
		key += group_period(tctx->group);
	return key;
}

/*
 * A runner waking at @now slept long enough since it went to sleep (an
 * eighth of a period) to be no overrun work any more, nor a tick begun at
 * a replenishment. Mirrors dispatch::sleep_ends_overrun(), which says why.
 */
static bool sleep_ends_overrun(struct task_ctx *tctx, u64 now)
{
	if (SCX_TICK_BREAK_OVERRUNSTICKS || !tctx->slept_at)
		return false;
	return elapsed(now, tctx->slept_at) >= group_period(tctx->group) / 8;
}

static u64 queue_key(struct task_ctx *tctx)
{
	return runner_key(tctx, 0);
}

static u64 ewma(u64 avg, u64 sample)
{
	return avg ? (avg * 3 + sample) / 4 : sample;
}

/* The runner's MSPT learns from each tick's CPU time. */
static void learn_mspt(struct task_ctx *tctx)
{
	tctx->mspt = ewma(tctx->mspt, tctx->tick_runtime);
	tctx->tick_runtime = 0;
}

/* The runner's tick is the one at @grid from @start, due at @deadline. */
static void set_tick(struct task_ctx *tctx, u64 start, u64 grid, u64 deadline)
{
	tctx->tick_start = start;
	tctx->grid = grid;
	tctx->deadline = deadline;
	tctx->in_tick = true;
	tctx->started = false;
	tctx->missed = false;
	tctx->stolen = false;
	tctx->overrun = false;
	tctx->replenished = false;
}

static void begin_tick(struct task_ctx *tctx, u64 start, u64 grid, u64 deadline,
		       struct group_stats *gs)
{
	set_tick(tctx, start, grid, deadline);
	count_tick(gs);
}

/* A hint starts a tick at @now with the published deadline. */
static void begin_hinted_tick(struct task_ctx *tctx, u64 now, u64 hint, struct group_stats *gs)
{
	learn_mspt(tctx);
	if (SCX_TICK_BREAK_NOHINTS)
		hint = now + group_deadline(tctx->group);
	begin_tick(tctx, now, now, hint, gs);
}

/* A tick that had @runtime of CPU time had what its ticks usually take. */
static bool done_at(u64 runtime, u64 mspt)
{
	return runtime * 8 >= mspt * 7;
}

static bool tick_done(struct task_ctx *tctx)
{
	return done_at(tctx->tick_runtime, tctx->mspt);
}

/*
 * A thread's wake-up finds the work of its tick done: it had its usual CPU
 * time, or the tick began at a replenishment (the CPU time since was the
 * late tick's; the wake-up that follows its sleep begins new work). Kept
 * going, a replenished tick took the next on-time wake-up for its own, and
 * a tick that woke late (an emulated timer fired 34 ms late) passed its
 * deadline's offset on to every replenished tick after it: 24 misses in a
 * row where the server kept its ticks (vm/stats_follow_the_period_grid).
 */
static bool wake_done(struct task_ctx *tctx)
{
	return tick_done(tctx) || tctx->replenished;
}

/*
 * The tick a wake-up at @now belongs to, from the group's period grid
 * (mirrors dispatch::wake(), which says why): 0 if it continues the tick
 * in progress (a runner blocked mid-tick keeps its deadline), else where
 * the next tick starts on the grid, also in @grid.
 */
static bool grid_tick_at(u64 tick_grid, u64 period, u64 now, bool done, u64 *grid)
{
	u64 point, d;

	if (period < MIN_RUNNER_SLICE_NS)
		period = MIN_RUNNER_SLICE_NS;
	*grid = now;
	if (!tick_grid || SCX_TICK_BREAK_WAKETICKS)
		return true;
	if (time_before(now, tick_grid))
		return false;
	d = now - tick_grid;
	if (d < period / 2 || (d < period - period / 8 && !done))
		return false;
	/* the grid point at or before the wake-up, or the next one: early */
	point = tick_grid + (d + period / 8) / period * period;
	if (d < period)
		point = tick_grid + period;
	/* the phase moves an eighth of the way to the wake-up */
	if (time_before(now, point))
		*grid = point - (point - now) / 8;
	else
		*grid = point + (now - point) / 8;
	return true;
}

/*
 * A thread's wake-up at @now: as grid_tick_at(), except that a guessed
 * phase (tctx->grid_guess: the first wake-up that put the thread on the
 * grid, at a latch or barrier of its server's start-up, not at a tick)
 * gives way to the next wake-up a quarter period or more after it.
 * Mirrors dispatch::thread_wake(), which says why.
 */
static bool grid_tick(struct task_ctx *tctx, u64 now, bool done, u64 *grid)
{
	u64 period = group_period(tctx->group);

	if (period < MIN_RUNNER_SLICE_NS)
		period = MIN_RUNNER_SLICE_NS;
	if (tctx->grid_guess && tctx->grid && !time_before(now, tctx->grid) &&
	    now - tctx->grid >= period / 4) {
		*grid = now;
		return true;
	}
	return grid_tick_at(tctx->grid, period, now, done, grid);
}

/*
 * The deadline of a tick that starts at @now, @grid on the grid: relative
 * to its grid point when it starts early (a tick that started at a wake-up
 * before its grid point, with an earlier deadline, became a late one),
 * never earlier than the wake-up's own. Mirrors dispatch::wake().
 */
static u64 tick_deadline(s32 group, u64 now, u64 grid)
{
	return (time_after(grid, now) ? grid : now) + group_deadline(group);
}

/*
 * The EDF key a runner waking at @now would have, without a hint: the tick
 * in progress keeps its key (deadline plus the CPU time it had), a new tick
 * has had no CPU time yet.
 */
static u64 wake_key(struct task_ctx *tctx, u64 now)
{
	u64 grid;

	if (tctx->in_tick || !grid_tick(tctx, now, wake_done(tctx), &grid))
		return runner_key(tctx, 0);
	return now + group_deadline(tctx->group);
}

/*
 * A tick starts (a wake-up outside the tick in progress, a runnable task
 * that becomes a runner, a new thread) at @now, @grid on the grid.
 */
static void start_tick(struct task_struct *p, struct task_ctx *tctx, u64 now, u64 grid)
{
	struct group_stats *gs = lookup_group_stats(tctx->group);
	u64 deadline, hint;

	learn_mspt(tctx);
	hint = take_hint(p, tctx->group, now, gs);
	if (hint)
		grid = now;
	deadline = hint ?: tick_deadline(tctx->group, now, grid);
	begin_tick(tctx, now, grid, deadline, gs);
}

/*
 * The process's tick moves from the one at @from to a new one at @grid
 * with @deadline: counted once, by the thread whose compare-and-swap wins.
 */
static bool proc_tick_begin(struct proc_tick *pt, u64 from, u64 grid, u64 deadline,
			    struct group_stats *gs)
{
	/*
	 * One writer at a time: a start from @from only once the start that
	 * made it has written its deadline, so no two interleave their writes.
	 */
	if (READ_ONCE(pt->deadline_grid) != from)
		return false;
	if (__sync_val_compare_and_swap(&pt->grid, from, grid) != from)
		return false; /* another thread of the process started it */
	WRITE_ONCE(pt->deadline, deadline);
	smp_wmb();
	WRITE_ONCE(pt->deadline_grid, grid);
	count_tick(gs);
	return true;
}

/*
 * The process's tick in progress: its grid point in @grid and, unless a
 * start on another CPU is writing it (false), its deadline in @deadline.
 * Read in the order proc_tick_begin() writes, and checked again after:
 * two threads waking together for a step both started it, and the one
 * that lost read the new deadline_grid with the old deadline, a tick due
 * at once; its replenishment carried that deadline a whole period on, and
 * every later step joined a tick due as it began (58-60 misses for none,
 * in 2 of 78 probe runs, records/probes/process-false-misses-2026-11-27/).
 */
static bool proc_tick_read(struct proc_tick *pt, u64 *grid, u64 *deadline)
{
	u64 g = READ_ONCE(pt->grid), dg;

	smp_rmb();
	dg = READ_ONCE(pt->deadline_grid);
	smp_rmb();
	*deadline = READ_ONCE(pt->deadline);
	smp_rmb();
	*grid = g;
	return dg == g && READ_ONCE(pt->grid) == g;
}

/*
 * A process's tick that a wake-up starts at @now, the one before it
 * started at @prev, is a late step: it came more than 1.5 periods after
 * the one before, as the servers count their own late steps (minetest's
 * and OpenTTD's logs). Returns the latest on-time start, 0 if on time.
 * Counted as a miss of the tick it starts (account_late_step()): a step
 * whose wake-up came late (the timer it slept on fired late, its server
 * ran behind) then works to a deadline of its own and ends in time, so
 * only its start shows it (minetest: 0.08 misses per late step without
 * this). From the step before, not the grid: minetest stepped every 60
 * ms on a 50 ms grid, whose phase follows the steps an eighth at a time,
 * and measured from the grid 5 x its late steps were counted. Only a step
 * that ends a quiet spell of the process that began by the next step's
 * time (@quiet_from). Mirrors dispatch::late_step().
 */
static u64 late_step(u64 prev, u64 quiet_from, u64 period, u64 now)
{
	u64 limit = prev + period + period / 2;

	if (!prev || !time_after(now, limit) || SCX_TICK_BREAK_NOLATESTEPS)
		return 0;
	/*
	 * Busy past the next step's time (a long step, or catch-up steps
	 * back to back without a sleep, as OpenTTD runs them: unseen, the
	 * wake-up after them looked 1.5 periods after the step before, 32
	 * of 196 misses in a probe): its lateness is the server's own, a
	 * miss when past its deadline.
	 */
	if (time_after(quiet_from, prev + period))
		return 0;
	return limit;
}

/*
 * The thread works for its process's tick from @start: its deadline, and
 * its own CPU time in it from zero when it is a tick it had not joined.
 * @deadline: its own, if the tick's is not written yet. @woke: it joins at
 * a wake-up, so the tick before ended in a sleep: a whole step's CPU time
 * when that tick began at a wake-up too (step_cpu, proc_roll_over()).
 */
static void proc_tick_join(struct task_ctx *tctx, struct proc_tick *pt, u64 start, u64 deadline,
			   bool woke)
{
	u64 grid, due;

	if (proc_tick_read(pt, &grid, &due) && !SCX_TICK_BREAK_NOINHERIT)
		deadline = due;
	if (grid != tctx->grid || !tctx->in_tick) {
		if (grid != tctx->grid) {
			/* dispatch::ProcessTick::learn_step_cpu() */
			if (woke && tctx->step_woke)
				tctx->step_cpu = ewma(tctx->step_cpu, tctx->tick_runtime);
			tctx->step_woke = woke;
			learn_mspt(tctx);
			tctx->started = false;
			tctx->missed = false;
			tctx->stolen = false;
			tctx->overrun = false;
			tctx->replenished = false;
		}
		tctx->grid = grid;
	}
	tctx->deadline = deadline;
	tctx->in_tick = true;
	tctx->tick_start = start;
}

/*
 * @tctx joins its process's tick in progress at @now, or, with none in
 * progress (none yet, or past its deadline), has a tick of its own off the
 * grid, not counted: a helper waking between steps, a new thread (a
 * server's threads start at start-up, its steps later: a grid set at
 * start-up gave the first ticks early deadlines). Mirrors
 * dispatch::ProcessTick::join().
 */
static void proc_join(struct task_ctx *tctx, struct proc_tick *pt, u64 now)
{
	u64 deadline = now + group_deadline(tctx->group), grid, due;

	if (proc_tick_read(pt, &grid, &due) && grid && time_before(now, due)) {
		proc_tick_join(tctx, pt, now, deadline, true);
		return;
	}
	learn_mspt(tctx);
	set_tick(tctx, now, 0, deadline);
}

/*
 * A thread @p of its process tick @pt is awake from @now on.
 * Returns whether it woke the process after a quarter period or more
 * asleep in all: between the steps of a tick server (its step is a busy
 * spell of its threads; a wake-up blocked mid-step is short, or another
 * thread is busy).
 */
static bool proc_awake(struct task_struct *p, struct task_ctx *tctx, struct proc_tick *pt, u64 now)
{
	if (tctx->proc_key)
		return false; /* counted already */
	tctx->proc_key = proc_tick_key(p, tctx->group);
	if (__sync_fetch_and_add(&pt->busy, 1) > 0)
		return false;
	return elapsed(now, pt->idle_since) >= group_period(tctx->group) / 4;
}

/*
 * Is @p, waking at @now, a helper of its process's step: a thread whose
 * usual CPU time per tick is under an eighth of the heaviest thread's (a
 * main thread's housekeeping, a connection thread's send, a clock)?
 * Helpers join the tick in progress, with its deadline, but neither start
 * a tick nor end the quiet spell between steps: minetest's main and
 * connection threads wake about every 50 ms on clocks of their own beside
 * a step loop that ran every 60 ms in a loaded guest, and their wake-ups
 * started ticks too: 1.22 ticks per step. A helper's tick counts no miss
 * and starts no tick when it replenishes (one that woke just before the
 * deadline inherits a spent one; a step whose helper is late ends late in
 * a stepping thread, which counts it). The heaviest thread is noted as it
 * wakes; not seen for 4 periods (paused, exited), the next thread to wake
 * takes its place. Mirrors dispatch::ProcessTick::helper().
 */
static bool proc_helper(struct task_struct *p, struct task_ctx *tctx, struct proc_tick *pt, u64 now)
{
	u32 tid = p->pid;

	if (tid == pt->heavy_tid || tctx->mspt >= pt->heavy ||
	    elapsed(now, pt->heavy_at) > 4 * group_period(tctx->group)) {
		pt->heavy = tctx->mspt;
		pt->heavy_tid = tid;
		pt->heavy_at = now;
		tctx->helper = false;
	} else {
		tctx->helper = tctx->mspt * 8 < pt->heavy && !SCX_TICK_BREAK_NOHELPERS;
	}
	return tctx->helper;
}

/* A thread counted busy by proc_awake() goes to sleep at @now. */
static void proc_asleep(struct task_ctx *tctx, u64 now)
{
	struct proc_tick *pt = bpf_map_lookup_elem(&proc_ticks, &tctx->proc_key);

	tctx->proc_key = 0;
	if (pt && __sync_fetch_and_sub(&pt->busy, 1) == 1)
		pt->idle_since = now;
}

/*
 * The process woke after a quiet spell at @now, @from the grid of its
 * tick in progress: its next step starts here. Within a quarter period of
 * a grid point (clocks read on different CPUs, a helper that wakes just
 * before the clock, a timer the emulated guest fired 9 ms late) the phase
 * moves an eighth of the way, as grid_tick_at() moves it; farther off the
 * grid was wrong (set at a start-up wake-up, or the server changed its
 * phase) and the step sets it.
 */
static u64 step_grid(u64 from, u64 period, u64 now)
{
	u64 point = from + (now - from + period / 2) / period * period;

	if (time_before(now, point))
		return point - now <= period / 4 ? point - (point - now) / 8 : now;
	return now - point <= period / 4 ? point + (now - point) / 8 : now;
}

/*
 * A thread of a tick = "process" group wakes (or becomes a runner): the
 * process's step and grid decide. A wake-up that ends a quiet spell of
 * the whole process (@fresh, proc_awake()) at least an eighth of a period
 * into its tick starts the next (the server's steps set the phase: a grid
 * guessed at a start-up wake-up and moved an eighth per tick kept the
 * process's deadlines up to 30 ms off its steps for a second); any other
 * starts one only near the next grid point or later, as grid_tick() does
 * for a thread whose work is not done: CPU time says nothing of a step's
 * end here (the process's in all took the last thread's mid-step wake-up
 * for the next step, and a thread's own part, learnt from ticks split
 * that way, did too). It joins the
 * tick in progress or starts the next: its start in @grid (0: joins or
 * continues). Returns late_step()'s latest on-time start of a tick it
 * started late, else 0. Mirrors dispatch::ProcessTick::wake().
 */
static __always_inline u64 proc_wake(struct task_ctx *tctx, struct proc_tick *pt, u64 now,
				     bool fresh, u64 *grid)
{
	u64 from = pt->grid, prev = pt->started, quiet_from = pt->idle_since;
	u64 deadline = now + group_deadline(tctx->group);
	u64 period = group_period(tctx->group), late = 0;
	bool starts;

	if (period < MIN_RUNNER_SLICE_NS)
		period = MIN_RUNNER_SLICE_NS;
	if (fresh && from && !time_before(now, from) && now - from >= period / 8 &&
	    !SCX_TICK_BREAK_NOSTEPS) {
		*grid = step_grid(from, period, now);
		starts = true;
	} else {
		/*
		 * Blocked part-way through its own work for an earlier tick of
		 * the process (another thread started the next): it keeps that
		 * tick and its deadline, as a thread-ticked runner does (its
		 * miss counts).
		 */
		if (tctx->grid && tctx->grid != from && !tick_done(tctx) &&
		    !grid_tick_at(tctx->grid, period, now, false, grid)) {
			tctx->in_tick = true;
			tctx->tick_start = now;
			*grid = 0;
			return 0;
		}
		/* not a step's start: near the next grid point, or later */
		starts = grid_tick_at(from, period, now, false, grid);
	}
	if (starts) {
		deadline = tick_deadline(tctx->group, now, *grid);
		if (proc_tick_begin(pt, from, *grid, deadline, lookup_group_stats(tctx->group))) {
			if (fresh)
				late = late_step(prev, quiet_from, period, now);
			pt->started = now;
		}
	} else {
		*grid = 0;
	}
	proc_tick_join(tctx, pt, now, deadline, true);
	return late;
}

/* CPU time a runner had in its tick. */
static void add_runtime(struct task_ctx *tctx, u64 ns)
{
	tctx->tick_runtime += ns;
	tctx->burst_ran += ns;
}

/* A runner goes to sleep: its burst ends. */
static void end_burst(struct task_ctx *tctx)
{
	tctx->burst = tctx->burst ? (tctx->burst * 3 + tctx->burst_ran) / 4 : tctx->burst_ran;
	tctx->burst_ran = 0;
}

/*
 * Predicted CPU time a runner still needs before its CPU is free: what is
 * left of its tick's usual CPU time (@tick_left, from its MSPT), or the
 * rest of its usual burst if that ends first. A thread that wakes many
 * times a tick (a 1 kHz clock or network thread in the tick group) sleeps
 * again long before its tick's CPU time is used up: sized by its MSPT, a
 * runner waking beside it saw a wait of a millisecond or more at home and
 * went to another CPU. Mirrors dispatch::runner_left().
 */
static u64 runner_left(struct task_ctx *tctx, u64 tick_left)
{
	u64 burst = tctx->burst > tctx->burst_ran ? tctx->burst - tctx->burst_ran : 0;

	return tctx->burst && burst < tick_left ? burst : tick_left;
}

/*
 * A thread of a process tick still at work at @now, past the next grid
 * point and before its deadline, with a step's usual CPU time spent in the
 * tick (@ran on the CPU since last counted; usual: step_cpu, learnt only
 * from steps that began at a wake-up and ended in a sleep): the tick rolls
 * over into the next one, counted, due a deadline after that grid point,
 * and the one before ends in time. A server that runs late steps back to
 * back to catch up (OpenTTD) runs several steps in one busy spell: as one
 * tick it ended past its deadline (4.96 misses per late tick the server
 * logged) and ticks/s read 0.84-0.96 of the server's; rolled over once per
 * spell, a catch-up of 10-25 periods (a tick costs 25 ms of 30 in a loaded
 * guest) was still a miss every period after the first (5.44 per late
 * tick). A process that never sleeps has no such step and never rolls
 * over: it is missed every period, as the grid says. Only in a group whose
 * deadline is longer than its period. Seen at each scheduler tick
 * (ops.tick). Returns whether it rolled over. Mirrors
 * dispatch::ProcessTick::roll_over().
 */
static bool proc_roll_over(struct task_struct *p, struct task_ctx *tctx, u64 now, u64 ran)
{
	u64 period = group_period(tctx->group), next, deadline, prev, late = 0;
	struct proc_tick *pt;
	struct decision *d;
	bool rolled;

	/*
	 * Only a group whose deadline is past the next grid point: with a
	 * deadline of one period, a tick that began at a wake-up after its
	 * grid point is due just after the next one, and rolling over there
	 * made the process case of vm/stats_follow_the_period_grid count 54-61
	 * misses for none.
	 */
	if (!tctx->in_tick || tctx->helper || !tctx->grid || group_deadline(tctx->group) <= period)
		return false;
	if (period < MIN_RUNNER_SLICE_NS)
		period = MIN_RUNNER_SLICE_NS;
	next = tctx->grid + period;
	if (time_before(now, next) || !time_before(now, tctx->deadline))
		return false;
	pt = proc_tick_of(p, tctx->group);
	if (!pt || pt->grid != tctx->grid)
		return false;
	d = trace_roll_over_begin(p, tctx, pt, now, tctx->tick_runtime + ran);
	deadline = next + group_deadline(tctx->group);
	rolled = tctx->step_cpu && done_at(tctx->tick_runtime + ran, tctx->step_cpu) &&
		 !SCX_TICK_BREAK_NOROLLOVER &&
		 proc_tick_begin(pt, tctx->grid, next, deadline, lookup_group_stats(tctx->group));
	if (rolled) {
		/*
		 * More than 1.5 periods after the tick before started (the
		 * thread waited for a CPU mid-spell): a late step, as the server
		 * logs it, though the spell's deadlines are kept (no quiet
		 * spell: late_step() from the tick before alone)
		 */
		prev = pt->started;
		pt->started = now;
		add_runtime(tctx, ran);
		proc_tick_join(tctx, pt, now, deadline, false);
		late = late_step(prev, 0, period, now);
		if (late)
			account_late_step(p, tctx, pt, now, late);
	}
	trace_roll_over_end(d, pt, rolled ? next : 0, deadline, late);
	return rolled;
}

/*
 * A runner wakes: it continues the tick in progress (blocked mid-tick on a
 * lock, a condition variable, a receive timeout: same tick, same deadline,
 * not counted again; a hint it published since starts a new one when it
 * runs) or starts the next tick on the grid.
 */
static void wake_tick(struct task_struct *p, struct task_ctx *tctx, u64 now)
{
	u64 grid, before = tctx->grid;
	bool done = wake_done(tctx), guess = tctx->grid_guess;
	struct proc_tick *pt;

	/*
	 * whether this wake-up starts a tick or continues one; select_runner_cpu()
	 * cleared only overrun, since replenished is needed above (wake_done())
	 */
	if (sleep_ends_overrun(tctx, now)) {
		tctx->replenished = false;
		tctx->overrun = false;
	}
	if (tctx->last_wake) {
		u64 interval = elapsed(now, tctx->last_wake);

		tctx->wake_interval = tctx->wake_interval ?
			(tctx->wake_interval * 3 + interval) / 4 : interval;
	}
	tctx->last_wake = now;
	if (has_hint_slot(p, tctx->group)) {
		/* a runner that publishes hints: a new hint is a new tick, nothing else */
		struct group_stats *gs = lookup_group_stats(tctx->group);
		u64 hint = take_hint(p, tctx->group, now, gs);

		if (hint) {
			begin_hinted_tick(tctx, now, hint, gs);
		} else {
			tctx->in_tick = true;
			tctx->tick_start = now;
		}
		return;
	}
	if ((pt = proc_tick_of(p, tctx->group))) {
		struct decision *d = trace_proc_wake_begin(p, tctx, pt, now, tick_done(tctx));
		bool helper = proc_helper(p, tctx, pt, now), fresh = false;
		u64 late = 0;

		grid = 0;
		if (helper) {
			proc_join(tctx, pt, now);
		} else {
			fresh = proc_awake(p, tctx, pt, now);
			late = proc_wake(tctx, pt, now, fresh, &grid);
			if (late)
				account_late_step(p, tctx, pt, now, late);
		}
		trace_proc_wake_end(d, tctx, pt, helper, fresh, grid, late);
		return;
	}
	if (!grid_tick(tctx, now, done, &grid)) {
		tctx->in_tick = true;
		tctx->tick_start = now; /* start lateness and stealing count from here */
		trace_wake(p, tctx, now, before, 0, done, guess);
		return;
	}
	start_tick(p, tctx, now, grid);
	tctx->grid_guess = !before; /* the first grid is a guess */
	trace_wake(p, tctx, now, before, tctx->grid, done, guess);
}

/*
 * Still running or runnable at its deadline: the tick is missed, and the
 * next one starts on the group's period grid, its deadline whole periods
 * later (SCHED_DEADLINE's replenishment), so runners sharing a CPU take
 * turns and none waits unboundedly. A runner that publishes deadline hints
 * starts a new tick only with a new hint; without one its tick goes on and
 * only its scheduling deadline moves. Mirrors dispatch::replenish().
 */
static void replenish(struct task_struct *p, struct task_ctx *tctx, u64 now, bool ran_on)
{
	struct group_stats *gs = lookup_group_stats(tctx->group);
	u64 period = group_period(tctx->group), k, hint;
	/*
	 * Overrun: on a CPU at its deadline a second time without sleeping
	 * (its own work overran a whole period, not a late start), or work
	 * that was overrun already. A tick that only started late and runs
	 * past its deadline once is not: demoted, it would end later still,
	 * and so would the runner's next ticks.
	 */
	bool overrun = tctx->overrun || (ran_on && tctx->replenished);
	struct proc_tick *pt;
	/* a tick off the grid (a new thread's) puts the grid at its start */
	u64 grid = tctx->grid ?: tctx->tick_start;

	account_miss(p, tctx, now);
	if (period < MIN_RUNNER_SLICE_NS)
		period = MIN_RUNNER_SLICE_NS;
	k = 1 + elapsed(now, tctx->deadline) / period;
	if (has_hint_slot(p, tctx->group)) {
		hint = take_hint(p, tctx->group, now, gs);
		if (!hint) {
			tctx->deadline += k * period;
			tctx->overrun = overrun;
			tctx->replenished = true;
			return;
		}
		begin_hinted_tick(tctx, now, hint, gs);
		return; /* a new hint: a fresh tick */
	} else if ((pt = proc_tick_of(p, tctx->group)) && tctx->helper) {
		/* a helper's: its deadline moves on, no tick of the process starts */
		tctx->deadline += k * period;
		tctx->replenished = true;
		return;
	} else if (pt) {
		/* the process's next tick, unless another of its threads moved it on */
		/*
		 * started now, not at its grid point (a period and more ago
		 * after a run of late ticks back to back, as OpenTTD runs
		 * them): the on-time wake-up after the run is no late step
		 */
		if (proc_tick_begin(pt, tctx->grid, grid + k * period, tctx->deadline + k * period, gs))
			pt->started = now;
		proc_tick_join(tctx, pt, grid + k * period, tctx->deadline + k * period, false);
		/*
		 * Not demoted: a thread of a process tick works for the step its
		 * threads share, and demoting one made the step miss where the
		 * server kept its steps (vm/stats_follow_the_period_grid's
		 * process case counted 60 and 121 misses for none).
		 */
		overrun = false;
	} else {
		learn_mspt(tctx);
		begin_tick(tctx, grid + k * period, grid + k * period, tctx->deadline + k * period, gs);
	}
	tctx->overrun = overrun;
	tctx->replenished = true;
}

/*
 * A runner that publishes deadline hints and did not sleep: a new hint seen
 * while it runs ends its tick (a miss if late) and starts the next with the
 * published deadline. Seen at each start and stop on a CPU.
 */
static void take_hint_mid_run(struct task_struct *p, struct task_ctx *tctx, u64 now)
{
	struct group_stats *gs;
	u64 hint;

	if (!tctx->in_tick || !has_hint_slot(p, tctx->group))
		return;
	gs = lookup_group_stats(tctx->group);
	hint = take_hint(p, tctx->group, now, gs);
	if (!hint)
		return;
	account_miss(p, tctx, now);
	begin_hinted_tick(tctx, now, hint, gs);
}

/*
 * The slice ends at the deadline: then the next tick competes again
 * (replenish). Mirrors dispatch::runner_slice().
 */
static u64 runner_slice(struct task_ctx *tctx, u64 now)
{
	u64 slice = elapsed(tctx->deadline, now);

	return slice > MIN_RUNNER_SLICE_NS ? slice : MIN_RUNNER_SLICE_NS;
}

/* A runner has its CPU from @now: what the CPU runs, and its slice. */
static void runner_on_cpu(struct task_struct *p, struct task_ctx *tctx, struct cpu_ctx *cctx,
			  u64 now)
{
	cctx->running_key = queue_key(tctx);
	cctx->running_overrun = tctx->overrun;
	cctx->running_left = runner_left(tctx, tctx->mspt > tctx->tick_runtime ?
						       tctx->mspt - tctx->tick_runtime : 0);
	cctx->running_since = now;
	p->scx.slice = runner_slice(tctx, now);
}

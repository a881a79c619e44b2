/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Placement (part of main.bpf.c): where a runner waits or runs when it
 * wakes (ops.select_cpu) or is queued (ops.enqueue): its home, spill-over
 * to an idle CPU or onto other work, and the kicks that make a CPU look
 * at it.
 */

/*
 * Home CPU of a runner if it has a usable one, else -1. Userspace gives the
 * first home; after that the home moves with the runner where that evens
 * the homes out (tick_running(), homes_here()); counted per CPU (set_home()).
 */
static s32 runner_home(struct task_struct *p, struct task_ctx *tctx)
{
	u32 tid = p->pid;
	s32 *set = bpf_map_lookup_elem(&home_cpus, &tid);
	s32 home;

	if (set && *set + 1 != tctx->home_seen) {
		tctx->home_seen = *set + 1;
		set_home(tctx, *set);
	} else if (tctx->home_seen && !tctx->homed_on) {
		set_home(tctx, tctx->home);
	}
	home = tctx->home;
	if (!tctx->home_seen || tick_index(home) < 0 || !bpf_cpumask_test_cpu(home, p->cpus_ptr))
		return -1;
	return home;
}

/*
 * A waking runner preempts other work, and a runner whose key is later by
 * more than a quantum (a clearly later deadline). Keys closer than that
 * take turns in ops.tick instead: preempting at once would hand the CPU
 * back and forth between runners in phase, a few microseconds each.
 * Mirrors dispatch::preempts().
 */
static bool preempts(u64 key, bool running_tick, u64 running_key)
{
	if (SCX_TICK_BREAK_FIFO)
		return !running_tick;
	return !running_tick || time_before(key + RUNNER_QUANTUM_NS, running_key);
}

/* May a runner with queue key @key preempt what @cctx's CPU runs now? */
static bool may_preempt(struct cpu_ctx *cctx, u64 key, u64 now)
{
	return !in_share(cctx, now) && preempts(key, cctx->running_tick, cctx->running_key);
}

/*
 * How long a runner with queue key @key would wait on @cpu: the rest of the
 * runner it cannot preempt there, plus the predicted work of the runners
 * queued there with an earlier or equal key (at most MAX_PROBES looked
 * at). Mirrors dispatch::wait_at_home(); a CPU an RT task holds
 * (HELD_WAIT_NS) is not in the model, which knows no other classes.
 */
static u64 wait_at(s32 cpu, u64 key, u64 now)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);
	struct task_struct *q;
	u64 wait = 0;
	u32 n = 0;

	if (!cctx)
		return 0;
	/* a runner re-queued from it, too (tick_cpu_release()): placed elsewhere */
	if (held_by_higher_class(cpu))
		return HELD_WAIT_NS;
	if (in_share(cctx, now))
		wait = elapsed(cctx->share_until, now) ?: 1;
	else if (!preempts(key, cctx->running_tick, cctx->running_key))
		wait = busy_for(cctx, now) ?: 1;
	if (scx_bpf_dsq_nr_queued(cpu) <= 0)
		return wait;
	bpf_for_each(scx_dsq, q, cpu, 0) {
		struct task_ctx *qctx;

		if (time_after(q->scx.dsq_vtime, key) || ++n > MAX_PROBES)
			break;
		qctx = lookup_task_ctx(q);
		/* an unknown MSPT still means somebody goes first */
		wait += qctx && qctx->mspt ? qctx->mspt : 1;
	}
	return wait;
}

static bool home_runs_runner(s32 cpu)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);

	return cctx && cctx->running_tick;
}

/* A runner parked in a CPU's local queue runs: that CPU owes it no turn any more. */
static void unpark(struct task_ctx *tctx)
{
	struct cpu_ctx *pctx;

	if (!tctx->parked_on)
		return;
	pctx = lookup_cpu_ctx(tctx->parked_on - 1);
	if (pctx && pctx->parked)
		__sync_fetch_and_sub(&pctx->parked, 1);
	tctx->parked_on = 0;
}

/*
 * @cpu was given runner @tctx: until it really runs there (tick_running
 * overwrites this), it must not look free to the next placement, or every
 * runner behind would be put on the same CPU's local queue, where nothing
 * can steal it. It is parked there until it runs: if a placement raced
 * with this one and another runner got the CPU first, ops.tick gives the
 * parked one a turn.
 */
static void reserve(s32 cpu, struct task_ctx *tctx, u64 key, u64 now)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);

	if (!cctx)
		return;
	cctx->running_tick = true;
	cctx->running_key = key;
	cctx->running_overrun = tctx->overrun;
	/* it wakes: its tick may be new (wake_tick() runs after this), its burst is */
	cctx->running_left = runner_left(tctx, tctx->mspt);
	cctx->running_since = now;
	/* a runner dequeued from a local queue without running there is parked here now */
	unpark(tctx);
	__sync_fetch_and_add(&cctx->parked, 1);
	tctx->parked_on = cpu + 1;
}

/*
 * Claim an idle CPU for a runner that would wait at @near (its home): @prev,
 * the CPU it slept on, first if it is in @near's node (its cache, and its
 * timer may have woken it already); else the kernel's idle selection near
 * @near, tick CPUs first: it looks at @near's LLC, then its node, then the
 * rest (an idle CPU costs no other task, so one elsewhere goes before
 * preempting other work near home). May return @near itself, idle a moment.
 */
static s32 claim_idle_for(struct task_struct *p, s32 near, s32 prev)
{
	struct bpf_cpumask *tick = tick_cpumask, *other = other_cpumask;
	s32 cpu = -EBUSY;

	if (prev >= 0 && prev != near && node_of(prev) == node_of(near) &&
	    bpf_cpumask_test_cpu(prev, p->cpus_ptr) && scx_bpf_test_and_clear_cpu_idle(prev))
		return prev;
	if (tick)
		cpu = scx_bpf_select_cpu_and(p, near, 0, cast_mask(tick), 0);
	if (cpu < 0 && other && !SCX_TICK_BREAK_NOSPILL)
		cpu = scx_bpf_select_cpu_and(p, near, 0, cast_mask(other), 0);
	return cpu;
}

/*
 * A runner put on another CPU's local queue runs there at once or not at
 * all (SCX_ENQ_IMMED, kernels 7.1 on; 0 before): when an RT task takes
 * that CPU first, wakes there, or preempts it mid-work, the kernel gives it
 * back to ops.enqueue, which places it anew, instead of leaving it behind
 * the RT task (0.8-9 s: vm/rt_hogs_strand_nothing). Runners a CPU takes
 * from a queue itself need none: that CPU is running ours.
 */
static u64 spill_immed(void)
{
	return SCX_TICK_BREAK_RTFREE ? 0 : SCX_ENQ_IMMED;
}

/*
 * Spill-over to an idle CPU near @near, tick CPUs first: @p starts there at
 * once (1). 0: no idle CPU; -1: @near itself is idle, woken (queue @p
 * there). An insert on another CPU's local queue from ops.enqueue ejects the
 * scheduler if @p may not run there (other schedulers were ejected so): the
 * CPU comes from the kernel's idle selection within @p's CPUs, or was
 * tested against them (claim_idle_for(), free_for_runner()); a task whose
 * migration is disabled never reaches ops.enqueue (no
 * SCX_OPS_ENQ_MIGRATION_DISABLED: the kernel queues it where it is); an
 * offline CPU (none is chosen) would fall back to the global queue.
 */
__weak s32 spill_idle(struct task_struct *p __arg_trusted, struct task_ctx *tctx __arg_nonnull, s32 near,
			  u64 enq_flags)
{
	u64 slice = group_deadline(tctx->group);
	s32 cpu = claim_idle_for(p, near, (enq_flags & SCX_ENQ_WAKEUP) ? tctx->wake_prev : -1);

	if (cpu < 0)
		return 0;
	if (cpu == near) {
		/* home itself is idle a moment: wake it, the runner queues there in EDF order */
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		return -1;
	}
	reserve(cpu, tctx, queue_key(tctx), clock_now());
	scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL_ON | cpu, slice, enq_flags | spill_immed());
	scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
	return 1;
}

/*
 * The runner on @cctx's CPU is overrun work that on-time runner @tctx takes
 * the CPU from, as from other work: an overloaded server's runners, never
 * sleeping, sat on every tick CPU, and a neighbour's runner that would
 * wait behind another at home found no CPU to spill to (beside 3 such
 * runners, 4 of 12 ms missed 1-15 % of their ticks, 0 alone). Overrun
 * work ranks a period behind theirs anyway (runner_key()).
 * Mirrors dispatch::spills_onto().
 */
static bool overrun_yields(struct cpu_ctx *cctx, struct task_ctx *tctx)
{
	return cctx->running_overrun && tctx && !tctx->overrun && !SCX_TICK_BREAK_OVERRUNKEEPS;
}

/*
 * @cpu runs other work @p may preempt (or overrun work: overrun_yields()):
 * no share owed or running, and nothing waiting in its local queue, which
 * a runner put at its head would overtake (runners waking there one after
 * another would starve it).
 */
static bool free_for_runner(struct task_struct *p, u32 cpu, u64 now)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);

	if (SCX_TICK_BREAK_NOSPILL && tick_index(cpu) < 0)
		return false;
	/*
	 * A possible CPU that is offline looks free (nothing runs there), and
	 * a runner put in its local queue lands in the global queue instead.
	 */
	if (cpu >= MAX_CPUS || !cpu_online[cpu & (MAX_CPUS - 1)])
		return false;
	if (!cctx || !bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
		return false;
	if (held_by_higher_class(cpu))
		return false;
	if (cctx->running_tick && !overrun_yields(cctx, lookup_task_ctx(p)))
		return false;
	return !in_share(cctx, now) && !other_owed(cpu, cctx, now) &&
	       scx_bpf_dsq_nr_queued(SCX_DSQ_LOCAL_ON | cpu) <= 0;
}

/*
 * May @p start on @cpu now: idle (claimed here), or running what it may
 * preempt (free_for_runner(); *@flags gets SCX_ENQ_PREEMPT)? @overrun work
 * preempts nothing.
 */
static bool starts_now_on(struct task_struct *p, s32 cpu, bool overrun, u64 now, u64 *flags)
{
	if (scx_bpf_test_and_clear_cpu_idle(cpu))
		return true;
	if (overrun || !free_for_runner(p, cpu, now))
		return false;
	*flags = SCX_ENQ_PREEMPT;
	return true;
}

/*
 * The nearest CPU @p may preempt among up to MAX_PROBES * 2 around @near:
 * within @near's node, or (@far) past it, the node's CPUs skipped. Never
 * @here (between two tasks it looks free). -1: none.
 */
static s32 free_near(struct task_struct *p, s32 near, u32 here, u64 now, bool far)
{
	u32 skip = far && node_size(near) ? node_size(near) - 1 : 0, i;
	s32 c;

	bpf_for(i, 0, MAX_PROBES * 2) {
		c = near_cpu(near, here, skip + i);
		if (c < 0 || (!far && node_of(c) != node_of(near)))
			break;
		STAT_INC(probes);
		if (c != (s32)here && free_for_runner(p, c, now))
			return c;
	}
	return -1;
}

/*
 * A CPU near @near running other work that @p may preempt: @self first if
 * given and on @near's node (a wake-up handled there: another CPU would
 * need an IPI, and in a guest the vCPU it wakes may first wait for a host
 * core), else the nearest (locality order: @near's LLC, node, the rest;
 * equally near ones by turns), in @near's node before any elsewhere. Never
 * @near itself (the home, busy with runners), nor this CPU otherwise:
 * between two tasks it looks free, and a runner put at the head of its
 * local queue would overtake the EDF queue for good. -1 when none is free.
 */
static s32 preempt_target(struct task_struct *p, s32 near, s32 self, u64 now)
{
	u32 here = bpf_get_smp_processor_id();
	s32 c;

	if (SCX_TICK_BREAK_NOSTEAL)
		return -1;
	if (self >= 0 && self != near && node_of(self) == node_of(near) && free_for_runner(p, self, now))
		return self;
	c = free_near(p, near, here, now, false);
	return c >= 0 ? c : free_near(p, near, here, now, true);
}

/* Spill-over onto another CPU near @near running other work, which is preempted. */
__weak bool spill_preempt(struct task_struct *p __arg_trusted, struct task_ctx *tctx __arg_nonnull,
			      s32 near, u64 enq_flags)
{
	s32 self = (enq_flags & SCX_ENQ_WAKEUP) ? bpf_get_smp_processor_id() : -1;
	u64 now = clock_now();
	s32 best = preempt_target(p, near, self, now);

	if (best < 0)
		return false;
	reserve(best, tctx, queue_key(tctx), now);
	scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL_ON | best, group_deadline(tctx->group),
			   enq_flags | SCX_ENQ_PREEMPT | spill_immed());
	return true;
}

/*
 * A runner was queued on its home @cpu. If the home can start it now (idle,
 * other work, or a runner with a later deadline) it is made to: a waking
 * runner, or one re-queued by another CPU, preempts. A runner re-queued by
 * its home itself (slice end, preemption) needs no kick: that CPU is
 * rescheduling already. Otherwise the steal timer watches it.
 */
static void kick_home(s32 cpu, struct task_ctx *tctx, u64 now, u64 enq_flags)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);
	bool here = cpu == (s32)bpf_get_smp_processor_id();

	if (!cctx)
		return;
	if (may_preempt(cctx, queue_key(tctx), now) && !held_by_higher_class(cpu)) {
		if (!here || (enq_flags & SCX_ENQ_WAKEUP))
			scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
		return;
	}
	/* armed even so: the runner ahead may run longer than predicted */
	arm_steal_timer(cpu, tctx->tick_start, now);
	if (!here)
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
}

/*
 * A runner was queued on the global queue (no home yet, or the shared queue
 * of --no-work-stealing): wake an idle tick CPU it may run on, or preempt a
 * tick CPU running other work or a runner with a later deadline, among its
 * own CPU and the tick CPUs nearest it (MAX_PROBES; else the global queue's
 * steal timer watches it). Never this
 * CPU when the runner was re-queued by it (slice end, preemption): between
 * two tasks it looks free, and kicking it would preempt the next runner
 * at once, handing the CPU back and forth a few microseconds each.
 */
static void kick_for_global(struct task_struct *p, struct task_ctx *tctx, u64 now, u64 enq_flags)
{
	struct bpf_cpumask *mask = tick_cpumask;
	s32 self = bpf_get_smp_processor_id(), near = scx_bpf_task_cpu(p), cpu;
	u32 own = tick_index(near) >= 0, i;

	if (!mask)
		return;
	cpu = scx_bpf_select_cpu_and(p, near, 0, cast_mask(mask), 0);
	if (cpu >= 0) {
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		return;
	}
	/* the runner's own CPU, then the tick CPUs nearest it: MAX_PROBES at most */
	bpf_for(i, 0, MAX_PROBES) {
		struct cpu_ctx *cctx;

		cpu = own && i == 0 ? near : near_tick_cpu(near, 0, i - own);
		if (cpu < 0)
			break;
		STAT_INC(probes);
		if (cpu == self && !(enq_flags & SCX_ENQ_WAKEUP) && !SCX_TICK_BREAK_SELFKICK)
			continue;
		cctx = lookup_cpu_ctx(cpu);
		if (cctx && bpf_cpumask_test_cpu(cpu, p->cpus_ptr) &&
		    may_preempt(cctx, queue_key(tctx), now)) {
			scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
			return;
		}
	}
	arm_steal_timer(MAX_CPUS, tctx->tick_start, now);
}

static void enqueue_tick(struct task_struct *p, struct task_ctx *tctx, u64 enq_flags)
{
	u64 now = clock_now();
	u64 slice = group_deadline(tctx->group), wait;
	bool must_spill, late;
	s32 home, cpu, spilled;

	if (!tctx->in_tick) {
		struct proc_tick *pt = proc_tick_of(p, tctx->group);

		/*
		 * became a runner while runnable, or a new thread: its tick
		 * starts now, off the grid (its first wake-up starts the
		 * next). A process's thread joins the process's tick: a
		 * thread's start does not set the process's grid.
		 */
		if (!pt) {
			start_tick(p, tctx, now, 0);
		} else {
			if (!proc_helper(p, tctx, pt, now))
				proc_awake(p, tctx, pt, now);
			proc_join(tctx, pt, now);
		}
	}
	tctx->runner = true;
	STAT_INC(decisions);

	/* an affinity without tick CPUs: still a runner, on the CPUs it is allowed */
	if (!can_run_on_tick_cpu(p)) {
		cpu = scx_bpf_task_cpu(p);
		spilled = spill_idle(p, tctx, cpu, enq_flags);
		if (spilled > 0 || (!spilled && spill_preempt(p, tctx, cpu, enq_flags)))
			return;
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL_ON | cpu, slice, enq_flags);
		return;
	}

	/*
	 * --no-work-stealing: one shared EDF queue, served by all tick CPUs,
	 * as in the Affinity scheduler of CanvasMC without work stealing
	 */
	home = work_stealing ? runner_home(p, tctx) : -1;
	if (home < 0) {
		scx_bpf_dsq_insert_vtime(p, DSQ_GLOBAL_TICK, slice, queue_key(tctx), enq_flags);
		kick_for_global(p, tctx, now, enq_flags);
		return;
	}

	/*
	 * Spill-over (mirrors dispatch::place()): behind another runner at home,
	 * or about to preempt one there, an idle CPU takes it at once (runners
	 * in phase have deadlines microseconds apart: preempting would only
	 * stall the other); predicted to start late at home, a CPU running
	 * other work is preempted for it. Otherwise home and its cache.
	 */
	wait = wait_at(home, queue_key(tctx), now);
	must_spill = wait || home_runs_runner(home);
	/* overrun work takes idle CPUs, but no other CPU's work */
	late = !tctx->overrun && is_stealable(tctx, now, wait);
	spilled = must_spill ? spill_idle(p, tctx, home, enq_flags) : 0;
	if (spilled > 0)
		return;
	if (!spilled && late && spill_preempt(p, tctx, home, enq_flags)) {
		count_stolen(tctx);
		return;
	}
	scx_bpf_dsq_insert_vtime(p, home, slice, queue_key(tctx), enq_flags);
	kick_home(home, tctx, now, enq_flags);
}

/*
 * A waking runner's CPU, decided here on the waking CPU (dispatch::place()):
 * home and its cache first; a home that may run it now and has no runner
 * before it takes it straight onto its local queue; a runner that would wait there (or preempt a
 * runner there) spills over to an idle CPU at once, and one predicted to
 * start later than the threshold at home preempts other work on another
 * CPU (this one first): an idle CPU nearest first, then other work in the
 * home's node, then elsewhere. Inserted on that CPU's local queue now, it is
 * queued there by that CPU itself. Placed in ops.enqueue instead, it would
 * be queued on its home and then moved, locking the busy home's run queue,
 * which in an overcommitted guest may wait milliseconds for a preempted
 * vCPU (measured at 8 vCPUs on 2 host cores: 2-4 ms per move). The global
 * queue, and runners re-queued without a wake-up, are placed in enqueue.
 */
static s32 select_runner_cpu(struct task_struct *p, struct task_ctx *tctx, s32 prev_cpu)
{
	s32 home = work_stealing ? runner_home(p, tctx) : -1, cpu;
	u64 now, key, wait, flags = 0;
	bool late, overrun;

	tctx->wake_prev = prev_cpu;
	tctx->spill_stolen = false;
	if (home < 0)
		return prev_cpu;
	STAT_INC(decisions);
	now = clock_now();
	/* before anything reads it (wake_key(), reserve(), overrun_yields()); wake_tick() runs later */
	if (sleep_ends_overrun(tctx, now))
		tctx->overrun = false;
	/* the tick this wake-up starts or continues (ops.runnable takes its hint, if any) */
	key = wake_key(tctx, now);
	wait = wait_at(home, key, now);
	/* overrun work (ranked a period behind) takes idle CPUs but preempts nothing */
	overrun = tctx->overrun && key == runner_key(tctx, 0);
	/*
	 * A runner away from a shared home wakes where it slept if that CPU
	 * may run it now: its timer fired there, so no other CPU is woken for
	 * it (in a guest, a cross-CPU wake-up waits for that vCPU's next host
	 * slice), and it does not trade places with its home's other runner
	 * tick after tick. Mirrors dispatch::where_it_slept().
	 */
	if (!SCX_TICK_BREAK_SHAREDHOME && prev_cpu >= 0 && prev_cpu != home && homed(home) > 1 &&
	    node_of(prev_cpu) == node_of(home) && bpf_cpumask_test_cpu(prev_cpu, p->cpus_ptr) &&
	    starts_now_on(p, prev_cpu, overrun, now, &flags)) {
		cpu = prev_cpu;
		goto place;
	}
	if (!wait && !home_runs_runner(home)) {
		/*
		 * Home idle, or running other work it may preempt, and nothing
		 * in its local queue: the runner goes there as a spill would,
		 * with no ops.enqueue and no ops.dispatch on its wake path.
		 * Queued in the home's EDF queue instead, it waited for that
		 * CPU's dispatch (150-190 us a call emulated) or a steal: p50
		 * start lateness 1.6 x SCHED_FIFO's, 1.1 x this way (probe 9).
		 */
		cpu = home;
		if (!scx_bpf_dsq_nr_queued(SCX_DSQ_LOCAL_ON | home) &&
		    starts_now_on(p, home, overrun, now, &flags))
			goto place;
		return home;
	}
	/* predicted to start late at home (the tick starts now): other work is preempted for it */
	late = starts_late(now, now, wait) && !overrun;
	cpu = claim_idle_for(p, home, prev_cpu);
	if (cpu == home)
		return home;
	if (cpu < 0) {
		/*
		 * None idle. Overrun work at home gives way to an on-time
		 * runner (overrun_yields(); it may preempt what runs there,
		 * wait 0): straight onto the home's local queue, as a free
		 * home above, not through its EDF queue and its dispatch.
		 */
		if (!wait && !overrun && free_for_runner(p, home, now)) {
			cpu = home;
			flags = SCX_ENQ_PREEMPT;
			goto place;
		}
		/* other work is preempted, in the home's node first */
		if (!late)
			return home;
		cpu = preempt_target(p, home, bpf_get_smp_processor_id(), now);
		if (cpu < 0)
			return home;
		flags = SCX_ENQ_PREEMPT;
		tctx->spill_stolen = true;
	}
place:
	tctx->runner = true;
	reserve(cpu, tctx, key, now);
	scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, group_deadline(tctx->group), flags | spill_immed());
	return cpu;
}

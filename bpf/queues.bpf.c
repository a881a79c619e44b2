/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The runners' queues (part of main.bpf.c): what a CPU takes when it polls
 * (the head of its own EDF queue or the global one, or a steal), the steal
 * rule and the steal timers, and the turns of ops.tick.
 */

/* Predicted CPU time the runner now on @cctx's CPU still needs; 0 for other work. */
static u64 busy_for(struct cpu_ctx *cctx, u64 now)
{
	u64 ran;

	if (!cctx->running_tick)
		return 0;
	ran = elapsed(now, cctx->running_since);
	return cctx->running_left > ran ? cctx->running_left - ran : 0;
}

/* A tick started at @start that gets a CPU at @at is late past the steal threshold. */
static bool past_threshold(u64 start, u64 at)
{
	return elapsed(at, start) > steal_threshold_ns;
}

/*
 * Predictive threshold stealing: a tick started at @start whose predicted
 * start on a CPU (@now plus the work @ahead of it) lies more than the
 * threshold after @start is stealable. A tick predicted to start within
 * the threshold never is. Mirrors dispatch::is_stealable().
 */
static bool starts_late(u64 start, u64 now, u64 ahead)
{
	if (SCX_TICK_BREAK_STEAL_EARLY)
		return true;
	return past_threshold(start, now + ahead);
}

static bool is_stealable(struct task_ctx *tctx, u64 now, u64 ahead)
{
	return tctx && starts_late(tctx->tick_start, now, ahead);
}

/*
 * Arm @key's timer (a tick CPU, or MAX_CPUS for the global queue) for the
 * moment the tick that started at @tick_start becomes stealable by lateness
 * alone (past_threshold(), 10 us after). An earlier pending expiry is kept:
 * when it fires it re-arms for the head then queued. CPUs arm a timer at
 * once: the expiry is claimed by compare-and-swap (retried a few times),
 * and the CPU that claimed it starts the timer, then starts it again for
 * any other expiry claimed meanwhile, until what it started last is what
 * is claimed: a claim made after that starts the timer after it. A timer
 * that fires early only looks and re-arms.
 */
static void arm_steal_timer(u32 key, u64 tick_start, u64 now)
{
	struct steal_timer *st;
	u64 due = tick_start + steal_threshold_ns + 10000, old, started;
	bool claimed = false;
	u32 i;

	st = bpf_map_lookup_elem(&steal_timers, &key);
	if (!st || SCX_TICK_BREAK_NOTIMER)
		return;
	bpf_for(i, 0, 4) {
		old = st->armed_until;
		if (old > now && old <= due)
			return;
		if (__sync_val_compare_and_swap(&st->armed_until, old, due) == old) {
			claimed = true;
			break;
		}
	}
	if (!claimed)
		return;
	started = due;
	bpf_timer_start(&st->timer, elapsed(due, now), 0);
	bpf_for(i, 0, 4) {
		old = st->armed_until;
		if (old == started || old <= now)
			break;
		started = old;
		bpf_timer_start(&st->timer, elapsed(old, now), 0);
	}
}

static bool free_for_runner(struct task_struct *p, u32 cpu, u64 now); /* placement.bpf.c */

/*
 * Claim and wake an idle CPU that @p may run on, to take it from @near's
 * queue (a tick CPU, -1: the global queue): the idle tick CPUs nearest
 * @near first (at most MAX_PROBES looked at), else a CPU of @near's node
 * running other work (preempted), else any idle tick CPU when @p may run
 * on them all, else any idle CPU @p may run on (a CPU it may not run on,
 * claimed and woken, would find nothing to take while @p waited for the
 * timer's next look).
 * The CPU looks at @near's queue first (its steal hint): a late runner's
 * timer reaches the CPU that will take it, however many tick CPUs there
 * are. 1 if one was found.
 */
static bool kick_idle_for(struct task_struct *p, s32 near, u64 now)
{
	struct bpf_cpumask *tick = tick_cpumask;
	struct cpu_ctx *cctx;
	s32 cpu = -1, preempt = -1, c;
	u32 k;

	if (near >= 0) {
		bpf_for(k, 0, MAX_PROBES) {
			c = near_tick_cpu(near, 0, k);
			if (c < 0)
				break;
			STAT_INC(probes);
			if (bpf_cpumask_test_cpu(c, p->cpus_ptr) && scx_bpf_test_and_clear_cpu_idle(c)) {
				cpu = c;
				break;
			}
		}
	}
	/* none idle there: a CPU of @near's node running other work is preempted for it */
	if (cpu < 0 && near >= 0) {
		bpf_for(k, 0, MAX_PROBES) {
			c = near_cpu(near, 0, k);
			if (c < 0 || node_of(c) != node_of(near))
				break;
			STAT_INC(probes);
			if (free_for_runner(p, c, now)) {
				preempt = c;
				break;
			}
		}
	}
	if (preempt >= 0)
		cpu = preempt;
	/* the tick CPUs as one mask when @p may run on them all (the usual case) */
	if (cpu < 0 && tick && bpf_cpumask_subset(cast_mask(tick), p->cpus_ptr))
		cpu = scx_bpf_pick_idle_cpu(cast_mask(tick), 0);
	if (cpu < 0)
		cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
	if (cpu < 0)
		return false;
	if (near >= 0 && (cctx = lookup_cpu_ctx(cpu)))
		cctx->steal_hint = tick_index(near) + 1;
	/* always kick what was claimed: a claimed CPU that is not kicked sleeps on */
	scx_bpf_kick_cpu(cpu, preempt >= 0 ? SCX_KICK_PREEMPT : SCX_KICK_IDLE);
	return true;
}

/* The steal timer of queue @key (@dsq) at @now: is its head late yet? */
static __always_inline void steal_timer_check(int key, u64 dsq, u64 now)
{
	struct task_struct *head;
	struct task_ctx *tctx;

	head = __COMPAT_scx_bpf_dsq_peek(dsq);
	/* nothing waits any more: it started in time */
	if (!head)
		return;
	tctx = lookup_task_ctx(head);
	if (!tctx)
		return;
	if (!past_threshold(tctx->tick_start, now)) {
		/* a newer head: wait for its own moment */
		arm_steal_timer(key, tctx->tick_start, now);
		return;
	}
	/* late now: an idle CPU takes it (tick_dispatch); look again later while it waits */
	STAT_INC(decisions);
	kick_idle_for(head, key < MAX_CPUS ? key : -1, now);
	arm_steal_timer(key, now, now);
}

static int steal_timerfn(void *map, int *key, struct steal_timer *st)
{
	u64 dsq = *key < MAX_CPUS ? (u64)*key : DSQ_GLOBAL_TICK;
	u64 now = clock_now(), old;

	/* expired now, unless another CPU claimed a new expiry meanwhile */
	old = st->armed_until;
	if (old <= now)
		__sync_val_compare_and_swap(&st->armed_until, old, 0);
	/*
	 * A timer callback is no RCU read section to 6.16's verifier (the
	 * struct_ops callbacks are): the peek's fallback there, a queue
	 * iterator, and the task it returns need one ("expected an RCU CS
	 * when using bpf_iter_scx_dsq_next", the oldest/ scenarios).
	 */
	bpf_rcu_read_lock();
	steal_timer_check(*key, dsq, now);
	bpf_rcu_read_unlock();
	return 0;
}

static s32 init_steal_timer(u32 key)
{
	struct steal_timer *st = bpf_map_lookup_elem(&steal_timers, &key);

	if (!st)
		return -ENOENT;
	bpf_timer_init(&st->timer, &steal_timers, CLOCK_MONOTONIC);
	bpf_timer_set_callback(&st->timer, steal_timerfn);
	return 0;
}

static struct task_struct *peek(u64 dsq_id)
{
	return __COMPAT_scx_bpf_dsq_peek(dsq_id);
}

static bool is_overdue(struct task_struct *head, u64 now)
{
	return head && time_before(head->scx.dsq_vtime, now);
}

/* @l may go before @g: no @g, or @l's deadline is not later (a tie goes to local). */
static bool local_first(struct task_struct *l, struct task_struct *g)
{
	return !g || !time_before(g->scx.dsq_vtime, l->scx.dsq_vtime);
}

/*
 * Steal the head of @victim's queue if it is stealable (predicted to start
 * late behind the runner @victim runs) and may run here. Only the head is
 * looked at, by a lockless peek: a probe that takes nothing costs no lock
 * of the victim's queue (in an overcommitted guest its holder's vCPU may
 * wait for a host core: measured at 8 vCPUs on 2 cores, 0.5 ms per probe).
 * Only that head is then moved (a runner behind it, which another CPU's
 * take would leave first, is not stealable for being second). A refusal
 * is counted only for a real candidate.
 */
__weak bool try_steal(s32 cpu, s32 victim, u64 now)
{
	struct cpu_ctx *vctx;
	struct task_struct *p, *q;
	struct task_ctx *tctx;
	bool stolen = false, may_run;
	u64 ahead;

	if (SCX_TICK_BREAK_NOSTEAL)
		return false;
	STAT_INC(probes);
	p = scx_bpf_dsq_nr_queued(victim) > 0 ? __COMPAT_scx_bpf_dsq_peek(victim) : NULL;
	if (!p) {
		trace_probe(NULL, victim, 0, false);
		return false;
	}
	vctx = lookup_cpu_ctx(victim);
	ahead = held_by_higher_class(victim) ? HELD_WAIT_NS : vctx ? busy_for(vctx, now) : 0;
	tctx = lookup_task_ctx(p);
	may_run = tctx && bpf_cpumask_test_cpu(cpu, p->cpus_ptr);
	trace_probe(p, victim, ahead, may_run);
	if (!may_run)
		return false;
	if (!is_stealable(tctx, now, ahead)) {
		STAT_INC(steals_refused);
		return false;
	}
	/* the head that was checked, or nothing: not whichever runner is first by now */
	bpf_for_each(scx_dsq, q, victim, 0) {
		if (q->pid == p->pid && scx_bpf_dsq_move(BPF_FOR_EACH_ITER, q, SCX_DSQ_LOCAL, 0)) {
			count_stolen(tctx);
			stolen = true;
		}
		break;
	}
	trace_pick(TRACE_STEAL, tick_index(victim), stolen);
	return stolen;
}

/*
 * Look at up to @tries steal candidates, nearest first: the queue a steal
 * timer woke this CPU for (its hint), then the tick CPUs of its LLC, of its
 * node, the rest, equally near ones in turn (steal_rr moves once a round).
 * A tick CPU about to look at several while half the tick CPUs search
 * already looks at one: throttled stealing, as Tokio's scheduler limits its
 * searching workers, so that CPUs going idle together do not all lock the
 * same queues. Mirrors dispatch::steal_round().
 */
__weak bool steal_round(s32 cpu, struct cpu_ctx *cctx __arg_nonnull, u32 tries, s32 hint, u64 now)
{
	s32 me = tick_index(cpu), hinted = -1, victim;
	u32 rot = cctx->steal_rr, i, k = 0;
	bool searching = false, throttled = false, stolen = false;
	struct decision *d = tracing();

	cctx->steal_rr = rot + 1;
	if (tries > MAX_PROBES)
		tries = MAX_PROBES;
	/* the tick CPUs' searches are throttled; a non-tick CPU's, before its other work, are not counted */
	if (tries > 1 && me >= 0) {
		searching = true;
		throttled = __sync_fetch_and_add(&nr_searching, 1) >= (nr_tick_cpus + 1) / 2;
		if (throttled)
			tries = 1;
	}
	if (d)
		d->throttled = throttled;
	if (hint >= 0 && hint != me && (u32)hint < nr_tick_cpus && tries > 0) {
		hinted = tick_cpus[hint & (MAX_CPUS - 1)];
		tries--;
		stolen = try_steal(cpu, hinted, now);
	}
	bpf_for(i, 0, MAX_PROBES) {
		if (stolen || i >= tries)
			break;
		victim = near_tick_cpu(cpu, rot, k++);
		if (victim >= 0 && victim == hinted)
			victim = near_tick_cpu(cpu, rot, k++);
		if (victim < 0)
			break;
		stolen = try_steal(cpu, victim, now);
	}
	if (searching)
		__sync_fetch_and_sub(&nr_searching, 1);
	return stolen;
}

static bool take(u64 dsq_id, bool global)
{
	if (!scx_bpf_dsq_move_to_local(dsq_id, 0))
		return false;
	if (global)
		STAT_INC(dispatch_global);
	else
		STAT_INC(dispatch_local);
	return true;
}

/*
 * The polling order of the Affinity scheduler of CanvasMC, on tick CPU
 * @cpu (tick index @me); mirrors dispatch::poll() in src/model/dispatch.rs:
 *   1. peek the local and the global head; an overdue head wins (both
 *      overdue: the earlier deadline);
 *   2. else look at ONE steal candidate, round-robin, and take its head if
 *      it is stealable (a CPU with nothing else to run looks at up to
 *      MAX_PROBES candidates);
 *   3. else take the earlier of the two heads.
 */
static bool poll_tick_at(s32 cpu, s32 me, struct cpu_ctx *cctx, s32 hint, u64 now)
{
	struct task_struct *local = peek(cpu), *global = peek(DSQ_GLOBAL_TICK);
	bool local_overdue = is_overdue(local, now);
	bool global_overdue = is_overdue(global, now);
	struct decision *d = tracing();
	bool has_head = false, ok;

	if (d) {
		trace_head(&d->local, local, me, 0, true);
		trace_head(&d->global, global, -1, 0, true);
	}

	/* two steps: clang would OR the two pointers, which the verifier refuses */
	if (local)
		has_head = true;
	barrier_var(has_head);
	if (global)
		has_head = true;

	/* 1. an overdue head wins; both overdue: the earlier deadline */
	if (local_overdue || global_overdue) {
		bool pick_local = local_overdue && (!global_overdue || local_first(local, global));

		ok = take(pick_local ? cpu : DSQ_GLOBAL_TICK, !pick_local);
		trace_pick(pick_local ? TRACE_LOCAL : TRACE_GLOBAL, -1, ok);
		if (ok)
			return true;
	}

	/*
	 * 2. one steal candidate, round-robin; an otherwise idle CPU looks
	 * further. A local head late enough to be stolen itself goes first
	 * instead: it is as late as any candidate, and taking it moves no
	 * runner (a move locks the victim's run queue).
	 */
	if (work_stealing && !(local && is_stealable(lookup_task_ctx(local), now, 0)) &&
	    steal_round(cpu, cctx, has_head ? 1 : nr_tick_cpus - 1, hint, now))
		return true;

	/* 3. the earlier of the two heads */
	if (local && local_first(local, global)) {
		ok = take(cpu, false);
		trace_pick(TRACE_LOCAL, -1, ok);
		if (ok)
			return true;
	}
	if (!global)
		return false;
	ok = take(DSQ_GLOBAL_TICK, true);
	trace_pick(TRACE_GLOBAL, -1, ok);
	return ok;
}

/*
 * The queue (tick index) a steal timer sent this CPU to, -1: none; taken
 * once per poll, atomically: a timer on another CPU may set the next one.
 */
static s32 take_steal_hint(struct cpu_ctx *cctx)
{
	return __sync_lock_test_and_set(&cctx->steal_hint, 0) - 1;
}

static bool poll_tick(s32 cpu, s32 me, struct cpu_ctx *cctx)
{
	u64 now = clock_now();
	bool ok;

	s32 hint = take_steal_hint(cctx);

	STAT_INC(decisions);
	trace_begin(me, cctx, hint, now);
	ok = poll_tick_at(cpu, me, cctx, hint, now);
	trace_end(cctx);
	return ok;
}

/*
 * A non-tick CPU, before its other work, takes a runner that would start
 * late where it waits: the global head once its lateness passes the
 * threshold, else a stealable head among up to MAX_PROBES tick CPU queues.
 * Mirrors dispatch::poll_spill().
 */
static bool take_late_runner(s32 cpu, struct cpu_ctx *cctx)
{
	struct task_struct *global = peek(DSQ_GLOBAL_TICK);
	s32 hint = take_steal_hint(cctx);
	u64 now = clock_now();
	struct decision *d = trace_begin(-1, cctx, hint, now);
	bool allowed = global && bpf_cpumask_test_cpu(cpu, global->cpus_ptr);
	bool ok = false;

	STAT_INC(decisions);
	if (d)
		trace_head(&d->global, global, -1, 0, allowed);
	if (allowed && is_stealable(lookup_task_ctx(global), now, 0)) {
		ok = take(DSQ_GLOBAL_TICK, true);
		trace_pick(TRACE_GLOBAL, -1, ok);
	}
	if (!ok)
		ok = work_stealing && steal_round(cpu, cctx, nr_tick_cpus, hint, now);
	trace_end(cctx);
	return ok;
}

/* Is @head (a queue's head, or NULL) a runner with a key before @key, allowed on @cpu? */
static bool goes_before(struct task_struct *head, u64 key, s32 cpu)
{
	return head && time_before(head->scx.dsq_vtime, key) && bpf_cpumask_test_cpu(cpu, head->cpus_ptr);
}

/*
 * Runners with close deadlines take turns: a runner that has run a quantum
 * yields its CPU (its slice ends now) to a runner waiting for it with an
 * earlier key: the head of this tick CPU's queue (a non-tick CPU has
 * none) or of the global queue, if it may run here; or to a runner parked
 * in this CPU's local queue (a spill-over that raced with another put it there: it waits for
 * this CPU alone, so its turn comes by the quantum, not by its key; a task
 * pinned here is other work and gets no turn). The yielder queues again
 * with its own key, or spills over. Stacked runners so share the CPUs;
 * alone, a runner keeps its slice to its deadline. Mirrors
 * dispatch::yields().
 */
void BPF_STRUCT_OPS(tick_tick, struct task_struct *p)
{
	struct task_ctx *tctx = lookup_task_ctx(p);
	struct cpu_ctx *cctx = lookup_cpu_ctx(-1);
	struct task_struct *queued = NULL, *global;
	s32 cpu = scx_bpf_task_cpu(p), q;
	u64 now, ran, key;
	bool parked, yield, tick_cpu;

	if (!tctx || !cctx)
		return;
	now = clock_now();
	if (!tctx->runner) {
		/*
		 * A task that may not leave this tick CPU keeps it with a
		 * fresh slice (keep_prev()), without ops.running, past the
		 * lend window: clip it again.
		 */
		if (!time_before(now, cctx->share_until) && tick_index(cpu) >= 0)
			clip_to_lend_window(p, cctx, now);
		return;
	}
	ran = elapsed(now, tctx->run_start);
	/*
	 * Still running at its deadline. A runner alone on its CPU keeps it
	 * with a fresh slice (keep_prev()), without ops.stopping/ops.running,
	 * so it would run on in one endless tick: its next tick starts here,
	 * on the grid, as it would at the end of its slice (replenish).
	 */
	/*
	 * (The notickreplenish breakage skips it at run time, `&& now`: with
	 * the branch compiled out the verifier refused tick_tick.)
	 */
	if (tctx->in_tick && !time_before(now, tctx->deadline) &&
	    !(SCX_TICK_BREAK_NOTICKREPLENISH && now)) {
		add_runtime(tctx, ran);
		tctx->run_start = now;
		ran = 0;
		replenish(p, tctx, now, true);
		runner_on_cpu(p, tctx, cctx, now);
		/*
		 * Work waiting for this CPU (a per-CPU kthread in its local
		 * queue, other work owed its share) gets it now, as at the end
		 * of any slice: refilled, the runner would keep the CPU from it
		 * until it yields a turn. (Built without this, the
		 * probe of vm/never_stalls_pinned_tasks still got the CPU
		 * within 3 ms: not a test-proven rule.)
		 */
		if (scx_bpf_dsq_nr_queued(SCX_DSQ_LOCAL) > 0 || other_owed(cpu, cctx, now))
			p->scx.slice = 0;
	} else if (proc_roll_over(p, tctx, now, ran)) {
		/* its CPU time so far went to the tick before */
		tctx->run_start = now;
		ran = 0;
		runner_on_cpu(p, tctx, cctx, now);
	}
	if (ran < RUNNER_QUANTUM_NS || SCX_TICK_BREAK_NOTURNS)
		return;
	key = runner_key(tctx, ran);
	/*
	 * A tick CPU's runners take turns with its queue. A spilled runner on
	 * another CPU does not with its home's: its home serves that queue by
	 * turns itself, and a turn here would move two runners between CPUs
	 * each quantum (at 8 vCPUs on 2 host cores a move waited 3-4 ms for
	 * the other run queue's lock). Mirrors dispatch::turn_head().
	 */
	tick_cpu = tick_index(cpu) >= 0;
	/* a non-tick CPU peeks at its runner's home only for the trace */
	q = tick_cpu ? cpu : tctx->home;
	if (q >= 0 && (tick_cpu || trace_decisions || SCX_TICK_BREAK_HOMETURN))
		queued = peek(q);
	global = peek(DSQ_GLOBAL_TICK);
	parked = cctx->parked && scx_bpf_dsq_nr_queued(SCX_DSQ_LOCAL) > 0;
	yield = ((tick_cpu || SCX_TICK_BREAK_HOMETURN) && goes_before(queued, key, cpu)) ||
		goes_before(global, key, cpu) || (parked && !SCX_TICK_BREAK_NOPARKED);
	trace_yield(cpu, cctx, now, q, queued, global, key, ran, parked, yield);
	if (yield)
		p->scx.slice = 0;
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Other work (part of main.bpf.c): every task that is not a tick runner.
 * It waits in a fair vtime queue, one per LLC (fair_q(): a CPU takes its
 * cache's work first, and no queue's lock is shared by the whole machine),
 * runs on the non-tick CPUs first and on a tick CPU within its lend
 * window, and is owed a share of a CPU that runners held too long.
 * ops.stopping charges it (and a runner's tick) the CPU time it had.
 */

/*
 * When the head of fair queue @dsq was queued, in *@at; false: empty. A
 * head without a task context (none should be) reads as queued @now:
 * neither owed a share nor the oldest.
 */
static bool head_queued_at(u64 dsq, u64 now, u64 *at)
{
	struct task_struct *head = __COMPAT_scx_bpf_dsq_peek(dsq);
	struct task_ctx *hctx;

	if (!head)
		return false;
	hctx = lookup_task_ctx(head);
	*at = hctx ? hctx->queued_at : now;
	return true;
}

/*
 * Move to @cpu's local queue a task of fair queue @dsq that last ran on
 * @cpu, if one is within a slice of the head's key (at most MAX_PROBES
 * looked at; the head first). Without it every slice's end, and every
 * runner that preempts lent work, moved a CPU hog to another CPU: beside 8
 * runners the hogs changed CPUs 294-338 times a second, 73-89 with it,
 * 9-11 under SCHED_FIFO (records/probes/hog-moves-2026-11-30/), and each
 * move locks another CPU's run queue. Taken out of
 * order, a task is at most a slice ahead of its turn, which the fair
 * queue's key allows anyway (enqueue_other()). Mirrors
 * dispatch::pick_other().
 */
static bool move_local_other(u64 dsq, s32 cpu)
{
	struct task_struct *q;
	u64 until = 0;
	u32 n = 0;

	if (SCX_TICK_BREAK_NOOTHERLOCALITY)
		return false;
	bpf_for_each(scx_dsq, q, dsq, 0) {
		if (!n)
			until = q->scx.dsq_vtime + other_slice_ns;
		else if (time_after(q->scx.dsq_vtime, until))
			break;
		if (++n > MAX_PROBES)
			break;
		if (scx_bpf_task_cpu(q) != cpu || !bpf_cpumask_test_cpu(cpu, q->cpus_ptr))
			continue;
		if (!scx_bpf_dsq_move(BPF_FOR_EACH_ITER, q, SCX_DSQ_LOCAL, 0))
			return false;
		if (n > 1)
			STAT_INC(other_local);
		return true;
	}
	return false;
}

/*
 * Move other work to @cpu's local queue: from its LLC's fair queue,
 * unless that queue's head has waited more than a slice (or there is none) and a fair
 * queue nearby, its node's first, at most MAX_PROBES of them, has a head
 * that has waited a slice longer still: an LLC short of CPUs for other
 * work (its CPUs all tick CPUs, busy) does not keep its tasks waiting
 * while the rest of the machine runs newer ones. From that queue the task
 * that last ran on @cpu (move_local_other()), unless @owed: a share owed
 * to other work goes to the head that waited for it. Mirrors
 * dispatch::take_other_from() and dispatch::pick_other().
 */
__weak bool take_other(s32 cpu, u64 now, bool owed)
{
	u64 own = fair_q(cpu), best = own, best_at = 0, at;
	bool found = head_queued_at(own, now, &best_at);
	u32 k, rot;
	s64 q;

	if (!SCX_TICK_BREAK_ONEFAIRQ && (!found || elapsed(now, best_at) > other_slice_ns)) {
		rot = bpf_get_prandom_u32();
		bpf_for(k, 0, MAX_PROBES) {
			q = near_fair_q(cpu, rot, k);
			if (q < 0)
				break;
			STAT_INC(other_probes);
			if (head_queued_at(q, now, &at) &&
			    (!found || time_before(at + other_slice_ns, best_at))) {
				best = q;
				best_at = at;
				found = true;
			}
		}
	}
	if (!found)
		return false;
	if ((!owed && move_local_other(best, cpu)) || scx_bpf_dsq_move_to_local(best, 0)) {
		STAT_INC(dispatch_other);
		if (best != own)
			STAT_INC(other_far);
		return true;
	}
	/* its head may not run here: the own queue, if that was not it */
	if (best != own && scx_bpf_dsq_move_to_local(own, 0)) {
		STAT_INC(dispatch_other);
		return true;
	}
	return false;
}

/*
 * Other work is owed @cpu (@cctx its context): the head of its fair queue has waited
 * OTHER_SHARE_PERIOD_NS, and none started on this CPU for as long (runners
 * had it all). Mirrors dispatch::other_owed().
 */
static bool other_owed(s32 cpu, struct cpu_ctx *cctx, u64 now)
{
	u64 at;

	if (elapsed(now, cctx->other_at) <= OTHER_SHARE_PERIOD_NS)
		return false;
	return head_queued_at(fair_q(cpu), now, &at) && elapsed(now, at) > OTHER_SHARE_PERIOD_NS;
}

/*
 * @tctx's task starts on @cpu: the fair queues' clock moves up to the lowest
 * key of it and the head of @cpu's queue, as scx_simple's moves to the task that starts.
 * Not past the head: a task that starts out of order (put straight on an
 * idle CPU, far ahead of the clock) would pull the clock past every task
 * still waiting and erase their lag. A rule from reading, not measured:
 * vm/niced_work_is_not_starved's nice-19 hog had the same share with and
 * without it (85 and 82 ticks for its twin's 254 and 251). Not
 * SCX_TICK_BREAK_CLOCKCHARGE's raise to the charged vtime at each stop.
 */
static void advance_fair_clock(struct task_ctx *tctx, s32 cpu)
{
	struct task_struct *head = __COMPAT_scx_bpf_dsq_peek(fair_q(cpu));
	u64 vtime = tctx->vtime;

	if (head && time_before(head->scx.dsq_vtime, vtime))
		vtime = head->scx.dsq_vtime;
	if (time_before(vtime_now, vtime))
		vtime_now = vtime;
}

/* Other work runs its owed share on @cctx's CPU: no runner preempts it. */
static bool in_share(struct cpu_ctx *cctx, u64 now)
{
	return !cctx->running_tick && time_before(now, cctx->share_until);
}

/*
 * A task of a higher class (SCHED_FIFO/RR, SCHED_DEADLINE) waits on @cpu:
 * ours run there only in the kernel's ext deadline server's slices.
 */
static bool higher_class_waits(s32 cpu)
{
	struct rq *rq = bpf_per_cpu_ptr(&runqueues, cpu);

	return !rq || rq->nr_running > rq->scx.nr_running;
}

/*
 * @p may wait in the fair queue for another CPU (it is not bound to this
 * one). BPF programs run with migration disabled on the current task, which
 * @p usually is here: its own count is 1 then, not 0.
 */
static bool may_leave_cpu(struct task_struct *p)
{
	u32 own = p == bpf_get_current_task_btf() ? 1 : 0;

	return p->nr_cpus_allowed > 1 && can_run_on_other_cpu(p) && p->migration_disabled <= own;
}

static void enqueue_other(struct task_struct *p, struct task_ctx *tctx, u64 enq_flags)
{
	struct bpf_cpumask *mask;
	u64 vtime;
	s32 cpu, prev;

	if (tctx)
		tctx->runner = false;

	/*
	 * Never stall: per-CPU kthreads, and tasks allowed only on tick CPUs,
	 * run where they are, whatever mid-tick lending says.
	 */
	if (!SCX_TICK_BREAK_STALL && !may_leave_cpu(p)) {
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, other_slice_ns, enq_flags);
		return;
	}

	vtime = tctx ? tctx->vtime : vtime_now;
	if (time_before(vtime, vtime_now - other_slice_ns))
		vtime = vtime_now - other_slice_ns;
	/*
	 * The key it waits with is its vtime from now on, as in scx_simple.
	 * Kept only as the key, a hog's own vtime could lag ever further
	 * behind the clock that nice-19 runs raise by two slices each: its
	 * runs then never moved the clock, and every hog came back at the
	 * same key, ahead of the nice-19 task that ran last (a likely cause
	 * of the 1-3 s waits of vm/niced_work_is_not_starved's probe).
	 */
	if (tctx) {
		tctx->vtime = vtime;
		tctx->queued_at = clock_now();
	}
	/* the queue of the cache it ran in; an idle CPU nearest it is woken for it */
	prev = scx_bpf_task_cpu(p);
	scx_bpf_dsq_insert_vtime(p, fair_q(prev), other_slice_ns, vtime, enq_flags);

	mask = other_cpumask;
	if (mask) {
		cpu = scx_bpf_select_cpu_and(p, prev, 0, cast_mask(mask), 0);
		if (cpu >= 0) {
			scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
			return;
		}
	}
	mask = tick_cpumask;
	if (mid_tick_tasks && mask) {
		cpu = scx_bpf_select_cpu_and(p, prev, 0, cast_mask(mask), 0);
		if (cpu >= 0)
			scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
	}
}

/*
 * How long a tick CPU may lend itself to other work before its next runner
 * wakes. Mirrors dispatch::lend_window().
 */
static u64 lend_window(struct cpu_ctx *cctx, u64 now)
{
	u64 wake = cctx->next_wake;

	if (!wake || time_before_eq(wake, now))
		return other_slice_ns;
	if (wake - now <= run_tasks_buffer_ns)
		return 0;
	return wake - now - run_tasks_buffer_ns;
}

/* Other work on a tick CPU ends run_tasks_buffer before the next runner wakes. */
static void clip_to_lend_window(struct task_struct *p, struct cpu_ctx *cctx, u64 now)
{
	u64 window = lend_window(cctx, now);

	if (window < MIN_LEND_NS)
		window = MIN_LEND_NS;
	if (p->scx.slice > window)
		p->scx.slice = window;
}

/*
 * @prev, still runnable, used up its slice and nothing else was dispatched
 * here. Without SCX_OPS_ENQ_LAST the kernel refilled its slice and ran it
 * on without asking, so lent work on a tick CPU ran past its lend window
 * until the runner's wake-up preempted it: the run-tasks buffer did not
 * hold (a 45 ms buffer beside 6 hogs left tick CPUs busy 74 %,
 * vm/mid_tick_lending). With SCX_OPS_ENQ_LAST a task left without a slice
 * is enqueued as the last one only after the CPU's pick found nothing,
 * which stops the kernel's ext deadline server: a task pinned to a tick
 * CPU held by a SCHED_FIFO hog then waited 22 s
 * (vm/hostile_load_stalls_nothing). So @prev gets its slice here, and
 * only lent work whose window has closed leaves the CPU (to the fair
 * queue, tick_enqueue()), and only when it may run elsewhere and no
 * higher class waits here. Mirrors dispatch::keep_prev().
 */
static void keep_prev(struct task_struct *prev, s32 cpu, bool tick_cpu, struct cpu_ctx *cctx,
		      u64 now)
{
	u64 window;

	if (!prev || !(prev->scx.flags & SCX_TASK_QUEUED))
		return;
	if (tick_cpu && !is_runner(prev) && !time_before(now, cctx->share_until)) {
		window = mid_tick_tasks ? lend_window(cctx, now) : 0;
		if (window >= MIN_LEND_NS) {
			prev->scx.slice = other_slice_ns;
			clip_to_lend_window(prev, cctx, now);
			return;
		}
		if (!SCX_TICK_BREAK_NOLENDBUFFER && may_leave_cpu(prev) && !higher_class_waits(cpu))
			return;
	}
	prev->scx.slice = KEEP_SLICE_NS;
}

void BPF_STRUCT_OPS(tick_stopping, struct task_struct *p, bool runnable)
{
	struct task_ctx *tctx = lookup_task_ctx(p);
	struct cpu_ctx *cctx = lookup_cpu_ctx(-1);
	u64 now = clock_now(), cap, ran;

	if (cctx) {
		cctx->running_tick = false;
		cctx->running_overrun = false;
	}
	/*
	 * Preempted with slice left, the kernel would put @p back at the head
	 * of this CPU's local queue, ahead of every runner waiting here (a
	 * preempted CPU hog would run again before the runner whose quantum
	 * just ended). Without a slice it goes through enqueue: its queue.
	 */
	if (runnable)
		p->scx.slice = 0;
	if (!tctx)
		return;
	if (tctx->runner) {
		add_runtime(tctx, elapsed(now, tctx->run_start));
		if (!runnable) {
			end_burst(tctx);
			return; /* it sleeps: quiescent ends the tick */
		}
		take_hint_mid_run(p, tctx, now);
		/* still runnable at its deadline: the next tick on the grid */
		if (tctx->in_tick && !time_before(now, tctx->deadline))
			replenish(p, tctx, now, true);
		return;
	}
	/*
	 * Fair share among other tasks, scaled by weight: nice 19 (weight 1)
	 * is charged 100 x its run time. The queue's clock moves only when a
	 * task starts (advance_fair_clock()), so a heavy charge holds the task
	 * back until the others have had their shares. No task's vtime runs
	 * more than OTHER_LEAD_SLICES ahead of the clock: weights count up to
	 * about 1:10 against nice 0, and a low weight waits about as many
	 * rounds of the queue at most (uncapped, a nice-19 hog among 24 others
	 * waited 7 s, past the watchdog; capped at 20 slices, 0.7-1.4 s).
	 * Raising the clock to the charged vtime here instead gave a nice-19
	 * hog about a nice-0 share.
	 */
	ran = elapsed(now, tctx->run_start);
	/*
	 * An owed share is a turn, paid whole, used or not: a task that wakes
	 * often and runs a moment (a timer, a kworker) paid only that moment,
	 * stayed the fair queue's head and took every share while runners
	 * kept the CPUs busy; CPU hogs behind it waited past the watchdog
	 * (beside four OpenTTD servers, vm/real_sim_server_keeps_its_speed).
	 */
	if (tctx->share_turn && ran < tctx->share_turn)
		ran = tctx->share_turn;
	tctx->share_turn = 0;
	tctx->vtime += ran * 100 / p->scx.weight;
	cap = vtime_now + OTHER_LEAD_SLICES * other_slice_ns;
	if (!SCX_TICK_BREAK_NICESTALL && time_after(tctx->vtime, cap))
		tctx->vtime = cap;
	if (SCX_TICK_BREAK_CLOCKCHARGE && time_before(vtime_now, tctx->vtime))
		vtime_now = tctx->vtime;
}

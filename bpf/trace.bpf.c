/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The decision trace (part of main.bpf.c; tests only): the polls of a CPU
 * for a runner (below), the turn checks of ops.tick (trace_yield()) and
 * the runners' wake-ups (trace_wake(); a process tick's threads',
 * trace_proc_wake_begin() and _end()).
 */

/*
 * --trace-decisions (tests only): each poll for a runner records its inputs
 * and its pick, which src/model/trace.rs replays through dispatch::poll() and
 * dispatch::poll_spill(). Without the flag tracing() is NULL and the
 * verifier drops the rest.
 */
static struct decision *tracing(void)
{
	u32 zero = 0;

	return trace_decisions ? bpf_map_lookup_elem(&decision_buf, &zero) : NULL;
}

static void trace_head(struct trace_head *h, struct task_struct *p, s32 queue, u64 ahead,
		       bool may_run)
{
	struct task_ctx *tctx = p ? lookup_task_ctx(p) : NULL;

	h->queue = queue;
	h->present = p && tctx && may_run;
	h->deadline = p ? p->scx.dsq_vtime : 0;
	h->tick_start = tctx ? tctx->tick_start : 0;
	h->ahead = ahead;
}

static struct decision *trace_begin(s32 me, struct cpu_ctx *cctx, s32 hint, u64 now)
{
	struct decision *d = tracing();

	if (!d)
		return NULL;
	d->now = now;
	d->steal_threshold_ns = steal_threshold_ns;
	d->me = me;
	d->nr_tick_cpus = nr_tick_cpus;
	d->work_stealing = work_stealing;
	d->rr_before = cctx->steal_rr;
	d->kind = TRACE_POLL;
	d->pick = -1;
	d->victim = -1;
	d->raced = 0;
	d->nr_probed = 0;
	d->span = tick_span[bpf_get_smp_processor_id() & (MAX_CPUS - 1)];
	d->hint = hint;
	d->throttled = 0;
	d->local.present = 0;
	d->global.present = 0;
	return d;
}

/* The poll's first pick is its decision; @ok: its move worked (else later steps ran). */
static void trace_pick(s32 pick, s32 victim, bool ok)
{
	struct decision *d = tracing();

	if (!d || d->pick >= 0)
		return;
	d->pick = pick;
	d->victim = victim;
	d->raced = !ok;
}

/* A steal candidate looked at (@p: its head, NULL: empty). */
static void trace_probe(struct task_struct *p, s32 victim, u64 ahead, bool may_run)
{
	struct decision *d = tracing();
	u32 n;

	/* probes after a raced pick are not the decision's */
	if (!d || d->pick >= 0)
		return;
	n = d->nr_probed;
	if (n >= MAX_PROBES)
		return;
	trace_head(&d->probed[n & (MAX_PROBES - 1)], p, tick_index(victim), ahead, may_run);
	d->nr_probed = n + 1;
}

static void trace_end(struct cpu_ctx *cctx)
{
	struct decision *d = tracing();

	if (!d)
		return;
	if (d->pick < 0)
		d->pick = TRACE_NOTHING;
	d->rr_after = cctx->steal_rr;
	if (bpf_ringbuf_output(&decisions, d, sizeof(*d), 0))
		__sync_fetch_and_add(&decisions_dropped, 1);
}

/* --trace-decisions: a wake-up's tick, before (@grid_before) and after. */
static __always_inline void trace_wake(struct task_struct *p, struct task_ctx *tctx, u64 now, u64 grid_before,
		       u64 grid_after, bool done, bool guess)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(-1);
	struct decision *d;

	if (!trace_decisions || !cctx || !(d = trace_begin(-1, cctx, -1, now)))
		return;
	d->kind = TRACE_WAKEUP;
	d->grid_before = grid_before;
	d->period_ns = group_period(tctx->group);
	d->rel_deadline_ns = group_deadline(tctx->group);
	d->grid_after = grid_after;
	d->deadline_after = tctx->deadline;
	d->tid = p->pid;
	d->work_done = done;
	d->grid_guess = guess;
	d->proc_wake = 0;
	d->helper = 0;
	d->fresh = 0;
	d->grid_joined = 0;
	d->late_step = 0; /* the buffer is reused: a thread's tick starts no late step */
	trace_end(cctx);
}

/*
 * --trace-decisions: a wake-up of a process tick's thread, before the
 * decision (the process's tick, the thread's own, the heaviest thread)...
 */
static __always_inline struct decision *trace_proc_wake_begin(struct task_struct *p,
							      struct task_ctx *tctx,
							      struct proc_tick *pt, u64 now,
							      bool done)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(-1);
	struct decision *d;

	if (!trace_decisions || !cctx || !(d = trace_begin(-1, cctx, -1, now)))
		return NULL;
	d->kind = TRACE_WAKEUP;
	d->proc_wake = 1;
	d->tid = p->pid;
	d->period_ns = group_period(tctx->group);
	d->rel_deadline_ns = group_deadline(tctx->group);
	d->grid_before = pt->grid;
	/* a start in progress on another CPU: its deadline is not written yet */
	d->raced = pt->deadline_grid != pt->grid;
	d->proc_deadline = pt->deadline;
	d->proc_started = pt->started;
	d->proc_idle_since = pt->idle_since;
	d->own_grid = tctx->grid;
	d->own_deadline = tctx->deadline;
	d->work_done = done;
	d->mspt = tctx->mspt;
	d->heavy = pt->heavy;
	d->heavy_at = pt->heavy_at;
	d->heavy_tid = pt->heavy_tid;
	d->grid_guess = 0;
	return d;
}

/*
 * ...and after it: a helper or not, a quiet spell ended, the tick started
 * (@started: its grid, 0: none) and the one it works for. Another thread
 * of the process that moved its tick meanwhile makes the decision raced.
 */
static __always_inline void trace_proc_wake_end(struct decision *d, struct task_ctx *tctx,
						struct proc_tick *pt, bool helper, bool fresh,
						u64 started, u64 late)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(-1);

	if (!d || !cctx)
		return;
	d->helper = helper;
	d->fresh = fresh;
	d->grid_after = started;
	d->late_step = late;
	d->grid_joined = tctx->grid;
	d->deadline_after = tctx->deadline;
	/* another thread moved the process's tick, or its heaviest thread, meanwhile */
	if (pt->grid != (started ?: d->grid_before))
		d->raced = 1;
	if ((pt->heavy != d->heavy || pt->heavy_tid != d->heavy_tid || pt->heavy_at != d->heavy_at) &&
	    (pt->heavy != d->mspt || pt->heavy_tid != (u32)d->tid || pt->heavy_at != d->now))
		d->raced = 1;
	trace_end(cctx);
}

/*
 * --trace-decisions: a process's tick at work past its next grid point
 * (proc_roll_over()): the thread's tick, its CPU time in it (@runtime) and
 * a step's usual (step_cpu, in the mspt field) and when the tick before
 * started, before; whether it rolled over (@next: the tick it rolled into,
 * 0: none) after.
 */
static __always_inline struct decision *trace_roll_over_begin(struct task_struct *p,
							      struct task_ctx *tctx,
							      struct proc_tick *pt, u64 now,
							      u64 runtime)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(-1);
	struct decision *d;

	if (!trace_decisions || !cctx || !(d = trace_begin(-1, cctx, -1, now)))
		return NULL;
	d->kind = TRACE_ROLLOVER;
	d->tid = p->pid;
	d->period_ns = group_period(tctx->group);
	d->rel_deadline_ns = group_deadline(tctx->group);
	d->grid_before = tctx->grid;
	d->own_deadline = tctx->deadline;
	d->ran = runtime;
	d->mspt = tctx->step_cpu;
	d->proc_started = pt->started;
	return d;
}

static __always_inline void trace_roll_over_end(struct decision *d, struct proc_tick *pt, u64 next,
						u64 deadline, u64 late)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(-1);

	if (!d || !cctx)
		return;
	d->grid_after = next;
	d->deadline_after = next ? deadline : 0;
	d->late_step = late;
	/* another thread of the process moved its tick meanwhile */
	d->raced = !next && pt->grid != d->grid_before;
	trace_end(cctx);
}

/* --trace-decisions: ops.tick's inputs and whether the runner yielded. */
static __always_inline void trace_yield(s32 cpu, struct cpu_ctx *cctx, u64 now, s32 q,
					struct task_struct *queued, struct task_struct *global,
					u64 key, u64 ran, bool parked, bool yielded)
{
	struct decision *d = trace_begin(tick_index(cpu), cctx, -1, now);

	if (!d)
		return;
	d->kind = TRACE_YIELD;
	trace_head(&d->local, queued, q >= 0 ? tick_index(q) : -1, 0,
		   queued && bpf_cpumask_test_cpu(cpu, queued->cpus_ptr));
	trace_head(&d->global, global, -1, 0, global && bpf_cpumask_test_cpu(cpu, global->cpus_ptr));
	d->key = key;
	d->ran = ran;
	d->parked = parked;
	d->yielded = yielded;
	trace_end(cctx);
}

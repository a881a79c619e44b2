/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Accounting (part of main.bpf.c): the per-CPU counters, each tick group's
 * counters and histograms of start lateness and miss overshoot, and the
 * ring buffer of deadline misses userspace streams.
 */

#define STAT_INC(field)                                                        \
	do {                                                                   \
		u32 __zero = 0;                                                \
		struct cpu_stats *__s = bpf_map_lookup_elem(&stats, &__zero);  \
		if (__s)                                                       \
			__s->field++;                                          \
	} while (0)

static struct group_stats *lookup_group_stats(s32 group)
{
	u32 g = group;

	if (g >= MAX_GROUPS)
		return NULL;
	return bpf_map_lookup_elem(&group_stats, &g);
}

/* Log-linear histogram bucket of @ns (see intf.h; stats::bucket_of). */
static u32 hist_bucket(u64 ns)
{
	u64 us = ns / 1000;
	u32 e, b;

	if (us < HIST_SUB)
		return us;
	/* floor(log2(us)): scx's log2_u64() returns the bit length, one more */
	e = log2_u64(us) - 1;
	b = HIST_SUB + (e - HIST_SUB_BITS) * HIST_SUB + ((us >> (e - HIST_SUB_BITS)) & (HIST_SUB - 1));
	return b < NR_HIST_BUCKETS ? b : NR_HIST_BUCKETS - 1;
}

/*
 * A tick starts at @start (@grid on the period grid) with @deadline:
 * counted, not yet on a CPU.
 */
static void count_tick(struct group_stats *gs)
{
	if (gs && !SCX_TICK_BREAK_NOTICKCOUNT)
		gs->ticks++;
}

static void count_stolen(struct task_ctx *tctx)
{
	struct group_stats *gs;

	tctx->stolen = true;
	if (SCX_TICK_BREAK_NOSTEALCOUNT)
		return;
	STAT_INC(dispatch_stolen);
	if ((gs = lookup_group_stats(tctx->group)))
		gs->steals++;
}

/*
 * Was a CPU of @home's node (not @home, not @cpu) idle just now, free for
 * runner @p? Looks at the first MAX_PROBES CPUs of the node in cpu_order
 * (not in locality order: the count judges that order).
 */
static bool near_free(struct task_struct *p, s32 home, s32 cpu)
{
	const struct cpumask *idle = scx_bpf_get_idle_cpumask();
	u32 h = home & (MAX_CPUS - 1), lo = cpu_span[h].node_lo, hi = cpu_span[h].node_hi, i;
	bool found = false;
	s32 c;

	bpf_for(i, 0, MAX_PROBES) {
		if (lo + i >= hi || lo + i >= MAX_CPUS)
			break;
		c = cpu_order[(lo + i) & (MAX_CPUS - 1)];
		if (c != home && c != cpu && bpf_cpumask_test_cpu(c, p->cpus_ptr) &&
		    bpf_cpumask_test_cpu(c, idle)) {
			found = true;
			break;
		}
	}
	scx_bpf_put_idle_cpumask(idle);
	return found;
}

/*
 * A runner starts on @cpu away from its @home: how far it moved, and
 * whether it went to another node while a CPU of its home's was idle.
 */
static void count_move(struct task_struct *p, s32 home, s32 cpu)
{
	if (llc_of(home) == llc_of(cpu)) {
		STAT_INC(moves_llc);
	} else if (node_of(home) == node_of(cpu)) {
		STAT_INC(moves_node);
	} else {
		STAT_INC(moves_far);
		if (near_free(p, home, cpu))
			STAT_INC(moves_far_near_free);
	}
}

/* The tick got its first CPU: record its start lateness. */
static void account_start(struct task_ctx *tctx, u64 now)
{
	struct group_stats *gs = lookup_group_stats(tctx->group);
	u64 lateness = elapsed(now, tctx->tick_start);

	if (!gs || SCX_TICK_BREAK_NOLATENESS)
		return;
	if (lateness >= LATE_START_NS)
		gs->late_starts++;
	gs->lateness_hist[hist_bucket(lateness) & (NR_HIST_BUCKETS - 1)]++;
	gs->lateness_sum_ns += lateness;
	if (lateness > gs->lateness_max_ns)
		gs->lateness_max_ns = lateness;
}

#define MISS_RING_WAKE (64 * 1024)

/* A miss at @now of a tick due at @deadline: counters, histogram and event. */
static void count_miss(struct task_struct *p, struct task_ctx *tctx, u64 now, u64 deadline)
{
	struct group_stats *gs;
	struct miss_event *e;
	u64 over = now - deadline;

	if ((gs = lookup_group_stats(tctx->group))) {
		gs->misses++;
		gs->overshoot_hist[hist_bucket(over) & (NR_HIST_BUCKETS - 1)]++;
		gs->overshoot_sum_ns += over;
		if (over > gs->overshoot_max_ns)
			gs->overshoot_max_ns = over;
	}
	e = bpf_ringbuf_reserve(&miss_events, sizeof(*e), 0);
	if (!e)
		return; /* the reader is behind: the counters above still count it */
	e->at_ns = now;
	e->deadline_ns = deadline;
	e->overshoot_ns = over;
	e->tid = p->pid;
	e->cpu = scx_bpf_task_cpu(p);
	e->group = tctx->group;
	e->stolen = tctx->stolen;
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), p->comm);
	/*
	 * Userspace reads the ring every 100 ms anyway: a wake-up per miss cost
	 * its thread a turn per miss beside late servers. Woken only when the
	 * ring is a quarter full.
	 */
	bpf_ringbuf_submit(e, bpf_ringbuf_query(&miss_events, BPF_RB_AVAIL_DATA) >= MISS_RING_WAKE ?
				      BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}

/*
 * A process's tick at @grid is missed once, whichever of its stepping
 * threads is late: true for the first to say so.
 */
static bool proc_miss_once(struct proc_tick *pt, u64 grid)
{
	u64 prev = pt->missed_grid;

	return time_after(grid, prev) &&
	       __sync_val_compare_and_swap(&pt->missed_grid, prev, grid) == prev;
}

/*
 * The tick ends at @now: count a deadline miss once per tick, with the
 * overshoot at its end, and stream it.
 */
static void account_miss(struct task_struct *p, struct task_ctx *tctx, u64 now)
{
	struct proc_tick *pt;

	if (SCX_TICK_BREAK_NOMISS || tctx->missed || !time_after(now, tctx->deadline))
		return;
	tctx->missed = true;
	/* a process's helpers count none (proc_helper()) */
	pt = proc_tick_of(p, tctx->group);
	if (pt && (tctx->helper || !proc_miss_once(pt, tctx->grid)))
		return;
	count_miss(p, tctx, now, tctx->deadline);
}

/*
 * A process's step started late (late_step(): after @limit, 1.5 periods
 * after the step before it started): its tick is missed, counted by the
 * thread that started it, its overshoot past @limit.
 */
static void account_late_step(struct task_struct *p, struct task_ctx *tctx, struct proc_tick *pt,
			      u64 now, u64 limit)
{
	if (SCX_TICK_BREAK_NOMISS)
		return;
	tctx->missed = true;
	if (proc_miss_once(pt, tctx->grid))
		count_miss(p, tctx, now, limit);
}

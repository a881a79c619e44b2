/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_tick: earliest-deadline-first scheduling for tick runners.
 *
 * A tick runner is a thread in a tick group (a cgroup registered by
 * userspace, or any cgroup below it). Each time it wakes, a tick starts with
 * deadline = wake time + the group's relative deadline. Runners wait in one
 * EDF queue per tick CPU (their home CPU) or in a global EDF queue when they
 * have no home. A tick CPU polls in the order of the seed's Affinity
 * scheduler (see poll_tick(); src/dispatch.rs models the same decision) and
 * only then lends itself to other work. Everything else runs from one fair
 * vtime queue, on the non-tick CPUs first.
 */
#include <scx/common.bpf.h>
#include "intf.h"

char _license[] SEC("license") = "GPL";

UEI_DEFINE(uei);

/* Configuration, written by userspace between open and load. */
const volatile u32 nr_tick_cpus;
const volatile s32 tick_cpus[MAX_CPUS];         /* round-robin order */
const volatile u32 tick_index_plus1[MAX_CPUS];  /* cpu -> index + 1, 0: not a tick CPU */
const volatile u64 group_deadline_ns[MAX_GROUPS];
const volatile u64 group_period_ns[MAX_GROUPS];
const volatile u64 steal_threshold_ns = 3000000;
const volatile u64 run_tasks_buffer_ns = 100000;
const volatile u64 other_slice_ns = 5000000;
const volatile bool work_stealing = true;
const volatile bool mid_tick_tasks = true;

/* Bumped by userspace whenever tick_groups changes: forces reclassification. */
u32 groups_gen;
/* Fair-queue clock of the other tasks. */
static u64 vtime_now;

private(TICK) struct bpf_cpumask __kptr *tick_cpumask;
private(TICK) struct bpf_cpumask __kptr *other_cpumask;

/* cgroup id -> tick group */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_GROUPS);
	__type(key, u64);
	__type(value, struct tick_group);
} tick_groups SEC(".maps");

/* tid -> home CPU (soft pinning), maintained by userspace */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, u32);
	__type(value, s32);
} home_cpus SEC(".maps");

/*
 * Deadline hints: per tick group, a memory-mapped array the runners write
 * their next deadline into (no syscall on the tick path). Userspace creates
 * one inner array per group and hands it only to processes of that group.
 */
struct hint_array {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, MAX_HINT_SLOTS);
	__type(key, u32);
	__type(value, u64);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, MAX_GROUPS);
	__type(key, u32);
	__array(values, struct hint_array);
} group_hints SEC(".maps");

/* tid -> its hint slot, maintained by userspace as runners register */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, u32);
	__type(value, struct hint_slot_ref);
} hint_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct cpu_stats);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAX_GROUPS);
	__type(key, u32);
	__type(value, struct group_stats);
} group_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} miss_events SEC(".maps");

struct task_ctx {
	u64 cgid;           /* cgroup id the classification below was made for */
	u32 groups_gen;
	s32 group;          /* tick group index, -1: other task */
	bool tick_queued;   /* enqueued on the tick path (runner that can run on a tick CPU) */
	bool started;       /* this tick has been on a CPU */
	bool missed;        /* this tick's miss is already counted */
	bool stolen;        /* this tick was stolen by another tick CPU */
	u64 wake_at;        /* start of the current tick */
	u64 deadline;       /* absolute deadline of the current tick */
	u64 wake_interval;  /* EWMA of the time between wake-ups, predicts the next tick */
	u64 run_start;      /* when it last got a CPU */
	u64 vtime;          /* fair-queue vtime while it is an other task */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_ctx);
} task_ctxs SEC(".maps");

struct cpu_ctx {
	bool running_tick;  /* the current task is a tick runner */
	u64 running_deadline; /* its deadline, while running_tick */
	u32 steal_rr;       /* round-robin position among the other tick CPUs */
	u64 next_wake;      /* predicted next wake of a runner homed here */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct cpu_ctx);
} cpu_ctxs SEC(".maps");

/* One timer per tick CPU: wakes an idle tick CPU once a queued runner becomes stealable. */
struct steal_timer {
	struct bpf_timer timer;
	u64 armed_until;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_CPUS);
	__type(key, u32);
	__type(value, struct steal_timer);
} steal_timers SEC(".maps");

static struct task_ctx *lookup_task_ctx(struct task_struct *p)
{
	return bpf_task_storage_get(&task_ctxs, p, 0, 0);
}

static struct cpu_ctx *lookup_cpu_ctx(s32 cpu)
{
	u32 zero = 0;

	if (cpu < 0)
		return bpf_map_lookup_elem(&cpu_ctxs, &zero);
	return bpf_map_lookup_percpu_elem(&cpu_ctxs, &zero, cpu);
}

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

/* Histogram bucket of @ns: 0 below 1 us, k for [2^(k-1), 2^k) us. */
static u32 hist_bucket(u64 ns)
{
	u64 us = ns / 1000;
	u32 b = us ? log2_u64(us) + 1 : 0;

	return b < NR_HIST_BUCKETS ? b : NR_HIST_BUCKETS - 1;
}

/* Index of @cpu among the tick CPUs, or -1. */
static s32 tick_index(s32 cpu)
{
	u32 c = cpu;

	/* the mask keeps the verifier sure of the bound after clang's sign games */
	if (c >= MAX_CPUS)
		return -1;
	return (s32)tick_index_plus1[c & (MAX_CPUS - 1)] - 1;
}

/*
 * Tick group of @p, or -1. The cgroup walk only happens when the task's
 * cgroup or the set of groups changed since the last look.
 */
static s32 classify(struct task_struct *p, struct task_ctx *tctx)
{
	struct cgroup *cgrp = BPF_CORE_READ(p, cgroups, dfl_cgrp);
	u64 cgid = BPF_CORE_READ(cgrp, kn, id);
	u32 gen = groups_gen;
	int i;

	if (cgid == tctx->cgid && gen == tctx->groups_gen)
		return tctx->group;

	tctx->cgid = cgid;
	tctx->groups_gen = gen;
	tctx->group = -1;
	for (i = 0; i < MAX_CGROUP_DEPTH && cgrp; i++) {
		struct cgroup_subsys_state *parent;
		struct tick_group *g;
		u64 id = BPF_CORE_READ(cgrp, kn, id);

		g = bpf_map_lookup_elem(&tick_groups, &id);
		if (g) {
			tctx->group = g->idx < MAX_GROUPS ? g->idx : -1;
			break;
		}
		parent = BPF_CORE_READ(cgrp, self.parent);
		if (!parent)
			break;
		cgrp = container_of(parent, struct cgroup, self);
	}
	return tctx->group;
}

static u64 group_deadline(s32 group)
{
	u32 g = group;

	if (g >= MAX_GROUPS)
		return 0;
	return group_deadline_ns[g & (MAX_GROUPS - 1)];
}

static u64 group_period(s32 group)
{
	u32 g = group;

	if (g >= MAX_GROUPS)
		return 0;
	return group_period_ns[g & (MAX_GROUPS - 1)];
}

/*
 * The deadline hint a registered runner left for this tick, taken (the slot
 * is cleared: one hint, one tick) and converted from CLOCK_MONOTONIC to the
 * scheduler clock @now. A hint older than one period (stale) or further
 * ahead than HINT_MAX_AHEAD_PERIODS periods (absurd) is ignored: 0.
 */
static u64 take_hint(struct task_struct *p, s32 group, u64 now, struct group_stats *gs)
{
	struct hint_slot_ref *ref;
	u32 tid = p->pid, slot;
	u64 *hint, h, mono, period = group_period(group);
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
	mono = bpf_ktime_get_ns();
	ahead = (s64)(h - mono);
	if (ahead < -(s64)period || ahead > (s64)(period * HINT_MAX_AHEAD_PERIODS)) {
		if (gs)
			gs->hints_ignored++;
		return 0;
	}
	if (gs)
		gs->hints_used++;
	return now + ahead;
}

/* Home CPU of a runner if it has a usable one, else -1. */
static s32 home_cpu(struct task_struct *p)
{
	u32 tid = p->pid;
	s32 *home = bpf_map_lookup_elem(&home_cpus, &tid);

	if (!home || tick_index(*home) < 0 || !bpf_cpumask_test_cpu(*home, p->cpus_ptr))
		return -1;
	return *home;
}

/* A runner whose affinity leaves no tick CPU must run as other work, or it would stall. */
static bool can_run_on_tick_cpu(struct task_struct *p)
{
	struct bpf_cpumask *mask = tick_cpumask;

	return mask && bpf_cpumask_intersects(cast_mask(mask), p->cpus_ptr);
}

static bool can_run_on_other_cpu(struct task_struct *p)
{
	struct bpf_cpumask *mask = other_cpumask;

	return mask && bpf_cpumask_intersects(cast_mask(mask), p->cpus_ptr);
}

/*
 * A runner queued on @cpu behind another runner becomes stealable once its
 * start lateness passes the threshold; wake an idle tick CPU at that moment
 * so it can poll it. An earlier pending expiry is never pushed back.
 */
static void arm_steal_timer(s32 cpu, struct task_ctx *tctx, u64 now)
{
	struct steal_timer *st;
	u32 key = cpu;
	u64 due = tctx->wake_at + steal_threshold_ns + 10000;

	if (!work_stealing || nr_tick_cpus < 2)
		return;
	st = bpf_map_lookup_elem(&steal_timers, &key);
	if (!st || (st->armed_until > now && st->armed_until <= due))
		return;
	st->armed_until = due;
	bpf_timer_start(&st->timer, due > now ? due - now : 0, 0);
}

static int steal_timerfn(void *map, int *key, struct steal_timer *st)
{
	struct bpf_cpumask *mask = tick_cpumask;
	s32 cpu;

	/* nothing waits any more: the home CPU got to it in time */
	if (!mask || scx_bpf_dsq_nr_queued(*key) <= 0)
		return 0;
	cpu = scx_bpf_pick_idle_cpu(cast_mask(mask), 0);
	if (cpu >= 0)
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
	return 0;
}

/*
 * A waking runner preempts other work, and a runner whose deadline is
 * strictly earlier (EDF); mirrors dispatch::preempts().
 */
static bool preempts(u64 deadline, bool running_tick, u64 running_deadline)
{
	return !running_tick || time_before(deadline, running_deadline);
}

/*
 * A runner was queued for home CPU @cpu. A waking runner makes a CPU that is
 * idle, running other work or a runner with a later deadline switch to it at once. A re-queued runner (slice
 * end, preemption) only wakes its home CPU if that is idle elsewhere: the CPU
 * it was re-queued on is rescheduling already, and preempting it again would
 * preempt whatever it picks next, over and over. If the runner has to wait,
 * a steal timer is armed.
 */
static void kick_home(s32 cpu, struct task_ctx *tctx, u64 now, u64 enq_flags)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);

	if (!cctx)
		return;
	/* armed even when the CPU looks free: another runner may be about to start there */
	arm_steal_timer(cpu, tctx, now);
	if ((enq_flags & SCX_ENQ_WAKEUP) &&
	    preempts(tctx->deadline, cctx->running_tick, cctx->running_deadline))
		scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
	else if (cpu != (s32)bpf_get_smp_processor_id())
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
}

/*
 * A homeless runner was queued globally: wake an idle tick CPU for it, or,
 * for a waking runner, preempt a tick CPU running other work.
 */
static void kick_for_global(struct task_struct *p, u64 enq_flags)
{
	struct bpf_cpumask *mask = tick_cpumask;
	s32 cpu;
	u32 i;

	if (!mask)
		return;
	cpu = scx_bpf_pick_idle_cpu(cast_mask(mask), 0);
	if (cpu >= 0 && bpf_cpumask_test_cpu(cpu, p->cpus_ptr)) {
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		return;
	}
	if (!(enq_flags & SCX_ENQ_WAKEUP))
		return;
	bpf_for(i, 0, nr_tick_cpus) {
		struct cpu_ctx *cctx;

		if (i >= MAX_CPUS)
			break;
		cpu = tick_cpus[i & (MAX_CPUS - 1)];
		cctx = lookup_cpu_ctx(cpu);
		if (cctx && !cctx->running_tick && bpf_cpumask_test_cpu(cpu, p->cpus_ptr)) {
			scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
			return;
		}
	}
}

s32 BPF_STRUCT_OPS(tick_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	struct task_ctx *tctx = lookup_task_ctx(p);
	struct bpf_cpumask *mask;
	s32 cpu;

	if (tctx && classify(p, tctx) >= 0 && can_run_on_tick_cpu(p)) {
		/* runners are placed in enqueue (home or global queue); stay near home */
		cpu = home_cpu(p);
		return cpu >= 0 ? cpu : prev_cpu;
	}

	/* other work: an idle non-tick CPU, directly */
	mask = other_cpumask;
	if (!mask)
		return prev_cpu;
	cpu = scx_bpf_select_cpu_and(p, prev_cpu, wake_flags, cast_mask(mask), 0);
	if (cpu >= 0) {
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, other_slice_ns, 0);
		return cpu;
	}
	return prev_cpu;
}

static void enqueue_tick(struct task_struct *p, struct task_ctx *tctx, u64 enq_flags)
{
	u64 now = scx_bpf_now();
	s32 home = home_cpu(p);
	u64 slice = group_deadline(tctx->group);

	if (!tctx->wake_at) {
		/* became a runner while runnable: start its tick now */
		tctx->wake_at = now;
		tctx->deadline = now + slice;
	}
	tctx->tick_queued = true;
	/* the slice only bounds how long others on this CPU wait (kthreads) */
	if (home >= 0) {
		scx_bpf_dsq_insert_vtime(p, home, slice, tctx->deadline, enq_flags);
		kick_home(home, tctx, now, enq_flags);
	} else {
		scx_bpf_dsq_insert_vtime(p, DSQ_GLOBAL_TICK, slice, tctx->deadline, enq_flags);
		kick_for_global(p, enq_flags);
	}
}

static void enqueue_other(struct task_struct *p, struct task_ctx *tctx, u64 enq_flags)
{
	struct bpf_cpumask *mask;
	u64 vtime;
	s32 cpu;

	if (tctx)
		tctx->tick_queued = false;

	/*
	 * Never stall: per-CPU kthreads, and tasks allowed only on tick CPUs,
	 * run where they are, whatever mid-tick lending says.
	 */
	if (p->nr_cpus_allowed == 1 || !can_run_on_other_cpu(p)) {
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, other_slice_ns, enq_flags);
		return;
	}

	vtime = tctx ? tctx->vtime : vtime_now;
	if (time_before(vtime, vtime_now - other_slice_ns))
		vtime = vtime_now - other_slice_ns;
	scx_bpf_dsq_insert_vtime(p, DSQ_OTHER, other_slice_ns, vtime, enq_flags);

	mask = other_cpumask;
	if (mask) {
		cpu = scx_bpf_pick_idle_cpu(cast_mask(mask), 0);
		if (cpu >= 0) {
			scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
			return;
		}
	}
	mask = tick_cpumask;
	if (mid_tick_tasks && mask) {
		cpu = scx_bpf_pick_idle_cpu(cast_mask(mask), 0);
		if (cpu >= 0)
			scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
	}
}

void BPF_STRUCT_OPS(tick_enqueue, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx = lookup_task_ctx(p);

	if (tctx && classify(p, tctx) >= 0 && can_run_on_tick_cpu(p))
		enqueue_tick(p, tctx, enq_flags);
	else
		enqueue_other(p, tctx, enq_flags);
}

static struct task_struct *peek(u64 dsq_id)
{
	return __COMPAT_scx_bpf_dsq_peek(dsq_id);
}

static bool is_overdue(struct task_struct *head, u64 now)
{
	return head && time_before(head->scx.dsq_vtime, now);
}

/* The start lateness so far of a queued tick is now - wake_at. */
static bool is_stealable(struct task_ctx *tctx, u64 now)
{
	return tctx && now - tctx->wake_at > steal_threshold_ns;
}

/* @l may go before @g: no @g, or @l's deadline is not later (a tie goes to local). */
static bool local_first(struct task_struct *l, struct task_struct *g)
{
	return !g || !time_before(g->scx.dsq_vtime, l->scx.dsq_vtime);
}

/*
 * Steal the head of @victim's queue if it is stealable and may run here.
 * Only the head is looked at.
 */
static bool try_steal(s32 cpu, s32 victim, u64 now)
{
	struct task_struct *p;
	bool stolen = false;

	bpf_for_each(scx_dsq, p, victim, 0) {
		struct task_ctx *tctx = lookup_task_ctx(p);
		struct group_stats *gs;

		if (!tctx || !is_stealable(tctx, now)) {
			STAT_INC(steals_refused);
			break;
		}
		if (bpf_cpumask_test_cpu(cpu, p->cpus_ptr) &&
		    scx_bpf_dsq_move(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0)) {
			STAT_INC(dispatch_stolen);
			tctx->stolen = true;
			if ((gs = lookup_group_stats(tctx->group)))
				gs->stolen++;
			stolen = true;
		}
		break;
	}
	return stolen;
}

/* The next steal candidate, round-robin over the other tick CPUs, never @me. */
static s32 next_victim(struct cpu_ctx *cctx, s32 me)
{
	u32 nr = nr_tick_cpus;
	u32 idx;

	if (nr < 2)
		return -1;
	cctx->steal_rr = (cctx->steal_rr + 1) % (nr - 1);
	idx = ((u32)me + 1 + cctx->steal_rr) % nr;
	if (idx >= MAX_CPUS)
		return -1;
	return tick_cpus[idx & (MAX_CPUS - 1)];
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
 * The seed's polling order on tick CPU @cpu (tick index @me); mirrors
 * dispatch::poll() in src/dispatch.rs:
 *   1. peek the local and the global head; an overdue head wins (both
 *      overdue: the earlier deadline);
 *   2. else look at ONE steal candidate, round-robin, and take its head if
 *      it is stealable (a CPU with nothing else to run keeps polling the
 *      candidates, as the seed's idle runner would);
 *   3. else take the earlier of the two heads.
 */
static bool poll_tick(s32 cpu, s32 me, struct cpu_ctx *cctx)
{
	struct task_struct *local = peek(cpu), *global = peek(DSQ_GLOBAL_TICK);
	u64 now = scx_bpf_now();
	bool local_overdue = is_overdue(local, now);
	bool global_overdue = is_overdue(global, now);
	bool has_head = false;
	u32 tries, i;

	/* two steps: clang would OR the two pointers, which the verifier refuses */
	if (local)
		has_head = true;
	barrier_var(has_head);
	if (global)
		has_head = true;

	/* 1. an overdue head wins; both overdue: the earlier deadline */
	if (local_overdue || global_overdue) {
		bool pick_local = local_overdue && (!global_overdue || local_first(local, global));

		if (take(pick_local ? cpu : DSQ_GLOBAL_TICK, !pick_local))
			return true;
	}

	/* 2. one steal candidate, round-robin; an otherwise idle CPU polls them all */
	if (work_stealing) {
		tries = has_head ? 1 : nr_tick_cpus - 1;
		bpf_for(i, 0, tries) {
			s32 victim = next_victim(cctx, me);

			if (victim < 0)
				break;
			if (try_steal(cpu, victim, now))
				return true;
		}
	}

	/* 3. the earlier of the two heads */
	if (local && local_first(local, global) && take(cpu, false))
		return true;
	return global && take(DSQ_GLOBAL_TICK, true);
}

/* How long a tick CPU may lend itself to other work before its next runner wakes. */
static u64 lend_window(struct cpu_ctx *cctx, u64 now)
{
	u64 wake = cctx->next_wake;

	if (!wake || time_before_eq(wake, now))
		return other_slice_ns;
	if (wake - now <= run_tasks_buffer_ns)
		return 0;
	return wake - now - run_tasks_buffer_ns;
}

void BPF_STRUCT_OPS(tick_dispatch, s32 cpu, struct task_struct *prev)
{
	struct cpu_ctx *cctx;
	s32 me = tick_index(cpu);

	if (me < 0) {
		if (scx_bpf_dsq_move_to_local(DSQ_OTHER, 0))
			STAT_INC(dispatch_other);
		return;
	}

	cctx = lookup_cpu_ctx(-1);
	if (!cctx || poll_tick(cpu, me, cctx))
		return;

	/* the runners sleep: lend the CPU to other work if the next tick is far enough */
	if (mid_tick_tasks && lend_window(cctx, scx_bpf_now()) >= MIN_LEND_NS &&
	    scx_bpf_dsq_move_to_local(DSQ_OTHER, 0)) {
		STAT_INC(dispatch_other);
		STAT_INC(lends);
	}
}

void BPF_STRUCT_OPS(tick_runnable, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx = lookup_task_ctx(p);
	struct group_stats *gs;
	u64 now, interval;
	s32 group;

	if (!tctx)
		return;
	group = classify(p, tctx);
	if (group < 0)
		return;

	/* a tick starts */
	now = scx_bpf_now();
	if (tctx->wake_at) {
		interval = now - tctx->wake_at;
		tctx->wake_interval = tctx->wake_interval ?
			(tctx->wake_interval * 3 + interval) / 4 : interval;
	}
	gs = lookup_group_stats(group);
	tctx->wake_at = now;
	tctx->deadline = take_hint(p, group, now, gs) ?: now + group_deadline(group);
	tctx->started = false;
	tctx->missed = false;
	tctx->stolen = false;
	STAT_INC(ticks);
	if (gs)
		gs->ticks++;
}

/* The tick got its first CPU: record its start lateness. */
static void account_start(struct task_ctx *tctx, u64 now)
{
	struct group_stats *gs = lookup_group_stats(tctx->group);
	u64 lateness = now - tctx->wake_at;

	if (lateness >= LATE_START_NS)
		STAT_INC(late_starts);
	if (!gs)
		return;
	if (lateness >= LATE_START_NS)
		gs->late_starts++;
	gs->lateness_hist[hist_bucket(lateness) & (NR_HIST_BUCKETS - 1)]++;
	gs->lateness_sum_ns += lateness;
	if (lateness > gs->lateness_max_ns)
		gs->lateness_max_ns = lateness;
}

void BPF_STRUCT_OPS(tick_running, struct task_struct *p)
{
	struct task_ctx *tctx = lookup_task_ctx(p);
	struct cpu_ctx *cctx = lookup_cpu_ctx(-1);
	u64 now = scx_bpf_now();
	s32 cpu;

	if (!tctx || !cctx)
		return;
	tctx->run_start = now;
	cctx->running_tick = tctx->tick_queued;
	cctx->running_deadline = tctx->deadline;

	if (tctx->tick_queued) {
		if (!tctx->started) {
			tctx->started = true;
			account_start(tctx, now);
		}
		return;
	}

	if (time_before(vtime_now, tctx->vtime))
		vtime_now = tctx->vtime;
	/* other work on a tick CPU must end run_tasks_buffer before the next tick */
	cpu = scx_bpf_task_cpu(p);
	if (tick_index(cpu) >= 0) {
		u64 window = lend_window(cctx, now);

		if (window < MIN_LEND_NS)
			window = MIN_LEND_NS;
		if (p->scx.slice > window)
			p->scx.slice = window;
	}
}

/* Count a deadline miss once per tick, with its overshoot, and stream it. */
static void account_miss(struct task_struct *p, struct task_ctx *tctx, u64 now)
{
	struct group_stats *gs;
	struct miss_event *e;
	u64 over;

	if (tctx->missed || !tctx->deadline || !time_after(now, tctx->deadline))
		return;
	tctx->missed = true;
	over = now - tctx->deadline;
	STAT_INC(misses);
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
	e->deadline_ns = tctx->deadline;
	e->overshoot_ns = over;
	e->tid = p->pid;
	e->cpu = scx_bpf_task_cpu(p);
	e->group = tctx->group;
	e->stolen = tctx->stolen;
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), p->comm);
	bpf_ringbuf_submit(e, 0);
}

void BPF_STRUCT_OPS(tick_stopping, struct task_struct *p, bool runnable)
{
	struct task_ctx *tctx = lookup_task_ctx(p);
	struct cpu_ctx *cctx = lookup_cpu_ctx(-1);
	u64 now = scx_bpf_now();

	if (cctx)
		cctx->running_tick = false;
	if (!tctx)
		return;
	if (tctx->tick_queued) {
		/* still running past the deadline counts as a miss too */
		account_miss(p, tctx, now);
		return;
	}
	/* fair share among other tasks, scaled by weight */
	tctx->vtime += (now - tctx->run_start) * 100 / p->scx.weight;
}

void BPF_STRUCT_OPS(tick_quiescent, struct task_struct *p, u64 deq_flags)
{
	struct task_ctx *tctx = lookup_task_ctx(p);
	struct cpu_ctx *cctx;
	u64 now, next;
	s32 home;

	if (!tctx || !tctx->tick_queued || !(deq_flags & SCX_DEQ_SLEEP))
		return;

	/* the tick ends */
	now = scx_bpf_now();
	account_miss(p, tctx, now);

	/* remember when the home CPU's next runner is expected, for lending */
	home = home_cpu(p);
	if (home < 0)
		home = scx_bpf_task_cpu(p);
	if (!tctx->wake_interval || tick_index(home) < 0)
		return;
	cctx = lookup_cpu_ctx(home);
	if (!cctx)
		return;
	next = tctx->wake_at + tctx->wake_interval;
	if (time_before(cctx->next_wake, now) || time_before(next, cctx->next_wake))
		cctx->next_wake = next;
}

s32 BPF_STRUCT_OPS(tick_init_task, struct task_struct *p, struct scx_init_task_args *args)
{
	struct task_ctx *tctx;

	tctx = bpf_task_storage_get(&task_ctxs, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!tctx)
		return -ENOMEM;
	tctx->group = -1;
	tctx->vtime = vtime_now;
	return 0;
}

static s32 build_cpumask(struct bpf_cpumask __kptr **slot, bool tick)
{
	struct bpf_cpumask *mask;
	s32 cpu;

	mask = bpf_cpumask_create();
	if (!mask)
		return -ENOMEM;
	bpf_for(cpu, 0, MAX_CPUS) {
		if (cpu >= scx_bpf_nr_cpu_ids())
			break;
		if ((tick_index(cpu) >= 0) == tick)
			bpf_cpumask_set_cpu(cpu, mask);
	}
	mask = bpf_kptr_xchg(slot, mask);
	if (mask)
		bpf_cpumask_release(mask);
	return 0;
}

s32 BPF_STRUCT_OPS_SLEEPABLE(tick_init)
{
	s32 ret;
	u32 i;

	ret = build_cpumask(&tick_cpumask, true);
	if (!ret)
		ret = build_cpumask(&other_cpumask, false);
	if (ret)
		return ret;

	ret = scx_bpf_create_dsq(DSQ_GLOBAL_TICK, -1);
	if (!ret)
		ret = scx_bpf_create_dsq(DSQ_OTHER, -1);
	if (ret)
		return ret;

	bpf_for(i, 0, nr_tick_cpus) {
		struct steal_timer *st;
		s32 cpu;

		if (i >= MAX_CPUS)
			break;
		cpu = tick_cpus[i & (MAX_CPUS - 1)];
		ret = scx_bpf_create_dsq(cpu, -1);
		if (ret) {
			scx_bpf_error("failed to create the EDF queue of tick CPU %d", cpu);
			return ret;
		}
		st = bpf_map_lookup_elem(&steal_timers, &cpu);
		if (!st)
			return -ENOENT;
		bpf_timer_init(&st->timer, &steal_timers, CLOCK_MONOTONIC);
		bpf_timer_set_callback(&st->timer, steal_timerfn);
	}
	return 0;
}

void BPF_STRUCT_OPS(tick_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

SCX_OPS_DEFINE(tick_ops,
	       .select_cpu = (void *)tick_select_cpu,
	       .enqueue = (void *)tick_enqueue,
	       .dispatch = (void *)tick_dispatch,
	       .runnable = (void *)tick_runnable,
	       .running = (void *)tick_running,
	       .stopping = (void *)tick_stopping,
	       .quiescent = (void *)tick_quiescent,
	       .init_task = (void *)tick_init_task,
	       .init = (void *)tick_init,
	       .exit = (void *)tick_exit,
	       .name = "scx_tick");

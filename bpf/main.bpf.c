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
#include "breakages.h"

char _license[] SEC("license") = "GPL";

UEI_DEFINE(uei);

/* Configuration, written by userspace between open and load. */
const volatile u32 nr_tick_cpus;
const volatile s32 tick_cpus[MAX_CPUS];         /* round-robin order */
const volatile u32 tick_index_plus1[MAX_CPUS];  /* cpu -> index + 1, 0: not a tick CPU */
const volatile u32 cpu_llc[MAX_CPUS];           /* cpu -> LLC id, for locality of spill-over */
const volatile bool cpu_online[MAX_CPUS];       /* online at load (hotplug re-attaches) */
const volatile u64 group_home_mask[MAX_GROUPS][MAX_CPUS / 64]; /* where a group's homes may be */
const volatile u64 group_deadline_ns[MAX_GROUPS];
const volatile u64 group_period_ns[MAX_GROUPS];
const volatile bool group_process_tick[MAX_GROUPS]; /* tick = "process" */
const volatile u64 steal_threshold_ns = 3000000;
const volatile u64 run_tasks_buffer_ns = 100000;
const volatile u64 other_slice_ns = 5000000;
const volatile bool work_stealing = true;
const volatile bool mid_tick_tasks = true;
const volatile bool trace_decisions;            /* tests only: --trace-decisions */

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

/*
 * tid -> initial home CPU, written by userspace as runners appear (round-robin
 * over the group's tick CPUs). BPF owns the home from then on (task_ctx.home):
 * it adopts a value here only when userspace changes it.
 */
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

/* --trace-decisions (tests): the decisions, and each CPU's one being built */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096); /* userspace sizes it when tracing */
} decisions SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct decision);
} decision_buf SEC(".maps");

u64 decisions_dropped;

struct task_ctx {
	s32 wake_prev;      /* the CPU a runner slept on, at its last wake-up (its timer fired there) */
	s32 parked_on;      /* CPU + 1 whose local queue a spill-over put it in; 0 once it ran */
	u64 cgid;           /* cgroup id the classification below was made for */
	u32 groups_gen;
	s32 group;          /* tick group index, -1: other task */
	s32 home;           /* home CPU, owned here (moves with steals), -1: none */
	s32 home_seen;      /* last home_cpus value adopted, + 1 (0: none yet) */
	bool runner;        /* queued as a tick runner */
	bool in_tick;       /* a tick is in progress */
	bool started;       /* this tick has been on a CPU */
	bool missed;        /* this tick's miss is already counted */
	bool stolen;        /* this tick started away from its home */
	bool spill_stolen;  /* ops.select_cpu preempted another CPU for it: stolen once its tick starts */
	bool replenished;   /* this tick began at a replenishment: its runner has not slept since a miss */
	bool overrun;       /* its own work overran (replenish()): ranks a period later (runner_key) */
	bool grid_guess;    /* its grid came from its first wake-up: the next gives it way (grid_tick()) */
	u64 tick_start;     /* wake time, or grid time of a replenished tick */
	u64 grid;           /* where the tick started on the group's period grid: its identity */
	u64 deadline;       /* absolute deadline of the current tick */
	u64 tick_runtime;   /* CPU time of the current tick so far */
	u64 mspt;           /* EWMA of CPU time per tick (the seed's MSPT): predicts */
	u64 last_wake;
	u64 wake_interval;  /* EWMA of the time between wake-ups, predicts the next tick */
	u64 run_start;      /* when it last got a CPU */
	u64 vtime;          /* fair-queue vtime while it is an other task */
	u64 queued_at;      /* when it last entered the fair queue */
	u64 proc_key;       /* the process tick it counts as busy (awake) in, 0: none */
	u64 share_turn;     /* the owed share it was given to run: charged whole */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_ctx);
} task_ctxs SEC(".maps");

/*
 * The tick of a process in a tick = "process" group: one tick per step of
 * a server whose loop spans threads (a clock, a loop, helpers). Its
 * threads share it: the first wake-up on a new grid point starts it, the
 * others join it with its deadline; it is counted, and missed, once.
 * Threads of one process on several CPUs update it at once: the start of
 * a tick and its miss are claimed by compare-and-swap. Keyed by group <<
 * 32 | tgid. Mirrors dispatch::ProcessTick.
 */
struct proc_tick {
	u64 grid;           /* where its tick in progress started on the grid, 0: none yet */
	u64 deadline;
	u64 deadline_grid;  /* the tick @deadline belongs to (a start in progress on another CPU) */
	u64 missed_grid;    /* the last tick whose miss was counted */
	s64 busy;           /* its threads awake (runnable or running) */
	u64 idle_since;     /* when the last of them went to sleep */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_PROC_TICKS);
	__type(key, u64);
	__type(value, struct proc_tick);
} proc_ticks SEC(".maps");

struct cpu_ctx {
	bool running_tick;    /* the current task is a tick runner */
	u64 running_key;    /* its queue key when it started, while running_tick */
	u64 running_left;     /* its predicted remaining CPU time at running_since */
	u64 running_since;
	u32 steal_rr;         /* round-robin position among the tick CPUs */
	u64 other_at;         /* other work last started here */
	u64 share_until;      /* other work running its share here: no runner preempts it */
	u64 next_wake;        /* predicted next wake of a runner homed here */
	u32 parked;           /* runners a spill-over put in this CPU's local queue that have not run yet */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct cpu_ctx);
} cpu_ctxs SEC(".maps");

/*
 * One timer per tick CPU queue, and one (key MAX_CPUS) for the global queue:
 * wakes an idle CPU once a queued runner becomes stealable.
 */
struct steal_timer {
	struct bpf_timer timer;
	u64 armed_until;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_CPUS + 1);
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

/*
 * The one clock of ticks, queue keys and slices: CLOCK_MONOTONIC, read fresh.
 * Runners publish deadline hints and userspace reads miss events in it, so
 * neither needs converting; and scx_bpf_now() returns the rq clock of the
 * last update, which in a 4-vCPU emulated guest lagged a fresh read by up to
 * 7.7 ms (p99 6.2 ms) when a hint was taken: deadlines that early counted
 * misses the server never had.
 */
static u64 clock_now(void)
{
	return bpf_ktime_get_ns();
}

/*
 * @now - @since, never negative: a stamp taken on another CPU may be slightly
 * ahead of this CPU's clock, and an unsigned difference would wrap to an
 * absurd lateness. Mirrors dispatch::elapsed().
 */
static u64 elapsed(u64 now, u64 since)
{
	s64 d = (s64)(now - since);

	return d > 0 ? d : 0;
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

/* Index of @cpu among the tick CPUs, or -1. */
static s32 tick_index(s32 cpu)
{
	u32 c = cpu;

	/* the mask keeps the verifier sure of the bound after clang's sign games */
	if (c >= MAX_CPUS)
		return -1;
	return (s32)tick_index_plus1[c & (MAX_CPUS - 1)] - 1;
}

static u32 llc_of(u32 cpu)
{
	u32 c = cpu & (MAX_CPUS - 1);

	/* keep the mask: clang drops it after the bound check, the verifier needs it */
	barrier_var(c);
	return cpu < MAX_CPUS ? cpu_llc[c] : 0;
}

/* May @cpu be a home of @group's runners (its `cpus` list)? */
static bool group_may_home(s32 group, s32 cpu)
{
	u32 g = group, c = cpu;

	if (g >= MAX_GROUPS || c >= MAX_CPUS)
		return false;
	return group_home_mask[g & (MAX_GROUPS - 1)][(c & (MAX_CPUS - 1)) / 64] & (1ULL << (c % 64));
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

/* The key of @p's process tick in @group, 0: the group ticks per thread. */
static u64 proc_tick_key(struct task_struct *p, s32 group)
{
	u32 g = group;

	if (g >= MAX_GROUPS || !group_process_tick[g & (MAX_GROUPS - 1)] || SCX_TICK_BREAK_THREADTICKS)
		return 0;
	return (u64)g << 32 | (u32)p->tgid;
}

/* The process tick of @p's process in @group, NULL: the group ticks per thread. */
static struct proc_tick *proc_tick_of(struct task_struct *p, s32 group)
{
	struct proc_tick *pt, zero = {};
	u64 key = proc_tick_key(p, group);

	if (!key)
		return NULL;
	pt = bpf_map_lookup_elem(&proc_ticks, &key);
	if (pt)
		return pt;
	bpf_map_update_elem(&proc_ticks, &key, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&proc_ticks, &key);
}

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
	if (ahead < -(s64)(2 * period) || ahead > (s64)(period * HINT_MAX_AHEAD_PERIODS)) {
		if (gs)
			gs->hints_ignored++;
		return 0;
	}
	if (gs)
		gs->hints_used++;
	return h;
}

/*
 * Home CPU of a runner if it has a usable one, else -1. Userspace gives the
 * first home; after that the home moves with the runner (see tick_running).
 */
static s32 runner_home(struct task_struct *p, struct task_ctx *tctx)
{
	u32 tid = p->pid;
	s32 *set = bpf_map_lookup_elem(&home_cpus, &tid);
	s32 home;

	if (set && *set + 1 != tctx->home_seen) {
		tctx->home_seen = *set + 1;
		tctx->home = *set;
	}
	home = tctx->home;
	if (!tctx->home_seen || tick_index(home) < 0 || !bpf_cpumask_test_cpu(home, p->cpus_ptr))
		return -1;
	return home;
}

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

/* Predicted CPU time the runner now on @cctx's CPU still needs; 0 for other work. */
static u64 busy_for(struct cpu_ctx *cctx, u64 now)
{
	u64 ran;

	if (!cctx->running_tick)
		return 0;
	ran = elapsed(now, cctx->running_since);
	return cctx->running_left > ran ? cctx->running_left - ran : 0;
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

static u64 queue_key(struct task_ctx *tctx)
{
	return runner_key(tctx, 0);
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

/*
 * Other work is owed @cctx's CPU: the head of the fair queue has waited
 * OTHER_SHARE_PERIOD_NS, and none started on this CPU for as long (runners
 * had it all). Mirrors dispatch::other_owed().
 */
static bool other_owed(struct cpu_ctx *cctx, u64 now)
{
	struct task_struct *head;
	struct task_ctx *hctx;

	if (elapsed(now, cctx->other_at) <= OTHER_SHARE_PERIOD_NS)
		return false;
	head = __COMPAT_scx_bpf_dsq_peek(DSQ_OTHER);
	if (!head)
		return false;
	hctx = lookup_task_ctx(head);
	return hctx && elapsed(now, hctx->queued_at) > OTHER_SHARE_PERIOD_NS;
}

/* Other work runs its owed share on @cctx's CPU: no runner preempts it. */
static bool in_share(struct cpu_ctx *cctx, u64 now)
{
	return !cctx->running_tick && time_before(now, cctx->share_until);
}

/* May a runner with queue key @key preempt what @cctx's CPU runs now? */
static bool may_preempt(struct cpu_ctx *cctx, u64 key, u64 now)
{
	return !in_share(cctx, now) && preempts(key, cctx->running_tick, cctx->running_key);
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
	return elapsed(now + ahead, start) > steal_threshold_ns;
}

static bool is_stealable(struct task_ctx *tctx, u64 now, u64 ahead)
{
	return tctx && starts_late(tctx->tick_start, now, ahead);
}

/*
 * How long a runner with queue key @key would wait on @cpu: the rest of the
 * runner it cannot preempt there, plus the predicted work of the runners
 * queued there with an earlier or equal key (at most MAX_PROBES looked
 * at). Mirrors dispatch::wait_at_home().
 */
static u64 wait_at(s32 cpu, u64 key, u64 now)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);
	struct task_struct *q;
	u64 wait = 0;
	u32 n = 0;

	if (!cctx)
		return 0;
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

/*
 * Arm @key's timer (a tick CPU, or MAX_CPUS for the global queue) for the
 * moment the tick that started at @tick_start becomes stealable by lateness
 * alone. An earlier pending expiry is kept: when it fires it re-arms for
 * the head then queued.
 */
static void arm_steal_timer(u32 key, u64 tick_start, u64 now)
{
	struct steal_timer *st;
	u64 due = tick_start + steal_threshold_ns + 10000;

	st = bpf_map_lookup_elem(&steal_timers, &key);
	if (!st || (st->armed_until > now && st->armed_until <= due))
		return;
	st->armed_until = due;
	bpf_timer_start(&st->timer, elapsed(due, now), 0);
}

/* Claim and wake an idle CPU that @p may run on, tick CPUs first: 1 if one was found. */
static bool kick_idle_for(struct task_struct *p)
{
	struct bpf_cpumask *tick = tick_cpumask, *other = other_cpumask;
	s32 cpu = -1;

	if (tick)
		cpu = scx_bpf_pick_idle_cpu(cast_mask(tick), 0);
	if (cpu < 0 && other)
		cpu = scx_bpf_pick_idle_cpu(cast_mask(other), 0);
	if (cpu < 0)
		return false;
	/* always kick what was claimed: a claimed CPU that is not kicked sleeps on */
	scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
	return bpf_cpumask_test_cpu(cpu, p->cpus_ptr);
}

static int steal_timerfn(void *map, int *key, struct steal_timer *st)
{
	u64 dsq = *key < MAX_CPUS ? (u64)*key : DSQ_GLOBAL_TICK;
	struct task_struct *head;
	struct task_ctx *tctx;
	u64 now = clock_now();

	st->armed_until = 0;
	head = __COMPAT_scx_bpf_dsq_peek(dsq);
	/* nothing waits any more: it started in time */
	if (!head)
		return 0;
	tctx = lookup_task_ctx(head);
	if (!tctx)
		return 0;
	if (elapsed(now, tctx->tick_start) <= steal_threshold_ns) {
		/* a newer head: wait for its own moment */
		arm_steal_timer(*key, tctx->tick_start, now);
		return 0;
	}
	/* late now: an idle CPU takes it (tick_dispatch); look again later while it waits */
	kick_idle_for(head);
	arm_steal_timer(*key, now, now);
	return 0;
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
	cctx->running_left = tctx->mspt;
	cctx->running_since = now;
	/* a runner dequeued from a local queue without running there is parked here now */
	unpark(tctx);
	__sync_fetch_and_add(&cctx->parked, 1);
	tctx->parked_on = cpu + 1;
}

/*
 * Claim an idle CPU for a runner that would wait at @near (its home): @prev,
 * the CPU it slept on, first (its cache, and its timer may have woken it
 * already); else near @near (the kernel's idle selection prefers its LLC
 * and node), tick CPUs first. May return @near itself, idle a moment.
 */
static s32 claim_idle_for(struct task_struct *p, s32 near, s32 prev)
{
	struct bpf_cpumask *tick = tick_cpumask, *other = other_cpumask;
	s32 cpu = -EBUSY;

	if (prev >= 0 && prev != near && bpf_cpumask_test_cpu(prev, p->cpus_ptr) &&
	    scx_bpf_test_and_clear_cpu_idle(prev))
		return prev;
	if (tick)
		cpu = scx_bpf_select_cpu_and(p, near, 0, cast_mask(tick), 0);
	if (cpu < 0 && other && !SCX_TICK_BREAK_NOSPILL)
		cpu = scx_bpf_select_cpu_and(p, near, 0, cast_mask(other), 0);
	return cpu;
}

/* Spill-over to an idle CPU near @near, tick CPUs first: @p starts there at once. */
static bool spill_idle(struct task_struct *p, struct task_ctx *tctx, s32 near, u64 enq_flags)
{
	u64 slice = group_deadline(tctx->group);
	s32 cpu = claim_idle_for(p, near, (enq_flags & SCX_ENQ_WAKEUP) ? tctx->wake_prev : -1);

	if (cpu < 0)
		return false;
	if (cpu == near) {
		/* home itself is idle a moment: wake it, the runner queues there in EDF order */
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		return false;
	}
	reserve(cpu, tctx, queue_key(tctx), clock_now());
	scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL_ON | cpu, slice, enq_flags);
	scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
	return true;
}

/*
 * @cpu runs other work @p may preempt: no runner, no share owed or running,
 * and nothing waiting in its local queue, which a runner put at its head
 * would overtake (runners waking there one after another would starve it).
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
	return cctx && bpf_cpumask_test_cpu(cpu, p->cpus_ptr) && !cctx->running_tick &&
	       !in_share(cctx, now) && !other_owed(cctx, now) &&
	       scx_bpf_dsq_nr_queued(SCX_DSQ_LOCAL_ON | cpu) <= 0;
}

/*
 * A CPU near @near running other work that @p may preempt: @self first if
 * given (a wake-up handled there: another CPU would need an IPI, and in a
 * guest the vCPU it wakes may first wait for a host core), else the same
 * LLC first. Never @near itself (the home, busy with runners), nor this
 * CPU otherwise: between two tasks it looks free, and a runner put at the
 * head of its local queue would overtake the EDF queue for good.
 * Probes at most MAX_PROBES * 4 CPUs; -1 when every CPU @p may use runs a
 * runner.
 */
static s32 preempt_target(struct task_struct *p, s32 near, s32 self, u64 now)
{
	u32 nr = scx_bpf_nr_cpu_ids(), want = llc_of(near), probes = 0, i;
	u32 here = bpf_get_smp_processor_id();
	s32 best = -1;

	if (SCX_TICK_BREAK_NOSTEAL)
		return -1;
	if (self >= 0 && self != near && free_for_runner(p, self, now))
		return self;
	bpf_for(i, 0, MAX_PROBES * 4) {
		u32 c;

		if (i >= nr)
			break;
		c = ((u32)near + 1 + i) % nr;
		if (c == (u32)near || c == here || !free_for_runner(p, c, now))
			continue;
		if (llc_of(c) == want)
			return c;
		if (best < 0)
			best = c;
		if (++probes >= MAX_PROBES)
			break;
	}
	return best;
}

/* Spill-over onto another CPU near @near running other work, which is preempted. */
static bool spill_preempt(struct task_struct *p, struct task_ctx *tctx, s32 near, u64 enq_flags)
{
	s32 self = (enq_flags & SCX_ENQ_WAKEUP) ? bpf_get_smp_processor_id() : -1;
	u64 now = clock_now();
	s32 best = preempt_target(p, near, self, now);

	if (best < 0)
		return false;
	reserve(best, tctx, queue_key(tctx), now);
	scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL_ON | best, group_deadline(tctx->group),
			   enq_flags | SCX_ENQ_PREEMPT);
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
	if (may_preempt(cctx, queue_key(tctx), now)) {
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
 * tick CPU running other work or a runner with a later deadline. Never this
 * CPU when the runner was re-queued by it (slice end, preemption): between
 * two tasks it looks free, and kicking it would preempt the next runner
 * at once, handing the CPU back and forth a few microseconds each.
 */
static void kick_for_global(struct task_struct *p, struct task_ctx *tctx, u64 now, u64 enq_flags)
{
	struct bpf_cpumask *mask = tick_cpumask;
	s32 self = bpf_get_smp_processor_id(), cpu;
	u32 i;

	if (!mask)
		return;
	cpu = scx_bpf_select_cpu_and(p, scx_bpf_task_cpu(p), 0, cast_mask(mask), 0);
	if (cpu >= 0) {
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		return;
	}
	bpf_for(i, 0, nr_tick_cpus) {
		struct cpu_ctx *cctx;

		if (i >= MAX_CPUS)
			break;
		cpu = tick_cpus[i & (MAX_CPUS - 1)];
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

/*
 * The tick ends at @now: count a deadline miss once per tick, with the
 * overshoot at its end, and stream it.
 */
static void account_miss(struct task_struct *p, struct task_ctx *tctx, u64 now)
{
	struct group_stats *gs;
	struct miss_event *e;
	u64 over;

	struct proc_tick *pt;
	u64 prev;

	if (SCX_TICK_BREAK_NOMISS || tctx->missed || !time_after(now, tctx->deadline))
		return;
	tctx->missed = true;
	/* a process's tick is missed once, whichever of its threads is late */
	if ((pt = proc_tick_of(p, tctx->group))) {
		prev = pt->missed_grid;
		if (!time_after(tctx->grid, prev) ||
		    __sync_val_compare_and_swap(&pt->missed_grid, prev, tctx->grid) != prev)
			return;
	}
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

/*
 * A tick starts at @start (@grid on the period grid) with @deadline:
 * counted, not yet on a CPU.
 */
static void count_tick(struct group_stats *gs)
{
	STAT_INC(ticks);
	if (gs)
		gs->ticks++;
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
static void proc_tick_begin(struct proc_tick *pt, u64 from, u64 grid, u64 deadline,
			    struct group_stats *gs)
{
	if (__sync_val_compare_and_swap(&pt->grid, from, grid) != from)
		return; /* another thread of the process started it */
	pt->deadline = deadline;
	pt->deadline_grid = grid;
	count_tick(gs);
}

/*
 * The thread works for its process's tick from @start: its deadline, and
 * its own CPU time in it from zero when it is a tick it had not joined.
 * @deadline: its own, if the tick's is not written yet.
 */
static void proc_tick_join(struct task_ctx *tctx, struct proc_tick *pt, u64 start, u64 deadline)
{
	u64 grid = pt->grid;

	if (pt->deadline_grid == grid && !SCX_TICK_BREAK_NOINHERIT)
		deadline = pt->deadline;
	if (grid != tctx->grid || !tctx->in_tick) {
		if (grid != tctx->grid) {
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
 * tick in progress or starts the next. Returns the grid the decision was
 * made from (for the trace), the start in @grid (0: joins or continues),
 * in @done whether the work of that tick looked done. Mirrors
 * dispatch::ProcessTick::wake().
 */
static __always_inline u64 proc_wake(struct task_ctx *tctx, struct proc_tick *pt, u64 now,
				     bool fresh, u64 *grid, bool *done)
{
	u64 from = pt->grid, deadline = now + group_deadline(tctx->group);
	u64 period = group_period(tctx->group);
	bool starts;

	if (period < MIN_RUNNER_SLICE_NS)
		period = MIN_RUNNER_SLICE_NS;
	*done = tick_done(tctx);
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
		if (tctx->grid && tctx->grid != from && !*done && !grid_tick(tctx, now, false, grid)) {
			tctx->in_tick = true;
			tctx->tick_start = now;
			*grid = 0;
			return tctx->grid;
		}
		/* not a step's start: near the next grid point, or later */
		*done = false;
		starts = grid_tick_at(from, period, now, false, grid);
	}
	if (starts) {
		deadline = tick_deadline(tctx->group, now, *grid);
		proc_tick_begin(pt, from, *grid, deadline, lookup_group_stats(tctx->group));
	} else {
		*grid = 0;
	}
	proc_tick_join(tctx, pt, now, deadline);
	return from;
}

/* CPU time a runner had in its tick. */
static void add_runtime(struct task_ctx *tctx, u64 ns)
{
	tctx->tick_runtime += ns;
}

static struct decision *trace_begin(s32 me, struct cpu_ctx *cctx, u64 now);
static void trace_end(struct cpu_ctx *cctx);

/* --trace-decisions: a wake-up's tick, before (@grid_before) and after. */
static __always_inline void trace_wake(struct task_struct *p, struct task_ctx *tctx, u64 now, u64 grid_before,
		       u64 grid_after, bool done, bool guess)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(-1);
	struct decision *d;

	if (!trace_decisions || !cctx || !(d = trace_begin(-1, cctx, now)))
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
	trace_end(cctx);
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
		bool fresh = proc_awake(p, tctx, pt, now);

		before = proc_wake(tctx, pt, now, fresh, &grid, &done);
		trace_wake(p, tctx, now, before, grid, done, false);
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
	} else if ((pt = proc_tick_of(p, tctx->group))) {
		/* the process's next tick, unless another of its threads moved it on */
		proc_tick_begin(pt, tctx->grid, grid + k * period, tctx->deadline + k * period, gs);
		proc_tick_join(tctx, pt, grid + k * period, tctx->deadline + k * period);
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

static void count_stolen(struct task_ctx *tctx)
{
	struct group_stats *gs;

	STAT_INC(dispatch_stolen);
	tctx->stolen = true;
	if ((gs = lookup_group_stats(tctx->group)))
		gs->steals++;
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

static void enqueue_tick(struct task_struct *p, struct task_ctx *tctx, u64 enq_flags)
{
	u64 now = clock_now();
	u64 slice = group_deadline(tctx->group), wait;
	s32 home, cpu;

	if (!tctx->in_tick) {
		struct proc_tick *pt = proc_tick_of(p, tctx->group);

		/*
		 * became a runner while runnable, or a new thread: its tick
		 * starts now, off the grid (its first wake-up starts the
		 * next). A process's thread joins the process's tick in
		 * progress, or has a tick of its own off the grid, not
		 * counted: a thread's start does not set the process's grid
		 * (a server's threads start at start-up, its ticks later; a
		 * grid set at start-up gave the first ticks early deadlines).
		 */
		if (!pt) {
			start_tick(p, tctx, now, 0);
		} else {
			proc_awake(p, tctx, pt, now);
			if (pt->grid && pt->deadline_grid == pt->grid && time_before(now, pt->deadline)) {
				proc_tick_join(tctx, pt, now, now + group_deadline(tctx->group));
			} else {
				learn_mspt(tctx);
				set_tick(tctx, now, 0, now + group_deadline(tctx->group));
			}
		}
	}
	tctx->runner = true;

	/* an affinity without tick CPUs: still a runner, on the CPUs it is allowed */
	if (!can_run_on_tick_cpu(p)) {
		cpu = scx_bpf_task_cpu(p);
		if (spill_idle(p, tctx, cpu, enq_flags) || spill_preempt(p, tctx, cpu, enq_flags))
			return;
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL_ON | cpu, slice, enq_flags);
		return;
	}

	/* --no-work-stealing: the seed's one shared EDF queue, served by all tick CPUs */
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
	if ((wait || home_runs_runner(home)) && spill_idle(p, tctx, home, enq_flags))
		return;
	/* overrun work takes idle CPUs, but no other CPU's work */
	if (!tctx->overrun && is_stealable(tctx, now, wait) && spill_preempt(p, tctx, home, enq_flags)) {
		count_stolen(tctx);
		return;
	}
	scx_bpf_dsq_insert_vtime(p, home, slice, queue_key(tctx), enq_flags);
	kick_home(home, tctx, now, enq_flags);
}

static void enqueue_other(struct task_struct *p, struct task_ctx *tctx, u64 enq_flags)
{
	struct bpf_cpumask *mask;
	u64 vtime;
	s32 cpu;

	if (tctx)
		tctx->runner = false;

	/*
	 * Never stall: per-CPU kthreads, and tasks allowed only on tick CPUs,
	 * run where they are, whatever mid-tick lending says.
	 */
	if (!SCX_TICK_BREAK_STALL && (p->nr_cpus_allowed == 1 || !can_run_on_other_cpu(p))) {
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, other_slice_ns, enq_flags);
		return;
	}

	vtime = tctx ? tctx->vtime : vtime_now;
	if (time_before(vtime, vtime_now - other_slice_ns))
		vtime = vtime_now - other_slice_ns;
	if (tctx)
		tctx->queued_at = clock_now();
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

/*
 * A waking runner's CPU, decided here on the waking CPU (dispatch::place()):
 * home and its cache first; a runner that would wait there (or preempt a
 * runner there) spills over to an idle CPU at once, and one predicted to
 * start later than the threshold at home preempts other work on another
 * CPU (this one first). Inserted on that CPU's local queue now, it is
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

	tctx->wake_prev = prev_cpu;
	tctx->spill_stolen = false;
	if (home < 0)
		return prev_cpu;
	now = clock_now();
	/* the tick this wake-up starts or continues (ops.runnable takes its hint, if any) */
	key = wake_key(tctx, now);
	wait = wait_at(home, key, now);
	if (!wait && !home_runs_runner(home))
		return home;
	cpu = claim_idle_for(p, home, prev_cpu);
	if (cpu == home)
		return home;
	if (cpu < 0) {
		/* predicted to start late at home (the tick starts now): preempt other work */
		if (!starts_late(now, now, wait) || (tctx->overrun && key == runner_key(tctx, 0)))
			return home;
		cpu = preempt_target(p, home, bpf_get_smp_processor_id(), now);
		if (cpu < 0)
			return home;
		flags = SCX_ENQ_PREEMPT;
		tctx->spill_stolen = true;
	}
	tctx->runner = true;
	reserve(cpu, tctx, key, now);
	scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, group_deadline(tctx->group), flags);
	return cpu;
}

s32 BPF_STRUCT_OPS(tick_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	struct task_ctx *tctx = lookup_task_ctx(p);
	struct bpf_cpumask *mask;
	s32 cpu;

	if (tctx && classify(p, tctx) >= 0)
		return select_runner_cpu(p, tctx, prev_cpu);

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

void BPF_STRUCT_OPS(tick_enqueue, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx = lookup_task_ctx(p);

	if (tctx && classify(p, tctx) >= 0)
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

/* @l may go before @g: no @g, or @l's deadline is not later (a tie goes to local). */
static bool local_first(struct task_struct *l, struct task_struct *g)
{
	return !g || !time_before(g->scx.dsq_vtime, l->scx.dsq_vtime);
}

/*
 * --trace-decisions (tests only): each poll for a runner records its inputs
 * and its pick, which src/trace.rs replays through dispatch::poll() and
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

static struct decision *trace_begin(s32 me, struct cpu_ctx *cctx, u64 now)
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

/*
 * Steal the head of @victim's queue if it is stealable (predicted to start
 * late behind the runner @victim runs) and may run here. Only the head is
 * looked at, by a lockless peek: a probe that takes nothing costs no lock
 * of the victim's queue (in an overcommitted guest its holder's vCPU may
 * wait for a host core: measured at 8 vCPUs on 2 cores, 0.5 ms per probe).
 * The head is then taken off the front of the queue; if another CPU took
 * it in between, the one behind it comes unchecked (a rare race that only
 * steals the next in EDF order early). A refusal is counted only for a
 * real candidate.
 */
static bool try_steal(s32 cpu, s32 victim, u64 now)
{
	struct cpu_ctx *vctx;
	struct task_struct *p;
	struct task_ctx *tctx;
	bool stolen = false, may_run;
	u64 ahead;

	if (SCX_TICK_BREAK_NOSTEAL)
		return false;
	p = scx_bpf_dsq_nr_queued(victim) > 0 ? __COMPAT_scx_bpf_dsq_peek(victim) : NULL;
	if (!p) {
		trace_probe(NULL, victim, 0, false);
		return false;
	}
	vctx = lookup_cpu_ctx(victim);
	ahead = vctx ? busy_for(vctx, now) : 0;
	tctx = lookup_task_ctx(p);
	may_run = tctx && bpf_cpumask_test_cpu(cpu, p->cpus_ptr);
	trace_probe(p, victim, ahead, may_run);
	if (!may_run)
		return false;
	if (!is_stealable(tctx, now, ahead)) {
		STAT_INC(steals_refused);
		return false;
	}
	if (scx_bpf_dsq_move_to_local(victim, 0)) {
		count_stolen(tctx);
		stolen = true;
	}
	trace_pick(TRACE_STEAL, tick_index(victim), stolen);
	return stolen;
}

/* The next steal candidate, round-robin over the tick CPUs, never @me (-1: none). */
static s32 next_victim(struct cpu_ctx *cctx, s32 me)
{
	u32 nr = nr_tick_cpus;
	u32 idx;

	if (me < 0) {
		if (nr < 1)
			return -1;
		cctx->steal_rr = (cctx->steal_rr + 1) % nr;
		idx = cctx->steal_rr;
	} else {
		if (nr < 2)
			return -1;
		cctx->steal_rr = (cctx->steal_rr + 1) % (nr - 1);
		idx = ((u32)me + 1 + cctx->steal_rr) % nr;
	}
	if (idx >= MAX_CPUS)
		return -1;
	return tick_cpus[idx & (MAX_CPUS - 1)];
}

/* Look at up to @tries steal candidates, round-robin. */
static bool steal_round(s32 cpu, s32 me, struct cpu_ctx *cctx, u32 tries, u64 now)
{
	u32 i;

	if (tries > MAX_PROBES)
		tries = MAX_PROBES;
	bpf_for(i, 0, tries) {
		s32 victim = next_victim(cctx, me);

		if (victim < 0)
			break;
		if (try_steal(cpu, victim, now))
			return true;
	}
	return false;
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
 *      it is stealable (a CPU with nothing else to run looks at up to
 *      MAX_PROBES candidates);
 *   3. else take the earlier of the two heads.
 */
static bool poll_tick_at(s32 cpu, s32 me, struct cpu_ctx *cctx, u64 now)
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
	    steal_round(cpu, me, cctx, has_head ? 1 : nr_tick_cpus - 1, now))
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

static bool poll_tick(s32 cpu, s32 me, struct cpu_ctx *cctx)
{
	u64 now = clock_now();
	bool ok;

	trace_begin(me, cctx, now);
	ok = poll_tick_at(cpu, me, cctx, now);
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
	u64 now = clock_now();
	struct decision *d = trace_begin(-1, cctx, now);
	bool allowed = global && bpf_cpumask_test_cpu(cpu, global->cpus_ptr);
	bool ok = false;

	if (d)
		trace_head(&d->global, global, -1, 0, allowed);
	if (allowed && is_stealable(lookup_task_ctx(global), now, 0)) {
		ok = take(DSQ_GLOBAL_TICK, true);
		trace_pick(TRACE_GLOBAL, -1, ok);
	}
	if (!ok)
		ok = work_stealing && steal_round(cpu, -1, cctx, nr_tick_cpus, now);
	trace_end(cctx);
	return ok;
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
	struct cpu_ctx *cctx = lookup_cpu_ctx(-1);
	s32 me = tick_index(cpu);
	u64 now = clock_now();

	if (!cctx)
		return;
	/*
	 * Never stall other work: its share first, when runners had the CPU
	 * too long (a tick CPU only if it may lend itself at all).
	 */
	if ((me < 0 || mid_tick_tasks) && other_owed(cctx, now) &&
	    scx_bpf_dsq_move_to_local(DSQ_OTHER, 0)) {
		cctx->share_until = now + OTHER_SHARE_SLICE_NS;
		STAT_INC(dispatch_other);
		return;
	}
	if (me < 0) {
		if (!SCX_TICK_BREAK_NOSPILL && take_late_runner(cpu, cctx))
			return;
		if (scx_bpf_dsq_move_to_local(DSQ_OTHER, 0))
			STAT_INC(dispatch_other);
		return;
	}

	if (poll_tick(cpu, me, cctx))
		return;

	/* the runners sleep: lend the CPU to other work if the next tick is far enough */
	if (mid_tick_tasks && !SCX_TICK_BREAK_NOLEND && lend_window(cctx, now) >= MIN_LEND_NS &&
	    scx_bpf_dsq_move_to_local(DSQ_OTHER, 0)) {
		STAT_INC(dispatch_other);
		STAT_INC(lends);
	}
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
	cctx->running_left = tctx->mspt > tctx->tick_runtime ? tctx->mspt - tctx->tick_runtime : 0;
	cctx->running_since = now;
	p->scx.slice = runner_slice(tctx, now);
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

/* Is @head (a queue's head, or NULL) a runner with a key before @key, allowed on @cpu? */
static bool goes_before(struct task_struct *head, u64 key, s32 cpu)
{
	return head && time_before(head->scx.dsq_vtime, key) && bpf_cpumask_test_cpu(cpu, head->cpus_ptr);
}

/* --trace-decisions: ops.tick's inputs and whether the runner yielded. */
static __always_inline void trace_yield(s32 cpu, struct cpu_ctx *cctx, u64 now, s32 q,
					struct task_struct *queued, struct task_struct *global,
					u64 key, u64 ran, bool parked, bool yielded)
{
	struct decision *d = trace_begin(tick_index(cpu), cctx, now);

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
		 * The kernel refills the slice of a CPU's only runnable task
		 * without ops.running, past the lend window: clip it again.
		 */
		if (!time_before(now, cctx->share_until) && tick_index(cpu) >= 0)
			clip_to_lend_window(p, cctx, now);
		return;
	}
	ran = elapsed(now, tctx->run_start);
	/*
	 * Still running at its deadline. The kernel refills the slice of the
	 * only runnable task on a CPU without ops.stopping/ops.running (no
	 * SCX_OPS_ENQ_LAST), so a runner alone on its CPU would run on in one
	 * endless tick: its next tick starts here, on the grid, as it would
	 * at the end of its slice (replenish).
	 */
	if (tctx->in_tick && !time_before(now, tctx->deadline) && !SCX_TICK_BREAK_NOTICKREPLENISH) {
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
		if (scx_bpf_dsq_nr_queued(SCX_DSQ_LOCAL) > 0 || other_owed(cctx, now))
			p->scx.slice = 0;
	}
	if (ran < RUNNER_QUANTUM_NS)
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

void BPF_STRUCT_OPS(tick_runnable, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx = lookup_task_ctx(p);

	/*
	 * Only a real wake-up starts a tick: the dequeue/enqueue pairs of
	 * sched_setaffinity, cgroup moves, nice changes and PI boosts do not.
	 */
	if (!tctx || !(enq_flags & SCX_ENQ_WAKEUP) || classify(p, tctx) < 0)
		return;
	wake_tick(p, tctx, clock_now());
	if (tctx->spill_stolen) {
		/* cleared here: a wake-up without ops.select_cpu (one allowed CPU) sets none */
		tctx->spill_stolen = false;
		count_stolen(tctx);
	}
}

/* The tick got its first CPU: record its start lateness. */
static void account_start(struct task_ctx *tctx, u64 now)
{
	struct group_stats *gs = lookup_group_stats(tctx->group);
	u64 lateness = elapsed(now, tctx->tick_start);

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
	u64 now = clock_now();
	s32 cpu = scx_bpf_task_cpu(p);

	if (!tctx || !cctx)
		return;
	tctx->run_start = now;
	cctx->running_tick = tctx->runner;

	if (tctx->runner) {
		unpark(tctx);
		take_hint_mid_run(p, tctx, now);
		/* its deadline passed while it waited: that tick is missed */
		if (tctx->in_tick && !time_before(now, tctx->deadline))
			replenish(p, tctx, now, false);
		/* homes move: a tick CPU that took it is its home now (the seed's steal) */
		if (work_stealing && tctx->home_seen && tick_index(cpu) >= 0 &&
		    group_may_home(tctx->group, cpu))
			tctx->home = cpu;
		if (!tctx->started) {
			tctx->started = true;
			account_start(tctx, now);
		}
		runner_on_cpu(p, tctx, cctx, now);
		return;
	}

	if (time_before(vtime_now, tctx->vtime))
		vtime_now = tctx->vtime;
	cctx->other_at = now;
	/* its owed share runs whole, unpreempted */
	if (time_before(now, cctx->share_until)) {
		p->scx.slice = cctx->share_until - now;
		tctx->share_turn = p->scx.slice;
		return;
	}
	/* other work on a tick CPU must end run_tasks_buffer before the next tick */
	if (tick_index(cpu) >= 0)
		clip_to_lend_window(p, cctx, now);
}

void BPF_STRUCT_OPS(tick_stopping, struct task_struct *p, bool runnable)
{
	struct task_ctx *tctx = lookup_task_ctx(p);
	struct cpu_ctx *cctx = lookup_cpu_ctx(-1);
	u64 now = clock_now(), cap, ran;

	if (cctx)
		cctx->running_tick = false;
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
		if (!runnable)
			return; /* it sleeps: quiescent ends the tick */
		take_hint_mid_run(p, tctx, now);
		/* still runnable at its deadline: the next tick on the grid */
		if (tctx->in_tick && !time_before(now, tctx->deadline))
			replenish(p, tctx, now, true);
		return;
	}
	/*
	 * Fair share among other tasks, scaled by weight. A low weight is
	 * charged many times its run time (nice 19: weight 1, 100 x), while
	 * the fair queue's clock moves about a slice per round of its tasks: a
	 * nice-19 CPU hog among 24 others waited 7 s, past the watchdog. No
	 * task owes more than two slices ahead of that clock, so it waits at
	 * most about two rounds; below that, weights keep their proportions.
	 */
	ran = elapsed(now, tctx->run_start);
	/*
	 * An owed share is a turn, paid whole, used or not: a task that wakes
	 * often and runs a moment (a timer, a kworker) paid only that moment,
	 * stayed the fair queue's head and took every share while runners
	 * kept the CPUs busy; CPU hogs behind it waited past the watchdog.
	 */
	if (tctx->share_turn && ran < tctx->share_turn && !SCX_TICK_BREAK_SHARECHARGE)
		ran = tctx->share_turn;
	tctx->share_turn = 0;
	tctx->vtime += ran * 100 / p->scx.weight;
	cap = vtime_now + 2 * other_slice_ns;
	if (!SCX_TICK_BREAK_NICESTALL && time_after(tctx->vtime, cap))
		tctx->vtime = cap;
	/*
	 * The fair queue's clock moves with the service given, not only when
	 * a task ahead of it starts: when runners leave other work only its
	 * owed shares, tasks that wake often (kworkers, RCU, a shell's
	 * commands) enter a slice behind the clock and took every share,
	 * which never moved it; CPU hogs and scx_tick itself waited past the
	 * watchdog beside four OpenTTD servers (vm/real_sim_server_keeps_its_speed).
	 */
	if (time_before(vtime_now, tctx->vtime) && !SCX_TICK_BREAK_SHARECHARGE)
		vtime_now = tctx->vtime;
}

void BPF_STRUCT_OPS(tick_quiescent, struct task_struct *p, u64 deq_flags)
{
	struct task_ctx *tctx = lookup_task_ctx(p);
	struct cpu_ctx *cctx;
	u64 now, next;
	s32 home;

	if (!tctx || !(deq_flags & SCX_DEQ_SLEEP))
		return;
	if (tctx->proc_key)
		proc_asleep(tctx, clock_now());
	if (!tctx->in_tick)
		return;

	/*
	 * It sleeps: late already, the tick is missed; a wake-up inside it
	 * continues it (wake_tick), so its CPU time and deadline stay.
	 */
	now = clock_now();
	account_miss(p, tctx, now);
	tctx->in_tick = false;
	if (!tctx->runner)
		return;

	/* remember when the home CPU's next runner is expected, for lending */
	home = tctx->home_seen ? tctx->home : scx_bpf_task_cpu(p);
	if (!tctx->wake_interval || tick_index(home) < 0)
		return;
	cctx = lookup_cpu_ctx(home);
	if (!cctx)
		return;
	next = tctx->last_wake + tctx->wake_interval;
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
	tctx->home = -1;
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
		if (cpu_online[cpu] && (tick_index(cpu) >= 0) == tick)
			bpf_cpumask_set_cpu(cpu, mask);
	}
	mask = bpf_kptr_xchg(slot, mask);
	if (mask)
		bpf_cpumask_release(mask);
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
	if (!ret)
		ret = init_steal_timer(MAX_CPUS);
	if (ret)
		return ret;

	bpf_for(i, 0, nr_tick_cpus) {
		s32 cpu;

		if (i >= MAX_CPUS)
			break;
		cpu = tick_cpus[i & (MAX_CPUS - 1)];
		ret = scx_bpf_create_dsq(cpu, -1);
		if (ret) {
			scx_bpf_error("failed to create the EDF queue of tick CPU %d", cpu);
			return ret;
		}
		ret = init_steal_timer(cpu);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * A higher class (an RT task, a stop task) took this CPU: what waits in its
 * local queue would wait for as long as that runs (a SCHED_FIFO hog: up to
 * the fair server's ~1 s). Give it back to enqueue, which places it anew;
 * tasks allowed only here come back to this CPU.
 */
void BPF_STRUCT_OPS(tick_cpu_release, s32 cpu, struct scx_cpu_release_args *args)
{
	scx_bpf_reenqueue_local();
}

void BPF_STRUCT_OPS(tick_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

SCX_OPS_DEFINE(tick_ops,
	       .select_cpu = (void *)tick_select_cpu,
	       .enqueue = (void *)tick_enqueue,
	       .dispatch = (void *)tick_dispatch,
	       .tick = (void *)tick_tick,
	       .runnable = (void *)tick_runnable,
	       .running = (void *)tick_running,
	       .stopping = (void *)tick_stopping,
	       .quiescent = (void *)tick_quiescent,
	       .cpu_release = (void *)tick_cpu_release,
	       .init_task = (void *)tick_init_task,
	       .init = (void *)tick_init,
	       .exit = (void *)tick_exit,
	       .name = "scx_tick");

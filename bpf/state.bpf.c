/* SPDX-License-Identifier: GPL-2.0 */
/*
 * State (part of main.bpf.c, included first): the configuration userspace
 * writes before load, the maps, the contexts of a task, a CPU and a
 * process tick, and the lookups the other files use: the clock, tick
 * CPUs, tick groups, which group a task is in.
 */

/* Configuration, written by userspace between open and load. */
const volatile u32 nr_tick_cpus;
const volatile s32 tick_cpus[MAX_CPUS];         /* sorted by (node, LLC, id): locality order */
const volatile u32 tick_index_plus1[MAX_CPUS];  /* cpu -> index + 1, 0: not a tick CPU */
const volatile struct span tick_span[MAX_CPUS]; /* cpu -> its LLC and node among the tick CPUs */
const volatile u32 nr_cpu_order;
const volatile s32 cpu_order[MAX_CPUS];         /* the online CPUs, sorted by (node, LLC, id) */
const volatile u32 cpu_pos_plus1[MAX_CPUS];     /* cpu -> position in cpu_order + 1 */
const volatile struct span cpu_span[MAX_CPUS];  /* cpu -> its LLC and node in cpu_order */
const volatile u32 cpu_llc[MAX_CPUS];           /* cpu -> LLC id */
const volatile u32 cpu_node[MAX_CPUS];          /* cpu -> NUMA node: homes stay in theirs */
const volatile u32 nr_fair_qs = 1;              /* fair queues of other work: one per LLC */
const volatile u32 cpu_fair_q[MAX_CPUS];        /* cpu -> its LLC's fair queue, sorted by (node, LLC) */
const volatile struct span fair_q_span[MAX_CPUS]; /* fair queue -> its node's among them */
const volatile bool cpu_online[MAX_CPUS];       /* online at load (hotplug re-attaches) */
const volatile u32 cpu_sibling_plus1[MAX_CPUS]; /* cpu -> another SMT thread of its core + 1, 0: none */
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
/* Bumped by the kernel's task events, read by userspace's scans. */
#include "events.bpf.c"
/* Fair-queue clock of the other tasks (one for every LLC's queue). */
static u64 vtime_now;
/*
 * CPUs searching several queues for a runner to steal right now: past half
 * the tick CPUs, another searcher looks at one (throttled stealing, as
 * Tokio's scheduler limits its searching workers).
 */
static u32 nr_searching;

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
	s32 homed_on;       /* CPU + 1 whose homed count includes it (set_home()), 0: none */
	bool runner;        /* queued as a tick runner */
	bool in_tick;       /* a tick is in progress */
	bool started;       /* this tick has been on a CPU */
	bool missed;        /* this tick's miss is already counted */
	bool stolen;        /* this tick started away from its home */
	bool spill_stolen;  /* ops.select_cpu preempted another CPU for it: stolen once its tick starts */
	bool replenished;   /* this tick began at a replenishment: its runner has not slept since a miss */
	bool overrun;       /* its own work overran (replenish()): ranks a period later (runner_key) */
	bool grid_guess;    /* its grid came from its first wake-up: the next gives it way (grid_tick()) */
	bool helper;        /* a helper of its process's step (proc_helper()): its ticks count no miss */
	u64 tick_start;     /* wake time, or grid time of a replenished tick */
	u64 grid;           /* where the tick started on the group's period grid: its identity */
	u64 deadline;       /* absolute deadline of the current tick */
	u64 tick_runtime;   /* CPU time of the current tick so far */
	u64 mspt;           /* EWMA of CPU time per tick (MSPT in CanvasMC's Affinity scheduler): predicts */
	u64 step_cpu;       /* EWMA of its CPU time in its process's steps that began at a wake-up and ended in a sleep (proc_roll_over()) */
	bool step_woke;     /* its tick in progress began at a wake-up (not a roll-over or a replenishment) */
	u64 last_wake;
	u64 slept_at;       /* when it last went to sleep (ops.quiescent): sleep_ends_overrun() */
	u64 wake_interval;  /* EWMA of the time between wake-ups, predicts the next tick */
	u64 burst;          /* EWMA of its CPU time from a wake-up to its sleep (a runner only) */
	u64 burst_ran;      /* CPU time since its last wake-up */
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
 * others join it with its deadline (helpers, proc_helper(), only join);
 * it is counted, and missed, once.
 * Threads of one process on several CPUs update it at once: the start of
 * a tick and its miss are claimed by compare-and-swap. Keyed by group <<
 * 32 | tgid. Mirrors dispatch::ProcessTick.
 */
struct proc_tick {
	u64 grid;           /* where its tick in progress started on the grid, 0: none yet */
	u64 deadline;
	u64 deadline_grid;  /* the tick @deadline belongs to (a start in progress on another CPU) */
	u64 missed_grid;    /* the last tick whose miss was counted */
	u64 started;        /* when its tick in progress started: a wake-up, or a replenishment */
	s64 busy;           /* its stepping threads awake (runnable or running) */
	u64 idle_since;     /* when the last of them went to sleep */
	u64 heavy;          /* the MSPT of its heaviest thread (proc_helper()) */
	u64 heavy_at;       /* when that thread last woke */
	u32 heavy_tid;
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
	bool running_overrun; /* that runner's work overran (replenish()): on-time runners may take the CPU */
	u64 running_left;     /* its predicted remaining CPU time at running_since */
	u64 running_since;
	u32 steal_rr;         /* round-robin position among the tick CPUs */
	u64 other_at;         /* other work last started here */
	u64 share_until;      /* other work running its share here: no runner preempts it */
	u64 next_wake;        /* predicted next wake of a runner homed here */
	u32 parked;           /* runners a spill-over put in this CPU's local queue that have not run yet */
	u32 homed;            /* runners whose home this is (set_home()) */
	s32 steal_hint;       /* tick index + 1 of a queue a steal timer woke this CPU for, 0: none */
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

/* Runners whose home is @cpu: more than one, and they share it. */
static u32 homed(s32 cpu)
{
	struct cpu_ctx *c = cpu >= 0 ? lookup_cpu_ctx(cpu) : NULL;

	return c ? c->homed : 0;
}

/* A runner's home no longer counts (it left its group, or exits). */
static void unhome(struct task_ctx *tctx)
{
	struct cpu_ctx *c;

	if (tctx->homed_on && (c = lookup_cpu_ctx(tctx->homed_on - 1)) && c->homed)
		__sync_fetch_and_sub(&c->homed, 1);
	tctx->homed_on = 0;
}

/*
 * A tick CPU that took a runner becomes its home only where that evens the
 * homes out (@cpu homes at least two fewer runners than @home): a steal
 * from a shared home moves the stolen runner's home, one from a runner
 * alone at its home does not (it would only make the stealer's home
 * shared). Mirrors dispatch::home_moves().
 */
static bool homes_here(s32 cpu, s32 home)
{
	return cpu != home && homed(cpu) + 1 < homed(home);
}

/* @tctx's home is @cpu (-1: none), counted there. */
static void set_home(struct task_ctx *tctx, s32 cpu)
{
	struct cpu_ctx *c;

	tctx->home = cpu;
	if (tctx->homed_on == cpu + 1)
		return;
	unhome(tctx);
	if (cpu >= 0 && (c = lookup_cpu_ctx(cpu))) {
		__sync_fetch_and_add(&c->homed, 1);
		tctx->homed_on = cpu + 1;
	}
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

/*
 * @cpu (below MAX_CPUS) as an index the verifier knows is in bounds. The
 * mask is an instruction clang cannot drop: written in C, clang removed it
 * wherever a bound check before it made it redundant, and which reads
 * kept it changed with unrelated code (breakage builds failed to load,
 * "access may be outside object bounds").
 */
static __always_inline u32 cpu_slot(u32 cpu)
{
	u64 c = cpu;

	asm volatile("%0 &= %1" : "+r"(c) : "i"(MAX_CPUS - 1));
	return c;
}

/* Index of @cpu among the tick CPUs, or -1. */
static s32 tick_index(s32 cpu)
{
	u32 c = cpu;

	if (c >= MAX_CPUS)
		return -1;
	return (s32)tick_index_plus1[cpu_slot(c)] - 1;
}

/* @cpu's entry of a per-CPU rodata table, 0 past MAX_CPUS. */
static u32 per_cpu_u32(const volatile u32 *table, u32 cpu)
{
	if (cpu >= MAX_CPUS)
		return 0;
	return table[cpu_slot(cpu)];
}

static u32 llc_of(u32 cpu)
{
	return per_cpu_u32(cpu_llc, cpu);
}

static u32 node_of(u32 cpu)
{
	return per_cpu_u32(cpu_node, cpu);
}

/*
 * Element @k of the ring [@lo, @hi) without [@xlo, @xhi) (inside it), started
 * @rot places on, in *@out; else @k less the ring's size. Mirrors the loop of
 * locality::nth_near().
 */
static bool ring_at(u32 lo, u32 hi, u32 xlo, u32 xhi, u32 rot, u32 *k, s32 *out)
{
	u32 size, i;

	if (hi < lo || xhi < xlo || hi - lo < xhi - xlo)
		return false;
	size = (hi - lo) - (xhi - xlo);
	if (*k >= size) {
		*k -= size;
		return false;
	}
	i = lo + (rot + *k) % size;
	*out = i >= xlo ? i + (xhi - xlo) : i;
	return true;
}

/*
 * The @k-th position near a CPU whose span is @s, in a list of @n CPUs
 * sorted by (node, LLC, id), never @me (its own position, -1: none): its
 * LLC first, then its node, then the rest, each started @rot places on.
 * -1 past the end. No loop: the cost of one candidate does not grow with
 * the machine. Mirrors locality::nth_near().
 */
static s32 nth_near(u32 n, const volatile struct span *s, s32 me, u32 rot, u32 k)
{
	u32 llc_lo = s->llc_lo, llc_hi = s->llc_hi, node_lo = s->node_lo, node_hi = s->node_hi;
	u32 mlo = llc_lo, mhi = llc_lo;
	s32 out = -1;

	if (SCX_TICK_BREAK_NOLOCALITY) {
		llc_lo = node_lo = 0;
		llc_hi = node_hi = n;
	}
	if (me >= 0 && (u32)me >= llc_lo && (u32)me < llc_hi) {
		mlo = me;
		mhi = me + 1;
	}
	if (ring_at(llc_lo, llc_hi, mlo, mhi, rot, &k, &out) ||
	    ring_at(node_lo, node_hi, llc_lo, llc_hi, rot, &k, &out) ||
	    ring_at(0, n, node_lo, node_hi, rot, &k, &out))
		return out;
	return -1;
}

/*
 * The @k-th tick CPU near @cpu (never itself), from @rot on; -1: none. A
 * global function, verified once on its own: inlined into the polls'
 * loops, its branches made the verifier give up on tick_dispatch.
 */
__noinline s32 near_tick_cpu(s32 cpu, u32 rot, u32 k)
{
	u32 c = cpu, i;
	s32 pos;

	if (c >= MAX_CPUS)
		return -1;
	pos = nth_near(nr_tick_cpus, &tick_span[cpu_slot(c)], tick_index(cpu), rot, k);
	i = pos;
	if (pos < 0 || i >= MAX_CPUS)
		return -1;
	return tick_cpus[cpu_slot(i)];
}

/* Online CPUs in @cpu's NUMA node (cpu_order's span), @cpu included. */
static u32 node_size(s32 cpu)
{
	u32 c = cpu_slot(cpu);

	return cpu_span[c].node_hi - cpu_span[c].node_lo;
}

/* The @k-th online CPU near @cpu (never itself), from @rot on; -1: none (global, as above). */
__noinline s32 near_cpu(s32 cpu, u32 rot, u32 k)
{
	u32 c = cpu, i;
	s32 pos;

	if (c >= MAX_CPUS)
		return -1;
	c = cpu_slot(c);
	pos = nth_near(nr_cpu_order, &cpu_span[c], (s32)cpu_pos_plus1[c] - 1, rot, k);
	i = pos;
	if (pos < 0 || i >= MAX_CPUS)
		return -1;
	return cpu_order[cpu_slot(i)];
}

/*
 * Does the other SMT thread of @cpu's core run a tick runner? A global
 * function, verified on its own: inlined into ops.running, clang dropped
 * the bound masks of its table reads.
 */
__noinline bool runner_beside(s32 cpu)
{
	u32 sibling = per_cpu_u32(cpu_sibling_plus1, cpu);
	struct cpu_ctx *sctx;

	if (!sibling)
		return false;
	sctx = lookup_cpu_ctx(sibling - 1);
	return sctx && sctx->running_tick;
}

/* The fair queue of other work of @cpu's LLC. */
static u64 fair_q(s32 cpu)
{
	if (SCX_TICK_BREAK_ONEFAIRQ)
		return DSQ_OTHER;
	return DSQ_OTHER + per_cpu_u32(cpu_fair_q, cpu);
}

/*
 * The @k-th fair queue near @cpu's own (never it), from @rot on: its
 * node's first, then the rest; -1: none (global, as above). Mirrors
 * locality::nth_near() on locality::fair_queues().
 */
__noinline s64 near_fair_q(s32 cpu, u32 rot, u32 k)
{
	u32 q = per_cpu_u32(cpu_fair_q, cpu);
	s32 pos;

	if (q >= MAX_CPUS)
		return -1;
	pos = nth_near(nr_fair_qs, &fair_q_span[cpu_slot(q)], q, rot, k);
	if (pos < 0 || pos >= MAX_CPUS)
		return -1;
	return DSQ_OTHER + pos;
}

/* May @cpu be a home of @group's runners (its `cpus` list)? */
static bool group_may_home(s32 group, s32 cpu)
{
	u32 g = group, c = cpu;

	if (g >= MAX_GROUPS || c >= MAX_CPUS)
		return false;
	return group_home_mask[g & (MAX_GROUPS - 1)][cpu_slot(c) / 64] & (1ULL << (c % 64));
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
	/* counted at its home again as a runner of its (new) group: runner_home() */
	unhome(tctx);
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
	if (SCX_TICK_BREAK_PERIODDEADLINE)
		return group_period_ns[g & (MAX_GROUPS - 1)];
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

/* Is @p queued as a tick runner? */
static bool is_runner(struct task_struct *p)
{
	struct task_ctx *tctx = lookup_task_ctx(p);

	return tctx && tctx->runner;
}

static bool can_run_on_tick_cpu(struct task_struct *p)
{
	struct bpf_cpumask *mask = tick_cpumask;

	return mask && bpf_cpumask_intersects(cast_mask(mask), p->cpus_ptr);
}

#define MAX_RT_PRIO 100 /* include/linux/sched/prio.h: priorities below it are RT and deadline tasks */
/*
 * How long ours wait on a CPU held by a higher class: the kernel's ext
 * deadline server runs them there 50 ms a second, and only once started
 * (a runner left there waited 0.8-1 s a time).
 */
#define HELD_WAIT_NS (1000 * 1000 * 1000ULL)

/*
 * A higher class (SCHED_FIFO/RR, SCHED_DEADLINE, stop) runs on @cpu: nothing
 * of ours runs there until it ends, except in the kernel's ext deadline
 * server's slices (50 ms a second, and only once the server is started).
 * Read from the CPU's current task: ops.cpu_release()/cpu_acquire() tell
 * it only roughly (each server pick acquires the CPU while the RT task
 * still holds it). A runner put there waited 0.8-9 s
 * (vm/rt_hogs_strand_nothing).
 */
static bool held_by_higher_class(s32 cpu)
{
	struct task_struct *curr;

	if (SCX_TICK_BREAK_RTFREE)
		return false;
	curr = __COMPAT_scx_bpf_cpu_curr(cpu);
	return curr && curr->prio < MAX_RT_PRIO;
}

static bool can_run_on_other_cpu(struct task_struct *p)
{
	struct bpf_cpumask *mask = other_cpumask;

	return mask && bpf_cpumask_intersects(cast_mask(mask), p->cpus_ptr);
}

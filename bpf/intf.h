/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Types and constants shared by the BPF policy (main.bpf.c) and the Rust
 * loader. Rust sees them through the bindings scx_cargo generates from this
 * file, so the two sides cannot drift.
 */
#ifndef __SCX_TICK_INTF_H
#define __SCX_TICK_INTF_H

#ifndef __VMLINUX_H__
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef int s32;
typedef unsigned long long u64;
typedef long long s64;
#endif

enum tick_consts {
	MAX_CPUS = 1024,
	MAX_GROUPS = 16,
	/* deepest cgroup nesting looked at when classifying a task */
	MAX_CGROUP_DEPTH = 16,
	/*
	 * cpu DSQ ids are the cpu number; the global EDF queue follows them,
	 * then the fair queues of other work, one per LLC: DSQ_OTHER + the
	 * LLC's place among them (cpu_fair_q)
	 */
	DSQ_GLOBAL_TICK = MAX_CPUS,
	DSQ_OTHER = MAX_CPUS + 1,
	/* a start is counted as a late start from this lateness on */
	LATE_START_NS = 1000 * 1000,
	/* never lend a tick CPU for less than this */
	MIN_LEND_NS = 50 * 1000,
	/*
	 * The slice of a task that keeps its CPU when its slice ended and
	 * nothing else was dispatched (keep_prev()): the kernel's
	 * SCX_SLICE_DFL, which it refilled without asking before
	 * SCX_OPS_ENQ_LAST.
	 */
	KEEP_SLICE_NS = 20 * 1000 * 1000,
	/* a runner's slice ends at its deadline, but never sooner than this */
	MIN_RUNNER_SLICE_NS = 200 * 1000,
	/*
	 * A runner that has run this long on a tick CPU yields it to a runner
	 * waiting there with an earlier queue key (deadline plus CPU time had
	 * this tick): runners with close deadlines take turns.
	 */
	RUNNER_QUANTUM_NS = 3 * 1000 * 1000,
	/*
	 * Never stall other work: when the fair queue's head has waited
	 * OTHER_SHARE_PERIOD_NS, a CPU that started no other work for as long
	 * runs it first, for
	 * OTHER_SHARE_SLICE_NS that no runner preempts (at most 5 % of a CPU
	 * under runner overload, as the kernel's RT throttling leaves).
	 */
	OTHER_SHARE_PERIOD_NS = 100 * 1000 * 1000,
	OTHER_SHARE_SLICE_NS = 5 * 1000 * 1000,
	/* how many slices of other work a task's vtime may run ahead of the fair queue's clock */
	OTHER_LEAD_SLICES = 10,
	/* remote queues (or CPUs) one dispatch or placement looks at, at most */
	MAX_PROBES = 8,
	/*
	 * Log-linear buckets of the lateness/overshoot histograms: below
	 * HIST_SUB us one bucket per us, then HIST_SUB buckets per power of two
	 * (each at most 1/HIST_SUB = 12.5 % wide), up to ~2^34 us.
	 */
	HIST_SUB_BITS = 3,
	HIST_SUB = 1 << HIST_SUB_BITS,
	NR_HIST_BUCKETS = 256,
	/* deadline hint slots per tick group: 512 x 8 bytes, one page */
	MAX_HINT_SLOTS = 512,
	/* the longest relative deadline, in periods (a server that catches up) */
	MAX_DEADLINE_PERIODS = 4,
	/*
	 * a hint further ahead than this many periods is absurd and ignored:
	 * the longest deadline plus the sleep to the tick it is for, and one
	 * period of slack
	 */
	HINT_MAX_AHEAD_PERIODS = MAX_DEADLINE_PERIODS + 2,
	/* processes whose tick is tracked at once (tick = "process" groups) */
	MAX_PROC_TICKS = 8192,
};

/* Per-CPU counters, summed by userspace. */
/*
 * Per CPU. Ticks, misses and late starts are counted once, per tick group
 * and CPU (struct group_stats): userspace sums them.
 */
struct cpu_stats {
	u64 dispatch_local;   /* runner taken from this CPU's EDF queue */
	u64 dispatch_global;  /* runner taken from the global EDF queue */
	u64 dispatch_stolen;  /* runner started away from its home CPU because it would have started late there */
	u64 dispatch_other;   /* other task taken from a fair queue */
	u64 other_far;        /* ... from another LLC's fair queue */
	u64 other_local;      /* ... that last ran on this CPU, taken ahead of the head */
	u64 other_probes;     /* other LLCs' fair queues looked at for it (bounded per dispatch) */
	u64 other_started;    /* other work started on a CPU (from any queue) */
	u64 other_beside_runner; /* ... on a core whose other SMT thread ran a runner */
	u64 steals_refused;   /* a steal candidate was predicted to start within the threshold at home */
	u64 lends;            /* a tick CPU ran other work while its runners slept */
	u64 decisions;        /* polls, runner placements and steal-timer expiries */
	u64 probes;           /* remote queues and CPUs those looked at (bounded per decision) */
	u64 moves_llc;        /* a runner started away from its home, in the home's LLC */
	u64 moves_node;       /* ... in another LLC of the home's node */
	u64 moves_far;        /* ... on another node */
	u64 moves_far_near_free; /* ... while a CPU of the home's node was idle */
};

/*
 * Where a CPU's LLC and node lie in a list of CPUs sorted by (node, LLC,
 * id): [llc_lo, llc_hi) inside [node_lo, node_hi). Nearest first: a CPU
 * looks at its LLC, then its node, then the rest (src/model/locality.rs).
 */
struct span {
	u16 llc_lo;
	u16 llc_hi;
	u16 node_lo;
	u16 node_hi;
};

/*
 * Per tick group, per CPU. Histogram bucket b < HIST_SUB counts values in
 * [b, b + 1) us; above, bucket HIST_SUB + (e - HIST_SUB_BITS) * HIST_SUB + s
 * counts [(HIST_SUB + s) << (e - HIST_SUB_BITS), (HIST_SUB + s + 1) << (e -
 * HIST_SUB_BITS)) us; the last bucket is open. (src/model/histogram.rs:
 * bucket_of.)
 */
struct group_stats {
	u64 ticks;
	u64 misses;
	u64 late_starts;
	u64 steals;           /* ticks stolen by another tick CPU */
	u64 lateness_max_ns;
	u64 lateness_sum_ns;
	u64 overshoot_max_ns;
	u64 overshoot_sum_ns;
	u64 hints_used;       /* ticks whose deadline came from a deadline hint */
	u64 hints_ignored;    /* hints refused as stale or absurd (implicit deadline used) */
	u64 lateness_hist[NR_HIST_BUCKETS];
	u64 overshoot_hist[NR_HIST_BUCKETS];
};

/* One deadline miss, streamed through the miss_events ring buffer. */
struct miss_event {
	u64 at_ns;          /* when the tick ended (CLOCK_MONOTONIC) */
	u64 deadline_ns;    /* the tick's deadline (CLOCK_MONOTONIC) */
	u64 overshoot_ns;   /* how far past the deadline the tick ended */
	u32 tid;
	s32 cpu;
	u32 group;
	u32 stolen;         /* the tick was stolen by another tick CPU */
	char comm[16];
};

/*
 * Test-only decision trace (scx_tick --trace-decisions FILE): one poll of a
 * CPU for a runner, its inputs and its pick, one check of ops.tick
 * whether the running runner yields, or one runner's wake-up and the tick
 * it belongs to, replayed through the model (src/model/trace.rs: dispatch::poll,
 * dispatch::poll_spill, dispatch::yields, dispatch::wake).
 */
enum trace_kind {
	TRACE_POLL = 0,
	TRACE_YIELD = 1,
	TRACE_WAKEUP = 2,
	TRACE_ROLLOVER = 3, /* a process's tick at work past its next grid point (dispatch::ProcessTick::roll_over) */
};

enum trace_pick {
	TRACE_LOCAL = 0,
	TRACE_GLOBAL = 1,
	TRACE_STEAL = 2,
	TRACE_NOTHING = 3,
};

/* A queue's head as the poll saw it. */
struct trace_head {
	u64 deadline;       /* its queue key */
	u64 tick_start;
	u64 ahead;          /* a steal candidate: the work its CPU still runs */
	s32 queue;          /* tick index of the queue, -1: the global queue */
	u32 present;        /* 0: empty, or its head may not run here */
};

struct decision {
	u64 now;
	u64 steal_threshold_ns;
	s32 me;             /* tick index of the polling CPU, -1: a non-tick CPU */
	u32 nr_tick_cpus;
	u32 work_stealing;
	u32 rr_before;      /* the CPU's round-robin steal cursor */
	u32 rr_after;
	s32 pick;           /* enum trace_pick, -1: none yet */
	s32 victim;         /* TRACE_STEAL: tick index of the queue stolen from */
	u32 raced;          /* the pick's move failed (its head went away): later steps ran */
	u32 nr_probed;
	u32 kind;           /* enum trace_kind */
	struct span span;   /* TRACE_POLL: the polling CPU's, among the tick CPUs */
	s32 hint;           /* TRACE_POLL: tick index a steal timer sent it to, -1: none */
	u32 throttled;      /* TRACE_POLL: enough CPUs searched already: one probe */
	struct trace_head local;  /* TRACE_YIELD: the head of the CPU's (or home's) queue */
	struct trace_head global;
	struct trace_head probed[MAX_PROBES];
	/* TRACE_YIELD only: the running runner's key and time on the CPU */
	u64 key;
	u64 ran;
	u32 parked;         /* a runner waits parked in this CPU's local queue */
	u32 yielded;        /* the decision: its slice ended */
	/* TRACE_WAKEUP only: the tick in progress and the tick the wake-up belongs to */
	u64 grid_before;    /* where the tick in progress started on the grid, 0: none */
	u64 period_ns;
	u64 rel_deadline_ns;
	u64 grid_after;     /* the next tick's grid point, 0: the wake-up continues the tick */
	u64 deadline_after; /* the deadline after the wake-up */
	u64 tid;            /* the runner */
	u64 work_done;      /* its tick had the CPU time its ticks usually take */
	u64 grid_guess;     /* grid_before is a guess (dispatch::thread_wake()) */
	/*
	 * TRACE_WAKEUP of a thread of a tick = "process" group (proc_wake = 1),
	 * replayed through dispatch::ProcessTick: grid_before is the process's
	 * tick in progress, work_done the thread's own part of it; before:
	 */
	u32 proc_wake;
	u32 fresh;          /* it ended a quiet spell of the process's stepping threads */
	u64 proc_deadline;  /* the deadline of the process's tick in progress */
	u64 proc_started;   /* when that tick started (0: none yet) */
	u64 proc_idle_since; /* when its last quiet spell began */
	u64 own_grid;       /* the thread's own tick (0: none) and its deadline */
	u64 own_deadline;
	u64 mspt;           /* the thread's MSPT, and the process's heaviest thread's */
	u64 heavy;
	u64 heavy_at;
	u32 heavy_tid;
	/* after: */
	u32 helper;         /* it was a helper: it joined */
	u64 grid_joined;    /* the tick it works for (0: one of its own off the grid) */
	u64 late_step;      /* the tick it started is a late step: its latest on-time start, 0: none */
};

/*
 * A tick group as userspace registers it, keyed by cgroup id: its index
 * into the group_* configuration (period, deadline, homes: rodata).
 */
struct tick_group {
	u32 idx;
};

/*
 * Deadline hints: each tick group has one memory-mappable array of
 * MAX_HINT_SLOTS u64 slots. A registered runner writes the absolute
 * CLOCK_MONOTONIC deadline (ns) of its next tick into its slot before it
 * sleeps; the tick that starts at its next wake-up takes it and clears the
 * slot (one hint, one tick). 0 = no hint.
 */
struct hint_slot_ref {
	u32 group;
	u32 slot;
};

#endif /* __SCX_TICK_INTF_H */

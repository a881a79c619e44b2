/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_tick: earliest-deadline-first scheduling for tick runners.
 *
 *  1. A tick group is a cgroup userspace registers (tick_groups), with the
 *     cgroups below it. Its threads are tick runners (classify()); every
 *     other task is other work. Each group has its own period and
 *     relative deadline.
 *
 *  2. A tick is one period of a runner's work. Its identity is a point on
 *     its group's period grid: a wake-up starts the next tick only near or
 *     past the next grid point (or half a period on, its work done); an
 *     earlier one continues the tick in progress (a runner blocked
 *     mid-tick keeps its deadline). A new deadline hint starts one too. In
 *     a tick = "process" group the threads of a process share one tick
 *     (struct proc_tick), and its wake-up after a quiet spell starts one;
 *     its helpers (threads of little CPU time) only join the tick.
 *
 *  3. A tick's deadline is its start (its grid point, if later) plus the
 *     group's relative deadline, or the deadline hint the runner published
 *     in its memory-mapped slot. A tick that ends (its runner sleeps) past
 *     its deadline is missed; a runner still running or runnable at its
 *     deadline misses it and starts the next tick on the grid, whole
 *     periods later (replenish()). A runner's queue key is its deadline
 *     plus the CPU time its tick has had (runner_key()).
 *
 *  4. Tick CPUs are the CPUs userspace chose for runners; each has an EDF
 *     queue, the DSQ numbered as the CPU. A runner's home CPU is the tick
 *     CPU whose queue it waits in: userspace gives the first (home_cpus),
 *     steals that even the homes out move it; a runner away from a home it
 *     shares stays where it slept. Without a home, and with --no-work-stealing, a
 *     runner waits in the global EDF queue (DSQ_GLOBAL_TICK).
 *
 *  5. A tick CPU polls as the Affinity scheduler of CanvasMC does (a
 *     Minecraft server's tick scheduler, whose behaviour and configuration
 *     names scx_tick brings into the kernel): an overdue head of its own
 *     or the global queue; else one steal candidate, round-robin; else the
 *     earlier head (poll_tick_at(), modelled by src/model/dispatch.rs).
 *
 *  6. Steal: a queued runner whose predicted start (now plus the work
 *     ahead of it) lies more than steal_threshold after its tick's start
 *     is stealable: another CPU may take it. A steal timer per queue
 *     wakes an idle CPU when its head becomes stealable by lateness alone.
 *
 *  7. Spill-over: the tick CPUs are the runners' home, not their fence. A
 *     runner that would wait at home takes an idle CPU at once (tick CPUs
 *     first, near home); one predicted to start late there preempts other
 *     work on another CPU; a non-tick CPU takes a late runner before its
 *     other work. Kicks make the CPU a runner was queued for look at it.
 *
 *  8. Turns: a runner that has run RUNNER_QUANTUM_NS yields its CPU
 *     (ops.tick) to a waiting runner with an earlier key, or to one parked
 *     in its local queue: runners with close deadlines share the CPUs.
 *
 *  9. Other work runs from fair vtime queues, one per LLC (a CPU takes
 *     its own cache's first), on the non-tick CPUs first. A tick CPU
 *     whose runners sleep lends itself to it for its
 *     lend window, which ends run_tasks_buffer before its next runner's
 *     predicted wake-up (not at all with --no-mid-tick). Other work's owed
 *     share: when its fair queue's head has waited OTHER_SHARE_PERIOD_NS
 *     and a CPU started no other work for as long, that CPU runs it for
 *     OTHER_SHARE_SLICE_NS that no runner preempts. Nothing stalls:
 *     per-CPU kthreads and tasks allowed only on tick CPUs run where they are.
 *
 * 10. One translation unit; the concerns, included below in this order:
 *       state.bpf.c      configuration, maps, task/CPU/process-tick contexts, lookups
 *       stats.bpf.c      counters, histograms, miss events
 *       trace.bpf.c      the decision trace (tests only: --trace-decisions)
 *       ticks.bpf.c      the tick model: hints, grid, deadlines, keys, replenish
 *       other.bpf.c      other work: fair queues, owed share, lend window; ops.stopping
 *       queues.bpf.c     polling, stealing, steal timers, turns (ops.tick)
 *       placement.bpf.c  where a runner waits: home, spill-over, kicks
 *     and here the other callbacks and the ops table. intf.h is shared with
 *     Rust; breakages.h declares the test-only breakages (scripts/mutants.sh).
 *
 * 11. Helpers that a callback reaches by several paths are global functions
 *     (take_other(), steal_round(), try_steal(), spill_idle(),
 *     spill_preempt()): the verifier checks a global function once, a
 *     static one again on every path that calls it. __weak: clang then
 *     passes every argument even where a breakage leaves one unused (the
 *     verifier refused such a call's missing argument). At load the
 *     verifier processed 82.7k instructions before, 48.4k so (kernel 7.3);
 *     start to `enabled` in a 4-vCPU guest took 4.6-6.6 s before, 3.1-3.8 s
 *     so (beside 8 hogs 35-38 s, 17-23 s: records/probes/load-time-2026-11-30/).
 *     Static still: those 6.16 refuses as global (keep_prev() returns
 *     void; free_for_runner() does a task storage lookup that ops.init's
 *     steal timer callback reaches, sleepable).
 */
#include <scx/common.bpf.h>
#include <bpf_atomic.h> /* smp_rmb(), smp_wmb(): barrier() on x86, a full barrier elsewhere */
#include "intf.h"
#include "breakages.h"

char _license[] SEC("license") = "GPL";

UEI_DEFINE(uei);

#include "state.bpf.c"
#include "stats.bpf.c"
#include "trace.bpf.c"
#include "ticks.bpf.c"
#include "other.bpf.c"
#include "queues.bpf.c"
#include "placement.bpf.c"

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

	bool runner = tctx && classify(p, tctx) >= 0;

	/*
	 * The last task here, its slice ended, and tick_dispatch() did not
	 * keep it (keep_prev()): lent work past its lend window waits in the
	 * fair queue (enqueue_other(), which keeps a task that may not leave
	 * here). A runner (a path keep_prev() did not see) runs on, as the
	 * kernel would run it without SCX_OPS_ENQ_LAST.
	 */
	if ((enq_flags & SCX_ENQ_LAST) && runner) {
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, KEEP_SLICE_NS, enq_flags);
		return;
	}
	if (runner)
		enqueue_tick(p, tctx, enq_flags);
	else
		enqueue_other(p, tctx, enq_flags);
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
	if ((me < 0 || mid_tick_tasks) && other_owed(cpu, cctx, now) && take_other(cpu, now, true)) {
		cctx->share_until = now + OTHER_SHARE_SLICE_NS;
		return;
	}
	if (me < 0) {
		if (!SCX_TICK_BREAK_NOSPILL && take_late_runner(cpu, cctx))
			return;
		if (!take_other(cpu, now, false))
			keep_prev(prev, cpu, false, cctx, now);
		return;
	}

	if (poll_tick(cpu, me, cctx))
		return;

	/*
	 * A runner whose slice ended and that no queued runner goes before
	 * keeps the CPU (keep_prev()): lent work would push it aside, into a
	 * queue no other CPU looks at until it is late.
	 */
	if (prev && (prev->scx.flags & SCX_TASK_QUEUED) && is_runner(prev)) {
		keep_prev(prev, cpu, true, cctx, now);
		return;
	}

	/* the runners sleep: lend the CPU to other work if the next tick is far enough */
	if (mid_tick_tasks && !SCX_TICK_BREAK_NOLEND && lend_window(cctx, now) >= MIN_LEND_NS &&
	    take_other(cpu, now, false)) {
		if (!SCX_TICK_BREAK_NOLENDCOUNT)
			STAT_INC(lends);
		return;
	}
	keep_prev(prev, cpu, true, cctx, now);
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

void BPF_STRUCT_OPS(tick_running, struct task_struct *p)
{
	struct task_ctx *tctx = lookup_task_ctx(p);
	struct cpu_ctx *cctx = lookup_cpu_ctx(-1);
	u64 now = clock_now();
	s32 cpu = scx_bpf_task_cpu(p), from;

	if (!tctx || !cctx)
		return;
	tctx->run_start = now;
	cctx->running_tick = tctx->runner;
	cctx->running_overrun = false; /* runner_on_cpu() sets it for a runner */
	/* also a runner that became other work while parked (moved out of its group) */
	unpark(tctx);

	if (tctx->runner) {
		take_hint_mid_run(p, tctx, now);
		/* its deadline passed while it waited: that tick is missed */
		if (tctx->in_tick && !time_before(now, tctx->deadline))
			replenish(p, tctx, now, false);
		/*
		 * homes move: a tick CPU that took it is its home now where that
		 * evens the homes out (a steal in the Affinity scheduler of
		 * CanvasMC moves the region to the stealer's queue), within its
		 * node: its memory stays there
		 */
		from = tctx->home_seen ? tctx->home : -1;
		if (work_stealing && tctx->home_seen && tick_index(cpu) >= 0 &&
		    group_may_home(tctx->group, cpu) && node_of(cpu) == node_of(tctx->home) &&
		    homes_here(cpu, tctx->home))
			set_home(tctx, cpu);
		if (!tctx->started) {
			/* where its tick starts, against its home (counted once a tick) */
			if (from >= 0 && cpu != from)
				count_move(p, from, cpu);
			tctx->started = true;
			account_start(tctx, now);
		}
		runner_on_cpu(p, tctx, cctx, now);
		return;
	}

	advance_fair_clock(tctx, cpu);
	cctx->other_at = now;
	STAT_INC(other_started);
	if (runner_beside(cpu))
		STAT_INC(other_beside_runner);
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

void BPF_STRUCT_OPS(tick_quiescent, struct task_struct *p, u64 deq_flags)
{
	struct task_ctx *tctx = lookup_task_ctx(p);
	struct cpu_ctx *cctx;
	u64 now, next;
	s32 home;

	if (!tctx || !(deq_flags & SCX_DEQ_SLEEP))
		return;
	now = clock_now();
	tctx->slept_at = now;
	if (tctx->proc_key)
		proc_asleep(tctx, now);
	if (!tctx->in_tick)
		return;

	/*
	 * It sleeps: late already, the tick is missed; a wake-up inside it
	 * continues it (wake_tick), so its CPU time and deadline stay.
	 */
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

void BPF_STRUCT_OPS(tick_exit_task, struct task_struct *p, struct scx_exit_task_args *args)
{
	struct task_ctx *tctx = lookup_task_ctx(p);

	if (tctx)
		unhome(tctx);
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
		ret = init_steal_timer(MAX_CPUS);
	if (ret)
		return ret;

	bpf_for(i, 0, nr_fair_qs) {
		ret = scx_bpf_create_dsq(DSQ_OTHER + i, -1);
		if (ret) {
			scx_bpf_error("failed to create fair queue %u", i);
			return ret;
		}
	}

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
 * the ext server's ~1 s). Give it back to enqueue, which places it anew
 * (on this CPU, in irq work, while the RT task runs); tasks allowed only
 * here come back to this CPU. Runners are placed elsewhere while the CPU
 * is held (held_by_higher_class()).
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
	       .tick = (void *)tick_tick,		/* queues.bpf.c: turns */
	       .runnable = (void *)tick_runnable,
	       .running = (void *)tick_running,
	       .stopping = (void *)tick_stopping,	/* other.bpf.c: charges */
	       .quiescent = (void *)tick_quiescent,
	       .cpu_release = (void *)tick_cpu_release,
	       .init_task = (void *)tick_init_task,
	       .exit_task = (void *)tick_exit_task,
	       .init = (void *)tick_init,
	       .exit = (void *)tick_exit,
	       /*
	        * Exiting tasks through ops.enqueue too (nothing here looks a
	        * task up by pid). Without it the kernel puts them on the local
	        * queue of the CPU they were on, and re-queues them there from
	        * tick_cpu_release(): an exiting thread preempted by a SCHED_FIFO
	        * hog waited behind it for 6.8 s (the soak, 2026-11-28).
	        */
	       .flags = (SCX_TICK_BREAK_EXITLOCAL ? 0 : SCX_OPS_ENQ_EXITING) |
			/* keep_prev(): lent work past its lend window leaves the CPU */
			SCX_OPS_ENQ_LAST,
	       .name = "scx_tick");

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Deliberate breakages, for the test suite's proof only: scripts/mutants.sh
 * builds scx_tick with SCX_TICK_BREAK=<name> (build.rs turns it into
 * -DSCX_TICK_BREAK_<NAME>=1) and checks that the scenarios that name it in
 * their "# Catches:" line fail. A normal build has every one 0, and clang
 * drops the code.
 *
 * This is the one list of them: build.rs and scripts/mutants.sh read the
 * names from here, so each is declared in exactly one form, in the order
 * mutants.sh runs them: an #ifndef SCX_TICK_BREAK_<NAME> block whose
 * #define of it to 0 ends in the comment "<name>: what it breaks" (<NAME>
 * is <name> upper case, '-' as '_').
 *
 * The last ones break the Rust code (scx_tick, and scx_tick_user for the
 * userspace mode: names "user-..."): build.rs also makes every breakage a
 * constant scx_tick::breakages::SCX_TICK_BREAK_<NAME>, true only in the
 * build it names, which the Rust code tests as the BPF code tests the
 * macro (and the compiler drops the broken branch of a normal build).
 */
#ifndef __SCX_TICK_BREAKAGES_H
#define __SCX_TICK_BREAKAGES_H

#ifndef SCX_TICK_BREAK_FIFO
#define SCX_TICK_BREAK_FIFO 0 /* fifo: runners queued in wake order, not by deadline */
#endif
#ifndef SCX_TICK_BREAK_NOSTEAL
#define SCX_TICK_BREAK_NOSTEAL 0 /* nosteal: no CPU ever takes another's runner */
#endif
#ifndef SCX_TICK_BREAK_STEAL_EARLY
#define SCX_TICK_BREAK_STEAL_EARLY 0 /* steal-early: every queued runner is stealable, threshold ignored */
#endif
#ifndef SCX_TICK_BREAK_NOLEND
#define SCX_TICK_BREAK_NOLEND 0 /* nolend: tick CPUs never lent to other work */
#endif
#ifndef SCX_TICK_BREAK_NOMISS
#define SCX_TICK_BREAK_NOMISS 0 /* nomiss: deadline misses never counted */
#endif
#ifndef SCX_TICK_BREAK_STALL
#define SCX_TICK_BREAK_STALL 0 /* stall: tasks allowed only on tick CPUs wait in the shared queue */
#endif
#ifndef SCX_TICK_BREAK_SELFKICK
#define SCX_TICK_BREAK_SELFKICK 0 /* selfkick: a runner re-queued on the shared queue kicks the CPU that re-queued it */
#endif
#ifndef SCX_TICK_BREAK_NOPARKED
#define SCX_TICK_BREAK_NOPARKED 0 /* noparked: a runner parked behind another on a CPU gets no turn */
#endif
#ifndef SCX_TICK_BREAK_HOMETURN
#define SCX_TICK_BREAK_HOMETURN 0 /* hometurn: a runner spilled to a non-tick CPU takes turns with its home's queue */
#endif
#ifndef SCX_TICK_BREAK_NICESTALL
#define SCX_TICK_BREAK_NICESTALL 0 /* nicestall: a low-weight task's fair-queue debt is not capped */
#endif
#ifndef SCX_TICK_BREAK_NOSPILL
#define SCX_TICK_BREAK_NOSPILL 0 /* nospill: runners never run on a non-tick CPU (no spill-over) */
#endif
#ifndef SCX_TICK_BREAK_WAKETICKS
#define SCX_TICK_BREAK_WAKETICKS 0 /* waketicks: every wake-up starts a tick: no identity from the period grid */
#endif
#ifndef SCX_TICK_BREAK_NOTICKREPLENISH
#define SCX_TICK_BREAK_NOTICKREPLENISH 0 /* notickreplenish: a runner alone on its CPU past its deadline starts no next tick */
#endif
#ifndef SCX_TICK_BREAK_THREADTICKS
#define SCX_TICK_BREAK_THREADTICKS 0 /* threadticks: tick = "process" ignored: each thread has its own ticks */
#endif
#ifndef SCX_TICK_BREAK_NOHELPERS
#define SCX_TICK_BREAK_NOHELPERS 0 /* nohelpers: a process's light threads start and split its ticks like its stepping ones */
#endif
#ifndef SCX_TICK_BREAK_NOINHERIT
#define SCX_TICK_BREAK_NOINHERIT 0 /* noinherit: a thread joining its process's tick keeps its own deadline (wake-up + deadline) */
#endif
#ifndef SCX_TICK_BREAK_NODEMOTE
#define SCX_TICK_BREAK_NODEMOTE 0 /* nodemote: overrun work (past a missed deadline) keeps its replenished key, level with on-time ticks */
#endif
#ifndef SCX_TICK_BREAK_OVERRUNSTICKS
#define SCX_TICK_BREAK_OVERRUNSTICKS 0 /* overrunsticks: a runner that slept since its miss stays replenished and overrun work */
#endif
#ifndef SCX_TICK_BREAK_OVERRUNKEEPS
#define SCX_TICK_BREAK_OVERRUNKEEPS 0 /* overrunkeeps: a CPU running overrun work is no place for an on-time runner to spill to */
#endif
#ifndef SCX_TICK_BREAK_EXITLOCAL
#define SCX_TICK_BREAK_EXITLOCAL 0 /* exitlocal: exiting tasks skip ops.enqueue and wait on the local queue of the CPU they left */
#endif
#ifndef SCX_TICK_BREAK_RTFREE
#define SCX_TICK_BREAK_RTFREE 0 /* rtfree: a CPU an RT task holds looks free to a runner that spills over, and keeps one it took */
#endif
#ifndef SCX_TICK_BREAK_NOSTEPS
#define SCX_TICK_BREAK_NOSTEPS 0 /* nosteps: a process's wake-up after a quiet spell is no step: the grid alone decides */
#endif
#ifndef SCX_TICK_BREAK_NOLATESTEPS
#define SCX_TICK_BREAK_NOLATESTEPS 0 /* nolatesteps: a process's step that starts more than 1.5 periods after the one before it started is no miss */
#endif
#ifndef SCX_TICK_BREAK_NOROLLOVER
#define SCX_TICK_BREAK_NOROLLOVER 0 /* norollover: a process's tick still at work past the next grid point, its usual work done, goes on until its deadline (catch-up steps are one tick) */
#endif
#ifndef SCX_TICK_BREAK_NOHINTS
#define SCX_TICK_BREAK_NOHINTS 0 /* nohints: a deadline hint starts its tick and is counted as used, but the tick gets the implicit deadline (wake-up + the group's) */
#endif
#ifndef SCX_TICK_BREAK_CLOCKCHARGE
#define SCX_TICK_BREAK_CLOCKCHARGE 0 /* clockcharge: the fair queue's clock moves to each stopped task's charged vtime (weights barely count) */
#endif
#ifndef SCX_TICK_BREAK_NOLOCALITY
#define SCX_TICK_BREAK_NOLOCALITY 0 /* nolocality: steals and spill-overs look at CPUs in list order, not nearest first */
#endif
#ifndef SCX_TICK_BREAK_NOOTHERLOCALITY
#define SCX_TICK_BREAK_NOOTHERLOCALITY 0 /* nootherlocality: a CPU takes the fair queue's head, never a task that last ran on it */
#endif
#ifndef SCX_TICK_BREAK_ONEFAIRQ
#define SCX_TICK_BREAK_ONEFAIRQ 0 /* onefairq: one machine-wide fair queue of other work, not one per LLC */
#endif
#ifndef SCX_TICK_BREAK_NOSTEALCOUNT
#define SCX_TICK_BREAK_NOSTEALCOUNT 0 /* nostealcount: a steal moves the runner but is not counted */
#endif
#ifndef SCX_TICK_BREAK_NOLENDCOUNT
#define SCX_TICK_BREAK_NOLENDCOUNT 0 /* nolendcount: a tick CPU lent to other work is not counted */
#endif
#ifndef SCX_TICK_BREAK_NOLATENESS
#define SCX_TICK_BREAK_NOLATENESS 0 /* nolateness: a tick's start lateness is not recorded (late starts, lateness histogram) */
#endif
#ifndef SCX_TICK_BREAK_NOHINTFILTER
#define SCX_TICK_BREAK_NOHINTFILTER 0 /* nohintfilter: stale and absurd deadline hints are used, not ignored */
#endif
#ifndef SCX_TICK_BREAK_PERIODDEADLINE
#define SCX_TICK_BREAK_PERIODDEADLINE 0 /* perioddeadline: a group's deadline option is ignored: every tick is due a period after it starts */
#endif
#ifndef SCX_TICK_BREAK_NOTURNS
#define SCX_TICK_BREAK_NOTURNS 0 /* noturns: runners never yield a turn in ops.tick: one keeps its CPU until its slice ends at its deadline */
#endif
#ifndef SCX_TICK_BREAK_NOTICKCOUNT
#define SCX_TICK_BREAK_NOTICKCOUNT 0 /* notickcount: a tick that starts is not counted (ticks, ticks/s) */
#endif
#ifndef SCX_TICK_BREAK_NOTIMER
#define SCX_TICK_BREAK_NOTIMER 0 /* notimer: a queued runner's steal timer is never armed (only dispatches find late runners) */
#endif
#ifndef SCX_TICK_BREAK_NOLENDBUFFER
#define SCX_TICK_BREAK_NOLENDBUFFER 0 /* nolendbuffer: lent work may run until the next runner wakes (no run-tasks buffer) */
#endif
#ifndef SCX_TICK_BREAK_SHAREDHOME
#define SCX_TICK_BREAK_SHAREDHOME 0 /* sharedhome: a runner away from a shared home goes back to it at every wake-up */
#endif
#ifndef SCX_TICK_BREAK_NORENAME
#define SCX_TICK_BREAK_NORENAME 0 /* norename: a renamed thread is no task event: a group selecting threads by name finds it at the next full scan */
#endif

/* Rust: scx_tick's userspace side */
#ifndef SCX_TICK_BREAK_NORESTORE
#define SCX_TICK_BREAK_NORESTORE 0 /* norestore: threads pinned by --pin hard keep that affinity when scx_tick exits */
#endif
#ifndef SCX_TICK_BREAK_NOMOVEBACK
#define SCX_TICK_BREAK_NOMOVEBACK 0 /* nomoveback: threads selected by name stay in scx_tick's child cgroups when it exits */
#endif
#ifndef SCX_TICK_BREAK_TAGALL
#define SCX_TICK_BREAK_TAGALL 0 /* tagall: scx_tick tag --thread-name moves every thread of the process, not only those named so */
#endif
#ifndef SCX_TICK_BREAK_NOPIN
#define SCX_TICK_BREAK_NOPIN 0 /* nopin: --pin hard leaves the runners' affinity as it was (they are not pinned) */
#endif
#ifndef SCX_TICK_BREAK_SAMEHOME
#define SCX_TICK_BREAK_SAMEHOME 0 /* samehome: every runner is homed on its group's first home CPU, not the least loaded */
#endif
#ifndef SCX_TICK_BREAK_SELECTALL
#define SCX_TICK_BREAK_SELECTALL 0 /* selectall: a group that selects threads by name takes every thread of the matching process */
#endif
#ifndef SCX_TICK_BREAK_STALEPLAN
#define SCX_TICK_BREAK_STALEPLAN 0 /* staleplan: after CPU hotplug scx_tick re-attaches with its first plan, not one chosen from the CPUs online */
#endif
#ifndef SCX_TICK_BREAK_NOAUTH
#define SCX_TICK_BREAK_NOAUTH 0 /* noauth: any user may register deadline hints for a tick group's thread, not only root or the cgroup's owner */
#endif
/* Rust: the userspace mode (scx_tick --userspace, user/) */
#ifndef SCX_TICK_BREAK_USER_NOMISS
#define SCX_TICK_BREAK_USER_NOMISS 0 /* user-nomiss: the userspace mode never counts a deadline miss */
#endif
#ifndef SCX_TICK_BREAK_USER_RESTARTOK
#define SCX_TICK_BREAK_USER_RESTARTOK 0 /* user-restartok: the userspace mode exits 0, saying nothing, when the kernel asks for a restart (CPU hotplug) */
#endif

#endif /* __SCX_TICK_BREAKAGES_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Task events userspace's scans wait for (part of state.bpf.c). The
 * membership and pinning scans read /proc and cgroup files; beside busy
 * servers that was most of scx_tick's own CPU, spent finding nothing new.
 * These say when there may be something new, and which processes changed,
 * so a scan runs only then and reads only those (and everything every few
 * seconds regardless: src/run/events.rs).
 */

/* more changes between two scans than this: the scan reads everything */
#define CHANGED_SLOTS 256

/* A process or thread was created or exited: the lists of tasks changed. */
u64 tasks_gen;
/* A cgroup was made or removed: a group's cgroup may exist now, or not. */
u64 cgroups_gen;
/*
 * Processes whose name, command line or cgroup changed (an exec, a
 * renamed thread, a thread moved to another cgroup): the i-th is
 * changed_tgids[i % CHANGED_SLOTS], for i below changed_gen. Userspace
 * reads each range twice (a slot may be written just after the count
 * moved), and everything when more came than the ring holds.
 */
u64 changed_gen;
u32 changed_tgids[CHANGED_SLOTS];

static void process_changed(struct task_struct *p)
{
	u64 i = changed_gen;

	/* an exec renames its task too: one slot for both (a race only costs a slot) */
	if (i && changed_tgids[(i - 1) % CHANGED_SLOTS] == p->tgid)
		return;
	i = __sync_fetch_and_add(&changed_gen, 1);
	changed_tgids[i % CHANGED_SLOTS] = p->tgid;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(tick_ev_fork, struct task_struct *parent, struct task_struct *child)
{
	__sync_fetch_and_add(&tasks_gen, 1);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(tick_ev_exit, struct task_struct *p)
{
	__sync_fetch_and_add(&tasks_gen, 1);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(tick_ev_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	process_changed(p);
	return 0;
}

SEC("tp_btf/task_rename")
int BPF_PROG(tick_ev_rename, struct task_struct *task, const char *comm)
{
	if (SCX_TICK_BREAK_NORENAME)
		return 0;
	process_changed(task);
	return 0;
}

SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(tick_ev_cgroup_move, struct cgroup *dst, const char *path, struct task_struct *task,
	     bool threadgroup)
{
	process_changed(task);
	return 0;
}

SEC("tp_btf/cgroup_mkdir")
int tick_ev_cgroup_mkdir(u64 *ctx)
{
	__sync_fetch_and_add(&cgroups_gen, 1);
	return 0;
}

SEC("tp_btf/cgroup_rmdir")
int tick_ev_cgroup_rmdir(u64 *ctx)
{
	__sync_fetch_and_add(&cgroups_gen, 1);
	return 0;
}

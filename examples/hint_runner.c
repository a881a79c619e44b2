/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tick runner in C that tells scx_tick the exact deadline of each tick
 * (deadline hints, hint/include/scx_tick_hint.h). It ticks every
 * --period-ms on a grid of CLOCK_MONOTONIC shifted by --phase-ms, burns
 * --work-ms of CPU per tick and counts the ticks that end after
 * --deadline-ms from their start. With --hint it publishes each deadline;
 * --bad-hint stale|absurd publishes a wrong one instead (three periods old,
 * or ten periods ahead), which scx_tick must ignore.
 *
 *   cc -O2 -Ihint/include examples/hint_runner.c -Ltarget/release \
 *      -l:libscx_tick_hint.a -lpthread -ldl -lm -o hint_runner
 *   ./hint_runner --period-ms 50 --phase-ms 2 --work-ms 3 --deadline-ms 12 --duration-s 8 --hint
 *
 * Run it inside a tick group (e.g. echo $$ > /sys/fs/cgroup/tick/cgroup.procs).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scx_tick_hint.h"

static unsigned long long now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void sleep_until(unsigned long long t)
{
	struct timespec ts = { .tv_sec = t / 1000000000ULL, .tv_nsec = t % 1000000000ULL };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* Burn @ns of this thread's CPU time, however often it is preempted. */
static void burn(unsigned long long ns)
{
	unsigned long long end = now_ns(CLOCK_THREAD_CPUTIME_ID) + ns;
	volatile unsigned long long x = 0;

	while (now_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ULL + i;
}

static double arg(int argc, char **argv, const char *name, double dflt)
{
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], name))
			return atof(argv[i + 1]);
	return dflt;
}

int main(int argc, char **argv)
{
	const unsigned long long ms = 1000000ULL;
	unsigned long long period = arg(argc, argv, "--period-ms", 50) * ms;
	unsigned long long phase = arg(argc, argv, "--phase-ms", 0) * ms;
	unsigned long long work = arg(argc, argv, "--work-ms", 5) * ms;
	unsigned long long deadline = arg(argc, argv, "--deadline-ms", 50) * ms;
	unsigned long long duration = arg(argc, argv, "--duration-s", 5) * 1000 * ms;
	int use_hint = 0, ticks = 0, misses = 0;
	long long skew = 0;
	struct scx_tick_hint *hint = NULL;
	unsigned long long next, end;

	for (int i = 1; i < argc; i++) {
		use_hint |= !strcmp(argv[i], "--hint");
		if (!strcmp(argv[i], "--bad-hint") && i + 1 < argc) {
			use_hint = 1;
			skew = !strcmp(argv[i + 1], "stale") ? -3 * (long long)period - (long long)deadline
							     : 10 * (long long)period;
		}
	}
	if (!period || deadline > 4 * period) {
		fprintf(stderr, "hint_runner: --period-ms must be above 0 and --deadline-ms at most 4 periods\n");
		return 2;
	}
	if (use_hint && !(hint = scx_tick_hint_register(NULL))) {
		fprintf(stderr, "hint_runner: cannot register for deadline hints: %s (%s)\n",
			scx_tick_hint_last_error(), strerror(errno));
		return 1;
	}

	/* the grid: every runner started with the same period ticks in step */
	next = (now_ns(CLOCK_MONOTONIC) / period + 2) * period + phase;
	end = next + duration;
	while (next < end) {
		unsigned long long done;

		if (hint)
			scx_tick_hint_set_deadline(hint, next + deadline + skew);
		sleep_until(next);
		burn(work);
		done = now_ns(CLOCK_MONOTONIC);
		ticks++;
		misses += done > next + deadline;
		next += period;
		while (next + period < done) /* skip ticks lost entirely */
			next += period;
	}
	printf("ticks=%d misses=%d hint=%s\n", ticks, misses, hint ? "yes" : "no");
	scx_tick_hint_free(hint);
	return 0;
}

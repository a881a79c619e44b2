/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_tick deadline hints: a tick runner publishes the exact deadline of its
 * next tick through shared memory; scx_tick's EDF policy uses it instead of
 * wake time + the group's relative deadline. Link with -lscx_tick_hint
 * (target/release/libscx_tick_hint.so or .a, built by cargo).
 *
 *   struct scx_tick_hint *h = scx_tick_hint_register(NULL); // on the runner thread
 *   for (;;) {
 *           run_tick();
 *           scx_tick_hint_set_deadline(h, next_start_ns + budget_ns); // before sleeping
 *           sleep_until(next_start_ns);
 *   }
 *
 * From a JVM: call the three functions through the foreign-function API
 * (java.lang.foreign) from the tick runner thread itself.
 */
#ifndef SCX_TICK_HINT_H
#define SCX_TICK_HINT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct scx_tick_hint;

/*
 * Register the calling thread, which must be in a tick group of a running
 * scx_tick (NULL: the default socket /run/scx_tick/hints.sock). Returns
 * NULL with errno set: ENOENT/ECONNREFUSED (scx_tick not running), EACCES
 * (not in a tick group, or not the owner of the group's cgroup).
 */
struct scx_tick_hint *scx_tick_hint_register(const char *socket);

/* Why the last registration on this thread failed, in words ("" after a success). */
const char *scx_tick_hint_last_error(void);

/*
 * The absolute CLOCK_MONOTONIC deadline (ns) of the tick that starts at the
 * thread's next wake-up. Applies to that one tick; no syscall.
 */
void scx_tick_hint_set_deadline(const struct scx_tick_hint *h, uint64_t deadline_ns);

void scx_tick_hint_free(struct scx_tick_hint *h);

#ifdef __cplusplus
}
#endif

#endif /* SCX_TICK_HINT_H */

/*
 * fork_util.h -- for the tests whose program forks children one after
 * another under `posixtrace record` (record_memory.c, record_gone.c):
 * fu_child() forks a child that records n events of type ev, each with a
 * payload of size bytes (a multiple of 4, at most FU_PAYLOAD_MAX) whose
 * first word counts them from 0, and ends; and waits for it.  Its pid,
 * or -1 if it could not be forked or waited for.  (The events' call site
 * is this file's line: a test that looks for it looks for fork_util.h.)
 */
#ifndef POSIXTRACE_FORK_UTIL_H
#define POSIXTRACE_FORK_UTIL_H

#include <stdint.h>
#include <trace.h>
#include <unistd.h>
#include <sys/wait.h>

#define FU_PAYLOAD_MAX 512

static inline pid_t fu_child(trace_event_id_t ev, int n, size_t size)
{
	pid_t p = fork();

	if (p == 0) {
		int32_t pl[FU_PAYLOAD_MAX / 4] = { 0 };
		for (pl[0] = 0; pl[0] < n; pl[0]++)
			posix_trace_event(ev, pl, size <= sizeof pl ? size : sizeof pl);
		_exit(0);
	}
	return p > 0 && waitpid(p, NULL, 0) == p ? p : -1;
}

#endif

/*
 * many_procs.h -- a traced program of many processes, for tests/ctf_many
 * and bench/ctf_many: procs children forked and started together (a pipe
 * closed), so that their events interleave in time, each recording n
 * events of type "many-ev" whose payload is its number and the event's
 * (two int32).  Run as the traced program; 0 when every child exited 0.
 */
#ifndef PT_MANY_PROCS_H
#define PT_MANY_PROCS_H

#include <stdint.h>
#include <sys/wait.h>
#include <trace.h>
#include <unistd.h>

static inline int many_procs_run(int procs, int n)
{
	trace_event_id_t ev;
	int go[2];

	if (posix_trace_eventid_open("many-ev", &ev) != 0 || pipe(go) != 0)
		return 2;
	for (int i = 0; i < procs; i++) {
		pid_t p = fork();
		if (p < 0)
			return 3;
		if (p == 0) {
			char c;
			close(go[1]);
			if (read(go[0], &c, 1) != 0)
				_exit(4);
			for (int32_t k = 0; k < n; k++) {
				int32_t d[2] = { i, k };
				posix_trace_event(ev, d, sizeof d);
			}
			_exit(0);
		}
	}
	close(go[0]);
	close(go[1]);
	int st, bad = 0;
	while (wait(&st) > 0)
		bad += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	return bad ? 5 : 0;
}

#endif

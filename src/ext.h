/*
 * ext.h -- what the library tells the posixtrace command and the tests
 * beyond the POSIX interface: how many events were lost, where the
 * standard only marks that some were (POSIX_TRACE_OVERFLOW carries no
 * data).  Not exported from libposixtrace.so: its users link the static
 * library.
 */
#ifndef POSIXTRACE_EXT_H
#define POSIXTRACE_EXT_H

#include <stdint.h>
#include <trace.h>

struct pt_ext_losses {
	/* The stream's count of lost events (all causes: overwritten in LOOP,
	 * dropped while full) as of the last POSIX_TRACE_RESUME a getnext on
	 * this id returned; resume_ok is 0 if none did, or (a log) if that
	 * RESUME did not say (logs of format version 1). */
	int resume_ok;
	uint64_t at_resume;
	/* The stream's count in all: for a stream, now; for a log, as it was
	 * when the log was finished (total_ok is 0 if the log has no such
	 * record: cut short, or version 1). */
	int total_ok;
	uint64_t total;
	/* A log only, from its END block: events lost by the log itself,
	 * overwritten (log-full policy LOOP) or not written (log full, or a
	 * failed write). */
	uint64_t log_overwritten, log_dropped;
};

/* 0, or EINVAL if trid is not a trace id of this process. */
int pt_ext_losses(trace_id_t trid, struct pt_ext_losses *out);

#endif

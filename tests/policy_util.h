/*
 * policy_util.h -- reading back the events of policy_loop and
 * policy_until_full: ID's (each test's), MAXDATA bytes each, a sequence
 * number first and the rest made from it (each test's fill()).
 *
 *   next_seq(trid, id, &ev, buf, &len, &seq)
 *       the next event, which must be there (t_try): 1 if it is id's, its
 *       length CHECKed (MAXDATA) and its sequence number in seq; 0 if it
 *       is another (ev, buf and len tell which).  buf: PU_BUF bytes.
 */
#ifndef POSIXTRACE_TEST_POLICY_UTIL_H
#define POSIXTRACE_TEST_POLICY_UTIL_H

#include <stdint.h>
#include <trace.h>
#include "t.h"

#define MAXDATA 64
#define PU_BUF 256

static inline int next_seq(trace_id_t trid, trace_event_id_t id, struct posix_trace_event_info *ev,
                           unsigned char *buf, size_t *len, uint32_t *seq)
{
	REQUIRE(t_try(trid, ev, buf, PU_BUF, len) == 0);
	if (ev->posix_event_id != id)
		return 0;
	CHECK_EQ(*len, MAXDATA);
	memcpy(seq, buf, sizeof *seq);
	return 1;
}

#endif

/*
 * loss_util.h -- what the tests of losses (loss_count.c, loss_order.c)
 * share: threads that flood a stream with events whose payload starts
 * with the thread's number and its sequence number (the witness of what
 * was lost), and the stream they flood.
 */
#ifndef POSIXTRACE_TEST_LOSS_UTIL_H
#define POSIXTRACE_TEST_LOSS_UTIL_H

#include <pthread.h>
#include <stdint.h>
#include <trace.h>
#include "t.h"
#include "../src/ext.h"

#define ID ((trace_event_id_t)300)
#define LOSS_PAYLOAD_MAX 32u

static trace_id_t trid;
static uint32_t per_thread;
static uint32_t payload_len = 16; /* bytes a flood event carries: 8 to LOSS_PAYLOAD_MAX */

/* One thread's flood: per_thread events {thread, seq, 0...}. */
static inline void *loss_writer(void *arg)
{
	uint32_t p[LOSS_PAYLOAD_MAX / 4] = { (uint32_t)(uintptr_t)arg };

	for (uint32_t i = 0; i < per_thread; i++) {
		p[1] = i;
		posix_trace_event(ID, p, payload_len);
	}
	return NULL;
}

/* trid: a stream of this process (max data size 32); with a log in fd
 * (>= 0) of log_policy, log_size bytes (0: the default). */
static inline void loss_stream(int policy, size_t size, int fd, int log_policy, size_t log_size)
{
	trace_attr_t attr;

	CHECK_RC(posix_trace_attr_init(&attr), 0);
	CHECK_RC(posix_trace_attr_setmaxdatasize(&attr, LOSS_PAYLOAD_MAX), 0);
	CHECK_RC(posix_trace_attr_setstreamsize(&attr, size), 0);
	CHECK_RC(posix_trace_attr_setstreamfullpolicy(&attr, policy), 0);
	if (fd >= 0) {
		CHECK_RC(posix_trace_attr_setlogfullpolicy(&attr, log_policy), 0);
		if (log_size)
			CHECK_RC(posix_trace_attr_setlogsize(&attr, log_size), 0);
		CHECK_RC(posix_trace_create_withlog(0, &attr, fd, &trid), 0);
	} else {
		CHECK_RC(posix_trace_create(0, &attr, &trid), 0);
	}
	CHECK_RC(posix_trace_attr_destroy(&attr), 0);
}

/* The events a stream counted lost in all. */
static inline uint64_t loss_total(trace_id_t id)
{
	struct pt_ext_losses x;

	CHECK_RC(pt_ext_losses(id, &x), 0);
	CHECK(x.total_ok);
	return x.total;
}

#endif

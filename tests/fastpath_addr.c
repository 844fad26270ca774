/*
 * fastpath_addr.c -- the fast path takes the record's address from the
 * thread's own state, not through the stream's view (issue 50).
 *
 * On the fast path the address of the record is the thread's chunk start
 * plus its position, both kept in the thread's TLS (src/traced/record.c,
 * struct pt_fast): one load each, whatever the CPU.  Reached the old way,
 * control word -> view -> data area, it was a chain of dependent loads
 * whose latency some CPUs pay in full.  That chain cannot come back
 * unnoticed: once the thread's first event armed the fast path, the
 * view's data pointer is made NULL, and the next events, still in the
 * same chunk, must be recorded intact (through the view they would be
 * written near address 0: the test dies).  The pointer is restored
 * before anything else (a new chunk, the reader) may need it.  A count
 * of instructions and reads per event is tests/fastpath_cost's.
 */
#include <signal.h>
#include <stdint.h>
#include <trace.h>
#include "t.h"
#include "../src/traced/traced.h"

#define K   8   /* events while the view's pointer is poisoned: one chunk holds them */
#define PAY 16
#define W   3   /* events before: the last goes the fast way */

static void died(int sig)
{
	static const char m[] = "fastpath_addr: a fault while the view's data pointer was NULL: "
	                        "the record's address came through the view\n";
	(void)sig;
	if (write(2, m, sizeof m - 1) < 0)
		_exit(2);
	_exit(1);
}

int main(void)
{
	trace_attr_t attr;
	trace_id_t trid;
	trace_event_id_t ev;
	uint64_t p[PAY / 8];

	T_BEGIN(30);
	CHECK_RC(posix_trace_eventid_open("fastpath.addr", &ev), 0);
	CHECK_RC(posix_trace_attr_init(&attr), 0);
	CHECK_RC(posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_LOOP), 0);
	CHECK_RC(posix_trace_create(0, &attr, &trid), 0);
	posix_trace_attr_destroy(&attr);
	CHECK_RC(posix_trace_start(trid), 0);

	/* the general way: a chunk; then the caller's object is looked up
	 * again (a new chunk forgets it, objmap.c); then armed */
	for (uint64_t i = 0; i < W; i++) {
		p[0] = i, p[1] = ~i;
		posix_trace_event(ev, p, sizeof p);
	}

	uint32_t att = atomic_load(&pt_proc.att);
	REQUIRE(att != 0 && !(att & (att - 1)));
	struct pt_view *sl = atomic_load(&pt_proc.curp[__builtin_ctz(att)]);
	REQUIRE(sl != NULL && sl->data != NULL);
	REQUIRE(sl->chunk_size >= (W + K + 1) * (PAY + 16));
	char *data = sl->data;
	signal(SIGSEGV, died);
	signal(SIGBUS, died);
	sl->data = NULL;
	for (uint64_t i = W; i < W + K; i++) {
		p[0] = i, p[1] = ~i;
		posix_trace_event(ev, p, sizeof p);
	}
	sl->data = data;
	signal(SIGSEGV, SIG_DFL);
	signal(SIGBUS, SIG_DFL);

	CHECK_RC(posix_trace_stop(trid), 0);
	struct posix_trace_event_info e;
	uint64_t q[PAY / 8 + 2];
	size_t len;
	uint64_t next = 0;
	while (t_try(trid, &e, q, sizeof q, &len) == 0) {
		if (e.posix_event_id != ev)
			continue;
		CHECK(len == PAY && q[0] == next && q[1] == ~next);
		next++;
	}
	CHECK(next == W + K);
	CHECK_RC(posix_trace_shutdown(trid), 0);
	T_END();
}

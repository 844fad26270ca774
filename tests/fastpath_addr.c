/*
 * fastpath_addr.c -- the fast path reaches nothing through the stream's
 * view (issue 50).
 *
 * On the fast path the record's address is the thread's chunk start plus
 * its position, and the stream's header (its state, filter, chunk table)
 * and the chunk's commit word's offset from it, all kept in the thread's TLS
 * (src/producer/event.c, struct pt_fast): loads from fixed TLS offsets,
 * then one load each from the addresses they give, whatever the CPU.
 * Reached the old way, control word -> view -> header -> state, and
 * -> view -> data for the address, they were chains of dependent loads
 * whose latency some CPUs pay in full.  Those chains cannot come back
 * unnoticed: once the thread's first events armed the fast path, the
 * slot's view is taken away (the slot's pointer to it made NULL) and the
 * view's own pointers to the header, the chunk table and the data made
 * NULL too, and the next events, still in the same chunk, must be
 * recorded intact (through the view they would fault near address 0: the
 * test dies).  Everything is restored before anything else (a new chunk,
 * the reader) may need it.  A count of instructions and reads per event
 * is tests/fastpath_cost's.
 */
#include <signal.h>
#include <stdint.h>
#include <trace.h>
#include "t.h"
#include "../src/producer/producer.h"

#define K   8   /* events while the view's pointer is poisoned: one chunk holds them */
#define PAY 16
#define W   3   /* events before: the last goes the fast way */

static void died(int sig)
{
	static const char m[] = "fastpath_addr: a fault while the view was taken away: "
	                        "the fast path went through it\n";
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
	unsigned s = (unsigned)__builtin_ctz(att);
	struct pt_view *sl = atomic_load(&pt_proc.curp[s]);
	REQUIRE(sl != NULL && sl->data != NULL && sl->hdr != NULL && sl->chunks != NULL);
	REQUIRE(sl->chunk_size >= (W + K + 1) * (PAY + 16));
	char *data = sl->data;
	struct pt_hdr *hdr = sl->hdr;
	struct pt_chunk *chunks = sl->chunks;
	signal(SIGSEGV, died);
	signal(SIGBUS, died);
	atomic_store(&pt_proc.curp[s], NULL);
	sl->data = NULL;
	sl->hdr = NULL;
	sl->chunks = NULL;
	for (uint64_t i = W; i < W + K; i++) {
		p[0] = i, p[1] = ~i;
		posix_trace_event(ev, p, sizeof p);
	}
	sl->data = data;
	sl->hdr = hdr;
	sl->chunks = chunks;
	atomic_store(&pt_proc.curp[s], sl);
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

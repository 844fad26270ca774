/*
 * snapshot_ring_warm.c -- a flight recorder's copies of a window meet no
 * fresh page: neither the first (pt_ext_snapshot_prepare) nor one whose
 * window lies where no window lay before (src/control/snapshot.c,
 * copy_chunks), in process.
 *
 * A window's chunks move round a LOOP stream as the program records.
 * Copied each to its own place in the copy buffer, every copy of a new
 * place met fresh pages (a fault a page: in bench/snapshot, 2 000-3 000
 * faults and 3-8 ms added to one snapshot in four until the buffer had
 * been touched whole).  Packed from the buffer's start, a window of the
 * same size touches only pages an earlier copy touched; and the buffer
 * made ready before the first copy (as `record --flight` does when it
 * starts) leaves the first none to fault either (it faulted the window's
 * pages: about 5 ms of a 12 MB snapshot's 13-24).
 *
 * One thread records BATCHES batches of E events into a 16 MiB stream
 * (twice round it); after each, the window from just before the batch to
 * now is copied, and the copy freed (its memory kept for the next).  No
 * copy faults as many pages as a chunk has (a few, for the copy's lists,
 * are allowed); they once faulted each batch's chunks, about 200 pages a
 * copy, in the first copy and over the first lap.  The last copy,
 * written and read back, holds exactly the batch's E events, in order
 * (the witness: each event's sequence number and check word).
 */
#include <sys/resource.h>
#include "t.h"
#include "helpers.h"
#include "snapring_util.h"

#define BATCHES 40
#define E 25000 /* 40-byte records: about 1 MB, four 256 KiB chunks */

static long faults(void)
{
	struct rusage u;
	REQUIRE(getrusage(RUSAGE_THREAD, &u) == 0);
	return u.ru_minflt + u.ru_majflt;
}

int main(void)
{
	T_BEGIN(120);
	start_stream(16u << 20);
	CHECK_RC(pt_ext_snapshot_prepare(trid), 0);
	struct pt_ext_snapcopy *last = NULL;
	long most = 0;
	uint64_t seq = 0, last_first = 0;
	for (int b = 0; b < BATCHES; b++) {
		/* the window's start: a clock reading with 50 us on either side
		 * of it before the batch before ends and this one begins, more
		 * than the error of an event's time (the TSC taken to
		 * CLOCK_REALTIME within 10 us, implementation-defined.md): else
		 * a first event stamped a few us early fell before it, 1 run in
		 * some 50, and the copy held E - 1 */
		struct timespec t0;
		spin_us(50);
		clock_gettime(CLOCK_REALTIME, &t0);
		spin_us(50);
		uint64_t first = seq;
		for (int i = 0; i < E; i++, seq++) {
			struct pay p = { 0, 0, seq, check_of(0, seq) };
			posix_trace_event(ev, &p, sizeof p);
		}
		struct pt_ext_snapcopy *c = NULL;
		long f0 = faults();
		CHECK_RC(pt_ext_snapshot_copy(trid, ts_ns(&t0), UINT64_MAX, NULL, &c), 0);
		long f = faults() - f0;
		REQUIRE(c != NULL);
		if (f > most)
			most = f;
		if (b + 1 < BATCHES)
			pt_ext_snapshot_free(c);
		else
			last = c, last_first = first;
	}
	/* (a 16 MiB stream's chunks are 256 KiB: 64 pages; what a copy
	 * faults besides is its lists, a few pages) */
	printf("%d copies: at most %ld pages faulted by one (fewer than a chunk's 64 "
	       "wanted)\n", BATCHES, most);
	if (UNDER_TSAN || UNDER_ASAN) /* (their shadow of what a copy writes is
	                               * mapped as it goes) */
		printf("under a sanitizer the faults are its shadow memory's: not checked\n");
	else
		CHECK(most < 64);

	int fd = snap_fd();
	struct pt_ext_snap s;
	CHECK_RC(pt_ext_snapshot_write(last, fd, &s), 0);
	pt_ext_snapshot_free(last);
	struct sread r = { 0 };
	read_snap(fd, &r);
	CHECK_EQ(r.n, E);
	CHECK_EQ(r.bad, 0);
	CHECK_EQ(r.gaps, 0);
	CHECK_EQ(r.first_seq[0], last_first);
	CHECK_EQ(r.last_seq[0], last_first + E - 1);
	close(fd);
	posix_trace_shutdown(trid);
	T_END();
}

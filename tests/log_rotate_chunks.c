/*
 * log_rotate_chunks.c -- a log cut into parts takes busy threads' sealed
 * chunks whole (CHUNK blocks) even when other threads' records fall in
 * their time, and cuts only where no record left to write is older than
 * the latest one the part holds: consecutive parts never overlap in time,
 * and a part by size still ends near its size.
 *
 * An UNTIL_FULL stream (it keeps every event until the flush) with an
 * APPEND log cut into parts (pt_ext_log_rotate), chunks of 64 KiB;
 * threads take turns, A recording 1000 events a turn and each other its
 * own number, so that every chunk of A holds the time of some of the
 * others' records.  Shutdown flushes it all at once (no writer is in
 * flight then: none is late).  Checked, over the parts in order:
 *   - each thread's events 0, 1, 2 ... once each, in order, and nothing
 *     else but system events;
 *   - every part begins at or after the end of the one before (A and B
 *     cut at every block, a period of 1 ns: with the cut made right after
 *     a CHUNK block, 36 of 42 parts began before the end of the one
 *     before);
 *   - a part by size ends at the first block after its size (under 256
 *     KiB past it), as before CHUNK blocks went into parts: a chunk goes
 *     into it only with room for the records older than its end, which go
 *     in before the cut, each chunk they are in counted whole (four
 *     threads as busy as each other, parts of 1 MiB: their CHUNK blocks'
 *     share printed, about 70% on a quiet machine);
 *   - with A and B (10 events a turn), a quarter of A's events at least in
 *     CHUNK blocks, by size and at every block: every chunk of A holds
 *     some of B's records, so each is one a rotation did not take before,
 *     when a chunk went whole only if no other thread's record fell in
 *     its time (0 then).  About 44 000 of 100 000 on a quiet machine, 33
 *     000 to 49 000 beside two busy loops, which stretch a chunk over
 *     more of the clock's pieces (no CHUNK block spans two);
 *   - the cuts the rotation counted are the parts there are.
 * (Without that room, tests/cli_rotate, 4 threads recording at full
 * speed, found a part of 1.3 MB and one of 6.2 MB for a size of 1 MiB in
 * 2 runs of 10: a thread kept off the CPU leaves a chunk that spans many
 * of the others' records; it checks the size there.  Counting a chunk by
 * the share of its time before the end, 6 parts of 40 such recordings
 * still went past 1 MiB + 256 KiB; counted whole, none.)
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/stat.h>
#include <trace.h>
#include "t.h"
#include "chunk_blocks.h"
#include "helpers.h"
#include "../src/ext.h"

enum { MAXT = 4 };

static uint32_t g_rounds; /* turns each thread takes */
static uint32_t g_aburst; /* A's events a turn */

static trace_event_id_t g_id;
static _Atomic unsigned g_turn; /* the thread whose turn it is */
static unsigned g_nt;           /* threads taking turns, A the first */
static uint32_t g_other;        /* the events of each but A, a turn */

struct rec { uint32_t thr, seq; uint64_t pad; };

/* Thread number arg (0: A) records its events, turn after turn. */
static void *taker(void *arg)
{
	uint32_t me = (uint32_t)(uintptr_t)arg, each = me ? g_other : g_aburst;

	for (uint32_t r = 0, k = 0; r < g_rounds; r++) {
		while (atomic_load(&g_turn) != me)
			sched_yield();
		for (uint32_t i = 0; i < each; i++, k++) {
			struct rec p = { me, k, 0 };
			posix_trace_event(g_id, &p, sizeof p);
		}
		atomic_store(&g_turn, (me + 1) % g_nt);
	}
	return NULL;
}

/* One recording into a stream of `stream` bytes by nt threads taking
 * `rounds` turns, A recording aburst events a turn and each other thread
 * `other`, cut by size or period, read back and checked as the head of
 * this file says; the events in CHUNK blocks, and the parts, in
 * *chunk_rec and *nparts. */
static void run(unsigned nt, uint32_t rounds, uint32_t aburst, uint32_t other, uint64_t stream,
                uint64_t size, uint64_t period, uint64_t *chunk_rec, unsigned *nparts)
{
	char dir[64], path[256];

	snprintf(dir, sizeof dir, "/tmp/pt-rotchunks-XXXXXX");
	REQUIRE(mkdtemp(dir));
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	REQUIRE(dirfd >= 0);
	snprintf(path, sizeof path, "%s/t-1.ptlog", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	REQUIRE(fd >= 0);

	trace_attr_t a;
	trace_id_t trid;
	REQUIRE(posix_trace_attr_init(&a) == 0);
	REQUIRE(posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_UNTIL_FULL) == 0);
	REQUIRE(posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND) == 0);
	REQUIRE(posix_trace_attr_setstreamsize(&a, stream) == 0);
	REQUIRE(posix_trace_create_withlog(0, &a, fd, &trid) == 0);
	posix_trace_attr_destroy(&a);
	struct pt_ext_rotate_stats stats;
	struct pt_ext_rotate r = { dirfd, "t", 1, size, period, 0, 0, &stats };
	CHECK_RC(pt_ext_log_rotate(trid, &r), 0);
	REQUIRE(posix_trace_trid_eventid_open(trid, "rotchunk", &g_id) == 0);
	CHECK_RC(posix_trace_start(trid), 0);

	pthread_t th[MAXT];
	g_nt = nt, g_other = other, g_rounds = rounds, g_aburst = aburst;
	atomic_store(&g_turn, 0);
	for (unsigned i = 1; i < nt; i++)
		REQUIRE(pthread_create(&th[i], NULL, taker, (void *)(uintptr_t)i) == 0);
	taker((void *)0); /* this thread is A */
	for (unsigned i = 1; i < nt; i++)
		pthread_join(th[i], NULL);
	CHECK_RC(posix_trace_shutdown(trid), 0);
	close(fd);

	/* ---- the parts, in order */
	uint32_t next[MAXT] = { 0 };
	int64_t prev_last = INT64_MIN;
	unsigned parts = 0, overlaps = 0, others = 0, big = 0;
	struct blocks b = { 0 };
	for (unsigned k = 1;; k++) {
		snprintf(path, sizeof path, "%s/t-%u.ptlog", dir, k);
		int rfd = open(path, O_RDONLY);
		if (rfd < 0)
			break;
		parts++;
		CHECK(chunk_blocks(path, &b));
		struct stat sb;
		CHECK(fstat(rfd, &sb) == 0);
		if (size && sb.st_size >= (off_t)size + (256 << 10)) {
			big = k; /* (only the last may be: checked below) */
			fprintf(stderr, "part %u: %lld bytes\n", k, (long long)sb.st_size);
		}
		trace_id_t log;
		trace_event_id_t id = 0;
		REQUIRE(posix_trace_open(rfd, &log) == 0);
		CHECK(t_type_named(log, "rotchunk", &id));
		struct posix_trace_event_info ev;
		struct rec p;
		size_t len;
		int un;
		int64_t first = INT64_MAX, last = INT64_MIN;
		while (posix_trace_getnext_event(log, &ev, &p, sizeof p, &len, &un) == 0 && !un) {
			int64_t ns = (int64_t)ev.posix_timestamp.tv_sec * 1000000000 +
			             ev.posix_timestamp.tv_nsec;
			first = ns < first ? ns : first;
			last = ns > last ? ns : last;
			if (ev.posix_event_id != id) {
				/* (an error event, or a user event of another type) */
				others += ev.posix_event_id == POSIX_TRACE_ERROR ||
				          ev.posix_event_id >= PT_SYS_IDS;
				continue;
			}
			if (len != sizeof p || p.thr >= nt || p.seq != next[p.thr]) {
				CHECK(len == sizeof p && p.thr < nt && p.seq == next[p.thr]);
				fprintf(stderr, "part %u: thread %u event %u, expected %u\n", k, p.thr,
				        p.seq, p.thr < nt ? next[p.thr] : 0);
				if (p.thr >= nt)
					continue;
			}
			next[p.thr] = p.seq + 1;
		}
		if (first != INT64_MAX && first < prev_last) {
			overlaps++;
			fprintf(stderr, "part %u begins %lld ns before the end of part %u\n", k,
			        (long long)(prev_last - first), k - 1);
		}
		prev_last = last > prev_last ? last : prev_last;
		posix_trace_close(log);
		close(rfd);
		unlink(path);
	}
	for (unsigned i = 0; i < nt; i++)
		CHECK_EQ(next[i], rounds * (i ? other : aburst));
	CHECK_EQ(others, 0);
	CHECK_EQ(overlaps, 0);
	CHECK(!big || big == parts);
	CHECK_EQ(stats.current, parts);
	CHECK_EQ(stats.cuts + 1, parts);
	printf("%u threads, %u events a turn but A's %u, cut every %llu bytes or %llu ns: %u parts, "
	       "%llu events in %llu CHUNK blocks, %llu records in other blocks\n", nt, other, aburst,
	       (unsigned long long)size, (unsigned long long)period, parts,
	       (unsigned long long)b.chunk_rec, (unsigned long long)b.n_chunk,
	       (unsigned long long)b.other_rec);
	*chunk_rec = b.chunk_rec, *nparts = parts;
	close(dirfd);
	CHECK_RC(rmdir(dir) == 0 ? 0 : errno, 0); /* (nothing else was made) */
}

int main(void)
{
	uint64_t chunk_rec;
	unsigned parts;

	T_BEGIN(120);
	/* A and B, chunks of 64 KiB (2 730 of A's records: 2 or 3 of B's
	 * turns fall in each): by size, then at every block (a period of 1
	 * ns: a cut due right after each CHUNK block too) */
	run(2, 100, 1000, 10, 4 << 20, 512 << 10, 0, &chunk_rec, &parts);
	CHECK(parts >= 4); /* (101 000 records of 24 bytes, cut every 512 KiB) */
	CHECK(chunk_rec >= 100 * 1000 / 4);
	run(2, 100, 1000, 10, 4 << 20, 0, 1, &chunk_rec, &parts);
	CHECK(parts >= 10);
	CHECK(chunk_rec >= 100 * 1000 / 4);
	/* four as busy as each other, parts of 1 MiB */
	run(4, 30, 1000, 1000, 4 << 20, 1 << 20, 0, &chunk_rec, &parts);
	CHECK(parts >= 2); /* (120 000 records of 24 bytes) */
	T_END();
}

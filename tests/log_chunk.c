/*
 * log_chunk.c -- CHUNK blocks (log format 9): a stream's sealed chunks
 * written to the log as the stream holds them, and read back as events.
 *
 * An UNTIL_FULL stream (it keeps its events until the flush) with an
 * APPEND log: 3 threads record NEV events each (payloads of 8 to 200
 * bytes from lu_make, not all whole words; from two call sites, taking
 * turns every 1000 events, so that records carry their caller again in
 * the middle of a chunk; a CLOCK_REALTIME reading before and after every
 * 997th event), one after another, then shutdown flushes: the flusher
 * writes the sealed chunks as CHUNK blocks (but each thread's last, whose
 * end it cannot tell from the next thread's first; a type whose name is
 * not in the log yet is named first).  Checked:
 *   - the file is of this format (9 or later) and most events are in
 *     CHUNK blocks;
 *   - read back: each thread's events exactly (0 .. NEV-1, in order,
 *     intact, of the length made, from the site made), every timestamp in
 *     order, each witnessed one between its two readings (LU_SLACK_NS);
 *   - the summary the log carries counts them as the events read, and
 *     its block index holds (each entry's times agree);
 *   - one byte changed in a CHUNK block's records: one error event
 *     (EBADMSG) in place of its events, every other event intact;
 *   - the file cut in the middle of a CHUNK block: each thread's events
 *     before it (a prefix of its own, intact), no error event;
 *   - the threads recording at once, their events taking turns (so that
 *     every chunk's time holds the other threads' records): CHUNK blocks
 *     too (without a rotation, other threads' records may fall inside
 *     one: the reader merges them; the rule before made none here; how
 *     many depends on when the flusher meets the chunks, so at least one
 *     a thread is asked, the share printed), every event read back as
 *     above, and the reader's merge holding at most 2 blocks a thread
 *     (the flusher takes such a chunk only when its first record is the
 *     oldest: with any chunk, 2.4 to 7.3 MB held).
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include "log_util.h"
#include "../src/ext.h"
#include "../src/log/log.h"
#include "helpers.h"
#include "chunk_blocks.h"

enum { NT = 3, NEV = 100000, MAXLEN = 200, WIT_EVERY = 997 };

static trace_event_id_t g_id;
static char path[256];
static struct wit { long long before, after; } g_wit[NT][NEV / WIT_EVERY + 1];
static void *g_site[NT][2];

/* (two call sites: each records and says where it is) */
__attribute__((noinline)) static void put_a(const unsigned char *p, size_t n)
{
	posix_trace_event(g_id, p, n);
	__asm__ volatile("" ::: "memory"); /* (not a tail call: the caller is here) */
}
static atomic_uint g_b_calls;
__attribute__((noinline)) static void put_b(const unsigned char *p, size_t n)
{
	/* (not the same code as put_a: never folded into one) */
	atomic_fetch_add_explicit(&g_b_calls, 1, memory_order_relaxed);
	posix_trace_event(g_id, p, n);
	__asm__ volatile("" ::: "memory");
}

/* (the threads at once) each event in turn: thread t's s-th when
 * g_turn is s * NT + t, so that every thread's records fall inside the
 * others' time whatever the scheduler does, and the log is the same every
 * run */
static int g_lockstep;
static atomic_ulong g_turn;

static void *worker(void *arg)
{
	uint32_t tno = (uint32_t)(uintptr_t)arg;
	unsigned char p[MAXLEN];

	for (uint32_t s = 0; s < NEV; s++) {
		size_t n = lu_len(s, MAXLEN);
		lu_make(p, s, tno, n);
		while (g_lockstep &&
		       atomic_load_explicit(&g_turn, memory_order_acquire) != (unsigned long)s * NT + tno)
			sched_yield();
		int w = s % WIT_EVERY == 0;
		if (w)
			g_wit[tno][s / WIT_EVERY].before = lu_now();
		if ((s / 1000) & 1)
			put_b(p, n);
		else
			put_a(p, n);
		if (w)
			g_wit[tno][s / WIT_EVERY].after = lu_now();
		if (g_lockstep)
			atomic_fetch_add_explicit(&g_turn, 1, memory_order_release);
	}
	return NULL;
}

/* The blocks of the file (chunk_blocks.h), b zeroed first, its format
 * checked: 9 or later. */
static int walk(const char *p, struct blocks *b)
{
	unsigned char fh[16];
	uint16_t version;
	int fd = open(p, O_RDONLY);

	memset(b, 0, sizeof *b);
	REQUIRE(fd >= 0);
	REQUIRE(pread(fd, fh, sizeof fh, 0) == (ssize_t)sizeof fh);
	close(fd);
	memcpy(&version, fh + 12, 2);
	CHECK(version >= 9); /* (CHUNK blocks: format 9 and later; this one) */
	return chunk_blocks(p, b);
}

/* The events of the log in file p: each thread's checked as NEV in order
 * (whole) or a prefix (cut); returns the error events seen, and the
 * user events in *n. */
/* The log at p read whole by the log's reader: the most bytes of blocks
 * its merge held at once, and the largest block in *largest. */
static uint64_t merge_peak(const char *p, uint32_t *largest)
{
	struct pt_logr r;
	static unsigned char buf[TRACE_DATA_MAX];
	int fd = open(p, O_RDONLY);

	REQUIRE(fd >= 0);
	REQUIRE(pt_logr_open_opt(&r, fd, 0) == 0);
	for (;;) {
		struct posix_trace_event_info ev;
		size_t len;
		int un = 0;
		if (pt_logr_next(&r, &ev, buf, sizeof buf, &len, &un) != 0 || un)
			break;
	}
	*largest = 0;
	for (size_t i = 0; i < r.nitems; i++)
		*largest = r.items[i].len > *largest ? r.items[i].len : *largest;
	uint64_t peak = r.merge_peak;
	pt_logr_close(&r);
	close(fd);
	return peak;
}

static long long g_switches; /* (check_log) user events read after another thread's */
static int check_log(const char *p, int whole, long long *n)
{
	int prev = -1;
	trace_id_t log;
	int fd = open(p, O_RDONLY), errs = 0;
	uint32_t next[NT] = { 0 };
	long long last_ts = 0;
	static unsigned char buf[TRACE_DATA_MAX];

	REQUIRE(fd >= 0);
	CHECK_RC(posix_trace_open(fd, &log), 0);
	*n = 0;
	for (;;) {
		struct posix_trace_event_info ev;
		size_t len = 0;
		int un = -1, rc = posix_trace_getnext_event(log, &ev, buf, sizeof buf, &len, &un);
		CHECK_RC(rc, 0);
		if (rc || un)
			break;
		long long ts = lu_ns(&ev.posix_timestamp);
		if (ts < last_ts) {
			CHECK(!"timestamps in order");
			break;
		}
		last_ts = ts;
		if (ev.posix_event_id == POSIX_TRACE_ERROR) {
			int code = 0;
			memcpy(&code, buf, len < sizeof code ? len : sizeof code);
			CHECK_EQ(code, EBADMSG);
			errs++;
			continue;
		}
		if (ev.posix_event_id != g_id)
			continue;
		uint32_t seq, tno;
		if (!lu_check(buf, len, &seq, &tno) || tno >= NT) {
			CHECK(!"an intact payload");
			break;
		}
		(*n)++;
		g_switches += prev >= 0 && (uint32_t)prev != tno;
		prev = (int)tno;
		if (whole || !errs) { /* (after a damaged block: its events are missing) */
			if (seq != next[tno]) {
				CHECK_EQ(seq, next[tno]);
				break;
			}
		} else if (seq < next[tno]) {
			CHECK(!"each thread's events in order");
			break;
		}
		next[tno] = seq + 1;
		if (len != lu_len(seq, MAXLEN) || ev.posix_truncation_status != POSIX_TRACE_NOT_TRUNCATED) {
			CHECK_EQ(len, lu_len(seq, MAXLEN));
			break;
		}
		if (ev.posix_prog_address != g_site[tno][(seq / 1000) & 1] &&
		    g_site[tno][(seq / 1000) & 1]) {
			CHECK(!"the call site as recorded");
			break;
		}
		if (!g_site[tno][(seq / 1000) & 1])
			g_site[tno][(seq / 1000) & 1] = ev.posix_prog_address;
		if (seq % WIT_EVERY == 0) {
			const struct wit *w = &g_wit[tno][seq / WIT_EVERY];
			CHECK(ts >= w->before - LU_SLACK_NS && ts <= w->after + LU_SLACK_NS);
		}
	}
	if (whole)
		for (unsigned t = 0; t < NT; t++)
			CHECK_EQ(next[t], NEV);
	/* two call sites, told apart */
	for (unsigned t = 0; t < NT && whole; t++)
		CHECK(g_site[t][0] && g_site[t][1] && g_site[t][0] != g_site[t][1]);
	posix_trace_close(log);
	close(fd);
	return errs;
}

/* A copy of the file in path, for damage: its path in out. */
static void copy(const char *from, char *out, size_t cap, long long upto)
{
	int in = open(from, O_RDONLY), o = lu_tmpfile(out, cap, "chunkcp", O_WRONLY);
	static char buf[1 << 16];
	long long done = 0;

	REQUIRE(in >= 0);
	while (done < upto) {
		ssize_t k = read(in, buf, (size_t)(upto - done < (long long)sizeof buf ? upto - done
		                                                                   : (long long)sizeof buf));
		REQUIRE(k > 0);
		t_write_full(o, buf, (size_t)k);
		done += k;
	}
	close(in);
	close(o);
}

/* A new log in path: an UNTIL_FULL stream of 64 MiB with an APPEND log,
 * the NT threads recording one after another, or at once, then shutdown
 * (its flush). */
static void record(int at_once)
{
	trace_attr_t a;
	trace_id_t trid;
	pthread_t th[NT];
	int fd = lu_tmpfile(path, sizeof path, "chunk", O_RDWR);

	posix_trace_attr_init(&a);
	posix_trace_attr_setstreamsize(&a, 64u << 20);
	posix_trace_attr_setmaxdatasize(&a, MAXLEN);
	posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_UNTIL_FULL);
	posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND);
	REQUIRE(posix_trace_create_withlog(0, &a, fd, &trid) == 0);
	posix_trace_attr_destroy(&a);
	CHECK_RC(posix_trace_start(trid), 0);
	for (uintptr_t t = 0; t < NT; t++) {
		REQUIRE(pthread_create(&th[t], NULL, worker, (void *)t) == 0);
		if (!at_once)
			pthread_join(th[t], NULL);
	}
	for (unsigned t = 0; t < NT && at_once; t++)
		pthread_join(th[t], NULL);
	CHECK_RC(posix_trace_shutdown(trid), 0);
	close(fd);
}

int main(void)
{
	struct blocks b;
	long long n;

	T_BEGIN(120);
	REQUIRE(posix_trace_eventid_open("chunk.test", &g_id) == 0);
	record(0); /* one after another: blocks apart in time */

	/* the file: this format, most events in CHUNK blocks */
	CHECK(walk(path, &b));
	printf("%llu events in %llu CHUNK blocks, %llu records in other blocks\n",
	       (unsigned long long)b.chunk_rec, (unsigned long long)b.n_chunk,
	       (unsigned long long)b.other_rec);
	CHECK(b.n_chunk >= 2);
	CHECK(b.chunk_rec >= (uint64_t)NT * NEV * 9 / 10);

	/* read back whole */
	CHECK_EQ(check_log(path, 1, &n), 0);
	CHECK_EQ(n, (long long)NT * NEV);

	/* the summary counts them as read */
	{
		struct pt_ext_summary *sum = NULL;
		int lfd = open(path, O_RDONLY);
		REQUIRE(lfd >= 0);
		CHECK_RC(pt_ext_log_summary(lfd, &sum), 0);
		if (sum) {
			CHECK_EQ(sum->count[g_id], (long long)NT * NEV);
			CHECK(!strcmp(sum->names[g_id], "chunk.test"));
			uint64_t per = 0;
			for (size_t i = 0; i < sum->nwriters; i++)
				per += sum->writers[i].count;
			CHECK_EQ(per, sum->events);
			pt_ext_summary_free(sum);
		}
		close(lfd);
	}

	/* the block index the summary carries holds (each entry's first,
	 * least, most and last time agree, which the walk of a CHUNK block's
	 * records gives): the log reads through it, not by a scan */
	{
		struct pt_logr r;
		int lfd = open(path, O_RDONLY);
		REQUIRE(lfd >= 0);
		REQUIRE(pt_logr_open_opt(&r, lfd, 0) == 0);
		CHECK_EQ(r.indexed, 1);
		pt_logr_close(&r);
		close(lfd);
	}

	/* one byte changed in the first CHUNK block's records */
	char dmg[256];
	copy(path, dmg, sizeof dmg, lu_fsize(path));
	{
		int d = open(dmg, O_RDWR);
		unsigned char c;
		off_t at = (off_t)(b.first_off + 112 + (b.first_len - 112) / 2);
		REQUIRE(d >= 0 && pread(d, &c, 1, at) == 1);
		c ^= 0x20;
		REQUIRE(pwrite(d, &c, 1, at) == 1);
		close(d);
	}
	CHECK_EQ(check_log(dmg, 0, &n), 1);
	CHECK_EQ(n, (long long)NT * NEV - (long long)b.first_nrec);
	lu_rmfile(dmg);

	/* cut in the middle of the last CHUNK block */
	copy(path, dmg, sizeof dmg, (long long)(b.last_off + b.last_len / 2));
	CHECK_EQ(check_log(dmg, 0, &n), 0);
	CHECK(n >= (long long)(b.chunk_rec - b.first_nrec) / 2);
	CHECK(n < (long long)NT * NEV);
	lu_rmfile(dmg);

	/* the threads at once, their events taking turns (every chunk's time
	 * holds the other threads' records; the stream keeps them all until
	 * the flush, so the log is the same every run): with no rotation, a
	 * chunk goes into a CHUNK block even when other threads' records fall
	 * inside its time (the blocks overlap all along the log, which the
	 * reader's sliding-window merge reads in order), so these are mostly
	 * CHUNK blocks too (none before, when such chunks were merged the
	 * usual way; 8-21% with the threads free to run, not taking turns);
	 * read back the same */
	lu_rmfile(path);
	g_lockstep = 1;
	record(1);
	CHECK(walk(path, &b));
	printf("at once: %llu events in %llu CHUNK blocks, %llu records in other blocks\n",
	       (unsigned long long)b.chunk_rec, (unsigned long long)b.n_chunk,
	       (unsigned long long)b.other_rec);
	g_switches = 0;
	CHECK_EQ(check_log(path, 1, &n), 0);
	CHECK_EQ(n, (long long)NT * NEV);
	printf("at once: read in order, %lld times the next event another thread's\n", g_switches);
	/* (the rule before wrote none here: every chunk's time holds another
	 * thread's next record; how many now depends on when the flusher
	 * meets them: 93-95% of the events, 62% under ThreadSanitizer) */
	CHECK(b.n_chunk >= NT);
	/* (the blocks overlapped in time: a CHUNK block holds one thread's
	 * events, an events block one record each, so blocks apart in time
	 * would give at most one switch a block) */
	if (g_switches <= (long long)(b.n_chunk + b.other_rec))
		printf("at once: the threads did not overlap in time (a busy machine?)\n");
	/* a chunk whose time others' records fall in goes only when its first
	 * record is the oldest of all writers' next: blocks begin in time
	 * order, and the reader's merge holds about a block a writer */
	uint32_t largest;
	uint64_t peak = merge_peak(path, &largest);
	printf("at once: the reader's merge held at most %llu bytes (blocks of at most %u)\n",
	       (unsigned long long)peak, largest);
	CHECK(peak <= 2ull * NT * largest);

	if (!getenv("LOG_CHUNK_KEEP"))
		lu_rmfile(path);
	else
		printf("kept %s\n", path);
	T_END();
}

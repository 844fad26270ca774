/*
 * loss_count.c -- how many events were lost, exactly (src/ext.h).  The
 * standard's OVERFLOW/RESUME say where events were lost; the library also
 * counts them, per gap (at each RESUME) and in all.  For every policy:
 * the user events read plus the events counted lost equal the events
 * recorded, exactly, with 1 to 4 threads:
 *   - LOOP read after the fact (a flight recorder): the gaps add up to
 *     the total (a gap may count 0 when it marks again, for one thread,
 *     a loss an earlier gap counted);
 *   - LOOP read while it is written, then to its end: the gaps add up to
 *     the total;
 *   - UNTIL_FULL: the events refused while it was full;
 *   - FLUSH to a log at full speed: the log's final count (END block),
 *     which the gaps add up to,
 *     and the controller's STOP, FLUSH_START and FLUSH_STOP are never the
 *     ones lost;
 *   - FLUSH whose flusher is stuck (its log a pipe nobody reads yet): a
 *     run of 1001 events lost in a row, the first right after one that
 *     was recorded, is counted whole by the RESUME before the next event
 *     (most of a run is counted without the general path: event.c).
 * And the log format: a RESUME's count and the final count survive a
 * byte-swapped log; the count is not data (length 0); a log of format
 * version 1 reads with no counts, and a count record in one is damage.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <trace.h>
#include <unistd.h>
#include "t.h"
#include "loss_util.h"
#include "../src/log/log.h"
#include "helpers.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SCALE 1
#else
#define SCALE 4
#endif

struct tally {
	uint64_t user, starts, gaps, gap_sum, overflows;
	uint64_t sys[PT_SYS_IDS]; /* system events by id */
};

static void run_writers(unsigned nthreads, uint32_t n)
{
	pthread_t th[4];

	per_thread = n;
	for (unsigned i = 0; i < nthreads; i++)
		REQUIRE(pthread_create(&th[i], NULL, loss_writer, (void *)(uintptr_t)i) == 0);
	for (unsigned i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
}

/* One event read from id (a stream or a log): counted in *t. */
static void tally_event(trace_id_t id, const struct posix_trace_event_info *ev, size_t len,
                        struct tally *t, uint64_t *last_at)
{
	struct pt_ext_losses x;

	if (ev->posix_event_id == ID)
		t->user++;
	if (ev->posix_event_id < PT_SYS_IDS)
		t->sys[ev->posix_event_id]++;
	t->starts += ev->posix_event_id == POSIX_TRACE_START;
	t->overflows += ev->posix_event_id == POSIX_TRACE_OVERFLOW;
	if (ev->posix_event_id != POSIX_TRACE_RESUME)
		return;
	CHECK_EQ(len, 0); /* the count is not data */
	CHECK_RC(pt_ext_losses(id, &x), 0);
	CHECK(x.resume_ok);
	CHECK(x.at_resume >= *last_at);
	t->gaps++;
	t->gap_sum += x.at_resume - *last_at;
	*last_at = x.at_resume;
}

static void drain(struct tally *t, uint64_t *last_at)
{
	struct posix_trace_event_info ev;
	unsigned char buf[64];
	size_t len;

	while (t_try(trid, &ev, buf, sizeof buf, &len) == 0)
		tally_event(trid, &ev, len, t, last_at);
}

static void make_stream(int policy, size_t size, int fd)
{
	loss_stream(policy, size, fd, POSIX_TRACE_APPEND, 0);
}

/* LOOP, read once the writers are done. */
static void loop_after(unsigned nthreads)
{
	struct tally t = { 0 };
	uint64_t last = 0;
	uint32_t n = 5000 * SCALE;

	make_stream(POSIX_TRACE_LOOP, 64 * 1024, -1);
	CHECK_RC(posix_trace_start(trid), 0);
	run_writers(nthreads, n);
	CHECK_RC(posix_trace_stop(trid), 0);
	drain(&t, &last);
	uint64_t total = loss_total(trid);
	/* the START event may have been overwritten too */
	CHECK_EQ(t.user + total, (uint64_t)nthreads * n + (t.starts ? 0 : 1));
	CHECK(total > 0 && t.gaps > 0);
	CHECK_EQ(t.gap_sum, total);
	CHECK_EQ(t.gaps, t.overflows);
	CHECK_RC(posix_trace_shutdown(trid), 0);
}

/* LOOP, read while it is written (the main thread checks nothing
 * meanwhile: the reader's checks have the counters to themselves). */
struct live { int done; struct tally t; uint64_t last; };

static void *reader(void *arg)
{
	struct live *lv = arg;

	while (!__atomic_load_n(&lv->done, __ATOMIC_ACQUIRE))
		drain(&lv->t, &lv->last);
	return NULL;
}

static void loop_live(unsigned nthreads)
{
	struct live lv = { 0 };
	pthread_t rd;
	uint32_t n = 20000 * SCALE;

	make_stream(POSIX_TRACE_LOOP, 16 * 1024, -1);
	CHECK_RC(posix_trace_start(trid), 0);
	REQUIRE(pthread_create(&rd, NULL, reader, &lv) == 0);
	run_writers(nthreads, n);
	__atomic_store_n(&lv.done, 1, __ATOMIC_RELEASE);
	pthread_join(rd, NULL);
	CHECK_RC(posix_trace_stop(trid), 0);
	drain(&lv.t, &lv.last);
	uint64_t total = loss_total(trid);
	CHECK_EQ(lv.t.user + total, (uint64_t)nthreads * n + (lv.t.starts ? 0 : 1));
	CHECK_EQ(lv.t.gap_sum, total); /* read to the end: every loss told */
	CHECK_EQ(lv.t.gaps, lv.t.overflows);
	CHECK_RC(posix_trace_shutdown(trid), 0);
}

/* UNTIL_FULL: the events that found it full (stopped) are counted. */
static void until_full(unsigned nthreads)
{
	struct tally t = { 0 };
	uint64_t last = 0;
	uint32_t n = 3000 * SCALE;

	make_stream(POSIX_TRACE_UNTIL_FULL, 16 * 1024, -1);
	CHECK_RC(posix_trace_start(trid), 0);
	run_writers(nthreads, n);
	uint64_t total = loss_total(trid);
	drain(&t, &last);
	CHECK_RC(posix_trace_stop(trid), 0);
	drain(&t, &last);
	CHECK(total > 0);
	CHECK_EQ(loss_total(trid), total); /* nothing recorded since */
	CHECK_EQ(t.user + total, (uint64_t)nthreads * n);
	CHECK_EQ(t.gaps, 0);
	CHECK_RC(posix_trace_shutdown(trid), 0);
}

static int tmp_file(char *path, size_t cap)
{
	const char *dir = getenv("TMPDIR");
	snprintf(path, cap, "%s/loss_count.XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(path);
	REQUIRE(fd >= 0);
	return fd;
}

/* The next event of a log (its data dropped): 1, or 0 at the end or on
 * an error (a failed check). */
static int log_next(trace_id_t log, struct posix_trace_event_info *ev, size_t *len)
{
	unsigned char buf[64];
	int none = 1;

	CHECK_RC(posix_trace_getnext_event(log, ev, buf, sizeof buf, len, &none), 0);
	return !none;
}

/* FLUSH to a log at full speed: the gaps add up to the log's final count. */
static void flush_log(unsigned nthreads)
{
	char path[256];
	int fd = tmp_file(path, sizeof path);
	struct tally t = { 0 };
	uint64_t last = 0;
	uint32_t n = 100000 * SCALE;
	trace_id_t log;

	make_stream(POSIX_TRACE_FLUSH, 16 * 1024, fd);
	CHECK_RC(posix_trace_start(trid), 0);
	run_writers(nthreads, n);
	CHECK_RC(posix_trace_shutdown(trid), 0);
	REQUIRE(lseek(fd, 0, SEEK_SET) == 0);
	CHECK_RC(posix_trace_open(fd, &log), 0);
	struct posix_trace_event_info ev;
	size_t len;
	while (log_next(log, &ev, &len))
		tally_event(log, &ev, len, &t, &last);
	struct pt_ext_losses x;
	CHECK_RC(pt_ext_losses(log, &x), 0);
	CHECK(x.total_ok);
	/* the controller's own events go through the stream too: START, and at
	 * shutdown STOP, FLUSH_START, FLUSH_STOP, which the flusher makes room
	 * for rather than lose them (the stream is full of events when the
	 * writers stop) */
	static const trace_event_id_t sys[] = { POSIX_TRACE_START, POSIX_TRACE_STOP,
	                                        POSIX_TRACE_FLUSH_START, POSIX_TRACE_FLUSH_STOP };
	for (unsigned i = 0; i < 4; i++)
		CHECK_EQ(t.sys[sys[i]], 1);
	CHECK_EQ(t.user + x.total, (uint64_t)nthreads * n);
	CHECK_EQ(t.gap_sum, x.total);
	CHECK_EQ(x.log_overwritten + x.log_dropped, 0);
	CHECK_EQ(t.gaps > 0, x.total > 0);
	printf("FLUSH, %u thread%s: %llu of %llu events in the log, %llu lost in %llu gaps "
	       "(%llu of them counted at a RESUME)\n", nthreads, nthreads == 1 ? "" : "s",
	       (unsigned long long)t.user, (unsigned long long)nthreads * n,
	       (unsigned long long)x.total, (unsigned long long)t.gaps,
	       (unsigned long long)t.gap_sum);
	CHECK_RC(posix_trace_close(log), 0);
	close(fd);
	unlink(path);
}

/* ---- the log format */

static struct pt_attr_img attr_img(void)
{
	struct pt_attr_img a;
	memset(&a, 0, sizeof a);
	strcpy(a.name, "loss_count");
	strcpy(a.version, "test");
	a.max_data = 64;
	a.log_policy = POSIX_TRACE_APPEND;
	a.has_log = 1;
	return a;
}

/* A log with a gap: OVERFLOW, RESUME carrying `at`, one event, and (if
 * finish) an END block saying `total`. */
static void write_gap_log(int fd, int swap, int finish, uint64_t at, uint64_t total)
{
	struct pt_attr_img a = attr_img();
	struct pt_logw_opt o = { .swap = swap };
	struct pt_logw w;
	uint32_t v = 7;

	REQUIRE(pt_logw_init_opt(&w, fd, &a, POSIX_TRACE_APPEND, 0, &o) == 0);
	CHECK_RC(pt_logw_event(&w, 1000, 5, 6, 0, POSIX_TRACE_OVERFLOW, 0, NULL, 0), 0);
	CHECK_RC(pt_logw_event_lost(&w, 2000, 5, 6, 0, POSIX_TRACE_RESUME, at), 0);
	CHECK_RC(pt_logw_sync(&w), 0); /* the event in a block of its own */
	CHECK_RC(pt_logw_event(&w, 2000, 5, 6, 0x1234, ID, 0, &v, sizeof v), 0);
	CHECK_RC(pt_logw_event_lost(&w, 1, 1, 1, 0, PT_NIDS, 1), EINVAL);
	if (finish) {
		w.stream_lost = total;
		CHECK_RC(pt_logw_finish(&w, NULL), 0);
	} else {
		CHECK_RC(pt_logw_sync(&w), 0);
	}
	pt_logw_free(&w);
}

/* Reads the log in fd: the events' ids in order into ids, the RESUME's
 * count in *at (UINT64_MAX if none). */
static int read_log(int fd, trace_event_id_t *ids, int cap, uint64_t *at, struct pt_ext_losses *x)
{
	trace_id_t log;
	int n = 0;

	*at = UINT64_MAX;
	REQUIRE(lseek(fd, 0, SEEK_SET) == 0);
	CHECK_RC(posix_trace_open(fd, &log), 0);
	struct posix_trace_event_info ev;
	size_t len;
	while (n < cap && log_next(log, &ev, &len)) {
		ids[n++] = ev.posix_event_id;
		CHECK_RC(pt_ext_losses(log, x), 0);
		if (ev.posix_event_id == POSIX_TRACE_RESUME) {
			CHECK_EQ(len, 0);
			if (x->resume_ok)
				*at = x->at_resume;
		} else {
			CHECK(!x->resume_ok); /* only the RESUME carried one */
		}
	}
	CHECK_RC(pt_ext_losses(log, x), 0);
	CHECK_RC(posix_trace_close(log), 0);
	return n;
}

static void log_format(void)
{
	char path[256];
	trace_event_id_t ids[8];
	struct pt_ext_losses x;
	uint64_t at;

	for (int swap = 0; swap < 2; swap++) {
		int fd = tmp_file(path, sizeof path);
		unlink(path);
		write_gap_log(fd, swap, 1, 123456789012ull, 987654321098ull);
		CHECK_EQ(read_log(fd, ids, 8, &at, &x), 3);
		CHECK(ids[0] == POSIX_TRACE_OVERFLOW && ids[1] == POSIX_TRACE_RESUME && ids[2] == ID);
		CHECK_EQ(at, 123456789012ull);
		CHECK(x.total_ok);
		CHECK_EQ(x.total, 987654321098ull);
		close(fd);
	}
	/* cut short (no END block): the RESUME still counts, no total */
	int fd = tmp_file(path, sizeof path);
	unlink(path);
	write_gap_log(fd, 0, 0, 42, 0);
	CHECK_EQ(read_log(fd, ids, 8, &at, &x), 3);
	CHECK_EQ(at, 42);
	CHECK(!x.total_ok);

	/* the same bytes as format version 1: a count record is damage there */
	unsigned char h[PT_LOG_HDR];
	REQUIRE(pread(fd, h, sizeof h, 0) == (ssize_t)sizeof h);
	pt_log_put16(h + PT_LOG_H_VERSION, 1, 0);
	pt_log_put32(h + PT_LOG_H_CRC, pt_log_crc(0, h, PT_LOG_H_CRC), 0);
	REQUIRE(pwrite(fd, h, sizeof h, 0) == (ssize_t)sizeof h);
	CHECK_EQ(read_log(fd, ids, 8, &at, &x), 2);
	CHECK(ids[0] == POSIX_TRACE_ERROR && ids[1] == ID);
	CHECK_EQ(at, UINT64_MAX);
	close(fd);

	/* a version 1 log without counts reads as before (written as format 3,
	 * whose records version 1 had: no short ones) */
	fd = tmp_file(path, sizeof path);
	unlink(path);
	struct pt_attr_img a = attr_img();
	struct pt_logw w;
	struct pt_logw_opt o3 = { .version = 3 };
	REQUIRE(pt_logw_init_opt(&w, fd, &a, POSIX_TRACE_APPEND, 0, &o3) == 0);
	CHECK_RC(pt_logw_event(&w, 1000, 5, 6, 0, POSIX_TRACE_OVERFLOW, 0, NULL, 0), 0);
	CHECK_RC(pt_logw_event(&w, 2000, 5, 6, 0, POSIX_TRACE_RESUME, 0, NULL, 0), 0);
	CHECK_RC(pt_logw_sync(&w), 0);
	pt_logw_free(&w);
	REQUIRE(pread(fd, h, sizeof h, 0) == (ssize_t)sizeof h);
	pt_log_put16(h + PT_LOG_H_VERSION, 1, 0);
	pt_log_put32(h + PT_LOG_H_CRC, pt_log_crc(0, h, PT_LOG_H_CRC), 0);
	REQUIRE(pwrite(fd, h, sizeof h, 0) == (ssize_t)sizeof h);
	CHECK_EQ(read_log(fd, ids, 8, &at, &x), 2);
	CHECK(ids[0] == POSIX_TRACE_OVERFLOW && ids[1] == POSIX_TRACE_RESUME);
	CHECK_EQ(at, UINT64_MAX);
	CHECK(!x.total_ok);
	close(fd);
}

struct pump {
	int from, to;
};

/* Copies a pipe into a file until EOF. */
static void *pump(void *arg)
{
	struct pump *p = arg;
	char buf[65536];
	ssize_t n;

	while ((n = read(p->from, buf, sizeof buf)) > 0)
		if (write(p->to, buf, (size_t)n) != n)
			break;
	return NULL;
}

static void flush_stuck_run(void)
{
	enum { RUN = 1001, MARK = 301 };
	char path[256];
	int fd = tmp_file(path, sizeof path), pp[2];
	uint32_t v[8] = { 0 };

	REQUIRE(pipe(pp) == 0);
	make_stream(POSIX_TRACE_FLUSH, 16 * 1024, pp[1]);
	CHECK_RC(posix_trace_start(trid), 0);
	/* fill the stream, the flusher's block and the pipe; then find RUN
	 * events lost in a row after one recorded (each event's fate read off
	 * the stream's count; the flusher, blocked in write(), frees nothing) */
	uint64_t lost = loss_total(trid);
	uint32_t run = 0;
	int recorded = 0;
	for (uint32_t i = 0; run < RUN; i++) {
		REQUIRE(i < 10000000);
		v[1] = i;
		posix_trace_event(ID, v, sizeof v);
		uint64_t now = loss_total(trid);
		if (now == lost) {
			recorded = 1;
			run = 0;
			continue;
		}
		REQUIRE(now == lost + 1);
		lost = now;
		run = recorded || run ? run + 1 : 0;
		recorded = 0;
	}
	/* let the flusher go on; the next event recorded ends the run */
	struct pump pu = { pp[0], fd };
	pthread_t th;
	REQUIRE(pthread_create(&th, NULL, pump, &pu) == 0);
	uint32_t more = 0;
	for (;;) {
		posix_trace_event(MARK, v, sizeof v);
		uint64_t now = loss_total(trid);
		if (now == lost)
			break;
		lost = now;
		more++;
		REQUIRE(more < 5000);
		usleep(1000);
	}
	CHECK_RC(posix_trace_shutdown(trid), 0);
	close(pp[1]);
	pthread_join(th, NULL);
	close(pp[0]);

	/* the event before the first MARK is a RESUME counting the whole run */
	trace_id_t log;
	REQUIRE(lseek(fd, 0, SEEK_SET) == 0);
	CHECK_RC(posix_trace_open(fd, &log), 0);
	uint64_t at = 0, gap = 0;
	trace_event_id_t prev = 0;
	int seen = 0;
	struct posix_trace_event_info ev;
	size_t len;
	while (log_next(log, &ev, &len)) {
		if (ev.posix_event_id == POSIX_TRACE_RESUME) {
			struct pt_ext_losses x;
			CHECK_RC(pt_ext_losses(log, &x), 0);
			gap = x.at_resume - at;
			at = x.at_resume;
		}
		if (ev.posix_event_id == MARK) {
			CHECK_EQ(prev, POSIX_TRACE_RESUME);
			CHECK_EQ(gap, (uint64_t)RUN + more);
			seen = 1;
			break;
		}
		prev = ev.posix_event_id;
	}
	CHECK(seen);
	printf("FLUSH, flusher stuck: a run of %u events lost, counted %llu at its RESUME\n",
	       RUN + more, (unsigned long long)gap);
	CHECK_RC(posix_trace_close(log), 0);
	close(fd);
	unlink(path);
}

int main(void)
{
	T_BEGIN(240);
	payload_len = 32;
	log_format();
	for (unsigned n = 1; n <= 4; n *= 2) {
		loop_after(n);
		loop_live(n);
		until_full(n);
		flush_log(n);
	}
	flush_stuck_run();
	CHECK_EQ(pt_ext_losses((trace_id_t)12345, &(struct pt_ext_losses){ 0 }), EINVAL);
	T_END();
}

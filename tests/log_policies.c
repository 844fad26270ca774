/*
 * log_policies.c -- the stream-full and log-full policies of a stream with
 * a log (pid 0).  (The flusher falling behind: log_flusher.c.)
 *
 * Stream FLUSH: with no posix_trace_flush() at all, the log file grows
 * while events are recorded (the flusher drains the stream continuously);
 * a second open of the log while recording goes on gives a prefix of the
 * events; at the end every one of 60000 paced events is in the log, in
 * order, and the only FLUSH_START/FLUSH_STOP pair is shutdown's.
 * Stream LOOP and UNTIL_FULL: nothing reaches the log before a flush (the
 * file is the header alone 100 ms after recording); a flush writes START,
 * the events and a FLUSH_START/FLUSH_STOP pair.  LOOP recording more than
 * the stream holds: OVERFLOW, RESUME, then the newest events in order.
 * UNTIL_FULL: the stream stops itself when full (SUSPENDED, FULL); the
 * flush empties it and it runs again (RUNNING, NOT_FULL); the log holds
 * the first events, the automatic STOP (pid 0, int 1), the automatic
 * START, the later events, and every FLUSH_STOP has its FLUSH_START.
 * Log LOOP, log-max-size 4096, n = 10..400 events: the log always holds
 * the newest events (at least the last one), contiguous and in order, the
 * event name (re-emitted on each lap); whenever fewer than n are left the
 * opened log's posix_log_overrun_status is OVERRUN, and so is the live
 * stream's after a flush that overwrote events; a second get_status says
 * NO_OVERRUN (reading resets it).
 * Log UNTIL_FULL, the same sizes: the log holds events 0..k-1 and, when
 * k < n, ends with STOP (int 1, not before the last event); then
 * posix_log_full_status is FULL in the live status after the flush and in
 * the log; the full log is not an error (flush returns 0, flush_error 0);
 * NOT_FULL otherwise.
 * Log APPEND with log-max-size 1: 50000 events, all there.
 * A stream shut down while running leaves in its log the status of a
 * stopped stream (shutdown stops "as if posix_trace_stop() had been
 * invoked").
 */
#include "log_util.h"

static char path[256];

static trace_id_t make(int stream_policy, size_t stream_size, int log_policy, size_t log_size,
                       size_t max_data, int *fd)
{
	trace_attr_t a;
	trace_id_t trid;

	*fd = lu_tmpfile(path, sizeof path, "pol", O_RDWR);
	posix_trace_attr_init(&a);
	if (stream_policy)
		posix_trace_attr_setstreamfullpolicy(&a, stream_policy);
	posix_trace_attr_setstreamsize(&a, stream_size);
	posix_trace_attr_setlogfullpolicy(&a, log_policy);
	posix_trace_attr_setlogsize(&a, log_size);
	posix_trace_attr_setmaxdatasize(&a, max_data);
	REQUIRE(posix_trace_create_withlog(0, &a, *fd, &trid) == 0);
	posix_trace_attr_destroy(&a);
	CHECK_RC(posix_trace_start(trid), 0);
	return trid;
}

static void finish(trace_id_t trid, int fd)
{
	CHECK_RC(posix_trace_shutdown(trid), 0);
	close(fd);
}

static void put(trace_event_id_t id, uint32_t seq, size_t len)
{
	unsigned char p[64];
	lu_make(p, seq, 0, len);
	posix_trace_event(id, p, len);
}

/* Every FLUSH_STOP closes a FLUSH_START, and they alternate. */
static void flush_pairs(int n, int want)
{
	int open = 0, bad = 0, pairs = 0;
	for (int i = 0; i < n; i++) {
		if (lu_ev[i].id == POSIX_TRACE_FLUSH_START)
			bad += open, open = 1;
		else if (lu_ev[i].id == POSIX_TRACE_FLUSH_STOP)
			bad += !open, pairs += open, open = 0;
	}
	CHECK_EQ(bad + open, 0);
	CHECK_EQ(pairs, want);
}

/* ------------------------------------------------------ stream FLUSH */
static void stream_flush(void)
{
	/* REC: a log record of one of these events, from one call site: an
	 * 8-byte header and 32 bytes (a block's first has 16 of header) */
	enum { N = 60000, BURST = 500, REC = 40 };
	int fd, n, k, rfd;
	trace_id_t trid = make(0, 4 << 20, POSIX_TRACE_APPEND, 0, 64, &fd), log; /* holds all */
	long long mid = 0;

	for (uint32_t i = 0; i < N; i++) {
		put(17, i, 32);
		if (i % BURST == BURST - 1)
			usleep(2000);            /* paced: the flusher keeps up */
		if (i == N / 2) { /* the log grows with no flush asked for */
			long long until = lu_mono_ms() + 10000;
			while ((mid = lu_fsize(path)) < (long long)REC * N / 4 && lu_mono_ms() < until)
				usleep(2000);
			k = lu_load(path, NULL, NULL);   /* the log so far, while recording */
			CHECK(k > 10000);
			CHECK_EQ(lu_user(k, 17, getpid(), 1, 1, NULL, NULL), k - 1);
			lu_no_damage(k);
		}
	}
	/* all but the block being built, with no flush */
	long long end = lu_mono_ms() + 5000;
	while (lu_fsize(path) < (long long)REC * N - 65536 && lu_mono_ms() < end)
		usleep(5000);
	CHECK(lu_fsize(path) >= (long long)REC * N - 65536);
	CHECK(mid >= (long long)REC * N / 4);                 /* it grew before the end */
	struct posix_trace_status_info si = lu_status(trid);
	CHECK_EQ(si.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
	CHECK_EQ(si.posix_stream_flush_status, POSIX_TRACE_NOT_FLUSHING);
	CHECK_EQ(si.posix_stream_status, POSIX_TRACE_RUNNING);
	finish(trid, fd);
	n = lu_load(path, &log, &rfd);
	CHECK_EQ(n - lu_count(n, POSIX_TRACE_STOP, -1), N + 1 + 2);
	CHECK_EQ(lu_user(n, 17, getpid(), 1, 1, NULL, NULL), N);
	flush_pairs(n, 1);
	lu_ts_sorted(n);
	si = lu_status(log);
	CHECK_EQ(si.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
	CHECK_EQ(si.posix_log_overrun_status, POSIX_TRACE_NO_OVERRUN);
	CHECK_RC(posix_trace_close(log), 0);
	close(rfd);
	lu_rmfile(path);
}

/* ------------------------------------------- stream LOOP and UNTIL_FULL */
static void stream_loop(void)
{
	int fd, n;
	trace_id_t trid = make(POSIX_TRACE_LOOP, 65536, POSIX_TRACE_APPEND, 0, 64, &fd);

	for (uint32_t i = 0; i < 1000; i++)          /* 40 KB: fits */
		put(17, i, 32);
	usleep(100000);
	CHECK_EQ(lu_fsize(path), 256);               /* nothing before a flush */
	CHECK_RC(lu_flush_wait(trid, NULL), 0);
	n = lu_load(path, NULL, NULL);
	CHECK_EQ(n, 1003);
	CHECK(n > 0 && lu_ev[0].id == POSIX_TRACE_START);
	CHECK_EQ(lu_user(n, 17, getpid(), 1, 1, NULL, NULL), 1000);
	flush_pairs(n, 1);
	for (uint32_t i = 0; i < 10000; i++)         /* 400 KB: the stream loops */
		put(18, 1000 + i, 32);
	usleep(100000);
	long long before = lu_fsize(path);
	CHECK_EQ(lu_status(trid).posix_stream_overrun_status, POSIX_TRACE_OVERRUN);
	CHECK_EQ(lu_fsize(path), before);
	CHECK_RC(lu_flush_wait(trid, NULL), 0);
	finish(trid, fd);
	n = lu_load(path, NULL, NULL);
	lu_no_damage(n);
	int i = 1003, k = 0;
	CHECK(n > i + 2 && lu_ev[i].id == POSIX_TRACE_OVERFLOW && lu_ev[i + 1].id == POSIX_TRACE_RESUME);
	while (i + 2 + k < n && lu_ev[i + 2 + k].id == 18)
		k++;
	CHECK(k >= 500);                              /* the newest, contiguous */
	CHECK_EQ(lu_user(n, 18, getpid(), 1, 1, (const uint32_t[]){ 11000 - (uint32_t)k }, NULL), k);
	CHECK_EQ(lu_count(n, POSIX_TRACE_OVERFLOW, -1), 1);
	flush_pairs(n, 3);
	lu_rmfile(path);
}

static void stream_until_full(void)
{
	int fd, n;
	trace_id_t trid = make(POSIX_TRACE_UNTIL_FULL, 65536, POSIX_TRACE_APPEND, 0, 64, &fd);

	for (uint32_t i = 0; i < 5000; i++)          /* 200 KB: fills the stream */
		put(17, i, 32);
	usleep(100000);
	CHECK_EQ(lu_fsize(path), 256);
	struct posix_trace_status_info si = lu_status(trid);
	CHECK_EQ(si.posix_stream_status, POSIX_TRACE_SUSPENDED);
	CHECK_EQ(si.posix_stream_full_status, POSIX_TRACE_FULL);
	CHECK_RC(lu_flush_wait(trid, NULL), 0);
	si = lu_status(trid);
	CHECK_EQ(si.posix_stream_status, POSIX_TRACE_RUNNING);
	CHECK_EQ(si.posix_stream_full_status, POSIX_TRACE_NOT_FULL);
	for (uint32_t i = 0; i < 100; i++)
		put(18, i, 32);
	finish(trid, fd);
	n = lu_load(path, NULL, NULL);
	lu_no_damage(n);
	int k = lu_user(n, 17, getpid(), 1, 1, NULL, NULL);
	CHECK(k >= 1000 && k < 5000);
	CHECK_EQ(lu_user(n, 18, getpid(), 1, 1, NULL, NULL), 100);
	CHECK(n > k + 2 && lu_ev[0].id == POSIX_TRACE_START && lu_ev[0].pid == getpid());
	CHECK(n > k + 2 && lu_ev[k + 1].id == POSIX_TRACE_STOP && lu_ev[k + 1].pid == 0 &&
	      lu_ev[k + 1].len == sizeof(int) && lu_ev[k + 1].ival == 1);
	CHECK_EQ(lu_count(n, POSIX_TRACE_STOP, 0), 1);  /* the automatic one */
	CHECK_EQ(lu_count(n, POSIX_TRACE_START, 0), 1); /* the automatic restart */
	flush_pairs(n, 2);
	lu_rmfile(path);
}

/* ------------------------------------------------------- log-full policies */
struct tally { int bad[6]; int first_n[6]; };
static void note(struct tally *t, int what, int cond, int n)
{
	if (!cond)
		return;
	if (!t->bad[what]++)
		t->first_n[what] = n;
}

static void log_sweep(int policy)
{
	static const char *what[2][6] = {
		{ "newest event missing", "events lost, log status NO_OVERRUN",
		  "events lost at the flush, live status NO_OVERRUN", "log overrun not reset by get_status",
		  "event name missing", "flush error" },
		{ "not a prefix ending in STOP", "STOP but log status NOT_FULL",
		  "STOP at the flush, live status NOT_FULL", "log overrun not reset by get_status",
		  "event name missing", "flush error" } };
	struct tally t = { { 0 }, { 0 } };
	int u = policy == POSIX_TRACE_UNTIL_FULL;

	for (int n = 10; n <= 400; n += 6) {
		int fd, rfd, k, err = -1;
		trace_id_t log, trid = make(0, 1 << 20, policy, 4096, 64, &fd);
		trace_event_id_t id;
		CHECK_RC(posix_trace_eventid_open("log-policies/sweep", &id), 0);
		for (uint32_t i = 0; i < (uint32_t)n; i++)
			put(id, i, 8);
		note(&t, 5, lu_flush_wait(trid, &err) != 0 || err != 0, n);
		struct posix_trace_status_info s1 = lu_status(trid), s2 = lu_status(trid);
		note(&t, 3, s2.posix_log_overrun_status != POSIX_TRACE_NO_OVERRUN, n);
		k = lu_load(path, NULL, NULL);          /* the log as the flush left it */
		int users = lu_count(k, id, -1), stop = k && lu_ev[k - 1].id == POSIX_TRACE_STOP;
		if (u)
			note(&t, 2, stop && s1.posix_log_full_status != POSIX_TRACE_FULL, n);
		else
			note(&t, 2, users < n && !lu_polled.log_overrun &&
			     s1.posix_log_overrun_status != POSIX_TRACE_OVERRUN, n);
		finish(trid, fd);

		k = lu_load(path, &log, &rfd);
		users = lu_count(k, id, -1);
		struct posix_trace_status_info sl = lu_status(log);
		int last = -1;
		for (int i = 0; i < k; i++)
			if (lu_ev[i].id == id)
				last = i;
		if (u) {
			stop = k && lu_ev[k - 1].id == POSIX_TRACE_STOP;
			int lost = users < n;
			note(&t, 0, lu_user(k, id, getpid(), 1, 1, NULL, NULL) != users ||
			     (lost && (!stop || lu_ev[k - 1].ival != 1 || lu_ev[k - 1].pid != getpid() ||
			               last < 0 || lu_ev[k - 1].ts < lu_ev[last].ts)), n);
			note(&t, 1, (stop ? POSIX_TRACE_FULL : POSIX_TRACE_NOT_FULL) !=
			     sl.posix_log_full_status, n);
		} else {
			uint32_t first = (uint32_t)(n - users);
			note(&t, 0, users < 1 || lu_user(k, id, getpid(), 1, 1, &first, NULL) != users, n);
			note(&t, 1, users < n && sl.posix_log_overrun_status != POSIX_TRACE_OVERRUN, n);
		}
		char name[TRACE_EVENT_NAME_MAX + 1] = "";
		note(&t, 4, users && (posix_trace_eventid_get_name(log, id, name) != 0 ||
		                      strcmp(name, "log-policies/sweep") != 0), n);
		lu_no_damage(k);
		CHECK_RC(posix_trace_close(log), 0);
		close(rfd);
		lu_rmfile(path);
	}
	for (int w = 0; w < 6; w++) {
		if (t.bad[w])
			fprintf(stderr, "  log %s: %s: %d sizes, the first n = %d\n", u ? "UNTIL_FULL" : "LOOP",
			        what[u][w], t.bad[w], t.first_n[w]);
		CHECK_EQ(t.bad[w], 0);
	}
}

static void log_append(void)
{
	int fd, n;
	trace_id_t trid = make(0, 4 << 20, POSIX_TRACE_APPEND, 1, 64, &fd); /* holds all */
	for (uint32_t i = 0; i < 50000; i++) {
		put(17, i, 8 + i % 50);
		if (i % 5000 == 4999)
			usleep(2000);
	}
	finish(trid, fd);
	n = lu_load(path, NULL, NULL);
	CHECK_EQ(lu_user(n, 17, getpid(), 1, 1, NULL, NULL), 50000);
	CHECK_EQ(n - lu_count(n, POSIX_TRACE_STOP, -1), 50000 + 3);
	lu_rmfile(path);
}

/* shutdown of a running stream: the log's status is a stopped stream's */
static void shutdown_running(void)
{
	int fd, rfd, n;
	trace_id_t log, trid = make(0, 1 << 20, POSIX_TRACE_APPEND, 0, 64, &fd);
	for (uint32_t i = 0; i < 10; i++)
		put(17, i, 8);
	finish(trid, fd);
	n = lu_load(path, &log, &rfd);
	CHECK_EQ(lu_user(n, 17, getpid(), 1, 1, NULL, NULL), 10);
	CHECK_EQ(lu_status(log).posix_stream_status, POSIX_TRACE_SUSPENDED);
	CHECK_RC(posix_trace_close(log), 0);
	close(rfd);
	lu_rmfile(path);
}

int main(void)
{
	T_BEGIN(120);
	stream_flush();
	stream_loop();
	stream_until_full();
	log_sweep(POSIX_TRACE_LOOP);
	log_sweep(POSIX_TRACE_UNTIL_FULL);
	log_append();
	shutdown_running();
	T_END();
}

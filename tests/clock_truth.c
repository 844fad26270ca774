/*
 * clock_truth -- every event's posix_timestamp is true under load.
 *
 * The witness is the program itself: a thread reads CLOCK_REALTIME (t0),
 * records a "mark" event, reads CLOCK_REALTIME again (t1) and records a
 * "witness" event whose text payload carries t0 and t1.  The mark's
 * timestamp, however it is read back, must lie in [t0 - B, t1 + B], B the
 * accuracy bound docs/implementation-defined.md states (PT_CLOCK_BOUND_NS
 * below, 10 us).  Every thread's timestamps must also be nondecreasing.
 *
 * The load: 2 x (CPUs + 1) threads that record bursts of events and spin
 * in between, each bracketing a mark every few bursts, so the machine is
 * oversubscribed, threads migrate, and whoever reads (reader thread,
 * flusher, another process) is starved of CPU.  Each reading path is
 * checked over several recordings, because an error of the conversion
 * can show in some runs only:
 *
 *   live   getnext on the process's own stream (LOOP and UNTIL_FULL), a
 *          reader thread competing with the recorders
 *   log    create_withlog (FLUSH), read back with posix_trace_open
 *   remote a stream created for another process, read live
 *   inherit a log of a process and its forked child
 *   cli    posixtrace record, then the log read with posix_trace_open,
 *          posixtrace show -a, export --format chrome (times relative
 *          to the first event) and --format ctf (babeltrace2, if installed)
 *   short  streams that live about a millisecond: one mark each
 *
 * Counts are exact where nothing can be lost (the log and cli paths check
 * that the trace reports no loss, then that every bracket made is there).
 * CLOCK_TRUTH_ROUNDS=N repeats each path N times (make stress; 3 by
 * default, 1 in a sanitized build).
 *
 * CLOCK_TRUTH_SOAK=S runs, instead, one program for S seconds (make soak:
 * minutes) under the same oversubscription with three streams at once:
 * a flight recorder nobody reads until the end (its events are converted
 * across the whole run), a FLUSH log, and a stream read live.  The busy
 * threads spin longer between bursts and the marks come every 10 ms, so
 * the flight recorder and the log (busy events filtered out) hold every
 * bracket of the run.  The flight recorder's bound holds while nothing
 * changes the clock's rate (docs/implementation-defined.md, "A stream
 * read long after it was recorded"): where adjtimex() shows the kernel's
 * clock disciplined (NTP), that part is reported, not asserted.
 *
 * Run with --app NBUSY MS [fork] it is the traced program for the cli and
 * remote paths.
 */
#include <inttypes.h>
#include <pthread.h>
#include <sys/timex.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "helpers.h"

#define PT_CLOCK_BOUND_NS 10000 /* docs/implementation-defined.md */

static int64_t real_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* ------------------------------------------------------------ the load */
static trace_event_id_t ev_busy, ev_mark, ev_wit;
static atomic_int stop_busy;
static atomic_long brackets; /* made by this process */
static unsigned busy_burst = 8, busy_spin = 20000; /* events, then a spin */
static long mark_gap_ns = 200000; /* the main thread's marks */

static void ids(void)
{
	REQUIRE(posix_trace_eventid_open("busy", &ev_busy) == 0);
	REQUIRE(posix_trace_eventid_open("mark", &ev_mark) == 0);
	REQUIRE(posix_trace_eventid_open("witness", &ev_wit) == 0);
}

/* One bracketed mark: seq counts this thread's marks. */
static void bracket(unsigned long seq)
{
	char m[32], w[96];
	int mn = snprintf(m, sizeof m, "M %lu", seq);
	int64_t t0 = real_ns();
	posix_trace_event(ev_mark, m, (size_t)mn);
	int64_t t1 = real_ns();
	int wn = snprintf(w, sizeof w, "W %lu %" PRId64 " %" PRId64, seq, t0, t1);
	posix_trace_event(ev_wit, w, (size_t)wn);
	atomic_fetch_add(&brackets, 1);
}

static void spin(unsigned n)
{
	for (volatile unsigned i = 0; i < n; i++)
		;
}

static void *busy(void *arg)
{
	unsigned long seq = 0, x = (uintptr_t)arg;

	while (!atomic_load_explicit(&stop_busy, memory_order_relaxed)) {
		for (int b = 0; b < 8; b++) {
			for (unsigned i = 0; i < busy_burst; i++)
				posix_trace_event(ev_busy, &x, sizeof x);
			spin(busy_spin);
		}
		bracket(seq++);
	}
	return NULL;
}

/* Run the load for ms milliseconds: nbusy recording threads, and the
 * calling thread marking every 200 us or so (sleeping in between, so it
 * wakes on a busy CPU). */
static void workload(int nbusy, int ms)
{
	pthread_t th[64];
	unsigned long seq = 0;

	atomic_store(&stop_busy, 0);
	for (int i = 0; i < nbusy; i++)
		REQUIRE(pthread_create(&th[i], NULL, busy, (void *)(uintptr_t)i) == 0);
	int64_t end = real_ns() + (int64_t)ms * 1000000;
	while (real_ns() < end) {
		bracket(seq++);
		nanosleep(&(struct timespec){ 0, mark_gap_ns }, NULL);
	}
	atomic_store(&stop_busy, 1);
	for (int i = 0; i < nbusy; i++)
		pthread_join(th[i], NULL);
}

static int nbusy_default(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	n = n < 1 ? 1 : n > 15 ? 15 : n;
	return (int)(2 * (n + 1));
}

/* ------------------------------------------------------------ checking */
struct thr {
	int pid;
	uint64_t thread;
	int64_t last_ts;         /* nondecreasing */
	unsigned long mark_seq;  /* the last mark seen, and its time */
	int64_t mark_ts;
	int have_mark;
};

struct check {
	const char *what;
	struct thr *t;
	size_t nt;
	long checked, outside, backwards, unpaired, lost;
	int64_t worst;           /* largest distance outside [t0, t1], ns */
	int64_t rel;             /* times are relative to this (chrome); 0: absolute */
};

static struct thr *thr_of(struct check *c, int pid, uint64_t thread)
{
	for (size_t i = 0; i < c->nt; i++)
		if (c->t[i].pid == pid && c->t[i].thread == thread)
			return &c->t[i];
	c->t = realloc(c->t, (c->nt + 1) * sizeof *c->t);
	REQUIRE(c->t != NULL);
	c->t[c->nt] = (struct thr){ .pid = pid, .thread = thread, .last_ts = INT64_MIN };
	return &c->t[c->nt++];
}

/* One event: kind 'M' mark, 'W' witness, anything else only for order. */
static void feed(struct check *c, int pid, uint64_t thread, int64_t ts, const char *text,
                 size_t len)
{
	struct thr *t = thr_of(c, pid, thread);
	char buf[128];

	if (ts < t->last_ts) {
		if (c->backwards++ < 5)
			fprintf(stderr, "%s: pid %d thread %" PRIx64 ": time went back by %" PRId64
			        " ns\n", c->what, pid, thread, t->last_ts - ts);
	}
	t->last_ts = ts;
	if (len == 0 || len >= sizeof buf)
		return;
	memcpy(buf, text, len);
	buf[len] = 0;
	unsigned long seq;
	int64_t t0, t1;
	if (buf[0] == 'M' && sscanf(buf, "M %lu", &seq) == 1) {
		t->mark_seq = seq;
		t->mark_ts = ts;
		t->have_mark = 1;
	} else if (buf[0] == 'W' && sscanf(buf, "W %lu %" SCNd64 " %" SCNd64, &seq, &t0, &t1) == 3) {
		if (!t->have_mark || t->mark_seq != seq) {
			c->unpaired++;
			return;
		}
		t->have_mark = 0;
		c->checked++;
		t0 -= c->rel;
		t1 -= c->rel;
		int64_t off = t->mark_ts < t0 ? t0 - t->mark_ts : t->mark_ts > t1 ? t->mark_ts - t1 : 0;
		if (off > c->worst)
			c->worst = off;
		if (off > PT_CLOCK_BOUND_NS && c->outside++ < 5)
			fprintf(stderr, "%s: pid %d mark %lu at %" PRId64 " is %" PRId64
			        " ns outside [%" PRId64 ", %" PRId64 "]\n",
			        c->what, pid, seq, t->mark_ts, off, t0, t1);
	}
}

static void feed_event(struct check *c, const struct posix_trace_event_info *e,
                       const void *data, size_t len)
{
	int64_t ts = (int64_t)e->posix_timestamp.tv_sec * 1000000000 + e->posix_timestamp.tv_nsec;
	if (e->posix_event_id == POSIX_TRACE_OVERFLOW)
		c->lost++;
	if (e->posix_pid == 0)
		return; /* OVERFLOW, RESUME and ERROR stand where their gap is */
	if (e->posix_event_id == ev_mark || e->posix_event_id == ev_wit)
		feed(c, e->posix_pid, (uint64_t)e->posix_thread_id, ts, data, len);
	else
		feed(c, e->posix_pid, (uint64_t)e->posix_thread_id, ts, "", 0);
}

/* The verdict on one recording; exact: every bracket made must be there. */
static void verdict(struct check *c, long made, int exact)
{
	if (c->outside || c->backwards || (c->unpaired && !c->lost) ||
	    (exact && (c->checked != made || c->lost)) || c->checked < 20 || getenv("CLOCK_TRUTH_V"))
		fprintf(stderr, "%s: %ld of %ld brackets checked, %ld outside (worst %" PRId64
		        " ns), %ld backwards, %ld unpaired, %ld overflows\n", c->what, c->checked,
		        made, c->outside, c->worst, c->backwards, c->unpaired, c->lost);
	CHECK_EQ(c->outside, 0);
	CHECK_EQ(c->backwards, 0);
	if (!c->lost) /* a lost witness leaves its mark unpaired */
		CHECK_EQ(c->unpaired, 0);
	CHECK(c->checked >= 20);
	if (exact) {
		CHECK_EQ(c->lost, 0);
		CHECK_EQ(c->checked, made);
	}
	free(c->t);
	memset(c, 0, sizeof *c);
}

static void attr_big(trace_attr_t *a, int policy, int inherit)
{
	REQUIRE(posix_trace_attr_init(a) == 0);
	REQUIRE(posix_trace_attr_setstreamsize(a, 64u << 20) == 0);
	REQUIRE(posix_trace_attr_setstreamfullpolicy(a, policy) == 0);
	REQUIRE(posix_trace_attr_setinherited(a, inherit) == 0);
}

/* ------------------------------------------------------------ live */
struct reader_arg {
	trace_id_t trid;
	struct check *c;
	atomic_int done;
};

static void *reader(void *arg)
{
	struct reader_arg *r = arg;
	struct posix_trace_event_info e;
	char data[256];
	size_t len;
	int none;

	while (!atomic_load(&r->done)) {
		struct timespec abs;
		clock_gettime(CLOCK_REALTIME, &abs);
		abs.tv_nsec += 20000000;
		if (abs.tv_nsec >= 1000000000) {
			abs.tv_nsec -= 1000000000;
			abs.tv_sec++;
		}
		int rc = posix_trace_timedgetnext_event(r->trid, &e, data, sizeof data, &len, &none,
		                                        &abs);
		if (rc == 0 && !none)
			feed_event(r->c, &e, data, len);
		else
			REQUIRE(rc == 0 || rc == ETIMEDOUT);
	}
	return NULL;
}

/* Everything left in a stream. */
static void drain(trace_id_t trid, struct check *c)
{
	struct posix_trace_event_info e;
	char data[256];
	size_t len;
	int none = 0;

	for (;;) {
		REQUIRE(posix_trace_trygetnext_event(trid, &e, data, sizeof data, &len, &none) == 0);
		if (none)
			break;
		feed_event(c, &e, data, len);
	}
}

static void live_own(int policy, int ms)
{
	trace_attr_t a;
	struct check c = { .what = policy == POSIX_TRACE_LOOP ? "live LOOP" : "live UNTIL_FULL" };
	struct reader_arg r = { .c = &c };
	pthread_t th;

	attr_big(&a, policy, POSIX_TRACE_CLOSE_FOR_CHILD);
	REQUIRE(posix_trace_create(0, &a, &r.trid) == 0);
	posix_trace_attr_destroy(&a);
	REQUIRE(posix_trace_start(r.trid) == 0);
	REQUIRE(pthread_create(&th, NULL, reader, &r) == 0);
	atomic_store(&brackets, 0);
	workload(nbusy_default(), ms);
	REQUIRE(posix_trace_stop(r.trid) == 0);
	atomic_store(&r.done, 1);
	pthread_join(th, NULL);
	drain(r.trid, &c);
	REQUIRE(posix_trace_shutdown(r.trid) == 0);
	verdict(&c, atomic_load(&brackets), 0);
}

/* ------------------------------------------------------------ logs */
/* Every event of the log (read with posix_trace_open, cli_util.h). */
static void check_log(const char *path, struct check *c)
{
	struct cli_ev *ev;
	int n = cli_read_log(path, &ev);

	for (int i = 0; i < n; i++)
		feed_event(c, &ev[i].info, ev[i].data, ev[i].len);
	free(ev);
}

/* The number of brackets a child made, from its exit status is too small:
 * children report it through a pipe. */
static long child_brackets(int rfd)
{
	long n = 0;
	REQUIRE(read(rfd, &n, sizeof n) == (ssize_t)sizeof n);
	return n;
}

static void log_own(int inherit, int ms)
{
	trace_attr_t a;
	trace_id_t trid;
	struct check c = { .what = inherit ? "log, inherited child" : "log FLUSH" };
	const char *path = cli_path("own.ptlog");
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600), p[2];

	REQUIRE(fd >= 0);
	REQUIRE(pipe(p) == 0);
	attr_big(&a, POSIX_TRACE_FLUSH, inherit ? POSIX_TRACE_INHERITED : POSIX_TRACE_CLOSE_FOR_CHILD);
	REQUIRE(posix_trace_attr_setlogsize(&a, 1u << 30) == 0);
	REQUIRE(posix_trace_create_withlog(0, &a, fd, &trid) == 0);
	posix_trace_attr_destroy(&a);
	REQUIRE(posix_trace_start(trid) == 0);
	atomic_store(&brackets, 0);
	pid_t kid = -1;
	if (inherit) {
		fflush(NULL);
		kid = fork();
		REQUIRE(kid >= 0);
		if (kid == 0) { /* (under TSan: marks from its main thread only) */
			atomic_store(&brackets, 0);
			workload(UNDER_TSAN ? 0 : nbusy_default() / 2, ms);
			long n = atomic_load(&brackets);
			_exit(write(p[1], &n, sizeof n) == (ssize_t)sizeof n ? 0 : 1);
		}
	}
	workload(inherit ? nbusy_default() / 2 : nbusy_default(), ms);
	long made = atomic_load(&brackets);
	if (inherit) {
		int st;
		REQUIRE(waitpid(kid, &st, 0) == kid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
		made += child_brackets(p[0]);
	}
	REQUIRE(posix_trace_shutdown(trid) == 0);
	close(fd);
	close(p[0]);
	close(p[1]);
	check_log(path, &c);
	verdict(&c, made, 1);
}

/* ------------------------------------------------------------ soak */
/* The kernel's discipline of the clock: 1 if it may change CLOCK_MONOTONIC's
 * rate (an NTP daemon keeps it synchronized, or a slew is under way);
 * *freq: its frequency offset (scaled ppm). */
static int clock_disciplined(long *freq)
{
	struct timex tx = { 0 };
	int state = adjtimex(&tx);

	*freq = tx.freq;
	return state < 0 || !(tx.status & STA_UNSYNC) || tx.offset != 0;
}

static trace_id_t soak_stream(int policy, size_t size, int fd, int filter_busy)
{
	trace_attr_t a;
	trace_id_t trid;
	trace_event_set_t set;

	attr_big(&a, policy, POSIX_TRACE_CLOSE_FOR_CHILD);
	REQUIRE(posix_trace_attr_setstreamsize(&a, size) == 0);
	if (fd >= 0) {
		REQUIRE(posix_trace_attr_setlogsize(&a, 1u << 30) == 0);
		REQUIRE(posix_trace_create_withlog(0, &a, fd, &trid) == 0);
	} else {
		REQUIRE(posix_trace_create(0, &a, &trid) == 0);
	}
	posix_trace_attr_destroy(&a);
	if (filter_busy) {
		REQUIRE(posix_trace_eventset_empty(&set) == 0);
		REQUIRE(posix_trace_eventset_add(ev_busy, &set) == 0);
		REQUIRE(posix_trace_set_filter(trid, &set, POSIX_TRACE_SET_EVENTSET) == 0);
	}
	REQUIRE(posix_trace_start(trid) == 0);
	return trid;
}

static void soak(int seconds)
{
	struct check fc = { .what = "soak: flight recorder read at the end" };
	struct check lc = { .what = "soak: log FLUSH" };
	struct check rc = { .what = "soak: live reader" };
	struct reader_arg r = { .c = &rc };
	const char *path = cli_path("soak.ptlog");
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	long f0, f1;
	pthread_t th;

	REQUIRE(fd >= 0);
	setenv("CLOCK_TRUTH_V", "1", 1); /* each verdict's figures, passed or not */
	busy_spin = 2000000; /* a burst every 1-2 ms per thread, still spinning */
	mark_gap_ns = 10000000;
	int disc = clock_disciplined(&f0);
	trace_id_t fr = soak_stream(POSIX_TRACE_LOOP, 128u << 20, -1, 1);
	trace_id_t lg = soak_stream(POSIX_TRACE_FLUSH, 64u << 20, fd, 1);
	r.trid = soak_stream(POSIX_TRACE_LOOP, 64u << 20, -1, 0);
	REQUIRE(pthread_create(&th, NULL, reader, &r) == 0);
	atomic_store(&brackets, 0);
	workload(nbusy_default(), seconds * 1000);
	long made = atomic_load(&brackets);
	disc |= clock_disciplined(&f1) || f1 != f0;

	REQUIRE(posix_trace_stop(r.trid) == 0);
	atomic_store(&r.done, 1);
	pthread_join(th, NULL);
	drain(r.trid, &rc);
	REQUIRE(posix_trace_shutdown(r.trid) == 0);
	verdict(&rc, made, 0);

	REQUIRE(posix_trace_shutdown(lg) == 0);
	close(fd);
	check_log(path, &lc);
	verdict(&lc, made, 1);

	REQUIRE(posix_trace_stop(fr) == 0);
	drain(fr, &fc);
	REQUIRE(posix_trace_shutdown(fr) == 0);
	if (disc) { /* its count and order still checked, not its bound */
		printf("SKIP part: the flight recorder's 10 us bound (the kernel's clock is "
		       "disciplined: NTP may change its rate; %ld of %ld brackets within it, worst %"
		       PRId64 " ns off)\n", fc.checked - fc.outside, made, fc.worst);
		fc.outside = 0;
	}
	verdict(&fc, made, 1);
	printf("soak: %d s, %ld brackets made\n", seconds, made);
}

/* ------------------------------------------------------------ remote */
static char self[512];

static void remote(int ms)
{
	trace_attr_t a;
	struct check c = { .what = "remote, live" };
	struct reader_arg r = { .c = &c };
	int go[2], res[2];

	REQUIRE(pipe(go) == 0 && pipe(res) == 0);
	fflush(NULL);
	pid_t kid = fork();
	REQUIRE(kid >= 0);
	if (kid == 0) {
		char x;
		close(go[1]);
		if (read(go[0], &x, 1) != 1)
			_exit(1);
		atomic_store(&brackets, 0);
		workload(nbusy_default(), ms);
		long n = atomic_load(&brackets);
		_exit(write(res[1], &n, sizeof n) == (ssize_t)sizeof n ? 0 : 1);
	}
	close(go[0]);
	attr_big(&a, POSIX_TRACE_UNTIL_FULL, POSIX_TRACE_CLOSE_FOR_CHILD);
	REQUIRE(posix_trace_create(kid, &a, &r.trid) == 0);
	posix_trace_attr_destroy(&a);
	REQUIRE(posix_trace_start(r.trid) == 0);
	pthread_t th;
	REQUIRE(pthread_create(&th, NULL, reader, &r) == 0);
	REQUIRE(write(go[1], "g", 1) == 1);
	int st;
	REQUIRE(waitpid(kid, &st, 0) == kid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	long made = child_brackets(res[0]);
	REQUIRE(posix_trace_stop(r.trid) == 0);
	atomic_store(&r.done, 1);
	pthread_join(th, NULL);
	drain(r.trid, &c);
	REQUIRE(posix_trace_shutdown(r.trid) == 0);
	close(go[1]);
	close(res[0]);
	close(res[1]);
	/* 64 MiB holds the whole run: nothing may be missing */
	verdict(&c, made, 1);
}

/* ------------------------------------------------------------ short */
static void short_streams(int n)
{
	struct check c = { .what = "1 ms streams" };

	for (int i = 0; i < n; i++) {
		trace_attr_t a;
		trace_id_t trid;
		REQUIRE(posix_trace_attr_init(&a) == 0);
		REQUIRE(posix_trace_create(0, &a, &trid) == 0);
		posix_trace_attr_destroy(&a);
		REQUIRE(posix_trace_start(trid) == 0);
		bracket((unsigned long)i);
		drain(trid, &c);
		REQUIRE(posix_trace_shutdown(trid) == 0);
		/* each stream is a new conversion: forget the order across them */
		for (size_t k = 0; k < c.nt; k++)
			c.t[k].last_ts = INT64_MIN;
	}
	verdict(&c, n, 1);
}

/* ------------------------------------------------------------ cli */
/* needle within the line [l, nl) (nl NULL: to the end), or NULL */
static const char *in_line(const char *l, const char *nl, const char *needle)
{
	size_t n = nl ? (size_t)(nl - l) : strlen(l);
	return memmem(l, n, needle, strlen(needle));
}

/* The next line of *s into buf (NUL-terminated, cut at cap - 1): sscanf
 * takes the length of its whole input, so it is given one line at a time.
 * 0 at the end. */
static int next_line(const char **s, char *buf, size_t cap)
{
	if (!*s || !**s)
		return 0;
	const char *nl = strchr(*s, '\n');
	size_t n = nl ? (size_t)(nl - *s) : strlen(*s);
	size_t k = n < cap - 1 ? n : cap - 1;
	memcpy(buf, *s, k);
	buf[k] = 0;
	*s = nl ? nl + 1 : *s + n;
	return 1;
}

static int64_t parse_iso(const char *s, const char **end)
{
	struct tm tm;
	memset(&tm, 0, sizeof tm);
	long ns = 0;
	int used = 0;
	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d.%9ldZ%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
	           &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ns, &used) != 7 || !used)
		return INT64_MIN;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	*end = s + used;
	return (int64_t)timegm(&tm) * 1000000000 + ns;
}

/* posixtrace show -a: time, +delta, PID/TID, thread name, event name,
 * "text", @ address (the trace names its threads, so the thread name
 * column is there: "-" for the recorder's) */
static void check_show(const char *out, struct check *c)
{
	char l[4096];
	for (const char *it = out; next_line(&it, l, sizeof l);) {
		const char *p;
		int64_t ts = parse_iso(l, &p);
		int pid, th;
		char name[64];
		int used = 0;
		if (ts != INT64_MIN &&
		    sscanf(p, " %*[-+]%*d.%*d %d/%d %*s %63s %n", &pid, &th, name, &used) == 3 && used) {
			const char *q = p + used;
			if (*q == '"' && (!strcmp(name, "mark") || !strcmp(name, "witness"))) {
				const char *e = strchr(q + 1, '"');
				feed(c, pid, (uint64_t)th, ts, q + 1, e ? (size_t)(e - q - 1) : 0);
			} else {
				feed(c, pid, (uint64_t)th, ts, "", 0);
			}
		}
	}
}

/* export --format chrome: "ts" in microseconds since the first event, with
 * the nanosecond digits it needs (none, or 1 to 3 without a trailing zero);
 * the first event's absolute time comes from the
 * log (c->rel). */
static void check_chrome(const char *js, struct check *c)
{
	char l[4096];
	for (const char *it = js; next_line(&it, l, sizeof l);) {
		const char *nl = NULL;
		const char *ts = in_line(l, nl, "\"ts\":"), *pid = in_line(l, nl, "\"pid\":"),
		           *tid = in_line(l, nl, "\"tid\":"), *txt = in_line(l, nl, "\"text\":\"");
		if (ts && pid && tid && in_line(l, nl, "\"ph\":\"i\"")) {
			/* microseconds, then 0 to 3 digits of fraction (none when 0) */
			char *q = NULL;
			long us = strtol(ts + 5, &q, 10);
			int64_t v = (int64_t)us * 1000;
			REQUIRE(q && q > ts + 5);
			if (*q == '.') {
				int nd = 0, scale = 100;
				for (q++; *q >= '0' && *q <= '9'; q++, nd++, scale /= 10) {
					REQUIRE(nd < 3);
					v += (*q - '0') * scale;
				}
				REQUIRE(nd >= 1 && q[-1] != '0'); /* no trailing zero */
			}
			REQUIRE(*q == ',');
			const char *text = "";
			size_t len = 0;
			if (txt && (in_line(l, nl, "\"name\":\"mark\"") ||
			            in_line(l, nl, "\"name\":\"witness\""))) {
				text = txt + 8;
				len = strcspn(text, "\"");
			}
			feed(c, atoi(pid + 6), (uint64_t)atoi(tid + 6), v, text, len);
		}
	}
}

/* babeltrace2's text output with --clock-seconds:
 * [S.NNNNNNNNN] name: { pid = P, vtid = T, tid = 0x.., procname = ".." }, { ...,
 * payload = [ [0] = 77, ... ] } */
static void check_ctf(const char *out, struct check *c)
{
	char l[4096];
	for (const char *it = out; next_line(&it, l, sizeof l);) {
		const char *nl = NULL;
		long long s, ns;
		int used = 0;
		if (sscanf(l, "[%lld.%9lld]%n", &s, &ns, &used) == 2 && used) {
			const char *pid = in_line(l, nl, "pid = "), *tid = in_line(l, nl, ", tid = ");
			const char *pl = in_line(l, nl, "payload = [");
			int64_t ts = s * 1000000000 + ns;
			char text[128];
			size_t len = 0;
			if (pl && (in_line(l, nl, "] mark: ") || in_line(l, nl, "] witness: "))) {
				const char *q = pl + 11;
				int k, v, n;
				while (len < sizeof text && sscanf(q, " [%d] = %d%n", &k, &v, &n) == 2) {
					text[len++] = (char)v;
					q += n;
					if (*q == ',')
						q++;
				}
			}
			if (pid && tid)
				feed(c, atoi(pid + 6), strtoull(tid + 8, NULL, 0), ts, text, len);
		}
	}
}

static void cli_paths(int ms, int round)
{
	char msbuf[16], nb[16], *out = NULL, *err = NULL;
	const char *log = cli_path("rec.ptlog");
	struct check c = { .what = "record, log" };

	snprintf(msbuf, sizeof msbuf, "%d", ms);
	snprintf(nb, sizeof nb, "%d", nbusy_default());
	int64_t t0 = real_ns();
	int rc = cli_run(CLI("record", "--force", "--size", "64M", "-o", (char *)log, "--", self, "--app", nb,
	                     msbuf), &out, &err);
	int64_t took = real_ns() - t0;
	if (rc != 0)
		fprintf(stderr, "record exited %d: %s\n", rc, err ? err : "");
	REQUIRE(rc == 0);
	/* the summary's "over N s|ms": the program's running time, at least
	 * its load and at most what record took */
	const char *over = err ? strstr(err, ", over ") : NULL;
	double span = 0;
	char unit[4] = "";
	CHECK(over && sscanf(over, ", over %lf %3[a-z]", &span, unit) == 2);
	span *= !strcmp(unit, "s") ? 1e9 : !strcmp(unit, "ms") ? 1e6 : !strcmp(unit, "us") ? 1e3 : 0;
	if (span < ms * 1e6 || span > (double)took)
		fprintf(stderr, "record says over %.0f ns: the load ran %d ms, record %" PRId64
		        " ns\n", span, ms, took);
	CHECK(span >= ms * 1e6 && span <= (double)took);
	free(out);
	free(err);

	/* the log itself; the app prints nothing, so its count comes from
	 * its own "made" event: the brackets it made */
	struct cli_ev *ev;
	int n = cli_read_log(log, &ev);
	long made = -1;
	int64_t first = INT64_MAX, last = INT64_MIN;
	for (int i = 0; i < n; i++) {
		int64_t ts = (int64_t)ev[i].info.posix_timestamp.tv_sec * 1000000000 +
		             ev[i].info.posix_timestamp.tv_nsec;
		first = ts < first ? ts : first;
		last = ts > last ? ts : last;
		if (!strcmp(ev[i].name, "made") && ev[i].len < sizeof ev[i].data) {
			ev[i].data[ev[i].len] = 0;
			made = atol((char *)ev[i].data);
		}
		feed_event(&c, &ev[i].info, ev[i].data, ev[i].len);
	}
	free(ev);
	CHECK(made > 0);
	/* the trace's span is the program's run: not more, not less */
	CHECK(last - first <= took);
	CHECK(last - first >= (int64_t)ms * 1000000);
	verdict(&c, made, 1);

	c.what = "posixtrace show -a";
	rc = cli_run(CLI("show", "-a", "--raw-addresses", (char *)log), &out, &err);
	CHECK_EQ(rc, 0);
	check_show(out, &c);
	verdict(&c, made, 1);
	free(out);
	free(err);

	c.what = "export chrome";
	const char *js = cli_path("rec.json");
	rc = cli_run(CLI("export", "--format", "chrome", "--force", "-o", (char *)js, (char *)log),
	             NULL, NULL);
	CHECK_EQ(rc, 0);
	char *s = cli_slurp(js);
	REQUIRE(s != NULL);
	c.rel = first;
	check_chrome(s, &c);
	verdict(&c, made, 1);
	free(s);

	const char *bt = cli_which("babeltrace2");
	if (!bt) {
		if (round == 0)
			printf("SKIP part: CTF times (babeltrace2 not installed)\n");
		return;
	}
	char btp[512];
	snprintf(btp, sizeof btp, "%s", bt);
	const char *ctf = cli_path("rec-ctf");
	rc = cli_run(CLI("export", "--format", "ctf", "--force", "-o", (char *)ctf, (char *)log),
	             NULL, NULL);
	CHECK_EQ(rc, 0);
	c.what = "export ctf (babeltrace2)";
	rc = cli_run((char *const[]){ btp, "--clock-seconds", "--no-delta", (char *)ctf, NULL },
	             &out, &err);
	CHECK_EQ(rc, 0);
	check_ctf(out, &c);
	verdict(&c, made, 1);
	free(out);
	free(err);
}

/* The traced program of the cli path: the load, then one "made" event
 * with the number of brackets. */
static int app(int nbusy, int ms)
{
	trace_event_id_t made;
	char b[32];

	ids();
	REQUIRE(posix_trace_eventid_open("made", &made) == 0);
	workload(nbusy, ms);
	int n = snprintf(b, sizeof b, "%ld", atomic_load(&brackets));
	posix_trace_event(made, b, (size_t)n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "--app")) {
		if (argc >= 6) { /* by hand: --app NBUSY MS BURST SPIN */
			busy_burst = (unsigned)atoi(argv[4]);
			busy_spin = (unsigned)atoi(argv[5]);
		}
		return app(atoi(argv[2]), atoi(argv[3]));
	}

	if (argc == 3 && !strcmp(argv[1], "--check")) { /* by hand: a log's verdict */
		struct check c = { .what = argv[2] };
		setenv("CLOCK_TRUTH_V", "1", 1);
		ids();
		check_log(argv[2], &c);
		verdict(&c, c.checked, 0);
		T_END();
	}
	const char *r = getenv("CLOCK_TRUTH_ROUNDS"), *sk = getenv("CLOCK_TRUTH_SOAK");
	/* (one round in a sanitized build: the rounds look for an error of
	 * the conversion that shows in some runs only, a matter for the
	 * plain build and make stress, not for the sanitizers) */
	int rounds = r ? atoi(r) : PT_TEST_SANFLAGS[0] ? 1 : 3, soak_s = sk ? atoi(sk) : 0;
	T_BEGIN(soak_s > 0 ? 120 + 2 * soak_s : 60 + 40 * rounds);
	REQUIRE(readlink("/proc/self/exe", self, sizeof self - 1) > 0);
	snprintf(cli_dir, sizeof cli_dir, "/tmp/pt-clock-XXXXXX");
	REQUIRE(mkdtemp(cli_dir) != NULL);
	atexit(cli_cleanup);
	ids();
	if (soak_s > 0) {
		soak(soak_s);
		T_END();
	}

	short_streams(200);
	for (int i = 0; i < rounds; i++) {
		live_own(POSIX_TRACE_LOOP, 300);
		live_own(POSIX_TRACE_UNTIL_FULL, 300);
		log_own(0, 300);
		log_own(1, 300);
		remote(300);
	}
	if (access(cli_bin, X_OK) != 0) {
		printf("SKIP part: the posixtrace command is not built\n");
	} else {
		for (int i = 0; i < rounds; i++)
			cli_paths(400, i);
	}
	T_END();
}

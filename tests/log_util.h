/*
 * log_util.h -- helpers shared by the trace-log tests (log_api.c,
 * log_policies.c, log_remote.c, log_crash.c).  Everything is static
 * inline: a test pays only for what it uses.
 *
 *   user payloads   lu_make()/lu_check(): seq and thread number in the
 *                   first 8 bytes, then bytes derived from both, so a
 *                   payload read back is either intact or detected
 *   files           lu_tmpfile() (unlinked by lu_rmfile), lu_fsize()
 *   live stream     lu_wait_flushed(): poll get_status until the flush is
 *                   over; returns the flush errors seen on the way
 *   logs            lu_load(): posix_trace_open a file by name and read
 *                   every event into lu_ev[] (CHECKs every call)
 */
#ifndef POSIXTRACE_TEST_LOG_UTIL_H
#define POSIXTRACE_TEST_LOG_UTIL_H

#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <trace.h>
#include "t.h"
#include "helpers.h"

#define LU_SLACK_NS 2000000LL   /* timestamps vs CLOCK_REALTIME readings */
#define LU_MAXEV    400000      /* events lu_load() keeps */
#define LU_DATA     320         /* payload bytes lu_load() keeps per event */

static inline long long lu_ns(const struct timespec *ts)
{
	return (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

static inline long long lu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return lu_ns(&ts);
}

static inline long long lu_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------ payloads */
static inline unsigned char lu_fill(uint32_t seq, uint32_t thr, size_t k)
{
	return (unsigned char)((seq * 131u) ^ (thr * 29u) ^ (uint32_t)(k * 7u) ^ 0x5bu);
}

/* len >= 8 */
static inline void lu_make(unsigned char *p, uint32_t seq, uint32_t thr, size_t len)
{
	memcpy(p, &seq, 4);
	memcpy(p + 4, &thr, 4);
	for (size_t k = 8; k < len; k++)
		p[k] = lu_fill(seq, thr, k);
}

/* 1 if p[0..len) is a payload made by lu_make (its seq and thr out) */
static inline int lu_check(const unsigned char *p, size_t len, uint32_t *seq, uint32_t *thr)
{
	if (len < 8)
		return 0;
	memcpy(seq, p, 4);
	memcpy(thr, p + 4, 4);
	for (size_t k = 8; k < len; k++)
		if (p[k] != lu_fill(*seq, *thr, k))
			return 0;
	return 1;
}

/* The payload length of event seq: 8 .. max (max >= 8). */
static inline size_t lu_len(uint32_t seq, size_t max)
{
	return 8 + (seq * 37u) % (max - 7);
}

/* --------------------------------------------------------------- files */
/* A new empty file in $TMPDIR (or /tmp), open with flags; its name in path. */
static inline int lu_tmpfile(char *path, size_t cap, const char *tag, int flags)
{
	const char *dir = getenv("TMPDIR");
	int fd;

	snprintf(path, cap, "%s/pt-%s-XXXXXX", dir && *dir ? dir : "/tmp", tag);
	fd = mkstemp(path);
	REQUIRE(fd >= 0);
	close(fd);
	fd = open(path, flags | O_CREAT | O_TRUNC, 0600);
	REQUIRE(fd >= 0);
	return fd;
}

static inline void lu_rmfile(const char *path)
{
	unlink(path);
}

static inline long long lu_fsize(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* --------------------------------------------------------- live stream */
/* What the polls of the last lu_wait_flushed() saw (get_status resets the
 * log overrun status: a poll may be the one that reports it). */
static struct { int log_overrun, log_full; } lu_polled;

/* Polls get_status until no flush is in progress (at most 10 s).  Returns
 * the first non-zero posix_stream_flush_error seen (reading resets it). */
static inline int lu_wait_flushed(trace_id_t trid)
{
	long long end = lu_mono_ms() + 10000;
	int err = 0;

	lu_polled.log_overrun = lu_polled.log_full = 0;
	for (;;) {
		struct posix_trace_status_info si;
		memset(&si, 0x55, sizeof si);
		int rc = posix_trace_get_status(trid, &si);
		CHECK_RC(rc, 0);
		if (rc)
			return err;
		if (!err)
			err = si.posix_stream_flush_error;
		lu_polled.log_overrun |= si.posix_log_overrun_status == POSIX_TRACE_OVERRUN;
		lu_polled.log_full |= si.posix_log_full_status == POSIX_TRACE_FULL;
		if (si.posix_stream_flush_status == POSIX_TRACE_NOT_FLUSHING)
			return err;
		CHECK_EQ(si.posix_stream_flush_status, POSIX_TRACE_FLUSHING);
		if (lu_mono_ms() > end) {
			CHECK(!"flush still in progress after 10 s");
			return err;
		}
		usleep(1000);
	}
}

/* posix_trace_flush, then wait until it is over; returns what flush returned. */
static inline int lu_flush_wait(trace_id_t trid, int *flush_err)
{
	int rc = posix_trace_flush(trid), e = lu_wait_flushed(trid);
	if (flush_err)
		*flush_err = e;
	return rc;
}

/* ----------------------------------------------------------------- logs */
struct lu_ev {
	trace_event_id_t id;
	pid_t pid;
	pthread_t thr;
	void *addr;
	long long ts;
	size_t len;
	int trunc;
	int ok;            /* user payload made by lu_make, intact */
	uint32_t seq, tno; /* its seq and thread number */
	int ival;          /* the first 4 bytes as an int (STOP's data) */
	unsigned char data[LU_DATA];
};

static struct lu_ev lu_ev[LU_MAXEV];

static inline void lu_take(struct lu_ev *e, const struct posix_trace_event_info *ev,
                           const unsigned char *buf, size_t len)
{
	e->id = ev->posix_event_id;
	e->pid = ev->posix_pid;
	e->thr = ev->posix_thread_id;
	e->addr = ev->posix_prog_address;
	e->ts = lu_ns(&ev->posix_timestamp);
	e->len = len;
	e->trunc = ev->posix_truncation_status;
	e->ok = lu_check(buf, len, &e->seq, &e->tno);
	e->ival = 0;
	if (len >= 4)
		memcpy(&e->ival, buf, 4);
	memcpy(e->data, buf, len < LU_DATA ? len : LU_DATA);
}

/* Reads every remaining event of an opened log into lu_ev[]; returns n. */
static inline int lu_read_all(trace_id_t log)
{
	static unsigned char buf[TRACE_DATA_MAX + 1];
	int n = 0;

	for (;;) {
		struct posix_trace_event_info ev;
		size_t len = 0;
		int un = -1, rc = posix_trace_getnext_event(log, &ev, buf, sizeof buf, &len, &un);
		CHECK_RC(rc, 0);
		if (rc || un)
			return n;
		REQUIRE(n < LU_MAXEV);
		lu_take(&lu_ev[n++], &ev, buf, len);
	}
}

/* Opens the log in file path and reads it all.  *keep: the opened trid
 * (the caller closes it and *kfd); NULL: closed here. */
static inline int lu_load(const char *path, trace_id_t *keep, int *kfd)
{
	trace_id_t log;
	int fd = open(path, O_RDONLY), rc, n;

	REQUIRE(fd >= 0);
	rc = posix_trace_open(fd, &log);
	CHECK_RC(rc, 0);
	REQUIRE(rc == 0);
	n = lu_read_all(log);
	if (keep) {
		*keep = log;
		*kfd = fd;
	} else {
		CHECK_RC(posix_trace_close(log), 0);
		close(fd);
	}
	return n;
}

/* Events with id among the n loaded (pid -1: any). */
static inline int lu_count(int n, trace_event_id_t id, pid_t pid)
{
	int k = 0;
	for (int i = 0; i < n; i++)
		k += lu_ev[i].id == id && (pid == -1 || lu_ev[i].pid == pid);
	return k;
}

/* A log one run of a stream wrote, with user events whose payload is an
 * int counting from 0: among the n loaded, its START and STOP events, its
 * user events (PT_SYS_IDS on), and whether those hold 0, 1, 2 ... in order,
 * each before the STOP (*order 1). */
struct lu_run { int user, order, starts, stops; };
static inline struct lu_run lu_run_of(int n)
{
	struct lu_run r = { 0, 1, 0, 0 };
	for (int i = 0; i < n; i++) {
		trace_event_id_t e = lu_ev[i].id;
		if (e == POSIX_TRACE_START)
			r.starts++;
		else if (e == POSIX_TRACE_STOP)
			r.stops++;
		else if (e >= PT_SYS_IDS) { /* (system ids are below) */
			r.order &= lu_ev[i].len == sizeof(int) && lu_ev[i].ival == r.user && !r.stops;
			r.user++;
		}
	}
	return r;
}

/* The user events with id among the n loaded: all intact, from pid, and
 * for each thread number tno < nthr strictly increasing seq; with
 * contiguous, exactly seq first[t] .. first[t] + count - 1 (first may be
 * NULL: 0).  Returns how many there are; per[t] gets each thread's count. */
static inline int lu_user(int n, trace_event_id_t id, pid_t pid, int nthr, int contiguous,
                          const uint32_t *first, int *per)
{
	long long next[16];
	int total = 0, bad = 0;

	REQUIRE(nthr <= 16);
	for (int t = 0; t < nthr; t++) {
		next[t] = first ? first[t] : 0;
		if (per)
			per[t] = 0;
	}
	for (int i = 0; i < n; i++) {
		const struct lu_ev *e = &lu_ev[i];
		if (e->id != id)
			continue;
		total++;
		if (!e->ok || e->tno >= (uint32_t)nthr || (pid != -1 && e->pid != pid)) {
			if (bad++ < 5)
				fprintf(stderr, "  event %d: id %u pid %d len %zu ok %d tno %u\n", i,
				        e->id, (int)e->pid, e->len, e->ok, e->tno);
			continue;
		}
		if (contiguous ? e->seq != next[e->tno] : e->seq < next[e->tno]) {
			if (bad++ < 5)
				fprintf(stderr, "  event %d: thread %u seq %u, expected %s%lld\n", i,
				        e->tno, e->seq, contiguous ? "" : ">= ", next[e->tno]);
		}
		next[e->tno] = (long long)e->seq + 1;
		if (per)
			per[e->tno]++;
	}
	CHECK_EQ(bad, 0);
	return total;
}

/* No POSIX_TRACE_ERROR event (a damaged log) among the n loaded. */
static inline void lu_no_damage(int n)
{
	CHECK_EQ(lu_count(n, POSIX_TRACE_ERROR, -1), 0);
}

/* Timestamps never go backwards along the n loaded events. */
static inline void lu_ts_sorted(int n)
{
	int bad = 0;
	for (int i = 1; i < n; i++)
		if (lu_ev[i].ts < lu_ev[i - 1].ts && bad++ < 3)
			fprintf(stderr, "  event %d (id %u) ts %lld < event %d (id %u) ts %lld\n", i,
			        lu_ev[i].id, lu_ev[i].ts, i - 1, lu_ev[i - 1].id, lu_ev[i - 1].ts);
	CHECK_EQ(bad, 0);
}

/* The status of an opened log or a live stream. */
static inline struct posix_trace_status_info lu_status(trace_id_t trid)
{
	struct posix_trace_status_info si;
	memset(&si, 0x55, sizeof si);
	CHECK_RC(posix_trace_get_status(trid, &si), 0);
	return si;
}

/* The event-type list of trid: ascending, each of exp[] exactly once, no
 * other id but `tolerated`; then unavailable. */
static inline void lu_types(trace_id_t trid, const trace_event_id_t *exp, int nexp,
                        trace_event_id_t tolerated)
{
	int seen[16] = { 0 }, n = 0, un = 0;
	trace_event_id_t id, last = 0;
	REQUIRE(nexp <= 16);
	while (n < 2000) {
		CHECK_RC(posix_trace_eventtypelist_getnext_id(trid, &id, &un), 0);
		if (un)
			break;
		CHECK(n == 0 || id > last);
		last = id;
		n++;
		int k = 0;
		while (k < nexp && exp[k] != id)
			k++;
		if (k < nexp)
			seen[k]++;
		else if (id != tolerated) {
			fprintf(stderr, "  event-type list: unexpected id %u\n", id);
			CHECK(!"extra id");
		}
	}
	for (int k = 0; k < nexp; k++)
		CHECK_EQ(seen[k], 1);
	CHECK_RC(posix_trace_eventtypelist_getnext_id(trid, &id, &un), 0);
	CHECK(un != 0);
}

/* Every type a log of these tests lists, recorded or not: the standard's
 * system types, the extension's two (a --no-loss wait, posixtrace_trigger)
 * and the test's three user types a, b and c, into out. */
#define LU_STREAM_TYPES 14
static inline void lu_stream_types(trace_event_id_t out[LU_STREAM_TYPES], trace_event_id_t a,
                                   trace_event_id_t b, trace_event_id_t c)
{
	trace_event_id_t noloss_wait = 0; /* the extension's system type (a --no-loss wait) */
	CHECK_RC(posixtrace_eventid_system("posixtrace_noloss_wait", &noloss_wait), 0);
	trace_event_id_t trigger = 0; /* and a named trigger's (posixtrace_trigger) */
	CHECK_RC(posixtrace_eventid_system("posixtrace_trigger", &trigger), 0);
	const trace_event_id_t types[LU_STREAM_TYPES] = { POSIX_TRACE_ERROR, POSIX_TRACE_START,
		POSIX_TRACE_STOP, POSIX_TRACE_FILTER, POSIX_TRACE_OVERFLOW, POSIX_TRACE_RESUME,
		POSIX_TRACE_FLUSH_START, POSIX_TRACE_FLUSH_STOP, POSIX_TRACE_UNNAMED_USEREVENT,
		noloss_wait, trigger, a, b, c };
	memcpy(out, types, sizeof types);
}

/* posix_trace_eventid_get_name(trid, id) is name */
static inline void lu_name(trace_id_t trid, trace_event_id_t id, const char *name)
{
	char buf[TRACE_EVENT_NAME_MAX + 1] = "";
	CHECK_RC(posix_trace_eventid_get_name(trid, id, buf), 0);
	if (strcmp(buf, name)) {
		fprintf(stderr, "  id %u: \"%s\", expected \"%s\"\n", id, buf, name);
		CHECK(!"wrong name");
	}
}

#endif

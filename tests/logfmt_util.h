/*
 * logfmt_util.h -- helpers shared by the log format tests (logfmt.c,
 * logfmt_errors.c): a deterministic event sequence, a writer of it, and a
 * reader that checks every event it gets back against it.
 *
 * Event i has timestamp ev_ts(i) (strictly increasing, with a 5 s jump
 * every 1000 events so that blocks must split on the 32-bit delta), one of
 * 3 pids x 5 threads, a 48-bit address, an id 17..40, sometimes the
 * truncated flag, and a payload of 0..g_maxlen bytes pbyte(i, 0), ...
 * Events come in runs of 4 from one writer, 3 in 4 of them from the run's
 * call site, so that a writer writes short records (format 4) and long
 * ones alike.
 */
#ifndef POSIXTRACE_TEST_LOGFMT_UTIL_H
#define POSIXTRACE_TEST_LOGFMT_UTIL_H

#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <trace.h>
#include "t.h"
#include "../src/log/logpriv.h"

#define T0    1700000000000000000ull
#define MAXN  40000

struct xev {
	uint64_t ts, thr, addr;
	int32_t pid;
	unsigned id;
	int trunc;
	uint32_t len;
};

static inline uint64_t mix(uint64_t x)
{
	x ^= x >> 33, x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33, x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

static inline uint64_t ev_ts(uint64_t i)
{
	return T0 + i * 1500 + (i / 1000) * 5000000000ull;
}

static inline void gen(uint64_t i, uint32_t maxlen, struct xev *e)
{
	uint64_t h = mix(i + 1), k = mix(i / 4 + 0x5eed);

	e->ts = ev_ts(i);
	e->pid = 1000 + (int32_t)(k % 3);
	e->thr = 0x7f0000001000ull + (k >> 8) % 5 * 0x1000;
	e->addr = ((h & 3) ? k >> 16 : h >> 16) & PT_MASK48;
	e->id = 17 + (unsigned)((h >> 24) % 24);
	e->trunc = (h >> 32) % 11 == 0;
	e->len = (uint32_t)((h >> 40) % (maxlen + 1));
}

static inline unsigned char pbyte(uint64_t i, uint32_t j)
{
	return (unsigned char)(i * 131 + j * 7 + (j >> 8));
}

static inline struct pt_attr_img mkattr(uint64_t max_data)
{
	struct pt_attr_img a;

	memset(&a, 0, sizeof a);
	strcpy(a.name, "logfmt-test");
	strcpy(a.version, "posixtrace 0.1.0");
	a.create_sec = 1700000000, a.create_nsec = 123456789;
	a.res_sec = 0, a.res_nsec = 1;
	a.stream_size = 1 << 20, a.max_data = max_data, a.log_size = 16 << 20;
	a.stream_policy = POSIX_TRACE_FLUSH, a.log_policy = POSIX_TRACE_LOOP;
	a.inherit = POSIX_TRACE_CLOSE_FOR_CHILD, a.has_log = 1;
	return a;
}

static inline int attr_eq(const struct pt_attr_img *a, const struct pt_attr_img *b)
{
	return !strcmp(a->name, b->name) && !strcmp(a->version, b->version) &&
	       a->create_sec == b->create_sec && a->create_nsec == b->create_nsec &&
	       a->res_sec == b->res_sec && a->res_nsec == b->res_nsec &&
	       a->stream_size == b->stream_size && a->max_data == b->max_data &&
	       a->log_size == b->log_size && a->stream_policy == b->stream_policy &&
	       a->log_policy == b->log_policy && a->inherit == b->inherit &&
	       a->has_log == b->has_log;
}

/* the generator's settings for the current test */
static uint32_t g_maxlen = 200;   /* payloads are 0..g_maxlen bytes */
static uint32_t g_maxpay = 200;   /* the writer's payload limit */

static inline int put_ev(struct pt_logw *w, uint64_t i)
{
	static unsigned char d[TRACE_DATA_MAX];
	struct xev e;

	gen(i, g_maxlen, &e);
	for (uint32_t j = 0; j < e.len; j++)
		d[j] = pbyte(i, j);
	return pt_logw_event(w, e.ts, e.pid, e.thr, e.addr, e.id, e.trunc, d, e.len);
}

static inline void put_names(struct pt_logw *w)
{
	char s[32];

	for (unsigned id = 17; id <= 40; id += 1 + id % 2) {
		snprintf(s, sizeof s, "event-%u", id);
		CHECK_RC(pt_logw_name(w, id, s), 0);
	}
}

/* Index of the event that ev/buf is, or -1 if it is none of them. */
static inline long long find(const struct posix_trace_event_info *ev, const unsigned char *buf,
                      size_t len)
{
	uint64_t ts = (uint64_t)ev->posix_timestamp.tv_sec * 1000000000u +
	              (uint64_t)ev->posix_timestamp.tv_nsec;
	uint64_t lo = 0, hi = MAXN;
	struct xev e;

	while (lo < hi) {
		uint64_t mid = (lo + hi) / 2;
		if (ev_ts(mid) < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= MAXN || ev_ts(lo) != ts)
		return -1;
	gen(lo, g_maxlen, &e);
	uint32_t n = e.len < g_maxpay ? e.len : g_maxpay;
	int trunc = e.trunc || e.len > g_maxpay;
	if (ev->posix_event_id != e.id || ev->posix_pid != e.pid ||
	    (uint64_t)ev->posix_thread_id != e.thr ||
	    (uint64_t)(uintptr_t)ev->posix_prog_address != e.addr || len != n ||
	    ev->posix_truncation_status !=
	            (trunc ? POSIX_TRACE_TRUNCATED_RECORD : POSIX_TRACE_NOT_TRUNCATED))
		return -1;
	for (uint32_t j = 0; j < n; j++)
		if (buf[j] != pbyte(lo, j))
			return -1;
	return (long long)lo;
}

struct res {
	int rc, has_status;
	size_t n, nerr, nstop, bad, nidx, stop_at;
	size_t nwrap;       /* the OVERFLOW/RESUME pair a wrapped LOOP log starts with */
	long long idx[MAXN];
	size_t item[MAXN];  /* reading-order item each event came from */
	struct posix_trace_status_info st;
};

/* Reads the whole log; every event must be one of the sequence, in
 * increasing order (else res->bad), or ERROR (EBADMSG) or STOP (1); a log
 * that wrapped starts with an OVERFLOW/RESUME pair, and only such a log
 * (else res->bad). */
static inline void read_log(int fd, struct res *o, struct pt_logr *keep)
{
	static unsigned char buf[TRACE_DATA_MAX + 1];
	struct pt_logr r;

	o->n = o->nerr = o->nstop = o->bad = o->nidx = o->stop_at = o->nwrap = 0;
	o->has_status = 0;
	if ((o->rc = pt_logr_open(&r, fd)))
		return;
	for (;;) {
		struct posix_trace_event_info ev;
		size_t len = 0;
		int un = -1, v = 0;
		long long i;

		CHECK_RC(pt_logr_next(&r, &ev, buf, sizeof buf, &len, &un), 0);
		if (un)
			break;
		o->n++;
		if ((ev.posix_event_id == POSIX_TRACE_OVERFLOW && o->n == 1) ||
		    (ev.posix_event_id == POSIX_TRACE_RESUME && o->n == 2 && o->nwrap == 1)) {
			o->nwrap++;
			o->bad += len != 0 || !r.wrapped;
			continue;
		}
		if (ev.posix_event_id == POSIX_TRACE_ERROR || ev.posix_event_id == POSIX_TRACE_STOP) {
			memcpy(&v, buf, sizeof v);
			if (ev.posix_event_id == POSIX_TRACE_ERROR)
				o->nerr++, o->bad += len != sizeof v || v != EBADMSG;
			else
				o->nstop++, o->stop_at = o->n, o->bad += len != 4 || v != 1;
			continue;
		}
		i = find(&ev, buf, len);
		if (i < 0 || (o->nidx && i <= o->idx[o->nidx - 1]) || o->nidx == MAXN) {
			o->bad++;
			continue;
		}
		o->item[o->nidx] = r.cur;
		o->idx[o->nidx++] = i;
	}
	o->has_status = pt_logr_status(&r, &o->st) == 0;
	if (o->nwrap != (r.wrapped && r.nitems ? 2u : 0u))
		o->bad++;
	if (keep)
		*keep = r;
	else
		pt_logr_close(&r);
}

/* idx[] is exactly first, first+1, ..., first+count-1 */
static inline int contiguous(const struct res *o, long long first, size_t count)
{
	if (o->nidx != count)
		return 0;
	for (size_t k = 0; k < count; k++)
		if (o->idx[k] != first + (long long)k)
			return 0;
	return 1;
}

static inline int mfd(void)
{
	int fd = memfd_create("logfmt", 0);
	REQUIRE(fd >= 0);
	return fd;
}

static inline uint64_t fsize(int fd)
{
	struct stat st;
	REQUIRE(fstat(fd, &st) == 0);
	return (uint64_t)st.st_size;
}

static inline void copy_fd(int from, int to, uint64_t n)
{
	static unsigned char b[1 << 16];
	REQUIRE(ftruncate(to, 0) == 0);
	for (uint64_t off = 0; off < n;) {
		size_t k = n - off < sizeof b ? (size_t)(n - off) : sizeof b;
		REQUIRE(pread(from, b, k, (off_t)off) == (ssize_t)k);
		REQUIRE(pwrite(to, b, k, (off_t)off) == (ssize_t)k);
		off += k;
	}
}

#endif

/*
 * log_fuzz.c -- libFuzzer target for the trace log reader (src/log/logread.c,
 * src/log/logiter.c, src/log/logcheck.c): the input is a log file.  It goes into a memfd, is
 * opened, read to the end, rewound and read again (the same events and
 * loss counts), and closed; its summary (format 5, src/log/logsum.c) is
 * read from the end of the file too, and checked for sound values, with
 * its block index (format 7) too; a log opened through that index is
 * also opened by a scan and read whole; the count a scan makes at open
 * (pt_logr_census) is what reading every event gives; and
 * seeking to a time (pt_logr_seek) loses no event stamped at or after it,
 * nor stopping after one (pt_logr_stop_after) any stamped at or before it;
 * read in batches (pt_logr_next_batch, the view's index), mixed with
 * single events, it gives the same events, writers and loss counts; no
 * timestamp steps back but after a damaged stretch.  Built twice by `make fuzz`: as is, and with PT_LOG_FUZZ_NOCRC
 * (checksums ignored) to reach the checks behind them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include "fuzz_file.h"
#include "../src/log/logpriv.h"

static int fd; /* the input: fuzz_file() */

static size_t read_all(struct pt_logr *r, uint64_t *sum)
{
	static unsigned char buf[256];
	struct posix_trace_event_info ev;
	size_t n = 0, len;
	int un;

	uint64_t prev = 0;
	*sum = 0;
	/* small buffers too: truncated reads */
	while (pt_logr_next(r, &ev, buf, n % 3 ? sizeof buf : n % 7, &len, &un) == 0 && !un) {
		/* timestamp order: never a step back but after a damaged
		 * stretch (blocks are merged up to one) */
		uint64_t t = (uint64_t)ev.posix_timestamp.tv_sec * 1000000000u +
		             (uint64_t)ev.posix_timestamp.tv_nsec;
		if (ev.posix_event_id == POSIX_TRACE_ERROR)
			prev = 0;
		else if (t < prev)
			abort();
		else
			prev = t;
		if (ev.posix_event_id >= PT_NIDS || len > sizeof buf || len > r->full_len ||
		    r->full_len > TRACE_DATA_MAX ||
		    (ev.posix_truncation_status == POSIX_TRACE_TRUNCATED_READ) != (len < r->full_len))
			abort();
		if (r->last_lost_ok && len) /* a loss count is never data */
			abort();
		*sum += r->last_lost_ok ? r->last_lost * 7 : 0; /* the same both times */
		for (size_t i = 0; i < len; i++)
			*sum = *sum * 31 + buf[i];
		*sum += ev.posix_event_id + (uint64_t)ev.posix_timestamp.tv_nsec;
		n++;
	}
	return n;
}

/* Events stamped in [lo, hi] from where the reader is (error events of
 * damaged blocks not counted: their time is a neighbour's). */
static size_t count_in(struct pt_logr *r, uint64_t lo, uint64_t hi)
{
	static unsigned char buf[256];
	struct posix_trace_event_info ev;
	size_t n = 0, len;
	int un;

	while (pt_logr_next(r, &ev, buf, sizeof buf, &len, &un) == 0 && !un) {
		uint64_t t = (uint64_t)ev.posix_timestamp.tv_sec * 1000000000u +
		             (uint64_t)ev.posix_timestamp.tv_nsec;
		n += ev.posix_event_id != POSIX_TRACE_ERROR && t >= lo && t <= hi;
	}
	return n;
}

/* The count the scan at open made (pt_logr_census), when it has one, is
 * what reading every event gives: per type, in all, the time range (r
 * just opened; read to its end). */
static void census_check(struct pt_logr *r)
{
	static unsigned char buf[256];
	static uint64_t count[PT_NIDS];
	const struct pt_logw_sum *c;
	struct posix_trace_event_info ev;
	uint64_t damaged = 0, n = 0, lo = UINT64_MAX, hi = 0, errors = 0;
	size_t len;
	int un;

	if (pt_logr_census(r, &c, &damaged) != 0)
		return;
	memset(count, 0, sizeof count);
	while (pt_logr_next(r, &ev, buf, sizeof buf, &len, &un) == 0 && !un) {
		uint64_t t = (uint64_t)ev.posix_timestamp.tv_sec * 1000000000u +
		             (uint64_t)ev.posix_timestamp.tv_nsec;
		if (ev.posix_event_id >= PT_NIDS)
			abort();
		count[ev.posix_event_id]++;
		errors += ev.posix_event_id == POSIX_TRACE_ERROR;
		lo = t < lo ? t : lo;
		hi = t > hi ? t : hi;
		n++;
	}
	/* (a log may hold recorded POSIX_TRACE_ERROR events too; the times
	 * are those recorded unless a RESUME was told earlier, merged.  A
	 * log opened from its checkpoints (format 8) has the blocks before the
	 * last one counted as the writer counted them, as a summary has
	 * them: a damaged one among them is found when read) */
	int nocrc = 0;
#ifdef PT_LOG_FUZZ_NOCRC
	nocrc = 1; /* (nor is a block whose checksum is not checked) */
#endif
	if (r->census_ckpt && (errors || nocrc))
		return;
	if (n != c->events || memcmp(count, c->count, sizeof count) || errors < damaged ||
	    (n && !r->told_early && (lo != c->first || hi != c->last)))
		abort();
}

/* The log read by two readers opened alike: r in batches (every third
 * step one event), s one by one: the same events, writers and loss
 * counts, and every batch sound. */
static void same_batched(int flags)
{
	static struct pt_ext_batch b;
	static unsigned char buf[256];
	struct posix_trace_event_info ev;
	struct pt_logr rr, ss, *r = &rr, *s = &ss;
	size_t len;
	int un;

	if (pt_logr_open_opt(r, fd, flags))
		return;
	if (pt_logr_open_opt(s, fd, flags))
		abort(); /* (the same file) */
	for (unsigned step = 0;; step++) {
		if (step % 3 == 2) {
			if (pt_logr_next(r, &ev, buf, sizeof buf, &len, &un))
				abort();
			b.n = !un, b.nw = 1;
			b.w[0].pid = (int32_t)ev.posix_pid;
			b.w[0].thread = (uint64_t)ev.posix_thread_id;
			b.ev[0].ts = (uint64_t)ev.posix_timestamp.tv_sec * 1000000000u +
			             (uint64_t)ev.posix_timestamp.tv_nsec;
			b.ev[0].id = (uint16_t)ev.posix_event_id;
			b.ev[0].w = 0;
			b.ev[0].flags = 0;
			b.ev[0].word = 0;
			b.ev[0].hi = 0;
		} else if (pt_logr_next_batch(r, &b) || b.n > PT_EXT_BATCH || b.nw > PT_EXT_BATCH_W) {
			abort();
		}
		for (size_t i = 0; i < b.n; i++) {
			const struct pt_ext_bevent *e = &b.ev[i];
			if (pt_logr_next(s, &ev, buf, sizeof buf, &len, &un) || un)
				abort();
			/* a loss count ends its batch; a 4-byte payload is in word,
			 * an 8-byte one in word and hi */
			unsigned flags = s->last_lost_ok ? PT_EXT_BEV_LOST : len == 4 ? PT_EXT_BEV_WORD
			               : len == 8 ? PT_EXT_BEV_QWORD : 0;
			int32_t word = 0;
			uint32_t hi = 0;
			if (flags == PT_EXT_BEV_WORD)
				memcpy(&word, buf, 4);
			if (flags == PT_EXT_BEV_QWORD) {
				uint64_t q;
				memcpy(&q, buf, 8);
				word = (int32_t)(uint32_t)q, hi = (uint32_t)(q >> 32);
			}
			if (step % 3 != 2 && (e->flags != flags || e->word != word || e->hi != hi ||
			                      ((flags & PT_EXT_BEV_LOST) && i + 1 != b.n)))
				abort();
			if (e->w >= b.nw ||
			    e->id != ev.posix_event_id || b.w[e->w].pid != (int32_t)ev.posix_pid ||
			    b.w[e->w].thread != (uint64_t)ev.posix_thread_id ||
			    e->ts != (uint64_t)ev.posix_timestamp.tv_sec * 1000000000u +
			             (uint64_t)ev.posix_timestamp.tv_nsec)
				abort();
		}
		if (r->last_lost_ok != s->last_lost_ok || r->last_lost != s->last_lost ||
		    r->wrap_told != s->wrap_told)
			abort();
		if (!b.n) {
			if (pt_logr_next(s, &ev, buf, sizeof buf, &len, &un) || !un)
				abort();
			break;
		}
	}
	pt_logr_close(r);
	pt_logr_close(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct posix_trace_status_info st;
	struct pt_logr r;
	uint64_t s1, s2;
	size_t n1, n2;

	fd = fuzz_file("log_fuzz", data, size, NULL, 0);
	struct pt_log_summary sum;
	if (pt_log_summary_read(fd, &sum) == 0) {
		if (!sum.names || sum.objs.n > PT_LOG_OBJS_MAX)
			abort();
		for (unsigned id = 0; id < PT_NIDS; id++)
			if (strnlen(sum.names[id], PT_LOG_NAME_MAX + 1) > PT_LOG_NAME_MAX ||
			    (!(sum.known[id / 64] >> (id % 64) & 1) && sum.names[id][0]))
				abort();
		for (size_t i = 0; i < sum.objs.n; i++) {
			struct pt_ext_obj o;
			pt_objstore_get(&sum.objs, i, &o);
			if (strnlen(o.path, PT_EXT_OBJ_PATH) >= PT_EXT_OBJ_PATH ||
			    o.bid_len > PT_EXT_OBJ_BID_MAX)
				abort();
		}
		if (sum.idx || sum.sum_seq < 1 || sum.sum_off < PT_LOG_FIRST || sum.sum_off >= size)
			abort(); /* the index is kept only when asked for */
		pt_log_summary_free(&sum);
	}
	if (pt_log_summary_read_index(fd, &sum) == 0) {
		if ((sum.nidx && !sum.idx) || sum.nidx > sum.idx_cap)
			abort();
		pt_log_summary_free(&sum);
	}
	/* (v7) opened through the block index when it holds: also scanned,
	 * both read whole */
	if (pt_logr_open(&r, fd) == 0) {
		int indexed = r.indexed;
		if (!indexed)
			census_check(&r);
		pt_logr_close(&r);
		if (indexed && pt_logr_open_opt(&r, fd, PT_LOGR_SCAN) == 0) {
			census_check(&r);
			pt_logr_rewind(&r);
			(void)read_all(&r, &s1);
			pt_logr_close(&r);
		}
	}
	if (pt_logr_open(&r, fd))
		return 0;
	n1 = read_all(&r, &s1);
	pt_logr_rewind(&r);
	n2 = read_all(&r, &s2);
	if (n1 != n2 || s1 != s2)
		abort();
	same_batched(0);
	same_batched(PT_LOGR_SCAN);
	/* seeking (show --from): the events at or after a time, the same
	 * whether read from the start or from where the seek goes */
	uint64_t x = size >= 8 ? (uint64_t)data[size / 2] << 56 >> (data[size / 3] % 64) : 0;
	uint64_t before = 0;
	pt_logr_rewind(&r);
	size_t whole = count_in(&r, x, UINT64_MAX);
	if (pt_logr_seek(&r, x, &before) == 0 && count_in(&r, x, UINT64_MAX) != whole)
		abort();
	/* stopping after a time (show --to): every event at or before it */
	pt_logr_rewind(&r);
	whole = count_in(&r, 0, x);
	pt_logr_rewind(&r);
	pt_logr_stop_after(&r, x);
	if (count_in(&r, 0, x) != whole)
		abort();
	for (int id = pt_logr_next_id(&r, 0); id >= 0; id = pt_logr_next_id(&r, (unsigned)id + 1))
		if (!pt_logr_name(&r, (unsigned)id) || strlen(pt_logr_name(&r, (unsigned)id)) > PT_LOG_NAME_MAX)
			abort();
	(void)pt_logr_status(&r, &st);
	(void)pt_logr_attr(&r);
	pt_logr_close(&r);
	return 0;
}

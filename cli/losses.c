/*
 * losses.c -- how many events a trace lost, and where.
 *
 * POSIX_TRACE_OVERFLOW and POSIX_TRACE_RESUME mark a gap but carry no
 * data.  The library (src/ext.h) also gives, at each RESUME, the stream's
 * count of lost events when the gap was reported, and the final count when
 * the log was finished.  A gap's count is the difference between its
 * RESUME's count and the previous one: the events lost since the previous
 * gap was reported (a run of drops still going on when a gap is reported
 * is counted by the next gap, or only in the total).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "cli.h"
#include "../src/ext.h"

int tlog_note_loss(struct tlog *l, trace_id_t trid, const struct posix_trace_event_info *ev)
{
	struct pt_ext_losses x;

	if (ev->posix_event_id != POSIX_TRACE_RESUME || pt_ext_losses(trid, &x) || !x.resume_ok)
		return 0;
	if (l->ngaps == l->gcap) {
		size_t ncap = l->gcap ? 2 * l->gcap : 64;
		struct tgap *n = realloc(l->gaps, ncap * sizeof *n);
		if (!n)
			return -1;
		l->gaps = n;
		l->gcap = ncap;
	}
	/* a wrapped log's first pair carries the count overwritten in the
	 * log (wrap_at_resume), the others the stream's (at_resume) */
	uint64_t at = x.at_resume + x.wrap_at_resume;
	at = at > l->lost_at ? at : l->lost_at;
	l->gaps[l->ngaps++] = (struct tgap){ l->nev - 1, at - l->lost_at };
	l->lost_at = at;
	if (x.at_resume > l->lost_stream)
		l->lost_stream = x.at_resume;
	return 0;
}

void tlog_note_totals(struct tlog *l, trace_id_t trid)
{
	struct pt_ext_losses x;

	if (pt_ext_losses(trid, &x))
		return;
	if (x.total_ok) { /* (lost_at may hold a wrapped log's overwritten events too) */
		l->lost_final = 1;
		l->lost_stream = x.total > l->lost_stream ? x.total : l->lost_stream;
	}
	l->log_overwritten = x.log_overwritten;
	l->log_dropped = x.log_dropped;
}

uint64_t tlog_gap_lost(const struct tlog *l, size_t ev)
{
	size_t lo = 0, hi = l->ngaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l->gaps[mid].ev == ev)
			return l->gaps[mid].lost;
		if (l->gaps[mid].ev < ev)
			lo = mid + 1;
		else
			hi = mid;
	}
	return UINT64_MAX;
}

uint64_t tlog_lost_total(const struct tlog *l)
{
	return l->lost_stream + l->log_overwritten + l->log_dropped;
}

int tlog_lost_any(const struct tlog *l)
{
	return l->overflows || l->errors || tlog_lost_total(l) ||
	       l->st.posix_log_overrun_status == POSIX_TRACE_OVERRUN ||
	       l->st.posix_log_full_status == POSIX_TRACE_FULL;
}

static const char *s_(uint64_t n)
{
	return n == 1 ? "" : "s";
}

/* Appends ", " (unless first) and the clause to out, which holds *o bytes. */
__attribute__((format(printf, 4, 5)))
static void clause(char *out, size_t cap, size_t *o, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (*o)
		k = snprintf(out + *o, cap - *o, ", ");
	else
		k = 0;
	if (k < 0 || (size_t)k >= cap - *o)
		return;
	va_start(ap, fmt);
	int m = vsnprintf(out + *o + k, cap - *o - (size_t)k, fmt, ap);
	va_end(ap);
	if (m >= 0 && (size_t)(k + m) < cap - *o)
		*o += (size_t)(k + m);
}

void tlog_loss_text(const struct tlog *l, char *out, size_t cap)
{
	unsigned long long g = l->overflows, n = l->lost_stream;
	unsigned long long ow = l->log_overwritten, dr = l->log_dropped;
	size_t o = 0;

	if (!tlog_lost_any(l)) {
		snprintf(out, cap, "no events lost");
		return;
	}
	out[0] = 0;
	if (g && (l->ngaps || l->lost_final))
		clause(out, cap, &o, "%s%llu event%s lost in %llu gap%s in the stream",
		       l->lost_final ? "" : "at least ", n, s_(n), g, s_(g));
	else if (g)
		clause(out, cap, &o, "%llu gap%s in the stream (this log does not count the events)",
		       g, s_(g));
	else if (n)
		clause(out, cap, &o, "%llu event%s lost in the stream (full)", n, s_(n));
	if (ow)
		clause(out, cap, &o, "%llu overwritten in the log (it wrapped)", ow);
	else if (l->st.posix_log_overrun_status == POSIX_TRACE_OVERRUN)
		clause(out, cap, &o, "the log wrapped");
	if (dr)
		clause(out, cap, &o, "%llu not written (the log filled up)", dr);
	else if (l->st.posix_log_full_status == POSIX_TRACE_FULL)
		clause(out, cap, &o, "the log filled up");
	if (l->errors)
		clause(out, cap, &o, "%llu damaged part%s of the log",
		       (unsigned long long)l->errors, s_(l->errors));
}

const char *tlog_loss_hint(const struct tlog *l)
{
	return l->overflows || l->lost_stream
	       ? "; to lose none, record with --no-loss or a larger --size" : "";
}

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
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "read.h"

uint64_t tlog_note_loss(struct tlog *l, trace_id_t trid, const struct posix_trace_event_info *ev)
{
	struct pt_ext_losses x;

	if (ev->posix_event_id != POSIX_TRACE_RESUME || pt_ext_losses(trid, &x) || !x.resume_ok)
		return UINT64_MAX;
	l->lost_implausible |= x.implausible;
	/* a wrapped log's first pair also carries the count overwritten in
	 * the log (wrap_at_resume), the others only the stream's (at_resume) */
	uint64_t told = x.at_resume + x.wrap_at_resume;
	uint64_t at = told > l->pass_at_ ? told : l->pass_at_, n = at - l->pass_at_;
	l->pass_at_ = at;
	if (!l->totals) {
		l->ngaps++;
		l->lost_at = at;
		if (x.at_resume > l->lost_stream)
			l->lost_stream = x.at_resume;
	}
	return n;
}

void tlog_note_totals(struct tlog *l, trace_id_t trid)
{
	struct pt_ext_losses x;

	if (pt_ext_losses(trid, &x))
		return;
	l->lost_implausible |= x.implausible;
	if (x.total_ok) { /* (lost_at may hold a wrapped log's overwritten events too) */
		l->lost_final = 1;
		l->lost_stream = x.total > l->lost_stream ? x.total : l->lost_stream;
	}
	l->log_overwritten = x.log_overwritten;
	l->log_dropped = x.log_dropped;
	l->late = x.late;
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

/* The stream itself lost events: its final count says so, or (a log
 * never finished, whose count is not known) a gap does.  A LOOP log that
 * wrapped tells what it overwrote with a pair of its own before its
 * oldest event: that gap alone is the log's, not the stream's. */
static int stream_lost(const struct tlog *l)
{
	if (l->lost_stream)
		return 1;
	return !l->lost_final && l->overflows > (l->log_overwritten ? 1u : 0u);
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
	if (!stream_lost(l))
		;
	else if (g && (l->ngaps || l->lost_final))
		clause(out, cap, &o, "%s%llu event%s lost in %llu gap%s in the stream",
		       l->lost_final ? "" : "at least ", n, s_(n), g, s_(g));
	else if (g)
		clause(out, cap, &o, "%llu gap%s in the stream (this log does not count the events)",
		       g, s_(g));
	else if (n)
		clause(out, cap, &o, "%llu event%s lost in the stream (full)", n, s_(n));
	/* Only a LOOP log wraps.  Events not written by an APPEND log (or any
	 * log whose writes failed) met a full disk or an I/O error, which the
	 * final status names; an UNTIL_FULL log reached its size. */
	int lp = 0, ferr = l->st.posix_stream_flush_error;
	posix_trace_attr_getlogfullpolicy(&l->attr, &lp);
	if (ow)
		clause(out, cap, &o, "%llu overwritten in the log (it wrapped)", ow);
	else if (l->st.posix_log_overrun_status == POSIX_TRACE_OVERRUN && lp == POSIX_TRACE_LOOP)
		clause(out, cap, &o, "the log wrapped");
	const char *why = ferr == ENOSPC ? "the disk was full"
	                : ferr == EFBIG || ferr == EDQUOT ? "the file system refused a larger file"
	                : ferr ? strerror(ferr)
	                : lp == POSIX_TRACE_UNTIL_FULL ? "the log filled up"
	                : "writing the log failed";
	if (dr)
		clause(out, cap, &o, "%llu not written to the log (%s)", dr, why);
	else if (ferr && lp != POSIX_TRACE_LOOP && l->st.posix_log_overrun_status == POSIX_TRACE_OVERRUN)
		clause(out, cap, &o, "events not written to the log (%s)", why);
	else if (l->st.posix_log_full_status == POSIX_TRACE_FULL)
		clause(out, cap, &o, "the log filled up");
	if (l->errors)
		clause(out, cap, &o, "%llu damaged part%s of the log",
		       (unsigned long long)l->errors, s_(l->errors));
	if (l->lost_implausible)
		clause(out, cap, &o, "implausibly many (more than the stream could have lost: the "
		                     "traced process wrote over its count, shown clamped)");
}

int tlog_lost_unasked(const struct tlog *l)
{
	int sp = 0, lp = 0;

	posix_trace_attr_getstreamfullpolicy(&l->attr, &sp);
	posix_trace_attr_getlogfullpolicy(&l->attr, &lp);
	/* a FLUSH stream loses only when it fills faster than it is written;
	 * a log's writes fail only on a full disk or an I/O error */
	return (sp == POSIX_TRACE_FLUSH && stream_lost(l)) ||
	       l->st.posix_stream_flush_error != 0 ||
	       (l->log_dropped && lp != POSIX_TRACE_UNTIL_FULL) || l->errors;
}

/* What would have kept the events the stream lost, by its policy: a FLUSH
 * stream's writers can wait for the log (--no-loss); the others keep what
 * fits, so only room (or FLUSH) keeps more. */
const char *tlog_loss_hint(const struct tlog *l)
{
	int sp = POSIX_TRACE_FLUSH;

	if (!stream_lost(l))
		return "";
	posix_trace_attr_getstreamfullpolicy(&l->attr, &sp);
	if (sp == POSIX_TRACE_LOOP)
		return "; the stream kept its latest events (--policy loop): a larger --size keeps "
		       "more, --policy flush --no-loss all";
	if (sp == POSIX_TRACE_UNTIL_FULL)
		return "; the stream stopped when full (--policy until-full): a larger --size keeps "
		       "more, --policy flush --no-loss all";
	return "; the log could not keep up: record with --no-loss to make the program wait for "
	       "it, or with a larger --size for longer bursts";
}

/*
 * vquery.c -- the JSON answers of `posixtrace view`, from the index
 * (vindex.c) and from the log itself through its block index:
 *   /meta   the trace: span, counts, types and their colour slots,
 *           processes and lanes (each thread named as every command
 *           names it, with the most spans it has open at once: its rows
 *           of spans), loss and damage markers, no-loss waits;
 *   /query  a window [from, to] drawn in cols columns: event counts per
 *           lane, column and type slot from the level of detail that has
 *           at least a bucket per column, or, when the index says the
 *           window holds at most max_events, the events themselves,
 *           read after a seek to the window's start; and the spans that
 *           overlap it (every one, or those a column wide or more);
 *   /event  one event (time, lane, its place among the lane's events of
 *           that time): every detail, the payload in hex and as text.
 * Times in requests and answers are ns after the trace's first event.
 */
#include <stdlib.h>
#include <string.h>
#include "write.h"

static struct tlog *same_log(struct vsrv *s)
{
	return s->l;
}

int vq_init(struct vsrv *s, struct tlog *l, struct vindex *x, struct symz *z)
{
	memset(s, 0, sizeof *s);
	s->l = l;
	s->reader = same_log;
	s->x = x;
	s->z = z;
	s->max_events = 20000;
	return 0;
}

void vq_free(struct vsrv *s)
{
	free(s->lane_of);
	s->lane_of = NULL;
}

/* The index lane of tlog thread t (threads are numbered as they appear,
 * and the index was made with the same numbering, or read from a cache
 * made with it: looked up by pid and thread id once). */
static uint32_t lane_of(struct vsrv *s, uint32_t t)
{
	if (t >= s->nlane_of) {
		size_t n = s->rd->nth;
		uint32_t *m = realloc(s->lane_of, (n ? n : 1) * sizeof *m);
		if (!m)
			return UINT32_MAX;
		for (size_t i = s->nlane_of; i < n; i++) {
			m[i] = UINT32_MAX;
			/* (its own number first: processes given one pid have
			 * threads of one pid and pthread_t, births.c) */
			if (i < s->x->nlanes && s->x->lanes[i].pid == s->rd->th[i].pid &&
			    s->x->lanes[i].tid == s->rd->th[i].tid) {
				m[i] = (uint32_t)i;
				continue;
			}
			for (uint32_t k = 0; k < s->x->nlanes; k++)
				if (s->x->lanes[k].pid == s->rd->th[i].pid &&
				    s->x->lanes[k].tid == s->rd->th[i].tid) {
					m[i] = k;
					break;
				}
		}
		s->lane_of = m;
		s->nlane_of = n;
	}
	return t < s->nlane_of ? s->lane_of[t] : UINT32_MAX;
}

static const char *exe_of(struct vsrv *s, int32_t pid, uint64_t ts)
{
	const char *exe = s->z && pid ? symz_exe(s->z, pid, ts) : NULL;
	return pid == 0 ? "(reader)" : exe ? exe : "";
}

/* "thread":"PID/TID","tid":TID|null,"name":NAME|null,"pthread_t":"0x..":
 * thread t of l at ts as stats --json names it (format.c, json_thread) */
static void vb_thread(struct vbuf *b, const struct tlog *l, uint32_t t, uint64_t ts)
{
	char who[48], name[40];
	int64_t tid;

	tlog_thread_id(l, t, ts, who, sizeof who, name, sizeof name, &tid);
	vb_put(b, "\"thread\":", 9);
	vb_str(b, who);
	if (tid > 0) {
		vb_printf(b, ",\"tid\":%lld,\"name\":", (long long)tid);
		vb_str(b, name);
	} else {
		vb_printf(b, ",\"tid\":null,\"name\":null");
	}
	vb_printf(b, ",\"pthread_t\":\"0x%llx\"",
	          (unsigned long long)(t < l->nth ? l->th[t].tid : 0));
}

static void meta(struct vsrv *s, struct vbuf *b)
{
	const struct tlog *l = s->l;
	const struct vindex *x = s->x;
	char tmp[64], lost[240], name[TRACE_NAME_MAX] = "";

	posix_trace_attr_getname(&l->attr, name);
	tlog_loss_text(l, lost, sizeof lost);
	fmt_abs(tmp, sizeof tmp, x->t0);
	vb_put(b, "{\"path\":", 8);
	vb_str(b, l->path);
	vb_put(b, ",\"name\":", 8);
	vb_str(b, name);
	uint64_t t0 = x->t0;
	tlog_t0(l, &t0); /* (cmd_view checked it) */
	/* t0: time 0 (--t0), in ns after the first event: where the page counts from */
	vb_printf(b, ",\"start\":\"%s\",\"span\":%llu,\"events\":%llu,\"t0\":%lld,\"lost\":",
	          tmp, (unsigned long long)(x->t1 - x->t0), (unsigned long long)x->nev,
	          (long long)(t0 - x->t0));
	vb_str(b, lost);
	vb_printf(b, ",\"lost_any\":%d,\"unfinished\":%d,\"writing\":%d,\"slots\":%u,\"levels\":%u,"
	          "\"buckets\":%u,\"cached\":%d,\"marks_dropped\":%u,\"types\":[",
	          tlog_lost_any(l), l->unfinished, l->writing, x->nslots, x->nlevels, x->nb,
	          x->from_cache, x->marks_dropped);
	int first = 1;
	for (unsigned i = 0; i < PT_NIDS; i++) {
		if (!l->count[i])
			continue;
		vb_printf(b, "%s{\"id\":%u,\"slot\":%u,\"count\":%llu,\"name\":", first ? "" : ",",
		          i, x->slot_of[i], (unsigned long long)l->count[i]);
		vb_str(b, tlog_name(l, i, tmp, sizeof tmp));
		vb_put(b, "}", 1);
		first = 0;
	}
	vb_put(b, "],\"lanes\":[", 11);
	for (uint32_t k = 0; k < x->nlanes; k++) {
		const struct vlane *ln = &x->lanes[k];
		unsigned idx = 0;
		uint64_t count = 0;
		uint32_t t = UINT32_MAX;
		if (k < l->nth && l->th[k].pid == ln->pid && l->th[k].tid == ln->tid) {
			idx = l->th[k].idx; /* (its own number: lanes are threads, in order) */
			count = l->th[k].count;
			t = k;
		}
		for (size_t i = 0; t == UINT32_MAX && i < l->nth; i++)
			if (l->th[i].pid == ln->pid && l->th[i].tid == ln->tid) {
				idx = l->th[i].idx;
				count = l->th[i].count;
				t = (uint32_t)i;
			}
		vb_printf(b, "%s{\"pid\":%d,", k ? "," : "", (int)ln->pid);
		if (t != UINT32_MAX) { /* (named as at its last event, as stats names it) */
			vb_thread(b, l, t, l->th[t].last);
		} else {
			char who[48];
			snprintf(who, sizeof who, "%d/?", (int)ln->pid);
			vb_put(b, "\"thread\":", 9);
			vb_str(b, who);
			vb_printf(b, ",\"tid\":null,\"name\":null,\"pthread_t\":\"0x%llx\"",
			          (unsigned long long)ln->tid);
		}
		vb_printf(b, ",\"idx\":%u,\"count\":%llu,\"depth\":%u,\"exe\":", idx,
		          (unsigned long long)count, x->depth ? x->depth[k] : 0);
		vb_str(b, exe_of(s, ln->pid, t != UINT32_MAX ? l->th[t].last : UINT64_MAX));
		char ident[256] = "";
		if (l->thrs) /* the kernel thread ids and names it had */
			thrmap_all(l->thrs, ident, sizeof ident, ln->pid, ln->tid);
		vb_put(b, ",\"ident\":", 9);
		vb_str(b, ident);
		vb_put(b, "}", 1);
	}
	vb_put(b, "],\"marks\":[", 11);
	/* [lane, at, id], and a no-loss wait's length after it: [lane, at, 8, ns] */
	for (uint32_t i = 0; i < x->nmarks; i++) {
		const struct vmark *m = &x->marks[i];
		vb_printf(b, "%s[%u,%llu,%u", i ? "," : "", m->lane,
		          (unsigned long long)(m->ts - x->t0), m->id);
		if (m->id == PT_EXT_NOLOSS_WAIT)
			vb_printf(b, ",%llu", (unsigned long long)m->dur);
		vb_put(b, "]", 1);
	}
	vb_put(b, "]}", 2);
}

/* The window's events, read from the log after a seek.  The log is in
 * time order per block; reading stops once VIEW_PAST events in a row lie
 * after the window.  With spans (cli/enrich/spans.c: the NAME/begin,
 * NAME/end convention, or view's --span), every complete span that
 * overlaps the window comes too, at most VIEW_MAX_SPANS:
 * [lane, start, duration, depth, span number, the end's lane], and their
 * names.  Those at least the index's long_ns long are the index's
 * (vindex.c: paired in a pass over the whole log, however early they
 * began); the shorter ones begin at most long_ns before the window and
 * end at most long_ns after it, so reading from long_ns before it to
 * long_ns after it pairs them all. */
#define VIEW_PAST 4096
#define VIEW_MAX_SPANS 20000

/* The index's long spans that overlap [from, to] and last min_dur at
 * least, after the nsp spans already in sb: how many then. */
static uint64_t long_spans(const struct vindex *x, uint64_t from, uint64_t to, uint64_t min_dur,
                           struct vbuf *sb, uint64_t nsp)
{
	for (uint32_t i = 0; i < x->nsp && nsp < VIEW_MAX_SPANS; i++) {
		const struct vspan *v = &x->sp[i];
		if (v->start > to || v->start + v->dur < from || v->dur < min_dur)
			continue;
		vb_printf(sb, "%s[%u,%llu,%llu,%u,%u,%u]", nsp++ ? "," : "", v->lane,
		          (unsigned long long)(v->start - x->t0), (unsigned long long)v->dur,
		          v->depth, v->def, v->elane);
	}
	return nsp;
}

/* ,"spans":[...],"span_names":[...] */
static void put_spans(struct vbuf *b, const struct vbuf *sb, const struct spans *sp)
{
	vb_put(b, ",\"spans\":[", 10);
	if (sb->n)
		vb_put(b, sb->p, sb->n);
	vb_put(b, "],\"span_names\":[", 16);
	for (size_t i = 0; i < spans_count(sp); i++) {
		vb_put(b, i ? "," : "", i ? 1 : 0);
		vb_str(b, spans_stat(sp, i)->name);
	}
	vb_put(b, "]", 1);
}

static int events(struct vsrv *s, uint64_t from, uint64_t to, struct vbuf *b)
{
	struct tev e;
	struct span_mark m;
	struct spans *sp = NULL;
	struct vbuf sb = { 0 };
	int r;
	uint64_t past = 0, n = 0, nsp = 0, at = from;

	if (!(s->rd = s->reader(s)))
		return 500;
	if (s->span_args && spans_make(s->span_args, &sp) == 1)
		return 500;
	int spans = sp && spans_any(sp, s->rd);
	/* spans this long or longer are the index's */
	uint64_t L = spans && s->x->has_spans ? s->x->long_ns : 0;
	uint64_t back = L ? L : to - from, after = to + L;
	if (spans)
		at = from - (from - s->x->t0 < back ? from - s->x->t0 : back);
	if (tlog_seek(s->rd, at)) {
		spans_free(sp);
		return 500;
	}
	vb_put(b, "{\"mode\":\"events\",\"ev\":[", 23);
	while (past < VIEW_PAST && (r = tlog_next(s->rd, &e)) > 0) {
		if (spans && spans_event(sp, s->rd, &e, &m) == 0 && m.kind == SPAN_END &&
		    (!L || m.dur < L) && m.start <= to && m.start + m.dur >= from &&
		    nsp < VIEW_MAX_SPANS) {
			uint32_t ln = lane_of(s, m.thread), el = lane_of(s, e.thread);
			if (ln != UINT32_MAX)
				vb_printf(&sb, "%s[%u,%llu,%llu,%u,%u,%u]", nsp++ ? "," : "", ln,
				          (unsigned long long)(m.start - s->x->t0),
				          (unsigned long long)m.dur, m.depth, m.def,
				          el != UINT32_MAX ? el : ln);
		}
		if (e.ts > after) {
			past++;
			continue;
		}
		past = 0;
		if (e.ts < from || e.ts > to)
			continue;
		uint32_t ln = lane_of(s, e.thread);
		if (ln == UINT32_MAX)
			continue;
		vb_printf(b, "%s[%u,%llu,%u]", n++ ? "," : "", ln,
		          (unsigned long long)(e.ts - s->x->t0), e.id);
	}
	vb_put(b, "]", 1);
	if (spans) {
		if (L)
			nsp = long_spans(s->x, from, to, 0, &sb, nsp);
		put_spans(b, &sb, sp);
	}
	vb_put(b, "}", 1);
	b->oom |= sb.oom;
	free(sb.p);
	spans_free(sp);
	return 0;
}

static int density(struct vsrv *s, uint64_t from, uint64_t to, unsigned cols, struct vbuf *b)
{
	const struct vindex *x = s->x;
	uint64_t colw = (to - from) / cols + 1;
	unsigned k = 0;

	while (k + 1 < x->nlevels && vindex_bucket_ns(x, k + 1) <= colw)
		k++;
	uint64_t w = vindex_bucket_ns(x, k), nbk = x->nb >> k;
	uint64_t b0 = (from - x->t0) / w, b1 = (to - x->t0) / w;
	uint32_t ns = x->nslots;
	b1 = b1 < nbk ? b1 : nbk - 1;
	uint64_t *sum = calloc((size_t)cols * ns, sizeof *sum);
	if (!sum)
		return 500;
	vb_printf(b, "{\"mode\":\"density\",\"level\":%u,\"bucket\":%llu,\"colw\":%llu,\"lanes\":[",
	          k, (unsigned long long)w, (unsigned long long)colw);
	for (uint32_t ln = 0; ln < x->nlanes; ln++) {
		const uint32_t *c = x->cnt[k] + (size_t)ln * nbk * ns;
		int first = 1;
		memset(sum, 0, (size_t)cols * ns * sizeof *sum);
		for (uint64_t bk = b0; bk <= b1; bk++) {
			uint64_t at = x->t0 + bk * w;
			uint64_t col = at <= from ? 0 : (at - from) / colw;
			col = col < cols ? col : cols - 1;
			for (uint32_t sl = 0; sl < ns; sl++)
				sum[col * ns + sl] += c[bk * ns + sl];
		}
		vb_put(b, ln ? ",[" : "[", ln ? 2 : 1);
		for (size_t i = 0; i < (size_t)cols * ns; i++)
			if (sum[i]) {
				vb_printf(b, "%s%zu,%zu,%llu", first ? "" : ",", i / ns, i % ns,
				          (unsigned long long)sum[i]);
				first = 0;
			}
		vb_put(b, "]", 1);
	}
	free(sum);
	vb_put(b, "]", 1);
	/* the index's long spans a column wide or more (a span shorter than
	 * its long_ns, at most a few columns wide here, is not drawn), the
	 * longest VIEW_MAX_SPANS of them at most */
	struct spans *sp = NULL;
	if (x->has_spans && s->span_args && spans_make(s->span_args, &sp) == 0 &&
	    spans_any(sp, s->l)) {
		struct vbuf sb = { 0 };
		/* more than VIEW_MAX_SPANS: the longest (not the first in the
		 * table, which would favour one end of the trace) */
		uint64_t min = colw, n;
		do {
			n = 0;
			for (uint32_t i = 0; i < x->nsp; i++)
				n += x->sp[i].start <= to && x->sp[i].start + x->sp[i].dur >= from &&
				     x->sp[i].dur >= min;
		} while (n > VIEW_MAX_SPANS && (min *= 2) <= x->t1 - x->t0);
		long_spans(x, from, to, min, &sb, 0);
		put_spans(b, &sb, sp);
		b->oom |= sb.oom;
		free(sb.p);
	}
	spans_free(sp);
	vb_put(b, "}", 1);
	return 0;
}

static void one_event(struct vsrv *s, const struct tev *e, uint32_t lane, struct vbuf *b)
{
	static const char hex[] = "0123456789abcdef";
	const struct tthread *th = &s->rd->th[e->thread];
	char tmp[64], abs[64];

	fmt_abs(abs, sizeof abs, e->ts);
	vb_printf(b, "{\"at\":%llu,\"abs\":\"%s\",\"lane\":%u,\"id\":%u,\"type\":",
	          (unsigned long long)(e->ts - s->x->t0), abs, lane, e->id);
	vb_str(b, tlog_name(s->rd, e->id, tmp, sizeof tmp));
	vb_printf(b, ",\"pid\":%d,", (int)th->pid);
	vb_thread(b, s->rd, e->thread, e->ts);
	vb_printf(b, ",\"idx\":%u,\"exe\":", th->idx);
	vb_str(b, exe_of(s, th->pid, e->ts));
	char text[600];
	thrmap_label(s->rd->thrs, text, sizeof text, th->pid, th->tid, e->ts, th->idx);
	vb_put(b, ",\"ident\":", 9);
	vb_str(b, text);
	fmt_event_data(text, sizeof text, s->rd, e); /* as show prints it (typed payloads decoded) */
	vb_put(b, ",\"shown\":", 9);
	vb_str(b, text);
	vb_printf(b, ",\"addr\":\"0x%llx\",\"sym\":", (unsigned long long)e->addr);
	vb_str(b, s->z && e->addr ? symz_lookup(s->z, th->pid, e->ts, e->addr) : "");
	vb_printf(b, ",\"len\":%u,\"truncated\":%u,", e->len, e->trunc);
	if (e->lost != UINT64_MAX)
		vb_printf(b, "\"lost\":%llu,", (unsigned long long)e->lost);
	vb_put(b, "\"hex\":\"", 7);
	size_t n = e->len < 4096 ? e->len : 4096;
	for (size_t i = 0; i < n; i++) {
		char h[2] = { hex[e->data[i] >> 4], hex[e->data[i] & 15] };
		vb_put(b, h, 2);
	}
	vb_put(b, "\",\"text\":", 9);
	char *t = malloc(n + 1);
	if (!t) {
		b->oom = 1;
		return;
	}
	for (size_t i = 0; i < n; i++)
		t[i] = e->data[i] >= 0x20 && e->data[i] < 0x7f ? (char)e->data[i] : '.';
	t[n] = 0;
	vb_str(b, t);
	free(t);
	vb_put(b, "}", 1);
}

static int event(struct vsrv *s, const struct vreq *r, struct vbuf *b)
{
	struct tev e;
	int rc;
	uint64_t at = s->x->t0 + r->at, k = 0, past = 0;

	if (r->at > s->x->t1 - s->x->t0 || r->lane >= s->x->nlanes)
		return 404;
	if (!(s->rd = s->reader(s)) || tlog_seek(s->rd, at))
		return 500;
	while (past < VIEW_PAST && (rc = tlog_next(s->rd, &e)) > 0) {
		if (e.ts > at) {
			past++;
			continue;
		}
		past = 0;
		if (e.ts < at || lane_of(s, e.thread) != r->lane)
			continue;
		if (k++ == r->n) {
			one_event(s, &e, r->lane, b);
			return 0;
		}
	}
	return 404;
}

int vq_answer(struct vsrv *s, const struct vreq *r, struct vbuf *b)
{
	const struct vindex *x = s->x;

	switch (r->route) {
	case VR_META:
		meta(s, b);
		return 0;
	case VR_QUERY: {
		uint64_t span = x->t1 - x->t0;
		uint64_t from = r->from > span ? span : r->from, to = r->to > span ? span : r->to;
		from += x->t0;
		to += x->t0;
		if (vindex_estimate(x, from, to) <= s->max_events)
			return events(s, from, to, b);
		return density(s, from, to, r->cols, b);
	}
	case VR_EVENT:
		return event(s, r, b);
	default:
		return 404;
	}
}

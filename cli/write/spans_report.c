/*
 * spans_report.c -- what `stats` says of spans (spans.c): per span the
 * count, incomplete ones, total and mean time, quantiles of the duration
 * (from its histogram: hist.c's rule, the value of rank ceil(q n)), the
 * largest; its 10 slowest instances with their start (seconds since the
 * first event, as `show --from` takes it) and thread; and per thread the
 * share of the thread's time spent inside it (same-thread spans: the
 * outermost instance counts, so nesting is not counted twice).
 */
#include <stdlib.h>
#include <string.h>
#include "write.h"

static const double qs[] = { 0.5, 0.9, 0.99, 0.999 };

static const struct tthread *thread_of(const struct tlog *l, uint32_t i)
{
	return i < l->nth ? &l->th[i] : NULL;
}

/* the thread's time: from its first event to its last */
static uint64_t thread_time(const struct tlog *l, size_t i)
{
	const struct tthread *t = &l->th[i];
	return t->count && t->last > t->first ? t->last - t->first : 0;
}

void spans_print(FILE *f, const struct spans *s, const struct tlog *l, uint64_t t0)
{
	char d[6][24], rel[32], who[32];
	size_t n = spans_count(s);
	int w = 10;

	if (!n)
		return;
	for (size_t i = 0; i < n; i++) {
		int k = (int)strlen(spans_stat(s, i)->name);
		w = k > w ? (k < 30 ? k : 30) : w;
	}
	fprintf(f, "\n%-*s %9s %10s %11s %11s %11s %11s %11s %11s %11s\n", w, "span", "count",
	        "incomplete", "total", "mean", "p50", "p90", "p99", "p99.9", "max");
	for (size_t i = 0; i < n; i++) {
		const struct span_stat *x = spans_stat(s, i);
		const struct hist *h = &x->h;
		fprintf(f, "%-*.*s %9llu %10llu", w, w, x->name, (unsigned long long)h->n,
		        (unsigned long long)x->incomplete);
		if (!h->n) {
			fprintf(f, " %11s %11s %11s %11s %11s %11s %11s\n", "-", "-", "-", "-", "-", "-",
			        "-");
			continue;
		}
		fmt_duration(d[0], sizeof d[0], (uint64_t)h->sum);
		fmt_duration(d[1], sizeof d[1], (uint64_t)(h->sum / (double)h->n));
		fprintf(f, " %11s %11s", d[0], d[1]);
		for (int q = 0; q < 4; q++) { /* (to the histogram's precision) */
			fmt_quantile(d[2], sizeof d[2], hist_quantile(h, qs[q]));
			fprintf(f, " %11s", d[2]);
		}
		fmt_duration(d[2], sizeof d[2], h->max);
		fprintf(f, " %11s\n", d[2]);
	}
	for (size_t i = 0; i < n; i++) {
		const struct span_stat *x = spans_stat(s, i);
		if (!x->nslow)
			continue;
		fprintf(f, "\nslowest %s (start: seconds since time 0, for show --from)\n"
		           "  %12s %16s  %s\n", x->name, "duration", "start", "pid/tid    thread");
		for (unsigned k = 0; k < x->nslow; k++) {
			char name[40];
			fmt_duration(d[0], sizeof d[0], x->slow[k].dur);
			fmt_since(rel, sizeof rel, x->slow[k].start, t0);
			tlog_thread_id(l, x->slow[k].thread, x->slow[k].start, who, sizeof who, name,
			               sizeof name, NULL);
			fprintf(f, "  %12s %16s  %-12s %s\n", d[0], rel, who, name);
		}
	}
	int head = 0;
	for (size_t i = 0; i < n; i++) {
		const struct span_stat *x = spans_stat(s, i);
		for (size_t t = 0; t < x->ninside && t < l->nth; t++) {
			uint64_t tt = thread_time(l, t);
			if (!x->inside[t] || !tt)
				continue;
			if (!head++)
				fprintf(f, "\ntime inside spans, per thread (from its first event to its "
				           "last)\n  %-*s %-12s %-16s %7s\n", w, "span", "pid/tid", "thread",
				        "share");
			char name[40];
			tlog_thread_id(l, (uint32_t)t, l->th[t].last, who, sizeof who, name, sizeof name,
			               NULL);
			fprintf(f, "  %-*.*s %-12s %-16s %6.1f%%\n", w, w, x->name, who, name,
			        100.0 * (double)x->inside[t] / (double)tt);
		}
	}
}

void spans_summary(FILE *f, const struct spans *s, const struct tlog *l)
{
	char tmp[32], d[3][24];
	size_t n = spans_count(s);

	fprintf(f, "\nspans (%zu)\n  %-20s %-7s %10s %10s %11s %11s %11s  %s\n", n, "name", "pairs",
	        "complete", "incomplete", "p50", "p99", "max", "begin .. end types (their events)");
	for (size_t i = 0; i < n; i++) {
		const struct span_stat *x = spans_stat(s, i);
		const struct hist *h = &x->h;
		uint64_t nb = 0, ne = 0;
		for (unsigned id = 0; id < PT_NIDS; id++)
			if (l->count[id] || l->names[id]) {
				const char *nm = tlog_name(l, id, tmp, sizeof tmp);
				nb += strcmp(nm, x->begin) ? 0 : l->count[id];
				ne += strcmp(nm, x->end) ? 0 : l->count[id];
			}
		fmt_quantile(d[0], sizeof d[0], hist_quantile(h, 0.5));
		fmt_quantile(d[1], sizeof d[1], hist_quantile(h, 0.99));
		fmt_duration(d[2], sizeof d[2], h->max);
		fprintf(f, "  %-20s %-7s %10llu %10llu %11s %11s %11s  %s (%llu) .. %s (%llu)\n", x->name,
		        x->keyed ? "by key" : "thread", (unsigned long long)h->n,
		        (unsigned long long)x->incomplete, h->n ? d[0] : "-", h->n ? d[1] : "-",
		        h->n ? d[2] : "-", x->begin, (unsigned long long)nb, x->end,
		        (unsigned long long)ne);
	}
}

void spans_json(FILE *f, const struct spans *s, const struct tlog *l, uint64_t t0)
{
	char j[3][200];
	size_t n = spans_count(s);

	fputs("\"spans\":[", f);
	for (size_t i = 0; i < n; i++) {
		const struct span_stat *x = spans_stat(s, i);
		const struct hist *h = &x->h;
		json_str(j[0], sizeof j[0], x->name);
		json_str(j[1], sizeof j[1], x->begin);
		json_str(j[2], sizeof j[2], x->end);
		fprintf(f, "%s\n{\"name\":%s,\"begin\":%s,\"end\":%s,\"keyed\":%s,\"count\":%llu,"
		           "\"incomplete\":%llu,\"total_ns\":%.0f,\"mean_ns\":%.1f,\"min_ns\":%llu,"
		           "\"p50_ns\":%llu,\"p90_ns\":%llu,\"p99_ns\":%llu,\"p999_ns\":%llu,"
		           "\"max_ns\":%llu,\"slowest\":[",
		        i ? "," : "", j[0], j[1], j[2], x->keyed ? "true" : "false",
		        (unsigned long long)h->n, (unsigned long long)x->incomplete, h->sum,
		        h->n ? h->sum / (double)h->n : 0.0, (unsigned long long)h->min,
		        (unsigned long long)hist_quantile(h, qs[0]),
		        (unsigned long long)hist_quantile(h, qs[1]),
		        (unsigned long long)hist_quantile(h, qs[2]),
		        (unsigned long long)hist_quantile(h, qs[3]), (unsigned long long)h->max);
		for (unsigned k = 0; k < x->nslow; k++) {
			fprintf(f, "%s{\"start_ns\":%llu,\"offset_ns\":%llu,\"duration_ns\":%llu,",
			        k ? "," : "", (unsigned long long)x->slow[k].start,
			        (long long)(x->slow[k].start - t0), (unsigned long long)x->slow[k].dur);
			json_thread(f, l, x->slow[k].thread, x->slow[k].start);
			fputc('}', f);
		}
		fputs("],\"threads\":[", f);
		int first = 1;
		for (size_t t = 0; t < x->ninside && t < l->nth; t++) {
			uint64_t tt = thread_time(l, t);
			if (!x->inside[t])
				continue;
			fprintf(f, "%s{", first ? "" : ",");
			json_thread(f, l, (uint32_t)t, l->th[t].last);
			fprintf(f, ",\"inside_ns\":%llu,\"share\":%.6f}", (unsigned long long)x->inside[t],
			        tt ? (double)x->inside[t] / (double)tt : 0.0);
			first = 0;
		}
		fputs("]}", f);
	}
	fputs("]", f);
}

static void chrome_ts(FILE *f, const char *key, uint64_t ns)
{
	fprintf(f, ",\"%s\":%llu.%03u", key, (unsigned long long)(ns / 1000), (unsigned)(ns % 1000));
}

void spans_chrome(FILE *f, const struct spans *s, const struct tlog *l, const struct span_mark *m,
                  uint32_t end_thread, uint64_t t0, uint64_t n)
{
	const struct span_stat *x = spans_stat(s, m->def);
	const struct tthread *b = thread_of(l, m->thread), *e = thread_of(l, end_thread);
	char j[200];

	if (!b || !e)
		return;
	json_str(j, sizeof j, x->name);
	uint64_t rel = m->start >= t0 ? m->start - t0 : 0;
	if (!x->keyed) {
		fprintf(f, ",\n{\"name\":%s,\"cat\":\"span\",\"ph\":\"X\"", j);
		chrome_ts(f, "ts", rel);
		chrome_ts(f, "dur", m->dur);
		fprintf(f, ",\"pid\":%d,\"tid\":%lld}", (int)b->pid,
		        (long long)thrmap_tid(l->thrs, b->pid, b->tid, m->start, b->idx));
		return;
	}
	fprintf(f, ",\n{\"name\":%s,\"cat\":\"span\",\"ph\":\"b\",\"id\":%llu", j,
	        (unsigned long long)n);
	chrome_ts(f, "ts", rel);
	fprintf(f, ",\"pid\":%d,\"tid\":%lld}", (int)b->pid,
	        (long long)thrmap_tid(l->thrs, b->pid, b->tid, m->start, b->idx));
	fprintf(f, ",\n{\"name\":%s,\"cat\":\"span\",\"ph\":\"e\",\"id\":%llu", j,
	        (unsigned long long)n);
	chrome_ts(f, "ts", rel + m->dur);
	fprintf(f, ",\"pid\":%d,\"tid\":%lld}", (int)e->pid,
	        (long long)thrmap_tid(l->thrs, e->pid, e->tid, m->start + m->dur, e->idx));
	if (m->thread == end_thread)
		return;
	/* begun on one thread, ended on another: a flow arrow between them
	 * (a flow start, and its end bound to the enclosing slice's end) */
	fprintf(f, ",\n{\"name\":%s,\"cat\":\"span\",\"ph\":\"s\",\"id\":%llu", j,
	        (unsigned long long)n);
	chrome_ts(f, "ts", rel);
	fprintf(f, ",\"pid\":%d,\"tid\":%lld}", (int)b->pid,
	        (long long)thrmap_tid(l->thrs, b->pid, b->tid, m->start, b->idx));
	fprintf(f, ",\n{\"name\":%s,\"cat\":\"span\",\"ph\":\"f\",\"bp\":\"e\",\"id\":%llu",
	        j, (unsigned long long)n);
	chrome_ts(f, "ts", rel + m->dur);
	fprintf(f, ",\"pid\":%d,\"tid\":%lld}", (int)e->pid,
	        (long long)thrmap_tid(l->thrs, e->pid, e->tid, m->start + m->dur, e->idx));
}

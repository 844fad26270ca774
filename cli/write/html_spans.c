/*
 * html_spans.c -- spans (spans.c) in the HTML page of `export --format
 * html` (export_html.c): as the log is read once, each complete span is
 * a bar on its thread's lane of the timeline (nested ones above it,
 * by depth; keyed ones a thin outlined bar at the top of the lane of the
 * thread that began them), cut to the window drawn; at the end, per span
 * name, its figures (count, incomplete, quantiles), a latency histogram
 * and its p99 over time.
 *
 * Histogram: bins of a quarter of a power of two (4, 5, 6, 7, 8, 10, 12,
 * 14, 16, 20 ... ns), from the bin of the shortest span to that of the
 * longest.  Their edges are edges of hist.c's buckets, so each bin's
 * count (hist_below) is exact.  p99 over time: the trace's time in
 * HS_BUCKETS buckets, a histogram of the durations of the spans begun in
 * each, and its 99th percentile (and median), by hist.c's rule.
 *
 * Memory: per span name HS_BUCKETS histograms (hist.c: a row of 1 KiB
 * per power of two met), whatever the number of events or spans; bars
 * are written, not kept.
 *
 * What the page exposes for a reader (and the tests): each bar is a
 * <rect class="sp" data-s="NAME">; each span's section a <div
 * class="span" data-name data-count data-incomplete data-bars> (bars:
 * the ones the timeline drew), its histogram bins <rect class="hb"
 * data-lo data-hi data-n> (ns, count) and its time buckets <circle
 * class="tp" data-n data-p50 data-p99>.
 */
#include <stdlib.h>
#include <string.h>
#include "write.h"

#define HS_BUCKETS 100
#define HS_W 480     /* a plot's size, pixels */
#define HS_H 130
#define HS_M 34      /* its left margin (axis labels) */

static const char *const colors[] = {
	"#e6550d", "#3182bd", "#31a354", "#756bb1", "#d6616b", "#8c6d31", "#e7969c", "#17becf",
};

struct hspans {
	struct spans *sp;
	uint64_t t0, t1;                  /* the trace's first and last timestamps */
	struct hist *tb[SPAN_MAX];        /* per span: HS_BUCKETS histograms (NULL: none yet) */
	uint64_t bars[SPAN_MAX];          /* bars drawn */
};

static const char *hspans_color(unsigned def)
{
	return colors[def % (sizeof colors / sizeof colors[0])];
}

struct hspans *hspans_new(struct spans *sp, const struct tlog *l)
{
	struct hspans *h = calloc(1, sizeof *h);
	if (!h)
		return NULL;
	h->sp = sp;
	h->t0 = l->first;
	h->t1 = l->nev ? l->last : l->first;
	return h;
}

void hspans_free(struct hspans *h)
{
	if (!h)
		return;
	for (size_t d = 0; d < SPAN_MAX; d++)
		if (h->tb[d]) {
			for (unsigned b = 0; b < HS_BUCKETS; b++)
				hist_free(&h->tb[d][b]);
			free(h->tb[d]);
		}
	free(h);
}

int hspans_event(struct hspans *h, FILE *f, const struct tlog *l, const struct span_mark *m,
                 const struct hlane *g)
{
	if (m->kind != SPAN_END)
		return 0;
	const struct span_stat *x = spans_stat(h->sp, m->def);
	if (!h->tb[m->def] && !(h->tb[m->def] = calloc(HS_BUCKETS, sizeof *h->tb[m->def])))
		return -1;
	uint64_t span = h->t1 - h->t0 + 1, off = m->start >= h->t0 ? m->start - h->t0 : 0;
	unsigned b = (unsigned)((double)off / (double)span * HS_BUCKETS);
	if (hist_add(&h->tb[m->def][b < HS_BUCKETS ? b : HS_BUCKETS - 1], m->dur))
		return -1;
	/* the bar, cut to the window */
	uint64_t a = m->start, z = m->start + m->dur;
	if (z < g->lo || a > g->hi || m->thread >= l->nth)
		return 0;
	a = a < g->lo ? g->lo : a;
	z = z > g->hi ? g->hi : z;
	unsigned y = g->lane[m->thread] * (unsigned)g->lane_h, depth = m->depth < 3 ? m->depth : 3;
	char d[32];
	fmt_duration(d, sizeof d, m->dur);
	if (x->keyed)
		fputs("<rect class=\"sp k\" data-s=\"", f);
	else
		fputs("<rect class=\"sp\" data-s=\"", f);
	html_text(f, x->name);
	fprintf(f, "\" x=\"%.3f\" y=\"%u\" width=\"%.3f\" height=\"%u\" fill=\"%s\"><title>",
	        g->pad + (double)(a - g->lo) / 1e3,
	        x->keyed ? y + 1 : y + (unsigned)g->lane_h - 6 - 4 * depth,
	        (double)(z - a) / 1e3, x->keyed ? 3u : 4u, hspans_color(m->def));
	html_text(f, x->name);
	fprintf(f, " %s (depth %u)</title></rect>\n", d, m->depth);
	h->bars[m->def]++;
	return 0;
}

/* the bins: E(i) = (4 + i % 4) 2^(i / 4) / 4 ns, i >= 8 (4, 5, 6, 7, 8, 10, ...) */
static uint64_t edge(unsigned i)
{
	return i < 8 ? 0 : (uint64_t)(4 + i % 4) << (i / 4) >> 2;
}

static unsigned bin_of(uint64_t v)
{
	unsigned i = 8;
	while (i < 255 && edge(i + 1) <= v)
		i++;
	return v < edge(8) ? 7 : i;
}

static void histogram(FILE *f, const struct span_stat *x, unsigned def)
{
	const struct hist *h = &x->h;
	unsigned b0 = bin_of(h->min), b1 = bin_of(h->max), nb = b1 - b0 + 1;
	uint64_t peak = 1;
	for (unsigned i = b0; i <= b1; i++) {
		uint64_t n = hist_below(h, i == 255 ? UINT64_MAX : edge(i + 1)) - hist_below(h, edge(i));
		peak = n > peak ? n : peak;
	}
	double bw = (double)(HS_W - HS_M) / nb;
	char a[32], b[32];
	fprintf(f, "<svg class=\"hist\" width=\"%d\" height=\"%d\"><text x=\"%d\" y=\"12\">latency "
	           "histogram (count per duration)</text>\n<text x=\"2\" y=\"26\">%llu</text>"
	           "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#999\"/>\n", HS_W, HS_H + 16,
	        HS_M, (unsigned long long)peak, HS_M, HS_W, HS_H, HS_H);
	for (unsigned i = b0; i <= b1; i++) {
		uint64_t lo = edge(i), hi = i == 255 ? UINT64_MAX : edge(i + 1);
		uint64_t n = hist_below(h, hi) - hist_below(h, lo);
		double bh = (double)n / (double)peak * (HS_H - 24);
		fmt_duration(a, sizeof a, lo);
		fmt_duration(b, sizeof b, hi);
		fprintf(f, "<rect class=\"hb\" data-lo=\"%llu\" data-hi=\"%llu\" data-n=\"%llu\" "
		           "x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"><title>%s to "
		           "%s: %llu</title></rect>\n", (unsigned long long)lo, (unsigned long long)hi,
		        (unsigned long long)n, HS_M + (i - b0) * bw, HS_H - bh, bw > 2 ? bw - 1 : bw, bh,
		        hspans_color(def), a, b, (unsigned long long)n);
	}
	fmt_duration(a, sizeof a, edge(b0));
	fmt_duration(b, sizeof b, edge(b1 + 1));
	fprintf(f, "<text x=\"%d\" y=\"%d\">%s</text><text x=\"%d\" y=\"%d\" "
	           "text-anchor=\"end\">%s</text></svg>\n", HS_M, HS_H + 13, a, HS_W, HS_H + 13, b);
}

static void over_time(FILE *f, const struct hspans *hs, unsigned def)
{
	const struct hist *t = hs->tb[def];
	uint64_t top = 1;
	for (unsigned b = 0; t && b < HS_BUCKETS; b++)
		if (t[b].n) {
			uint64_t v = hist_quantile(&t[b], 0.99);
			top = v > top ? v : top;
		}
	char a[32], d[32];
	fmt_duration(a, sizeof a, top);
	fmt_duration(d, sizeof d, hs->t1 - hs->t0);
	fprintf(f, "<svg class=\"p99\" width=\"%d\" height=\"%d\"><text x=\"%d\" y=\"12\">p99 "
	           "(and p50, light) of the spans begun in each 1/%d of the trace</text>\n"
	           "<text x=\"2\" y=\"26\">%s</text><line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" "
	           "stroke=\"#999\"/>\n", HS_W, HS_H + 16, HS_M, HS_BUCKETS, a, HS_M, HS_W, HS_H,
	        HS_H);
	double bw = (double)(HS_W - HS_M) / HS_BUCKETS, k = (double)(HS_H - 24) / (double)top;
	for (int q = 0; q < 2; q++) {
		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%s\" "
		           "stroke-opacity=\"%s\" points=\"", hspans_color(def), q ? "2" : "1",
		        q ? "1" : "0.45");
		for (unsigned b = 0; t && b < HS_BUCKETS; b++)
			if (t[b].n)
				fprintf(f, "%.1f,%.1f ", HS_M + (b + 0.5) * bw,
				        HS_H - k * (double)hist_quantile(&t[b], q ? 0.99 : 0.5));
		fputs("\"/>\n", f);
	}
	for (unsigned b = 0; t && b < HS_BUCKETS; b++) {
		if (!t[b].n)
			continue;
		uint64_t p50 = hist_quantile(&t[b], 0.5), p99 = hist_quantile(&t[b], 0.99);
		fmt_duration(a, sizeof a, p99);
		fprintf(f, "<circle class=\"tp\" data-n=\"%llu\" data-p50=\"%llu\" data-p99=\"%llu\" "
		           "cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"><title>%llu spans, p99 %s"
		           "</title></circle>\n", (unsigned long long)t[b].n, (unsigned long long)p50,
		        (unsigned long long)p99, HS_M + (b + 0.5) * bw, HS_H - k * (double)p99,
		        hspans_color(def), (unsigned long long)t[b].n, a);
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\">0 s</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">"
	           "%s</text></svg>\n", HS_M, HS_H + 13, HS_W, HS_H + 13, d);
}

void hspans_report(struct hspans *hs, FILE *f)
{
	size_t n = spans_count(hs->sp);
	char v[6][32];

	fputs("<h2>Spans</h2>\n<div class=\"sub\">A bar per complete span on its thread's lane "
	      "above (nested spans above the span around them, keyed ones at the top of the lane of the thread that "
	      "began them); an incomplete span (no begin or no end, or cut by a loss) has no "
	      "duration and is only counted.</div>\n<table><tr><th>span</th><th>count</th>"
	      "<th>incomplete</th><th>mean</th><th>p50</th><th>p90</th><th>p99</th><th>max</th>"
	      "</tr>\n", f);
	for (size_t i = 0; i < n; i++) {
		const struct span_stat *x = spans_stat(hs->sp, i);
		const struct hist *h = &x->h;
		fmt_duration(v[0], sizeof v[0], h->n ? (uint64_t)(h->sum / (double)h->n) : 0);
		fmt_quantile(v[1], sizeof v[1], hist_quantile(h, 0.5)); /* (to the histogram's precision) */
		fmt_quantile(v[2], sizeof v[2], hist_quantile(h, 0.9));
		fmt_quantile(v[3], sizeof v[3], hist_quantile(h, 0.99));
		fmt_duration(v[4], sizeof v[4], h->max);
		fprintf(f, "<tr><td><i class=\"sw\" style=\"background:%s\"></i>", hspans_color((unsigned)i));
		html_text(f, x->name);
		fprintf(f, "</td><td class=\"n\">%llu</td><td class=\"n\">%llu</td>",
		        (unsigned long long)h->n, (unsigned long long)x->incomplete);
		for (int k = 0; k < 5; k++)
			fprintf(f, "<td class=\"n\">%s</td>", h->n ? v[k] : "-");
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
	for (size_t i = 0; i < n; i++) {
		const struct span_stat *x = spans_stat(hs->sp, i);
		fputs("<div class=\"span\" data-name=\"", f);
		html_text(f, x->name);
		fprintf(f, "\" data-count=\"%llu\" data-incomplete=\"%llu\" data-bars=\"%llu\"><h3>",
		        (unsigned long long)x->h.n, (unsigned long long)x->incomplete,
		        (unsigned long long)hs->bars[i]);
		html_text(f, x->name);
		fprintf(f, "%s</h3>\n", x->keyed ? " (keyed)" : "");
		if (x->h.n) {
			histogram(f, x, (unsigned)i);
			over_time(f, hs, (unsigned)i);
		} else {
			fputs("<p>No complete span.</p>\n", f);
		}
		fputs("</div>\n", f);
	}
}

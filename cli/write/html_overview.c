/*
 * html_overview.c -- for `export --format html` of a log too large to
 * draw event by event: the overview of the whole trace (event counts per
 * thread and time bucket, from the index `posixtrace view` builds, read
 * from its cache when view made one, else built here and not kept,
 * vindex.c) as an SVG heat strip with the lost-event gaps and
 * damaged stretches marked, and the choice of the window whose every
 * event the page draws: the one given (--from/--to), else the start of
 * the trace, each cut to the whole buckets that hold at most max events.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "write.h"

/* The window [*lo, *hi] (ns since the epoch) cut at the last whole
 * level-0 bucket before max events; 1 if cut. */
int html_window(const struct vindex *x, uint64_t *lo, uint64_t *hi, uint64_t max)
{
	uint64_t w = vindex_bucket_ns(x, 0), n = 0;

	if (*lo < x->t0)
		*lo = x->t0;
	if (*hi > x->t1)
		*hi = x->t1;
	if (*hi < *lo)
		return 0;
	uint64_t b0 = (*lo - x->t0) / w, b1 = (*hi - x->t0) / w;
	for (uint64_t b = b0; b <= b1 && b < x->nb; b++) {
		uint64_t c = 0;
		for (uint32_t ln = 0; ln < x->nlanes; ln++)
			for (uint32_t s = 0; s < x->nslots; s++)
				c += x->cnt[0][((size_t)ln * x->nb + b) * x->nslots + s];
		if (n + c > max) {
			/* the buckets before this one; in the first, as far as its
			 * end (the page then draws its first max events) */
			uint64_t end = x->t0 + b * w;
			*hi = b > b0 ? end - 1 : end + w - 1;
			return 1;
		}
		n += c;
	}
	return 0;
}

void html_overview(FILE *f, const struct tlog *l, const struct vindex *x, const unsigned *lane,
                   uint64_t lo, uint64_t hi, int lane_h, int label_w)
{
	unsigned k = 0;
	while (k + 1 < x->nlevels && (x->nb >> k) > 1000)
		k++;
	uint64_t nbk = x->nb >> k, w = vindex_bucket_ns(x, k);
	unsigned rows = (unsigned)(l->nth ? l->nth : 1), h = rows * (unsigned)lane_h;
	/* the row of each index lane: that of the same thread in the timeline */
	uint32_t *row = malloc((x->nlanes ? x->nlanes : 1) * sizeof *row);
	if (!row)
		return;
	for (uint32_t ln = 0; ln < x->nlanes; ln++) {
		/* (lanes are threads, in the same order: vindex.c, build) */
		row[ln] = ln < l->nth && l->th[ln].pid == x->lanes[ln].pid &&
		          l->th[ln].tid == x->lanes[ln].tid ? lane[ln] : UINT32_MAX;
	}
	uint64_t max = 1;
	for (size_t c = 0; c < (size_t)x->nlanes * nbk * x->nslots; c += x->nslots) {
		uint64_t s = 0;
		for (uint32_t sl = 0; sl < x->nslots; sl++)
			s += x->cnt[k][c + sl];
		max = s > max ? s : max;
	}
	char bw[32];
	fmt_duration(bw, sizeof bw, w);
	fprintf(f, "<h2>Overview of the whole trace</h2>\n<div class=\"sub\">Events per thread and "
	           "%s, darker where there are more; red: lost-event gaps and damaged stretches; "
	           "the box: the window drawn event by event below.</div>\n"
	           "<div class=\"tl\" id=\"overview\"><div class=\"labels\"><svg width=\"%d\" "
	           "height=\"%u\">\n", bw, label_w, h);
	for (size_t i = 0; i < l->nth; i++) { /* as show names the thread: PID/TID NAME */
		char who[48], name[40];
		tlog_thread_id(l, (uint32_t)i, l->th[i].last, who, sizeof who, name, sizeof name, NULL);
		fprintf(f, "<text x=\"8\" y=\"%u\">%s ", lane[i] * (unsigned)lane_h + 15, who);
		html_text(f, name);
		fputs("</text>\n", f);
	}
	fprintf(f, "</svg></div><div class=\"plotcol\"><svg width=\"100%%\" height=\"%u\" "
	           "viewBox=\"0 0 %llu %u\" preserveAspectRatio=\"none\">\n", h,
	        (unsigned long long)nbk, h);
	for (uint32_t ln = 0; ln < x->nlanes; ln++) {
		if (row[ln] == UINT32_MAX)
			continue;
		const uint32_t *c = x->cnt[k] + (size_t)ln * nbk * x->nslots;
		for (uint64_t bk = 0; bk < nbk; bk++) {
			uint64_t s = 0;
			for (uint32_t sl = 0; sl < x->nslots; sl++)
				s += c[bk * x->nslots + sl];
			if (s)
				fprintf(f, "<rect x=\"%llu\" y=\"%u\" width=\"1\" height=\"%d\" fill=\"#1f77b4\" "
				           "fill-opacity=\"%.2f\"/>\n", (unsigned long long)bk,
				        row[ln] * (unsigned)lane_h + 2, lane_h - 4,
				        0.15 + 0.85 * log1p((double)s) / log1p((double)max));
		}
	}
	for (uint32_t i = 0; i < x->nmarks; i++) {
		const struct vmark *m = &x->marks[i];
		if (m->id != POSIX_TRACE_ERROR && m->id != POSIX_TRACE_OVERFLOW)
			continue;
		fprintf(f, "<rect x=\"%.3f\" y=\"%u\" width=\"%.3f\" height=\"%d\" fill=\"#e00000\"/>\n",
		        (double)(m->ts - x->t0) / (double)w, row[m->lane] == UINT32_MAX ? 0 :
		        row[m->lane] * (unsigned)lane_h, nbk / 500.0 + 0.5, lane_h);
	}
	fprintf(f, "<rect x=\"%.3f\" y=\"0\" width=\"%.3f\" height=\"%u\" fill=\"none\" stroke=\"#000\" "
	           "stroke-width=\"2\" vector-effect=\"non-scaling-stroke\"/>\n",
	        (double)(lo - x->t0) / (double)w,
	        (double)(hi - lo + 1) / (double)w < 0.3 ? 0.3 : (double)(hi - lo + 1) / (double)w, h);
	fputs("</svg></div></div>\n<h2>Timeline</h2>\n", f);
	free(row);
}

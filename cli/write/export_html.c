/*
 * export_html.c -- the log as one self-contained HTML page: an inline SVG
 * timeline with a lane per thread (grouped by process), a marker per
 * event colored by type with its details in a <title> (tooltip) and in a
 * panel on hover, zoom and pan (html_assets.c), a clickable legend, and
 * summary tables of event types and of processes and threads.  Nothing
 * is loaded from the network.
 *
 * A page with more than HTML_MAX_EVENTS markers would not stay usable in
 * a browser: a larger log (or one exported with --from/--to) gets the
 * overview of the whole trace (html_overview.c) and every event of a
 * window: the one asked for, else the start of the trace, as much of it
 * as holds at most HTML_MAX_EVENTS events; the page says which (the
 * tables count every event).
 */
#include <stdlib.h>
#include <string.h>
#include "write.h"

#define HTML_MAX_EVENTS 200000
#define LANE_H 22
#define LABEL_W 240

extern const char html_css[], html_js[];

static const char *const palette[] = {
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
	"#e377c2", "#17becf", "#bcbd22", "#393b79", "#ad494a", "#637939",
};

static const char *color_of(unsigned id, const int *order)
{
	if (id == POSIX_TRACE_OVERFLOW || id == POSIX_TRACE_ERROR)
		return "#e00000";
	if (id < PT_SYS_IDS && id != POSIX_TRACE_UNNAMED_USEREVENT)
		return "#8a8a8a";
	return palette[order[id] % (int)(sizeof palette / sizeof palette[0])];
}

static const char *program(struct symz *z, int32_t pid, uint64_t ts)
{
	const char *exe = z && pid ? symz_exe(z, pid, ts) : NULL;
	const char *b = exe ? strrchr(exe, '/') : NULL;
	return pid == 0 ? "(reader)" : b ? b + 1 : exe ? exe : "";
}

static void head(FILE *f, const struct tlog *l, const int *order, uint64_t span, const char *note)
{
	char name[TRACE_NAME_MAX] = "", dur[32], tmp[32];
	unsigned types = 0;

	posix_trace_attr_getname(&l->attr, name);
	fmt_duration(dur, sizeof dur, span);
	for (unsigned i = 0; i < PT_NIDS; i++)
		types += l->count[i] > 0;
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width\">\n<title>posixtrace: ", f);
	html_text(f, name[0] ? name : l->path);
	fprintf(f, "</title>\n<style>\n%s", html_css);
	for (unsigned i = 0; i < PT_NIDS; i++)
		if (l->count[i])
			fprintf(f, "#plot line.t%u{stroke:%s}.sw.t%u{background:%s}\n", i,
			        color_of(i, order), i, color_of(i, order));
	fputs("</style></head>\n<body>\n<h1>posixtrace timeline: ", f);
	html_text(f, name[0] ? name : "(unnamed trace)");
	fputs("</h1>\n<div class=\"sub\">", f);
	html_text(f, l->path);
	char lost[240];
	tlog_loss_text(l, lost, sizeof lost);
	unsigned procs, threads; /* the program's, as info and record count them */
	tlog_program_counts(l, 0, &procs, &threads);
	fprintf(f, " &mdash; %llu events of %u types, %u process%s, %u thread%s, over %s; ",
	        (unsigned long long)l->nev, types, procs, procs == 1 ? "" : "es", threads,
	        threads == 1 ? "" : "s", dur);
	fputs(tlog_lost_any(l) ? "<b style=\"color:#c00\">" : "", f);
	html_text(f, lost);
	fputs(tlog_lost_any(l) ? "</b></div>\n" : "</div>\n", f);
	if (note)
		fputs(note, f);
	fputs("<div class=\"bar\"><button id=\"zin\">+ zoom in</button>"
	      "<button id=\"zout\">&minus; zoom out</button><button id=\"left\">&#9664;</button>"
	      "<button id=\"right\">&#9654;</button><button id=\"reset\">reset</button>"
	      "<span id=\"range\"></span></div>\n<div class=\"legend\">", f);
	for (unsigned i = 0; i < PT_NIDS; i++)
		if (l->count[i]) {
			fprintf(f, "<span data-t=\"t%u\" title=\"click to hide or show\">"
			           "<i class=\"sw t%u\"></i>", i, i);
			html_text(f, tlog_name(l, i, tmp, sizeof tmp));
			fprintf(f, " (%llu)</span>", (unsigned long long)l->count[i]);
		}
	fputs("</div>\n", f);
}

/* Lane of each thread: by process, in the order of the process tree
 * (a child's lanes below its parent's), then by index. */
static unsigned *lanes(const struct tlog *l)
{
	unsigned *lane = calloc(l->nth + 1, sizeof *lane), k = 0, *depth;
	size_t *order;
	if (!lane || tlog_tree(l, &order, &depth)) {
		free(lane);
		return NULL;
	}
	for (size_t q = 0; q < l->npr; q++) {
		size_t p = order[q];
		for (unsigned idx = 1; idx <= l->pr[p].nthreads; idx++)
			TLOG_PROC_THREADS(l, p, x, i)
				if (l->th[i].idx == idx)
					lane[i] = k++;
	}
	free(order);
	free(depth);
	return lane;
}

/* Every event in [t0, hi], at most HTML_MAX_EVENTS; off: microseconds
 * from time 0 (rel0) to t0, as the axis labels them.  With spans (hs):
 * the whole log is read, for the spans' figures, and each complete span
 * in the window is a bar (html_spans.c). */
static int timeline(FILE *f, struct tlog *l, struct symz *z, const unsigned *lane,
                     uint64_t t0, uint64_t hi, double span_us, double pad, double off,
                     uint64_t rel0, struct spans *sp, struct hspans *hs)
{
	unsigned h = (unsigned)(l->nth ? l->nth : 1) * LANE_H;
	struct progress p;
	char tmp[32], data[512], t[40];

	fprintf(f, "<div class=\"tl\"><div class=\"labels\"><svg width=\"%d\" height=\"%u\">\n",
	        LABEL_W, h + 24);
	for (size_t i = 0; i < l->nth; i++) {
		const struct tthread *th = &l->th[i];
		fprintf(f, "<text x=\"8\" y=\"%u\">", 24 + lane[i] * LANE_H + 15);
		if (th->pid == 0 && th->tid == 0)
			fputs("(synthesized by the reader)", f);
		else {
			char who[64];
			html_text(f, program(z, th->pid, th->last));
			/* "PID/TID NAME" when the trace says who the thread was */
			thrmap_label(l->thrs, who, sizeof who, th->pid, th->tid, th->last, th->idx);
			fputs(" ", f);
			html_text(f, who);
		}
		fputs("</text>\n", f);
	}
	fprintf(f, "</svg></div>\n<div class=\"plotcol\"><svg id=\"axis\" height=\"24\" "
	           "width=\"100%%\"></svg>\n<svg id=\"plot\" width=\"100%%\" height=\"%u\" "
	           "viewBox=\"0 0 %.3f %u\" preserveAspectRatio=\"none\" data-span=\"%.3f\" "
	           "data-pad=\"%.3f\" data-off=\"%.3f\" data-height=\"%u\">\n", h, span_us, h, span_us, pad,
	        off, h);
	for (size_t i = 0; i < l->nth; i++)
		fprintf(f, "<rect class=\"lane%s\" x=\"0\" y=\"%u\" width=\"%.3f\" height=\"%d\"/>\n",
		        lane[i] % 2 ? " odd" : "", lane[i] * LANE_H, span_us, LANE_H);
	uint64_t n = l->nev < HTML_MAX_EVENTS ? l->nev : HTML_MAX_EVENTS, past = 0;
	size_t nlanes = l->nth;
	struct tev ev;
	const struct tev *e = &ev;
	int r = 0;
	if (!hs && t0 > l->first && tlog_seek(l, t0)) /* through the block index */
		return 1;
	struct hlane g = { lane, LANE_H, t0, hi, pad };
	progress_begin(&p, "export html", hs ? l->nev : n);
	/* (the log is in time order per block: past the window for 4096
	 * events in a row, it is over) */
	for (uint64_t i = 0; (hs || (i < n && past < 4096)) && (r = tlog_next(l, &ev)) > 0;) {
		if (hs) {
			struct span_mark m;
			if (spans_event(sp, l, e, &m) || hspans_event(hs, f, l, &m, &g)) {
				err_msg("out of memory");
				r = -1;
				break;
			}
			if ((e->n & 1023) == 0)
				progress_update(&p, e->n);
		}
		if (i >= n || e->ts < t0 || e->ts > hi) {
			past += e->ts > hi;
			continue;
		}
		past = 0;
		i++;
		const struct tthread *th = &l->th[e->thread];
		double x = pad + (double)(int64_t)(e->ts - t0) / 1e3;
		if (e->thread >= nlanes)
			continue; /* (a thread the totals did not know: no lane) */
		unsigned y = lane[e->thread] * LANE_H;
		fprintf(f, "<line class=\"t%u\" x1=\"%.3f\" x2=\"%.3f\" y1=\"%u\" y2=\"%u\" "
		           "vector-effect=\"non-scaling-stroke\"><title>", e->id, x, x, y + 4,
		        y + LANE_H - 4);
		html_text(f, tlog_name(l, e->id, tmp, sizeof tmp));
		fmt_since(t, sizeof t, e->ts, rel0);
		{
			char who[48], name[40];
			tlog_thread_id(l, e->thread, e->ts, who, sizeof who, name, sizeof name, NULL);
			fprintf(f, "\n%s s  %s%s", t, who, name[0] ? " " : "");
			html_text(f, name);
			fputc('\n', f);
		}
		fmt_event_data(data, sizeof data, l, e);
		html_text(f, data);
		const char *s = z ? symz_lookup(z, th->pid, e->ts, e->addr) : "";
		if (s[0]) {
			fputs("\n@ ", f);
			html_text(f, s);
		}
		fputs("</title></line>\n", f);
		if (!hs)
			progress_update(&p, i);
	}
	progress_end(&p);
	if (hs)
		spans_end(sp);
	fputs("</svg></div></div>\n<div id=\"detail\">Point at an event to see it here. "
	      "Mouse wheel: zoom; drag: pan; click a type above to hide or show it.</div>\n", f);
	return r < 0;
}

/* (first and last since time 0, t0) */
static void tables(FILE *f, const struct tlog *l, struct symz *z, uint64_t t0, uint64_t span)
{
	char tmp[32], a[40], b[40];
	const uint64_t *first = l->tfirst, *last = l->tlast;

	fputs("<h2>Event types</h2>\n<table><tr><th>type</th><th>id</th><th>count</th>"
	      "<th>first (s)</th><th>last (s)</th><th>rate</th></tr>\n", f);
	for (unsigned i = 0; i < PT_NIDS; i++) {
		if (!l->count[i])
			continue;
		fmt_since(a, sizeof a, first[i], t0);
		fmt_since(b, sizeof b, last[i], t0);
		fprintf(f, "<tr><td><i class=\"sw t%u\"></i>", i);
		html_text(f, tlog_name(l, i, tmp, sizeof tmp));
		fprintf(f, "</td><td class=\"n\">%u</td><td class=\"n\">%llu</td><td class=\"n\">%s</td>"
		           "<td class=\"n\">%s</td><td class=\"n\">", i,
		        (unsigned long long)l->count[i], a, b);
		if (span)
			fprintf(f, "%.1f/s", (double)l->count[i] * 1e9 / (double)span);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n<h2>Processes and threads</h2>\n<table><tr><th>pid</th><th>ppid</th>"
	      "<th>command line (else program)</th><th>thread</th><th>pthread_t</th>"
	      "<th>events</th></tr>\n", f);
	size_t *order;
	unsigned *depth;
	tlog_tree(l, &order, &depth); /* a child below its parent, indented (else pid order) */
	for (size_t q = 0; q < l->npr; q++) {
		size_t p = order ? order[q] : q;
		const struct pt_ext_proc *id = tlog_identity(l, &l->pr[p]);
		fprintf(f, "<tr class=\"proc\" data-pid=\"%d\" data-ppid=\"%d\"><td class=\"n\"><b>%d</b>"
		           "</td><td class=\"n\">", (int)l->pr[p].pid, id ? (int)id->ppid : 0,
		        (int)l->pr[p].pid);
		if (id)
			fprintf(f, "%d", (int)id->ppid);
		fprintf(f, "</td><td style=\"padding-left:%upx\"><b>",
		        (order ? (depth[q] < 16 ? depth[q] : 16) : 0) * 16 + 4);
		html_text(f, id && id->cmdline[0] ? id->cmdline
		                                    : program(z, l->pr[p].pid, l->pr[p].last));
		if (id && id->cut)
			fputs("...", f);
		fprintf(f, "</b></td><td>%u thread%s</td><td></td><td class=\"n\"><b>%llu</b></td></tr>\n",
		        l->pr[p].nthreads, l->pr[p].nthreads == 1 ? "" : "s",
		        (unsigned long long)l->pr[p].count);
		TLOG_PROC_THREADS(l, p, x, i) {
			/* the thread as show names it: PID/TID and name */
			char who[48], name[40];
			tlog_thread_id(l, (uint32_t)i, l->th[i].last, who, sizeof who, name, sizeof name,
			               NULL);
			fprintf(f, "<tr><td></td><td></td><td></td><td>%s ", who);
			html_text(f, name);
			fprintf(f, "</td><td>0x%llx</td><td class=\"n\">%llu</td></tr>\n",
			        (unsigned long long)l->th[i].tid, (unsigned long long)l->th[i].count);
		}
	}
	free(order);
	free(depth);
	fputs("</table>\n", f);
}

int export_html(struct tlog *l, struct symz *z, struct spans *sp, FILE *f, uint64_t rel0,
                uint64_t from, uint64_t to)
{
	int order[PT_NIDS], k = 0;
	uint64_t t0 = l->first, t1 = l->nev ? l->last : t0;
	uint64_t lo = from > t0 ? from : t0, hi = to < t1 ? to : t1;
	int windowed = l->nev > HTML_MAX_EVENTS || from > t0 || to < t1;
	struct vindex x;
	char note[1200], a[40], b[40], dur[32];

	if (windowed && lo > hi) {
		fmt_since(a, sizeof a, lo, rel0);
		fmt_since(b, sizeof b, hi, rel0);
		err_msg("%s: --from/--to: no time of the trace is in that window (%s s to %s s); the "
		        "trace lasts %s s", l->path, a, b, (fmt_rel(dur, sizeof dur, t1 - t0), dur));
		return 1;
	}
	for (unsigned i = 0; i < PT_NIDS; i++)
		order[i] = l->count[i] && (i >= PT_SYS_IDS || i == POSIX_TRACE_UNNAMED_USEREVENT) ? k++ : 0;
	unsigned *lane = lanes(l);
	if (!lane) {
		err_msg("out of memory");
		return 1;
	}
	note[0] = 0;
	if (windowed) {
		if (vindex_get(&x, l, VIX_CACHE_READ, NULL)) { /* (view's, if there is one) */
			free(lane);
			return 1;
		}
		int cut = html_window(&x, &lo, &hi, HTML_MAX_EVENTS);
		fmt_since(a, sizeof a, lo, rel0);
		fmt_since(b, sizeof b, hi, rel0);
		snprintf(note, sizeof note,
		         "<p><b>The timeline shows every event from %s s to %s s</b> (%s%s), of "
		         "%llu in the trace: a page holds at most %d events. The overview shows the "
		         "whole trace; 'export --from/--to' chooses another window, 'posixtrace view' "
		         "shows any part, 'posixtrace show' lists every event.</p>\n", a, b,
		         from > t0 || to < t1 ? "the window asked for" : "the start of the trace",
		         cut ? ", as much of it as fits" : "", (unsigned long long)l->nev,
		         HTML_MAX_EVENTS);
	}
	double raw = hi > lo ? (double)(hi - lo) / 1e3 : 1.0;
	double pad = raw * 0.003; /* room for the first and last markers */
	struct hspans *hs = NULL;
	if (spans_any(sp, l) && !(hs = hspans_new(sp, l))) {
		err_msg("out of memory");
		free(lane);
		if (windowed)
			vindex_free(&x);
		return 1;
	}
	head(f, l, order, t1 - t0, note[0] ? note : NULL);
	if (windowed) {
		html_overview(f, l, &x, lane, lo, hi, LANE_H, LABEL_W);
		vindex_free(&x);
	}
	if (timeline(f, l, z, lane, lo, hi, raw + 2 * pad, pad, (double)(int64_t)(lo - rel0) / 1e3,
	             rel0, sp, hs)) {
		hspans_free(hs);
		free(lane);
		return 1;
	}
	if (hs)
		hspans_report(hs, f);
	hspans_free(hs);
	tables(f, l, z, rel0, t1 - t0);
	fprintf(f, "<p class=\"sub\">Written by posixtrace %s from ", PT_CLI_VERSION);
	html_text(f, l->path);
	fprintf(f, ".</p>\n<script>\n%s</script>\n</body></html>\n", html_js);
	free(lane);
	return 0;
}

/*
 * top_report.c -- a screen of `posixtrace top` (cli/cmd/top.c gathers
 * its figures from the live stream): the events per second of each type
 * over the period just ended and since the start, and per span the
 * count, p50, p99 and max of the period and of the whole, and the
 * incomplete ones.  On a terminal the screen is cleared first.
 */
#include <stdio.h>
#include "write.h"

static void dur3(char *buf, size_t cap, const struct hist *h, double q)
{
	if (!h->n)
		snprintf(buf, cap, "-");
	else
		(q < 0 ? fmt_duration : fmt_quantile)(buf, cap, q < 0 ? h->max : hist_quantile(h, q));
}

void top_report(const struct top *t, pid_t pid, const char *what, uint64_t now)
{
	char el[32], a[6][24], tmp[32], lost[240];
	double per = (double)t->period_ns / 1e9, since = (double)(now - t->start_ns) / 1e9;
	FILE *f = stdout;

	if (t->tty)
		fputs("\033[H\033[2J", f);
	fmt_duration(el, sizeof el, now - t->start_ns);
	tlog_loss_text(&t->l, lost, sizeof lost);
	fprintf(f, "posixtrace top: %s %d, %s; %llu events; %s%s\n\n", what, (int)pid, el,
	        (unsigned long long)t->l.nev, lost, t->tty ? "   (q: quit)" : "");
	fprintf(f, "%-30s %12s %14s\n", "event type", "last /s", "since start /s");
	for (unsigned i = 0; i < PT_NIDS; i++) {
		if (!t->l.count[i])
			continue;
		fprintf(f, "%-30.30s %12.1f %14.1f\n", tlog_name(&t->l, i, tmp, sizeof tmp),
		        (double)t->wcount[i] / per, since > 0 ? (double)t->l.count[i] / since : 0.0);
	}
	size_t n = spans_count(t->sp);
	if (n) {
		fprintf(f, "\n%-16s %8s %10s %10s %10s | %8s %10s %10s %10s %10s\n", "span", "last",
		        "p50", "p99", "max", "all", "p50", "p99", "max", "incomplete");
		for (size_t i = 0; i < n; i++) {
			const struct span_stat *x = spans_stat(t->sp, i);
			dur3(a[0], sizeof a[0], &t->win[i], 0.5);
			dur3(a[1], sizeof a[1], &t->win[i], 0.99);
			dur3(a[2], sizeof a[2], &t->win[i], -1);
			dur3(a[3], sizeof a[3], &x->h, 0.5);
			dur3(a[4], sizeof a[4], &x->h, 0.99);
			dur3(a[5], sizeof a[5], &x->h, -1);
			fprintf(f, "%-16.16s %8llu %10s %10s %10s | %8llu %10s %10s %10s %10llu\n",
			        x->name, (unsigned long long)t->win[i].n, a[0], a[1], a[2],
			        (unsigned long long)x->h.n, a[3], a[4], a[5],
			        (unsigned long long)x->incomplete);
		}
	}
	if (!t->tty)
		fputc('\n', f);
	fflush(f);
}

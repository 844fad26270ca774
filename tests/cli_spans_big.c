/*
 * cli_spans_big.c -- spans (cli/enrich/spans.c) over a log of 10 M events
 * (1 M in a sanitized build, which compares no peak RSS) (tests/biglog.h)
 * through `stats --span`: the counts equal those of a
 * plain simulation of the pairing rule, and the peak RSS is that of a log
 * of 200 000 events (within 10%); and through `export -f html --span`: the
 * page's figures are the same, and its peak RSS does not grow with the log
 * beyond the view index's bound.  (The spans against a witness:
 * cli_spans.c.)
 */
#include <inttypes.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "spans_util.h"
#include "biglog.h"

/* The pairing rule for --span alpha,beta over the biglog, simply: per
 * thread a stack of (start, cut); a gap cuts every open span. */
struct sim { uint64_t count, incomplete, max; };
static void simulate(uint64_t n, struct sim *s)
{
	static uint64_t start[8][64];
	static int cut[8][64];
	int depth[8] = { 0 };
	memset(s, 0, sizeof *s);
	for (uint64_t i = 0; i < n; i++) {
		if (i && i % BIGLOG_GAP == 0)
			for (int t = 0; t < 8; t++)
				for (int k = 0; k < depth[t]; k++)
					cut[t][k] = 1;
		int t = (int)(biglog_pid(i) - 4000) * 4 + (int)((biglog_thread(i) - 0x7f0000001000ull) /
		                                                0x1000);
		uint64_t ts = BIGLOG_T0 + i * 200;
		if (biglog_id(i) == 17) {
			REQUIRE(depth[t] < 64);
			start[t][depth[t]] = ts;
			cut[t][depth[t]++] = 0;
		} else if (biglog_id(i) == 18) {
			if (!depth[t]) {
				s->incomplete++;
			} else if (cut[t][--depth[t]]) {
				s->incomplete++;
			} else {
				s->count++;
				uint64_t d = ts - start[t][depth[t]];
				s->max = d > s->max ? d : s->max;
			}
		}
	}
	for (int t = 0; t < 8; t++)
		s->incomplete += (uint64_t)depth[t];
}

static long big_stats(uint64_t n, long *html_rss)
{
	char log[300], out[300], page[300];
	long rss = 0;
	double secs = 0;
	struct sim s;
	snprintf(log, sizeof log, "%s/big.ptlog", cli_dir);
	snprintf(out, sizeof out, "%s/big.json", cli_dir);
	CHECK_RC(biglog_write(log, n, 1), 0);
	CHECK_EQ(biglog_run(CLI("stats", "--json", log, "--span", "alpha,beta,ab"), out, NULL, &rss,
	                    &secs), 0);
	char *js = cli_slurp(out);
	simulate(n, &s);
	CHECK_EQ(span_num(js, "ab", "\"count\":"), (long long)s.count);
	CHECK_EQ(span_num(js, "ab", "\"incomplete\":"), (long long)s.incomplete);
	CHECK_EQ(span_num(js, "ab", "\"max_ns\":"), (long long)s.max);
	printf("stats --span, %" PRIu64 " events: %.2f s (%.1f M events/s, machine shared and "
	       "loaded), peak RSS %ld KiB; %" PRIu64 " spans, %" PRIu64 " incomplete\n", n, secs,
	       (double)n / secs / 1e6, rss, s.count, s.incomplete);
	free(js);
	/* the HTML page of it: its span figures are the same (a log this
	 * large gets a window, and the whole log is read for the spans) */
	snprintf(page, sizeof page, "%s/big.html", cli_dir);
	CHECK_EQ(biglog_run(CLI("export", "-f", "html", "--force", log, "-o", page, "--span",
	                        "alpha,beta,ab"), NULL, NULL, html_rss, &secs), 0);
	char *h = cli_slurp(page), want[200];
	snprintf(want, sizeof want, "class=\"span\" data-name=\"ab\" data-count=\"%" PRIu64
	         "\" data-incomplete=\"%" PRIu64 "\"", s.count, s.incomplete);
	CHECK(cli_contains(h, want));
	printf("export -f html --span, %" PRIu64 " events: %.2f s, peak RSS %ld KiB\n", n, secs,
	       *html_rss);
	free(h);
	unlink(page);
	unlink(log);
	return rss;
}

int main(void)
{
	T_BEGIN(600);
	cli_setup();
	long hsmall = 0, hbig = 0;
	long small = big_stats(200000, &hsmall);
	/* (a sanitized build compares no peak RSS, what the 10 M are for:
	 * 1 M for the same counts, its page a window as well) */
	long big = big_stats(getenv("PT_SPANS_EVENTS") ? strtoull(getenv("PT_SPANS_EVENTS"), NULL, 10)
	                     : PT_TEST_SANFLAGS[0] ? 1000000 : 10000000, &hbig);
	if (PT_TEST_SANFLAGS[0]) { /* (a sanitizer's own memory, its quarantine, grows) */
		printf("note: built with %s: peak RSS not compared\n", PT_TEST_SANFLAGS);
		T_END();
	}
	CHECK(big * 10 <= small * 11);
	/* (the page's window and its index do not grow with the log: the
	 * index is at most ~32 MiB; the rest is bounded as for stats) */
	CHECK(hbig <= hsmall + 40 * 1024);
	if (hbig > hsmall + 40 * 1024)
		fprintf(stderr, "export html: peak RSS %ld KiB for the large log, %ld KiB for 200 000 "
		        "events\n", hbig, hsmall);
	T_END();
}

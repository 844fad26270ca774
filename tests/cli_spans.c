/*
 * cli_spans.c -- spans (cli/enrich/spans.c) against an independent witness: this
 * program, run as `cli_spans witness MODE FILE` under `posixtrace record`,
 * times its own spans with CLOCK_MONOTONIC (each event bracketed by two
 * clock reads) and writes its own figures to FILE.
 *
 *   timed   spans of 100 us to 100 ms: "op" with "inner" nested in it on
 *           the main thread, "hand" begun on one thread and ended on
 *           another (keyed), "xproc" begun in this process and ended in a
 *           forked child (keyed); 40 of each.  Each span's duration is
 *           known to lie in a bracket [lo, hi] (span_witness.h: clock
 *           reads around each event, the stream on CLOCK_MONOTONIC), so
 *           the value of rank r among the true durations lies between
 *           the values of rank r among the lo's and among the hi's,
 *           whatever the load.  Quantiles by one rule: the value of rank
 *           ceil(q n) of the n sorted durations; hist.c reports the middle
 *           of its bucket, at most 1/256 of the value away from it (its
 *           bucket is at most 1/128 of its values wide) and never outside
 *           [min, max].  So each stats --json quantile must lie in
 *           [L - L/256, H + H/256] for the witness's bracket [L, H] of that
 *           rank, and max_ns in [L, H] of the longest, exactly.
 *   killed  5 complete spans, then 3 nested spans left open, an end with
 *           no begin, 2 keyed spans left open, a thread that ends with a
 *           span open, a later thread (given the same pthread_t by the C
 *           library, most likely) that ends a span of that name, and
 *           SIGKILL: every one is incomplete.
 *   loss    ovA and ovB overlapping (not nested) on one thread, 10 spans,
 *           then 3 nested and 1 keyed span open across a flood
 *           that overflows a small stream (for certain: the recorder is
 *           stopped for part of it), then closed, then 10 more: the
 *           4 cut spans are incomplete, the 20 others complete.
 *
 * Each log is also exported to Perfetto (compressed, inflated as
 * trace_processor does, and plain: the same packets) and decoded by protoc
 * against Perfetto's schema: per span name the slice begins and ends,
 * the incomplete ones, the async ones, nesting and the longest slice
 * (exactly stats' max) are checked (pf_slices).
 *
 * Bounded memory over a log of 10 M events: cli_spans_big.c.
 */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "pf_util.h"
#include "span_witness.h"
#include "spans_util.h"

#define N 40

/* duration k of 40: 100 us to 100 ms, evenly on a log scale */
static uint64_t dur(unsigned k)
{
	double v = 100000.0;
	for (unsigned i = 0; i < k % N; i++)
		v *= 1.19378; /* 1000^(1/39) */
	return (uint64_t)v;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* the rule: the value of rank ceil(q n), 1-based, of the sorted values */
static uint64_t quantile(const uint64_t *sorted, size_t n, double q)
{
	size_t r = (size_t)(q * (double)n);
	if ((double)r < q * (double)n)
		r++;
	return sorted[(r ? r : 1) - 1];
}

/* A span name's figures: its count, then per quantile (p50, p90, p99,
 * p999, max) the value of that rank among the lower ends of the
 * durations' brackets and among the upper ends. */
static void report(FILE *f, const char *name, uint64_t *lo, uint64_t *hi, size_t n)
{
	static const double qs[5] = { 0.5, 0.9, 0.99, 0.999, 1 };
	qsort(lo, n, sizeof *lo, cmp_u64);
	qsort(hi, n, sizeof *hi, cmp_u64);
	fprintf(f, "%s %zu", name, n);
	for (int i = 0; i < 5; i++)
		fprintf(f, " %" PRIu64 " %" PRIu64, quantile(lo, n, qs[i]), quantile(hi, n, qs[i]));
	fprintf(f, "\n");
}

/* ------------------------------------------------ the witness: timed */
static uint64_t op_lo[N], op_hi[N], inner_lo[N], inner_hi[N];

/* A keyed span, begun on one side and ended on the other (a thread, or a
 * forked child): the begin side sends the key, the end side sleeps its
 * duration, records the end and sends its bracket back. */
struct keyed { const char *begin, *end; uint64_t key0; unsigned mul, add; int req[2], ack[2];
               uint64_t lo[N], hi[N]; };
static struct keyed hand = { "hand/async-begin", "hand/async-end", 1000, 7, 3, { 0 }, { 0 }, { 0 },
                             { 0 } };
static struct keyed xproc = { "xproc/async-begin", "xproc/async-end", 5000, 11, 5, { 0 }, { 0 },
                              { 0 }, { 0 } };

static void *keyed_begin(void *arg)
{
	struct keyed *k = arg;
	trace_event_id_t b = tid_of(k->begin);
	for (uint64_t i = 0; i < N; i++) {
		uint64_t key = k->key0 + i;
		struct br t1, t0 = ev(b, &key, sizeof key);
		REQUIRE(write(k->req[1], &key, sizeof key) == sizeof key);
		REQUIRE(read(k->ack[0], &t1, sizeof t1) == sizeof t1);
		span_br(t0, t1, &k->lo[i], &k->hi[i]);
	}
	return NULL;
}

static void *keyed_end(void *arg)
{
	struct keyed *k = arg;
	trace_event_id_t e = tid_of(k->end);
	for (unsigned i = 0; i < N; i++) {
		uint64_t key;
		REQUIRE(read(k->req[0], &key, sizeof key) == sizeof key);
		sleep_ns(dur(i * k->mul + k->add));
		struct br t1 = ev(e, &key, sizeof key);
		REQUIRE(write(k->ack[1], &t1, sizeof t1) == sizeof t1);
	}
	return NULL;
}

static int witness_timed(const char *out)
{
	REQUIRE(pipe(hand.req) == 0 && pipe(hand.ack) == 0 && pipe(xproc.req) == 0 &&
	        pipe(xproc.ack) == 0);
	pid_t child = fork(); /* before any thread */
	REQUIRE(child >= 0);
	if (child == 0) {
		keyed_end(&xproc);
		_exit(0);
	}
	trace_event_id_t ob = tid_of("op/begin"), oe = tid_of("op/end");
	trace_event_id_t ib = tid_of("inner/begin"), ie = tid_of("inner/end");
	pthread_t t[3];
	REQUIRE(pthread_create(&t[0], NULL, keyed_begin, &hand) == 0);
	REQUIRE(pthread_create(&t[1], NULL, keyed_end, &hand) == 0);
	REQUIRE(pthread_create(&t[2], NULL, keyed_begin, &xproc) == 0);
	for (unsigned k = 0; k < N; k++) {
		struct br a = ev(ob, NULL, 0);
		sleep_ns(dur(k * 13) / 2);
		struct br b = ev(ib, NULL, 0);
		sleep_ns(dur(k * 17 + 1) / 2);
		struct br c = ev(ie, NULL, 0);
		struct br d = ev(oe, NULL, 0);
		span_br(a, d, &op_lo[k], &op_hi[k]);
		span_br(b, c, &inner_lo[k], &inner_hi[k]);
	}
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	int st;
	REQUIRE(waitpid(child, &st, 0) == child && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	FILE *f = fopen(out, "w");
	REQUIRE(f != NULL);
	report(f, "op", op_lo, op_hi, N);
	report(f, "inner", inner_lo, inner_hi, N);
	report(f, "hand", hand.lo, hand.hi, N);
	report(f, "xproc", xproc.lo, xproc.hi, N);
	REQUIRE(fclose(f) == 0);
	return 0;
}

/* ------------------------------------------------ the witness: killed */
static pthread_t first_self, second_self;

static void *open_and_end(void *arg)
{
	(void)arg;
	first_self = pthread_self();
	posix_trace_event(tid_of("held/begin"), NULL, 0);
	return NULL; /* the thread ends with its span open */
}

/* a later thread, likely given the same pthread_t: its end is not the
 * dead thread's begin's */
static void *end_other(void *arg)
{
	(void)arg;
	second_self = pthread_self();
	posix_trace_event(tid_of("held/end"), NULL, 0);
	return NULL;
}

static int witness_killed(const char *out)
{
	trace_event_id_t okb = tid_of("ok/begin"), oke = tid_of("ok/end");
	trace_event_id_t hb = tid_of("held/begin"), lone = tid_of("lone/end");
	trace_event_id_t pb = tid_of("pending/async-begin");
	for (int i = 0; i < 5; i++) {
		posix_trace_event(okb, NULL, 0);
		sleep_ns(100000);
		posix_trace_event(oke, NULL, 0);
	}
	for (int i = 0; i < 3; i++)
		posix_trace_event(hb, NULL, 0);
	posix_trace_event(lone, NULL, 0);
	for (uint64_t key = 1; key <= 2; key++)
		posix_trace_event(pb, &key, sizeof key);
	pthread_t t;
	REQUIRE(pthread_create(&t, NULL, open_and_end, NULL) == 0);
	pthread_join(t, NULL);
	REQUIRE(pthread_create(&t, NULL, end_other, NULL) == 0);
	pthread_join(t, NULL);
	FILE *f = fopen(out, "w");
	REQUIRE(f != NULL);
	fprintf(f, "%d\n", pthread_equal(first_self, second_self) != 0);
	REQUIRE(fclose(f) == 0);
	sleep_ns(20000000);
	raise(SIGKILL);
	return 1;
}

/* ------------------------------------------------ the witness: loss */
static trace_event_id_t ck_end;
static int ck_pipe[2];

static void *cut_keyed_end(void *arg)
{
	uint64_t key;
	(void)arg;
	REQUIRE(read(ck_pipe[0], &key, sizeof key) == sizeof key);
	posix_trace_event(ck_end, &key, sizeof key);
	return NULL;
}

/* Whether process pid is stopped (its state in /proc/PID/stat: T); 1 as
 * well when that cannot be read (the caller goes on, and lets it run). */
static int stopped(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 1;
	buf[n] = 0;
	const char *p = strrchr(buf, ')'); /* after the command's name */
	return p && p[1] == ' ' && p[2] == 'T';
}

static int witness_loss(void)
{
	trace_event_id_t okb = tid_of("ok/begin"), oke = tid_of("ok/end");
	trace_event_id_t cb = tid_of("cut/begin"), ce = tid_of("cut/end");
	trace_event_id_t ckb = tid_of("cutk/async-begin"), flood = tid_of("flood");
	ck_end = tid_of("cutk/async-end");
	REQUIRE(pipe(ck_pipe) == 0);
	pthread_t t;
	REQUIRE(pthread_create(&t, NULL, cut_keyed_end, NULL) == 0);
	/* two spans of different names that overlap without nesting */
	trace_event_id_t ov[4] = { tid_of("ovA/begin"), tid_of("ovB/begin"), tid_of("ovA/end"),
	                           tid_of("ovB/end") };
	for (int i = 0; i < 4; i++) {
		posix_trace_event(ov[i], NULL, 0);
		sleep_ns(100000);
	}
	for (int i = 0; i < 10; i++) {
		posix_trace_event(okb, NULL, 0);
		sleep_ns(100000);
		posix_trace_event(oke, NULL, 0);
	}
	sleep_ns(100000000); /* (flushed) */
	uint64_t key = 7;
	for (int i = 0; i < 3; i++)
		posix_trace_event(cb, NULL, 0);
	posix_trace_event(ckb, &key, sizeof key);
	/* the flood: 100 000 events as fast as they go (the flusher keeps
	 * about half, in many gaps: 2 M made the log 1 M events that protoc
	 * took 8 s to decode), then 20 000 more, each a 16 KiB stream's worth
	 * and more, while the recorder (our parent: its flusher drains the
	 * stream) is stopped, so that the stream overflows whatever the
	 * machine's and the sanitizer's speed */
	uint64_t f = 0;
	for (; f < 100000; f++)
		posix_trace_event(flood, &f, sizeof f);
	pid_t rec = getppid();
	REQUIRE(kill(rec, SIGSTOP) == 0);
	for (int w = 0; w < 10000 && !stopped(rec); w++) /* (10 s at most: it goes on) */
		sleep_ns(1000000);
	for (; f < 120000; f++)
		posix_trace_event(flood, &f, sizeof f);
	REQUIRE(kill(rec, SIGCONT) == 0);
	/* the flusher empties the 16 KiB stream in well under a millisecond
	 * once the flood stops; a second leaves room for a loaded machine */
	sleep_ns(1000000000);
	REQUIRE(write(ck_pipe[1], &key, sizeof key) == sizeof key);
	pthread_join(t, NULL);
	for (int i = 0; i < 3; i++)
		posix_trace_event(ce, NULL, 0);
	for (int i = 0; i < 10; i++) {
		posix_trace_event(okb, NULL, 0);
		sleep_ns(100000);
		posix_trace_event(oke, NULL, 0);
	}
	return 0;
}


/* ------------------------------------------------ Perfetto slices */
/* The slices of an export as protoc decodes it against Perfetto's schema:
 * per name, the begins and ends, ends marked incomplete or split, slices
 * on async tracks (not their thread's), nested in a slice of another name
 * (the track's stack at their begin), and the longest whole slice. */
#define PFN 16
struct pfspan { char name[40]; int begins, ends, incomplete, split, async, nested; char parent[40];
                uint64_t max; };
struct pfopen { uint64_t track, ts; int name; };
struct pfx {
	struct pfspan s[PFN];
	int n;
	struct pfopen open[512];   /* every track's open slices, in order */
	int nopen, bad;
	struct pfseq { uint64_t id, clock, dflt; char *names[64]; uint64_t iids[64]; int nn;
	               char *ann[64]; uint64_t aiids[64]; int na; } seq[128];
	int nseq;
};

static int pf_name(struct pfx *x, const char *name)
{
	for (int i = 0; i < x->n; i++)
		if (!strcmp(x->s[i].name, name))
			return i;
	REQUIRE(x->n < PFN);
	snprintf(x->s[x->n].name, sizeof x->s[0].name, "%s", name);
	return x->n++;
}

struct pfpkt { uint64_t ts, seq, dflt, cs64, type, name_iid, track, ann_iid[4], iids[32];
               int has_dflt, has_cs, has_te, nann, nnames, ann[32];
               char names[32][40]; };

static void pf_packet(struct pfx *x, struct pfpkt *p)
{
	int si;
	for (si = 0; si < x->nseq && x->seq[si].id != p->seq; si++)
		;
	if (si == x->nseq) {
		REQUIRE(x->nseq < 128);
		memset(&x->seq[si], 0, sizeof x->seq[si]);
		x->seq[x->nseq++].id = p->seq;
	}
	struct pfseq *q = &x->seq[si];
	if (p->has_dflt)
		q->dflt = p->dflt;
	if (p->has_cs)
		q->clock = p->cs64;
	for (int i = 0; i < p->nnames; i++) {
		char **tab = p->ann[i] ? q->ann : q->names;
		uint64_t *iids = p->ann[i] ? q->aiids : q->iids;
		int *n = p->ann[i] ? &q->na : &q->nn;
		REQUIRE(*n < 64);
		iids[*n] = p->iids[i];
		tab[(*n)++] = strdup(p->names[i]);
	}
	if (!p->has_te)
		return;
	q->clock += p->ts;
	if (p->type != 1 && p->type != 2)
		return;
	uint64_t track = p->track ? p->track : q->dflt;
	int incomplete = 0, split = 0;
	for (int i = 0; i < p->nann; i++)
		for (int k = 0; k < q->na; k++)
			if (q->aiids[k] == p->ann_iid[i]) {
				incomplete |= !strcmp(q->ann[k], "incomplete");
				split |= !strcmp(q->ann[k], "split");
			}
	if (p->type == 1) {
		const char *name = NULL;
		for (int k = 0; k < q->nn; k++)
			if (q->iids[k] == p->name_iid)
				name = q->names[k];
		if (!name) {
			x->bad++;
			return;
		}
		int ni = pf_name(x, name);
		struct pfspan *sp = &x->s[ni];
		sp->begins += !split;
		sp->async += p->track != 0;
		for (int i = x->nopen; i-- > 0;)
			if (x->open[i].track == track) {
				if (!split && strcmp(x->s[x->open[i].name].name, name)) {
					sp->nested++;
					memcpy(sp->parent, x->s[x->open[i].name].name, sizeof sp->parent);
				}
				break;
			}
		REQUIRE(x->nopen < 512);
		x->open[x->nopen++] = (struct pfopen){ track, q->clock, ni };
		return;
	}
	int i = x->nopen;
	while (i-- > 0 && x->open[i].track != track)
		;
	if (i < 0) {
		x->bad++; /* an end with nothing open on its track */
		return;
	}
	struct pfspan *sp = &x->s[x->open[i].name];
	sp->ends += !split;
	sp->incomplete += incomplete;
	sp->split += split;
	if (!incomplete && !split && q->clock - x->open[i].ts > sp->max)
		sp->max = q->clock - x->open[i].ts;
	memmove(&x->open[i], &x->open[i + 1], (size_t)(x->nopen - i - 1) * sizeof x->open[0]);
	x->nopen--;
}

/* Exports log (compressed, then --no-compress: the same packets) and
 * reads its slices into x; 0, or -1 (protoc missing: nothing checked). */
static int pf_slices(const char *log, struct pfx *x)
{
	if (!protoc && (find_schema() || !(protoc = cli_which("protoc")))) {
		printf("note: protoc or Perfetto's schema missing: Perfetto slices not checked\n");
		return -1;
	}
	char out[300], plain[300], txt[300], cmd[1400], line[1024];
	snprintf(out, sizeof out, "%s.pftrace", log);
	snprintf(plain, sizeof plain, "%s.inflated", log);
	snprintf(txt, sizeof txt, "%s.pftxt", log);
	CHECK_EQ(cli_run(CLI("export", "-f", "perfetto", "--force", (char *)log, "-o", out), NULL,
	                 NULL), 0);
	struct pfile pf;
	CHECK_EQ(unpack(out, plain, &pf), 0);
#ifdef PT_HAVE_ZLIB
	CHECK(pf.containers > 0 && pf.top_plain == 0);
#endif
	char *a = cli_slurp(plain);
	CHECK_EQ(cli_run(CLI("export", "-f", "perfetto", "--no-compress", "--force", (char *)log,
	                     "-o", out), NULL, NULL), 0);
	char *b = cli_slurp(out);
	REQUIRE(a && b);
	CHECK(strlen(a) > 0 && !memcmp(a, b, (size_t)pf.packet_bytes)); /* (the same packets) */
	free(a);
	free(b);
	snprintf(cmd, sizeof cmd, "'%s' --decode=perfetto.protos.Trace -I '%s' '%s' "
	         "< '%s' > '%s'", protoc, schema_dir, schema_file, out, txt);
	CHECK_EQ(system(cmd), 0);
	FILE *f = fopen(txt, "r");
	REQUIRE(f);
	memset(x, 0, sizeof *x);
	struct pfpkt p;
	memset(&p, 0, sizeof p);
	char stack[8][40];
	int depth = 0;
	uint64_t iid = 0;
	while (fgets(line, sizeof line, f)) {
		char *t = line + strspn(line, " ");
		t[strcspn(t, "\n")] = 0;
		if (!strcmp(t, "}")) {
			REQUIRE(depth > 0);
			if (--depth == 0) {
				pf_packet(x, &p);
				memset(&p, 0, sizeof p);
			}
			continue;
		}
		size_t k = strcspn(t, " :");
		if (t[k] == ' ' && t[k + 1] == '{') {
			REQUIRE(depth < 8);
			snprintf(stack[depth++], sizeof stack[0], "%.*s", (int)k, t);
			p.has_te |= !strcmp(stack[depth - 1], "track_event");
			continue;
		}
		if (t[k] != ':')
			continue;
		t[k] = 0;
		const char *v = t + k + 2, *in = depth ? stack[depth - 1] : "";
		uint64_t u = strtoull(v, NULL, 10);
		if (depth == 1 && !strcmp(t, "timestamp"))
			p.ts = u;
		else if (depth == 1 && !strcmp(t, "trusted_packet_sequence_id"))
			p.seq = u;
		else if (!strcmp(in, "track_event_defaults") && !strcmp(t, "track_uuid"))
			p.dflt = u, p.has_dflt = 1;
		else if (!strcmp(in, "clocks") && !strcmp(t, "clock_id"))
			iid = u;
		else if (!strcmp(in, "clocks") && !strcmp(t, "timestamp") && iid == 64)
			p.cs64 = u, p.has_cs = 1;
		else if (!strcmp(in, "track_event") && !strcmp(t, "type"))
			p.type = !strcmp(v, "TYPE_SLICE_BEGIN") ? 1 : !strcmp(v, "TYPE_SLICE_END") ? 2 : 3;
		else if (!strcmp(in, "track_event") && !strcmp(t, "name_iid"))
			p.name_iid = u;
		else if (!strcmp(in, "track_event") && !strcmp(t, "track_uuid"))
			p.track = u;
		else if (!strcmp(in, "debug_annotations") && !strcmp(t, "name_iid") && p.nann < 4)
			p.ann_iid[p.nann++] = u;
		else if ((!strcmp(in, "event_names") || !strcmp(in, "debug_annotation_names")) &&
		         !strcmp(t, "iid"))
			iid = u;
		else if ((!strcmp(in, "event_names") || !strcmp(in, "debug_annotation_names")) &&
		         !strcmp(t, "name")) {
			REQUIRE(p.nnames < 32);
			p.ann[p.nnames] = strcmp(in, "event_names") != 0;
			p.iids[p.nnames] = iid;
			snprintf(p.names[p.nnames++], sizeof p.names[0], "%.*s", (int)strlen(v) - 2, v + 1);
		}
	}
	REQUIRE(depth == 0);
	fclose(f);
	for (int i = 0; i < x->nseq; i++)
		for (int k = 0; k < 64; k++) {
			free(k < x->seq[i].nn ? x->seq[i].names[k] : NULL);
			free(k < x->seq[i].na ? x->seq[i].ann[k] : NULL);
		}
	unlink(plain);
	unlink(txt);
	return 0;
}

/* name has begins and ends slices, incomplete of the ends incomplete */
static void pf_expect(struct pfx *x, const char *name, int begins, int ends, int incomplete,
                      int async)
{
	int i = pf_name(x, name);
	CHECK_EQ(x->s[i].begins, begins);
	CHECK_EQ(x->s[i].ends, ends);
	CHECK_EQ(x->s[i].incomplete, incomplete);
	CHECK_EQ(x->s[i].async, async ? begins : 0);
	if (x->s[i].begins != begins || x->s[i].ends != ends || x->s[i].incomplete != incomplete)
		fprintf(stderr, "perfetto %s: %d begins, %d ends, %d incomplete\n", name,
		        x->s[i].begins, x->s[i].ends, x->s[i].incomplete);
}

/* ------------------------------------------------ the checks */
/* info's line for span name: its complete and incomplete counts, or -1 */
static void info_span(const char *info, const char *name, const char *pairs, long long count,
                      long long incomplete)
{
	char pat[64];
	long long c = -1, i = -1;
	snprintf(pat, sizeof pat, "\n  %-20s %-7s ", name, pairs);
	const char *p = info ? strstr(info, pat) : NULL;
	if (p)
		sscanf(p + strlen(pat), "%lld %lld", &c, &i);
	CHECK_EQ(c, count);
	CHECK_EQ(i, incomplete);
	if (c != count || i != incomplete)
		fprintf(stderr, "info, span %s (%s): %lld complete, %lld incomplete\n", name, pairs, c, i);
}

static char *info_of(const char *log, const char *extra)
{
	char *out = NULL;
	int rc = extra ? cli_run(CLI("info", "--span", (char *)extra, (char *)log), &out, NULL)
	               : cli_run(CLI("info", (char *)log), &out, NULL);
	CHECK_EQ(rc, 0);
	return out;
}

/* span name has count complete and incomplete incomplete spans */
static void expect(const char *js, const char *name, long long count, long long incomplete)
{
	long long c = span_num(js, name, "\"count\":"), i = span_num(js, name, "\"incomplete\":");
	CHECK_EQ(c, count);
	CHECK_EQ(i, incomplete);
	if (c != count || i != incomplete)
		fprintf(stderr, "span %s: %lld complete, %lld incomplete\n", name, c, i);
}

/* got, a quantile stats reported (i < 4: from its histogram, the middle
 * of the bucket of the value of that rank) or its max (i == 4, exact),
 * for a rank whose true value lies in [lo, hi] */
static int within(long long got, unsigned long long lo, unsigned long long hi, int i)
{
	if (i < 4) {
		lo -= lo / 256;
		hi += hi / 256;
	}
	return got >= 0 && (unsigned long long)got >= lo && (unsigned long long)got <= hi;
}

static char self[512];

static char *stats_json(const char *log, const char *extra)
{
	char *out = NULL;
	int rc = extra ? cli_run(CLI("stats", "--json", (char *)log, "--span", (char *)extra), &out,
	                         NULL)
	               : cli_run(CLI("stats", "--json", (char *)log), &out, NULL);
	CHECK_EQ(rc, 0);
	return out;
}

static void check_timed(void)
{
	const char *log = cli_path("timed.ptlog"), *wf = cli_path("timed.txt");
	span_clock(1);
	CHECK_EQ(cli_run(CLI("record", "-o", (char *)log, "--", self, "witness", "timed",
	                     (char *)wf), NULL, NULL), 0);
	span_clock(0);
	char *js = stats_json(log, NULL), *w = cli_slurp(wf);
	REQUIRE(js && w);
	char name[32];
	unsigned long long n, q[5][2];
	int lines = 0, off = 0, k;
	while (sscanf(w + off, "%31s %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu%n",
	              name, &n, &q[0][0], &q[0][1], &q[1][0], &q[1][1], &q[2][0], &q[2][1],
	              &q[3][0], &q[3][1], &q[4][0], &q[4][1], &k) == 12) {
		static const char *const keys[5] = { "\"p50_ns\":", "\"p90_ns\":", "\"p99_ns\":",
		                                     "\"p999_ns\":", "\"max_ns\":" };
		off += k;
		lines++;
		CHECK_EQ(span_num(js, name, "\"count\":"), (long long)n);
		CHECK_EQ(span_num(js, name, "\"incomplete\":"), 0);
		for (int i = 0; i < 5; i++) {
			long long got = span_num(js, name, keys[i]);
			CHECK(within(got, q[i][0], q[i][1], i));
			if (!within(got, q[i][0], q[i][1], i))
				fprintf(stderr, "%s %s: stats %lld, the program [%llu, %llu]\n", name,
				        keys[i], got, q[i][0], q[i][1]);
		}
	}
	CHECK_EQ(lines, 4);
	char *info = info_of(log, NULL);
	info_span(info, "op", "thread", N, 0);
	info_span(info, "inner", "thread", N, 0);
	info_span(info, "hand", "by key", N, 0);
	info_span(info, "xproc", "by key", N, 0);
	CHECK(cli_contains(info, "\nspans (4)\n"));
	free(info);
	/* Perfetto: every span a slice, inner nested in op on the thread's
	 * track, the keyed ones on tracks of their own; durations exact */
	struct pfx *x = calloc(1, sizeof *x);
	REQUIRE(x);
	if (pf_slices(log, x) == 0) {
		pf_expect(x, "op", N, N, 0, 0);
		pf_expect(x, "inner", N, N, 0, 0);
		pf_expect(x, "hand", N, N, 0, 1);
		pf_expect(x, "xproc", N, N, 0, 1);
		CHECK_EQ(x->s[pf_name(x, "inner")].nested, N);
		CHECK(!strcmp(x->s[pf_name(x, "inner")].parent, "op"));
		CHECK_EQ(x->s[pf_name(x, "op")].nested, 0);
		CHECK_EQ(x->nopen, 0);
		CHECK_EQ(x->bad, 0);
		static const char *const names[4] = { "op", "inner", "hand", "xproc" };
		for (int i = 0; i < 4; i++)
			CHECK_EQ((long long)x->s[pf_name(x, names[i])].max,
			         span_num(js, names[i], "\"max_ns\":"));
	}
	free(x);
	free(js);
	free(w);

	/* Chrome: 40 op slices, 40 inner slices each inside an op slice of
	 * its thread, 40 async pairs each for hand and xproc */
	const char *cj = cli_path("timed.json");
	CHECK_EQ(cli_run(CLI("export", "-f", "chrome", (char *)log, "-o", (char *)cj), NULL, NULL),
	         0);
	char *c = cli_slurp(cj);
	REQUIRE(c);
	double op_ts[N], op_end[N];
	int op_tid[N], nop = 0, ninner = 0, nested = 0;
	for (const char *p = c; (p = strstr(p, "{\"name\":\"op\",\"cat\":\"span\",\"ph\":\"X\"")); p++) {
		double ts, d;
		int pid, tid;
		if (sscanf(strstr(p, "\"ts\""), "\"ts\":%lf,\"dur\":%lf,\"pid\":%d,\"tid\":%d", &ts, &d,
		           &pid, &tid) == 4 && nop < N) {
			op_ts[nop] = ts;
			op_end[nop] = ts + d;
			op_tid[nop++] = tid;
		}
	}
	for (const char *p = c; (p = strstr(p, "{\"name\":\"inner\",\"cat\":\"span\",\"ph\":\"X\""));
	     p++) {
		double ts, d;
		int pid, tid;
		ninner++;
		if (sscanf(strstr(p, "\"ts\""), "\"ts\":%lf,\"dur\":%lf,\"pid\":%d,\"tid\":%d", &ts, &d,
		           &pid, &tid) != 4)
			continue;
		for (int i = 0; i < nop; i++)
			if (op_tid[i] == tid && op_ts[i] <= ts && ts + d <= op_end[i]) {
				nested++;
				break;
			}
	}
	CHECK_EQ(nop, N);
	CHECK_EQ(ninner, N);
	CHECK_EQ(nested, N);
	static const char *const pairs[4] = {
		"{\"name\":\"hand\",\"cat\":\"span\",\"ph\":\"b\"", "{\"name\":\"hand\",\"cat\":\"span\",\"ph\":\"e\"",
		"{\"name\":\"xproc\",\"cat\":\"span\",\"ph\":\"b\"", "{\"name\":\"xproc\",\"cat\":\"span\",\"ph\":\"e\"" };
	for (int pk = 0; pk < 4; pk++) {
		int cnt = 0;
		for (const char *p = c; (p = strstr(p, pairs[pk])); p++)
			cnt++;
		CHECK_EQ(cnt, N);
	}
	free(c);

	/* show: each op/end with its duration, inner indented one level */
	char *out = NULL;
	CHECK_EQ(cli_run(CLI("show", (char *)log, "-e", "op/end,inner/begin"), &out, NULL), 0);
	char line[1024];
	int ends = 0, indented = 0;
	for (int i = 0; cli_line(out, i, line, sizeof line) == 0; i++) {
		ends += strstr(line, "  op/end ") && strstr(line, "s]");
		indented += strstr(line, "    inner/begin") != NULL;
	}
	CHECK_EQ(ends, N);
	CHECK_EQ(indented, N);
	free(out);
}

static void check_killed(void)
{
	const char *log = cli_path("killed.ptlog"), *wf = cli_path("killed.txt");
	CHECK_EQ(cli_run(CLI("record", "-o", (char *)log, "--", self, "witness", "killed",
	                     (char *)wf), NULL, NULL), 128 + SIGKILL);
	char *js = stats_json(log, NULL), *w = cli_slurp(wf);
	if (!w || w[0] != '1')
		printf("note: the second thread did not get the first one's pthread_t: the case of "
		       "a reused pthread_t was not exercised\n");
	free(w);
	/* 3 open at the kill, 1 left open by a thread that ended, 1 end on a
	 * later thread (with the same pthread_t, most likely) */
	expect(js, "held", 0, 5);
	expect(js, "ok", 5, 0);
	expect(js, "lone", 0, 1);
	expect(js, "pending", 0, 2);
	free(js);
	/* Perfetto: the open spans are slices that do not end; no end
	 * without its begin */
	struct pfx *x = calloc(1, sizeof *x);
	REQUIRE(x);
	if (pf_slices(log, x) == 0) {
		pf_expect(x, "held", 4, 0, 0, 0);
		pf_expect(x, "ok", 5, 5, 0, 0);
		pf_expect(x, "lone", 0, 0, 0, 0);
		pf_expect(x, "pending", 2, 0, 0, 1);
		CHECK_EQ(x->nopen, 6);
		CHECK_EQ(x->bad, 0);
	}
	free(x);
	/* --span: the same begin and end types under another name, keyed */
	js = stats_json(log, "pending/async-begin,ok/end,mixed,key");
	expect(js, "mixed", 0, 7); /* (no payload: key 0, never begun) */
	free(js);
	/* info: the same figures */
	char *info = info_of(log, NULL);
	info_span(info, "held", "thread", 0, 5);
	info_span(info, "ok", "thread", 5, 0);
	info_span(info, "lone", "thread", 0, 1);
	info_span(info, "pending", "by key", 0, 2);
	free(info);
	info = info_of(log, "pending/async-begin,ok/end,mixed,key");
	info_span(info, "mixed", "by key", 0, 7);
	free(info);
}

static void check_loss(void)
{
	const char *log = cli_path("loss.ptlog");
	/* (a flush stream too small for its writer loses events: exit 3) */
	CHECK_EQ(cli_run(CLI("record", "-o", (char *)log, "--size", "16K", "--", self, "witness",
	                     "loss", "-"), NULL, NULL), 3);
	char *js = stats_json(log, NULL);
	REQUIRE(js);
	const char *lost = strstr(js, "\"lost\":{\"events\":");
	long long nlost = lost ? strtoll(lost + 18, NULL, 10) : -1;
	CHECK(nlost > 0); /* the flood overflowed the stream */
	expect(js, "ok", 20, 0);
	expect(js, "cut", 0, 3);
	expect(js, "cutk", 0, 1);
	expect(js, "ovA", 1, 0);
	expect(js, "ovB", 1, 0);
	long long ova = span_num(js, "ovA", "\"max_ns\":"), ovb = span_num(js, "ovB", "\"max_ns\":");
	free(js);
	/* Perfetto: the cut spans end, marked incomplete */
	struct pfx *x = calloc(1, sizeof *x);
	REQUIRE(x);
	if (pf_slices(log, x) == 0) {
		pf_expect(x, "ok", 20, 20, 0, 0);
		pf_expect(x, "cut", 3, 3, 3, 0);
		pf_expect(x, "cutk", 1, 1, 1, 1);
		/* ovB, begun inside ovA and ending after it: ended with ovA and
		 * begun again (split), so that the track's slices nest */
		pf_expect(x, "ovA", 1, 1, 0, 0);
		pf_expect(x, "ovB", 1, 1, 0, 0);
		CHECK_EQ(x->s[pf_name(x, "ovB")].split, 1);
		CHECK_EQ(x->s[pf_name(x, "ovB")].nested, 1);
		CHECK_EQ((long long)x->s[pf_name(x, "ovA")].max, ova);
		CHECK(ovb > 200000);
		CHECK_EQ(x->nopen, 0);
		CHECK_EQ(x->bad, 0);
	}
	free(x);
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "witness")) {
		if (!strcmp(argv[2], "timed"))
			return witness_timed(argv[3]);
		if (!strcmp(argv[2], "killed"))
			return witness_killed(argv[3]);
		if (!strcmp(argv[2], "loss"))
			return witness_loss();
		return 2;
	}
	T_BEGIN(600);
	cli_setup();
	REQUIRE(readlink("/proc/self/exe", self, sizeof self - 1) > 0);
	check_timed();
	check_killed();
	check_loss();
	T_END();
}

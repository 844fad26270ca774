/*
 * cli_parts.c -- a directory of logs, the parts of one recording, read as
 * one trace by every reading command (cli/read/parts.c), against a
 * witness: this program writes the parts itself, run as
 * `cli_parts write DIR`: one process, NTH threads that live through every
 * part, each event of theirs carrying (thread, seq) with seq counting on
 * across parts; part k is a stream with a log of its own (created,
 * started, stopped, shut down, then the next), so the parts do not
 * overlap, and a span "job" begins in part 1 and ends in part 2.  Then
 * `cli_parts fresh FILE` writes one more part from a new process that
 * registered its types in another order (other ids for the same names),
 * and `cli_parts lossy FILE` one that loses events (a 4 KiB LOOP stream).
 *
 *  - show DIR: every event of the parts (as each part read alone has
 *    them), one line each; per thread the seqs 0, 1, 2... in order across
 *    the parts, none missing or twice.
 *  - info, stats --json: totals the sums of the parts' (tick under one
 *    name whatever its id in each part, system types at their own ids),
 *    the span across the cut complete; the lost events those of the lossy
 *    part (babeltrace2 says as many discarded).
 *  - query DIR: the count of events; a directory and a file: two logs.
 *  - export chrome and perfetto: as many instant events as the parts'
 *    exports together; ctf read by babeltrace2 (when installed): every
 *    event, the seqs in order per thread.
 *  - view (when built with libmicrohttpd): /meta counts every event, the
 *    density of the whole trace sums to them.
 *  - parts of a recording by another process (`cli_parts recorded DIR`),
 *    the second without a START (overwritten): the recorder is known in
 *    both, its pid no process of the trace (but with --all).
 *  - the parts named one by one (several LOG operands) read as the
 *    directory does; a file named twice read once.
 *  - a missing middle part: said (stderr, info), the others read, exit 0.
 *  - an empty directory, a part that is not a log, a part that cannot be
 *    opened: exit 1 and the file named; a damaged middle part: said, the
 *    other parts read whole, the exit status of that part read alone.
 */
#include <dirent.h>
#include <pthread.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "view_http.h"

#define NPARTS 4   /* written by one process; a fifth by another */
#define NTH 3      /* threads through every part: main and two workers */
#define PER 150    /* events per thread per part */
#define NALL (NPARTS + 2) /* and one that loses events */
#define LOSSY 5000 /* events written into that one's 4 KiB LOOP stream */

struct pay { uint32_t t, seq; };

static trace_event_id_t tick;
static char self[512];
static int have_query; /* query is built (SQLite) */
static pthread_barrier_t go, done;
static volatile int stop_workers;

static void *worker(void *arg)
{
	struct pay p = { (uint32_t)(uintptr_t)arg, 0 };
	for (;;) {
		pthread_barrier_wait(&go);
		if (stop_workers)
			return NULL;
		for (int i = 0; i < PER; i++, p.seq++)
			posix_trace_event(tick, &p, sizeof p);
		pthread_barrier_wait(&done);
	}
}

/* Parts DIR/w-1.ptlog to w-NPARTS.ptlog, one stream each. */
static int write_parts(const char *dir)
{
	trace_event_id_t jb, je;
	pthread_t th[NTH - 1];
	struct pay p = { 0, 0 };

	if (posix_trace_eventid_open("tick", &tick) || posix_trace_eventid_open("job/begin", &jb) ||
	    posix_trace_eventid_open("job/end", &je) ||
	    posixtrace_eventid_describe(tick, "t:u32,seq:u32"))
		return 1;
	pthread_barrier_init(&go, NULL, NTH);
	pthread_barrier_init(&done, NULL, NTH);
	for (int i = 0; i < NTH - 1; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)(i + 1)))
			return 1;
	for (int k = 1; k <= NPARTS; k++) {
		char path[600];
		trace_attr_t a;
		trace_id_t t;
		snprintf(path, sizeof path, "%s/w-%d.ptlog", dir, k);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || posix_trace_attr_init(&a) ||
		    posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND) ||
		    posix_trace_create_withlog(0, &a, fd, &t) || posix_trace_start(t))
			return 1;
		if (k == 2)
			posix_trace_event(je, NULL, 0); /* the span begun in part 1 */
		pthread_barrier_wait(&go);
		for (int i = 0; i < PER; i++, p.seq++)
			posix_trace_event(tick, &p, sizeof p);
		pthread_barrier_wait(&done);
		if (k == 1)
			posix_trace_event(jb, NULL, 0);
		if (posix_trace_stop(t) || posix_trace_shutdown(t) || close(fd))
			return 1;
		posix_trace_attr_destroy(&a);
	}
	stop_workers = 1;
	pthread_barrier_wait(&go);
	for (int i = 0; i < NTH - 1; i++)
		pthread_join(th[i], NULL);
	return 0;
}

/* One more part from a process whose ids differ: zzz first, then tick. */
static int write_fresh(const char *path)
{
	trace_event_id_t z;
	trace_attr_t a;
	trace_id_t t;
	struct pay p = { 100, 0 };
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || posix_trace_eventid_open("zzz", &z) ||
	    posix_trace_eventid_open("tick", &tick) ||
	    posixtrace_eventid_describe(tick, "t:u32,seq:u32") || posix_trace_attr_init(&a) ||
	    posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND) ||
	    posix_trace_create_withlog(0, &a, fd, &t) || posix_trace_start(t))
		return 1;
	posix_trace_event(z, "z", 1);
	for (int i = 0; i < PER; i++, p.seq++)
		posix_trace_event(tick, &p, sizeof p);
	return posix_trace_stop(t) || posix_trace_shutdown(t) || close(fd);
}

/* One more that loses events: LOSSY into a small LOOP stream, written
 * to its log at the end; "lossy" is not described (no t=, seq=). */
static int write_lossy(const char *path)
{
	trace_event_id_t e;
	trace_attr_t a;
	trace_id_t t;
	uint64_t v = 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || posix_trace_eventid_open("lossy", &e) || posix_trace_attr_init(&a) ||
	    posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_LOOP) ||
	    posix_trace_attr_setstreamsize(&a, 4096) ||
	    posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND) ||
	    posix_trace_create_withlog(0, &a, fd, &t) || posix_trace_start(t))
		return 1;
	for (int i = 0; i < LOSSY; i++, v++)
		posix_trace_event(e, &v, sizeof v);
	return posix_trace_stop(t) || posix_trace_shutdown(t) || close(fd);
}

/* `cli_parts recorded DIR`: this process records a child of its own (as
 * `record` does) into DIR/r-1.ptlog, then DIR/r-2.ptlog, a 4 KiB LOOP
 * stream the child overwrites, START included; prints the recorder's pid. */
static int write_recorded(const char *dir)
{
	int gp[2], ack[2];
	char c = 0;
	if (pipe(gp) || pipe(ack))
		return 1;
	pid_t child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		trace_event_id_t e;
		close(gp[1]);
		close(ack[0]);
		if (posix_trace_eventid_open("child", &e))
			_exit(1);
		while (read(gp[0], &c, 1) == 1) {
			for (int i = 0; i < c * 100; i++)
				posix_trace_event(e, &i, sizeof i);
			if (write(ack[1], "k", 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	close(gp[0]);
	close(ack[1]);
	for (int k = 1; k <= 2; k++) {
		char path[600];
		trace_attr_t a;
		trace_id_t t;
		snprintf(path, sizeof path, "%s/r-%d.ptlog", dir, k);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || posix_trace_attr_init(&a) ||
		    posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND) ||
		    (k == 2 && (posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_LOOP) ||
		                posix_trace_attr_setstreamsize(&a, 4096))) ||
		    posix_trace_create_withlog(child, &a, fd, &t) || posix_trace_start(t))
			return 1;
		/* the second part's START overwritten: a LOOP stream keeps the
		 * controller's system events in a chunk it holds open until it
		 * fills, so FILTER events fill it first (each with two sets) */
		if (k == 2) {
			trace_event_set_t none;
			if (posix_trace_eventset_empty(&none))
				return 1;
			for (int i = 0; i < 40; i++)
				if (posix_trace_set_filter(t, &none, POSIX_TRACE_SET_EVENTSET))
					return 1;
		}
		c = k == 1 ? 1 : 50;
		if (write(gp[1], &c, 1) != 1 || read(ack[0], &c, 1) != 1 || posix_trace_stop(t) ||
		    posix_trace_shutdown(t) || close(fd))
			return 1;
	}
	close(gp[1]);
	int st;
	waitpid(child, &st, 0);
	printf("%d\n", (int)getpid());
	return !WIFEXITED(st) || WEXITSTATUS(st);
}

/* The recorder's part without a START of its own is still the recorder's:
 * its events the trace's (pid 0), its pid no process of the set. */
static void check_recorded(void)
{
	const char *rd = cli_path("recorded");
	char *out = NULL, r2[600], pidtxt[32], line[1024];
	struct cli_ev *ev;
	REQUIRE(mkdir(rd, 0700) == 0);
	CHECK_EQ(cli_run((char *const[]){ self, "recorded", (char *)rd, NULL }, &out, NULL), 0);
	long rec = out ? strtol(out, NULL, 10) : 0;
	free(out);
	REQUIRE(rec > 0);
	snprintf(r2, sizeof r2, "%s/r-2.ptlog", rd);
	int n = cli_read_log(r2, &ev);
	CHECK_EQ(cli_count(ev, n, "posix_trace_start"), 0); /* (overwritten) */
	int mine = 0;
	for (int i = 0; i < n; i++)
		mine += ev[i].info.posix_pid == (pid_t)rec;
	CHECK(mine > 0); /* its STOP and flush events */
	free(ev);
	CHECK_EQ(cli_run(CLI("stats", (char *)rd), &out, NULL), 0);
	snprintf(pidtxt, sizeof pidtxt, "%ld ", rec);
	int listed = 0, in_procs = 0;
	for (const char *p = out; cli_next_line(&p, line, sizeof line) == 0;) {
		if (!strncmp(line, "process ", 8))
			in_procs = 1;
		else if (!line[0])
			in_procs = 0;
		else if (in_procs && !strncmp(line, pidtxt, strlen(pidtxt)))
			listed++;
	}
	CHECK_EQ(listed, 0);
	free(out);
	CHECK_EQ(cli_run(CLI("stats", "--all", (char *)rd), &out, NULL), 0);
	CHECK(cli_contains(out, pidtxt)); /* (with --all it is there) */
	free(out);
}

/* `cli_parts pingpong A B`: two processes, each tracing itself into its
 * own log (A, B), taking turns: A's event k, then B's k, then A's k + 1
 * (pipes hand the turn over), so the two logs overlap all along. */
#define PP 100
static int pp_stream(const char *path, trace_event_id_t *e, trace_id_t *t, int *fd)
{
	trace_attr_t a;
	*fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	return *fd < 0 || posix_trace_eventid_open("pp", e) ||
	       posixtrace_eventid_describe(*e, "t:u32,seq:u32") || posix_trace_attr_init(&a) ||
	       posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND) ||
	       posix_trace_create_withlog(0, &a, *fd, t) || posix_trace_start(*t);
}

static int pingpong(const char *pa, const char *pb)
{
	int ab[2], ba[2], st, rc = 0, fd;
	trace_event_id_t e;
	trace_id_t t;
	char c = 0;
	if (pipe(ab) || pipe(ba))
		return 1;
	pid_t b = fork();
	if (b == 0) { /* B: its event k once A's k is written */
		close(ab[1]);
		close(ba[0]);
		if (pp_stream(pb, &e, &t, &fd))
			_exit(1);
		for (uint32_t k = 0; k < PP; k++) {
			struct pay p = { 201, k };
			if (read(ab[0], &c, 1) != 1)
				_exit(1);
			posix_trace_event(e, &p, sizeof p);
			if (write(ba[1], "x", 1) != 1)
				_exit(1);
		}
		_exit(posix_trace_stop(t) || posix_trace_shutdown(t) || close(fd));
	}
	close(ab[0]);
	close(ba[1]);
	if (pp_stream(pa, &e, &t, &fd))
		return 1;
	for (uint32_t k = 0; k < PP && !rc; k++) { /* A: its event k once B's k - 1 is */
		struct pay p = { 200, k };
		posix_trace_event(e, &p, sizeof p);
		if (write(ab[1], "x", 1) != 1 || read(ba[0], &c, 1) != 1)
			rc = 1;
	}
	rc |= posix_trace_stop(t) || posix_trace_shutdown(t) || close(fd);
	close(ab[1]);
	waitpid(b, &st, 0);
	return rc || !WIFEXITED(st) || WEXITSTATUS(st);
}

/* Two logs recorded at the same time, given together: read together,
 * merged by time (the turns alternate in show), said in a note. */
static void check_overlap(void)
{
	const char *pd = cli_path("pp");
	char *out = NULL, *err = NULL, line[1024], pa[600], pb[600];
	REQUIRE(mkdir(pd, 0700) == 0);
	snprintf(pa, sizeof pa, "%s/ping.ptlog", pd);
	snprintf(pb, sizeof pb, "%s/pong.ptlog", pd);
	CHECK_EQ(cli_run((char *const[]){ self, "pingpong", pa, pb, NULL }, NULL, NULL), 0);
	struct cli_ev *ev;
	long na = cli_read_log(pa, &ev);
	free(ev);
	long nb = cli_read_log(pb, &ev);
	free(ev);
	CHECK_EQ(cli_run(CLI("show", (char *)pd), &out, &err), 0);
	CHECK_EQ(cli_nlines(out), na + nb);
	CHECK(cli_contains(err, "overlap in time: read together"));
	/* the turns: 200/0, 201/0, 200/1, 201/1... and the times in order */
	long k = 0, bad = 0;
	double prev = -1e30;
	for (const char *p = out; cli_next_line(&p, line, sizeof line) == 0;) {
		double tm = strtod(line, NULL);
		bad += tm < prev;
		prev = tm;
		const char *a = strstr(line, "t="), *b = strstr(line, "seq=");
		if (!a || !b || !strstr(line, " pp "))
			continue;
		bad += strtol(a + 2, NULL, 10) != 200 + k % 2 || strtol(b + 4, NULL, 10) != k / 2;
		k++;
	}
	CHECK_EQ(k, 2 * PP);
	CHECK_EQ(bad, 0);
	free(out);
	free(err);
	/* query of the directory (one log): every event, ids in time order */
	if (have_query) {
		char want[64];
		CHECK_EQ(cli_run(CLI("query", "--csv", (char *)pd,
		                     "SELECT count(*), sum(name = 'pp'), sum(d < 0) FROM "
		                     "(SELECT name, ts - lag(ts) OVER (ORDER BY id) AS d FROM event)"),
		                 &out, NULL), 0);
		snprintf(want, sizeof want, "\n%ld,%d,0\r", na + nb, 2 * PP);
		CHECK(cli_contains(out, want));
		if (!cli_contains(out, want))
			fprintf(stderr, "query: %s (want %s)\n", out ? out : "", want + 1);
		free(out);
	}
}

/* The count of "lost events   N events lost..." in info's output, 0 for
 * "none", -1 if no such line. */
static long info_lost(const char *info)
{
	const char *p = info ? strstr(info, "\nlost events ") : NULL;
	if (!p)
		return -1;
	p += 13;
	while (*p == ' ')
		p++;
	return strncmp(p, "none", 4) ? strtol(p, NULL, 10) : 0;
}

/* ------------------------------------------------------------ checks */

static long part_n[NPARTS + 2];   /* events of each part, read alone */
static long total, starts;
static long lost;   /* the events the lossy part lost (info of it alone) */

static long count_of(const char *s, const char *what)
{
	long n = 0;
	for (const char *p = s; p && (p = strstr(p, what)) != NULL; p += strlen(what))
		n++;
	return n;
}

/* The (t, seq) of each line of out that carries them (show: "t=1
 * seq=5", babeltrace2: "t = 1, seq = 5"): per t the seqs must be 0, 1,
 * 2... in order; returns how many lines had them, *bad how many broke
 * the order, seqs[t] how many each t had. */
static long witness(const char *out, const char *tfmt, const char *sfmt, long *seqs, long *bad)
{
	char line[4096];
	long n = 0;
	*bad = 0;
	memset(seqs, 0, 128 * sizeof *seqs);
	for (const char *p = out; cli_next_line(&p, line, sizeof line) == 0;) {
		const char *a = strstr(line, tfmt), *b = strstr(line, sfmt);
		if (!a || !b)
			continue;
		unsigned t = (unsigned)strtoul(a + strlen(tfmt), NULL, 10);
		long s = strtol(b + strlen(sfmt), NULL, 10);
		if (t >= 128) {
			++*bad;
			continue;
		}
		if (s != seqs[t]) {
			if (*bad < 5)
				fprintf(stderr, "thread %u: seq %ld where %ld was due: %s\n", t, s, seqs[t],
				        line);
			++*bad;
		}
		seqs[t] = s + 1;
		n++;
	}
	return n;
}

static void check_witness(const char *what, const char *out, const char *tf, const char *sf)
{
	long seqs[128], bad;
	long n = witness(out, tf, sf, seqs, &bad);
	CHECK_EQ(n, (long)NTH * NPARTS * PER + PER);
	CHECK_EQ(bad, 0);
	for (int t = 0; t < NTH; t++)
		CHECK_EQ(seqs[t], (long)NPARTS * PER);
	CHECK_EQ(seqs[100], PER);
	if (n != (long)NTH * NPARTS * PER + PER || bad)
		fprintf(stderr, "%s: %ld events with a seq, %ld out of order\n", what, n, bad);
}

/* The count info gives on the row of type name ("  COUNT  ID  name"). */
static long info_type_count(const char *info, const char *name)
{
	char line[1024], nm[128];
	long c, id;
	for (const char *p = info; cli_next_line(&p, line, sizeof line) == 0;)
		if (sscanf(line, " %ld %ld %127s", &c, &id, nm) == 3 && !strcmp(nm, name))
			return c;
	return -1;
}

/* The id info gives on the row of type name, or -1. */
static long info_type_id(const char *info, const char *name)
{
	char line[1024], nm[128];
	long c, id;
	for (const char *p = info; cli_next_line(&p, line, sizeof line) == 0;)
		if (sscanf(line, " %ld %ld %127s", &c, &id, nm) == 3 && !strcmp(nm, name))
			return id;
	return -1;
}

/* The rows of info's map of loaded code ("loaded code (N objects)", a
 * heading, rows to a blank line) appended to out (cap bytes). */
static void objects_of(const char *info, char *out, size_t cap)
{
	const char *p = info ? strstr(info, "\nloaded code (") : NULL;
	char line[1024];
	if (!p)
		return;
	p++;
	for (int k = 0; cli_next_line(&p, line, sizeof line) == 0 && line[0]; k++)
		if (k >= 2 && strlen(out) + strlen(line) + 2 < cap)
			strcat(strcat(out, line), "\n");
}

/* Sorted lines, each once. */
static void sort_unique(char *s)
{
	cli_sort_lines(s);
	char *o = s, *prev = NULL;
	for (char *p = s, *nl; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
		size_t n = (size_t)(nl - p) + 1;
		if (prev && (size_t)(o - prev) == n && !memcmp(prev, p, n))
			continue;
		memmove(o, p, n);
		prev = o;
		o += n;
	}
	*o = 0;
}

static long info_events(const char *info)
{
	const char *p = info ? strstr(info, "\nevents ") : NULL;
	return p ? strtol(p + 8, NULL, 10) : -1;
}

/* The exports: instant events of the directory = those of the parts. */
static void check_exports(const char *dir, char *const *parts, int nparts)
{
	char out[600];
	long sum = 0, got;
	char *s = NULL;

	for (int k = 0; k < nparts; k++) {
		snprintf(out, sizeof out, "%s.part%d.json", dir, k);
		CHECK_EQ(cli_run(CLI("export", "-f", "chrome", "--force", parts[k], "-o", out), NULL, NULL), 0);
		s = cli_slurp(out);
		sum += count_of(s, "\"ph\":\"i\"");
		free(s);
	}
	snprintf(out, sizeof out, "%s.json", dir);
	CHECK_EQ(cli_run(CLI("export", "-f", "chrome", (char *)dir, "-o", out), NULL, NULL), 0);
	s = cli_slurp(out);
	got = count_of(s, "\"ph\":\"i\"");
	CHECK_EQ(got, sum);
	CHECK(sum >= total - 10); /* (a span's ends are a slice, not instants) */
	/* the span across the cut: one complete slice */
	CHECK(cli_contains(s, "\"name\":\"job\""));
	free(s);

	/* Perfetto, decoded by protoc with the repository's schema */
	const char *protoc = cli_which("protoc");
	char repo[512], txt[700], cmd[2400];
	snprintf(repo, sizeof repo, "%s", PT_BUILD_DIR);
	char *slash = strrchr(repo, '/');
	if (slash)
		*slash = 0;
	if (!protoc) {
		printf("note: protoc is not installed: the Perfetto export is not decoded\n");
		return;
	}
	sum = 0;
	for (int k = 0; k <= nparts; k++) {
		const char *in = k < nparts ? parts[k] : dir;
		snprintf(out, sizeof out, "%s.%d.pftrace", dir, k);
		snprintf(txt, sizeof txt, "%s.%d.pftxt", dir, k);
		CHECK_EQ(cli_run(CLI("export", "-f", "perfetto", "--no-compress", "--force", (char *)in,
		                     "-o", out), NULL, NULL), 0);
		snprintf(cmd, sizeof cmd, "'%s' --decode=perfetto.protos.Trace -I '%s/tests' "
		         "perfetto_min.proto < '%s' > '%s'", protoc, repo, out, txt);
		CHECK_EQ(system(cmd), 0);
		s = cli_slurp(txt);
		long n = count_of(s, "TYPE_INSTANT");
		free(s);
		if (k < nparts)
			sum += n;
		else
			CHECK_EQ(n, sum);
	}
	CHECK(sum >= total - 10);
}

static void check_ctf(const char *dir)
{
	const char *bt = cli_which("babeltrace2");
	char out[600], *s = NULL, *err = NULL;
	if (!bt) {
		printf("SKIP (part): babeltrace2 is not installed (Debian: babeltrace2): the CTF "
		       "export of the directory is not read back\n");
		return;
	}
	snprintf(out, sizeof out, "%s.ctf", dir);
	CHECK_EQ(cli_run(CLI("export", "-f", "ctf", (char *)dir, "-o", out), NULL, NULL), 0);
	int rc = cli_run((char *const[]){ (char *)bt, out, NULL }, &s, &err);
	CHECK_EQ(rc, 0);
	if (rc)
		fprintf(stderr, "babeltrace2: %s\n", err ? err : "");
	CHECK_EQ(cli_nlines(s), total);
	check_witness("babeltrace2", s, "t = ", "seq = ");
	long discarded = 0; /* "WARNING: Tracer discarded N events between..." */
	for (const char *p = err; p && (p = strstr(p, "discarded ")) != NULL; p += 10)
		discarded += strtol(p + 10, NULL, 10);
	CHECK_EQ(discarded, lost);
	free(s);
	free(err);
}

/* The numbers of each inner array of "lanes":[[...],...] of a density
 * answer: every third (the counts) summed. */
static long density_sum(const char *b)
{
	const char *p = b ? strstr(b, "\"lanes\":[") : NULL;
	long sum = 0;
	int depth = 0, k = 0;
	if (!p)
		return -1;
	for (p += 9; *p; p++) {
		if (*p == '[') {
			depth++;
			k = 0;
		} else if (*p == ']') {
			if (depth-- == 0)
				break;
		} else if (*p >= '0' && *p <= '9') {
			char *e;
			long v = strtol(p, &e, 10);
			if (k++ % 3 == 2)
				sum += v;
			p = e - 1;
		}
	}
	return sum;
}

static void check_view(const char *dir)
{
	char *meta = NULL, *b = NULL, want[64], path[128];
	struct view_srv sv;
	if (!cli_has_view()) {
		printf("note: posixtrace was built without libmicrohttpd: view is not checked\n");
		return;
	}
	REQUIRE(view_start(&sv, CLI("view", "--no-cache", (char *)dir), cli_path("view.out"),
	                   cli_path("view.err"), 60) == 0);
	CHECK_EQ(view_get(&sv, "/meta", NULL, 0, &meta), 200);
	snprintf(want, sizeof want, "\"events\":%ld,", total);
	CHECK(cli_contains(meta, want));
	const char *sp = meta ? strstr(meta, "\"span\":") : NULL;
	CHECK(sp != NULL);
	if (sp) {
		snprintf(path, sizeof path, "/query?from=0&to=%llu&cols=1000",
		         strtoull(sp + 7, NULL, 10));
		CHECK_EQ(view_get(&sv, path, NULL, 0, &b), 200);
		/* few events: each one ("ev":[[lane,at,slot],...]), else their density */
		const char *ev = b ? strstr(b, "\"ev\":[") : NULL;
		long n = 0;
		if (cli_contains(b, "\"mode\":\"events\"") && ev) {
			const char *end = strstr(ev, "]]");
			for (const char *q = ev + 6; end && q < end; q++)
				n += *q == '[';
		} else {
			n = density_sum(b);
		}
		CHECK_EQ(n, total);
	}
	CHECK_EQ(view_stop(&sv), 0);
	free(meta);
	free(b);
}

static void copy_file(const char *from, const char *to)
{
	char *cmd = NULL;
	REQUIRE(asprintf(&cmd, "cp '%s' '%s'", from, to) > 0);
	REQUIRE(system(cmd) == 0);
	free(cmd);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "write"))
		return write_parts(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "fresh"))
		return write_fresh(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "lossy"))
		return write_lossy(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "recorded"))
		return write_recorded(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "pingpong"))
		return pingpong(argv[2], argv[3]);
	T_BEGIN(240);
	cli_setup();
	REQUIRE(realpath(argv[0], self) != NULL);
	char *out = NULL, *err = NULL, *info = NULL;
	const char *dir = cli_path("parts");
	char *part[NALL];
	REQUIRE(mkdir(dir, 0700) == 0);
	CHECK_EQ(cli_run((char *const[]){ self, "write", (char *)dir, NULL }, NULL, NULL), 0);
	for (int k = 0; k < NALL; k++)
		REQUIRE(asprintf(&part[k], "%s/w-%d.ptlog", dir, k + 1) > 0);
	CHECK_EQ(cli_run((char *const[]){ self, "fresh", part[NPARTS], NULL }, NULL, NULL), 0);
	CHECK_EQ(cli_run((char *const[]){ self, "lossy", part[NPARTS + 1], NULL }, NULL, NULL), 0);

	/* each part read alone: the reference counts */
	for (int k = 0; k < NALL; k++) {
		struct cli_ev *ev;
		part_n[k] = cli_read_log(part[k], &ev);
		REQUIRE(part_n[k] > 10);
		total += part_n[k];
		starts += cli_count(ev, (int)part_n[k], "posix_trace_start");
		CHECK_EQ(cli_count(ev, (int)part_n[k], "tick"),
		         k < NPARTS ? NTH * PER : k == NPARTS ? PER : 0);
		free(ev);
	}

	/* show: every event once, per thread in order across the parts */
	CHECK_EQ(cli_run(CLI("show", (char *)dir), &out, &err), 0);
	CHECK_EQ(cli_nlines(out), total);
	check_witness("show", out, "t=", "seq=");
	CHECK(!cli_contains(err, "missing"));
	free(out);
	free(err);

	/* the map of loaded code: each part's entries, each once */
	static char objs_parts[1 << 16], objs_set[1 << 16];
	for (int k = 0; k < NALL; k++) {
		CHECK_EQ(cli_run(CLI("info", part[k]), &info, NULL), 0);
		objects_of(info, objs_parts, sizeof objs_parts);
		free(info);
	}
	sort_unique(objs_parts);
	CHECK_EQ(cli_run(CLI("info", (char *)dir), &info, NULL), 0);
	objects_of(info, objs_set, sizeof objs_set);
	free(info);
	cli_sort_lines(objs_set);
	CHECK(objs_parts[0] && !strcmp(objs_parts, objs_set));
	if (strcmp(objs_parts, objs_set))
		fprintf(stderr, "the parts' objects:\n%s\nthe set's:\n%s", objs_parts, objs_set);

	/* the losses of the lossy part: there, as many in the set */
	CHECK_EQ(cli_run(CLI("info", part[NPARTS + 1]), &info, NULL), 0);
	lost = info_lost(info);
	CHECK(lost > 0);
	free(info);

	/* info and stats: the sums; tick one type; the span across the cut */
	CHECK_EQ(cli_run(CLI("info", (char *)dir), &info, NULL), 0);
	CHECK_EQ(info_lost(info), lost);
	CHECK_EQ(info_events(info), total);
	CHECK_EQ(info_type_count(info, "tick"), (long)NTH * NPARTS * PER + PER);
	CHECK_EQ(info_type_count(info, "zzz"), 1);
	CHECK(info_type_id(info, "zzz") > POSIX_TRACE_UNNAMED_USEREVENT); /* a user type's id */
	/* system types keep their ids whatever a part lists */
	CHECK_EQ(info_type_id(info, "posix_trace_start"), POSIX_TRACE_START);
	CHECK_EQ(info_type_count(info, "posix_trace_start"), starts);
	CHECK(starts >= NPARTS + 1); /* (the lossy part's may be overwritten) */
	long eid = info_type_id(info, "posix_trace_error");
	CHECK(eid == -1 || eid == POSIX_TRACE_ERROR);
	CHECK_EQ(count_of(info, ".ptlog ("), NALL); /* the parts listed */
	CHECK(cli_contains(info, "job"));
	free(info);
	CHECK_EQ(cli_run(CLI("stats", "--json", (char *)dir), &out, NULL), 0);
	CHECK(cli_contains(out, "{\"name\":\"job\",\"begin\""));
	const char *j = strstr(out ? out : "", "{\"name\":\"job\",\"begin\"");
	CHECK(j && strstr(j, "\"count\":1,") && strstr(j, "\"incomplete\":0"));
	free(out);
	/* a part alone has half a span: incomplete */
	CHECK_EQ(cli_run(CLI("stats", "--json", part[0]), &out, NULL), 0);
	j = strstr(out ? out : "", "{\"name\":\"job\",\"begin\"");
	CHECK(j && strstr(j, "\"count\":0,"));
	free(out);

	/* several LOG operands: the same as the directory */
	CHECK_EQ(cli_run(CLI("show", part[2], part[0], part[1], part[3], part[5], part[4]), &out, NULL), 0);
	CHECK_EQ(cli_nlines(out), total);
	check_witness("show FILE...", out, "t=", "seq=");
	free(out);

	/* a part named twice, or in its directory and alone: read once */
	CHECK_EQ(cli_run(CLI("show", part[0], part[0]), &out, &err), 0);
	CHECK_EQ(cli_nlines(out), part_n[0]);
	CHECK(cli_contains(err, "read once"));
	free(out);
	free(err);
	CHECK_EQ(cli_run(CLI("show", part[1], (char *)dir), &out, NULL), 0);
	CHECK_EQ(cli_nlines(out), total);
	free(out);

	/* query: the directory is one log; with a file beside it, two */
	int rc = cli_run(CLI("query", "--csv", (char *)dir, "SELECT count(*), count(DISTINCT utid) FROM event"), &out, &err);
	have_query = rc == 0 || !cli_contains(err, "SQLite");
	if (have_query) {
		char want[64];
		CHECK_EQ(rc, 0);
		snprintf(want, sizeof want, "\n%ld,", total);
		CHECK(cli_contains(out, want));
		free(out);
		free(err);
		CHECK_EQ(cli_run(CLI("query", "--csv", (char *)dir, part[0],
		                     "SELECT count(*), count(DISTINCT log) FROM event"), &out, &err), 0);
		snprintf(want, sizeof want, "\n%ld,2", total + part_n[0]);
		CHECK(cli_contains(out, want));
		free(out);
		free(err);
		CHECK_EQ(cli_run(CLI("query", "--csv", (char *)dir,
		                     "SELECT count(*) FROM slice WHERE name = 'job' AND dur > 0"), &out,
		                 &err), 0);
		CHECK(cli_contains(out, "\n1\r\n"));
		free(out);
		free(err);
		out = err = NULL;
		/* the map of loaded code: what the writer's parts repeat, once */
		long objs[NALL + 1];
		for (int k = 0; k <= NALL; k++) {
			CHECK_EQ(cli_run(CLI("query", "--csv", k < NALL ? part[k] : (char *)dir,
			                     "SELECT count(*) FROM object"), &out, NULL), 0);
			const char *nl = out ? strchr(out, '\n') : NULL;
			objs[k] = nl ? strtol(nl + 1, NULL, 10) : -1;
			free(out);
			out = NULL;
		}
		for (int k = 1; k < NPARTS; k++)
			CHECK_EQ(objs[k], objs[0]); /* (one process: the same map in each) */
		CHECK(objs[0] > 0);
		CHECK_EQ(objs[NALL], objs[0] + objs[NPARTS] + objs[NPARTS + 1]);
	} else {
		printf("note: query is not built (no SQLite): not checked\n");
	}
	free(out);
	free(err);

	check_exports(dir, part, NALL);
	check_ctf(dir);
	check_view(dir);
	check_recorded();
	check_overlap();

	/* a missing middle part: said, not an error */
	const char *gap = cli_path("gap");
	REQUIRE(mkdir(gap, 0700) == 0);
	for (int k = 0; k < NALL; k++)
		if (k != 2) {
			char to[600];
			snprintf(to, sizeof to, "%s/w-%d.ptlog", gap, k + 1);
			copy_file(part[k], to);
		}
	CHECK_EQ(cli_run(CLI("show", (char *)gap), &out, &err), 0);
	CHECK_EQ(cli_nlines(out), total - part_n[2]);
	CHECK(cli_contains(err, "w-3.ptlog is missing"));
	free(out);
	free(err);
	CHECK_EQ(cli_run(CLI("info", (char *)gap), &out, NULL), 0);
	CHECK(cli_contains(out, "w-3.ptlog is missing"));
	CHECK_EQ(info_events(out), total - part_n[2]);
	free(out);
	if (have_query) {
		char want[64];
		CHECK_EQ(cli_run(CLI("query", "--csv", (char *)gap, "SELECT count(*) FROM event"),
		                 &out, &err), 0);
		snprintf(want, sizeof want, "\n%ld\r\n", total - part_n[2]);
		CHECK(cli_contains(out, want));
		CHECK(cli_contains(err, "w-3.ptlog is missing"));
		free(out);
		free(err);
	}

	/* bad inputs: exit 1, the file named */
	const char *empty = cli_path("empty");
	REQUIRE(mkdir(empty, 0700) == 0);
	CHECK_EQ(cli_run(CLI("show", (char *)empty), &out, &err), 1);
	CHECK(cli_contains(err, empty) && cli_contains(err, "no logs"));
	free(out);
	free(err);
	const char *junk = cli_path("junk");
	REQUIRE(mkdir(junk, 0700) == 0);
	char jp[600];
	snprintf(jp, sizeof jp, "%s/w-1.ptlog", junk);
	copy_file(part[0], jp);
	snprintf(jp, sizeof jp, "%s/w-2.ptlog", junk);
	FILE *f = fopen(jp, "w");
	REQUIRE(f);
	for (int i = 0; i < 100; i++)
		fputs("this is not a log at all\n", f);
	fclose(f);
	CHECK_EQ(cli_run(CLI("stats", (char *)junk), &out, &err), 1);
	CHECK(cli_contains(err, "w-2.ptlog") && cli_contains(err, "not a posixtrace log"));
	free(out);
	free(err);
	REQUIRE(unlink(jp) == 0);
	REQUIRE(mkfifo(jp, 0600) == 0); /* not a file: refused, without waiting for a writer */
	CHECK_EQ(cli_run(CLI("show", (char *)junk), &out, &err), 1);
	CHECK(cli_contains(err, "w-2.ptlog") && cli_contains(err, "not a regular file"));
	free(out);
	free(err);
	REQUIRE(unlink(jp) == 0);
	REQUIRE(symlink("/nonexistent/w-2.ptlog", jp) == 0); /* a part that cannot be opened */
	CHECK_EQ(cli_run(CLI("info", (char *)junk), &out, &err), 1);
	CHECK(cli_contains(err, "w-2.ptlog") && cli_contains(err, "No such file"));
	free(out);
	free(err);
	CHECK_EQ(cli_run(CLI("export", "-f", "chrome", part[0], "/nonexistent/x.ptlog", "-o",
	                     (char *)cli_path("x.json")), &out, &err), 1);
	CHECK(cli_contains(err, "/nonexistent/x.ptlog"));
	free(out);
	free(err);

	/* a damaged middle part: said, the others read whole, the exit
	 * status that part alone gets */
	const char *dmg = cli_path("damaged");
	REQUIRE(mkdir(dmg, 0700) == 0);
	for (int k = 0; k < NALL; k++) {
		char to[600];
		snprintf(to, sizeof to, "%s/w-%d.ptlog", dmg, k + 1);
		copy_file(part[k], to);
		if (k == 1) { /* bytes in its first events block */
			int fd = open(to, O_RDWR);
			REQUIRE(fd >= 0);
			REQUIRE(pwrite(fd, "\xde\xad\xbe\xef\xde\xad\xbe\xef", 8, 600) == 8);
			close(fd);
		}
	}
	char d2[600];
	snprintf(d2, sizeof d2, "%s/w-2.ptlog", dmg);
	char *alone = NULL;
	int rc_alone = cli_run(CLI("show", d2), &alone, NULL);
	CHECK_EQ(cli_run(CLI("show", (char *)dmg), &out, &err), rc_alone);
	CHECK(cli_contains(err, "w-2.ptlog") && cli_contains(err, "damaged"));
	CHECK_EQ(cli_nlines(out), total - part_n[1] + cli_nlines(alone));
	free(alone);
	free(out);
	free(err);
	for (int k = 0; k < NALL; k++)
		free(part[k]);
	T_END();
}

/*
 * parts_util.h -- what the tests of a recording's parts read as one
 * trace share (cli_parts*.c, cli/read/parts.c): the program that writes
 * the parts itself (run as `TEST write DIR`: one process, NTH threads that
 * live through every part, each event of theirs carrying (thread, seq)
 * with seq counting on across parts; part k a stream with a log of its
 * own, so the parts do not overlap, and a span "job" begins in part 1 and
 * ends in part 2; `TEST fresh FILE` one more part from a new process that
 * registered its types in another order; `TEST lossy FILE` one that
 * loses events; `TEST recorded DIR` and `TEST pingpong A B` for
 * cli_parts.c), the parts written and each read alone (the reference
 * counts: part_n, total, starts, lost), what the tests read of the
 * command's output, and the tests' main.  Needs nothing before it.
 */
#ifndef PT_PARTS_UTIL_H
#define PT_PARTS_UTIL_H
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
static pthread_barrier_t go, done;
static volatile int stop_workers;

static inline void *worker(void *arg)
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
static inline int write_parts(const char *dir)
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
static inline int write_fresh(const char *path)
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
static inline int write_lossy(const char *path)
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
static inline int write_recorded(const char *dir)
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

/* `cli_parts pingpong A B`: two processes, each tracing itself into its
 * own log (A, B), taking turns: A's event k, then B's k, then A's k + 1
 * (pipes hand the turn over), so the two logs overlap all along. */
#define PP 100
static inline int pp_stream(const char *path, trace_event_id_t *e, trace_id_t *t, int *fd)
{
	trace_attr_t a;
	*fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	return *fd < 0 || posix_trace_eventid_open("pp", e) ||
	       posixtrace_eventid_describe(*e, "t:u32,seq:u32") || posix_trace_attr_init(&a) ||
	       posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND) ||
	       posix_trace_create_withlog(0, &a, *fd, t) || posix_trace_start(*t);
}

static inline int pingpong(const char *pa, const char *pb)
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

/* The count of "lost events   N events lost..." in info's output, 0 for
 * "none", -1 if no such line. */
static inline long info_lost(const char *info)
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

static inline long count_of(const char *s, const char *what)
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
static inline long witness(const char *out, const char *tfmt, const char *sfmt, long *seqs, long *bad)
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

static inline void check_witness(const char *what, const char *out, const char *tf, const char *sf)
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
static inline long info_type_count(const char *info, const char *name)
{
	char line[1024], nm[128];
	long c, id;
	for (const char *p = info; cli_next_line(&p, line, sizeof line) == 0;)
		if (sscanf(line, " %ld %ld %127s", &c, &id, nm) == 3 && !strcmp(nm, name))
			return c;
	return -1;
}

/* The id info gives on the row of type name, or -1. */
static inline long info_type_id(const char *info, const char *name)
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
static inline void objects_of(const char *info, char *out, size_t cap)
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
static inline void sort_unique(char *s)
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

static inline long info_events(const char *info)
{
	const char *p = info ? strstr(info, "\nevents ") : NULL;
	return p ? strtol(p + 8, NULL, 10) : -1;
}

/* The parts written into dir (part[k]: their paths, malloc'd), each read
 * alone: the reference counts, and the lossy part's losses. */
static inline void parts_setup(const char *dir, char **part)
{
	char *info = NULL;
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

	/* the losses of the lossy part: there, as many in the set */
	CHECK_EQ(cli_run(CLI("info", part[NPARTS + 1]), &info, NULL), 0);
	lost = info_lost(info);
	CHECK(lost > 0);
	free(info);
}

/* Whether the command has query (built with SQLite: else it says so). */
static inline int parts_have_query(const char *dir)
{
	char *out = NULL, *err = NULL;
	int rc = cli_run(CLI("query", "--csv", (char *)dir, "SELECT count(*) FROM event"), &out, &err);
	int have = rc == 0 || !cli_contains(err, "SQLite");
	free(out);
	free(err);
	return have;
}

/* A test's main: the writing programs when it runs as one, else the
 * parts written (parts_setup) and run() on them, under an alarm. */
static inline int parts_main(int argc, char **argv, void (*run)(const char *dir, char *const *part))
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
	const char *dir = cli_path("parts");
	char *part[NALL];
	parts_setup(dir, part);
	run(dir, part);
	for (int k = 0; k < NALL; k++)
		free(part[k]);
	T_END();
}
#endif

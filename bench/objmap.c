/*
 * objmap.c -- what the map of loaded code costs at start, for a program
 * with 100 shared objects of its own (generated here: 100 tiny .so files,
 * each with a build-id) against the same program with none.
 *
 *   constructor: the library's constructors at load (the control segment,
 *                and the table of loaded objects: dl_iterate_phdr and the
 *                build-ids read from memory), timed inside the program
 *                from a constructor of priority 101 to one of 103;
 *   start:       posix_trace_start() of a stream the program made for
 *                itself: it maps the stream and writes its whole map into
 *                it (the program's path, headers and build-ids read then);
 *   first event: from before posix_trace_create(pid) to the moment the
 *                controller holds the program's first event; the program
 *                writes its whole map into the stream before that event
 *                (two processes: noisier).
 *
 * Medians of 21 rounds, each a new process.  Needs a C compiler (cc).
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <trace.h>
#include "bench_util.h"
#include <unistd.h>

#ifndef PT_BUILD_DIR
#define PT_BUILD_DIR "build"
#endif
#define ROUNDS 21
#define NLIBS  100

static char dir[64];


static const char prog_c[] =
	"#include <stdio.h>\n"
	"#include <time.h>\n"
	"#include <trace.h>\n"
	"static struct timespec t0, t1;\n"
	"__attribute__((constructor(101))) static void c0(void) { clock_gettime(CLOCK_MONOTONIC, &t0); }\n"
	"__attribute__((constructor(103))) static void c1(void) { clock_gettime(CLOCK_MONOTONIC, &t1); }\n"
	"#ifdef LIBS\n"
	"#define X(n) extern int f##n(void);\n"
	"LIBS\n"
	"#undef X\n"
	"#endif\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\tint s = 0;\n"
	"#ifdef LIBS\n"
	"#define X(n) s += f##n();\n"
	"\tLIBS\n"
	"#endif\n"
	"\tif (argc > 1 && argv[1][0] == 'c') {\n"
	"\t\tprintf(\"%ld %d\\n\", (t1.tv_sec - t0.tv_sec) * 1000000000L + t1.tv_nsec - t0.tv_nsec, s);\n"
	"\t\treturn 0;\n"
	"\t}\n"
	"\tif (argc > 1) {\n"
	"\t\ttrace_attr_t a;\n"
	"\t\ttrace_id_t t;\n"
	"\t\tposix_trace_attr_init(&a);\n"
	"\t\tif (posix_trace_create(0, &a, &t))\n"
	"\t\t\treturn 1;\n"
	"\t\tclock_gettime(CLOCK_MONOTONIC, &t0);\n"
	"\t\tposix_trace_start(t);\n"
	"\t\tclock_gettime(CLOCK_MONOTONIC, &t1);\n"
	"\t\tprintf(\"%ld %d\\n\", (t1.tv_sec - t0.tv_sec) * 1000000000L + t1.tv_nsec - t0.tv_nsec, s);\n"
	"\t\treturn posix_trace_shutdown(t) != 0;\n"
	"\t}\n"
	"\ttrace_event_id_t e;\n"
	"\tstruct timespec us = { 0, 1000 };\n"
	"\tposix_trace_eventid_open(\"tick\", &e);\n"
	"\tfor (;;) {\n"
	"\t\tposix_trace_event(e, &s, sizeof s);\n"
	"\t\tnanosleep(&us, NULL);\n"
	"\t}\n"
	"}\n";

static int sh(const char *cmd)
{
	int rc = system(cmd);
	if (rc != 0)
		fprintf(stderr, "objmap bench: failed: %s\n", cmd);
	return rc;
}

/* 100 libraries, and the program with them (p100) and without (p0) */
static int generate(void)
{
	char cmd[8192], path[128], libs[4096] = "", xs[2048] = "";
	FILE *f;

	for (int i = 0; i < NLIBS; i++) {
		snprintf(path, sizeof path, "%s/l%d.c", dir, i);
		if (!(f = fopen(path, "w")))
			return -1;
		fprintf(f, "int f%d(void);\nint f%d(void) { return %d; }\n", i, i, i);
		fclose(f);
		snprintf(cmd, sizeof cmd, "cc -shared -fPIC -O1 -Wl,--build-id %s -o %s/libl%d.so", path,
		         dir, i);
		if (sh(cmd))
			return -1;
		size_t n = strlen(libs);
		snprintf(libs + n, sizeof libs - n, " -ll%d", i);
		n = strlen(xs);
		snprintf(xs + n, sizeof xs - n, "X(%d)", i);
	}
	snprintf(path, sizeof path, "%s/p.c", dir);
	if (!(f = fopen(path, "w")))
		return -1;
	fputs(prog_c, f);
	fclose(f);
	snprintf(cmd, sizeof cmd,
	         "cc -O1 -I'%s/../include' -DLIBS='%s' %s -o %s/p100 -L%s -Wl,--no-as-needed%s "
	         "-Wl,-rpath,%s '%s/libposixtrace.a' -lpthread",
	         PT_BUILD_DIR, xs, path, dir, dir, libs, dir, PT_BUILD_DIR);
	if (sh(cmd))
		return -1;
	snprintf(cmd, sizeof cmd, "cc -O1 -I'%s/../include' %s -o %s/p0 '%s/libposixtrace.a' -lpthread",
	         PT_BUILD_DIR, path, dir, PT_BUILD_DIR);
	return sh(cmd);
}

/* what the program prints when run with arg (ns), median, in us */
static double run_us(const char *prog, const char *arg)
{
	double v[ROUNDS];
	char cmd[256], line[64];

	snprintf(cmd, sizeof cmd, "%s/%s %s", dir, prog, arg);
	for (int r = 0; r < ROUNDS; r++) {
		FILE *p = popen(cmd, "r");
		long ns = -1;
		if (!p || !fgets(line, sizeof line, p) || sscanf(line, "%ld", &ns) != 1)
			ns = -1;
		if (p)
			pclose(p);
		v[r] = (double)ns / 1e3;
	}
	qsort(v, ROUNDS, sizeof v[0], bench_cmp_double);
	return v[ROUNDS / 2];
}

static double first_event_us(const char *prog)
{
	double v[ROUNDS];
	char path[128];

	snprintf(path, sizeof path, "%s/%s", dir, prog);
	for (int r = 0; r < ROUNDS; r++) {
		pid_t pid = fork();
		if (pid == 0) {
			execl(path, path, (char *)NULL);
			_exit(127);
		}
		usleep(50000); /* started, recording into nothing */
		trace_attr_t a;
		trace_id_t t;
		struct posix_trace_event_info ev;
		char buf[64];
		size_t len;
		int none;
		posix_trace_attr_init(&a);
		double t0 = bench_now_us();
		v[r] = -1;
		if (posix_trace_create(pid, &a, &t) == 0) {
			/* at most 10 s: a stream made while the program was still
			 * in its exec can be lost (docs/design.md, "Races"); such a
			 * round counts -1 and is said, rather than waited for ever */
			struct timespec dl;
			int rc, got = 0;
			clock_gettime(CLOCK_REALTIME, &dl);
			dl.tv_sec += 10;
			posix_trace_start(t);
			while ((rc = posix_trace_timedgetnext_event(t, &ev, buf, sizeof buf, &len, &none,
			                                            &dl)) == 0)
				if (!none && ev.posix_pid == pid) {
					got = 1;
					break;
				}
			if (got)
				v[r] = bench_now_us() - t0;
			else
				fprintf(stderr, "objmap bench: no event from %s in 10 s (%s)\n", prog,
				        strerror(rc));
			posix_trace_shutdown(t);
		}
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	qsort(v, ROUNDS, sizeof v[0], bench_cmp_double);
	return v[ROUNDS / 2];
}

int main(void)
{
	snprintf(dir, sizeof dir, "/tmp/pt-objmap-XXXXXX");
	if (!mkdtemp(dir) || generate() != 0)
		return 1;
	double c0 = run_us("p0", "c"), c100 = run_us("p100", "c");
	double s0 = run_us("p0", "s"), s100 = run_us("p100", "s");
	double f0 = first_event_us("p0"), f100 = first_event_us("p100");
	printf("map of loaded code, medians of %d (%d more shared objects):\n", ROUNDS, NLIBS);
	printf("  %-24s %9.1f us  %9.1f us  (%+.1f us)\n", "constructors (load)", c0, c100, c100 - c0);
	printf("  %-24s %9.1f us  %9.1f us  (%+.1f us)\n", "posix_trace_start (own)", s0, s100,
	       s100 - s0);
	printf("  %-24s %9.1f us  %9.1f us  (%+.1f us)\n", "create to first event", f0, f100,
	       f100 - f0);
	bench_json("objmap", "constructors", "us_0", c0, "us_100", c100, NULL);
	bench_json("objmap", "posix_trace_start", "us_0", s0, "us_100", s100, NULL);
	bench_json("objmap", "create to first event", "us_0", f0, "us_100", f100, NULL);
	char cmd[128];
	if (getenv("PT_KEEP")) {
		printf("  (programs kept in %s)\n", dir);
		return 0;
	}
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) != 0;
}

/*
 * cli_perfetto.c -- `posixtrace export --format perfetto` of a program
 * recorded whole, decoded by an independent decoder, protoc, against
 * Perfetto's published schema (../shared/formats/perfetto/perfetto_trace.proto
 * beside the repository, README there), and every count checked.
 *
 * Exports are compressed (built with zlib, as the command is): the test
 * first inflates every container as trace_processor does (each alone,
 * whole packets in it, below 512 KB), then decodes.
 *
 * The export holds a process descriptor per pid and a thread descriptor
 * per thread; on each thread's sequence the events of the log for that
 * thread, in order, at the same ns (the incremental timestamps added up),
 * with the interned names the log has; alpha's payload is exactly the
 * program's, in order; every interned name and source location resolves
 * in its sequence; each user event's source location is the program's
 * function, and (with libdw) the file and the line the program printed
 * (without: the program's file, at an offset).
 * Per type and thread the counts are info's and the program's.  When the
 * published schema is there, tests/perfetto_min.proto (the repository's
 * own copy of the few messages read here) is checked against it, every
 * field the same type, name and number, and the export decoded with both.
 * Decoded against the published schema when it is beside the repository,
 * else against tests/perfetto_min.proto alone: a clone checks its exports
 * too (pf_util.h).  Skipped without protoc.  Its shared parts, the traced
 * program and the decoder: pf_export_util.h.
 */
#include <trace.h>
#include "t.h"
#include "helpers.h"
#include "cli_util.h"
#include "pf_util.h"
#include "pf_export_util.h"

/* info's count for a line "       N    ID  NAME" of its type table */
static long long info_type_count(const char *info, const char *name)
{
	char l[512], nm[128];
	long long n;
	unsigned id;
	for (int i = 0; cli_line(info, i, l, sizeof l) == 0; i++)
		if (sscanf(l, " %lld %u %127s", &n, &id, nm) == 3 && !strcmp(nm, name))
			return n;
	return -1;
}

static void run_whole(const char *self)
{
	char *out = NULL, *err = NULL, *info = NULL;
	struct cli_ev *ev;
	struct x x;
	int pids[NPROC] = { 0 };

	const char *log = cli_path("whole.ptlog");
	CHECK_EQ(cli_run(CLI("record", "--force", "-o", (char *)log, "--", (char *)self, "workload",
	                     "1"), &out, &err), 0);
	for (int i = 0; out && i < 64; i++) {
		char l[128];
		int p, pid;
		if (cli_line(out, i, l, sizeof l) != 0)
			break;
		if (sscanf(l, "proc %d pid %d", &p, &pid) == 2 && p >= 0 && p < NPROC)
			pids[p] = pid;
		if (sscanf(l, "lines alpha %d beta %d gamma %d", &want_line[0], &want_line[1],
		           &want_line[2]) == 3)
			lines_known = 1;
	}
	read_witness(out);
	CHECK_EQ(nwit, NPROC * (NTHR + 1));
	free(out);
	free(err);
	for (int p = 0; p < NPROC; p++)
		CHECK(pids[p] > 0);
	CHECK(lines_known && want_line[0] > 0 && want_line[1] > 0 && want_line[2] > 0);
	want_dwarf = cli_has_libdw();
	snprintf(want_obj, sizeof want_obj, "%s+0x", strrchr(self, '/') + 1);
	int n = cli_read_log(log, &ev);
	REQUIRE(export_decode(log, cli_path("whole.pftrace"), cli_path("whole.txt"), &x, &err) == 0);
	free(err);
	CHECK_EQ(x.unresolved, 0);
	CHECK_EQ(x.cleared_late, 0);
	CHECK_EQ(x.resnapshot, 0);
	CHECK_EQ((long long)x.events, n);
	int threads = check_threads(&x, ev, n);
	CHECK_EQ(x.nthread, threads);
	CHECK_EQ(x.lost_instants, 0);

	/* per process: its descriptor, named after the program; 4 threads;
	 * per thread (the program's plan): alpha, beta, gamma */
	int procs = 0;
	for (int i = 0; i < n; i++) {
		int seen = 0;
		for (int j = 0; j < i && !seen; j++)
			seen = ev[j].info.posix_pid == ev[i].info.posix_pid;
		procs += !seen && ev[i].info.posix_pid != 0;
	}
	CHECK_EQ(x.nproc, procs);
	unsigned want_alpha = 0;
	for (int p = 0; p < NPROC; p++) {
		int found = 0, nthreads = 0;
		for (int t = 0; t < x.nt; t++) {
			found += x.t[t].pid == pids[p] && x.t[t].tid == 0 && !strcmp(x.t[t].name, "cli_perfetto");
			if (x.t[t].pid == pids[p] && x.t[t].tid) {
				nthreads++;
				/* the TID and name the thread said it had */
				int ok = 0;
				for (int i = 0; i < nwit; i++)
					ok |= wit[i].pid == pids[p] && (int64_t)wit[i].tid == x.t[t].tid &&
					      !strcmp(wit[i].name, x.t[t].name);
				if (!ok)
					fprintf(stderr, "track %d/%llu \"%s\": no thread said so\n", pids[p],
					        (unsigned long long)x.t[t].tid, x.t[t].name);
				CHECK(ok);
			}
		}
		CHECK_EQ(found, 1);
		CHECK_EQ(nthreads, NTHR + 1);
		int matched = 0, gamma = 0;
		for (int i = 0; i < x.nt; i++) {
			struct xtrack *t = &x.t[i];
			if (t->pid != pids[p] || !t->tid)
				continue;
			int a = 0, b = 0, g = 0;
			for (int e = 0; e < t->ne; e++) {
				a += !strcmp(t->e[e].name, "alpha");
				b += !strcmp(t->e[e].name, "beta");
				g += !strcmp(t->e[e].name, "gamma");
			}
			CHECK_EQ(t->alpha_bad, 0);
			CHECK_EQ(t->beta_bad, 0);
			CHECK_EQ(t->gamma_bad, 0);
			CHECK_EQ(t->sym_bad, 0);
			CHECK_EQ(t->sym_named, a + b + g);
			CHECK_EQ(t->line_bad, 0);
			gamma += g;
			for (int k = 0; k < NTHR; k++)
				if (a == (int)plan(p, k, 1) && b == 1 && g == 0)
					matched |= 1 << k;
		}
		CHECK_EQ(matched, (1 << NTHR) - 1);
		CHECK_EQ(gamma, 1);
		for (int k = 0; k < NTHR; k++)
			want_alpha += plan(p, k, 1);
	}
	/* per type, all sequences: the program's counts and info's */
	CHECK_EQ(cli_run(CLI("info", (char *)log), &info, NULL), 0);
	static const char *const types[] = { "alpha", "beta", "gamma", "posix_trace_start",
	                                     "posix_trace_stop" };
	long long want[] = { want_alpha, NPROC * NTHR, NPROC, 1, 1 };
	for (int i = 0; i < 5; i++) {
		long long c = 0;
		for (int t = 0; t < x.nt; t++)
			for (int e = 0; e < x.t[t].ne; e++)
				c += !strcmp(x.t[t].e[e].name, types[i]);
		CHECK_EQ(c, want[i]);
		CHECK_EQ(info_type_count(info, types[i]), c);
	}
	lines_known = 0; /* (a stream that wraps can lose the map of loaded code) */
	free(info);
	free_x(&x);
	free(ev);
}

static void run(const char *self)
{
	if (schema_published)
		CHECK_EQ(min_schema_agrees(), 0);
	run_whole(self);
	if (schema_published) { /* what a clone alone decodes with: the same checks pass */
		pf_min_schema();
		run_whole(self);
	}
}

int main(int argc, char **argv)
{
	return pf_main(argc, argv, run);
}

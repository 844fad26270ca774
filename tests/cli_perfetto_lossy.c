/*
 * cli_perfetto_lossy.c -- `posixtrace export --format perfetto` of the
 * program of cli_perfetto.c with 20x more events into a 4 KB stream that
 * wraps: the "events lost" counts add up to the loss info reports, and to
 * the program's own count minus what the log kept; the counter track ends
 * at it; each thread's events are the log's.
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

/* The program's own: plan total, and the controller's events, of which
 * one overwritten is one more lost (as in cli_loss). */
static void run_lossy(const char *self)
{
	char *out = NULL, *err = NULL, want[200];
	struct cli_ev *ev;
	struct x x;
	const int scale = 20;

	const char *log = cli_path("lossy.ptlog");
	CHECK_EQ(cli_run(CLI("record", "-o", (char *)log, "--policy", "loop", "--size", "4K", "--",
	                     (char *)self, "workload", "20"), &out, &err), 0);
	read_witness(out);
	free(out);
	out = NULL;
	free(err);
	int n = cli_read_log(log, &ev);
	int gaps = cli_count(ev, n, "posix_trace_overflow");
	CHECK(gaps > 0);
	long long program = 0;
	for (int p = 0; p < NPROC; p++)
		for (int k = 0; k < NTHR; k++)
			program += plan(p, k, scale) + 1; /* alpha, beta */
	program += NPROC;                          /* gamma */
	long long kept = cli_count(ev, n, "alpha") + cli_count(ev, n, "beta") +
	                 cli_count(ev, n, "gamma");
	static const char *const sys[] = { "posix_trace_start", "posix_trace_stop",
	                                   "posix_trace_flush_start", "posix_trace_flush_stop" };
	int sys_lost = 0;
	for (int i = 0; i < 4; i++)
		sys_lost += cli_count(ev, n, sys[i]) == 0;
	long long lost = program - kept + sys_lost;
	CHECK(kept < program);
	CHECK_EQ(cli_run(CLI("info", (char *)log), &out, NULL), 0);
	snprintf(want, sizeof want, "lost events   %lld events lost in %d gap", lost, gaps);
	CHECK(cli_contains(out, want));
	if (!cli_contains(out, want))
		fprintf(stderr, "want \"%s\" in:\n%s\n", want, out);
	free(out);

	REQUIRE(export_decode(log, cli_path("lossy.pftrace"), cli_path("lossy.txt"), &x, &err) == 0);
	free(err);
	CHECK_EQ(x.unresolved, 0);
	CHECK_EQ((long long)x.events, n);
	CHECK_EQ(check_threads(&x, ev, n), x.nthread + 1); /* + the synthesized events' track */
	CHECK_EQ((long long)x.lost_sum, lost);
	CHECK_EQ((long long)x.lost_counter, lost);
	CHECK(x.lost_instants >= 1 && x.lost_instants <= gaps + 1);
	int counters = 0;
	for (int t = 0; t < x.nt; t++)
		counters += x.t[t].counter && !strcmp(x.t[t].name, "lost events");
	CHECK_EQ(counters, 1);
	free_x(&x);
	free(ev);
}

int main(int argc, char **argv)
{
	return pf_main(argc, argv, run_lossy);
}

/*
 * cli_perfetto_damaged.c -- `posixtrace export --format perfetto` of a log
 * (of the program of cli_perfetto.c, 100x more events) cut short and
 * damaged: exported with both said, decoded, the reader's events (its
 * ERROR for the damaged stretch included) on their threads.
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

/* A log cut short, and with bytes overwritten in the middle: the export
 * says so and holds what the reader returns. */
static void run_damaged(const char *self)
{
	char *err = NULL, *out = NULL;
	struct cli_ev *ev;
	struct x x;
	struct stat sb;

	const char *log = cli_path("cut.ptlog");
	CHECK_EQ(cli_run(CLI("record", "-o", (char *)log, "--", (char *)self, "workload", "100"), &out,
	                 &err), 0);
	read_witness(out);
	free(out);
	out = NULL;
	free(err);
	REQUIRE(stat(log, &sb) == 0);
	REQUIRE(truncate(log, sb.st_size * 2 / 3) == 0);
	int fd = open(log, O_WRONLY);
	REQUIRE(fd >= 0);
	static const unsigned char junk[64] = { 0xde, 0xad, 0xbe, 0xef, 0x55, 0xaa };
	REQUIRE(pwrite(fd, junk, sizeof junk, sb.st_size / 3) == (ssize_t)sizeof junk);
	close(fd);
	int n = cli_read_log(log, &ev);
	REQUIRE(export_decode(log, cli_path("cut.pftrace"), cli_path("cut.txt"), &x, &err) == 0);
	CHECK(cli_contains(err, "cut short"));
	CHECK(cli_contains(err, "1 damaged stretch"));
	int errors = 0;
	for (int i = 0; i < n; i++)
		errors += !strcmp(log_name(&ev[i]), "posix_trace_error");
	CHECK_EQ(errors, 1);
	free(err);
	CHECK_EQ(x.unresolved, 0);
	CHECK_EQ((long long)x.events, n);
	CHECK(n > 0);
	check_threads(&x, ev, n);
	free_x(&x);
	free(ev);
}

int main(int argc, char **argv)
{
	return pf_main(argc, argv, run_damaged);
}

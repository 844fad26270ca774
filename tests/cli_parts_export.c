/*
 * cli_parts_export.c -- a recording's parts exported and viewed as one
 * trace (cli/read/parts.c), against the parts' own.
 *
 *  - export chrome and perfetto: as many instant events as the parts'
 *    exports together; ctf read by babeltrace2 (when installed): every
 *    event, the seqs in order per thread.
 *  - view (when built with libmicrohttpd): /meta counts every event, the
 *    density of the whole trace sums to them.
 * The parts and their witness: parts_util.h.
 */
#include <dirent.h>
#include <pthread.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "view_http.h"
#include "parts_util.h"

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
			n = view_density_sum(b);
		}
		CHECK_EQ(n, total);
	}
	CHECK_EQ(view_stop(&sv), 0);
	free(meta);
	free(b);
}

static void run(const char *dir, char *const *part)
{
	check_exports(dir, part, NALL);
	check_ctf(dir);
	check_view(dir);
}

int main(int argc, char **argv)
{
	return parts_main(argc, argv, run);
}

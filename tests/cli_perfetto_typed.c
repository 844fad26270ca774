/*
 * cli_perfetto_typed.c -- `posixtrace export --format perfetto` of
 * examples/app's described payloads: debug annotations by field name,
 * with the values the app sent; decoded with the published schema and
 * with the repository's own few messages when both are there.
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

/* 5. examples/app's described "reply" payloads: each event's debug
 * annotations are its fields by name, with the values the app sent. */
static void run_typed(void)
{
	const char *log = cli_path("typed.ptlog"), *pf = cli_path("typed.pftrace");
	const char *txt = cli_path("typed.txt");
	struct cli_ev *ev;
	char cmd[2200], line[512];

	REQUIRE(cli_record_app(log, "0") == 0);
	int n = cli_read_log(log, &ev);
	CHECK_EQ(cli_run(CLI("export", "-f", "perfetto", "--no-compress", "--force", (char *)log, "-o", (char *)pf),
	                 NULL, NULL), 0);
	snprintf(cmd, sizeof cmd, "'%s' --decode=perfetto.protos.Trace -I '%s' '%s' "
	         "< '%s' > '%s'", protoc, schema_dir, schema_file, pf, txt);
	CHECK_EQ(system(cmd), 0);
	char *t = cli_slurp(txt), *want = cli_app_replies(ev, n), *got = calloc((size_t)n + 1, 64);
	REQUIRE(t && got);
	/* protoc prints an annotation's value, then its name */
	static const char *const names[] = { "\"worker\"", "\"round\"", "\"status\"", "\"bytes\"" };
	long long v = 0, f[4] = { 0 };
	int k = 0;
	for (int i = 0, o = 0; cli_line(t, i, line, sizeof line) == 0; i++) {
		const char *p = line + strspn(line, " ");
		if (sscanf(p, "int_value: %lld", &v) == 1 || sscanf(p, "uint_value: %lld", &v) == 1)
			continue;
		if (strncmp(p, "name: ", 6))
			continue;
		if (k < 4 && !strcmp(p + 6, names[k]))
			f[k++] = v;
		else
			k = 0;
		if (k == 4) {
			o += sprintf(got + o, "%lld %lld %lld %lld\n", f[0], f[1], f[2], f[3]);
			k = 0;
		}
	}
	cli_sort_lines(got);
	CHECK(want[0] && !strcmp(got, want));
	if (strcmp(got, want))
		fprintf(stderr, "Perfetto reply annotations:\n%s\nthe app sent:\n%s", got, want);
	free(t);
	free(want);
	free(got);
	free(ev);
}

static void run(const char *self)
{
	(void)self;
	run_typed();
	if (schema_published) { /* what a clone alone decodes with: the same checks pass */
		pf_min_schema();
		run_typed();
	}
}

int main(int argc, char **argv)
{
	return pf_main(argc, argv, run);
}

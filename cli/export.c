/*
 * export.c -- `posixtrace export --format FMT FILE -o OUT`: the command
 * line, the output file (never overwritten without --force), and the
 * helpers the exporters share.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

static const char help[] =
"usage: posixtrace export --format FORMAT FILE [-o OUT] [--force]\n"
"\n"
"Convert the trace log FILE.  Formats:\n"
"  chrome   Chrome Trace Event Format JSON (chrome://tracing, Perfetto UI):\n"
"           one instant event per trace event, process and thread names\n"
"  html     one self-contained HTML page: a timeline with a lane per\n"
"           thread, events colored by type, details on hover, zoom with the\n"
"           mouse wheel or the buttons, and a summary table\n"
"  ctf      a CTF 1.8 trace directory (metadata + one stream file) for\n"
"           babeltrace2 and Trace Compass; each event's address also as\n"
"           function+offset (file:line) in its field `symbol`\n"
"\n"
"  -f, --format FORMAT   chrome, html or ctf\n"
"  -o, --output OUT      default: FILE with .json, .html or .ctf instead of .ptlog\n"
"      --force           replace OUT if it exists\n"
"      --raw-addresses   do not symbolize addresses (ctf: no symbol field)\n"
"  -h, --help            this help\n";

static char *default_out(const char *in, const char *ext)
{
	size_t n = strlen(in);
	const char *dot = n > 6 && !strcmp(in + n - 6, ".ptlog") ? in + n - 6 : in + n;
	char *s = malloc((size_t)(dot - in) + strlen(ext) + 1);
	if (!s)
		return NULL;
	memcpy(s, in, (size_t)(dot - in));
	strcpy(s + (dot - in), ext);
	return s;
}

int cmd_export(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'F' },
		{ "raw-addresses", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *fmt = NULL, *out = NULL;
	int c, force = 0, raw = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "hf:o:", lopts, NULL)) != -1) {
		switch (c) {
		case 'h': fputs(help, stdout); return 0;
		case 'f': fmt = optarg; break;
		case 'o': out = optarg; break;
		case 'F': force = 1; break;
		case 'R': raw = 1; break;
		default: return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (!fmt)
		return usage_error("which format? --format chrome, html or ctf");
	if (strcmp(fmt, "chrome") && strcmp(fmt, "html") && strcmp(fmt, "ctf"))
		return usage_error("--format: '%s' is not chrome, html or ctf", fmt);
	if (optind != argc - 1)
		return usage_error(optind >= argc ? "which log? give a FILE" : "one FILE at a time");
	const char *in = argv[optind];
	char *dflt = NULL;
	if (!out)
		out = dflt = default_out(in, !strcmp(fmt, "chrome") ? ".json"
		                             : !strcmp(fmt, "html") ? ".html" : ".ctf");

	struct tlog l;
	if (tlog_load(&l, in)) {
		free(dflt);
		return 1;
	}
	tlog_warn(&l); /* a cut-short or damaged log exports what it holds */
	struct symz *z = raw ? NULL : symz_open(&l, in, 0);
	int rc;
	if (!strcmp(fmt, "ctf")) {
		rc = export_ctf(&l, z, out, force);
	} else {
		int fd = create_output(out, force);
		FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
		if (!f) {
			rc = 1;
		} else {
			rc = !strcmp(fmt, "chrome") ? export_chrome(&l, z, f) : export_html(&l, z, f);
			if (ferror(f) | fclose(f)) {
				err_msg("writing %s: %s", out, strerror(errno));
				rc = 1;
			}
			if (rc)
				unlink(out);
		}
	}
	if (rc == 0 && isatty(STDERR_FILENO))
		fprintf(stderr, "%s: wrote %s\n", prog_cmd, out);
	if (z)
		symz_close(z);
	tlog_free(&l);
	free(dflt);
	return rc;
}

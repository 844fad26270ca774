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
#include "cmd.h"

static const char help[] =
"usage: posixtrace export --format FORMAT LOG... [-o OUT] [--force] [FILTERS]\n"
"\n"
"LOG: a log file; or a directory, whose *.ptlog files (the parts of one\n"
"recording, as record --rotate cuts it) are read as one trace, in the\n"
"order of their first events; or several logs, read the same way.\n"
"\n"
"Convert the trace in LOG.  Formats:\n"
"  chrome   Chrome Trace Event Format JSON (chrome://tracing, Perfetto UI):\n"
"           one instant event per trace event, process and thread names,\n"
"           a slice per span (NAME/begin..NAME/end, or --span)\n"
"  html     one self-contained HTML page: a timeline with a lane per\n"
"           thread, events colored by type, details on hover, zoom with the\n"
"           mouse wheel or the buttons, and a summary table; spans as bars\n"
"           on the lanes, and per span a latency histogram and p99 over time\n"
"  ctf      a CTF 1.8 trace directory (metadata + one stream file per\n"
"           thread) for babeltrace2 and Trace Compass; each event's call\n"
"           site in its field `site`: a number, labelled once in the\n"
"           metadata with the address and function+offset (file:line)\n"
"  perfetto Perfetto's protobuf trace (.pftrace) for ui.perfetto.dev and\n"
"           trace_processor: a track per process and thread, an instant per\n"
"           event with its payload as arguments and its symbol as source\n"
"           location, lost events, a slice per span (on its thread's track;\n"
"           keyed spans on tracks NAME #1, #2...); packets compressed with zlib\n"
"\n"
"  -f, --format FORMAT   chrome, html, ctf or perfetto\n"
"  -o, --output OUT      default: LOG (the first) with .json, .html, .ctf or .pftrace\n"
"                        instead of .ptlog\n"
"      --force           replace OUT if it exists\n"
"      --from T, --to T  html: draw every event of this window (seconds since\n"
"                        time 0, a UTC time, or @EPOCH as in show);\n"
"                        a log of more than 200 000 events gets the overview\n"
"                        of the whole trace and a window: by default as much\n"
"                        of its start as holds 200 000 events\n"
"      --raw-addresses   do not symbolize addresses (ctf: the address in\n"
"                        its field `addr`, no site;\n"
"                        perfetto: the address in hex is the symbol)\n"
"      --no-compress     perfetto: plain packets (a build without zlib\n"
"                        writes only those, and says so)\n"
"  -h, --help            this help\n"
"      --span BEGIN,END[,NAME][,key[=FIELD]]\n"
"                        chrome, perfetto, html: pair two more types as spans\n"
"                        (see posixtrace stats --help)\n"
"html labels times from time 0 (--t0); chrome counts its ts from the trace's\n"
"first event (viewers refuse negative ones, and show times from the start);\n"
"ctf and perfetto carry absolute times.\n"
"With filters, only the events they keep are exported (and spans are made\n"
"of those).  Every format names a thread as show does: its kernel TID and\n"
"its name (ctf: vtid and procname... see posixtrace(1)).\n";

static char *default_out(const char *in, const char *ext)
{
	size_t n = strlen(in);
	while (n > 1 && in[n - 1] == '/') /* a directory: DIR.ctf beside it */
		n--;
	const char *dot = n > 6 && !strncmp(in + n - 6, ".ptlog", 6) ? in + n - 6 : in + n;
	char *s = malloc((size_t)(dot - in) + strlen(ext) + 1);
	if (!s)
		return NULL;
	memcpy(s, in, (size_t)(dot - in));
	strcpy(s + (dot - in), ext);
	return s;
}

/* What the command line asks. */
struct export_opts {
	const char *fmt, *out, *in;
	int force, raw, plain, have_from, have_to;
	struct when from, to;
	struct span_args sa;
};

/* The options into o (the filters into filt); -1 to go on, else the exit
 * status. */
static int export_options(int argc, char **argv, struct export_opts *o, struct evfilter *filt)
{
	static const struct option lopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'F' },
		{ "raw-addresses", no_argument, NULL, 'R' },
		{ "from", required_argument, NULL, 'A' },
		{ "to", required_argument, NULL, 'B' },
		{ "span", required_argument, NULL, 'S' },
		{ "no-compress", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		FILTER_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "hf:o:", lopts, NULL)) != -1) {
		switch (c) {
		case 'h': fputs(help, stdout); fputs(filter_help, stdout); front_help(stdout, 24, 1); return 0;
		case FILT_PID: case FILT_THREAD: case FILT_TID: case FILT_NAME: case FILT_TYPE:
		case FILT_EXCLUDE: case FILT_WHERE:
			if ((c = filter_option(filt, c, optarg)) != 0)
				return c;
			break;
		case 'f': o->fmt = optarg; break;
		case 'o': o->out = optarg; break;
		case 'F': o->force = 1; break;
		case 'R': o->raw = 1; break;
		case 'A':
		case 'B':
			if (parse_when(optarg, c == 'A' ? &o->from : &o->to))
				return usage_error("%s: '%s' is not a time (seconds since the first event, "
				                   "a UTC time like 2026-11-27T15:04:05Z, or @EPOCH)",
				                   c == 'A' ? "--from" : "--to", optarg);
			*(c == 'A' ? &o->have_from : &o->have_to) = 1;
			break;
		case 'S':
			if (span_arg(&o->sa, optarg))
				return EXIT_USAGE;
			break;
		case 'P': o->plain = 1; break;
		default: return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	const char *fmt = o->fmt;
	if (!fmt)
		return usage_error("which format? --format chrome, html, ctf or perfetto");
	if (strcmp(fmt, "chrome") && strcmp(fmt, "html") && strcmp(fmt, "ctf") &&
	    strcmp(fmt, "perfetto"))
		return usage_error("--format: '%s' is not chrome, html, ctf or perfetto", fmt);
	if (o->plain && strcmp(fmt, "perfetto"))
		return usage_error("--no-compress is for --format perfetto");
	if (optind >= argc)
		return usage_error("which log? give a FILE (or a directory of parts, or several logs)");
	if ((o->have_from || o->have_to) && strcmp(fmt, "html"))
		return usage_error("--from and --to are for --format html");
	o->in = tlog_operands(argc - optind, argv + optind);
	return -1;
}

/* The trace in its format at o->out: a CTF directory, or a file (removed
 * when it could not be written whole).  0, or 1 after a message. */
static int export_write(const struct export_opts *o, struct tlog *l, struct symz *z,
                        struct spans *sp, uint64_t t0)
{
	const char *fmt = o->fmt, *out = o->out;
	int rc;

	if (!strcmp(fmt, "ctf"))
		return export_ctf(l, z, out, o->force);
	int fd = create_output(out, o->force);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f)
		return 1;
	rc = !strcmp(fmt, "chrome") ? export_chrome(l, z, sp, f)
	     : !strcmp(fmt, "html")
	         ? export_html(l, z, sp, f, t0, o->have_from ? when_ns(&o->from, t0) : 0,
	                       o->have_to ? when_ns(&o->to, t0) : UINT64_MAX)
	     : export_perfetto(l, z, sp, f, o->plain);
	int e = rc < 0 ? errno : 0; /* (perfetto: writing, or out of memory) */
	if ((ferror(f) | fclose(f)) && !e)
		e = errno;
	if (rc < 0 || e) {
		err_msg("writing %s: %s", out, strerror(e));
		rc = 1;
	}
	if (rc)
		unlink(out);
	return rc;
}

int cmd_export(int argc, char **argv, const struct tlog_front *front)
{
	static struct evfilter filt;
	struct export_opts o = { .fmt = NULL };
	struct spans *sp;
	struct tlog l;
	char *dflt = NULL;
	int c;

	if ((c = export_options(argc, argv, &o, &filt)) >= 0)
		return c;
	if (!o.out) /* (beside the first log, or the directory) */
		o.out = dflt = default_out(argv[optind], !strcmp(o.fmt, "chrome") ? ".json"
		                               : !strcmp(o.fmt, "html") ? ".html"
		                               : !strcmp(o.fmt, "ctf") ? ".ctf" : ".pftrace");
	if ((c = spans_load(&o.sa, &sp, &l, o.in, 0, front)) != 0) {
		free(dflt);
		return c;
	}
	tlog_warn(&l); /* a cut-short or damaged log exports what it holds */
	uint64_t t0 = l.first;
	if (filt.on)
		l.filter = &filt;
	if (filter_check(&filt, &l) || tlog_t0(&l, &t0)) {
		spans_free(sp);
		free(dflt);
		tlog_free(&l);
		return 1;
	}
	struct symz *z = o.raw ? NULL : symz_open(&l, o.in, 0);
	int rc = export_write(&o, &l, z, sp, t0);
	if (rc == 0 && isatty(STDERR_FILENO))
		fprintf(stderr, "%s: wrote %s\n", prog_cmd, o.out);
	if (z)
		symz_close(z);
	tlog_free(&l);
	filter_free(&filt);
	spans_free(sp);
	free(dflt);
	return rc;
}

/*
 * show.c -- `posixtrace show FILE`: one event per line (see format.c),
 * filtered by process, thread, event type and time, read as a stream in
 * one pass: the totals (tlog_load: the log's summary, or the count the
 * library made when it opened the log) number the threads and give the
 * first event's time, so that numbers and times are those of the whole
 * log, whatever is shown.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"

static const char help[] =
"usage: posixtrace show LOG... [OPTIONS]\n"
"\n"
"LOG: a log file; or a directory, whose *.ptlog files (the parts of one\n"
"recording, as record --rotate cuts it) are read as one trace, in the\n"
"order of their first events; or several logs, read the same way.\n"
"\n"
"Print every event of LOG, one per line: time since time 0 (the\n"
"program's first event; see --t0), time since the previous line,\n"
"PID/TID and thread name (the kernel's thread id and the name the thread\n"
"gave itself; a thread the trace does not name: PID/N, its number in its\n"
"process), event type, data (text in quotes, else hex, 64 bytes at most,\n"
"a described payload field by field) and the address\n"
"that recorded it, as function+offset (file:line), from the map of loaded\n"
"code the log carries and the programs' symbols (found by build-id).\n"
"\n"
"  -p, -e, -x                  --pid, --type, --exclude (the filters below)\n"
"      --from TIME             only events at or after TIME: seconds since time\n"
"                              0 (1.5, 250ms, 20us), a UTC time\n"
"                              (2026-11-27T15:04:05.25Z) or @EPOCH-SECONDS\n"
"      --to TIME               only events at or before TIME (the same forms);\n"
"                              a window outside the trace is an error (exit 1)\n"
"      --since SEC, --until SEC   the same as --from, --to\n"
"  -a, --absolute              absolute times (UTC) instead of relative\n"
"      --processes             first the processes, each below its parent, with\n"
"                              its parent's pid and command line (as info)\n"
"      --raw-addresses         do not symbolize addresses\n"
"  -h, --help                  this help\n"
"\n"
"Spans (NAME/begin and NAME/end events, or --span, see stats): an end\n"
"event shows its span's duration in [brackets] ([incomplete] when it has\n"
"none), and event names are indented by the depth of same-thread spans.\n"
"\n"
"A log cut short or damaged is shown as far as it reads, with a note on\n"
"stderr; each damaged stretch is a posix_trace_error line.\n";

enum { O_FROM = 256, O_TO, O_RAW, O_SPAN, O_PROCS };

static const struct option lopts[] = {
	FILTER_LONGOPTS,
	{ "from", required_argument, NULL, O_FROM },
	{ "since", required_argument, NULL, O_FROM },
	{ "to", required_argument, NULL, O_TO },
	{ "until", required_argument, NULL, O_TO },
	{ "absolute", no_argument, NULL, 'a' },
	{ "raw-addresses", no_argument, NULL, O_RAW },
	{ "span", required_argument, NULL, O_SPAN },
	{ "processes", no_argument, NULL, O_PROCS },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* What the command line asks. */
struct show_opts {
	struct evfilter f;
	struct when from, to;
	const char *argv_from, *argv_to, *path;
	int absolute, raw, have_from, have_to, procs;
	struct span_args sa;
};

/* The options into o; -1 to go on, else the exit status (o->f freed). */
static int show_options(int argc, char **argv, struct show_opts *o)
{
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "hp:e:x:a", lopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(help, stdout);
			fputs(filter_help, stdout);
			fputs(spans_help, stdout);
			front_help(stdout, 19, 1);
			return 0;
		case O_SPAN:
			if (span_arg(&o->sa, optarg))
				return EXIT_USAGE;
			break;
		case 'a': o->absolute = 1; break;
		case O_PROCS: o->procs = 1; break;
		case O_RAW: o->raw = 1; break;
		case 'p': case 'e': case 'x':
		case FILT_PID: case FILT_THREAD: case FILT_TID: case FILT_NAME: case FILT_TYPE:
		case FILT_EXCLUDE: case FILT_WHERE:
			if ((c = filter_option(&o->f, c == 'p' ? FILT_PID : c == 'e' ? FILT_TYPE :
			                              c == 'x' ? FILT_EXCLUDE : c, optarg)) != 0) {
				filter_free(&o->f);
				return c;
			}
			break;
		case O_FROM:
		case O_TO:
			if (parse_when(optarg, c == O_FROM ? &o->from : &o->to))
				return usage_error("%s: '%s' is not a time (seconds since time 0, "
				                   "a UTC time like 2026-11-27T15:04:05Z, or @EPOCH)",
				                   c == O_FROM ? "--from" : "--to", optarg);
			*(c == O_FROM ? &o->have_from : &o->have_to) = 1;
			*(c == O_FROM ? &o->argv_from : &o->argv_to) = optarg;
			break;
		default:
			filter_free(&o->f);
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc) {
		filter_free(&o->f);
		return usage_error("which log? give a FILE (or a directory of parts, or several logs)");
	}
	o->path = tlog_operands(argc - optind, argv + optind);
	return -1;
}

/* The width of the event type column: the longest name shown (8 to 30). */
static int name_width(const struct tlog *l, struct evfilter *f)
{
	int name_w = 8;

	for (unsigned i = 0; i < PT_NIDS; i++)
		if (l->count[i] && filter_type(f, l, i)) {
			char tmp[32];
			int w = (int)strlen(tlog_name(l, i, tmp, sizeof tmp));
			name_w = w > name_w ? (w < 30 ? w : 30) : name_w;
		}
	return name_w;
}

/* --from and --to as [*lo, *hi]; a window outside the trace is said,
 * rather than print nothing: 1, else 0. */
static int show_window(const struct show_opts *o, const struct tlog *l, uint64_t t0,
                       uint64_t *lo, uint64_t *hi)
{
	*lo = o->have_from ? when_ns(&o->from, t0) : 0;
	*hi = o->have_to ? when_ns(&o->to, t0) : UINT64_MAX;
	if (l->nev && (*lo > l->last || *hi < l->first || *lo > *hi)) {
		char a[40], b[40];
		fmt_since(a, sizeof a, l->first, t0);
		fmt_since(b, sizeof b, l->last, t0);
		if (*lo > *hi)
			err_msg("--from is after --to: no events between");
		else
			err_msg("%s: no events %s %s: the trace runs from %s to %s s (since time 0: "
			        "%s)", l->path, *lo > l->last ? "from" : "to",
			        *lo > l->last ? o->argv_from : o->argv_to, a, b, t0_what(l));
		return 1;
	}
	return 0;
}

/* The lines: the process tree first with --processes, then the events
 * of [lo, hi] the filters keep.  0, or -1 (said). */
static int show_events(struct show_opts *o, struct tlog *l, struct spans *sp,
                       struct symz *z, uint64_t t0, uint64_t lo, uint64_t hi)
{
	int name_w = name_width(l, &o->f);
	uint64_t prev = t0;
	struct tev e;
	int r = 0;

	if (o->procs) { /* the process tree first, then a blank line, then the events */
		r = info_processes(l, z, t0, 0) ? -1 : 0;
		putchar('\n');
	}
	/* (with spans, from the start: a span begun before --from still pairs) */
	int spans = spans_any(sp, l);
	if (r >= 0 && o->have_from && lo > l->first && !spans && tlog_seek(l, lo)) /* block index */
		r = -1;
	if (o->have_to && r >= 0 && tlog_until(l, hi)) /* stops after the window */
		r = -1;
	while (r >= 0 && (r = tlog_next(l, &e)) > 0) {
		struct span_mark m;
		if (spans && spans_event(sp, l, &e, &m)) {
			err_msg("out of memory");
			r = -1;
			break;
		}
		if (e.ts < lo || e.ts > hi || (o->f.on && !filter_event(&o->f, l, &e)))
			continue;
		fmt_line_span(stdout, l, &e, t0, prev, o->absolute, name_w, z, spans ? &m : NULL);
		prev = e.ts;
	}
	return r;
}

int cmd_show(int argc, char **argv, const struct tlog_front *front)
{
	struct show_opts o = { .argv_from = "", .argv_to = "" };
	struct spans *sp;
	struct tlog l;
	struct symz *z = NULL;
	uint64_t t0, lo, hi;
	int c, r = 1;

	if ((c = show_options(argc, argv, &o)) >= 0)
		return c;
	if ((c = spans_load(&o.sa, &sp, &l, o.path, 0, front)) != 0) {
		filter_free(&o.f);
		return c;
	}
	tlog_warn(&l); /* before the events: `show | head` still shows it */
	if (filter_check(&o.f, &l))
		goto out;
	z = o.raw ? NULL : symz_open(&l, o.path, 0);
	t0 = l.first;
	if (tlog_t0(&l, &t0) || show_window(&o, &l, t0, &lo, &hi))
		goto out;
	r = show_events(&o, &l, sp, z, t0, lo, hi);
out:
	if (z)
		symz_close(z);
	filter_free(&o.f);
	spans_free(sp);
	tlog_free(&l);
	return fflush(stdout) == 0 && r == 0 ? 0 : 1;
}

/*
 * info.c -- `posixtrace info FILE`: the log's attributes and final status,
 * its event types with counts, its processes and threads, its time span.
 * Here the command line and the reading (struct info, write.h); the
 * report: cli/write/info_report.c.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"

static const char help[] =
"usage: posixtrace info [--all] [--t0 WHEN] [--rows N] [--span BEGIN,END[,NAME][,key[=FIELD]]]... LOG...\n"
"\n"
"LOG: a log file; or a directory, whose *.ptlog files (the parts of one\n"
"recording, as record --rotate cuts it) are read as one trace, in the\n"
"order of their first events; or several logs, read the same way.\n"
"\n"
"Describe the trace in LOG (its parts listed, and the missing ones): the stream's attributes (name, sizes,\n"
"policies, inheritance, creation time, clock resolution), its status when\n"
"it was shut down (full, overrun, flush errors, lost events), the event\n"
"types with their counts, the processes and threads with their counts\n"
"(a thread with the kernel TID and name the trace gives it), and the\n"
"time span.  The counts come from the summary the log carries (finished\n"
"logs of this version, policies append and until-full: nothing else is\n"
"read), else from reading every event.  A log that is not whole is\n"
"described all the same: one whose recording was cut short has no final\n"
"status (nor has one still being written, which is read as far as it was\n"
"when opened), and stretches that could not be read are counted (each is a\n"
"posix_trace_error event).  The processes' first and last times count\n"
"from time 0 (see --t0).\n"
"\n"
"A log with spans (types NAME/begin and NAME/end, NAME/async-begin and\n"
"NAME/async-end, or those --span pairs) is read whole for them: per span\n"
"its types, how it pairs, complete and incomplete ones, p50, p99 and max\n"
"(posixtrace stats says more).\n"
"\n"
"      --rows N     the processes and threads tables show the N with the\n"
"                   most events (default 50; 0: every one), in the tables'\n"
"                   order, then how many more and their events; the no-loss\n"
"                   waits table the N threads held longest\n";

/* The spans of the log at path (sp; l: its totals): read whole, once,
 * and summed up in sp.  0, or 1 after a message.  A log whose totals were
 * not in a summary (one being written, or cut short) is still open in l,
 * as far as it was when it was opened: its spans are read from there, so
 * that they count the events counted (read anew, a log still being
 * written had more: more complete spans than begin events). */
static int spans_read(struct spans *sp, const char *path, struct tlog *l)
{
	struct tlog r;
	struct tlog *from = l->open_ ? l : &r;
	struct tev e;
	struct span_mark m;
	int rc;

	if (from == &r && tlog_load_as(&r, path, &l->front))
		return 1;
	while ((rc = tlog_next(from, &e)) > 0)
		if (spans_event(sp, from, &e, &m)) {
			err_msg("out of memory");
			rc = -1;
			break;
		}
	spans_end(sp);
	if (from == &r)
		tlog_free(&r);
	else if (tlog_rewind(l))
		rc = -1;
	return rc < 0;
}

/* --no-loss: per thread, how often and how long it waited for room (the
 * posixtrace_noloss_wait events, read in a pass of their own) into *w
 * (malloc'd).  0, or 1 after a message. */
static int waits_read(struct tlog *l, const char *path, struct twait **w)
{
	if (!(*w = calloc(l->nth + 1, sizeof **w))) {
		err_msg("out of memory");
		return 1;
	}
	return tlog_waits(path, l, *w) != 0;
}

/* What the command line asks: the spans, the log. */
struct info_opts { struct span_args sa; const char *path; unsigned rows; };

/* The options into o; -1 to go on, else the exit status. */
static int info_options(int argc, char **argv, struct info_opts *o)
{
	static const struct option lopts[] = {
		{ "span", required_argument, NULL, 'S' },
		{ "rows", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case 'h': fputs(help, stdout); fputs(spans_help, stdout); front_help(stdout, 19, 1); return 0;
		case 'R':
			if (parse_rows(optarg, &o->rows))
				return usage_error("--rows: '%s' is not a count of rows (0: all)", optarg);
			break;
		case 'S':
			if (span_arg(&o->sa, optarg))
				return EXIT_USAGE;
			break;
		default: return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error("which log? give a FILE (or a directory of parts, or several logs)");
	o->path = tlog_operands(argc - optind, argv + optind);
	return -1;
}

/* Reads what info tells of the log o names into in: 0, or the exit
 * status after a message. */
static int info_run(const struct info_opts *o, const struct tlog_front *front, struct info *in)
{
	int c;

	if ((c = spans_load(&o->sa, &in->sp, &in->l, o->path, 1, front)) != 0)
		return c;
	in->held = 1;
	in->t0 = in->l.first;
	if (tlog_t0(&in->l, &in->t0))
		return 1;
	in->has_spans = spans_any(in->sp, &in->l);
	if (in->has_spans && spans_read(in->sp, o->path, &in->l))
		return 1;
	if (in->l.count[PT_EXT_NOLOSS_WAIT] && waits_read(&in->l, o->path, &in->w))
		return 1;
	in->z = symz_open(&in->l, o->path, 0);
	in->rows = o->rows;
	return 0;
}

int cmd_info(int argc, char **argv, const struct tlog_front *front)
{
	struct info_opts o = { .sa = { .n = 0 }, .rows = ROWS_DEFAULT };
	struct info in = { .held = 0 };
	int c;

	if ((c = info_options(argc, argv, &o)) >= 0)
		return c;
	if ((c = info_run(&o, front, &in)) == 0)
		c = info_report(&in);
	if (in.held) {
		if (in.z)
			symz_close(in.z);
		free(in.w);
		spans_free(in.sp);
		tlog_free(&in.l);
	}
	return c;
}

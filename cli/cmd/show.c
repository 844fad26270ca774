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
"usage: posixtrace show FILE [OPTIONS]\n"
"\n"
"Print every event of the log FILE, one per line: time since time 0 (the\n"
"program's first event; see --t0), time since the previous line,\n"
"PID/THREAD (threads numbered per process in order of appearance), event\n"
"type, data (text in quotes, else hex, 64 bytes at most) and the address\n"
"that recorded it, as function+offset (file:line), from the map of loaded\n"
"code the log carries and the programs' symbols (found by build-id).\n"
"\n"
"  -p, --pid PID[,PID...]      only these processes (each must be in the log)\n"
"      --thread PID/N[,...]    only these threads, as show numbers them\n"
"      --tid TID[,TID...]      only the threads with these ids (as info lists them)\n"
"  -e, --type NAME[,NAME...]   only these event types (each must be in the log;\n"
"                              --event is the same)\n"
"  -x, --exclude NAME[,...]    not these event types\n"
"      --from TIME             only events at or after TIME: seconds since time\n"
"                              0 (1.5, 250ms, 20us), a UTC time\n"
"                              (2026-11-27T15:04:05.25Z) or @EPOCH-SECONDS\n"
"      --to TIME               only events at or before TIME (the same forms)\n"
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

enum { O_FROM = 256, O_TO, O_RAW, O_THREAD, O_TID, O_SPAN, O_PROCS };

static const struct option lopts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "thread", required_argument, NULL, O_THREAD },
	{ "tid", required_argument, NULL, O_TID },
	{ "event", required_argument, NULL, 'e' },
	{ "type", required_argument, NULL, 'e' },
	{ "exclude", required_argument, NULL, 'x' },
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

#define MAXSEL 64

struct list { char *v[MAXSEL]; int n; };

static int add_list(char *arg, struct list *l)
{
	char *save = NULL;
	for (char *s = strtok_r(arg, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
		if (l->n == MAXSEL)
			return -1;
		l->v[l->n++] = s;
	}
	return 0;
}

/* The ids of the types named in sel into want[] (as v); 1 with a message
 * if one is not in the log. */
static int select_types(const struct tlog *l, const struct list *sel, int *want, int v)
{
	char tmp[32];

	for (int k = 0; k < sel->n; k++) {
		int found = 0;
		for (unsigned i = 0; i < PT_NIDS; i++)
			if ((l->names[i] || l->count[i] || posixtrace_eventid_system_name(i)) &&
			    !strcmp(tlog_name(l, i, tmp, sizeof tmp), sel->v[k]))
				want[i] = v, found = 1;
		if (!found) {
			err_msg("%s: no event type '%s' in this log (see 'posixtrace info %s')",
			        l->path, sel->v[k], l->path);
			return 1;
		}
	}
	return 0;
}

/* Which threads to show (want_th[i]): those that pass each of --pid,
 * --thread and --tid given (a list: any of its values); 1 with a message
 * for a value that matches nothing, or EXIT_USAGE. */
static int select_threads(const struct tlog *l, const struct list *pids,
                          const struct list *threads, const struct list *tids,
                          unsigned char *want_th)
{
	unsigned char *m = calloc(l->nth + 1, 1);

	if (!m) {
		err_msg("out of memory");
		return 1;
	}
	for (size_t i = 0; i < l->nth; i++)
		want_th[i] = 1;
	for (int kind = 0; kind < 3; kind++) {
		const struct list *sel = kind == 0 ? pids : kind == 1 ? threads : tids;
		if (!sel->n)
			continue;
		memset(m, 0, l->nth + 1);
		for (int k = 0; k < sel->n; k++) {
			const char *v = sel->v[k];
			int pid = 0, n = 0, found = 0;
			unsigned idx = 0;
			unsigned long long tid = 0;
			char *end = NULL;
			if (kind == 1 && (sscanf(v, "%d/%u%n", &pid, &idx, &n) != 2 || v[n])) {
				free(m);
				return usage_error("--thread: '%s' is not PID/N (as show prints it)", v);
			}
			if (kind == 2 && ((tid = strtoull(v, &end, 0)), end == v || *end)) {
				free(m);
				return usage_error("--tid: '%s' is not a thread id", v);
			}
			if (kind == 0)
				pid = atoi(v);
			for (size_t i = 0; i < l->nth; i++) {
				const struct tthread *t = &l->th[i];
				int hit = kind == 0 ? t->pid == pid
				        : kind == 1 ? t->pid == pid && t->idx == idx : t->tid == tid;
				m[i] |= (unsigned char)hit;
				found |= hit;
			}
			if (!found) {
				if (kind == 0)
					err_msg("%s: no events of process %d in this log (see 'posixtrace "
					        "info %s')", l->path, pid, l->path);
				else if (kind == 1)
					err_msg("%s: no thread %d/%u in this log (see 'posixtrace info %s')",
					        l->path, pid, idx, l->path);
				else
					err_msg("%s: no thread with id %s in this log (see 'posixtrace info "
					        "%s')", l->path, v, l->path);
				free(m);
				return 1;
			}
		}
		for (size_t i = 0; i < l->nth; i++)
			want_th[i] &= m[i];
	}
	free(m);
	return 0;
}

int cmd_show(int argc, char **argv)
{
	struct list evs = { .n = 0 }, excl = { .n = 0 }, pids = { .n = 0 }, threads = { .n = 0 },
	            tids = { .n = 0 };
	struct when from, to;
	int absolute = 0, raw = 0, c, have_from = 0, have_to = 0, procs = 0;
	struct span_args sa = { .n = 0 };
	struct spans *sp;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "hp:e:x:a", lopts, NULL)) != -1) {
		struct list *sel = c == 'p' ? &pids : c == 'e' ? &evs : c == 'x' ? &excl :
		                   c == O_THREAD ? &threads : c == O_TID ? &tids : NULL;
		switch (c) {
		case 'h': fputs(help, stdout); fputs(spans_help, stdout); front_help(stdout, 19, 1); return 0;
		case O_SPAN:
			if (span_arg(&sa, optarg))
				return EXIT_USAGE;
			break;
		case 'a': absolute = 1; break;
		case O_PROCS: procs = 1; break;
		case O_RAW: raw = 1; break;
		case 'p': case 'e': case 'x': case O_THREAD: case O_TID:
			if (add_list(optarg, sel))
				return usage_error("too many %s values", argv[optind - 1]);
			break;
		case O_FROM:
		case O_TO:
			if (parse_when(optarg, c == O_FROM ? &from : &to))
				return usage_error("%s: '%s' is not a time (seconds since time 0, "
				                   "a UTC time like 2026-11-27T15:04:05Z, or @EPOCH)",
				                   c == O_FROM ? "--from" : "--to", optarg);
			*(c == O_FROM ? &have_from : &have_to) = 1;
			break;
		default: return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return usage_error(optind >= argc ? "which log? give a FILE" : "one FILE at a time");
	for (int k = 0; k < pids.n; k++) {
		pid_t pid;
		if (parse_pid(pids.v[k], &pid))
			return usage_error("--pid: '%s' is not a process id", pids.v[k]);
	}

	struct tlog l;
	if ((c = spans_load(&sa, &sp, &l, argv[optind], 0)) != 0)
		return c;
	tlog_warn(&l); /* before the events: `show | head` still shows it */
	static int want[PT_NIDS];
	unsigned char *want_th = malloc(l.nth + 1);
	int rc = !want_th;
	for (unsigned i = 0; i < PT_NIDS; i++)
		want[i] = evs.n == 0;
	if (!rc)
		rc = select_types(&l, &evs, want, 1);
	if (!rc)
		rc = select_types(&l, &excl, want, 0);
	if (!rc)
		rc = select_threads(&l, &pids, &threads, &tids, want_th);
	if (rc) {
		free(want_th);
		spans_free(sp);
		tlog_free(&l);
		return rc;
	}
	int name_w = 8;
	for (unsigned i = 0; i < PT_NIDS; i++)
		if (l.count[i] && want[i]) {
			char tmp[32];
			int w = (int)strlen(tlog_name(&l, i, tmp, sizeof tmp));
			name_w = w > name_w ? (w < 30 ? w : 30) : name_w;
		}
	/* a thread the totals did not know (a damaged stretch of a log read
	 * through its summary): shown unless threads were selected */
	size_t known = l.nth;
	int any_th = pids.n || threads.n || tids.n;
	struct symz *z = raw ? NULL : symz_open(&l, argv[optind], 0);
	uint64_t t0 = l.first, prev;
	if (tlog_t0(&l, &t0)) {
		if (z)
			symz_close(z);
		free(want_th);
		spans_free(sp);
		tlog_free(&l);
		return 1;
	}
	prev = t0;
	uint64_t lo = have_from ? when_ns(&from, t0) : 0, hi = have_to ? when_ns(&to, t0) : UINT64_MAX;
	struct tev e;
	int r = 0;
	if (procs) { /* the process tree first, then a blank line, then the events */
		r = info_processes(&l, z, t0) ? -1 : 0;
		putchar('\n');
	}
	/* (with spans, from the start: a span begun before --from still pairs) */
	int spans = spans_any(sp, &l);
	if (r >= 0 && have_from && lo > l.first && !spans && tlog_seek(&l, lo)) /* block index */
		r = -1;
	if (have_to && r >= 0 && tlog_until(&l, hi)) /* stops after the window */
		r = -1;
	while (r >= 0 && (r = tlog_next(&l, &e)) > 0) {
		struct span_mark m;
		if (spans && spans_event(sp, &l, &e, &m)) {
			err_msg("out of memory");
			r = -1;
			break;
		}
		if (!want[e.id] || (e.thread < known ? !want_th[e.thread] : any_th) || e.ts < lo ||
		    e.ts > hi)
			continue;
		fmt_line_span(stdout, &l, &e, t0, prev, absolute, name_w, z, spans ? &m : NULL);
		prev = e.ts;
	}
	if (z)
		symz_close(z);
	free(want_th);
	spans_free(sp);
	tlog_free(&l);
	return fflush(stdout) == 0 && r == 0 ? 0 : 1;
}

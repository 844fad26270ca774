/*
 * live.c -- `posixtrace live (PID | -- PROGRAM [ARGS...])`: print events
 * as they happen, in the form of `show`, from a stream made with
 * posix_trace_create() (no log) and read with
 * posix_trace_timedgetnext_event().  Addresses are symbolized from the
 * stream's map of loaded code (else /proc/PID/maps while the process
 * lives).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include "cmd.h"

static const char help[] =
"usage: posixtrace live [OPTIONS] PID [OPTIONS]\n"
"       posixtrace live [OPTIONS] -- PROGRAM [ARGS...]\n"
"\n"
"Print the events of a running process (it must use libposixtrace), or of\n"
"a program started traced (with every process below it that uses\n"
"libposixtrace, as record), as they happen, one per line as 'posixtrace\n"
"show' prints them.  Ends with Ctrl-C or when the process ends; nothing is\n"
"saved.  With PROGRAM the exit status is the program's.  Options may\n"
"follow PID; everything after '--' is the program's.\n"
"\n"
"      --policy P           stream full policy: loop (default) or until-full\n"
"      --size BYTES         stream size (default 1M)\n"
"      --exclude NAME,...   event types not to trace\n"
"      --no-inherit         trace the program alone, not the processes below it\n"
"  -a, --absolute           absolute times (UTC); else since time 0 (--t0; the\n"
"                           trace's own events before the program's first wait\n"
"                           for it, to be printed against it)\n"
"      --raw-addresses      do not symbolize addresses\n"
"  -h, --help               this help\n"
"Spans (NAME/begin and NAME/end, or --span): as 'posixtrace show' prints them.\n"
"The filters below choose the events printed (--exclude is the stream's:\n"
"those types are not even recorded).\n";

enum { O_POLICY = 256, O_SIZE, O_EXCLUDE, O_NOINHERIT, O_RAW, O_SPAN };

/* What the command line asks. */
struct lopt {
	int policy, inherit, absolute, raw;
	size_t size;
	char *exclude;
	struct span_args sa;
	const char *pid_arg, *extra;     /* the PID operand, and one too many */
};

/* Events held until time 0 is known: the trace's own that come before
 * the program's first event (a few: START and the like), at most
 * HOLD_MAX, then printed against it as show would. */
#define HOLD_MAX 16
struct held { struct tev e; struct span_mark m; int sm; unsigned char *data; };
struct printer {
	struct tlog l; struct symz *z; struct spans *sp;
	uint64_t t0, prev; int absolute, have_t0; int32_t self;
	struct held hold[HOLD_MAX]; unsigned nhold;
	struct evfilter f;
};

static void print_one(struct printer *p, const struct tev *e, const struct span_mark *m)
{
	fmt_line_span(stdout, &p->l, e, p->t0, p->prev, p->absolute, 16, p->z, m);
	p->prev = e->ts;
}

/* Time 0 is known (t0): the events held, then on. */
static void release(struct printer *p, uint64_t t0)
{
	p->t0 = p->prev = t0;
	p->have_t0 = 1;
	for (unsigned i = 0; i < p->nhold; i++) {
		struct held *h = &p->hold[i];
		h->e.data = h->data;
		print_one(p, &h->e, h->sm ? &h->m : NULL);
		free(h->data);
	}
	p->nhold = 0;
}

static int print_event(void *arg, trace_id_t trid, const struct posix_trace_event_info *ev,
                       const void *data, size_t len)
{
	struct printer *p = arg;
	struct posix_trace_event_info mine;
	int32_t pid = ev->posix_pid;
	struct tev e;

	if (pid == p->self && !p->l.front.all) { /* the reader's own: the trace's, as show has them */
		mine = *ev;
		mine.posix_pid = 0;
		mine.posix_thread_id = 0;
		mine.posix_prog_address = NULL;
		ev = &mine;
	}
	if (live_add(&p->l, trid, ev, data, len, &e))
		return 0;
	struct span_mark m;
	int sm = spans_event(p->sp, &p->l, &e, &m) == 0;
	uint64_t t0;
	if (!p->have_t0 && t0_live(&p->l.front.t0, e.ts, pid, p->self, &t0))
		release(p, t0);
	if (!filter_event(&p->f, &p->l, &e)) /* (after the spans: they pair as in show) */
		return 0;
	if (p->have_t0) {
		print_one(p, &e, sm ? &m : NULL);
		return 0;
	}
	struct held *h = &p->hold[p->nhold];
	if (p->nhold == HOLD_MAX || !(h->data = malloc(len ? len : 1))) {
		release(p, p->nhold ? p->hold[0].e.ts : e.ts); /* the trace's first, then */
		print_one(p, &e, sm ? &m : NULL);
		return 0;
	}
	memcpy(h->data, data, len);
	h->e = e;
	h->m = m;
	h->sm = sm;
	p->nhold++;
	return 0;
}

int live_args(const char *pid_arg, const char *extra, char **prog, const char *verb, pid_t *pid)
{
	if (!pid_arg && !prog)
		return usage_error("what to %s? give a PID, or a program after '--'", verb);
	if (pid_arg && parse_pid(pid_arg, pid))
		return usage_error("'%s' is not a process id (to start a program, put '--' "
		                   "before it)", pid_arg);
	if (extra)
		return usage_error("unexpected argument '%s' (one PID at a time)", extra);
	if (pid_arg && prog)
		return usage_error("a PID (%s) or a program after '--' (%s), not both", pid_arg,
		                   prog[0]);
	return 0;
}

int live_start(struct target *t, char **prog, pid_t *pid, const char *name, int policy,
               size_t size, int inherit, const char *exclude, const char *what,
               trace_id_t *trid)
{
	int rc;

	signals_block();
	if (prog) {
		target_check_privileged(prog, what);
		prctl(PR_SET_CHILD_SUBREAPER, 1);
		if (target_launch(t, prog))
			return 1;
		*pid = t->pid;
	} else if (target_attach(t, *pid)) {
		err_msg("no process %d (is it still running? see 'ps')", (int)*pid);
		return 1;
	} else if (target_check_library(*pid, what)) {
		if (t->pidfd >= 0)
			close(t->pidfd);
		return 1;
	}
	if (live_stream(*pid, name, policy, size, inherit, exclude, trid) ||
	    (rc = posix_trace_start(*trid)) != 0) {
		if (prog)
			kill(t->pid, SIGKILL);
		return 1;
	}
	/* the processes started below the program join the stream, as
	 * record's do (src/producer/join.c) */
	if (prog && inherit && (rc = pt_ext_join(*trid, t->join, sizeof t->join)) != 0)
		err_msg("the program's descendants will be traced only where their "
		        "parents are: %s", strerror(rc));
	if (prog && (rc = target_release(t)) != 0) {
		err_msg("cannot run %s: %s", prog[0], strerror(rc));
		posix_trace_shutdown(*trid);
		return exec_status(rc);
	}
	signals_unblock(); /* before the first print, which may block */
	return 0;
}

/* The options into o (the filters into p->f); -1 to go on, else the exit
 * status. */
static int live_options(int argc, char **argv, struct lopt *o, struct printer *p)
{
	static const struct option lopts[] = {
		{ "policy", required_argument, NULL, O_POLICY },
		{ "size", required_argument, NULL, O_SIZE },
		{ "exclude", required_argument, NULL, O_EXCLUDE },
		{ "no-inherit", no_argument, NULL, O_NOINHERIT },
		{ "absolute", no_argument, NULL, 'a' },
		{ "raw-addresses", no_argument, NULL, O_RAW },
		{ "span", required_argument, NULL, O_SPAN },
		{ "help", no_argument, NULL, 'h' },
		FILTER_LONGOPTS, /* (after --exclude, which stays the stream's) */
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;

	optind = 1;
	opterr = 0;
	/* '-': options on both sides of a PID (operands come as 1); getopt
	 * stops at "--", and what follows is the program */
	while ((c = getopt_long(argc, argv, "-:ha", lopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(help, stdout);
			fputs(filter_help, stdout);
			fputs(spans_help, stdout);
			front_help(stdout, 27, 1);
			return 0;
		case FILT_PID: case FILT_THREAD: case FILT_TID: case FILT_NAME: case FILT_TYPE:
		case FILT_WHERE:
			p->f.live = 1;
			if ((rc = filter_option(&p->f, c, optarg)) != 0)
				return rc;
			break;
		case O_SPAN:
			if (span_arg(&o->sa, optarg))
				return EXIT_USAGE;
			break;
		case 1:
			if (!o->pid_arg)
				o->pid_arg = optarg;
			else if (!o->extra)
				o->extra = optarg;
			break;
		case 'a': o->absolute = 1; break;
		case O_RAW: o->raw = 1; break;
		case O_NOINHERIT: o->inherit = 0; break;
		case O_EXCLUDE: o->exclude = optarg; break;
		case O_POLICY:
			if (parse_policy(optarg, 0, &o->policy) || o->policy == POSIX_TRACE_FLUSH)
				return usage_error("--policy: '%s' is not loop or until-full", optarg);
			break;
		case O_SIZE:
			if (parse_size(optarg, &o->size))
				return usage_error("--size: '%s' is not a size in bytes", optarg);
			break;
		case ':': return usage_error("option '%s' needs an argument", argv[optind - 1]);
		default: return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	return -1;
}

/* Prints the events as they come until the program ends or a signal
 * stops it (*stop: a program launched here gets the first from a
 * terminal's keys itself, and one other forwarded; a second stops), then
 * what the stream still holds. */
static void live_print(struct printer *p, struct target *t, trace_id_t trid, int launch,
                       int *stop)
{
	int signals = 0;

	while (!*stop) {
		long n = live_drain(trid, 50, print_event, p);
		if (n < 0)
			break;
		fflush(stdout);
		int tty = 0, sig;
		while ((sig = signals_take(0, &tty)) != 0) {
			if (sig == SIGCHLD)
				continue;
			if (!launch || ++signals >= 2)
				*stop = sig;
			else if (!tty)
				target_forward(t, sig);
		}
		if (target_poll(t))
			break;
	}
	live_drain(trid, 0, print_event, p); /* what the target wrote before it ended */
	if (!p->have_t0 && p->nhold) /* the program wrote nothing: from the trace's first */
		release(p, p->hold[0].e.ts);
	fflush(stdout);
}

/* The closing line on stderr: events, processes, threads and losses. */
static void live_report(struct tlog *l)
{
	char lost[240];
	unsigned procs, threads;

	tlog_loss_text(l, lost, sizeof lost);
	tlog_program_counts(l, getpid(), &procs, &threads);
	fprintf(stderr, "%s: %llu events from %u process%s (%u thread%s); %s%s\n", prog_cmd,
	        (unsigned long long)l->nev, procs, procs == 1 ? "" : "es", threads,
	        threads == 1 ? "" : "s", lost,
	        tlog_lost_any(l) ? " (the reader fell behind: try --size)" : "");
	if (l->late) /* (their threads were held in posix_trace_event() past the wait) */
		fprintf(stderr, "%s: %llu event%s came late, after later ones "
		        "(POSIXTRACE_LATE_WAIT_MS)\n", prog_cmd, (unsigned long long)l->late,
		        l->late == 1 ? "" : "s");
}

int cmd_live(int argc, char **argv, const struct tlog_front *front)
{
	static struct printer p;
	struct lopt o = { .policy = POSIX_TRACE_LOOP, .inherit = 1 };
	struct target t;
	pid_t pid = 0;
	int rc;

	if ((rc = live_options(argc, argv, &o, &p)) >= 0)
		return rc;
	int launch = optind < argc;
	if ((rc = live_args(o.pid_arg, o.extra, launch ? argv + optind : NULL, "trace", &pid)) != 0)
		return rc;
	if (front->t0.kind == T0_TYPE)
		return usage_error("--t0 %s: live prints each event as it comes, before any type's "
		                   "first event is known (use first, trace or a time)",
		                   front->t0.name);
	if ((rc = spans_make(&o.sa, &p.sp)) != 0)
		return rc;
	trace_id_t trid;
	if ((rc = live_start(&t, launch ? argv + optind : NULL, &pid, "live", o.policy, o.size,
	                     o.inherit, o.exclude, "printed", &trid)) != 0) {
		spans_free(p.sp);
		return rc;
	}
	tlog_init(&p.l);
	p.l.front = *front;
	p.z = o.raw ? NULL : symz_open(NULL, NULL, 1);
	if (p.z)
		symz_live(p.z, trid); /* the map of loaded code the stream carries */
	p.absolute = o.absolute;
	p.self = (int32_t)getpid();
	int stop = 0;
	live_print(&p, &t, trid, launch, &stop);
	tlog_note_totals(&p.l, trid);
	posix_trace_shutdown(trid);
	tlog_finish(&p.l);
	live_report(&p.l);
	if (p.z)
		symz_close(p.z);
	tlog_free(&p.l);
	filter_free(&p.f);
	spans_free(p.sp);
	if (t.pidfd > 0)
		close(t.pidfd);
	if (!launch)
		return 0;
	return t.exited ? target_exit_code(&t) : 128 + stop;
}

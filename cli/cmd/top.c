/*
 * top.c -- `posixtrace top (PID | -- PROGRAM [ARGS...])`: a live view of
 * a running program, refreshed every second: events per second of each
 * type, and per span (spans.c) the count, p50, p99 and max of the last
 * second and since the start, and the incomplete ones.
 *
 * It reads a stream made for the process (no log) as `live` does, with
 * the LOOP policy: the program never waits for the reader; a reader that
 * falls behind loses events, which are counted and shown (and cut the
 * spans open across the gap, as everywhere).  On a terminal the view is
 * redrawn in place and `q` quits (the stream is shut down, the program
 * goes on untouched); otherwise one block per second is printed, for
 * logs and scripts, until the program ends or a signal stops `top`.
 * The screen itself: cli/write/top_report.c.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include "cmd.h"

static const char help[] =
"usage: posixtrace top [OPTIONS] PID\n"
"       posixtrace top [OPTIONS] -- PROGRAM [ARGS...]\n"
"\n"
"A live view of a running process (it must use libposixtrace), or of a\n"
"program started traced, refreshed every second: events per second of each\n"
"type, and per span (NAME/begin and NAME/end events, or --span) the count,\n"
"p50, p99 and max duration over the last second and since the start, and\n"
"the incomplete spans.  On a terminal 'q' quits and leaves the program\n"
"running; without a terminal one block is printed per second.  Ends when\n"
"the process ends (with PROGRAM, with its exit status) or at Ctrl-C.\n"
"Only the program's events are counted: top's own (its START) only with --all.\n"
"\n"
"      --size BYTES         stream size (default 1M); a reader that falls\n"
"                           behind loses events (shown), the program never waits\n"
"      --interval SEC       refresh period (default 1)\n"
"      --no-inherit         trace the program alone, not the processes below it\n"
"  -h, --help               this help\n";

enum { O_SIZE = 256, O_NOINHERIT, O_SPAN, O_INTERVAL };

static int add_event(void *arg, trace_id_t trid, const struct posix_trace_event_info *ev,
                     const void *data, size_t len)
{
	struct top *t = arg;
	struct tev e;
	struct span_mark m;

	if (ev->posix_pid == t->self && !t->l.front.all)
		return 0; /* top's own (START): not the program's, unless --all */
	if (live_add(&t->l, trid, ev, data, len, &e) || spans_event(t->sp, &t->l, &e, &m) ||
	    (m.kind == SPAN_END && hist_add(&t->win[m.def], m.dur))) {
		err_msg("out of memory");
		return -1;
	}
	t->wcount[e.id]++;
	return 0;
}

/* One view (top_report: the period just ended and the totals); then a
 * new period. */
static void render(struct top *t, pid_t pid, const char *what, uint64_t now)
{
	top_report(t, pid, what, now);
	for (size_t i = 0, n = spans_count(t->sp); i < n; i++)
		hist_free(&t->win[i]);
	memset(t->wcount, 0, PT_NIDS * sizeof *t->wcount);
}

static struct termios saved_tio;
static int raw_set;

static void raw_stdin(void)
{
	struct termios tio;
	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved_tio))
		return;
	tio = saved_tio;
	tio.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	tio.c_cc[VMIN] = 0;
	tio.c_cc[VTIME] = 0;
	raw_set = tcsetattr(STDIN_FILENO, TCSANOW, &tio) == 0;
}

static void restore_stdin(void)
{
	if (raw_set)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
	raw_set = 0;
}

/* 1 when 'q' was typed */
static int quit_key(void)
{
	struct pollfd p = { STDIN_FILENO, POLLIN, 0 };
	char c[64];
	if (!raw_set || poll(&p, 1, 0) != 1)
		return 0;
	ssize_t k = read(STDIN_FILENO, c, sizeof c);
	for (ssize_t i = 0; i < k; i++)
		if (c[i] == 'q' || c[i] == 'Q')
			return 1;
	return 0;
}

/* What the command line asks. */
struct top_opts {
	struct span_args sa;
	const char *pid_arg, *extra;
	size_t size;
	double interval;
	int inherit;
};

/* The options into o; -1 to go on, else the exit status. */
static int top_options(int argc, char **argv, struct top_opts *o)
{
	static const struct option lopts[] = {
		{ "size", required_argument, NULL, O_SIZE },
		{ "interval", required_argument, NULL, O_INTERVAL },
		{ "no-inherit", no_argument, NULL, O_NOINHERIT },
		{ "span", required_argument, NULL, O_SPAN },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "-:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'h': fputs(help, stdout); fputs(spans_help, stdout); front_help(stdout, 27, 0);
			return 0;
		case 1:
			if (!o->pid_arg)
				o->pid_arg = optarg;
			else if (!o->extra)
				o->extra = optarg;
			break;
		case O_NOINHERIT: o->inherit = 0; break;
		case O_SPAN:
			if (span_arg(&o->sa, optarg))
				return EXIT_USAGE;
			break;
		case O_SIZE:
			if (parse_size(optarg, &o->size))
				return usage_error("--size: '%s' is not a size in bytes", optarg);
			break;
		case O_INTERVAL:
			if (parse_seconds(optarg, &o->interval) || o->interval < 0.1 || o->interval > 3600)
				return usage_error("--interval: '%s' is not 0.1 to 3600 seconds", optarg);
			break;
		case ':': return usage_error("option '%s' needs an argument", argv[optind - 1]);
		default: return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	return -1;
}

/* Drains the stream and redraws every interval until a signal (*stop),
 * q, or the program's end: then its last events and a last screen.
 * 1 if the program ended, else 0. */
static int top_watch(struct top *t, struct target *tg, trace_id_t trid, pid_t pid,
                     const char *what, double interval, int *stop)
{
	uint64_t period = (uint64_t)(interval * 1e9), next = t->start_ns + period, last = t->start_ns;
	int quit = 0, ended = 0;

	while (!*stop && !quit) {
		if (live_drain(trid, 50, add_event, t) < 0)
			break;
		quit = quit_key();
		int tty = 0, sig;
		while ((sig = signals_take(0, &tty)) != 0)
			if (sig != SIGCHLD)
				*stop = sig;
		if (target_poll(tg)) {
			ended = 1;
			break;
		}
		uint64_t now = now_mono_ns();
		if (now >= next) {
			t->period_ns = now - last;
			render(t, pid, what, now);
			last = now;
			next += period;
			if (next <= now)
				next = now + period;
		}
	}
	if (ended) {
		live_drain(trid, 0, add_event, t); /* what the program wrote before it ended */
		uint64_t now = now_mono_ns();
		t->period_ns = now > last ? now - last : 1;
		tlog_note_totals(&t->l, trid);
		spans_end(t->sp);
		render(t, pid, what, now);
	}
	return ended;
}

static void top_free(struct top *t)
{
	if (t->win)
		for (size_t i = 0; i < SPAN_MAX; i++)
			hist_free(&t->win[i]);
	free(t->win);
	free(t->wcount);
	spans_free(t->sp);
}

int cmd_top(int argc, char **argv, const struct tlog_front *front)
{
	struct top_opts o = { .interval = 1, .inherit = 1 };
	int rc;
	pid_t pid = 0;

	if ((rc = top_options(argc, argv, &o)) >= 0)
		return rc;
	int launch = optind < argc;
	if ((rc = live_args(o.pid_arg, o.extra, launch ? argv + optind : NULL, "watch", &pid)) != 0)
		return rc;
	struct top t;
	memset(&t, 0, sizeof t);
	if ((rc = spans_make(&o.sa, &t.sp)) != 0)
		return rc;
	t.win = calloc(SPAN_MAX, sizeof *t.win);
	t.wcount = calloc(PT_NIDS, sizeof *t.wcount);
	if (!t.win || !t.wcount) {
		err_msg("out of memory");
		top_free(&t);
		return 1;
	}
	struct target tg;
	trace_id_t trid;
	if ((rc = live_start(&tg, launch ? argv + optind : NULL, &pid, "top", POSIX_TRACE_LOOP,
	                     o.size, o.inherit, NULL, "watched", &trid)) != 0) {
		top_free(&t);
		return rc;
	}
	tlog_init(&t.l);
	t.l.front = *front;
	t.self = (int32_t)getpid();
	t.tty = isatty(STDOUT_FILENO);
	if (t.tty)
		raw_stdin();
	const char *what = launch ? argv[optind] : "pid";
	const char *b = strrchr(what, '/');
	what = b ? b + 1 : what;
	t.start_ns = now_mono_ns();
	int stop = 0, ended = top_watch(&t, &tg, trid, pid, what, o.interval, &stop);
	posix_trace_shutdown(trid); /* (q: the program goes on, untraced) */
	restore_stdin();
	if (t.tty && !ended)
		fputc('\n', stdout);
	top_free(&t);
	tlog_free(&t.l);
	if (tg.pidfd > 0)
		close(tg.pidfd);
	if (!launch || !ended)
		return stop ? 128 + stop : 0;
	return target_exit_code(&tg);
}

/*
 * record.c -- `posixtrace record` (start a program traced into a log) and
 * `posixtrace attach` (trace a running process into a log).
 *
 * The stream is made with posix_trace_create_withlog() for the target's
 * pid: stream-full policy FLUSH (a flusher thread drains it to the log as
 * it fills), log policy APPEND, inheritance on (forked children are traced
 * too) unless --no-inherit.  The log carries the map of the target's
 * code, which the library writes into the trace: nothing to watch here.
 * --no-loss puts the stream in no-loss mode (posixtrace_attr_setnoloss):
 * the program waits for the flusher rather than lose events.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cmd.h"

static const char record_help[] =
"usage: posixtrace record [OPTIONS] -- PROGRAM [ARGS...]\n"
"\n"
"Run PROGRAM traced from its first event (constructors included), and every\n"
"process started below it that uses libposixtrace, whatever runs in between\n"
"(shells, make, env, daemons), into a trace log; print a summary when it ends.\n"
"The exit status is the program's (128+N if it was killed by signal N; 127\n"
"if it was not found, 126 if it could not be executed); if the program's is 0\n"
"but events were lost that no policy asked to lose (the disk was full, or the\n"
"flush stream filled faster than it was written: the summary says which), 3.\n"
"\n"
"  -o, --output FILE        the log (default posixtrace-YYYYmmdd-HHMMSS-PID.ptlog,\n"
"                           PID this command's)\n"
"      --force              overwrite FILE if it exists\n"
"  -d, --duration SECONDS   after this long, end the program as timeout(1) does\n"
"                           (SIGTERM, SIGKILL 5 s later); the log keeps its end\n"
"      --policy P           stream full policy: flush (default), loop, until-full\n"
"      --size BYTES         stream size (default 16M with --policy flush, else 1M;\n"
"                           K, M, G suffixes)\n"
"      --log-size BYTES     log max size (loop and until-full log policies)\n"
"      --log-policy P       log full policy: append (default), loop, until-full\n"
"      --exclude NAME,...   event types not to record\n"
"      --no-inherit         trace the program alone, not the processes below it\n"
"      --no-loss[=MS]       when the stream is full, the program waits for room\n"
"                           rather than lose events: MS at most per wait\n"
"                           (default 1000, up to 60000), then the event is lost\n"
"                           and counted (flush policy only; not the relay's)\n"
"      --relayd URL         stream the events live to lttng-relayd at\n"
"                           net://HOST[:CTRL_PORT[:DATA_PORT]] (5342, 5343);\n"
"                           no local log unless -o is given too\n"
"      --session NAME       the relay session (default PROGRAM-PID-TIME)\n"
"      --hostname NAME      the host name the relay files it under\n"
"      --rotate SIZE|TIME   cut the log into parts: -o names a directory (made if\n"
"                           missing; one not empty is refused unless --force,\n"
"                           which removes the parts of an earlier recording),\n"
"                           and the log is DIR/NAME-1.ptlog, NAME-2.ptlog...\n"
"                           (NAME: the program's file name), a new part each\n"
"                           SIZE bytes (64K at least; K, M, G) or each TIME\n"
"                           (500ms, 30s, 10m, 1h); each part is a whole log,\n"
"                           read alone; with --relayd the relay gets every\n"
"                           event, the local log is the one cut\n"
"      --keep N             with --rotate: keep the N newest parts (the one\n"
"                           being written included), remove older ones\n"
"      --keep-size SIZE     with --rotate: remove the oldest finished parts\n"
"                           while they take more than SIZE in all\n"
"%s"
"  -h, --help               this help\n"
"\n"
"Ctrl-C stops the program (it gets the signal) and keeps the log;\n"
"a second Ctrl-C stops tracing at once.\n";

static const char attach_help[] =
"usage: posixtrace attach [OPTIONS] PID [OPTIONS]\n"
"\n"
"Trace the running process PID (it must use libposixtrace, unless --tree)\n"
"into a log until Ctrl-C, the end of --duration, or the end of the process.\n"
"Options may come before or after PID.\n"
"\n"
"  -o, --output FILE        the log (default posixtrace-YYYYmmdd-HHMMSS-PID.ptlog,\n"
"                           PID this command's)\n"
"      --force              overwrite FILE if it exists\n"
"  -d, --duration SECONDS   stop after this long (the process goes on)\n"
"      --tree               also every descendant of PID that uses libposixtrace:\n"
"                           those running now (from the moment they join) and\n"
"                           those started from now on, whatever runs in between\n"
"                           (see posixtrace(1), ATTACH --TREE)\n"
"      --policy, --size, --log-size, --log-policy, --exclude, --no-inherit,\n"
"      --no-loss[=MS], --relayd URL, --session NAME, --hostname NAME,\n"
"      --rotate SIZE|TIME, --keep N, --keep-size SIZE\n"
"                           as for 'posixtrace record' (the parts' NAME: the\n"
"                           process's name, /proc/PID/comm)\n"
"      --flight SIZE, --snapshot-on TRIGGER, --before, --after, --max, --every\n"
"                           as for 'posixtrace record' (-o names the directory)\n"
"  -h, --help               this help\n";

const char flight_help[] =
"      --flight SIZE        flight recorder: keep the last SIZE bytes of events in\n"
"                           memory (a loop stream, nothing written) and write a\n"
"                           snapshot, -o DIR/NAME-N.ptlog, when a trigger fires\n"
"      --snapshot-on TRIGGER  (repeatable) TYPE[:CONDITION] (an event of TYPE whose\n"
"                           payload matches the --where CONDITION, e.g.\n"
"                           'error:status<0'; event:TYPE... if TYPE is span,\n"
"                           trigger, full or event); span:NAME>DURATION (NAME/end\n"
"                           more than DURATION after its NAME/begin on one\n"
"                           thread); trigger:NAME (posixtrace_trigger(NAME) in the\n"
"                           program, or 'posixtrace trigger NAME DIR'; a glob);\n"
"                           full:N% (the stream more than N% full)\n"
"      --before DURATION    a snapshot starts this long before its trigger (default:\n"
"                           all the stream holds); like 2s, 500ms, 100us\n"
"      --after DURATION     ... and ends this long after it (default 0)\n"
"      --max N              at most N snapshots (default: no limit)\n"
"      --every DURATION     at most one snapshot per DURATION of trigger time\n";

struct ropts {
	const char *out;
	const char *pid, *extra;  /* attach: its operand, and one too many */
	int force, policy, log_policy, inherit, tree;
	size_t size, log_size;
	char *exclude;
	double duration;
	unsigned noloss_ms; /* 0: off */
	int rotate;         /* --rotate: out is a directory of parts */
	uint64_t rot_size, rot_period, keep, keep_size;
	struct relay_opts relay; /* url_text NULL: no --relayd */
	struct flight_opts fl;   /* fl.size 0: no --flight */
	int policy_set;
};

#define NOLOSS_DEFAULT_MS 1000u /* a second: a stopped consumer costs that, once */
/* A FLUSH stream is the buffer between the program and the disk: it must
 * hold what the program records while one write() of the log stalls.  On
 * a VM a 64 KiB write to tmpfs sometimes takes 2.5 ms (a host fault per
 * fresh page); 1 MiB is 4 ms of 250 MB/s, and paced runs at a quarter of
 * the machine's write rate lost events.  16 MiB is 64 ms of that. */
#define FLUSH_DEFAULT_SIZE (16u << 20)

enum { O_FORCE = 256, O_POLICY, O_SIZE, O_LOGSIZE, O_LOGPOLICY, O_EXCLUDE, O_NOINHERIT,
       O_NOLOSS, O_RELAYD, O_SESSION, O_HOSTNAME, O_TREE, O_ROTATE, O_KEEP, O_KEEPSIZE,
       O_FLIGHT };

static const struct option lopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "force", no_argument, NULL, O_FORCE },
	{ "policy", required_argument, NULL, O_POLICY },
	{ "size", required_argument, NULL, O_SIZE },
	{ "log-size", required_argument, NULL, O_LOGSIZE },
	{ "log-policy", required_argument, NULL, O_LOGPOLICY },
	{ "exclude", required_argument, NULL, O_EXCLUDE },
	{ "no-inherit", no_argument, NULL, O_NOINHERIT },
	{ "no-loss", optional_argument, NULL, O_NOLOSS },
	{ "duration", required_argument, NULL, 'd' },
	{ "relayd", required_argument, NULL, O_RELAYD },
	{ "session", required_argument, NULL, O_SESSION },
	{ "hostname", required_argument, NULL, O_HOSTNAME },
	{ "tree", no_argument, NULL, O_TREE },
	{ "rotate", required_argument, NULL, O_ROTATE },
	{ "keep", required_argument, NULL, O_KEEP },
	{ "keep-size", required_argument, NULL, O_KEEPSIZE },
	{ "flight", required_argument, NULL, O_FLIGHT },
	{ "snapshot-on", required_argument, NULL, O_FLIGHT },
	{ "before", required_argument, NULL, O_FLIGHT },
	{ "after", required_argument, NULL, O_FLIGHT },
	{ "max", required_argument, NULL, O_FLIGHT },
	{ "every", required_argument, NULL, O_FLIGHT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* An option with a value to check (c: its getopt code; name: the long
 * name of an O_FLIGHT option, which flight.c tells apart): into o.  -1:
 * go on; else the exit code. */
static int value_option(struct ropts *o, int c, const char *name)
{
	switch (c) {
	case O_FLIGHT: {
		int rc = flight_option(&o->fl, name, optarg);
		return rc ? rc : -1;
	}
	case O_NOLOSS: {
		char *end;
		unsigned long ms = NOLOSS_DEFAULT_MS;
		if (optarg) {
			errno = 0;
			ms = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || *optarg == '-' || ms == 0 || ms > 60000)
				return usage_error("--no-loss: '%s' is not a number of "
				                   "milliseconds from 1 to 60000", optarg);
		}
		o->noloss_ms = (unsigned)ms;
		return -1;
	}
	case O_ROTATE: {
		const char *why;
		if (rotate_parse(optarg, &o->rot_size, &o->rot_period, &why))
			return usage_error("--rotate: '%s': %s", optarg, why);
		o->rotate = 1;
		return -1;
	}
	case O_KEEP: {
		char *end;
		errno = 0;
		unsigned long long n = strtoull(optarg, &end, 10);
		if (errno || end == optarg || *end || *optarg == '-' || n == 0)
			return usage_error("--keep: '%s' is not a number of parts (1 or more)", optarg);
		o->keep = n;
		return -1;
	}
	case O_KEEPSIZE: {
		size_t n;
		if (parse_size(optarg, &n) || n == 0)
			return usage_error("--keep-size: '%s' is not a size in bytes above 0 (like "
			                   "1G, 500M)", optarg);
		o->keep_size = n;
		return -1;
	}
	case O_RELAYD: {
		char why[200];
		if (relayd_url_parse(optarg, &o->relay.url, why, sizeof why))
			return usage_error("--relayd: '%s': %s", optarg, why);
		o->relay.url_text = optarg;
		return -1;
	}
	case O_SESSION:
	case O_HOSTNAME: {
		int h = c == O_HOSTNAME;
		int max = h ? RELAYD_HOSTNAME_MAX : RELAY_SESSION_MAX;
		if (!relay_name_ok(optarg, (size_t)max))
			return usage_error("%s: '%s' is not a name the relay takes (1 to %d "
			                   "characters, no '/', not starting with '.')",
			                   h ? "--hostname" : "--session", optarg, max);
		*(h ? &o->relay.hostname : &o->relay.session) = optarg;
		return -1;
	}
	case O_POLICY:
		o->policy_set = 1;
		if (parse_policy(optarg, 0, &o->policy))
			return usage_error("--policy: '%s' is not loop, until-full or flush", optarg);
		return -1;
	case O_LOGPOLICY:
		if (parse_policy(optarg, 1, &o->log_policy))
			return usage_error("--log-policy: '%s' is not append, loop or until-full",
			                   optarg);
		return -1;
	case O_SIZE:
	case O_LOGSIZE:
		if (parse_size(optarg, c == O_SIZE ? &o->size : &o->log_size))
			return usage_error("%s: '%s' is not a size in bytes (like 4096, 64K, 16M)",
			                   c == O_SIZE ? "--size" : "--log-size", optarg);
		return -1;
	case 'd':
		if (parse_seconds(optarg, &o->duration) || o->duration <= 0)
			return usage_error("--duration: '%s' is not a number of seconds", optarg);
		return -1;
	}
	return -1;
}

/* The options taken together: the flight recorder's stream, the
 * defaults that depend on others, the options that contradict each
 * other, and the operands (argv from optind).  -1: go on; else the exit
 * code. */
static int check_options(struct ropts *o, int attach, int argc, char **argv)
{
	int rc = flight_check(&o->fl);
	if (rc)
		return rc;
	if (o->fl.size) { /* a loop stream nobody reads but the snapshots */
		if (!o->out)
			return usage_error("--flight: give the snapshots' directory with -o DIR");
		if ((o->policy_set && o->policy != POSIX_TRACE_LOOP) || o->noloss_ms ||
		    o->relay.url_text || o->size || o->log_size || o->rotate)
			return usage_error("--flight records into a loop stream of its SIZE: not with "
			                   "--policy, --size, --log-size, --no-loss, --relayd or "
			                   "--rotate");
		o->policy = POSIX_TRACE_LOOP;
		o->size = o->fl.size;
	}
	if (!o->size && o->policy == POSIX_TRACE_FLUSH)
		o->size = FLUSH_DEFAULT_SIZE;
	if ((o->relay.session || o->relay.hostname) && !o->relay.url_text)
		return usage_error("--session and --hostname name the relay's session: give --relayd");
	o->relay.inherit = o->inherit;
	o->relay.exclude = o->exclude;
	o->relay.local_log = o->out != NULL;
	if (o->tree && !o->inherit)
		return usage_error("--tree and --no-inherit contradict each other");
	if (o->tree && o->relay.url_text)
		return usage_error("--tree and --relayd: the relay gets the process alone; "
		                   "not supported together");
	if (o->noloss_ms && o->policy != POSIX_TRACE_FLUSH)
		return usage_error("--no-loss waits for the flusher: it needs --policy flush");
	if ((o->keep || o->keep_size) && !o->rotate)
		return usage_error("--keep and --keep-size say which parts to keep: give --rotate");
	if (o->rotate && o->policy != POSIX_TRACE_FLUSH)
		return usage_error("--rotate cuts the log as it is written: it needs --policy flush");
	if (o->rotate && o->log_policy != POSIX_TRACE_APPEND)
		return usage_error("--rotate cuts the log into parts: it needs --log-policy append");
	if (o->rotate && o->relay.url_text && !o->out)
		return usage_error("--rotate cuts the local log: with --relayd, give -o DIR too");
	if (!attach)
		return optind < argc ? -1 : usage_error("which program? give it after '--'");
	if (!o->pid && optind < argc) /* attach -- PID */
		o->pid = argv[optind++];
	if (!o->extra && optind < argc)
		o->extra = argv[optind];
	if (!o->pid)
		return usage_error("which process? give its PID");
	return -1;
}

/* -1: go on; else the exit code. */
static int parse(int argc, char **argv, struct ropts *o, int attach)
{
	int c, li, rc;

	*o = (struct ropts){ .policy = POSIX_TRACE_FLUSH, .log_policy = POSIX_TRACE_APPEND,
	                     .inherit = 1 };
	optind = 1;
	opterr = 0;
	/* record stops at the program ('+'): the rest is the program's; attach
	 * takes options on both sides of its PID ('-': operands come as 1) */
	while ((c = getopt_long(argc, argv, attach ? "-:ho:d:" : "+:ho:d:", lopts, &li)) != -1) {
		switch (c) {
		case 'h':
			if (attach)
				fputs(attach_help, stdout);
			else
				printf(record_help, flight_help);
			return 0;
		case 1:
			if (!o->pid)
				o->pid = optarg;
			else if (!o->extra)
				o->extra = optarg;
			break;
		case 'o': o->out = optarg; break;
		case O_FORCE: o->force = 1; break;
		case O_NOINHERIT: o->inherit = 0; break;
		case O_EXCLUDE: o->exclude = optarg; break;
		case O_TREE:
			if (!attach) /* record traces the tree always */
				return usage_error("unknown option '--tree' (record traces the whole "
				                   "tree below the program unless --no-inherit)");
			o->tree = 1;
			break;
		case O_FLIGHT: case O_NOLOSS: case O_ROTATE: case O_KEEP: case O_KEEPSIZE:
		case O_RELAYD: case O_SESSION: case O_HOSTNAME: case O_POLICY: case O_LOGPOLICY:
		case O_SIZE: case O_LOGSIZE: case 'd':
			/* (li is getopt_long's only for a long option: -d has none) */
			if ((rc = value_option(o, c, c == O_FLIGHT ? lopts[li].name : NULL)) >= 0)
				return rc;
			break;
		case ':':
			return usage_error("option '%s' needs an argument", argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	return check_options(o, attach, argc, argv);
}

/* The time and this command's pid: two records started in the same
 * second write two logs (the second used to stop with "already exists"). */
static char *default_name(int dir)
{
	static char buf[80];
	char when[32];
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	strftime(when, sizeof when, "%Y%m%d-%H%M%S", &tm);
	snprintf(buf, sizeof buf, "posixtrace-%s-%d%s", when, (int)getpid(), dir ? "" : ".ptlog");
	return buf;
}

/* Stream attributes and filter; the stream is created, not yet started. */
static int create_stream(const struct ropts *o, pid_t pid, const char *name, int fd,
                         trace_id_t *trid)
{
	trace_attr_t attr;
	int rc;

	posix_trace_attr_init(&attr);
	posix_trace_attr_setname(&attr, name);
	posix_trace_attr_setinherited(&attr, o->inherit ? POSIX_TRACE_INHERITED
	                                                : POSIX_TRACE_CLOSE_FOR_CHILD);
	if ((rc = posix_trace_attr_setstreamfullpolicy(&attr, o->policy)) ||
	    (o->size && (rc = posix_trace_attr_setstreamsize(&attr, o->size))) ||
	    (rc = posix_trace_attr_setlogfullpolicy(&attr, o->log_policy)) ||
	    (o->log_size && (rc = posix_trace_attr_setlogsize(&attr, o->log_size))) ||
	    (rc = posixtrace_attr_setnoloss(&attr, o->noloss_ms))) {
		err_msg("invalid stream attributes: %s", strerror(rc));
		return 1;
	}
	if (fd >= 0)
		log_mark_writing(fd); /* until the log is finished: readers say so */
	rc = fd >= 0 ? posix_trace_create_withlog(pid, &attr, fd, trid)
	             : posix_trace_create(pid, &attr, trid); /* --flight */
	posix_trace_attr_destroy(&attr);
	if (rc) {
		err_msg("cannot trace process %d: %s%s", (int)pid, strerror(rc),
		        rc == EPERM ? " (it belongs to another user or is not dumpable; "
		                      "run as its user or as root)" :
		        rc == ESRCH ? " (no such process)" :
		        rc == EAGAIN ? " (too many streams, or the process is still being "
		                       "forked or exec'd; shut some down or try again)" :
		        rc == EINVAL ? " (check --policy, --log-policy and --log-size)" : "");
		return 1;
	}
	return o->exclude ? exclude_events(*trid, o->exclude) : 0;
}

#define DURATION_KILL_NS 5000000000ull /* after SIGTERM, SIGKILL: as timeout -k 5 */
#define TREE_LOOK_NS 50000000ull /* attach --tree looks for new descendants this often */
/* --flight: the stream is followed this often.  A trigger is seen half
 * of it after it fires, on average, and its window copied then: 1 ms
 * costs the recorder about 0.4% of a CPU more than 2 ms did (0.2% more
 * again at 0.5 ms), for 0.5 ms less at the median */
#define FLIGHT_LOOK_NS 1000000ull

/* Until the target ends (or the deadline, or a second signal).  (The
 * trace carries the map of the target's code: nothing to watch here.)
 * At the deadline a program we started (forward) is ended as timeout(1)
 * would, and traced until it has ended; a process attached to is left
 * alone.  Returns the signal that stopped us early, or 0. */
static int run(struct target *t, double duration, int forward, struct ptree *tree,
               trace_id_t trid, struct flight *fl)
{
	uint64_t start = now_mono_ns(), next = start, step = 1000000;
	uint64_t end = duration > 0 ? start + (uint64_t)(duration * 1e9) : UINT64_MAX;
	uint64_t last_look = 0;
	int signals = 0, ending = 0;

	for (;;) {
		uint64_t now = now_mono_ns();
		if (now >= next) {
			step = step < 100000000 ? step * 2 : 100000000;
			next = now + step;
		}
		flight_step(fl);
		if (target_poll(t))
			return 0;
		if (tree && now - last_look >= TREE_LOOK_NS) {
			ptree_poll(tree, trid);
			last_look = now;
		}
		if (now >= end && !forward)
			return 0;
		if (now >= end) {
			target_forward(t, ending++ ? SIGKILL : SIGTERM);
			end = ending < 2 ? now + DURATION_KILL_NS : UINT64_MAX;
		}
		uint64_t wake = next < end ? next : end;
		if (fl && wake > now + FLIGHT_LOOK_NS) /* triggers are looked for this often */
			wake = now + FLIGHT_LOOK_NS;
		uint64_t snap = flight_wait_ns(fl); /* (a snapshot due sooner: then) */
		if (snap < wake - now)
			wake = now + snap;
		/* (to the ns: a snapshot due in 0.3 ms is taken then, not
		 * after a whole ms; at least 10 us) */
		uint64_t ns = wake > now + 10000 ? wake - now : 10000;
		int tty = 0, sig = signals_take(ns, &tty);
		if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
			if (!forward)
				return sig;
			if (!tty)
				target_forward(t, sig);
			if (++signals >= 2)
				return sig;
		}
	}
}

/* What record and attach hold while they trace: the output, the stream,
 * the relay and the flight recorder. */
struct rec {
	const char *out;          /* the log; --rotate: the parts' directory; --flight:
	                           * the snapshots'; NULL: none (--relayd alone) */
	int flight;               /* --flight */
	int fd, dirfd, made;      /* the log's; --rotate: out's, and whether made here */
	char pname[80];           /* --rotate: the parts' name */
	struct pt_ext_rotate_stats rstats; /* ... and what the cuts did */
	struct relay *relay;
	struct flight *fl;
	trace_id_t trid;
	const char *name;         /* the program's (its file name), or "attached" */
};

/* Undoes what was made after a failure: the output, the relay, a
 * program started (it waits on its pipe: let it go, and die).  1. */
static int rec_fail(struct rec *r, struct target *t, char **prog)
{
	relay_finish(r->relay);
	if (r->fd >= 0)
		close(r->fd);
	if (r->dirfd >= 0)
		parts_abandon(r->dirfd, r->out, r->pname, r->made);
	else if (r->fd >= 0)
		unlink(r->out);
	if (prog && t->pid > 0) {
		if (t->go_fd >= 0)
			close(t->go_fd);
		kill(t->pid, SIGKILL);
		while (!target_poll(t))
			usleep(1000);
	}
	return 1;
}

/* The output made: the snapshots' directory, the parts' directory and
 * its first part, or the log.  0, or 1 after a message. */
static int rec_output(struct rec *r, const struct ropts *o, const struct target *t, char **prog)
{
	if (r->flight)
		return flight_prepare(r->out) ? 1 : 0;
	if (r->out && o->rotate) {
		parts_name(r->pname, sizeof r->pname, prog ? prog[0] : NULL, t->pid);
		if (parts_prepare(r->out, r->pname, o->force, &r->dirfd, &r->made))
			return 1;
		return (r->fd = parts_create(r->dirfd, r->out, r->pname, 1)) < 0;
	}
	return r->out && (r->fd = create_private_output(r->out, o->force)) < 0;
}

/* The program launched (paused), its stream made and started (cut into
 * parts with --rotate), what it starts told to join, the relay attached.
 * 0, or 1 after a message (the stream shut down; rec_fail undoes the
 * rest). */
static int rec_start(struct rec *r, const struct ropts *o, struct target *t, char **prog)
{
	int rc;

	if (prog && target_launch(t, prog))
		return 1;
	if (r->out && create_stream(o, t->pid, r->name, r->fd, &r->trid)) {
		if (prog)
			kill(t->pid, SIGKILL);
		return 1;
	}
	if (r->out && o->rotate) {
		struct pt_ext_rotate rot = { r->dirfd, r->pname, 1, o->rot_size, o->rot_period,
		                             o->keep, o->keep_size, &r->rstats };
		if ((rc = pt_ext_log_rotate(r->trid, &rot)) != 0) {
			err_msg("--rotate: the log of %s cannot be cut into parts: %s", r->out,
			        strerror(rc));
			posix_trace_shutdown(r->trid);
			return 1;
		}
	}
	if (r->out && (rc = posix_trace_start(r->trid)) != 0) {
		err_msg("posix_trace_start: %s", strerror(rc));
		posix_trace_shutdown(r->trid);
		return 1;
	}
	/* the processes started below the program join the stream through
	 * their environment, whoever their parent is (src/producer/join.c) */
	if (prog && r->out && o->inherit &&
	    (rc = pt_ext_join(r->trid, t->join, sizeof t->join)) != 0)
		err_msg("the program's descendants will be traced only where their "
		        "parents are: %s", strerror(rc));
	if (r->relay && relay_attach(r->relay, t->pid, r->name)) {
		if (r->out)
			posix_trace_shutdown(r->trid);
		return 1;
	}
	/* and the relay's stream, so that it gets what the log gets */
	if (prog && r->relay && o->inherit) {
		size_t n = strlen(t->join), at = n + (n > 0); /* after the log's, a comma */
		rc = at < sizeof t->join ? relay_join(r->relay, t->join + at, sizeof t->join - at)
		                         : ERANGE;
		if (rc == 0 && n)
			t->join[n] = ',';
		if (rc) {
			t->join[n] = 0;
			err_msg("the program's descendants will reach the relay only where their "
			        "parents are traced: %s", strerror(rc));
		}
	}
	return 0;
}

/* attach --tree: what the process starts joins, and its descendants
 * running now are asked to (proctree.c).  The tree watched, or NULL. */
static struct ptree *tree_start(const struct target *t, trace_id_t trid)
{
	struct ptree *tree = NULL;
	char join[128], path[32];
	struct stat st;
	int rc;

	snprintf(path, sizeof path, "/proc/%d", (int)t->pid);
	if (stat(path, &st) == 0 && st.st_uid != geteuid())
		err_msg("--tree: pid %d is another user's: its descendants join only a "
		        "stream of their own user's (run attach as that user); tracing pid "
		        "%d alone", (int)t->pid, (int)t->pid);
	else if ((rc = pt_ext_join(trid, join, sizeof join)) != 0)
		err_msg("pid %d: its descendants cannot be traced: %s", (int)t->pid, strerror(rc));
	else if (!(tree = ptree_new(t->pid)))
		err_msg("pid %d: cannot read its descendants in /proc", (int)t->pid);
	else
		ptree_poll(tree, trid);
	return tree;
}

static void tree_report(struct ptree *tree)
{
	unsigned joined, in, refused;

	ptree_free(tree, &joined, &in, &refused);
	err_msg("--tree: %u process%s of the tree asked to join (each joins if it may: "
	        "same user, not privileged), %u %s in already (inherited, or through the "
	        "environment)", joined, joined == 1 ? "" : "es", in, in == 1 ? "was" : "were");
	if (refused)
		err_msg("--tree: %u process%s of the tree could not be traced (another "
		        "user's, or not dumpable)", refused, refused == 1 ? "" : "es");
}

/* The stream shut down, the output closed and summed up.  Whether
 * events were lost (or the log may be incomplete). */
static int rec_end(struct rec *r, const struct ropts *o, const struct target *t, char **prog)
{
	int lost = 0, rc;

	if (r->flight) {
		lost = flight_end(r->fl, 1); /* (a snapshot that failed: exit status EXIT_LOST) */
		posix_trace_shutdown(r->trid);
	} else if (r->out) {
		if ((rc = posix_trace_shutdown(r->trid)) != 0) {
			err_msg("%s: the log may be incomplete: %s", r->out, strerror(rc));
			lost = 1;
		}
		close(r->fd);
		if (o->rotate) {
			close(r->dirfd);
			lost |= parts_summary(stderr, r->out, r->pname, prog ? t->pid : 0, &r->rstats);
		} else {
			lost |= print_summary(stderr, r->out, prog ? t->pid : 0);
		}
	}
	return lost;
}

static int trace_target(const struct ropts *o, struct target *t, char **prog)
{
	/* with --relayd, a local log only with -o */
	struct rec r = { .out = o->out ? o->out : o->relay.url_text ? NULL : default_name(o->rotate),
	                 .flight = o->fl.size != 0, .fd = -1, .dirfd = -1 };
	int rc, code = 0;

	if (o->relay.url_text && !(r.relay = relay_open(&o->relay)))
		return 1;
	if (rec_output(&r, o, t, prog))
		return rec_fail(&r, t, prog);
	r.name = prog ? prog[0] : "attached";
	if (strrchr(r.name, '/'))
		r.name = strrchr(r.name, '/') + 1;
	if (rec_start(&r, o, t, prog))
		return rec_fail(&r, t, prog);
	/* the follower first: a trigger the program raises as it starts is
	 * looked at too (it starts at what the stream holds already) */
	if (r.flight && !(r.fl = flight_start(&o->fl, r.trid, r.out, r.name))) {
		posix_trace_shutdown(r.trid);
		return rec_fail(&r, t, prog);
	}
	if (prog && (rc = target_release(t)) != 0) {
		err_msg("cannot run %s: %s", prog[0], strerror(rc));
		flight_end(r.fl, 0);
		relay_finish(r.relay);
		if (r.out) {
			posix_trace_shutdown(r.trid);
			if (r.fd >= 0) {
				close(r.fd);
				if (r.dirfd >= 0)
					parts_abandon(r.dirfd, r.out, r.pname, r.made);
				else
					unlink(r.out);
			}
		}
		return exec_status(rc);
	}
	struct ptree *tree = o->tree ? tree_start(t, r.trid) : NULL;
	int sig = run(t, o->duration, prog != NULL, tree, r.trid, r.fl);
	if (o->tree)
		tree_report(tree);
	relay_finish(r.relay);
	int lost = rec_end(&r, o, t, prog);
	if (prog)
		code = t->exited ? target_exit_code(t) : 128 + sig;
	/* `record ... && upload` must not take a log missing events for a whole
	 * one: the program's own failure first, else EXIT_LOST */
	if (lost && code == 0) {
		err_msg("exit status %d: events were lost (see above)", EXIT_LOST);
		code = EXIT_LOST;
	}
	return code;
}

int cmd_record(int argc, char **argv)
{
	struct ropts o;
	struct target t;
	int rc = parse(argc, argv, &o, 0);

	if (rc >= 0)
		return rc;
	target_check_privileged(argv + optind, "recorded");
	signals_block();
	prctl(PR_SET_CHILD_SUBREAPER, 1); /* orphans stay below us: their maps are kept */
	memset(&t, 0, sizeof t);
	return trace_target(&o, &t, argv + optind);
}

int cmd_attach(int argc, char **argv)
{
	struct ropts o;
	struct target t;
	pid_t pid;
	int rc = parse(argc, argv, &o, 1);

	if (rc >= 0)
		return rc;
	if (parse_pid(o.pid, &pid))
		return usage_error("'%s' is not a process id", o.pid);
	if (o.extra)
		return usage_error("unexpected argument '%s' (one PID at a time)", o.extra);
	if (target_attach(&t, pid)) {
		err_msg("no process %d (is it still running? see 'ps')", (int)pid);
		return 1;
	}
	if (!o.tree && target_check_library(pid, "recorded")) { /* (--tree: its descendants may) */
		err_msg("(to trace the processes it starts that do, use --tree)");
		if (t.pidfd >= 0)
			close(t.pidfd);
		return 1;
	}
	signals_block();
	rc = trace_target(&o, &t, NULL);
	if (t.pidfd >= 0)
		close(t.pidfd);
	return rc;
}

/*
 * main.c -- `posixtrace COMMAND ...`: the command table, --help, --version.
 */
#include <stdlib.h>
#include <string.h>
#include "cmd.h"

/* fn, or for a reading command rd: the commands that take --all (tlog.c:
 * the recorder's own process is shown too) and --t0 (time 0), one option
 * for all of them, which main() takes and hands over (struct tlog_front):
 * the reading commands and live take both, top only --all (it shows no
 * times). */
static const struct {
	const char *name;
	int (*fn)(int, char **);
	int (*rd)(int, char **, const struct tlog_front *);
	const char *what;
} cmds[] = {
	{ "record", cmd_record, NULL, "run a program traced into a log" },
	{ "attach", cmd_attach, NULL, "trace a running process into a log" },
	{ "trigger", cmd_trigger, NULL, "raise a named trigger in a flight recorder (record --flight)" },
	{ "live", NULL, cmd_live, "print the events of a process as they happen" },
	{ "top", NULL, cmd_top, "live rates and span latencies of a process, every second" },
	{ "show", NULL, cmd_show, "print the events of a log, one per line" },
	{ "info", NULL, cmd_info, "attributes, status, event types, processes of a log" },
	{ "stats", NULL, cmd_stats, "per event type: count, rate, gaps, histogram" },
	{ "view", NULL, cmd_view, "browse a log in a web browser, overview to each event" },
	{ "export", NULL, cmd_export, "convert a log: chrome (JSON), html (timeline), ctf, perfetto" },
	{ "query", cmd_query, NULL, "SQL over logs: events, slices, threads... as tables" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: posixtrace COMMAND [ARGS...]\n\n"
	           "POSIX trace streams (IEEE 1003.1 tracing, libposixtrace): record,\n"
	           "inspect and convert traces of programs that use <trace.h>.\n\ncommands:\n");
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].what);
	fprintf(f, "\nshow, info, stats, export, view, live and top leave out the recorder's own\n"
	           "process, its threads and loaded code (its system events are the trace's,\n"
	           "pid 0); --all keeps it.  Relative times count from the program's first\n"
	           "event; --t0 picks another time 0.  A thread is PID/TID (its kernel TID)\n"
	           "and its name everywhere; show, stats, export, live and view take the\n"
	           "same filters (--pid, --thread, --tid, --name, --type, --where EXPR).\n");
	fprintf(f, "\n'posixtrace COMMAND --help' describes each; 'man posixtrace' has more.\n"
	           "Exit status: 0 success, 1 error, 2 usage error; 'record' exits with\n"
	           "the program's status, or 3 if that is 0 but events were lost that no\n"
	           "policy asked to lose (a full disk, a stalled stream).\n");
}

/* Takes --all and --t0 WHEN (--t0=WHEN) out of argv (before any "--"):
 * the new argc, or -1 after a message. */
static int take_front(int argc, char **argv, int t0_ok, struct tlog_front *f)
{
	int n = 1;

	for (int i = 1; i < argc; i++) {
		const char *v = NULL;
		if (!strcmp(argv[i], "--")) {
			while (i < argc)
				argv[n++] = argv[i++];
			break;
		}
		if (!strcmp(argv[i], "--all")) {
			f->all = 1;
			continue;
		}
		if (t0_ok && !strcmp(argv[i], "--t0")) {
			if (i + 1 == argc) {
				usage_error("option '--t0' needs an argument (first, trace, a type or a time)");
				return -1;
			}
			v = argv[++i];
		} else if (t0_ok && !strncmp(argv[i], "--t0=", 5)) {
			v = argv[i] + 5;
		} else {
			argv[n++] = argv[i];
			continue;
		}
		if (t0_parse(v, &f->t0)) {
			usage_error("--t0: '%s' is not first, trace, an event type or a time", v);
			return -1;
		}
	}
	argv[n] = NULL;
	return n;
}

int main(int argc, char **argv)
{
	static char cmdname[64];
	static char *help_argv[3];

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		if (argc > 2 && strcmp(argv[1], "help") == 0) {
			help_argv[0] = argv[2];
			help_argv[1] = (char *)"--help";
			argv = help_argv;
			argc = 2;
		} else {
			usage(stdout);
			return 0;
		}
	} else if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		char v[TRACE_NAME_MAX] = "";
		trace_attr_t a;
		posix_trace_attr_init(&a);
		posix_trace_attr_getgenversion(&a, v);
		posix_trace_attr_destroy(&a);
		printf("posixtrace %s (library: %s; symbols: %s)\n", PT_CLI_VERSION, v,
		       symz_backend_dwarf() ? "elfutils libdw" : "no libdw, file+offset only");
		return 0;
	} else {
		argv++;
		argc--;
	}
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		if (!strcmp(argv[0], cmds[i].name)) {
			snprintf(cmdname, sizeof cmdname, "posixtrace %s", cmds[i].name);
			prog_cmd = cmdname;
			struct tlog_front front = { 0 }; /* (zeros: the defaults) */
			if (cmds[i].rd &&
			    (argc = take_front(argc, argv, strcmp(argv[0], "top") != 0, &front)) < 0)
				return EXIT_USAGE;
			return cmds[i].rd ? cmds[i].rd(argc, argv, &front) : cmds[i].fn(argc, argv);
		}
	fprintf(stderr, "posixtrace: unknown command '%s'\n\n", argv[0]);
	usage(stderr);
	return EXIT_USAGE;
}

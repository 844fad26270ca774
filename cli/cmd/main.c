/*
 * main.c -- `posixtrace COMMAND ...`: the command table, --help, --version.
 */
#include <stdlib.h>
#include <string.h>
#include "cmd.h"

static const struct {
	const char *name;
	int (*fn)(int, char **);
	const char *what;
} cmds[] = {
	{ "record", cmd_record, "run a program traced into a log" },
	{ "attach", cmd_attach, "trace a running process into a log" },
	{ "live", cmd_live, "print the events of a process as they happen" },
	{ "top", cmd_top, "live rates and span latencies of a process, every second" },
	{ "show", cmd_show, "print the events of a log, one per line" },
	{ "info", cmd_info, "attributes, status, event types, processes of a log" },
	{ "stats", cmd_stats, "per event type: count, rate, gaps, histogram" },
	{ "view", cmd_view, "browse a log in a web browser, overview to each event" },
	{ "export", cmd_export, "convert a log: chrome (JSON), html (timeline), ctf" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: posixtrace COMMAND [ARGS...]\n\n"
	           "POSIX trace streams (IEEE 1003.1 tracing, libposixtrace): record,\n"
	           "inspect and convert traces of programs that use <trace.h>.\n\ncommands:\n");
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].what);
	fprintf(f, "\nshow, info, stats, export and view leave out the recorder's own process, its\n"
	           "threads and loaded code (its system events are the trace's, pid 0);\n"
	           "--all keeps it.\n");
	fprintf(f, "\n'posixtrace COMMAND --help' describes each; 'man posixtrace' has more.\n"
	           "Exit status: 0 success, 1 error, 2 usage error; 'record' exits with\n"
	           "the program's status.\n");
}

/* The commands that read a log take --all (tlog.c: the recorder's own
 * process is shown too), one option for all of them. */
static int reads_log(const char *cmd)
{
	return !strcmp(cmd, "show") || !strcmp(cmd, "info") || !strcmp(cmd, "stats") ||
	       !strcmp(cmd, "export") || !strcmp(cmd, "view");
}

/* Takes --all out of argv (before any "--"): the new argc. */
static int take_all(int argc, char **argv)
{
	int n = 1;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			while (i < argc)
				argv[n++] = argv[i++];
			break;
		}
		if (!strcmp(argv[i], "--all"))
			tlog_all = 1;
		else
			argv[n++] = argv[i];
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
	if (reads_log(argv[0]))
		argc = take_all(argc, argv);
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		if (!strcmp(argv[0], cmds[i].name)) {
			snprintf(cmdname, sizeof cmdname, "posixtrace %s", cmds[i].name);
			prog_cmd = cmdname;
			return cmds[i].fn(argc, argv);
		}
	fprintf(stderr, "posixtrace: unknown command '%s'\n\n", argv[0]);
	usage(stderr);
	return EXIT_USAGE;
}

/*
 * show.c -- `posixtrace show FILE`: one event per line (see format.c),
 * filtered by process, event type and time.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

static const char help[] =
"usage: posixtrace show FILE [OPTIONS]\n"
"\n"
"Print every event of the log FILE, one per line: time since the first\n"
"event, time since the previous line, PID/THREAD (threads numbered per\n"
"process in order of appearance), event type, data (text in quotes, else\n"
"hex, 64 bytes at most) and the address that recorded it, as\n"
"function+offset (file:line), from the map of loaded code the log\n"
"carries and the programs' symbols (found by build-id).\n"
"\n"
"  -p, --pid PID[,PID...]      only these processes (each must be in the log)\n"
"  -e, --event NAME[,NAME...]  only these event types (each must be in the log)\n"
"      --since SEC             only events at or after SEC seconds\n"
"      --until SEC             only events at or before SEC seconds\n"
"  -a, --absolute              absolute times (UTC) instead of relative\n"
"      --raw-addresses         do not symbolize addresses\n"
"  -h, --help                  this help\n"
"\n"
"A log cut short or damaged is shown as far as it reads, with a note on\n"
"stderr; each damaged stretch is a posix_trace_error line.\n";

enum { O_SINCE = 256, O_UNTIL, O_RAW };

static const struct option lopts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "event", required_argument, NULL, 'e' },
	{ "since", required_argument, NULL, O_SINCE },
	{ "until", required_argument, NULL, O_UNTIL },
	{ "absolute", no_argument, NULL, 'a' },
	{ "raw-addresses", no_argument, NULL, O_RAW },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

#define MAXSEL 64

static int add_list(char *arg, char **items, int *n)
{
	char *save = NULL;
	for (char *s = strtok_r(arg, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
		if (*n == MAXSEL)
			return -1;
		items[(*n)++] = s;
	}
	return 0;
}

int cmd_show(int argc, char **argv)
{
	char *evs[MAXSEL], *pids_s[MAXSEL];
	int nev = 0, npid = 0, absolute = 0, raw = 0, c;
	double since = -1, until = -1;
	pid_t pids[MAXSEL];

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "hp:e:a", lopts, NULL)) != -1) {
		switch (c) {
		case 'h': fputs(help, stdout); return 0;
		case 'a': absolute = 1; break;
		case O_RAW: raw = 1; break;
		case 'p':
			if (add_list(optarg, pids_s, &npid))
				return usage_error("too many --pid values");
			break;
		case 'e':
			if (add_list(optarg, evs, &nev))
				return usage_error("too many --event values");
			break;
		case O_SINCE:
		case O_UNTIL:
			if (parse_seconds(optarg, c == O_SINCE ? &since : &until))
				return usage_error("%s: '%s' is not a number of seconds",
				                   c == O_SINCE ? "--since" : "--until", optarg);
			break;
		default: return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return usage_error(optind >= argc ? "which log? give a FILE" : "one FILE at a time");
	for (int i = 0; i < npid; i++)
		if (parse_pid(pids_s[i], &pids[i]))
			return usage_error("--pid: '%s' is not a process id", pids_s[i]);

	struct tlog l;
	if (tlog_load(&l, argv[optind]))
		return 1;
	tlog_warn(&l); /* before the events: `show | head` still shows it */
	for (int k = 0; k < npid; k++)
		if (!tlog_proc(&l, pids[k])) {
			err_msg("%s: no events of process %d in this log (see 'posixtrace info %s')",
			        argv[optind], (int)pids[k], argv[optind]);
			tlog_free(&l);
			return 1;
		}
	int want[PT_NIDS];
	for (unsigned i = 0; i < PT_NIDS; i++)
		want[i] = nev == 0;
	for (int k = 0; k < nev; k++) {
		int found = 0;
		char tmp[32];
		for (unsigned i = 0; i < PT_NIDS; i++)
			if ((l.names[i] || l.count[i] || system_event_name(i)) &&
			    !strcmp(tlog_name(&l, i, tmp, sizeof tmp), evs[k]))
				want[i] = found = 1;
		if (!found) {
			err_msg("%s: no event type '%s' in this log (see 'posixtrace info %s')",
			        argv[optind], evs[k], argv[optind]);
			tlog_free(&l);
			return 1;
		}
	}
	int name_w = 8;
	for (unsigned i = 0; i < PT_NIDS; i++)
		if (l.count[i] && want[i]) {
			char tmp[32];
			int w = (int)strlen(tlog_name(&l, i, tmp, sizeof tmp));
			name_w = w > name_w ? (w < 30 ? w : 30) : name_w;
		}
	struct symz *z = raw ? NULL : symz_open(&l, argv[optind], 0);
	uint64_t t0 = l.nev ? l.ev[0].ts : 0, prev;
	for (size_t i = 0; i < l.nev; i++)
		t0 = l.ev[i].ts < t0 ? l.ev[i].ts : t0;
	prev = t0;
	for (size_t i = 0; i < l.nev; i++) {
		const struct tev *e = &l.ev[i];
		if (!want[e->id])
			continue;
		if (npid) {
			int ok = 0;
			for (int k = 0; k < npid; k++)
				ok |= pids[k] == l.th[e->thread].pid;
			if (!ok)
				continue;
		}
		double rel = (double)(int64_t)(e->ts - t0) / 1e9;
		if ((since >= 0 && rel < since) || (until >= 0 && rel > until))
			continue;
		fmt_line(stdout, &l, e, t0, prev, absolute, name_w, z);
		prev = e->ts;
	}
	if (z)
		symz_close(z);
	tlog_free(&l);
	return fflush(stdout) == 0 ? 0 : 1;
}

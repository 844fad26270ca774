/*
 * summary.c -- the paragraph `record` and `attach` print when they are
 * done, from the finished log read back with posix_trace_open().
 */
#include <string.h>
#include <unistd.h>
#include "cmd.h"

int print_summary(FILE *f, const char *path, pid_t root)
{
	struct tlog l;
	unsigned types = 0, procs = 0, threads = 0;
	char dur[32], lost[320], text[240];
	pid_t self = getpid();

	if (tlog_totals(&l, path) != 0) {
		fprintf(f, "posixtrace: the log %s could not be read back\n", path);
		return 1;
	}
	for (unsigned i = 0; i < PT_NIDS; i++)
		types += l.count[i] > 0;
	tlog_program_counts(&l, self, &procs, &threads);
	uint64_t first = l.first, last = l.nev ? l.last : first;
	fmt_duration(dur, sizeof dur, last - first);
	tlog_loss_text(&l, text, sizeof text);
	snprintf(lost, sizeof lost, "%s%s%s", tlog_lost_any(&l) ? "EVENTS LOST: " : "", text,
	         tlog_loss_hint(&l));
	fprintf(f, "posixtrace: %s: %llu events of %u types from %u process%s (%u thread%s)",
	        path, (unsigned long long)l.nev, types, procs, procs == 1 ? "" : "es", threads, threads == 1 ? "" : "s");
	if (root > 0)
		fprintf(f, ", program pid %d", (int)root);
	fprintf(f, ", over %s; %s. Read it with 'posixtrace show %s'.\n", dur, lost, path);
	uint64_t nw = l.count[PT_EXT_NOLOSS_WAIT];
	if (nw)
		fprintf(f, "posixtrace: the program was held %llu time%s for room in the stream "
		        "(--no-loss): 'posixtrace info %s' says how long, per thread.\n",
		        (unsigned long long)nw, nw == 1 ? "" : "s", path);
	if (!procs && !l.log_dropped) /* only the recorder's own START/STOP/FLUSH events */
		fprintf(f, "posixtrace: %s recorded no events of its own: is it linked with "
		        "libposixtrace (-lposixtrace), and does it call posix_trace_event()?%s\n",
		        root > 0 ? "the program" : "the process",
		        root > 0 ? " No process below it did either (one started with its "
		                   "environment cleared, as by 'env -i' or sudo, is not traced)." : "");
	int unasked = tlog_lost_unasked(&l);
	tlog_free(&l);
	return unasked;
}

/*
 * cli_loss_sum.c -- losses that add up everywhere (issue 39): two threads
 * of examples/flood record 200000 events each as fast as they can into a
 * 64 KiB stream (`posixtrace record --size 64K`), which loses most of
 * them.  Each event carries its thread's number and sequence number: the
 * witness.  In every run:
 *   - every gap read from the log is an OVERFLOW/RESUME pair, with no
 *     event between, and each thread whose sequence jumps (or ends early)
 *     has a pair between the two events (after its last one);
 *   - the events the sequence numbers say were lost are the total that
 *     `record` and `info` print, and the per-gap counts of `show` (one
 *     per RESUME line, one line per gap) add up to it, as do the
 *     discarded events babeltrace2 finds in the CTF export (skipped, with
 *     a SKIP line, without babeltrace2) and the Chrome export's count;
 *   - the summary says how to lose none (--no-loss, --size);
 *   - every other run writes a LOOP log of 64 KiB (--log-policy loop),
 *     which wraps (at least one must): the gap before its oldest event counts the events it
 *     overwrote, and the sums above include them;
 *   - every fourth run records with --no-loss into such a log: the stream
 *     loses nothing and the log wraps, every time, so the losses are the
 *     log's alone, which its policy asked for: exit 0, and no gap "in the
 *     stream" told (its pair before the oldest event is the log's); the
 *     waits for room are not recorded (--exclude), so that the recorder's
 *     own events are its four, whose count the sums above rely on.
 * 4 runs (20 with PT_STRESS set: make stress).
 */
#include <fcntl.h>
#include <stdint.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "../src/ext.h"
#include "helpers.h"

#define EVENTS 200000u
#define THREADS 2u

struct seen {
	uint64_t lost, gaps, gap_sum, user, unreported, unpaired, order_bad, sys;
	struct pt_ext_losses x; /* at the end */
};

/* The log read with the library, checked against the sequence numbers. */
static struct seen witness(const char *path)
{
	struct seen s = { 0 };
	uint32_t last[THREADS] = { 0 };
	int seen[THREADS] = { 0 };
	uint64_t pairs_at[THREADS] = { 0 }, at = 0;
	int fd = open(path, O_RDONLY), open_ovf = 0;
	trace_id_t log;

	REQUIRE(fd >= 0);
	CHECK_RC(posix_trace_open(fd, &log), 0);
	for (;;) {
		struct posix_trace_event_info ev;
		uint32_t p[8];
		size_t len;
		int un;
		CHECK_RC(posix_trace_getnext_event(log, &ev, p, sizeof p, &len, &un), 0);
		if (un)
			break;
		trace_event_id_t id = ev.posix_event_id;
		if (id == POSIX_TRACE_OVERFLOW) {
			s.unpaired += open_ovf;
			open_ovf = 1;
			continue;
		}
		s.unpaired += open_ovf != (id == POSIX_TRACE_RESUME);
		open_ovf = 0;
		if (id == POSIX_TRACE_RESUME) {
			struct pt_ext_losses x;
			CHECK_RC(pt_ext_losses(log, &x), 0);
			CHECK(x.resume_ok);
			s.gaps++;
			s.gap_sum += x.at_resume + x.wrap_at_resume - at;
			at = x.at_resume + x.wrap_at_resume;
			continue;
		}
		if (id < PT_SYS_IDS) { /* the recorder's START, STOP, FLUSH_START, FLUSH_STOP */
			s.sys += id == POSIX_TRACE_START || id == POSIX_TRACE_STOP ||
			         id == POSIX_TRACE_FLUSH_START || id == POSIX_TRACE_FLUSH_STOP;
			continue;
		}
		REQUIRE(len == 8 && p[0] < THREADS && p[1] < EVENTS);
		s.user++;
		uint32_t k = p[0];
		uint64_t jump = seen[k] ? p[1] - last[k] - 1 : p[1];
		if (seen[k] && p[1] <= last[k]) {
			s.order_bad++;
			continue;
		}
		s.unreported += jump && pairs_at[k] == s.gaps;
		s.lost += jump;
		seen[k] = 1, last[k] = p[1], pairs_at[k] = s.gaps;
	}
	s.unpaired += open_ovf;
	for (unsigned k = 0; k < THREADS; k++) {
		uint64_t tail = seen[k] ? EVENTS - 1 - last[k] : EVENTS;
		s.unreported += tail && pairs_at[k] == s.gaps;
		s.lost += tail;
	}
	CHECK_RC(pt_ext_losses(log, &s.x), 0);
	CHECK(s.x.total_ok);
	CHECK_RC(posix_trace_close(log), 0);
	close(fd);
	return s;
}

int main(void)
{
	const char *flood = PT_BUILD_DIR "/examples/flood";
	const char *bt;
	char want[200], n_events[16], n_threads[16];
	int runs = getenv("PT_STRESS") ? 20 : 4, wraps = 0;

	T_BEGIN(60 * runs);
	cli_setup();
	if (access(flood, X_OK) != 0)
		T_SKIP("build/examples/flood is not built (make examples)");
	bt = cli_which("babeltrace2");
	snprintf(n_events, sizeof n_events, "%u", EVENTS);
	snprintf(n_threads, sizeof n_threads, "%u", THREADS);
	for (int run = 0; run < runs; run++) {
		const char *log = cli_path("flood.ptlog");
		char *out = NULL, *err = NULL;
		/* every other run, a LOOP log that wraps (as a rule): the gap
		 * before its oldest event counts what it overwrote */
		int loop_log = run % 2, no_loss = run % 4 == 3;
		int rc;
		if (no_loss)
			rc = cli_run(CLI("record", "--force", "-o", (char *)log, "--size", "64K",
			                 "--no-loss", "--exclude", "posixtrace_noloss_wait",
			                 "--log-policy", "loop", "--log-size", "64K", "--",
			                 (char *)flood, n_events, n_threads), NULL, &err);
		else if (loop_log)
			rc = cli_run(CLI("record", "--force", "-o", (char *)log, "--size", "64K",
			                 "--log-policy", "loop", "--log-size", "64K", "--",
			                 (char *)flood, n_events, n_threads), NULL, &err);
		else
			rc = cli_run(CLI("record", "--force", "-o", (char *)log, "--size", "64K", "--",
			                 (char *)flood, n_events, n_threads), NULL, &err);
		struct seen s = witness(log);
		/* the flush stream filling faster than it was written is a loss
		 * no policy asked for: exit 3; a LOOP log's wrap is asked for */
		CHECK_EQ(rc, s.x.total ? 3 : 0);
		CHECK_EQ(s.unpaired, 0);
		CHECK_EQ(s.unreported, 0);
		CHECK_EQ(s.order_bad, 0);
		CHECK_EQ(s.user + s.lost, (uint64_t)THREADS * EVENTS);
		/* all that was lost, the recorder's events overwritten in a
		 * wrapped log included */
		uint64_t all = s.x.total + s.x.log_overwritten;
		CHECK_EQ(s.lost + (4 - s.sys), all);
		CHECK_EQ(s.gap_sum, all);
		int wrap = s.x.log_overwritten > 0;
		CHECK(!wrap || loop_log);
		if (no_loss) {
			CHECK_EQ(s.x.total, 0);
			CHECK(wrap);
			CHECK_EQ(rc, 0);
			CHECK(!cli_contains(err, "in the stream"));
		}
		wraps += wrap;
		if (!s.lost) { /* a machine fast enough to lose nothing: nothing to add up */
			CHECK(cli_contains(err, "no events lost"));
			free(err);
			continue;
		}
		unsigned long long lost = all, gaps = s.gaps, in_stream = s.x.total;
		/* a gap "in the stream" only if the stream lost events: a
		 * wrapped log's own pair is not one */
		char stream_part[100] = "";
		if (in_stream)
			snprintf(stream_part, sizeof stream_part, "%llu events lost in %llu gap%s in "
			         "the stream", in_stream, gaps, gaps == 1 ? "" : "s");
		snprintf(want, sizeof want, "EVENTS LOST: %s", stream_part);
		if (wrap)
			snprintf(want + strlen(want), sizeof want - strlen(want),
			         "%s%llu overwritten in the log (it wrapped)", in_stream ? ", " : "",
			         (unsigned long long)s.x.log_overwritten);
		CHECK(cli_contains(err, want));
		/* what to do about it: only for the stream's losses */
		CHECK_EQ(cli_contains(err, "--no-loss") && cli_contains(err, "--size"), !!in_stream);
		if (!cli_contains(err, want))
			fprintf(stderr, "run %d: want \"%s\" in:\n%s\n", run, want, err);
		free(err);

		CHECK_EQ(cli_run(CLI("info", (char *)log), &out, NULL), 0);
		if (in_stream)
			snprintf(want, sizeof want, "lost events   %llu events lost in %llu gap",
			         in_stream, gaps);
		else
			snprintf(want, sizeof want, "lost events   %llu overwritten in the log",
			         (unsigned long long)s.x.log_overwritten);
		CHECK(cli_contains(out, want));
		free(out);

		/* one line a gap, each with its count, adding up */
		CHECK_EQ(cli_run(CLI("show", (char *)log, "-e", "posix_trace_resume"), &out, NULL), 0);
		int nl;
		CHECK_EQ(cli_gap_sum(out, &nl), lost);
		CHECK_EQ(nl, (int)gaps);
		free(out);

		const char *json = cli_path("flood.json");
		CHECK_EQ(cli_run(CLI("export", "--force", "-f", "chrome", (char *)log, "-o",
		                     (char *)json), NULL, NULL), 0);
		char *js = cli_slurp(json);
		snprintf(want, sizeof want, "\"lost\":%llu,\"lost_exact\":true,\"gaps\":%llu", lost,
		         gaps);
		CHECK(js && strstr(js, want));
		free(js);

		if (bt) {
			const char *dir = cli_path("flood.ctf");
			CHECK_EQ(cli_run(CLI("export", "--force", "-f", "ctf", (char *)log, "-o",
			                     (char *)dir), NULL, NULL), 0);
			CHECK_EQ(cli_run((char *const[]){ (char *)bt, (char *)dir, NULL }, &out, &err), 0);
			CHECK_EQ(cli_sum_after(err, "Tracer discarded "), lost);
			CHECK(!cli_contains(err, "may have discarded"));
			free(out);
			free(err);
		}
		printf("run %d%s%s: %llu of %u events lost in %llu gaps; the same in the witness, record, "
		       "info, show, Chrome%s\n", run + 1, wrap ? " (a LOOP log that wrapped)" : "",
		       no_loss ? " (--no-loss)" : "",
		       lost, THREADS * EVENTS, gaps, bt ? ", CTF (babeltrace2)" : "");
		if (t_failures)
			break;
	}
	CHECK(wraps > 0); /* a log that wrapped was checked */
	if (!bt)
		printf("SKIP: babeltrace2 is not in PATH (Debian: babeltrace2): the CTF exports were "
		       "not read back\n");
	T_END();
}

/*
 * cli_ctf.c -- `posixtrace export --format ctf` read back by the real
 * babeltrace2: one line per event of the log, and for each line an event
 * of the log (read with posix_trace_open()) with the same exact timestamp
 * (--clock-seconds), type name, pid, thread id, address and payload
 * length; the payload bytes of a text event.  Skipped without babeltrace2.
 */
#include <trace.h>
#include "t.h"
#include "cli_util.h"

static uint64_t ns(const struct posix_trace_event_info *i)
{
	return (uint64_t)i->posix_timestamp.tv_sec * 1000000000u + (uint64_t)i->posix_timestamp.tv_nsec;
}

int main(void)
{
	char *out = NULL, *err = NULL, line[8192];
	struct cli_ev *ev;

	T_BEGIN(120);
	const char *bt = cli_which("babeltrace2");
	if (!bt)
		T_SKIP("babeltrace2 is not installed (Debian: babeltrace2)");
	cli_setup();
	const char *log = cli_path("app.ptlog"), *dir = cli_path("app.ctf");
	REQUIRE(cli_record_app(log, "0") == 0);
	int n = cli_read_log(log, &ev);
	CHECK_EQ(cli_run(CLI("export", "--format", "ctf", (char *)log, "-o", (char *)dir), NULL, NULL), 0);

	int rc = cli_run((char *const[]){ (char *)bt, "--clock-seconds", (char *)dir, NULL }, &out, &err);
	CHECK_EQ(rc, 0);
	if (rc)
		fprintf(stderr, "babeltrace2: %s\n", err ? err : "");
	CHECK_EQ(cli_nlines(out), n);
	/* babeltrace2 gives them in time order; so does the log, but for
	 * events published late: match each line to an event by time + name */
	int matched = 0;
	for (int i = 0; cli_line(out, i, line, sizeof line) == 0; i++) {
		unsigned long long s = 0, f = 0, tid = 0, addr = 0;
		int pid = -1, plen = -1, k;
		char name[80];
		if (sscanf(line, "[%llu.%llu] %*s %79[^:]: { pid = %d, tid = %llx, addr = %llx, "
		                 "payload_len = %d", &s, &f, name, &pid, &tid, &addr, &plen) != 7) {
			if (i < 3)
				fprintf(stderr, "unexpected babeltrace2 line: %s\n", line);
			continue;
		}
		for (k = 0; k < n; k++)
			if (ns(&ev[k].info) == s * 1000000000u + f && !strcmp(ev[k].name, name))
				break;
		if (k < n && ev[k].info.posix_pid == pid &&
		    (unsigned long long)ev[k].info.posix_thread_id == tid &&
		    (unsigned long long)(uintptr_t)ev[k].info.posix_prog_address == addr &&
		    (int)ev[k].len == plen)
			matched++;
		else if (i - matched < 3)
			fprintf(stderr, "no event in the log for: %.200s\n", line);
	}
	CHECK_EQ(matched, n);
	/* the payload bytes of a text event: "constructor" */
	CHECK(cli_contains(out, "app_start: { pid = "));
	CHECK(cli_contains(out, "payload_len = 11, payload = [ [0] = 99, [1] = 111, [2] = 110,"));
	free(out);
	free(err);
	free(ev);
	T_END();
}

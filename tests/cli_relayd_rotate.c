/*
 * cli_relayd_rotate.c -- `record --relayd URL --rotate SIZE -o DIR`: the
 * local log is cut into parts while the relay goes on getting every event
 * in one session (LTTng cannot rotate a live session; we cut only our own
 * log).  The relay is Debian's lttng-relayd on free loopback ports
 * (tests/relayd_util.h), read back with babeltrace2.
 *
 * The program is this test ("produce N"): it records relay_tick events
 * carrying 0 .. N-1 (the witness), one every 20 us, enough for several
 * parts of 64K.  Then:
 *   - record exits 0, says every event was sent and none lost;
 *   - the relay has exactly N relay_tick events (and one START, one
 *     STOP), 0 .. N-1 in order, none discarded;
 *   - the local parts, 3 or more, read in their order: 0 .. N-1 exactly
 *     once, in order, each part opening alone (its events named: each
 *     begins with the names).
 *
 * SKIP (77) without lttng-relayd (Debian: lttng-tools) or babeltrace2.
 */
#include <dirent.h>
#include <fcntl.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "relayd_util.h"
#include "rotate_util.h"

#define N 30000u

static int produce(unsigned n)
{
	trace_event_id_t id;
	alarm(100);
	if (posix_trace_eventid_open("relay_tick", &id) != 0)
		return 3;
	for (uint32_t k = 0; k < n; k++) {
		posix_trace_event(id, &k, sizeof k);
		if (k % 16 == 15)
			usleep(320);
	}
	return 0;
}

/* part path's relay_tick payloads, checked to go on from *next; its count */
static long read_part(const char *path, uint32_t *next, long *bad)
{
	struct cli_ev *ev;
	int n = cli_read_log(path, &ev);
	long ticks = 0;
	REQUIRE(n >= 0);
	for (int i = 0; i < n; i++) {
		if (strcmp(ev[i].name, "relay_tick"))
			continue;
		uint32_t k;
		if (ev[i].len != sizeof k) {
			(*bad)++;
			continue;
		}
		memcpy(&k, ev[i].data, sizeof k);
		*bad += k != *next;
		*next = k + 1;
		ticks++;
	}
	free(ev);
	return ticks;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "produce"))
		return produce((unsigned)atoi(argv[2]));
	signal(SIGALRM, relayd_on_alarm);
	T_BEGIN(120);
	cli_setup();
	relayd_need();
	relayd_ports();
	relayd_start();

	const char *dir = cli_path("parts");
	char n[16], *err = NULL, *out = NULL;
	snprintf(n, sizeof n, "%u", N);
	int rc = cli_run(CLI("record", "--relayd", (char *)url(), "--hostname", "hrot", "--session",
	                     "rot", "--rotate", "64K", "-o", (char *)dir, "--", self, "produce", n),
	                 NULL, &err);
	CHECK_EQ(rc, 0);
	char want[64];
	snprintf(want, sizeof want, "%u events sent to hrot/rot-", N + 2); /* START, STOP */
	CHECK(cli_contains(err, want));
	CHECK(cli_contains(err, "; 0 not delivered"));
	CHECK(cli_contains(err, "; 0 events lost"));
	if (rc || !cli_contains(err, want))
		fprintf(stderr, "record said:\n%s\n", err ? err : "");
	free(err);

	/* the relay: one session, every event, in order */
	char path[512];
	snprintf(path, sizeof path, "%s/hrot", cli_path("out"));
	CHECK_EQ(cli_run((char *const[]){ (char *)bt_bin, path, NULL }, &out, &err), 0);
	CHECK_EQ(cli_count_str(out, " relay_tick: "), (int)N);
	CHECK_EQ(cli_count_str(out, " posix_trace_start: "), 1);
	CHECK_EQ(cli_count_str(out, " posix_trace_stop: "), 1);
	CHECK(!cli_contains(err, "discarded"));
	/* the first and the last payloads (little-endian bytes of 0 and N-1) */
	CHECK(cli_contains(out, "payload = [ [0] = 0, [1] = 0, [2] = 0, [3] = 0 ]"));
	char last[96];
	snprintf(last, sizeof last, "payload = [ [0] = %u, [1] = %u, [2] = 0, [3] = 0 ]",
	         (N - 1) & 0xff, (N - 1) >> 8);
	CHECK(cli_contains(out, last));
	free(out);
	free(err);

	/* the local parts: every event once, in order across them */
	const char *base = strrchr(self, '/') + 1;
	uint32_t next = 0;
	long bad = 0, total = 0;
	static struct ru_part p[RU_MAXPARTS];
	unsigned parts = ru_list(dir, base, p);
	for (unsigned i = 0; i < parts; i++) {
		snprintf(path, sizeof path, "%s/%s-%u.ptlog", dir, base, p[i].n);
		total += read_part(path, &next, &bad);
	}
	CHECK(parts >= 3);
	CHECK(!parts || p[parts - 1].n == parts); /* numbered 1 .. parts */
	CHECK_EQ(total, (long)N);
	CHECK_EQ(bad, 0);
	CHECK_EQ(next, N);
	if (parts < 3 || total != (long)N || bad)
		fprintf(stderr, "%u parts, %ld events, %ld out of order\n", parts, total, bad);
	relayd_stop(SIGTERM);
	T_END();
}

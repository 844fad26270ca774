/*
 * cli_snapshot_backlog.c -- the flight recorder acts on every trigger the
 * program raised, even when its follower is far behind when the program
 * ends (`record --flight ... --snapshot-on trigger:NAME`, cli/cmd/flight.c,
 * flight_end).
 *
 * The program is this test again ("app"): it stops the recorder (its
 * parent) with SIGSTOP and waits until the recorder is stopped, so that
 * nothing of what follows is seen as it happens; records "work" events
 * with a sequence number (the witness), and raises the trigger "bt"
 * NTRIG times, 5 ms apart; then has a child of its own send SIGCONT to
 * the recorder 100 ms after it has ended itself.  The recorder so finds
 * the whole storm in the stream after the program is gone.  (Before the
 * fix, the end of the recording stopped following after the first
 * window it took there: 1 or 2 snapshots of NTRIG; under
 * ThreadSanitizer a follower slowed by its copies lost triggers the same
 * way in tests/cli_snapshot_queue.)
 *
 * Checked: exactly NTRIG snapshots and NTRIG triggers counted; each
 * snapshot ends at its own trigger (the k-th holds k triggers, the last
 * its window's end) and holds the work events of its window with no gap
 * in their sequence; nothing reported missed.
 */
#include <signal.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "helpers.h"

#define NTRIG 6
#define GAP_US 5000

static trace_event_id_t ev_work;

/* the state letter of /proc/PID/stat ('T': stopped) */
static char proc_state(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

static int app(void)
{
	pid_t rec = getppid();
	uint32_t seq = 0;

	alarm(60);
	if (posix_trace_eventid_open("work", &ev_work) != 0 || kill(rec, SIGSTOP) != 0)
		return 2;
	for (int i = 0; proc_state(rec) != 'T'; i++) {
		if (i > 10000)
			return 3;
		usleep(1000);
	}
	for (int k = 0; k < NTRIG; k++) {
		for (int i = 0; i < 100; i++, seq++)
			posix_trace_event(ev_work, &seq, sizeof seq);
		posixtrace_trigger("bt");
		usleep(GAP_US);
	}
	pid_t self = getpid(), p = fork();
	if (p < 0) {
		kill(rec, SIGCONT);
		return 4;
	}
	if (p == 0) { /* the recorder goes on once this program has ended */
		for (int i = 0; getppid() == self && i < 5000; i++)
			usleep(1000); /* (until it is another's child: it has ended) */
		usleep(100000);
		kill(rec, SIGCONT);
		_exit(0);
	}
	return 0;
}

static uint64_t ns_of(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000u + (uint64_t)t->tv_nsec;
}

/* snapshot k (1..NTRIG) checked */
static void check_snapshot(const char *path, int k)
{
	int fd = open(path, O_RDONLY);
	trace_id_t l;
	REQUIRE(fd >= 0);
	REQUIRE(posix_trace_open(fd, &l) == 0);
	struct posix_trace_event_info e;
	unsigned char buf[64];
	size_t len;
	int unav, trig = 0, gaps = 0, bad = 0;
	uint64_t tmax = 0, last_trig = 0;
	long next = -1, work = 0;
	while (posix_trace_getnext_event(l, &e, buf, sizeof buf, &len, &unav) == 0 && !unav) {
		char nm[TRACE_EVENT_NAME_MAX + 1] = "";
		posix_trace_eventid_get_name(l, e.posix_event_id, nm);
		uint64_t t = ns_of(&e.posix_timestamp);
		tmax = t > tmax ? t : tmax;
		if (e.posix_event_id == POSIX_TRACE_OVERFLOW) {
			gaps++;
		} else if (!strcmp(nm, "work")) {
			uint32_t s;
			if (len != sizeof s) {
				bad++;
				continue;
			}
			memcpy(&s, buf, sizeof s);
			bad += next >= 0 && (long)s != next;
			next = (long)s + 1;
			work++;
		} else if (!strcmp(nm, "posixtrace_trigger")) {
			trig++;
			last_trig = t;
		}
	}
	posix_trace_close(l);
	close(fd);
	CHECK_EQ(trig, k);      /* the window (--before 1s) holds the triggers up to its own */
	CHECK_EQ(tmax, last_trig); /* and ends there (--after 0) */
	CHECK_EQ(work, 100L * k);
	CHECK_EQ(next, 100L * k);
	CHECK_EQ(bad, 0);
	CHECK_EQ(gaps, 0);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "app"))
		return app();
	T_BEGIN(120);
	cli_setup();
	const char *dir = cli_path("bt");
	char *err = NULL;
	int rc = cli_run(CLI("record", "--flight", "16M", "--snapshot-on", "trigger:bt", "--before",
	                     "1s", "-o", (char *)dir, "--", argv[0], "app"),
	                 NULL, &err);
	CHECK_EQ(rc, 0);
	CHECK_EQ(cli_count_logs(dir), NTRIG);
	char want[64];
	snprintf(want, sizeof want, "%d triggers, %d snapshots written", NTRIG, NTRIG);
	CHECK(cli_contains(err, want));
	CHECK(!cli_contains(err, "missed") && !cli_contains(err, "not taken"));
	if (rc || !cli_contains(err, want))
		fprintf(stderr, "record said:\n%s\n", err ? err : "");
	free(err);
	const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	for (int k = 1; k <= NTRIG; k++) {
		char path[600];
		snprintf(path, sizeof path, "%s/%s-%d.ptlog", dir, base, k);
		if (access(path, R_OK) != 0) {
			fprintf(stderr, "%s: missing\n", path);
			CHECK(!"every snapshot is there");
			continue;
		}
		check_snapshot(path, k);
	}
	T_END();
}

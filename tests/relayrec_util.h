/*
 * relayrec_util.h -- what the tests of `posixtrace record --relayd`
 * share (cli_relayd*.c; the relay itself: relayd_util.h): the traced
 * program, which is the test itself ("produce" mode: it posts an exact
 * number of "relay_tick" events in batches, each batch waiting for a gate
 * file the test creates, and creates a file after each batch, and writes
 * its own count), babeltrace2 on the relay's output, a host's events on
 * the relay against the program's count, and the tests' main.  Needs t.h,
 * cli_util.h, helpers.h and relayd_util.h first.
 */
#ifndef PT_RELAYREC_UTIL_H
#define PT_RELAYREC_UTIL_H
#include <fcntl.h>

/* ------------------------------------------------------ produce mode */

/* (bounded: a producer left behind by a failed test goes away) */
static inline void wait_file(const char *path)
{
	for (int i = 0; access(path, F_OK) != 0; i++) {
		if (i > 120 * 500)
			_exit(5);
		usleep(2000);
	}
}

/* produce PERIOD_US N:GATE:DONE ... [=COUNT]: per batch, wait for GATE
 * ("-": no wait), post N events, create DONE ("-": none); at the end,
 * write the number of events posted into file COUNT (the program's own
 * count, the witness the relay's counts are checked against). */
static inline int produce(int argc, char **argv)
{
	trace_event_id_t id;
	unsigned period = (unsigned)atoi(argv[2]);
	uint32_t k = 0;

	if (posix_trace_eventid_open("relay_tick", &id) != 0)
		return 3;
	for (int b = 3; b < argc; b++) {
		char gate[512], done[512];
		unsigned n;
		if (argv[b][0] == '=') {
			FILE *f = fopen(argv[b] + 1, "w");
			if (!f || fprintf(f, "%u\n", (unsigned)k) < 0 || fclose(f) != 0)
				return 6;
			continue;
		}
		if (sscanf(argv[b], "%u:%511[^:]:%511s", &n, gate, done) != 3)
			return 4;
		if (strcmp(gate, "-"))
			wait_file(gate);
		for (unsigned i = 0; i < n; i++, k++) {
			posix_trace_event(id, &k, sizeof k);
			if (period)
				usleep(period);
		}
		if (strcmp(done, "-"))
			close(open(done, O_WRONLY | O_CREAT, 0644));
	}
	return 0;
}

/* ------------------------------------------------------------ helpers */
static inline unsigned long long sum_after(const char *s, const char *key)
{
	unsigned long long sum = 0;
	for (const char *p = s; p && (p = strstr(p, key)) != NULL; p += strlen(key))
		sum += strtoull(p + strlen(key), NULL, 10);
	return sum;
}

/* babeltrace2 on a path of the relay's output: its exit status, output
 * and stderr. */
static inline int bt_read(const char *sub, char **out, char **err)
{
	char path[512];
	snprintf(path, sizeof path, "%s%s%s", cli_path("out"), *sub ? "/" : "", sub);
	return cli_run((char *const[]){ (char *)bt_bin, path, NULL }, out, err);
}

static char *slurp_or_empty(const char *path)
{
	char *s = cli_slurp(path);
	if (!s)
		s = strdup("");
	REQUIRE(s != NULL);
	return s;
}

/* Wait until file path contains what (the alarm bounds it). */
static inline void wait_text(const char *path, const char *what)
{
	for (;;) {
		char *s = slurp_or_empty(path);
		int found = strstr(s, what) != NULL;
		free(s);
		if (found)
			return;
		usleep(10000);
	}
}

static inline void touch(const char *name)
{
	close(open(cli_path(name), O_WRONLY | O_CREAT, 0644));
}

static char *batch(char *buf, size_t cap, unsigned n, const char *gate, const char *done)
{
	snprintf(buf, cap, "%u:%s:%s", n, gate ? cli_path(gate) : "-", done ? cli_path(done) : "-");
	return buf;
}

/* relay_tick events of the local log */
static inline int log_ticks(const char *log)
{
	struct cli_ev *ev;
	int n = cli_read_log(log, &ev);
	int k = cli_count(ev, n, "relay_tick");
	free(ev);
	return k;
}

/* Until babeltrace2 reads n relay_tick events in the relay's directory
 * of host (it never reads more). */
static inline void wait_on_disk_of(const char *host, const char *what, int n)
{
	for (;;) {
		char *out = NULL;
		bt_read(host, &out, NULL);
		int k = cli_count_str(out, what);
		free(out);
		REQUIRE(k <= n);
		if (k == n)
			return;
		usleep(50000);
	}
}

static inline void wait_on_disk(const char *host, int n)
{
	wait_on_disk_of(host, " relay_tick: ", n);
}

/* record --relayd and -o of three batches of 1000 events for host (its
 * session too): the first at once, then done file HOST.1; the second
 * after gate HOST.g2, then HOST.2; the third after HOST.g3. */
static inline pid_t record_batches(const char *host, const char *log, const char *err)
{
	char b1[600], b2[600], b3[600], n[4][64];
	snprintf(n[0], sizeof n[0], "%s.1", host);
	snprintf(n[1], sizeof n[1], "%s.g2", host);
	snprintf(n[2], sizeof n[2], "%s.2", host);
	snprintf(n[3], sizeof n[3], "%s.g3", host);
	return spawn(CLI("record", "--relayd", (char *)url(), "--hostname", (char *)host,
	                 "--session", (char *)host, "-o", (char *)log, "--", self, "produce", "100",
	                 batch(b1, sizeof b1, 1000, NULL, n[0]),
	                 batch(b2, sizeof b2, 1000, n[1], n[2]),
	                 batch(b3, sizeof b3, 1000, n[3], NULL)),
	             NULL, err);
}

/* The count a produce program wrote into file name (-1: none). */
static inline long program_count(const char *name)
{
	char *s = cli_slurp(cli_path(name));
	long n = s && *s ? strtol(s, NULL, 10) : -1;
	free(s);
	return n;
}

/* What record said it sent ("N events sent to HOST/"), -1 if not said. */
static inline long record_sent(const char *err, const char *host)
{
	char key[96];
	snprintf(key, sizeof key, " events sent to %s/", host);
	const char *p = err ? strstr(err, key) : NULL;
	if (!p)
		return -1;
	while (p > err && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return strtol(p, NULL, 10);
}

/* Host name's events on the relay are exactly the program's own count
 * (file name.count), and record said it sent them (and START, STOP) and
 * lost none. */
static inline void check_host(const char *name, const char *rec_err)
{
	char cnt[96], *out = NULL, *err = NULL;
	snprintf(cnt, sizeof cnt, "%s.count", name);
	long posted = program_count(cnt);
	char *e = slurp_or_empty(rec_err);
	CHECK(posted > 0);
	CHECK_EQ(record_sent(e, name), posted + 2);
	CHECK(cli_contains(e, "; 0 not delivered"));
	CHECK_EQ(bt_read(name, &out, &err), 0);
	CHECK_EQ(cli_count_str(out, " relay_tick: "), posted);
	if (cli_count_str(out, " relay_tick: ") != posted)
		fprintf(stderr, "%s: the program posted %ld, the relay has %d; record: %s", name,
		        posted, cli_count_str(out, " relay_tick: "), e);
	free(e);
	free(out);
	free(err);
}

/* A test's main: the produce mode when it runs as one, else the relay's
 * ports, then no_relay() (the cases without a relay; NULL: none), the
 * relay started, run(), the relay stopped, under an alarm.  Skipped
 * without lttng-relayd or babeltrace2. */
static inline int relayrec_main(int argc, char **argv, void (*no_relay)(void), void (*run)(void))
{
	if (argc > 3 && !strcmp(argv[1], "produce"))
		return produce(argc, argv);
	signal(SIGALRM, relayd_on_alarm);
	T_BEGIN(240);
	cli_setup();
	relayd_need();
	relayd_ports();
	if (no_relay)
		no_relay();
	relayd_start();
	run();
	relayd_stop(SIGTERM);
	T_END();
}
#endif

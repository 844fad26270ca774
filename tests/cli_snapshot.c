/*
 * cli_snapshot.c -- `posixtrace record --flight SIZE --snapshot-on TRIGGER
 * -o DIR`: snapshots of a loop stream on a trigger (cli/cmd/flight.c,
 * src/control/snapshot.c), each trigger kind under load.
 *
 * The program is this test again ("app KIND DIR"): two threads record
 * "load" events as fast as they can, each with its own sequence number
 * (the witness), while the main thread raises the trigger, then waits
 * until the snapshot is in DIR, then ends.  Each snapshot must hold, per
 * thread, contiguous sequence numbers (no gap, no OVERFLOW), the trigger
 * event itself, and nothing stamped outside [T - before, T + after], T
 * the trigger event's time; it opens alone (show names the threads and
 * types, decodes the typed payload).
 *
 *   error:status<0    "error" events (described status:i32): 5, then -7
 *   span:request>500ms a span of nothing, then one of 700 ms
 *   trigger:boom      posixtrace_trigger("boom") in the program; and,
 *                     the program silent, `posixtrace trigger boom DIR`
 *   full:30%          the stream filling
 *   last              posixtrace_trigger("last") as the program's very
 *                     last event (the load stopped just before, the
 *                     program ends at once): the snapshot, taken as the
 *                     recorder ends, holds it and the load before it, and
 *                     the recorder says nothing was overwritten
 *   a storm           a trigger every 100 us: --max 3 makes exactly 3
 *                     snapshots, --every 1h exactly 1
 *   the disk full     DIR on a 64 KiB tmpfs (a mount namespace of its
 *                     own; skipped without): the first, big snapshot
 *                     fails with a message naming its file, recording
 *                     goes on, a later small one is written
 */
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/mount.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "snap_util.h"

#define BEFORE_NS 20000000ull
#define AFTER_NS 5000000ull

/* ------------------------------------------------------------ the program */
static void wait_snapshots(const char *dir, int n)
{
	while (cli_count_logs(dir) < n)
		usleep(1000);
}

static void ms_sleep(int ms)
{
	struct timespec t = { ms / 1000, (long)(ms % 1000) * 1000000 };
	nanosleep(&t, NULL);
}

static int app(const char *kind, const char *dir)
{
	pthread_t th[2];
	trace_event_id_t ev_err, ev_b, ev_e;

	alarm(60);
	posix_trace_eventid_open("load", &snap_ev_load);
	posix_trace_eventid_open("error", &ev_err);
	posixtrace_eventid_describe(ev_err, "status:i32");
	posix_trace_eventid_open("request/begin", &ev_b);
	posix_trace_eventid_open("request/end", &ev_e);
	for (uintptr_t i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, snap_load_worker, (void *)i);
	ms_sleep(30); /* load before the trigger */
	if (!strcmp(kind, "error")) {
		int32_t st = 5;
		posix_trace_event(ev_err, &st, sizeof st);
		ms_sleep(2);
		st = -7;
		posix_trace_event(ev_err, &st, sizeof st);
	} else if (!strcmp(kind, "span")) {
		/* (a short one back to back: no scheduler holds a thread 500 ms
		 * between two of its instructions, so it never fires) */
		posix_trace_event(ev_b, NULL, 0);
		posix_trace_event(ev_e, NULL, 0);
		posix_trace_event(ev_b, NULL, 0);
		ms_sleep(700);
		posix_trace_event(ev_e, NULL, 0);
	} else if (!strcmp(kind, "named")) {
		posixtrace_trigger("boom");
	} else if (!strcmp(kind, "storm")) {
		/* until the limit is seen, then 300 ms more */
		int more = -1;
		for (int k = 0; more != 0; k++) {
			posixtrace_trigger("storm");
			usleep(100);
			if (more < 0 && cli_count_logs(dir) >= atoi(getenv("SNAP_STORM_N")))
				more = 3000;
			else if (more > 0)
				more--;
		}
	} else if (!strcmp(kind, "last")) {
		while (atomic_load(&snap_n[0]) == 0 || atomic_load(&snap_n[1]) == 0)
			ms_sleep(1); /* (both recorded) */
		atomic_store(&snap_stop, 1);
		for (int i = 0; i < 2; i++)
			pthread_join(th[i], NULL);
		posixtrace_trigger("last");
		return 0;
	} else if (!strcmp(kind, "diskfull")) {
		posixtrace_trigger("boom"); /* under load: too big for the disk */
		const char *errf = getenv("SNAP_ERR");
		for (;;) { /* until the recorder said so */
			char *s = cli_slurp(errf);
			int said = s && strstr(s, "No space left");
			free(s);
			if (said)
				break;
			usleep(1000);
		}
		atomic_store(&snap_stop, 1); /* quiet: the next is small */
		for (int i = 0; i < 2; i++)
			pthread_join(th[i], NULL);
		ms_sleep(100);
		posixtrace_trigger("boom");
	}
	/* (external, full: raised from outside, or by the load itself) */
	wait_snapshots(dir, 1);
	ms_sleep(20); /* the load goes on after the snapshot */
	atomic_store(&snap_stop, 1);
	if (strcmp(kind, "diskfull"))
		for (int i = 0; i < 2; i++)
			pthread_join(th[i], NULL);
	return 0;
}

/* ------------------------------------------------------------ the checks */
static const char *self;

struct snapcheck {
	const char *trig_name;   /* the trigger event's type, or NULL */
	int32_t status;          /* error: its payload */
	const char *trig_data;   /* posixtrace_trigger: its payload */
	const char *also;        /* a type that must be there too, or NULL */
	uint64_t before, after;  /* the window, when the trigger is known */
	int quiet;               /* 1: the load had ended, no load events; -1: any
	                          * (a window of 2 ms may fall while both
	                          * threads are off the CPU) */
};

/* What check_snapshot() looks for besides the load. */
struct snaptrig {
	const struct snapcheck *c;
	uint64_t trig; /* the trigger event's time */
	long trig_n, also;
};

static void snap_event(void *ctx, const char *nm, uint64_t t, const unsigned char *buf,
                       size_t len)
{
	struct snaptrig *x = ctx;
	const struct snapcheck *c = x->c;

	if (c->also && strcmp(nm, "load") && !strcmp(nm, c->also))
		x->also++;
	if (c->trig_name && !strcmp(nm, c->trig_name)) {
		int32_t st;
		if (c->trig_data ? !*c->trig_data ||
		                   (len == strlen(c->trig_data) && !memcmp(buf, c->trig_data, len))
		                 : len == 4 && (memcpy(&st, buf, 4), st == c->status)) {
			x->trig = t;
			x->trig_n++;
		}
	}
}

/* The events of snapshot path checked: its number of load events. */
static long check_snapshot(const char *path, const struct snapcheck *c)
{
	struct snaptrig x = { c, 0, 0, 0 };
	struct snap_seen s;
	snap_read(path, snap_event, &x, &s);
	CHECK_EQ(s.bad, 0);
	CHECK_EQ(s.gaps, 0);
	if (c->quiet >= 0)
		CHECK(c->quiet ? s.loads == 0 : s.loads > 0);
	if (c->trig_name) {
		if (c->trig_data && !*c->trig_data)
			CHECK(x.trig_n >= 1); /* (span: the last is the trigger) */
		else
			CHECK_EQ(x.trig_n, 1);
		if (x.trig) {
			CHECK(s.tmin >= x.trig - c->before);
			CHECK(s.tmax <= x.trig + c->after);
		}
	}
	if (c->also)
		CHECK(x.also > 0);
	if (s.bad || s.gaps || (c->quiet == 0 && !s.loads) || (c->trig_name && !x.trig_n))
		fprintf(stderr, "%s: %ld loads, %ld bad, %ld gaps, trigger seen %ld times\n", path,
		        s.loads, s.bad, s.gaps, x.trig_n);
	return s.loads;
}

static pid_t spawn(char *const argv[], const char *errf)
{
	fflush(NULL);
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		int e = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int o = open("/dev/null", O_WRONLY);
		if (e < 0 || o < 0)
			_exit(126);
		dup2(o, 1);
		dup2(e, 2);
		execv(argv[0], argv);
		_exit(126);
	}
	return pid;
}

static int wait_rc(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0)
		REQUIRE(errno == EINTR);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* record KIND with the trigger options: its exit status; its stderr in *err */
static int record(const char *kind, const char *dir, char **opts, char **err)
{
	char *argv[32];
	int n = 0;
	argv[n++] = (char *)cli_bin;
	argv[n++] = "record";
	argv[n++] = "--flight";
	argv[n++] = "64M";
	argv[n++] = "-o";
	argv[n++] = (char *)dir;
	for (int i = 0; opts[i]; i++)
		argv[n++] = opts[i];
	argv[n++] = "--";
	argv[n++] = (char *)self;
	argv[n++] = "app";
	argv[n++] = (char *)kind;
	argv[n++] = (char *)dir;
	argv[n] = NULL;
	char errf[300];
	snprintf(errf, sizeof errf, "%s.err", dir);
	pid_t pid = spawn(argv, errf);
	if (!strcmp(kind, "external")) {
		char pidfile[300];
		snprintf(pidfile, sizeof pidfile, "%s/.posixtrace-recorder", dir);
		while (access(pidfile, F_OK) != 0)
			usleep(1000);
		usleep(50000); /* under load */
		char *terr = NULL;
		CHECK_EQ(cli_run(CLI("trigger", "boom", (char *)dir), NULL, &terr), 0);
		if (terr && *terr)
			fprintf(stderr, "trigger said: %s\n", terr);
		free(terr);
	}
	int rc = wait_rc(pid);
	*err = cli_slurp(errf);
	if (rc && strcmp(kind, "diskfull"))
		fprintf(stderr, "record %s: exit %d:\n%s\n", kind, rc, *err ? *err : "");
	return rc;
}

static const char *snap_path(const char *dir, int n)
{
	static char p[4][400];
	const char *base = strrchr(self, '/') ? strrchr(self, '/') + 1 : self;
	snprintf(p[n % 4], sizeof p[0], "%s/%s-%d.ptlog", dir, base, n);
	return p[n % 4];
}

/* The snapshot snap copied twice into a new directory NAME (s-1.ptlog,
 * s-2.ptlog): the same events twice, not one trace, so show refuses the
 * directory, naming both. */
static void dup_refused(const char *snap, const char *name)
{
	char src[400], cmd[1400];
	snprintf(src, sizeof src, "%s", snap);
	const char *dup = cli_path(name);
	snprintf(cmd, sizeof cmd, "mkdir '%s' && cp '%s' '%s/s-1.ptlog' && cp '%s' '%s/s-2.ptlog'",
	         dup, src, dup, src, dup);
	REQUIRE(system(cmd) == 0);
	char *o = NULL, *err = NULL;
	CHECK(cli_run(CLI("show", (char *)dup), &o, &err) != 0);
	CHECK(cli_contains(err, "snapshots of one flight recorder"));
	CHECK(cli_contains(err, "s-1.ptlog") && cli_contains(err, "s-2.ptlog"));
	free(o);
	free(err);
}

static void one(const char *kind, char **opts, const struct snapcheck *c)
{
	char *err = NULL;
	const char *dir = cli_path(kind);
	CHECK_EQ(record(kind, dir, opts, &err), 0);
	CHECK_EQ(cli_count_logs(dir), 1);
	if (access(snap_path(dir, 1), R_OK) == 0)
		check_snapshot(snap_path(dir, 1), c);
	else
		fprintf(stderr, "%s: no %s; record said:\n%s\n", kind, snap_path(dir, 1), err);
	CHECK(cli_contains(err, "snapshot "));
	free(err);
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "app"))
		return app(argv[2], argv[3]);
	T_BEGIN(300);
	self = argv[0];
	cli_setup();
	char before[32], after[32];
	snprintf(before, sizeof before, "%llums", BEFORE_NS / 1000000);
	snprintf(after, sizeof after, "%llums", AFTER_NS / 1000000);

	/* an event type with a condition on its typed field */
	one("error", (char *[]){ "--snapshot-on", "error:status<0", "--before", before, "--after",
	                         after, NULL },
	    &(struct snapcheck){ "error", -7, NULL, NULL, BEFORE_NS, AFTER_NS, 0 });
	/* a span longer than 500 ms (the short one does not fire) */
	one("span", (char *[]){ "--snapshot-on", "span:request>500ms", "--before", "100ms", NULL },
	    &(struct snapcheck){ "request/end", 0, "", NULL, 100000000ull, 0, 0 });
	/* the program's own named trigger */
	one("named", (char *[]){ "--snapshot-on", "trigger:boom", "--before", before, "--after",
	                         after, NULL },
	    &(struct snapcheck){ "posixtrace_trigger", 0, "boom", NULL, BEFORE_NS, AFTER_NS, 0 });
	/* from outside */
	one("external", (char *[]){ "--snapshot-on", "trigger:boo*", "--before", before, NULL },
	    &(struct snapcheck){ NULL, 0, NULL, NULL, 0, 0, 0 });
	/* the stream filling */
	one("full", (char *[]){ "--snapshot-on", "full:30%", "--before", "50ms", NULL },
	    &(struct snapcheck){ NULL, 0, NULL, NULL, 0, 0, 0 });

	/* the trigger as the program's very last event */
	{
		char *err = NULL;
		const char *dir = cli_path("last");
		CHECK_EQ(record("last", dir, (char *[]){ "--snapshot-on", "trigger:last", "--before",
		                                         "1s", NULL }, &err), 0);
		CHECK_EQ(cli_count_logs(dir), 1);
		if (access(snap_path(dir, 1), R_OK) == 0)
			check_snapshot(snap_path(dir, 1), &(struct snapcheck){ "posixtrace_trigger", 0,
			                                                       "last", NULL, 1000000000ull,
			                                                       0, 0 });
		CHECK(cli_contains(err, "1 snapshot written"));
		CHECK(!cli_contains(err, "holds no event") && !cli_contains(err, "lacks"));
		free(err);
	}

	/* a snapshot of one event (--before 0: the trigger alone), twice in a
	 * directory: its first time is its last, and the copy beginning at
	 * that time is the same events again: show refuses it too (it read
	 * the two as one trace, the event twice, under a slow sanitizer's
	 * storm of 2 ms windows) */
	{
		char *err = NULL, *o = NULL;
		const char *dir = cli_path("one");
		CHECK_EQ(record("last", dir, (char *[]){ "--snapshot-on", "trigger:last", "--before",
		                                         "0", NULL }, &err), 0);
		free(err);
		err = NULL;
		REQUIRE(cli_count_logs(dir) == 1);
		CHECK_EQ(cli_run(CLI("show", (char *)snap_path(dir, 1)), &o, &err), 0);
		CHECK_EQ(cli_count_str(o, "posixtrace_trigger"), 1);
		CHECK_EQ(cli_count_str(o, "\n"), 1);
		free(o);
		free(err);
		dup_refused(snap_path(dir, 1), "one-dup");
	}

	/* a storm: --max 3, exactly 3; --every 1h, exactly 1 */
	{
		char *err = NULL;
		const char *dir = cli_path("storm-max");
		setenv("SNAP_STORM_N", "3", 1);
		CHECK_EQ(record("storm", dir, (char *[]){ "--snapshot-on", "trigger:storm", "--before",
		                                          "2ms", "--max", "3", NULL }, &err), 0);
		CHECK_EQ(cli_count_logs(dir), 3);
		for (int i = 1; i <= 3; i++)
			if (access(snap_path(dir, i), R_OK) == 0)
				check_snapshot(snap_path(dir, i), &(struct snapcheck){ NULL, 0, NULL, NULL,
				                                                       0, 0, -1 });
		CHECK(cli_contains(err, "over --max or --every"));
		free(err);
		/* a directory of snapshots whose windows overlap is not one
		 * trace (the same events twice): show refuses it, naming both */
		dup_refused(snap_path(dir, 1), "storm-dup");
		dir = cli_path("storm-every");
		setenv("SNAP_STORM_N", "1", 1);
		CHECK_EQ(record("storm", dir, (char *[]){ "--snapshot-on", "trigger:storm", "--before",
		                                          "2ms", "--every", "1h", NULL }, &err), 0);
		CHECK_EQ(cli_count_logs(dir), 1);
		CHECK(cli_contains(err, "over --max or --every"));
		free(err);
	}

	/* attach --flight: the same on a running program */
	{
		const char *dir = cli_path("attach");
		REQUIRE(mkdir(dir, 0700) == 0);
		char errf[300], aerrf[300], pidbuf[16];
		snprintf(errf, sizeof errf, "%s.app", dir);
		snprintf(aerrf, sizeof aerrf, "%s.err", dir);
		pid_t app_pid = spawn((char *[]){ (char *)self, "app", "external", (char *)dir, NULL },
		                      errf);
		snprintf(pidbuf, sizeof pidbuf, "%d", (int)app_pid);
		pid_t rec = spawn(CLI("attach", pidbuf, "--flight", "64M", "--snapshot-on",
		                      "trigger:boom", "--before", "20ms", "-o", (char *)dir), aerrf);
		char pidfile[300];
		snprintf(pidfile, sizeof pidfile, "%s/.posixtrace-recorder", dir);
		while (access(pidfile, F_OK) != 0)
			usleep(1000);
		usleep(50000);
		CHECK_EQ(cli_run(CLI("trigger", "boom", (char *)dir), NULL, NULL), 0);
		CHECK_EQ(wait_rc(app_pid), 0);
		CHECK_EQ(wait_rc(rec), 0);
		char *err = cli_slurp(aerrf);
		CHECK(cli_contains(err, "1 snapshot written"));
		free(err);
		char path[400];
		snprintf(path, sizeof path, "%s/attached-1.ptlog", dir);
		CHECK_EQ(cli_count_logs(dir), 1);
		if (access(path, R_OK) == 0)
			check_snapshot(path, &(struct snapcheck){ NULL, 0, NULL, NULL, 0, 0, 0 });
	}

	/* a snapshot opens alone: show names the threads, the types, the fields */
	{
		char *out = NULL;
		CHECK_EQ(cli_run(CLI("show", (char *)snap_path(cli_path("error"), 1)), &out, NULL), 0);
		CHECK(cli_contains(out, "error"));
		CHECK(cli_contains(out, "status=-7"));
		CHECK(cli_contains(out, "load"));
		free(out);
		CHECK_EQ(cli_run(CLI("info", (char *)snap_path(cli_path("error"), 1)), &out, NULL), 0);
		CHECK(cli_contains(out, "cli_snapshot"));
		free(out);
		/* and its CTF export reads in babeltrace2, one line per event */
		const char *bt = cli_which("babeltrace2");
		if (bt) {
			const char *ctf = cli_path("error-ctf");
			CHECK_EQ(cli_run(CLI("export", "--format", "ctf", (char *)snap_path(cli_path("error"),
			                                                                     1),
			                     "-o", (char *)ctf), NULL, NULL), 0);
			char *err = NULL;
			CHECK_EQ(cli_run((char *[]){ (char *)bt, (char *)ctf, NULL }, &out, &err), 0);
			CHECK(cli_contains(out, "status = -7"));
			CHECK(cli_nlines(out) > 1000);
			free(out);
			free(err);
		} else {
			printf("SKIP part: babeltrace2 is not installed (Debian: babeltrace2)\n");
		}
	}

	/* bad options, said */
	{
		char *err = NULL;
		CHECK_EQ(cli_run(CLI("record", "--flight", "8M", "-o", (char *)cli_path("x"), "--",
		                     (char *)self), NULL, &err), 2);
		CHECK(cli_contains(err, "--snapshot-on"));
		free(err);
		CHECK_EQ(cli_run(CLI("record", "--flight", "8M", "--snapshot-on", "span:x", "-o",
		                     (char *)cli_path("x"), "--", (char *)self), NULL, &err), 2);
		CHECK(cli_contains(err, "span:NAME>DURATION"));
		free(err);
		CHECK_EQ(cli_run(CLI("record", "--flight", "8M", "--snapshot-on", "error:status<<0",
		                     "-o", (char *)cli_path("x"), "--", (char *)self), NULL, &err), 2);
		CHECK(cli_contains(err, "condition"));
		free(err);
		CHECK_EQ(cli_run(CLI("trigger", "boom", "999999999"), NULL, &err), 1);
		CHECK(cli_contains(err, "no flight recorder"));
		free(err);
	}

	/* the disk full during a snapshot */
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		t_failures = 0; /* (this part's own) */
		if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
			_exit(77);
		const char *dir = cli_path("small");
		if (mkdir(dir, 0700) || mount("tmpfs", dir, "tmpfs", 0, "size=64k"))
			_exit(77);
		char errf[300], *err = NULL;
		snprintf(errf, sizeof errf, "%s.err", dir);
		setenv("SNAP_ERR", errf, 1);
		int rc = record("diskfull", dir, (char *[]){ "--snapshot-on", "trigger:boom", "--before",
		                                             "20ms", NULL }, &err);
		CHECK_EQ(rc, 3); /* the program's 0, but a snapshot was lost */
		CHECK(cli_contains(err, "snapshot "));
		CHECK(cli_contains(err, "-1.ptlog: No space left on device"));
		CHECK(cli_contains(err, "recording goes on"));
		CHECK_EQ(cli_count_logs(dir), 1);
		if (access(snap_path(dir, 2), R_OK) == 0)
			check_snapshot(snap_path(dir, 2), &(struct snapcheck){ "posixtrace_trigger", 0,
			                                                       "boom", NULL, 20000000ull,
			                                                       0, 1 });
		else
			CHECK(!"the second snapshot is there");
		free(err);
		umount2(dir, MNT_DETACH);
		_exit(t_failures ? 1 : 0);
	}
	int rc = wait_rc(pid);
	if (rc == 77)
		printf("SKIP part: the disk filling (no mount namespace or tmpfs here)\n");
	else
		CHECK_EQ(rc, 0);
	T_END();
}

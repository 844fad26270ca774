/*
 * cli_record_opts.c -- `posixtrace record` without -o and with --duration
 * (issue 39).
 *
 *  - Two records started at once without -o, in the same directory, both
 *    succeed and write two logs, named posixtrace-YYYYmmdd-HHMMSS-PID.ptlog
 *    where PID is the recorder's (the witness: the pid of the
 *    posix_trace_start event each log holds, which the recorder writes).
 *  - --duration 0.5 on a program that records a tick every 10 ms and, on
 *    SIGTERM, records "bye" and exits 3: record exits 3 well before the
 *    program would have ended (it would run 60 s), and the log holds the
 *    ticks and the handler's "bye" (traced until the program ended).
 *  - --duration on a program that ignores SIGTERM: SIGKILL 5 s later
 *    (exit status 137), the log complete.
 */
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"

static trace_event_id_t ev_tick, ev_bye;

static void on_term(int sig)
{
	(void)sig;
	posix_trace_event(ev_bye, "bye", 3);
	_exit(3);
}

static int program(int ignore)
{
	posix_trace_eventid_open("tick", &ev_tick);
	posix_trace_eventid_open("bye", &ev_bye);
	signal(SIGTERM, ignore ? SIG_IGN : on_term);
	for (int i = 0; i < 6000; i++) {
		posix_trace_event(ev_tick, &i, sizeof i);
		usleep(10000);
	}
	return 0;
}

static double mono(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int count(const char *out, const char *what)
{
	int n = 0;
	for (const char *p = out; (p = strstr(p, what)) != NULL; p++)
		n++;
	return n;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--program"))
		return program(argc > 2);
	T_BEGIN(90);
	cli_setup();
	char self[4096] = { 0 }, *out = NULL;
	REQUIRE(readlink("/proc/self/exe", self, sizeof self - 1) > 0);

	/* two records at once, no -o */
	char dir[300];
	snprintf(dir, sizeof dir, "%s", cli_path("names"));
	REQUIRE(mkdir(dir, 0700) == 0);
	pid_t kids[2];
	for (int i = 0; i < 2; i++) {
		kids[i] = fork();
		REQUIRE(kids[i] >= 0);
		if (kids[i] == 0) {
			if (chdir(dir) != 0)
				_exit(126);
			int nul = open("/dev/null", O_WRONLY);
			dup2(nul, 1);
			dup2(nul, 2);
			execl(cli_bin, cli_bin, "record", "--", "/bin/true", (char *)NULL);
			_exit(126);
		}
	}
	for (int i = 0; i < 2; i++) {
		int st;
		REQUIRE(waitpid(kids[i], &st, 0) == kids[i]);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	DIR *d = opendir(dir);
	REQUIRE(d);
	int logs = 0;
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		int y, pid, n = 0;
		unsigned t;
		if (e->d_name[0] == '.')
			continue;
		logs++;
		CHECK(sscanf(e->d_name, "posixtrace-%8d-%6u-%d.ptlog%n", &y, &t, &pid, &n) == 3 &&
		      n == (int)strlen(e->d_name));
		char path[600], want[32];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		CHECK_EQ(cli_run(CLI("show", path), &out, NULL), 0);
		snprintf(want, sizeof want, " %d/1 ", pid); /* the recorder's thread */
		const char *st = out ? strstr(out, "posix_trace_start") : NULL;
		const char *line = st;
		while (line && line > out && line[-1] != '\n')
			line--;
		CHECK(st && line && strstr(line, want) && strstr(line, want) < st);
		free(out);
	}
	closedir(d);
	CHECK_EQ(logs, 2);

	/* --duration: SIGTERM, traced to the end */
	const char *log = cli_path("dur.ptlog");
	double t0 = mono();
	int rc = cli_run(CLI("record", "-o", (char *)log, "--duration", "0.5", "--", self, "--program"),
	                 NULL, NULL);
	double took = mono() - t0;
	CHECK_EQ(rc, 3);
	CHECK(took < 4.0); /* (a bound far from the 0.5 s: the program would run 60 s) */
	CHECK_EQ(cli_run(CLI("show", (char *)log), &out, NULL), 0);
	CHECK(out && count(out, " tick ") >= 5);
	CHECK(out && count(out, " bye ") == 1);
	free(out);

	/* --duration: SIGTERM ignored, SIGKILL 5 s later */
	log = cli_path("dur-kill.ptlog");
	t0 = mono();
	rc = cli_run(CLI("record", "-o", (char *)log, "-d", "0.2", "--", self, "--program", "ignore"),
	             NULL, NULL);
	took = mono() - t0;
	CHECK_EQ(rc, 128 + SIGKILL);
	CHECK(took >= 5.0 && took < 30.0);
	CHECK_EQ(cli_run(CLI("info", (char *)log), &out, NULL), 0);
	CHECK(out && !cli_contains(out, "status        unknown")); /* finished: shut down */
	CHECK(out && cli_contains(out, " tick\n"));
	free(out);
	T_END();
}

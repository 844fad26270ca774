/*
 * log_writing.c -- a log that `posixtrace record` is still writing is
 * read as one (issue 54): `info`, `show` and `stats` say it is being
 * written, not that the recording was cut short; `info`'s counts agree
 * with each other on it (never more complete spans than begin or end
 * events: the spans were read from the log as it was when it was opened,
 * not from a longer one); once the recording ends the log reads as
 * finished, and a log whose recorder was killed reads as cut short.
 *
 * The program is this test ("spans STOPFILE"): req/begin, req/end pairs
 * one after another, paced (about 128 events a millisecond), until STOPFILE exists.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>
#include <sys/wait.h>
#include "t.h"
#include "cli_util.h"

static int program(const char *stop)
{
	trace_event_id_t b, e;
	if (posix_trace_eventid_open("req/begin", &b) || posix_trace_eventid_open("req/end", &e))
		return 2;
	for (long i = 0;; i++) {
		posix_trace_event(b, &i, sizeof i);
		posix_trace_event(e, &i, sizeof i);
		if (i % 64 == 0) { /* about 128 events a millisecond at most: the log
		                    * grows no faster than a sanitized reader reads
		                    * it (unpaced, ThreadSanitizer's info and stats
		                    * fell behind a log growing without end) */
			if (access(stop, F_OK) == 0)
				return 0;
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
		}
	}
}

/* The number after `key` on the line that starts with `start` (after
 * blanks), or -1. */
static long long field(const char *s, const char *line_start, int col)
{
	char line[512];
	for (const char *p = s ? s : ""; cli_next_line(&p, line, sizeof line) == 0;) {
		const char *q = line + strspn(line, " ");
		if (strncmp(q, line_start, strlen(line_start)) != 0)
			continue;
		long long v[8] = { -1, -1, -1, -1, -1, -1, -1, -1 };
		char w[8][64];
		int n = sscanf(q, "%63s %63s %63s %63s %63s %63s %63s %63s", w[0], w[1], w[2], w[3],
		               w[4], w[5], w[6], w[7]);
		for (int k = 0; k < n && k < 8; k++)
			v[k] = atoll(w[k]);
		return col < n ? v[col] : -1;
	}
	return -1;
}

/* info's count of an event type: "  COUNT  ID  NAME" */
static long long type_count(const char *s, const char *name)
{
	char line[512];
	for (const char *p = s ? s : ""; cli_next_line(&p, line, sizeof line) == 0;) {
		long long c;
		unsigned id;
		char nm[128];
		if (sscanf(line, " %lld %u %127s", &c, &id, nm) == 3 && strcmp(nm, name) == 0)
			return c;
	}
	return -1;
}

static char self_exe[4096];

/* A check that fails ends the test: its recorder and program must not
 * outlive it (before the scratch directory, where the stop file goes, is
 * removed). */
static pid_t live_rec;
static char *live_stop;
static void stop_all(void)
{
	if (live_stop) {
		FILE *f = fopen(live_stop, "w");
		if (f)
			fclose(f);
	}
	if (live_rec > 0) {
		kill(live_rec, SIGKILL);
		waitpid(live_rec, NULL, 0);
	}
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "spans") == 0)
		return program(argv[2]);
	T_BEGIN(120);
	cli_setup();
	ssize_t sn = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
	REQUIRE(sn > 0);
	self_exe[sn] = 0;
	atexit(stop_all); /* (runs before cli_setup's cleanup) */

	for (int round = 0; round < 2; round++) { /* 0: ends normally; 1: recorder killed */
		char *log = strdup(cli_path(round ? "killed.ptlog" : "ends.ptlog"));
		char *stop = strdup(cli_path(round ? "stop1" : "stop0"));
		pid_t rec = fork();
		REQUIRE(rec >= 0);
		if (rec == 0) {
			int fd = open("/dev/null", O_WRONLY);
			dup2(fd, 1);
			dup2(fd, 2);
			execl(cli_bin, cli_bin, "record", "-o", log, "--", self_exe, "spans", stop,
			      (char *)NULL);
			_exit(127);
		}
		live_rec = rec, live_stop = stop;
		/* until the log has a few blocks */
		struct stat st;
		for (int i = 0; i < 10000 && (stat(log, &st) != 0 || st.st_size < (1 << 20)); i++)
			usleep(1000);
		for (int look = 0; look < 3; look++) {
			char *out = NULL, *err = NULL;
			CHECK_EQ(cli_run(CLI("info", log), &out, &err), 0);
			CHECK(cli_contains(out, "being written"));
			CHECK(!cli_contains(out, "cut short"));
			long long begins = type_count(out, "req/begin"), ends = type_count(out, "req/end");
			long long complete = field(out, "req ", 2);
			CHECK(begins > 0 && ends > 0);
			CHECK(complete >= 0 && complete <= begins && complete <= ends);
			if (!(complete >= 0 && complete <= begins && complete <= ends))
				fprintf(stderr, "look %d: %lld req spans complete, %lld begins, %lld ends\n",
				        look, complete, begins, ends);
			free(out);
			free(err);
			out = err = NULL;
			CHECK_EQ(cli_run(CLI("stats", log), &out, &err), 0);
			CHECK(cli_contains(err, "being written"));
			CHECK(!cli_contains(err, "cut short"));
			free(out);
			free(err);
			usleep(100000);
		}
		int status;
		if (round == 0) {
			FILE *f = fopen(stop, "w");
			if (!f)
				perror(stop);
			REQUIRE(f != NULL);
			fclose(f);
			REQUIRE(waitpid(rec, &status, 0) == rec);
			live_rec = 0;
			CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		} else {
			kill(rec, SIGKILL);
			REQUIRE(waitpid(rec, &status, 0) == rec);
			live_rec = 0;
			FILE *f = fopen(stop, "w"); /* its program ends too */
			REQUIRE(f != NULL);
			fclose(f);
		}
		char *out = NULL, *err = NULL;
		CHECK_EQ(cli_run(CLI("info", log), &out, &err), 0);
		CHECK(!cli_contains(out, "being written"));
		CHECK(round ? cli_contains(out, "cut short") : !cli_contains(out, "cut short"));
		long long begins = type_count(out, "req/begin"), complete = field(out, "req ", 2);
		CHECK(complete >= 0 && complete <= begins);
		free(out);
		free(err);
		free(log);
		live_stop = NULL;
		free(stop);
	}
	T_END();
}

/*
 * ctf_many.c -- `make bench`'s CTF section for many processes (issue 54):
 * a trace of CTF_MANY_PROCS (300) processes recorded at once, each
 * recording CTF_MANY_EVENTS (10 000) events of 8 bytes (3 M in all),
 * under `posixtrace record --no-loss`; then `export --format ctf` of it
 * and babeltrace2 counting the export (sink.utils.counter, the events it
 * counts checked against the log's), each timed by its CPU time (user +
 * sys, from wait4: what the work costs, whatever else runs) and its wall
 * time (what this run saw), with its peak RSS.  The same for one process
 * recording as many events, for comparison.
 *
 *   build/bench/ctf_many          CTF_MANY_PROCS, CTF_MANY_EVENTS (per
 *                                 process); CTF_MANY_DIR (default /tmp)
 *
 * The goals: the export at 3 M events/s or more, babeltrace2 at
 * 1 M events/s or more.  Skips babeltrace2's rows without it.  The
 * machine may be loaded (a shared VM): the load average is printed with
 * the table and in each row.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include "bench_util.h"
#include "../tests/many_procs.h"

#ifndef PT_BUILD_DIR
#define PT_BUILD_DIR "build"
#endif

static const char *cli = PT_BUILD_DIR "/posixtrace";
static int failed; /* a command failed, or babeltrace2 counted otherwise */

static int env_int(const char *name, int def)
{
	const char *s = getenv(name);
	return s && atoi(s) > 0 ? atoi(s) : def;
}

struct took { double wall, cpu; long rss_kb; };

/* argv run with stdout to out (NULL: /dev/null), stderr to /dev/null: its
 * exit status (-1: did not run or was killed) and what it took */
static int run(char *const argv[], const char *out, struct took *t)
{
	struct rusage ru;
	int st;
	double t0 = bench_now_us();
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int o = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open("/dev/null", O_WRONLY);
		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (wait4(pid, &st, 0, &ru) != pid)
		return -1;
	t->wall = (bench_now_us() - t0) / 1e6;
	t->cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	         (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	t->rss_kb = ru.ru_maxrss;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void row(const char *what, int procs, uint64_t events, int rc, const struct took *t,
                const char *note)
{
	bench_json("ctf_many", what, "processes", (double)procs, "events", (double)events,
	           "cpu_s", rc ? NAN : t->cpu, "wall_s", rc ? NAN : t->wall, "events_per_cpu_s",
	           rc || t->cpu <= 0 ? NAN : (double)events / t->cpu, "events_per_s",
	           rc || t->wall <= 0 ? NAN : (double)events / t->wall, "rss_mb",
	           (double)t->rss_kb / 1024.0, NULL);
	failed += rc != 0;
	printf("  %-34s %6.2f s cpu %6.2f M/s   %6.2f s wall %6.2f M/s  %6.1f MB%s%s\n", what,
	       t->cpu, t->cpu > 0 ? (double)events / t->cpu / 1e6 : 0.0, t->wall,
	       t->wall > 0 ? (double)events / t->wall / 1e6 : 0.0, (double)t->rss_kb / 1024.0,
	       rc ? "  FAILED" : "", note ? note : "");
	fflush(stdout);
}

/* the first number on a line of path that holds key, -1 if none ("  N Event
 * messages" of babeltrace2's counter, "events":N of stats --json) */
static long long number_at(const char *path, const char *key)
{
	char line[4096];
	long long n = -1;
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	while (n < 0 && fgets(line, sizeof line, f)) {
		char *p = strstr(line, key);
		if (!p)
			continue;
		if (p == line || *key == '"')
			p += strlen(key);
		else
			p = line;
		n = strtoll(p, NULL, 10);
	}
	fclose(f);
	return n;
}

static void one(const char *self, const char *dir, int procs, int per)
{
	char log[600], ctf[600], out[700], np[16], ne[16], what[80], note[120];
	struct took t = { 0, 0, 0 };
	uint64_t want = (uint64_t)procs * (uint64_t)per;

	snprintf(log, sizeof log, "%s/pt-bench-ctfmany-%d.ptlog", dir, procs);
	snprintf(ctf, sizeof ctf, "%s/pt-bench-ctfmany-%d.ctf", dir, procs);
	snprintf(out, sizeof out, "%s.count", ctf);
	snprintf(np, sizeof np, "%d", procs);
	snprintf(ne, sizeof ne, "%d", per);
	printf("\n%d process%s x %d events:\n", procs, procs > 1 ? "es" : "", per);
	int rc = run((char *const[]){ (char *)cli, "record", "--no-loss", "--force", "-o", log, "--",
	                              (char *)self, "fork", np, ne, NULL }, NULL, &t);
	snprintf(what, sizeof what, "record --no-loss (%d procs)", procs);
	row(what, procs, want, rc, &t, NULL);
	if (rc)
		return;
	/* the log's events (stats --json): what the export writes and
	 * babeltrace2 must count, the trace's own events with the program's */
	rc = run((char *const[]){ (char *)cli, "stats", "--json", log, NULL }, out, &t);
	long long events = rc ? -1 : number_at(out, "\"events\":");
	rc = run((char *const[]){ (char *)cli, "export", "--format", "ctf", "--force", log, "-o", ctf,
	                          NULL }, NULL, &t);
	snprintf(what, sizeof what, "export ctf (%d procs)", procs);
	row(what, procs, want, rc, &t, NULL);
	const char *bt = bench_which("babeltrace2");
	if (!rc && bt) {
		rc = run((char *const[]){ (char *)bt, "-c", "sink.utils.counter", "-p", "step=+0", ctf,
		                          NULL }, out, &t);
		long long n = number_at(out, "Event messages");
		if (n == events && events >= (long long)want)
			snprintf(note, sizeof note, "  (%lld events, as the log's)", n);
		else
			snprintf(note, sizeof note, "  COUNTED %lld, the log has %lld", n, events);
		failed += n != events || events < (long long)want;
		snprintf(what, sizeof what, "babeltrace2 counter (%d procs)", procs);
		row(what, procs, want, rc, &t, note);
		rc = run((char *const[]){ (char *)bt, ctf, NULL }, NULL, &t);
		snprintf(what, sizeof what, "babeltrace2 text (%d procs)", procs);
		row(what, procs, want, rc, &t, NULL);
	} else if (!bt) {
		printf("  (babeltrace2 is not installed: no reading rows)\n");
	}
	char cmd[2200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s' '%s'", ctf, log, out);
	if (system(cmd) != 0)
		printf("  (could not remove %s)\n", ctf);
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "fork"))
		return many_procs_run(atoi(argv[2]), atoi(argv[3]));
	int procs = env_int("CTF_MANY_PROCS", 300), per = env_int("CTF_MANY_EVENTS", 10000);
	const char *dir = getenv("CTF_MANY_DIR") ? getenv("CTF_MANY_DIR") : "/tmp";
	char self[4096];
	ssize_t sn = readlink("/proc/self/exe", self, sizeof self - 1);
	double load[3] = { 0, 0, 0 };

	if (sn <= 0 || access(cli, X_OK) != 0) {
		printf("ctf_many: %s is not built\n", cli);
		return 1;
	}
	self[sn] = 0;
	if (getloadavg(load, 3) < 0)
		load[0] = -1;
	printf("ctf_many: the CTF export of a trace of many processes, and babeltrace2 reading it\n"
	       "(CPU time: user + sys of the command; load average %.2f %.2f %.2f on %ld CPUs "
	       "when it started)\n", load[0], load[1], load[2], sysconf(_SC_NPROCESSORS_ONLN));
	one(self, dir, procs, per);
	one(self, dir, 1, procs * per);
	if (getloadavg(load, 3) == 3)
		printf("(load average %.2f %.2f %.2f when it ended)\n", load[0], load[1], load[2]);
	return failed ? 1 : 0;
}

/*
 * life_threads.c -- the library's threads never keep a process alive, and
 * take no signal of the program's.
 *
 * A child C owns a stream for itself with a log (so a flusher thread of
 * the library runs in it), records N events (payload: seq), and then:
 * 1. main() ends with pthread_exit(): C ends within 5 s with status 0
 *    (what the C library gives when the last thread ends), and the log
 *    holds the N events, START and STOP (the stream shut down as at exit);
 * 2. main() starts a worker and ends with pthread_exit(); the worker
 *    records the N events, 200 ms later, and returns: the same, the N
 *    events from the worker (the process did not end while it ran);
 * 3. exit(7) from a second thread while main() sleeps: status 7, the
 *    same log;
 * 4. main() blocks SIGUSR1 (after the stream, so after the flusher was
 *    started) and waits for it with sigwait(); a SIGUSR1 sent to the
 *    process reaches it there (the flusher took it, and died of it, when
 *    it did not block every signal): status 0, the same log; and every
 *    thread of C but main has every signal blocked (/proc, SigBlk).
 * Each with the LOOP and FLUSH stream-full policies.
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/wait.h>
#include <time.h>
#include <trace.h>
#include "t.h"
#include "log_util.h"
#include "helpers.h"

#define N 2000

static trace_event_id_t ev;

static void records(void)
{
	for (int i = 0; i < N; i++)
		posix_trace_event(ev, &i, sizeof i);
}

static void *worker(void *arg)
{
	(void)arg;
	usleep(200000);
	records();
	return NULL;
}

static void *exiter(void *arg)
{
	(void)arg;
	usleep(50000);
	exit(7);
}

/* Every thread but the main one blocks every signal that can be blocked. */
static int others_block_all(void)
{
	char path[128], line[256];
	int ok = 1, seen = 0;

	DIR *d = opendir("/proc/self/task");
	REQUIRE(d);
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		int tid = atoi(e->d_name);
		if (tid <= 0 || tid == getpid())
			continue;
		snprintf(path, sizeof path, "/proc/self/task/%d/status", tid);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof line, f))
			if (!strncmp(line, "SigBlk:", 7)) {
				unsigned long long m = strtoull(line + 7, NULL, 16);
				/* (SIGKILL and SIGSTOP cannot be blocked; 32 and 33
				 * are glibc's own) */
				ok &= (m | 1ull << (SIGKILL - 1) | 1ull << (SIGSTOP - 1) |
				       0x180000000ull) == ~0ull;
				seen++;
			}
		fclose(f);
	}
	closedir(d);
	return ok && seen > 0;
}

static void child(int how, int sp, const char *path)
{
	trace_attr_t a;
	trace_id_t t;
	int fd = open(path, O_WRONLY);
	pthread_t th;

	t_failures = 0;
	REQUIRE(fd >= 0);
	REQUIRE(posix_trace_attr_init(&a) == 0);
	REQUIRE(posix_trace_attr_setstreamfullpolicy(&a, sp) == 0);
	REQUIRE(posix_trace_attr_setstreamsize(&a, 1 << 20) == 0);
	REQUIRE(posix_trace_create_withlog(0, &a, fd, &t) == 0);
	REQUIRE(posix_trace_eventid_open("life", &ev) == 0);
	REQUIRE(posix_trace_start(t) == 0);
	switch (how) {
	case 1:
		records();
		pthread_exit(NULL);
	case 2:
		REQUIRE(pthread_create(&th, NULL, worker, NULL) == 0);
		pthread_exit(NULL);
	case 3:
		records();
		REQUIRE(pthread_create(&th, NULL, exiter, NULL) == 0);
		for (;;)
			pause();
	default: {
		sigset_t s;
		int sig = 0;
		records();
		sigemptyset(&s);
		sigaddset(&s, SIGUSR1);
		REQUIRE(pthread_sigmask(SIG_BLOCK, &s, NULL) == 0);
		if (!others_block_all())
			_exit(3);
		REQUIRE(kill(getpid(), SIGUSR1) == 0);
		REQUIRE(sigwait(&s, &sig) == 0);
		exit(sig == SIGUSR1 ? 0 : 4);
	}
	}
}

static const char *const what[] = { "", "main() ends with pthread_exit()",
	                            "the last thread, a worker, returns",
	                            "exit(7) from a thread", "sigwait(SIGUSR1) in main()" };

int main(void)
{
	static const int sps[] = { POSIX_TRACE_LOOP, POSIX_TRACE_FLUSH };

	T_BEGIN(120);
	for (int how = 1; how <= 4; how++)
		for (int i = 0; i < 2; i++) {
			char path[256];
			int fails = t_failures;
			if (UNDER_TSAN && how <= 2) {
				printf("%-34s: SKIP under ThreadSanitizer (its own thread)\n",
				       what[how]);
				continue;
			}
			close(lu_tmpfile(path, sizeof path, "life-thr", O_RDWR));
			fflush(NULL);
			pid_t pid = fork();
			REQUIRE(pid >= 0);
			if (pid == 0)
				child(how, sps[i], path);
			int st = t_wait_for(pid, 5000);
			CHECK_EQ(st, how == 3 ? 7 : 0);
			int n = lu_load(path, NULL, NULL), user = 0, order = 1;
			for (int k = 0; k < n; k++)
				if (lu_ev[k].id >= PT_SYS_IDS) {
					order &= lu_ev[k].ival == user;
					user++;
				}
			CHECK_EQ(user, N);
			CHECK(order);
			CHECK_EQ(lu_count(n, POSIX_TRACE_START, -1), 1);
			CHECK_EQ(lu_count(n, POSIX_TRACE_STOP, -1), 1);
			lu_rmfile(path);
			printf("%-34s %-5s: status %d, %d events of %d in the log: %s\n", what[how],
			       sps[i] == POSIX_TRACE_LOOP ? "LOOP" : "FLUSH", st, user, N,
			       t_failures == fails ? "ok" : "FAILED");
		}
	T_END();
}

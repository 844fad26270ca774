/*
 * autoshutdown.c -- a stream does not outlive its controller.
 *
 * A traced child T records at full speed (polling a command pipe every
 * 1000 events).  A controller process C creates and starts a stream for T,
 * reads 100 of T's events, waits until T has filled 4 MiB of its 8 MiB
 * stream, and then ends without posix_trace_shutdown(): killed with
 * SIGKILL, by exit(0), or by exec'ing this program with "--idle" (the new
 * image keeps running).  Each time: T still runs and answers; a new stream made here
 * for T gets exactly the events T records into it; T can again be traced
 * by 8 streams at once (the dead controller's slot was given back; T keeps
 * recording meanwhile, polling for up to 5 s).  T frees the dead stream's
 * memory by itself, before anyone else touches its slots: its RssShmem
 * (/proc/T/status), which grew by the controller's 8 MiB stream, falls
 * back to within 1 MiB of what it was (polled for up to 5 s).  No new
 * entry appears in /dev/shm.  (The traced process killed instead: traced_killed.c.)
 */
#include <dirent.h>
#include <poll.h>
#include <sys/wait.h>
#include <time.h>
#include <trace.h>
#include "t.h"
#include "helpers.h"

struct tcmd { char op; int n; };
struct trep { long long before, after; };

static int create_for(pid_t pid, const trace_attr_t *attr, trace_id_t *trid)
{
	int rc = posix_trace_create(pid, attr, trid);
	if (rc == ENOSYS) {
		fprintf(stderr, "posix_trace_create(pid %d): ENOSYS -- tracing another process "
		        "is not implemented\n", (int)pid);
		exit(1);
	}
	return rc;
}

/* ----------------------------------------------- T, the traced process */
static void traced_main(int cfd, int rfd)
{
	trace_event_id_t id;
	long long seq = 0;
	int spinning = 1;
	alarm(60);
	REQUIRE(posix_trace_eventid_open("auto-spin", &id) == 0);
	for (;;) {
		struct tcmd c;
		if (spinning) {
			for (int i = 0; i < 1000; i++)
				t_wit_rec(id, 0, seq++);
			struct pollfd pfd = { cfd, POLLIN, 0 };
			if (poll(&pfd, 1, 0) <= 0)
				continue;
		}
		if (t_read_full(cfd, &c, sizeof c) != 0 || c.op == 'Q')
			_exit(0);
		struct trep r = { seq, seq };
		spinning = c.op == 'S' ? 1 : c.op == 'P' ? 0 : spinning;
		for (int i = 0; c.op == 'B' && i < c.n; i++)
			t_wit_rec(id, 0, seq++);
		r.after = seq;
		t_write_full(rfd, &r, sizeof r);
	}
}

static struct trep tell(int cfd, int rfd, char op, int n)
{
	struct tcmd c = { op, n };
	struct trep r;
	t_write_full(cfd, &c, sizeof c);
	if (t_read_full(rfd, &r, sizeof r) != 0) {
		fprintf(stderr, "the traced process died (command %c)\n", op);
		exit(1);
	}
	return r;
}

/* ------------------------------------------------ C, the controller */
enum { BY_KILL, BY_EXIT, BY_EXEC };
static const char *const mode_name[] = { "SIGKILL", "exit(0)", "exec" };

static void controller_main(pid_t tpid, int mode, int cfd, int rfd)
{
	trace_attr_t attr;
	trace_id_t trid;
	int rc, seen = 0;
	char buf[16], c;
	alarm(60);
	posix_trace_attr_init(&attr);
	posix_trace_attr_setstreamsize(&attr, 8 << 20);   /* T soon touches all of it */
	rc = create_for(tpid, &attr, &trid);
	if (rc == 0)
		rc = posix_trace_start(trid);
	while (rc == 0 && seen < 100) {
		struct posix_trace_event_info ev;
		struct t_wit p;
		size_t len;
		int un;
		rc = posix_trace_getnext_event(trid, &ev, &p, sizeof p, &len, &un);
		seen += rc == 0 && ev.posix_pid == tpid && ev.posix_event_id >= PT_SYS_IDS;
	}
	t_write_full(rfd, &rc, sizeof rc);
	if (read(cfd, &c, 1) != 1)  /* reads no more: T fills the stream */
		_exit(4);
	if (mode == BY_EXIT)
		exit(0);
	char a[16];
	snprintf(buf, sizeof buf, "%d", cfd);
	snprintf(a, sizeof a, "%d", rfd);
	execl("/proc/self/exe", "autoshutdown", "--idle", buf, a, (char *)NULL);
	_exit(5);
}

/* The exec'd controller: says so, then waits for EOF. */
static int idle_main(char **argv)
{
	int cfd = atoi(argv[2]), rfd = atoi(argv[3]);
	char c;
	alarm(60);
	t_write_full(rfd, "i", 1);
	while (read(cfd, &c, 1) > 0)
		;
	return 0;
}

/* Shared memory the process has mapped and touched (kB), -1 if unknown. */
static long rss_shmem_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "RssShmem: %ld", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/* Poll (T records meanwhile) until T's RssShmem is above (or, if !above,
 * at most) kb; up to 5 s.  Returns the last value seen. */
static long wait_shmem(pid_t tpid, long kb, int above)
{
	double end = t_now_s() + 5;
	long v;
	while ((v = rss_shmem_kb(tpid)) >= 0 && (above ? v <= kb : v > kb) && t_now_s() < end)
		usleep(5000);
	return v;
}

static void controller_dies(pid_t tpid, int tc, int tr, int mode)
{
	int rc = -1, st;
	struct t_pipes cr;
	trace_id_t trid, many[8];
	trace_event_id_t id;
	long base = rss_shmem_kb(tpid), v;
	pid_t ctl = t_fork_piped(&cr);
	if (ctl == 0)
		controller_main(tpid, mode, cr.cmd, cr.rep);
	REQUIRE(t_read_full(cr.rep, &rc, sizeof rc) == 0);
	CHECK_RC(rc, 0);
	v = wait_shmem(tpid, base + 4096, 1);  /* T writes into C's 8 MiB stream */
	if (base >= 0 && v <= base + 4096)
		fprintf(stderr, "T's RssShmem %ld kB -> %ld kB only: is T recording into the "
		        "stream of the controller (%s)?\n", base, v, mode_name[mode]);
	CHECK(base < 0 || v > base + 4096);
	if (mode == BY_KILL) {
		kill(ctl, SIGKILL);
	} else {
		t_write_full(cr.cmd, "x", 1);
	}
	if (mode == BY_EXEC) {
		char i;
		REQUIRE(t_read_full(cr.rep, &i, 1) == 0 && i == 'i');   /* exec'd, still alive */
	} else {
		REQUIRE(waitpid(ctl, &st, 0) == ctl);
	}

	/* T notices by itself (no new stream for T yet): the memory goes */
	v = wait_shmem(tpid, base + 1024, 0);
	if (base >= 0 && v > base + 1024)
		fprintf(stderr, "after the controller's %s: T's RssShmem still %ld kB (%ld kB "
		        "before): the dead stream was not freed\n", mode_name[mode], v, base);
	CHECK(base < 0 || v <= base + 1024);

	/* T goes on; a new controller sees exactly what T records now */
	struct trep t1 = tell(tc, tr, 'P', 0), b, t2;
	rc = create_for(tpid, NULL, &trid);
	if (rc != 0)
		fprintf(stderr, "posix_trace_create(T) after the controller's %s: %s\n",
		        mode_name[mode], strerror(rc));
	REQUIRE(rc == 0);
	CHECK_RC(posix_trace_trid_eventid_open(trid, "auto-spin", &id), 0);
	CHECK_RC(posix_trace_start(trid), 0);
	b = tell(tc, tr, 'B', 5000);
	CHECK_EQ(b.before, t1.after);
	struct t_tally t = { { 0 }, 0, 0, 0, { b.before } };
	t_wit_drain(trid, tpid, &t);
	CHECK_EQ(t.n[0], 5000);
	CHECK_EQ(t.bad, 0);
	CHECK_EQ(t.other, 0);
	CHECK_EQ(t.sys, 1);                             /* START */
	CHECK_RC(posix_trace_shutdown(trid), 0);
	tell(tc, tr, 'S', 0);
	t2 = tell(tc, tr, 'P', 0);
	CHECK(t2.after >= b.after + 1000);              /* still recording */
	tell(tc, tr, 'S', 0);

	/* the dead controller's slot in T comes back while T records */
	int n = 0;
	double end = t_now_s() + 5;
	while (n < 8) {
		rc = create_for(tpid, NULL, &many[n]);
		if (rc == 0)
			n++;
		else if (rc != EAGAIN || t_now_s() > end)
			break;
		else
			usleep(10000);
	}
	if (n < 8)
		fprintf(stderr, "after the controller's %s: only %d streams for T (rc %d): "
		        "the dead stream was not shut down\n", mode_name[mode], n, rc);
	CHECK_EQ(n, 8);
	for (int i = 0; i < n; i++)
		CHECK_RC(posix_trace_shutdown(many[i]), 0);
	close(cr.cmd);                /* the exec'd controller ends now */
	if (mode == BY_EXEC) {
		REQUIRE(waitpid(ctl, &st, 0) == ctl);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	close(cr.rep);
}

/* ----------------------------------------------------------- /dev/shm */
static int shm_list(char names[][256], int max)
{
	DIR *d = opendir("/dev/shm");
	struct dirent *e;
	int n = 0;
	if (!d)
		return 0;
	while ((e = readdir(d)) && n < max)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			snprintf(names[n++], 256, "%s", e->d_name);
	closedir(d);
	return n;
}

static char shm_before[256][256], shm_after[256][256];

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "--idle") == 0)
		return idle_main(argv);
	T_BEGIN(60);
	signal(SIGPIPE, SIG_IGN);   /* a dead peer: EPIPE and a message */
	int nb = shm_list(shm_before, 256), st;
	struct t_pipes t;
	pid_t tpid = t_fork_piped(&t);
	if (tpid == 0)
		traced_main(t.cmd, t.rep);
	for (int mode = BY_KILL; mode <= BY_EXEC; mode++)
		controller_dies(tpid, t.cmd, t.rep, mode);
	tell(t.cmd, t.rep, 'P', 0);
	t_write_full(t.cmd, &(struct tcmd){ 'Q', 0 }, sizeof(struct tcmd));
	REQUIRE(waitpid(tpid, &st, 0) == tpid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	int na = shm_list(shm_after, 256);
	for (int i = 0; i < na; i++) {
		int old = 0;
		for (int j = 0; j < nb && !old; j++)
			old = strcmp(shm_after[i], shm_before[j]) == 0;
		if (!old)
			fprintf(stderr, "new in /dev/shm: %s\n", shm_after[i]);
		CHECK(old);
	}
	T_END();
}

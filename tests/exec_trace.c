/*
 * exec_trace.c -- a traced process that execs stays traced.
 *
 * A child is forked and waits; this process creates and starts a stream
 * for the child's pid; the child (optionally after recording a few events
 * itself) execs /proc/self/exe with the marker "--child-exec".  The new
 * image records one event from a constructor (which finds the marker in
 * /proc/self/cmdline: the first event of the new image, before main) and
 * N events from main, reports its event ids over a pipe and exits (or execs
 * once more).  Checked: every event, in order, with the child's pid; ids
 * of different names differ and the same name keeps its id across exec;
 * posix_trace_eventid_get_name() on this side gives the names.  After the
 * child has exited the stream still works: everything recorded before its
 * death is read, then trygetnext reports nothing, timedgetnext times out,
 * stop records STOP, shutdown succeeds.  The same when the stream is this
 * process's own, created with POSIX_TRACE_INHERITED before the fork: the
 * child's exec'd images record into it with the child's pid.
 */
#include <fcntl.h>
#include <sys/wait.h>
#include <time.h>
#include <trace.h>
#include "t.h"
#include "helpers.h"

#define MARK "--child-exec"
#define N 500

struct payload { int depth, seq; unsigned sum; };
struct report { int depth, rc_ctor, rc_main; trace_event_id_t ctor, main_id; };

static unsigned sum_of(int depth, int seq)
{
	return (unsigned)depth * 2654435761u ^ (unsigned)seq * 40503u ^ 0xc3c3c3c3u;
}

static int ctor_rc = -1;
static trace_event_id_t ctor_id;

/* In the exec'd image only: its first event, before main. */
__attribute__((constructor)) static void exec_ctor(void)
{
	char buf[4096];
	int fd = open("/proc/self/cmdline", O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	size_t a0 = strlen(buf);
	if ((ssize_t)a0 + 1 >= n || strcmp(buf + a0 + 1, MARK) != 0)
		return;
	const char *d = buf + a0 + 1 + sizeof MARK;       /* argv[2]: depth */
	struct payload p = { d < buf + n ? atoi(d) : 0, -1, 0 };
	p.sum = sum_of(p.depth, -1);
	ctor_rc = posix_trace_eventid_open("exec-ctor", &ctor_id);
	posix_trace_event(ctor_id, &p, sizeof p);
}

static void record(trace_event_id_t id, int depth, int n)
{
	for (int i = 0; i < n; i++) {
		struct payload p = { depth, i, sum_of(depth, i) };
		posix_trace_event(id, &p, sizeof p);
	}
}

static void exec_self(int depth, int fd)
{
	char d[16], f[16];
	snprintf(d, sizeof d, "%d", depth);
	snprintf(f, sizeof f, "%d", fd);
	execl("/proc/self/exe", "exec_trace", MARK, d, f, (char *)NULL);
	_exit(120);
}

/* main() of the exec'd image: argv = exe MARK depth fd */
static int exec_main(char **argv)
{
	struct report r = { atoi(argv[2]), ctor_rc, -1, ctor_id, 0 };
	int fd = atoi(argv[3]);
	alarm(30);
	r.rc_main = posix_trace_eventid_open("exec-main", &r.main_id);
	record(r.main_id, r.depth, N);
	t_write_full(fd, &r, sizeof r);
	if (r.depth > 1)
		exec_self(r.depth - 1, fd);
	return 0;
}

/* ---------------------------------------------------------------- reader */
struct got { trace_event_id_t id; pid_t pid; size_t len; struct payload p; };
static struct got g[4 * N];

static void keep(void *arg, int n, const struct posix_trace_event_info *ev, const void *buf,
                 size_t len)
{
	(void)arg;
	g[n] = (struct got){ ev->posix_event_id, ev->posix_pid, len, { 0, 0, 0 } };
	memcpy(&g[n].p, buf, len < sizeof g[n].p ? len : sizeof g[n].p);
}

static int collect(trace_id_t trid)
{
	unsigned char buf[2 * sizeof(trace_event_set_t)];
	return t_drain(trid, buf, sizeof buf, 4 * N, keep, NULL);
}

static void check_name(trace_id_t trid, trace_event_id_t id, const char *want)
{
	char buf[TRACE_EVENT_NAME_MAX + 1] = "";
	CHECK_RC(posix_trace_eventid_get_name(trid, id, buf), 0);
	if (strcmp(buf, want) != 0)
		fprintf(stderr, "  id %d is \"%s\", expected \"%s\"\n", (int)id, buf, want);
	CHECK(strcmp(buf, want) == 0);
}

/* Does g[*i] hold the event (id, depth, seq) from pid?  Advances *i. */
static int expect(int n, int *i, trace_event_id_t id, pid_t pid, int depth, int seq)
{
	if (*i >= n)
		return 0;
	struct got *e = &g[(*i)++];
	return e->id == id && e->pid == pid && e->len == sizeof e->p && e->p.depth == depth &&
	       e->p.seq == seq && e->p.sum == sum_of(depth, seq);
}

/* pre: events the child records before exec; depth: images exec'd in turn. */
static void round_trip(int pre, int depth, int inherited)
{
	int go[2], rep[2], st, n, i = 0, bad = 0;
	trace_event_id_t pre_id = 0;
	struct report r[4];
	trace_id_t trid;
	pid_t pid;

	REQUIRE(pipe(go) == 0 && pipe(rep) == 0);
	if (inherited) {         /* this process's own stream, inherited by the child */
		trace_attr_t attr;
		REQUIRE(posix_trace_attr_init(&attr) == 0);
		REQUIRE(posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED) == 0);
		REQUIRE(posix_trace_create(0, &attr, &trid) == 0);
		CHECK_RC(posix_trace_start(trid), 0);
		posix_trace_attr_destroy(&attr);
	}
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		char c;
		close(go[1]);
		close(rep[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(121);
		if (pre) {
			if (posix_trace_eventid_open("exec-pre", &pre_id) != 0)
				_exit(122);
			record(pre_id, 0, pre);
			t_write_full(rep[1], &pre_id, sizeof pre_id);
		}
		exec_self(depth, rep[1]);
	}
	close(go[0]);
	close(rep[1]);
	int rc = inherited ? 0 : posix_trace_create(pid, NULL, &trid);
	if (rc != 0) {
		fprintf(stderr, "posix_trace_create(pid %d): %s%s\n", (int)pid, strerror(rc),
		        rc == ENOSYS ? " -- tracing another process is not implemented" : "");
		exit(1);
	}
	if (!inherited)
		CHECK_RC(posix_trace_start(trid), 0);
	t_write_full(go[1], "g", 1);
	if (pre)
		REQUIRE(t_read_full(rep[0], &pre_id, sizeof pre_id) == 0);
	for (int d = 0; d < depth; d++) {
		if (t_read_full(rep[0], &r[d], sizeof r[d]) != 0) {
			fprintf(stderr, "exec'd image %d of %d did not report\n", d + 1, depth);
			exit(1);
		}
		CHECK_EQ(r[d].depth, depth - d);
		CHECK_RC(r[d].rc_ctor, 0);
		CHECK_RC(r[d].rc_main, 0);
		CHECK(r[d].ctor != r[d].main_id && (!pre || r[d].ctor != pre_id) && r[d].main_id != pre_id);
		CHECK_EQ(r[d].ctor, r[0].ctor);           /* a name keeps its id across exec */
		CHECK_EQ(r[d].main_id, r[0].main_id);
	}
	REQUIRE(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(go[1]);
	close(rep[0]);

	/* the child is gone: its events are all there, in order */
	n = collect(trid);
	CHECK_EQ(n, 1 + pre + depth * (1 + N));
	CHECK(n > 0 && g[0].id == POSIX_TRACE_START && g[0].pid == getpid());
	i = 1;
	for (int s = 0; s < pre; s++)
		bad += !expect(n, &i, pre_id, pid, 0, s);
	for (int d = 0; d < depth; d++) {
		if (!expect(n, &i, r[0].ctor, pid, depth - d, -1)) {
			fprintf(stderr, "  image %d: event %d is not the constructor's\n", d + 1, i - 1);
			bad++;
		}
		for (int s = 0; s < N; s++)
			bad += !expect(n, &i, r[0].main_id, pid, depth - d, s);
	}
	CHECK_EQ(bad, 0);
	if (pre)
		check_name(trid, pre_id, "exec-pre");
	check_name(trid, r[0].ctor, "exec-ctor");
	check_name(trid, r[0].main_id, "exec-main");

	struct posix_trace_event_info ev;
	struct payload p;
	struct timespec dl;
	size_t len;
	int un = 0;
	CHECK_RC(posix_trace_trygetnext_event(trid, &ev, &p, sizeof p, &len, &un), 0);
	CHECK(un != 0);
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_nsec += 100000000;
	if (dl.tv_nsec >= 1000000000) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000;
	}
	CHECK_RC(posix_trace_timedgetnext_event(trid, &ev, &p, sizeof p, &len, &un, &dl), ETIMEDOUT);
	struct posix_trace_status_info si;
	CHECK_RC(posix_trace_get_status(trid, &si), 0);
	CHECK_EQ(si.posix_stream_status, POSIX_TRACE_RUNNING);
	CHECK_EQ(si.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
	CHECK_RC(posix_trace_stop(trid), 0);
	n = collect(trid);
	CHECK_EQ(n, 1);
	CHECK(n == 1 && g[0].id == POSIX_TRACE_STOP && g[0].pid == getpid());
	CHECK_RC(posix_trace_shutdown(trid), 0);
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], MARK) == 0)
		return exec_main(argv);
	T_BEGIN(60);
	signal(SIGPIPE, SIG_IGN);   /* a dead peer: EPIPE and a message */
	round_trip(0, 1, 0);   /* the constructor's event is the child's first */
	round_trip(5, 1, 0);   /* recorded before and after exec */
	round_trip(3, 2, 0);   /* exec'd twice */
	round_trip(0, 1, 1);   /* POSIX_TRACE_INHERITED: a child's exec stays traced */
	round_trip(3, 2, 1);
	T_END();
}

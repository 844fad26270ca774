/*
 * thread_ident.c -- a trace says who each thread was (src/producer/thrmap.c,
 * ext.h pt_ext_threads(), cli/read/threads.c): its kernel TID and its name.
 *
 * The witnesses are the threads themselves: each reports its gettid() and
 * the name it gave itself.
 *  - the main thread: TID = pid, its name the program's;
 *  - a thread named with pthread_setname_np() before its first event, then
 *    renamed with prctl(PR_SET_NAME) and, 20 ms later, recording past a
 *    few chunks: the first name from its first chunk, the new one from
 *    its next chunk on,
 *    and every one of its events is named as the rule says (cli's lookup
 *    by time);
 *  - two threads one after the other, which glibc gives the same pthread_t:
 *    each event is named by its own thread's TID;
 *  - a forked child (inherited stream): its TID is its own pid, not its
 *    parent's thread's;
 *  - the same entries in the stream's log, and `posixtrace info` on a
 *    recorded program names each thread;
 *  - the log's CTF export read by babeltrace2 (skipped without it): each
 *    event's packet context has the vtid and procname its thread reported
 *    (LTTng's context names); the Chrome export's tid is the thread's TID
 *    and its thread_name the last name the thread gave itself.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "../cli/read/threads.c"

static trace_event_id_t ev;
#define RUN 20000 /* events of 16 bytes: past a few chunks of 64 KiB (4096 events) */

struct rec { uint32_t who, seq; }; /* who: 1 renamed, 2 first of two, 3 second, 4 child */

static _Atomic int tid_renamed, tid_a, tid_b;
static _Atomic uint32_t renamed_at; /* seq of the first event after the rename */

static void *renamed(void *arg)
{
	(void)arg;
	tid_renamed = (int)syscall(SYS_gettid);
	pthread_setname_np(pthread_self(), "alpha");
	struct rec r = { 1, 0 };
	for (; r.seq < 10; r.seq++)
		posix_trace_event(ev, &r, sizeof r);
	prctl(PR_SET_NAME, "beta two", 0, 0, 0);
	renamed_at = r.seq;
	usleep(20000); /* the name is read again at a chunk 10 ms after the last reading */
	for (; r.seq < 10 + RUN; r.seq++)
		posix_trace_event(ev, &r, sizeof r);
	return NULL;
}

static void *one(void *arg)
{
	struct rec r = { (uint32_t)(uintptr_t)arg, 0 };
	(r.who == 2 ? &tid_a : &tid_b)[0] = (int)syscall(SYS_gettid);
	pthread_setname_np(pthread_self(), r.who == 2 ? "first" : "second");
	for (; r.seq < 5; r.seq++)
		posix_trace_event(ev, &r, sizeof r);
	return NULL;
}

static uint64_t ns(const struct posix_trace_event_info *e)
{
	return (uint64_t)e->posix_timestamp.tv_sec * 1000000000u + (uint64_t)e->posix_timestamp.tv_nsec;
}

/* Every event of the trace named as its thread reported itself. */
static void check(trace_id_t trid, int is_log, pid_t child, pthread_t main_th)
{
	struct thrmap *m = thrmap_load(trid);
	struct posix_trace_event_info e;
	struct rec r;
	size_t len;
	int none = 0;
	unsigned long counts[5] = { 0 }, main_named = 0;
	char comm[16] = "";

	REQUIRE(m);
	prctl(PR_GET_NAME, comm, 0, 0, 0);
	CHECK(thrmap_count(m) >= 6);
	const struct pt_ext_thread *mt = thrmap_find(m, getpid(), (uint64_t)main_th, UINT64_MAX);
	CHECK(mt && mt->tid == getpid() && !strcmp(mt->name, comm));
	main_named += mt != NULL;
	while ((is_log ? posix_trace_getnext_event(trid, &e, &r, sizeof r, &len, &none)
	               : posix_trace_trygetnext_event(trid, &e, &r, sizeof r, &len, &none)) == 0 &&
	       !none) {
		if (e.posix_event_id != ev || len != sizeof r || r.who < 1 || r.who > 4)
			continue;
		const struct pt_ext_thread *t = thrmap_find(m, e.posix_pid, (uint64_t)e.posix_thread_id,
		                                            ns(&e));
		int ok = t != NULL;
		if (ok && r.who == 1) {
			/* the new name from the first chunk taken after the rename:
			 * never before it, and by RUN events later at the latest */
			const char *want = r.seq < renamed_at ? "alpha" : "beta two";
			ok = t->tid == tid_renamed &&
			     (!strcmp(t->name, want) ||
			      (r.seq >= renamed_at && r.seq < renamed_at + RUN / 2 && !strcmp(t->name, "alpha")));
			counts[0] += r.seq >= renamed_at + RUN / 2 && !strcmp(t->name, "beta two");
		} else if (ok && r.who == 2) {
			ok = t->tid == tid_a && !strcmp(t->name, "first");
		} else if (ok && r.who == 3) {
			ok = t->tid == tid_b && !strcmp(t->name, "second");
		} else if (ok && r.who == 4) {
			ok = e.posix_pid == child && t->tid == child && t->pid == child;
		}
		if (!ok)
			fprintf(stderr, "event of %u seq %u: named %d '%s'\n", r.who, r.seq,
			        t ? t->tid : 0, t ? t->name : "");
		CHECK(ok);
		counts[r.who] += ok;
	}
	CHECK_EQ(counts[1], 10 + RUN);
	CHECK_EQ(counts[0], RUN / 2);
	CHECK_EQ(counts[2], 5);
	CHECK_EQ(counts[3], 5);
	CHECK_EQ(counts[4], 1);
	CHECK_EQ(main_named, 1);
	/* info's column: the renamed thread with both names */
	char all[200];
	thrmap_all(m, all, sizeof all, getpid(), (uint64_t)main_th);
	char w[64];
	snprintf(w, sizeof w, "%d %s", (int)getpid(), comm);
	CHECK(!strcmp(all, w));
	thrmap_free(m);
}

/* Whether an export names the event of thread who (its seq-th) as that
 * thread reported itself: pid, TID, and its name then (latest: the last
 * name it gave itself, as Chrome's one thread_name per TID says). */
static int named_as(uint32_t who, uint32_t seq, int pid, int tid, const char *name, pid_t child,
                    int latest)
{
	if (who == 0)
		return pid == getpid() && tid == getpid();
	if (who == 1)
		return pid == getpid() && tid == tid_renamed &&
		       (latest ? !strcmp(name, "beta two")
		               : !strcmp(name, seq < renamed_at ? "alpha" : "beta two") ||
		                 (seq >= renamed_at && seq < renamed_at + RUN / 2 && !strcmp(name, "alpha")));
	if (who == 2)
		return tid == tid_a && !strcmp(name, "first");
	if (who == 3)
		return tid == tid_b && !strcmp(name, "second");
	return who == 4 && pid == child && tid == child;
}

static void check_counts(const unsigned long *counts)
{
	CHECK_EQ(counts[0], 1);
	CHECK_EQ(counts[1], 10 + RUN);
	CHECK_EQ(counts[2], 5);
	CHECK_EQ(counts[3], 5);
	CHECK_EQ(counts[4], 1);
}

/* babeltrace2 on the CTF export of the log: every "ident" event's vtid
 * and procname are what its thread reported; its payload (struct rec)
 * says which thread it was. */
static void check_ctf(const char *logp, pid_t child)
{
	const char *bt = cli_which("babeltrace2");
	if (!bt) {
		printf("SKIP part: CTF vtid/procname (babeltrace2 is not installed)\n");
		return;
	}
	const char *dir = cli_path("ident.ctf");
	char *out = NULL, *err = NULL, line[2048];
	CHECK_EQ(cli_run(CLI("export", "--format", "ctf", "--raw-addresses", (char *)logp, "-o",
	                     (char *)dir), NULL, &err), 0);
	free(err);
	err = NULL;
	int rc = cli_run((char *const[]){ (char *)bt, (char *)dir, NULL }, &out, &err);
	CHECK_EQ(rc, 0);
	if (rc)
		fprintf(stderr, "babeltrace2: %s\n", err ? err : "");
	unsigned long counts[5] = { 0 };
	for (const char *s = out; cli_next_line(&s, line, sizeof line) == 0;) {
		const char *p = strstr(line, " ident: { pid = ");
		int pid, vtid, at = 0, b[8];
		char name[32] = "";
		if (!p || sscanf(p, " ident: { pid = %d, vtid = %d, tid = %*d, pthread_id = %*x, procname = \"%n", &pid,
		                 &vtid, &at) != 2 || !at)
			continue;
		const char *q = strchr(p + at, '"');
		if (!q || (size_t)(q - (p + at)) >= sizeof name)
			continue;
		memcpy(name, p + at, (size_t)(q - (p + at)));
		const char *pl = strstr(q, "payload_len = 8, payload = [ ");
		if (!pl || sscanf(pl, "payload_len = 8, payload = [ [0] = %d, [1] = %d, [2] = %d, "
		                      "[3] = %d, [4] = %d, [5] = %d, [6] = %d, [7] = %d ]",
		                  &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &b[6], &b[7]) != 8)
			continue;
		uint32_t who = (uint32_t)(b[0] | b[1] << 8 | b[2] << 16 | b[3] << 24);
		uint32_t seq = (uint32_t)(b[4] | b[5] << 8 | b[6] << 16 | b[7] << 24);
		int ok = named_as(who, seq, pid, vtid, name, child, 0);
		if (!ok)
			fprintf(stderr, "CTF: event of %u seq %u: %s\n", who, seq, line);
		if (ok && who < 5)
			counts[who]++;
	}
	check_counts(counts);
	free(out);
	free(err);
}

/* The Chrome JSON export of the log: each "ident" event's tid is its
 * thread's gettid(), and the thread_name of that tid the name the thread
 * gave itself last. */
static const char *chrome_name(const char *json, int pid, int tid, char *out, size_t cap)
{
	char want[96];
	snprintf(want, sizeof want, "\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
	                            "\"args\":{\"name\":\"", pid, tid);
	const char *p = strstr(json, want);
	out[0] = 0;
	if (p && sscanf(p + strlen(want), "%63[^\"]", out) != 1)
		out[0] = 0;
	(void)cap;
	return out;
}

static void check_chrome(const char *logp, pid_t child)
{
	const char *json = cli_path("ident.json");
	char *err = NULL, line[1024], n[64];
	CHECK_EQ(cli_run(CLI("export", "--format", "chrome", (char *)logp, "-o", (char *)json), NULL,
	                 &err), 0);
	free(err);
	char *out = cli_slurp(json);
	REQUIRE(out);
	unsigned long counts[5] = { 0 };
	/* a thread's name looked up once per thread met, not at each event */
	int last_pid = -1, last_tid = -1;
	for (const char *s = out; cli_next_line(&s, line, sizeof line) == 0;) {
		int pid, tid, at = 0;
		unsigned char b[8];
		const char *p = strstr(line, "{\"name\":\"ident\",\"ph\":\"i\"");
		const char *h = p ? strstr(p, "\"b64\":\"") : NULL;
		if (!p || !h || sscanf(strstr(p, "\"pid\":"), "\"pid\":%d,\"tid\":%d%n", &pid, &tid, &at) != 2 ||
		    cli_unb64(h + 7, b, sizeof b) != 8)
			continue;
		uint32_t who = b[0] | b[1] << 8 | b[2] << 16 | b[3] << 24;
		if (pid != last_pid || tid != last_tid)
			chrome_name(out, pid, tid, n, sizeof n), last_pid = pid, last_tid = tid;
		uint32_t seq = b[4] | b[5] << 8 | b[6] << 16 | (uint32_t)b[7] << 24;
		int ok = named_as(who, seq, pid, tid, n, child, 1);
		if (!ok)
			fprintf(stderr, "Chrome: event of %u named \"%s\": %s\n", who, n, line);
		if (ok && who < 5)
			counts[who]++;
	}
	check_counts(counts);
	free(out);
}

int main(int argc, char **argv)
{
	(void)argc, (void)argv;
	T_BEGIN(60);
	cli_setup();
	REQUIRE(posix_trace_eventid_open("ident", &ev) == 0);
	trace_attr_t attr;
	trace_id_t trid;
	posix_trace_attr_init(&attr);
	posix_trace_attr_setstreamsize(&attr, 4 << 20);
	posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED);
	posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_FLUSH);
	const char *logp = cli_path("ident.ptlog");
	int fd = open(logp, O_RDWR | O_CREAT | O_TRUNC, 0600);
	REQUIRE(fd >= 0);
	REQUIRE(posix_trace_create_withlog(0, &attr, fd, &trid) == 0);
	REQUIRE(posix_trace_start(trid) == 0);
	struct rec r0 = { 0, 0 };
	posix_trace_event(ev, &r0, sizeof r0); /* the main thread */

	pthread_t t, a, b;
	REQUIRE(pthread_create(&t, NULL, renamed, NULL) == 0);
	pthread_join(t, NULL);
	REQUIRE(pthread_create(&a, NULL, one, (void *)2) == 0);
	pthread_join(a, NULL);
	REQUIRE(pthread_create(&b, NULL, one, (void *)3) == 0);
	pthread_join(b, NULL);
	if (!pthread_equal(a, b))
		printf("note: the two threads did not share a pthread_t here\n");
	pid_t child = fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		struct rec r = { 4, 0 };
		posix_trace_event(ev, &r, sizeof r);
		_exit(0);
	}
	int st;
	REQUIRE(waitpid(child, &st, 0) == child && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	REQUIRE(posix_trace_shutdown(trid) == 0);
	close(fd);
	posix_trace_attr_destroy(&attr);

	fd = open(logp, O_RDONLY);
	REQUIRE(fd >= 0);
	REQUIRE(posix_trace_open(fd, &trid) == 0);
	check(trid, 1, child, pthread_self());
	posix_trace_close(trid);
	close(fd);
	check_ctf(logp, child);
	check_chrome(logp, child);

	/* `posixtrace info`: TID and name of each of examples/app's threads */
	char *out = NULL;
	const char *log = cli_path("app.ptlog");
	REQUIRE(cli_record_app(log, "0") == 0);
	CHECK_EQ(cli_run(CLI("info", (char *)log), &out, NULL), 0);
	int workers = 0;
	for (int i = 0; i < 3; i++) {
		char w[32];
		snprintf(w, sizeof w, " worker-%d\n", i);
		workers += cli_contains(out, w);
	}
	CHECK_EQ(workers, 3);
	free(out);
	T_END();
}

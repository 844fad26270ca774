/*
 * wanted.c -- the wanted bitmap that <trace.h>'s inline test reads
 * (__posix_trace_want): bit id is set while a running stream of this
 * process may record id, and clear while none may.
 *
 * Checked, in this process: all clear with no stream, with a stream not
 * started, after stop and after shutdown; after start, set for every user
 * id and no system id; a filter clears the bits of the ids it filters out
 * and SUB sets them again, before posix_trace_set_filter() returns; with
 * two streams the OR of both; events of filtered-out ids are recorded by
 * neither the inline test nor the function called directly, the others
 * exactly; ids out of range (constant or not) read inside the bitmap and
 * are never recorded.  Across processes: a controller (this process) sets
 * the filter of a running stream of a forked worker while two of its
 * threads record; after set_filter returns, no event of a newly
 * filtered-out id is recorded by a thread that was told so afterwards,
 * and every event of a newly wanted id is (exact counts, per thread, in
 * order).  Inherited streams: a child of a process traced into an
 * INHERITED stream wants every user id (its control segment hears of no
 * filter change) and still records exactly what the filter lets through,
 * also after the parent changes the filter.  Exec: a stream started (with a
 * filter) for a child before it execs; the new image's inline test reads
 * the adopted control segment's bitmap and records exactly what the filter
 * lets through.  And the first stream a
 * controller makes for a fresh child is attached though its ticket may
 * equal one the parent acted on.  Looped (WANTED_ROUNDS, 10 by default).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <trace.h>
#include "t.h"
#include "helpers.h"

static int wanted(trace_event_id_t id)
{
	return (int)(__posix_trace_want[(id / 64) % 16] >> (id % 64) & 1);
}

static int nwanted(void)
{
	int n = 0;
	for (unsigned i = 0; i < 16; i++)
		n += __builtin_popcountll(__posix_trace_want[i]);
	return n;
}

static trace_id_t mk(pid_t pid, int inherit, size_t size)
{
	trace_attr_t a;
	trace_id_t t;

	posix_trace_attr_init(&a);
	posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_UNTIL_FULL);
	posix_trace_attr_setstreamsize(&a, size);
	if (inherit)
		posix_trace_attr_setinherited(&a, POSIX_TRACE_INHERITED);
	int rc = posix_trace_create(pid, &a, &t);
	posix_trace_attr_destroy(&a);
	if (rc == EPERM || rc == EACCES)
		T_SKIP("cannot trace another process here");
	REQUIRE(rc == 0);
	return t;
}

static trace_event_set_t set1(trace_event_id_t id)
{
	trace_event_set_t s;
	posix_trace_eventset_empty(&s);
	posix_trace_eventset_add(id, &s);
	return s;
}

/* Events of a and of b in the stream (read to the end), counted; any
 * other user event counts in *other. */
static void count_ids(trace_id_t t, trace_event_id_t a, trace_event_id_t b, int *na, int *nb,
                      int *other)
{
	struct posix_trace_event_info ev;
	char buf[64];
	size_t len;
	int un;

	*na = *nb = *other = 0;
	for (;;) {
		un = 0;
		if (posix_trace_trygetnext_event(t, &ev, buf, sizeof buf, &len, &un) != 0 || un)
			return;
		*na += ev.posix_event_id == a;
		*nb += ev.posix_event_id == b;
		*other += ev.posix_event_id >= PT_SYS_IDS && ev.posix_event_id != a && ev.posix_event_id != b;
	}
}

static void local_checks(void)
{
	trace_event_id_t a, b;
	trace_event_set_t s;

	REQUIRE(posix_trace_eventid_open("wanted.a", &a) == 0);
	REQUIRE(posix_trace_eventid_open("wanted.b", &b) == 0);
	CHECK_EQ(nwanted(), 0);

	trace_id_t t1 = mk(0, 0, 1 << 20);
	CHECK_EQ(nwanted(), 0); /* not started */
	CHECK_RC(posix_trace_start(t1), 0);
	CHECK_EQ(nwanted(), 1024 - PT_SYS_IDS);
	for (unsigned id = 0; id < PT_SYS_IDS; id++)
		CHECK(!wanted(id));
	CHECK(wanted(a) && wanted(b));

	s = set1(b);
	CHECK_RC(posix_trace_set_filter(t1, &s, POSIX_TRACE_SET_EVENTSET), 0);
	CHECK(wanted(a) && !wanted(b));
	CHECK_EQ(nwanted(), 1024 - 16 - 1);
	for (int i = 0; i < 10; i++) {
		posix_trace_event(a, &i, sizeof i);
		posix_trace_event(b, &i, sizeof i);
		(posix_trace_event)(b, &i, sizeof i); /* the function's own test */
		posix_trace_event(a + 1024, &i, sizeof i); /* out of range: never */
		posix_trace_event(5000, &i, sizeof i);     /* a constant one */
		posix_trace_event(~0u, &i, sizeof i);
		(posix_trace_event)(a + 1024, &i, sizeof i);
	}

	/* a second stream that filters a out: the OR keeps both wanted */
	trace_id_t t2 = mk(0, 0, 1 << 20);
	s = set1(a);
	CHECK_RC(posix_trace_set_filter(t2, &s, POSIX_TRACE_SET_EVENTSET), 0);
	CHECK(wanted(a) && !wanted(b)); /* t2 not running: not counted */
	CHECK_RC(posix_trace_start(t2), 0);
	CHECK(wanted(a) && wanted(b));
	for (int i = 0; i < 7; i++) {
		posix_trace_event(a, &i, sizeof i);
		posix_trace_event(b, &i, sizeof i);
	}
	CHECK_RC(posix_trace_stop(t2), 0);
	CHECK(wanted(a) && !wanted(b));
	s = set1(b); /* SUB: b wanted again in t1 */
	CHECK_RC(posix_trace_set_filter(t1, &s, POSIX_TRACE_SUB_EVENTSET), 0);
	CHECK(wanted(a) && wanted(b));
	posix_trace_event(b, NULL, 0);
	CHECK_RC(posix_trace_stop(t1), 0);
	CHECK_EQ(nwanted(), 0);
	posix_trace_event(b, NULL, 0); /* stopped: nothing */
	int na, nb, other;
	count_ids(t1, a, b, &na, &nb, &other);
	CHECK_EQ(na, 17);
	CHECK_EQ(nb, 1);
	CHECK_EQ(other, 0);
	count_ids(t2, a, b, &na, &nb, &other);
	CHECK_EQ(na, 0);
	CHECK_EQ(nb, 7);
	CHECK_EQ(other, 0);
	CHECK_RC(posix_trace_start(t2), 0);
	CHECK(!wanted(a) && wanted(b));
	CHECK_RC(posix_trace_shutdown(t2), 0);
	CHECK_EQ(nwanted(), 0);
	CHECK_RC(posix_trace_start(t1), 0);
	CHECK_EQ(nwanted(), 1024 - 16);
	CHECK_RC(posix_trace_shutdown(t1), 0);
	CHECK_EQ(nwanted(), 0);
}

/* ---------------------------------------------- filter set from outside */
struct shared {
	_Atomic int phase;   /* set by the controller */
	_Atomic int seen[2]; /* the phase each worker thread acted on */
	trace_event_id_t a, b, m;
};
static struct shared *sh;
#define PHASE1_MAX 3000
#define AFTER 100

/* Worker thread th in a phase after the first: a marker (-phase), then
 * AFTER events of a and of b (b through the function itself, not the
 * inline test, if by_call), then the phase told as seen. */
static void after_phase(int th, int phase, int by_call)
{
	int pl[2] = { th, -phase };

	posix_trace_event(sh->m, pl, sizeof pl);
	for (int i = 0; i < AFTER; i++) {
		pl[1] = i;
		posix_trace_event(sh->a, pl, sizeof pl);
		if (by_call)
			(posix_trace_event)(sh->b, pl, sizeof pl);
		else
			posix_trace_event(sh->b, pl, sizeof pl);
	}
	atomic_store(&sh->seen[th], phase);
}

static void *worker_thread(void *arg)
{
	int th = (int)(intptr_t)arg, i = 0;
	int pl[2] = { th, 0 };

	/* phase 1: a and b until told, at most PHASE1_MAX of each */
	while (atomic_load(&sh->phase) == 1) {
		if (i < PHASE1_MAX) {
			pl[1] = i++;
			posix_trace_event(sh->a, pl, sizeof pl);
			posix_trace_event(sh->b, pl, sizeof pl);
		} else {
			usleep(100);
		}
	}
	/* phase 2 (b filtered out before it began): a marker, then both */
	after_phase(th, 2, 0);
	while (atomic_load(&sh->phase) == 2)
		usleep(100);
	/* phase 3 (b wanted again, a filtered out): the same */
	after_phase(th, 3, 1);
	return NULL;
}

static void wait_seen(int phase)
{
	for (int th = 0; th < 2; th++)
		while (atomic_load(&sh->seen[th]) < phase)
			usleep(200);
}

/* A child held until the parent lets it go (let_go(*go)): 0 in the
 * child, once let go (it exits with 2 if the parent ends first); the
 * child's pid in the parent. */
static pid_t fork_held(int *go)
{
	int p[2];
	REQUIRE(pipe(p) == 0);
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		char c;
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(2);
		return 0;
	}
	close(p[0]);
	*go = p[1];
	return pid;
}

static void let_go(int go)
{
	REQUIRE(write(go, "g", 1) == 1);
	close(go);
}

static void remote_round(void)
{
	memset(sh, 0, sizeof *sh);
	atomic_store(&sh->phase, 1);
	REQUIRE(posix_trace_eventid_open("wanted.ra", &sh->a) == 0);
	REQUIRE(posix_trace_eventid_open("wanted.rb", &sh->b) == 0);
	REQUIRE(posix_trace_eventid_open("wanted.rm", &sh->m) == 0);
	int go;
	pid_t pid = fork_held(&go);
	if (pid == 0) {
		pthread_t th[2];
		for (intptr_t i = 0; i < 2; i++)
			pthread_create(&th[i], NULL, worker_thread, (void *)i);
		for (int i = 0; i < 2; i++)
			pthread_join(th[i], NULL);
		_exit(0);
	}
	trace_id_t t = mk(pid, 0, 4u << 20);
	CHECK_RC(posix_trace_start(t), 0);
	let_go(go);
	usleep(2000); /* the threads record meanwhile */
	trace_event_set_t s = set1(sh->b);
	CHECK_RC(posix_trace_set_filter(t, &s, POSIX_TRACE_SET_EVENTSET), 0);
	atomic_store(&sh->phase, 2);
	wait_seen(2);
	s = set1(sh->a);
	CHECK_RC(posix_trace_set_filter(t, &s, POSIX_TRACE_SET_EVENTSET), 0);
	atomic_store(&sh->phase, 3);
	wait_seen(3);
	int st;
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_RC(posix_trace_stop(t), 0);

	/* per thread: after its marker of phase 2, a only; after that of 3, b only */
	struct posix_trace_event_info ev;
	int pl[2], un, ph[2] = { 1, 1 }, na[2][4] = { { 0 } }, nb[2][4] = { { 0 } }, next[2] = { 0 };
	size_t len;
	int filters = 0, bad = 0;
	for (;;) {
		un = 0;
		if (posix_trace_trygetnext_event(t, &ev, pl, sizeof pl, &len, &un) != 0 || un)
			break;
		if (ev.posix_event_id == POSIX_TRACE_FILTER)
			filters++;
		if (ev.posix_event_id != sh->a && ev.posix_event_id != sh->b &&
		    ev.posix_event_id != sh->m)
			continue;
		if (len != sizeof pl || pl[0] < 0 || pl[0] > 1) {
			bad++;
			continue;
		}
		int th = pl[0];
		if (ev.posix_event_id == sh->m) {
			ph[th] = -pl[1];
			next[th] = 0;
			continue;
		}
		if (ph[th] >= 2) { /* in order, one of each wanted id per i */
			if (pl[1] != next[th])
				bad++;
			next[th]++;
		}
		if (ev.posix_event_id == sh->a)
			na[th][ph[th]]++;
		else
			nb[th][ph[th]]++;
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(filters, 2);
	for (int th = 0; th < 2; th++) {
		CHECK_EQ(ph[th], 3);
		CHECK(na[th][1] <= PHASE1_MAX && nb[th][1] <= PHASE1_MAX);
		CHECK_EQ(na[th][2], AFTER);
		CHECK_EQ(nb[th][2], 0);
		CHECK_EQ(na[th][3], 0);
		CHECK_EQ(nb[th][3], AFTER);
	}
	CHECK_RC(posix_trace_shutdown(t), 0);
}

/* ----------------------------------------------------------- inherited */
static void inherit_round(void)
{
	trace_event_id_t a, b;
	REQUIRE(posix_trace_eventid_open("wanted.ia", &a) == 0);
	REQUIRE(posix_trace_eventid_open("wanted.ib", &b) == 0);
	trace_id_t t = mk(0, 1, 1 << 20);
	trace_event_set_t s = set1(b);
	CHECK_RC(posix_trace_set_filter(t, &s, POSIX_TRACE_SET_EVENTSET), 0);
	CHECK_RC(posix_trace_start(t), 0);
	CHECK(wanted(a) && !wanted(b));
	struct t_pipes pp;
	pid_t pid = t_fork_piped(&pp);
	if (pid == 0) {
		char c;
		/* the child's control segment hears of no filter change: every
		 * user id may be wanted, and the function decides */
		int ok = wanted(a) && wanted(b) && nwanted() == 1024 - PT_SYS_IDS;
		for (int i = 0; i < 5; i++) {
			posix_trace_event(a, &i, sizeof i);
			posix_trace_event(b, &i, sizeof i);
		}
		if (write(pp.rep, "1", 1) != 1 || read(pp.cmd, &c, 1) != 1)
			_exit(2);
		for (int i = 0; i < 3; i++) { /* now a filtered out, b wanted */
			posix_trace_event(a, &i, sizeof i);
			posix_trace_event(b, &i, sizeof i);
		}
		_exit(ok ? 0 : 3);
	}
	char c;
	REQUIRE(read(pp.rep, &c, 1) == 1);
	s = set1(a);
	CHECK_RC(posix_trace_set_filter(t, &s, POSIX_TRACE_SET_EVENTSET), 0);
	CHECK(!wanted(a) && wanted(b));
	REQUIRE(write(pp.cmd, "g", 1) == 1);
	int st;
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
	CHECK_RC(posix_trace_stop(t), 0);
	struct posix_trace_event_info ev;
	int pl, un, na = 0, nb = 0;
	size_t len;
	for (;;) {
		un = 0;
		if (posix_trace_trygetnext_event(t, &ev, &pl, sizeof pl, &len, &un) != 0 || un)
			break;
		if (ev.posix_pid != pid)
			continue;
		na += ev.posix_event_id == a;
		nb += ev.posix_event_id == b;
	}
	CHECK_EQ(na, 5);
	CHECK_EQ(nb, 3);
	CHECK_RC(posix_trace_shutdown(t), 0);
	CHECK_EQ(nwanted(), 0);
	close(pp.cmd);
	close(pp.rep);
}

/* ---------------------------------------------------------------- exec */
/* The exec'd image: its wanted bitmap is the adopted control segment's. */
static int exec_child(void)
{
	trace_event_id_t a, b;
	if (posix_trace_eventid_open("wanted.xa", &a) || posix_trace_eventid_open("wanted.xb", &b))
		return 2;
	int ok = wanted(a) && !wanted(b);
	for (int i = 0; i < 4; i++) {
		posix_trace_event(a, &i, sizeof i);
		posix_trace_event(b, &i, sizeof i);
	}
	return ok ? 0 : 3;
}

static void exec_round(void)
{
	trace_event_id_t a, b;
	REQUIRE(posix_trace_eventid_open("wanted.xa", &a) == 0);
	REQUIRE(posix_trace_eventid_open("wanted.xb", &b) == 0);
	int go;
	pid_t pid = fork_held(&go);
	if (pid == 0) {
		setenv("WANTED_EXEC_CHILD", "1", 1);
		execl("/proc/self/exe", "wanted", (char *)NULL);
		_exit(4);
	}
	trace_id_t t = mk(pid, 0, 1 << 20);
	trace_event_set_t s = set1(b);
	CHECK_RC(posix_trace_set_filter(t, &s, POSIX_TRACE_SET_EVENTSET), 0);
	CHECK_RC(posix_trace_start(t), 0);
	let_go(go);
	int st;
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
	CHECK_RC(posix_trace_stop(t), 0);
	int na, nb, other;
	count_ids(t, a, b, &na, &nb, &other);
	CHECK_EQ(na, 4);
	CHECK_EQ(nb, 0);
	CHECK_RC(posix_trace_shutdown(t), 0);
}

int main(void)
{
	if (getenv("WANTED_EXEC_CHILD"))
		return exec_child();
	T_BEGIN(120);
	const char *e = getenv("WANTED_ROUNDS");
	int rounds = e ? atoi(e) : 10;
	sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	REQUIRE(sh != MAP_FAILED);
	for (int r = 0; r < rounds; r++) {
		local_checks();
		remote_round();
		inherit_round();
		exec_round();
	}
	T_END();
}

/*
 * hostile_remote.c -- a traced process attacks its controller through the
 * memory they share (docs/security.md, "What a hostile traced process can
 * do"; tests/hostile.c does it within one process).
 *
 * 1. Child T records from two threads (lengths up to max-data-size 64)
 *    while its main thread finds its stream through POSIXTRACE_CTL and the
 *    control slot, maps that region of the control memfd, and for ~1 s
 *    writes over it and the control segment: random words, all-ones
 *    ranges, descriptors and log entries with huge commits, counts and
 *    indexes, records with lying lengths and ids, names without NUL, bogus
 *    tickets, offsets, fds, live words and magic.  Meanwhile this process
 *    reads (trygetnext, timedgetnext), with PROT_NONE pages right after
 *    its mappings of the segment and of T's control segment where the
 *    address space allows: every call returns; every event has an id
 *    below 1024, at most 64 bytes (a system event 256), never
 *    TRUNCATED_READ.  Names (NUL-terminated), the type list (bounded),
 *    status, filter, stop/start, clear, reading to the end after T is
 *    killed, and shutdown all work.
 * 2. A child scribbles where its next stream will be built (past
 *    region_end of its control memfd, grown and mapped by itself) while a
 *    controller child creates and reads streams for it 200 times: each
 *    create succeeds or fails with an error number; no crash.
 * 3. A stream for a new, clean child gets exactly the events it records.
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <trace.h>
#include "t.h"
#include "helpers.h"
#include "../src/api/api.h"
#include "hostile_util.h"

#define MAXD 64
#define SECONDS 1.0

static trace_event_id_t ev_id;


static void put(void *base, uint64_t off, uint64_t v) /* one aligned word */
{
	atomic_store_explicit((_Atomic uint64_t *)((char *)base + (off & ~7ull)), v,
	                      memory_order_relaxed);
}

static int get1(int fd) /* one byte from a pipe, -1 at EOF */
{
	char c;
	ssize_t r;
	while ((r = read(fd, &c, 1)) < 0 && errno == EINTR)
		;
	return r == 1 ? c : -1;
}

/* The control segment (fd from POSIXTRACE_CTL) mapped here, or exit. */
static struct pt_ctl *my_ctl(int *fdp)
{
	const char *e = getenv("POSIXTRACE_CTL");
	int fd = e ? atoi(e) : -1;
	void *c = fd >= 0 ? mmap(NULL, PT_CTL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
	                  : MAP_FAILED;
	if (c == MAP_FAILED)
		_exit(3);
	*fdp = fd;
	return c;
}

/* --------------------------------------------------- T: part 1 attacker */
static void attacker(int go, int done)
{
	pthread_t th;
	static struct hu_writer wr[2];
	int fd;
	alarm(60);
	for (uintptr_t i = 0; i < 2; i++) {
		wr[i] = (struct hu_writer){ ev_id, MAXD + 16, (uint64_t)(i + 1) * 7919 + 1 };
		pthread_create(&th, NULL, hu_writer, &wr[i]);
	}
	if (get1(go) < 0)
		_exit(4);
	struct pt_ctl *ctl = my_ctl(&fd);
	uint64_t off = 0, size = 0;
	for (unsigned s = 0; s < PT_SLOTS && !size; s++)
		if (atomic_load(&ctl->slot[s].ticket) > PT_TICKET_BUSY)
			off = atomic_load(&ctl->slot[s].off), size = atomic_load(&ctl->slot[s].size);
	struct pt_hdr *h = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
	if (!size || h == MAP_FAILED)
		_exit(5);
	/* the geometry, read once, before it is scribbled on */
	uint64_t n = h->nchunks, csz = h->chunk_size, L = h->log_len;
	uint64_t ck = h->chunks_off, nm = h->names_off, acq = h->acq_off, data = h->data_off;
	uint64_t seed = 88172645463325252ull;
	double t0 = t_now_s();
	for (unsigned long it = 0;; it++) {
		double t = t_now_s() - t0;
		if (t >= SECONDS)
			break;
		uint64_t v = hu_rnd(&seed), w = hu_rnd(&seed);
		switch ((int)(t / SECONDS * 6)) {
		case 0: put(h, v % size, w % 3 ? w : w % 4096); break; /* anywhere */
		case 1: /* all-ones ranges */
			for (uint64_t o = v % size, k = 0; k < 64 && o + 8 * k < size; k++)
				put(h, o + 8 * k, ~0ull);
			break;
		case 2: { /* descriptors, log entries, records that lie */
			struct pt_chunk *d = (struct pt_chunk *)((char *)h + ck) + v % n;
			uint64_t q = atomic_load(&h->acq_seq);
			switch (w % 6) {
			case 0: atomic_store(&d->commit, (uint32_t)(w >> 8) | (uint32_t)csz); break;
			case 1: atomic_store(&d->ss, PT_SS(q - w % 4, PT_CK_SEALED + (w >> 40) % 2)); break;
			case 2: atomic_store(&d->nevents, ~0u); atomic_store(&d->level, (uint32_t)w); break;
			case 3: put(h, acq + ((q + 1) & (L - 1)) * 8,
			            PT_LOG_ENTRY(q + 1, (w >> 8) % 2 ? n + w % 1000 : w % n)); break;
			case 4: put(h, data + (v % n) * csz + 8 * (w % 64), (uint64_t)(w >> 48 | 1024) << 48); break;
			default: atomic_store(&d->pid, (int32_t)w); atomic_store(&d->thread, w); break;
			}
			break;
		}
		case 3: { /* names without NUL, in the stream and the registry */
			struct pt_name *a = (struct pt_name *)((char *)h + nm) + v % PT_NIDS;
			struct pt_name *b = pt_ctl_names(ctl) + w % PT_NIDS;
			for (unsigned k = 0; k < PT_NAME_SZ; k += 8) {
				put(a->name, k, 0x4141414141414141ull);
				put(b->name, k, 0x4242424242424242ull);
			}
			atomic_store(&a->valid, 1u + (w >> 32) % 2);
			atomic_store(&b->valid, 1u + (w >> 33) % 2);
			break;
		}
		case 4: { /* the control segment: tickets, offsets, fds, live */
			struct pt_ctl_slot *sl = &ctl->slot[v % PT_SLOTS];
			switch (w % 7) {
			case 0: atomic_store(&sl->ticket, w >> 8); break;
			case 1: atomic_store(&sl->off, w); atomic_store(&sl->size, ~w); break;
			case 2: atomic_store(&sl->fd, (int32_t)w); atomic_store(&sl->ino, w); break;
			case 3: atomic_store(&ctl->live, (uint32_t)w); break;
			case 4: atomic_store(&ctl->region_end, w % 3 ? w : PT_CTL_SIZE - 4096); break;
			case 5: atomic_store(&ctl->next_ticket, w % 2); break;
			default: atomic_store(&ctl->magic, w); atomic_store(&ctl->pid, (int32_t)w); break;
			}
			break;
		}
		default: /* the header's counters */
			atomic_store(&h->free_top, w % 2 ? w : w % (n + 10));
			atomic_store(&h->acq_seq, atomic_load(&h->acq_seq) + w % 3);
			atomic_store(&h->loss_gen, w % 5000);
			atomic_store(&h->state, (uint32_t)w | PT_ST_RUNNING);
			atomic_store(&h->sealed_bytes, w);
			break;
		}
		if (it % 4096 == 0)
			sched_yield(); /* let the recorders run on a small machine */
	}
	atomic_store(&hu_stop, 1);
	if (write(done, "d", 1) != 1)
		_exit(6);
	for (;;)
		pause();
}

/* PROT_NONE pages after the library's next two mappings (T's control
 * segment, then the stream): mappings go top-down, so a hole of the control
 * segment's size between a fence and a guard page takes the first, and the
 * second ends at the guard.  guards_in_place(): how many ended up there. */
static char *fences(void)
{
	size_t cs = PT_CTL_SIZE;
	char *f = mmap(NULL, 1 << 16, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *x = mmap(NULL, cs + 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (f == MAP_FAILED || x == MAP_FAILED || x + cs + 4096 != f)
		return NULL;
	munmap(x + 4096, cs);
	return x;
}

static int guards_in_place(char *g, const struct pt_trid *t)
{
	return g ? ((char *)t->s.tctl == g + 4096) + ((char *)t->s.hdr + t->s.map_size == g) : 0;
}

struct seen { uint64_t events, errors, bad, calls; };

static void check_event(struct seen *s, const struct posix_trace_event_info *ev, size_t len)
{
	s->events++;
	s->errors += ev->posix_event_id == POSIX_TRACE_ERROR;
	if (ev->posix_event_id >= PT_NIDS || ev->posix_truncation_status == POSIX_TRACE_TRUNCATED_READ ||
	    len > (ev->posix_event_id < PT_SYS_IDS ? 2 * sizeof(trace_event_set_t) : MAXD))
		s->bad++;
}

static void read_some(trace_id_t trid, struct seen *s, int timed)
{
	struct posix_trace_event_info ev;
	unsigned char buf[4096];
	size_t len = 0;
	int un = -1, rc;
	if (timed) { /* a deadline 2 ms away */
		struct timespec dl;
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec += dl.tv_nsec >= 998000000, dl.tv_nsec = (dl.tv_nsec + 2000000) % 1000000000;
		rc = posix_trace_timedgetnext_event(trid, &ev, buf, sizeof buf, &len, &un, &dl);
		un = rc == ETIMEDOUT ? 1 : un;
		rc = rc == ETIMEDOUT ? 0 : rc;
	} else {
		rc = posix_trace_trygetnext_event(trid, &ev, buf, sizeof buf, &len, &un);
	}
	s->calls++;
	CHECK_RC(rc, 0);
	if (rc == 0 && !un)
		check_event(s, &ev, len);
}

static void part1(void)
{
	int st;
	struct t_pipes pp;
	trace_attr_t a;
	trace_id_t trid;
	struct seen s = { 0, 0, 0, 0 };

	/* T's ends are closed here: a T that dies ends the loop below too */
	pid_t tp = t_fork_piped(&pp);
	if (tp == 0)
		attacker(pp.cmd, pp.rep);
	REQUIRE(posix_trace_attr_init(&a) == 0);
	REQUIRE(posix_trace_attr_setstreamsize(&a, 256 << 10) == 0);
	REQUIRE(posix_trace_attr_setmaxdatasize(&a, MAXD) == 0);
	char *g = fences();
	REQUIRE(posix_trace_create(tp, &a, &trid) == 0);
	REQUIRE(posix_trace_start(trid) == 0);
	struct pt_trid *t;
	REQUIRE(pt_trid_lock(trid, &t) == 0);
	int guards = guards_in_place(g, t);
	pt_trid_unlock(t);
	REQUIRE(write(pp.cmd, "g", 1) == 1);
	for (unsigned long i = 0;; i++) {
		struct pollfd p = { pp.rep, POLLIN, 0 };
		if (poll(&p, 1, 0) > 0)
			break;
		read_some(trid, &s, i % 16 == 0);
	}
	/* everything else that reads the segment or the control segment */
	char name[TRACE_EVENT_NAME_MAX + 1];
	trace_event_id_t id;
	int un, k = 0;
	for (id = 0; id < PT_NIDS; id++)
		if (posix_trace_eventid_get_name(trid, id, name) == 0)
			CHECK(memchr(name, 0, sizeof name) != NULL);
	while (posix_trace_eventtypelist_getnext_id(trid, &id, &un) == 0 && !un && k++ <= PT_NIDS)
		CHECK(id < PT_NIDS);
	CHECK(k <= PT_NIDS);
	CHECK(posix_trace_trid_eventid_open(trid, "hostile-remote-2", &id) != 0 || id < PT_NIDS);
	struct posix_trace_status_info si;
	trace_event_set_t f;
	posix_trace_eventset_fill(&f, POSIX_TRACE_SYSTEM_EVENTS);
	CHECK_RC(posix_trace_get_status(trid, &si), 0);
	CHECK_RC(posix_trace_set_filter(trid, &f, POSIX_TRACE_SET_EVENTSET), 0);
	CHECK_RC(posix_trace_get_filter(trid, &f), 0);
	CHECK_RC(posix_trace_stop(trid), 0);
	CHECK_RC(posix_trace_start(trid), 0);
	CHECK_RC(posix_trace_clear(trid), 0);
	for (int i = 0; i < 1000; i++)
		read_some(trid, &s, 0);
	kill(tp, SIGKILL);
	REQUIRE(waitpid(tp, &st, 0) == tp);
	un = 0;
	for (int i = 0; i < 1000000 && !un; i++) { /* reading the rest ends */
		struct posix_trace_event_info ev;
		unsigned char buf[4096];
		size_t len;
		CHECK_RC(posix_trace_trygetnext_event(trid, &ev, buf, sizeof buf, &len, &un), 0);
		if (!un)
			check_event(&s, &ev, len);
	}
	CHECK_EQ(un, 1);
	CHECK_RC(posix_trace_shutdown(trid), 0);
	printf("hostile traced process: %llu calls, %llu events, %llu POSIX_TRACE_ERROR, "
	       "%d of 2 guard pages in place\n", (unsigned long long)s.calls, (unsigned long long)s.events,
	       (unsigned long long)s.errors, guards);
	CHECK_EQ(s.bad, 0);
	posix_trace_attr_destroy(&a);
	close(pp.cmd);
	close(pp.rep);
}

/* ---------------------------- part 2: scribbling where the stream goes */
static struct pt_ctl *pre_ctl;
static char *pre_map;
static uint64_t pre_base, pre_span = 2ull << 30;

/* Random words over the first 256 bytes of the region being built (the
 * one before the current region_end) and of the next one. */
static void *pre_loop(void *arg)
{
	uint64_t seed = (uintptr_t)arg, prev = pre_base, cur = pre_base;
	for (;;) {
		uint64_t e = atomic_load(&pre_ctl->region_end);
		if (e != cur && e >= pre_base && e < pre_base + pre_span && e % 4096 == 0)
			prev = cur, cur = e;
		for (int i = 0; i < 64; i++) {
			uint64_t o = (i & 1 ? prev : cur) - pre_base + 8 * (hu_rnd(&seed) % 32);
			if (o + 8 <= pre_span)
				put(pre_map, o, hu_rnd(&seed) % 2 ? hu_rnd(&seed) : hu_rnd(&seed) % 8192);
		}
		if (atomic_load_explicit(&hu_stop, memory_order_relaxed))
			return NULL;
	}
}

static void pre_scribbler(int quit)
{
	int fd;
	struct stat st;
	pthread_t th;
	alarm(60);
	pre_ctl = my_ctl(&fd);
	pre_base = atomic_load(&pre_ctl->region_end);
	if (fstat(fd, &st) != 0 || ((uint64_t)st.st_size < pre_base + pre_span &&
	                            ftruncate(fd, (off_t)(pre_base + pre_span)) != 0))
		_exit(3); /* (grown: the seal only stops shrinking) */
	if ((pre_map = mmap(NULL, pre_span, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
	                    (off_t)pre_base)) == MAP_FAILED)
		_exit(4);
	for (uintptr_t i = 1; i <= 3; i++) /* one of them runs while the controller does */
		pthread_create(&th, NULL, pre_loop, (void *)i);
	if (write(quit, "r", 1) != 1)
		_exit(5);
	_exit(get1(quit) == 'q' ? 0 : 6);
}

static void part2(void)
{
	int q[2], st;
	REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, q) == 0); /* both ways */
	pid_t sp = fork();
	REQUIRE(sp >= 0);
	if (sp == 0) {
		close(q[0]);
		pre_scribbler(q[1]);
	}
	close(q[1]);
	REQUIRE(get1(q[0]) == 'r');
	fflush(stdout);
	pid_t cp = fork();
	REQUIRE(cp >= 0);
	if (cp == 0) { /* C */
		trace_attr_t a;
		int ok = 0;
		alarm(60);
		posix_trace_attr_init(&a);
		posix_trace_attr_setstreamsize(&a, 64 << 10);
		posix_trace_attr_setmaxdatasize(&a, 16); /* 4 MiB regions */
		for (int i = 0; i < 200; i++) {
			trace_id_t trid;
			struct seen s = { 0, 0, 0, 0 };
			if (posix_trace_create(sp, &a, &trid) != 0)
				continue;
			ok++;
			posix_trace_start(trid);
			for (int k = 0; k < 100; k++)
				read_some(trid, &s, 0);
			CHECK_EQ(s.bad, 0);
			posix_trace_shutdown(trid);
		}
		printf("scribbled on before it existed: %d of 200 streams created\n", ok);
		T_END();
	}
	REQUIRE(waitpid(cp, &st, 0) == cp);
	if (WIFSIGNALED(st))
		fprintf(stderr, "the controller was killed by signal %d while creating streams for "
		        "a process that scribbles on them\n", WTERMSIG(st));
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	REQUIRE(write(q[0], "q", 1) == 1);
	REQUIRE(waitpid(sp, &st, 0) == sp);
	close(q[0]);
}

/* ------------------------------------- part 3: a clean child afterwards */
static void part3(void)
{
	int go[2], st, n = 0, other = 0, un;
	trace_id_t trid;
	REQUIRE(pipe(go) == 0);
	pid_t cp = fork();
	REQUIRE(cp >= 0);
	if (cp == 0) {
		alarm(60);
		close(go[1]);
		for (int i = 0; i < 1000 && get1(go[0]) == 'g'; i++)
			posix_trace_event(ev_id, &i, sizeof i);
		_exit(0);
	}
	REQUIRE(posix_trace_create(cp, NULL, &trid) == 0);
	REQUIRE(posix_trace_start(trid) == 0);
	for (int i = 0; i < 1000; i++)
		REQUIRE(write(go[1], "g", 1) == 1);
	close(go[1]);
	REQUIRE(waitpid(cp, &st, 0) == cp);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	do {
		struct posix_trace_event_info ev;
		int v;
		size_t len;
		REQUIRE(posix_trace_trygetnext_event(trid, &ev, &v, sizeof v, &len, &un) == 0);
		if (!un && ev.posix_event_id == ev_id && ev.posix_pid == cp && len == sizeof v && v == n)
			n++;
		else if (!un && ev.posix_event_id != POSIX_TRACE_START)
			other++;
	} while (!un);
	CHECK_EQ(n, 1000);
	CHECK_EQ(other, 0);
	CHECK_RC(posix_trace_shutdown(trid), 0);
	close(go[0]);
}

int main(void)
{
	T_BEGIN(60);
	signal(SIGPIPE, SIG_IGN);
	REQUIRE(posix_trace_eventid_open("hostile-remote", &ev_id) == 0);
	part1();
	part2();
	part3();
	T_END();
}

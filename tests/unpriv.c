/*
 * unpriv.c -- the privilege boundary (docs/security.md), as root.
 *
 * A child N drops to nobody (setgroups(0, NULL), setgid and setuid 65534).
 * N cannot trace this root process (EPERM), and cannot reach its control
 * segment: opening /proc/ROOT/fd/<POSIXTRACE_CTL> for reading or writing
 * and opening /proc/ROOT/fd fail with EACCES.  A stream this root process
 * makes for the nobody-owned N works: exactly the 1000 events N records.
 * Then N, still traced, scribbles on that stream's region of its control
 * memfd (random words, all-ones, chunk descriptors with huge commits and
 * ids, lying record lengths, names without NUL) for ~300 ms while it
 * records and root reads concurrently: every call returns, every event
 * root gets has an id below 1024 and a length within max-data-size (a
 * system event: 256 bytes), and shutdown works.
 */
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <trace.h>
#include "t.h"
#include "helpers.h"
#include "../src/shm/layout.h"

#define MAXD 64

static trace_event_id_t ev_id;

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
	return *s;
}

static void put(void *base, uint64_t off, uint64_t v)
{
	atomic_store_explicit((_Atomic uint64_t *)((char *)base + (off & ~7ull)), v,
	                      memory_order_relaxed);
}

/* N's checks of what it may not do; 0 if all hold, else which failed. */
static int cannot(pid_t root)
{
	trace_id_t trid;
	char path[64];
	const char *e = getenv("POSIXTRACE_CTL");
	if (posix_trace_create(root, NULL, &trid) != EPERM)
		return 11;
	snprintf(path, sizeof path, "/proc/%d/fd/%s", (int)root, e ? e : "3");
	if (open(path, O_RDWR) != -1 || errno != EACCES)
		return 12;
	if (open(path, O_RDONLY) != -1 || errno != EACCES)
		return 13;
	snprintf(path, sizeof path, "/proc/%d/fd", (int)root);
	if (opendir(path) != NULL || errno != EACCES)
		return 14;
	return 0;
}

/* N, scribbling on its stream while it records, for ~300 ms. */
static void scribble(void)
{
	const char *e = getenv("POSIXTRACE_CTL");
	int fd = e ? atoi(e) : -1;
	struct pt_ctl *c = mmap(NULL, PT_CTL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (c == MAP_FAILED)
		_exit(20);
	uint64_t off = 0, size = 0, seed = 12345;
	for (unsigned s = 0; s < PT_SLOTS && !size; s++)
		if (atomic_load(&c->slot[s].ticket) > PT_TICKET_BUSY)
			off = atomic_load(&c->slot[s].off), size = atomic_load(&c->slot[s].size);
	struct pt_hdr *h = size ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off)
	                        : MAP_FAILED;
	if (h == MAP_FAILED)
		_exit(21);
	uint64_t n = h->nchunks, csz = h->chunk_size, ck = h->chunks_off, nm = h->names_off;
	uint64_t data = h->data_off;
	unsigned char buf[MAXD];
	double end = t_now_s() + 0.3;
	for (unsigned long it = 0; t_now_s() < end; it++) {
		memset(buf, (int)it, sizeof buf);
		posix_trace_event(ev_id, buf, it % (MAXD + 1));
		uint64_t v = rnd(&seed), w = rnd(&seed);
		struct pt_chunk *d = (struct pt_chunk *)((char *)h + ck) + v % n;
		switch (w % 6) {
		case 0: put(h, v % size, w); break;
		case 1: put(h, v % size, ~0ull); break;
		case 2: atomic_store(&d->commit, (uint32_t)w | (uint32_t)csz); break;
		case 3: atomic_store(&d->ss, PT_SS(w % 64, PT_CK_SEALED)); break;
		case 4: put(h, data + (v % n) * csz + 8 * (w % 32), (uint64_t)(w >> 48 | 1024) << 48); break;
		default: {
			struct pt_name *x = (struct pt_name *)((char *)h + nm) + v % PT_NIDS;
			for (unsigned k = 0; k < PT_NAME_SZ; k += 8)
				put(x->name, k, 0x4141414141414141ull);
			atomic_store(&x->valid, 1u);
		}
		}
	}
}

static void nobody_main(pid_t root, int cfd, int rfd)
{
	char op;
	int n;
	alarm(60);
	int rc = 10;
	if (setgroups(0, NULL) == 0 && setgid(65534) == 0 && setuid(65534) == 0)
		rc = cannot(root);
	t_write_full(rfd, &rc, sizeof rc);
	while (t_read_full(cfd, &op, 1) == 0 && op != 'Q') {
		if (op == 'B')
			for (n = 0; n < 1000; n++)
				posix_trace_event(ev_id, &n, sizeof n);
		else
			scribble();
		t_write_full(rfd, &op, 1);
	}
	_exit(0);
}

int main(void)
{
	T_BEGIN(60);
	if (geteuid() != 0)
		T_SKIP("needs root");
	signal(SIGPIPE, SIG_IGN);
	REQUIRE(posix_trace_eventid_open("unpriv", &ev_id) == 0);
	int rc, st;
	char op;
	struct t_pipes pp;
	pid_t np = t_fork_piped(&pp);
	if (np == 0)
		nobody_main(getppid(), pp.cmd, pp.rep);
	REQUIRE(t_read_full(pp.rep, &rc, sizeof rc) == 0);
	if (rc == 10)
		T_SKIP("cannot switch to nobody (setgroups/setgid/setuid)");
	if (rc)
		fprintf(stderr, "nobody: check %d failed (10 setuid, 11 create(root) != EPERM, "
		        "12/13 open(/proc/ROOT/fd/CTL) != EACCES, 14 opendir != EACCES)\n", rc);
	CHECK_EQ(rc, 0);

	/* root traces nobody */
	trace_attr_t a;
	trace_id_t trid;
	REQUIRE(posix_trace_attr_init(&a) == 0);
	REQUIRE(posix_trace_attr_setmaxdatasize(&a, MAXD) == 0);
	REQUIRE(posix_trace_attr_setstreamsize(&a, 256 << 10) == 0);
	rc = posix_trace_create(np, &a, &trid);
	CHECK_RC(rc, 0);
	REQUIRE(rc == 0);
	CHECK_RC(posix_trace_start(trid), 0);
	t_write_full(pp.cmd, "B", 1);
	REQUIRE(t_read_full(pp.rep, &op, 1) == 0);
	int got = 0, other = 0, un;
	for (;;) {
		struct posix_trace_event_info ev;
		int v;
		size_t len;
		REQUIRE(posix_trace_trygetnext_event(trid, &ev, &v, sizeof v, &len, &un) == 0);
		if (un)
			break;
		if (ev.posix_event_id == ev_id && ev.posix_pid == np && len == sizeof v && v == got)
			got++;
		else if (ev.posix_event_id != POSIX_TRACE_START)
			other++;
	}
	CHECK_EQ(got, 1000);
	CHECK_EQ(other, 0);

	/* nobody scribbles on its stream; root reads */
	unsigned long calls = 0, events = 0, errors = 0, bad = 0;
	t_write_full(pp.cmd, "S", 1);
	for (;;) {
		struct pollfd p = { pp.rep, POLLIN, 0 };
		struct posix_trace_event_info ev;
		unsigned char buf[1024];
		size_t len = 0;
		int done = poll(&p, 1, 0) > 0;
		rc = posix_trace_trygetnext_event(trid, &ev, buf, sizeof buf, &len, &un);
		calls++;
		CHECK_RC(rc, 0);
		if (rc == 0 && !un) {
			events++;
			errors += ev.posix_event_id == POSIX_TRACE_ERROR;
			bad += ev.posix_event_id >= 1024 ||
			       ev.posix_truncation_status == POSIX_TRACE_TRUNCATED_READ ||
			       len > (ev.posix_event_id < PT_SYS_IDS ? 2 * sizeof(trace_event_set_t) : MAXD);
		}
		if (done && (rc || un))
			break;
	}
	REQUIRE(t_read_full(pp.rep, &op, 1) == 0);
	printf("nobody scribbling: %lu calls, %lu events, %lu POSIX_TRACE_ERROR\n", calls, events,
	       errors);
	CHECK_EQ(bad, 0);
	struct posix_trace_status_info si;
	CHECK_RC(posix_trace_get_status(trid, &si), 0);
	CHECK_RC(posix_trace_shutdown(trid), 0);
	t_write_full(pp.cmd, "Q", 1);
	REQUIRE(waitpid(np, &st, 0) == np);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	posix_trace_attr_destroy(&a);
	close(pp.cmd);
	close(pp.rep);
	T_END();
}

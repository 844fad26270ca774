/*
 * objmap.c -- the map of loaded code, in the library (issue 16):
 *   - a process's own stream gets its map at start: a BEGIN entry, then
 *     the program (path and the GNU build-id read from the file here) and
 *     libc; posix_trace_getnext_event() returns exactly the events, never
 *     the map;
 *   - the map outlives a LOOP stream wrapping many times and
 *     posix_trace_clear();
 *   - a traced process scribbling over the map area: bad entries are
 *     skipped, entries past the area are never read, a full area is
 *     counted (LOST) and reported;
 *   - a LOOP log that wraps many times keeps every entry (written again
 *     after each wrap), read back exactly.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <trace.h>
#include "t.h"
#undef PT_TLS /* <elf.h>'s; shm/shm.h has its own */
#include "../src/api/api.h"
#include "../src/log/log.h"

/* The GNU build-id of a 64-bit ELF file, read from the file. */
static unsigned file_build_id(const char *path, unsigned char *out)
{
	int fd = open(path, O_RDONLY);
	Elf64_Ehdr eh;
	unsigned n = 0;

	REQUIRE(fd >= 0);
	REQUIRE(pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh);
	for (unsigned i = 0; i < eh.e_phnum && !n; i++) {
		Elf64_Phdr ph;
		unsigned char buf[4096];
		REQUIRE(pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) ==
		        (ssize_t)sizeof ph);
		if (ph.p_type != PT_NOTE || ph.p_filesz > sizeof buf)
			continue;
		REQUIRE(pread(fd, buf, ph.p_filesz, (off_t)ph.p_offset) == (ssize_t)ph.p_filesz);
		for (size_t o = 0; o + 12 <= ph.p_filesz;) {
			Elf64_Nhdr nh;
			size_t al = ph.p_align == 8 ? 8 : 4;
			memcpy(&nh, buf + o, sizeof nh);
			size_t name = o + 12, desc = name + ((nh.n_namesz + al - 1) & ~(al - 1));
			if (desc + nh.n_descsz > ph.p_filesz)
				break;
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && !memcmp(buf + name, "GNU", 4)) {
				n = nh.n_descsz < 32 ? nh.n_descsz : 32;
				memcpy(out, buf + desc, n);
				break;
			}
			o = desc + ((nh.n_descsz + al - 1) & ~(al - 1));
		}
	}
	close(fd);
	return n;
}

static size_t objects(trace_id_t trid, struct pt_ext_obj *o, size_t cap)
{
	size_t n = 0, got;
	while (n < cap && pt_ext_objects(trid, n, o + n, cap - n, &got) == 0 && got)
		n += got;
	return n;
}

static struct pt_ext_obj objs[4096];
static void here(void) {}

/* The program and libc, after a BEGIN of this pid. */
static void check_own_map(const struct pt_ext_obj *o, size_t n)
{
	char exe[4096];
	unsigned char bid[32];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
	REQUIRE(k > 0);
	exe[k] = 0;
	unsigned blen = file_build_id(exe, bid);
	int begin = 0, prog = 0, libc = 0;
	for (size_t i = 0; i < n; i++) {
		if (o[i].pid != getpid())
			continue;
		if (o[i].kind == PT_EXT_OBJ_BEGIN)
			begin++;
		if (o[i].kind == PT_EXT_OBJ_ADD && begin && !strcmp(o[i].path, exe)) {
			prog++;
			CHECK(o[i].lo < o[i].hi && o[i].lo <= (uint64_t)(uintptr_t)here &&
			      (uint64_t)(uintptr_t)here < o[i].hi);
			CHECK(blen > 0 && o[i].bid_len == blen && !memcmp(o[i].bid, bid, blen));
		}
		if (o[i].kind == PT_EXT_OBJ_ADD && strstr(o[i].path, "/libc.so"))
			libc++;
	}
	CHECK(begin >= 1);
	CHECK(prog >= 1);
	CHECK(libc >= 1);
}

static void t_own_stream(void)
{
	trace_attr_t a;
	trace_id_t trid;
	trace_event_id_t ev;
	struct posix_trace_event_info info;
	char buf[64];
	size_t len;
	int none, nuser = 0, nother = 0;

	REQUIRE(posix_trace_attr_init(&a) == 0);
	REQUIRE(posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_LOOP) == 0);
	REQUIRE(posix_trace_attr_setstreamsize(&a, 65536) == 0);
	REQUIRE(posix_trace_create(0, &a, &trid) == 0);
	REQUIRE(posix_trace_eventid_open("objmap_ev", &ev) == 0);
	REQUIRE(posix_trace_start(trid) == 0);
	for (int i = 0; i < 10; i++)
		posix_trace_event(ev, &i, sizeof i);
	size_t n = objects(trid, objs, 4096);
	check_own_map(objs, n);
	/* the getnext functions give the events, and nothing of the map */
	for (;;) {
		CHECK_RC(posix_trace_trygetnext_event(trid, &info, buf, sizeof buf, &len, &none), 0);
		if (none)
			break;
		if (info.posix_event_id == ev)
			nuser++;
		else if (info.posix_event_id != POSIX_TRACE_START)
			nother++;
	}
	CHECK_EQ(nuser, 10);
	CHECK_EQ(nother, 0);

	/* many laps of LOOP, then clear: the map stays */
	char big[200] = { 0 };
	for (int i = 0; i < 20000; i++)
		posix_trace_event(ev, big, sizeof big);
	struct posix_trace_status_info st;
	CHECK_RC(posix_trace_get_status(trid, &st), 0);
	CHECK_EQ(st.posix_stream_overrun_status, POSIX_TRACE_OVERRUN);
	n = objects(trid, objs, 4096);
	check_own_map(objs, n);
	CHECK_RC(posix_trace_clear(trid), 0);
	n = objects(trid, objs, 4096);
	check_own_map(objs, n);
	CHECK_RC(posix_trace_shutdown(trid), 0);
	posix_trace_attr_destroy(&a);
}

/* The traced process writes garbage over the map area. */
static void t_hostile(void)
{
	trace_attr_t a;
	trace_id_t trid;
	struct pt_trid *t;

	REQUIRE(posix_trace_attr_init(&a) == 0);
	REQUIRE(posix_trace_create(0, &a, &trid) == 0);
	REQUIRE(posix_trace_start(trid) == 0);
	REQUIRE(pt_trid_lock(trid, &t) == 0);
	struct pt_obj *area = t->s.view.objs;
	struct pt_hdr *h = t->s.hdr;
	uint32_t used = atomic_load(&h->obj_next);
	pt_trid_unlock(t);
	REQUIRE(used >= 3 && used < 200);
	size_t good = objects(trid, objs, 4096);
	/* and this process's identity: its parent, its command line */
	struct pt_ext_proc pr[4];
	size_t np = 0;
	REQUIRE(pt_ext_procs(trid, 0, pr, 4, &np) == 0);
	CHECK_EQ(np, 1);
	CHECK(np == 1 && pr[0].pid == getpid() && pr[0].ppid == getppid() &&
	      strstr(pr[0].cmdline, "objmap") != NULL && !pr[0].cut);
	CHECK_EQ(good + np, used); /* (nothing lost yet: no LOST entry) */

	/* bad entries, each published */
	uint32_t i = used;
	struct pt_obj bad;
	memset(&bad, 0, sizeof bad);
	bad.pid = getpid(), bad.kind = PT_OBJ_ADD, bad.lo = 4096, bad.hi = 8192;
	memset(bad.path, 'x', sizeof bad.path); /* no NUL */
	struct pt_obj b[6];
	for (int k = 0; k < 6; k++)
		b[k] = bad;
	b[1].kind = 9;                 /* no such kind */
	b[2].bid_len = 200;            /* longer than kept */
	b[3].lo = b[3].hi = 8192;      /* an empty range */
	b[4].pid = -5;                 /* no such pid */
	b[5].flags = 0x80;             /* unknown flag */
	/* b[0]: the path is cut at its last byte, and is then sound */
	for (int k = 0; k < 6; k++, i++) {
		memcpy((char *)&area[i] + 8, (char *)&b[k] + 8, sizeof b[k] - 8);
		atomic_store_explicit(&area[i].ready, PT_OBJ_READY, memory_order_release);
	}
	atomic_store(&h->obj_next, i);
	size_t n = objects(trid, objs, 4096);
	CHECK_EQ(n, good + 1);
	CHECK(n == good + 1 && objs[good].lo == 4096 && strlen(objs[good].path) == PT_OBJ_PATH - 1);
	/* a count far past the area, a ready word past the end: not read */
	atomic_store(&h->obj_next, UINT32_MAX);
	atomic_store(&h->obj_lost, 7);
	n = objects(trid, objs, 4096);
	CHECK_EQ(n, good + 2);
	CHECK(n == good + 2 && objs[n - 1].kind == PT_EXT_OBJ_LOST && objs[n - 1].lo == 7);
	/* the area is full: a process writing more counts it */
	uint64_t lost = atomic_load(&h->obj_lost);
	REQUIRE(pt_trid_lock(trid, &t) == 0);
	pt_objmap_dump(&t->s.view, getpid(), 0);
	pt_trid_unlock(t);
	CHECK(atomic_load(&h->obj_lost) > lost);
	CHECK_RC(posix_trace_shutdown(trid), 0);
	posix_trace_attr_destroy(&a);
}

/* A LOOP log that wraps: every entry kept, read back the same. */
static void t_log_loop(void)
{
	char path[] = "/tmp/pt-objmap-XXXXXX";
	int fd = mkstemp(path);
	struct pt_logw w;
	struct pt_logr r;
	struct pt_attr_img a;
	struct pt_ext_obj in[40];

	REQUIRE(fd >= 0);
	unlink(path);
	memset(&a, 0, sizeof a);
	strcpy(a.name, "objmap");
	a.stream_size = 1 << 20, a.max_data = 64, a.log_size = 64 << 10;
	a.stream_policy = POSIX_TRACE_FLUSH, a.log_policy = POSIX_TRACE_LOOP, a.has_log = 1;
	struct pt_logw_opt o = { .block_size = 8192, .nonce = 42 };
	REQUIRE(pt_logw_init_opt(&w, fd, &a, POSIX_TRACE_LOOP, 64 << 10, &o) == 0);
	for (int i = 0; i < 40; i++) {
		memset(&in[i], 0, sizeof in[i]);
		in[i].ts = 1700000000000000000ull + (uint64_t)i;
		in[i].pid = 100 + i % 3;
		in[i].kind = i % 10 == 0 ? PT_EXT_OBJ_BEGIN : PT_EXT_OBJ_ADD;
		in[i].lo = 0x10000 * (uint64_t)(i + 1), in[i].hi = in[i].lo + 0x8000;
		in[i].base = in[i].lo - 0x1000;
		in[i].bid_len = (uint8_t)(i % 21);
		for (int k = 0; k < in[i].bid_len; k++)
			in[i].bid[k] = (unsigned char)(i * 7 + k);
		snprintf(in[i].path, sizeof in[i].path, "/usr/lib/objmap-test/lib%d.so", i);
		CHECK_RC(pt_logw_obj(&w, &in[i]), 0);
	}
	unsigned char d[64] = { 1 };
	for (uint64_t i = 0; i < 20000; i++) /* about 20 laps */
		CHECK_RC(pt_logw_event(&w, 1700000000000001000ull + i, 100, 1, 0x1234, 20, 0, d,
		                       sizeof d), 0);
	CHECK(w.lost > 10000);
	CHECK_RC(pt_logw_finish(&w, &(struct posix_trace_status_info){ 0 }), 0);
	pt_logw_free(&w);
	REQUIRE(pt_logr_open(&r, fd) == 0);
	CHECK_EQ(r.version, PT_LOG_VERSION);
	CHECK_EQ(r.objs.n, 40u);
	int same = 0;
	for (size_t i = 0; i < r.objs.n; i++) {
		struct pt_ext_obj kept;
		pt_objstore_get(&r.objs, i, &kept);
		for (int k = 0; k < 40; k++)
			same += !memcmp(&kept, &in[k], sizeof in[k]);
	}
	CHECK_EQ(same, 40);
	/* and none of it comes out as an event */
	struct posix_trace_event_info ev;
	size_t len;
	int none, nev = 0, bad = 0;
	while (pt_logr_next(&r, &ev, d, sizeof d, &len, &none) == 0 && !none) {
		nev++;
		/* (it wrapped: the OVERFLOW/RESUME pair that says so comes first) */
		bad += nev > 2 ? ev.posix_event_id != 20
		               : ev.posix_event_id != (nev == 1 ? POSIX_TRACE_OVERFLOW
		                                                : POSIX_TRACE_RESUME);
	}
	CHECK(nev > 100);
	CHECK_EQ(bad, 0);
	pt_logr_close(&r);
	close(fd);
}

int main(void)
{
	T_BEGIN(60);
	t_own_stream();
	t_hostile();
	t_log_loop();
	T_END();
}

/*
 * sec_losses.c -- a traced process that writes over its stream's count of
 * lost events cannot make a reader report an impossible number
 * (docs/security.md, "What a hostile traced process can do").
 *
 *  1. This process writes 2^62 into the lost counter of a stream of its
 *     own: pt_ext_losses() gives at most one event a nanosecond on every
 *     CPU since the stream was created, with implausible set.  An honest
 *     stream (nothing lost) gives 0 and implausible clear.
 *  2. `posixtrace record` of this program doing the same to the stream it
 *     is recorded into: the log's count, as `info` reads it, is below
 *     2^62 and is called implausible (and record exits 3: the log says
 *     events were lost).
 */
#include <stdatomic.h>
#include <sys/mman.h>
#include <time.h>
#include <trace.h>
#include "t.h"
#include "../src/ext.h"
#include "../src/shm/layout.h"

#ifndef PT_BUILD_DIR
#define PT_BUILD_DIR "build"
#endif

#define MARK "--forge"
#define FORGED (1ull << 62)

/* Every stream segment in this process's control memfd: its counter set. */
static int forge_all(void)
{
	const char *e = getenv("POSIXTRACE_CTL");
	int fd = e ? atoi(e) : -1, n = 0;
	struct pt_ctl *c = fd < 0 ? MAP_FAILED
	                          : mmap(NULL, PT_CTL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (c == MAP_FAILED)
		return 0;
	for (unsigned s = 0; s < PT_SLOTS; s++) {
		uint64_t off = atomic_load(&c->slot[s].off), size = atomic_load(&c->slot[s].size);
		if (atomic_load(&c->slot[s].ticket) <= PT_TICKET_BUSY || off < PT_CTL_SIZE || !size)
			continue;
		struct pt_hdr *h = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
		if (h == MAP_FAILED)
			continue;
		atomic_store(&h->lost, FORGED);
		munmap(h, size);
		n++;
	}
	munmap(c, PT_CTL_SIZE);
	return n;
}

int main(int argc, char **argv)
{
	trace_event_id_t id;

	if (argc > 1 && !strcmp(argv[1], MARK)) { /* recorded by posixtrace record */
		posix_trace_eventid_open("forge", &id);
		posix_trace_event(id, "a", 1);
		int n = forge_all();
		posix_trace_event(id, "b", 1);
		return n == 1 ? 0 : 3;
	}
	T_BEGIN(60);
	trace_id_t honest, forged;
	struct pt_ext_losses x;
	REQUIRE(posix_trace_create(0, NULL, &honest) == 0);
	REQUIRE(posix_trace_start(honest) == 0);
	REQUIRE(posix_trace_create(0, NULL, &forged) == 0);
	REQUIRE(posix_trace_start(forged) == 0);
	REQUIRE(posix_trace_eventid_open("forge", &id) == 0);
	posix_trace_event(id, "x", 1);
	/* the honest count first; then both counters are forged */
	REQUIRE(pt_ext_losses(honest, &x) == 0);
	CHECK_EQ(x.total, 0);
	CHECK_EQ(x.implausible, 0);
	REQUIRE(forge_all() == 2);
	REQUIRE(posix_trace_shutdown(honest) == 0);
	struct timespec t0;
	clock_gettime(CLOCK_REALTIME, &t0);
	REQUIRE(pt_ext_losses(forged, &x) == 0);
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	CHECK(x.total < FORGED);
	CHECK(x.total <= 60ull * 1000000000ull * (uint64_t)(cpus > 0 ? cpus : 1)); /* the alarm bounds the age */
	CHECK_EQ(x.implausible, 1);
	REQUIRE(posix_trace_shutdown(forged) == 0);

	/* 2. through the command */
	if (access(PT_BUILD_DIR "/posixtrace", X_OK) != 0) {
		printf("SKIP (part 2): the posixtrace command is not built\n");
		T_END();
	}
	char dir[] = "/tmp/pt-losses-XXXXXX", log[128], self[4096] = { 0 }, cmd[4400];
	REQUIRE(mkdtemp(dir) != NULL);
	snprintf(log, sizeof log, "%s/f.ptlog", dir);
	REQUIRE(readlink("/proc/self/exe", self, sizeof self - 1) > 0);
	snprintf(cmd, sizeof cmd, "%s record -o %s -- %s %s 2>/dev/null", PT_BUILD_DIR "/posixtrace",
	         log, self, MARK);
	/* (the log says events were lost, however implausibly: exit 3) */
	CHECK_EQ(system(cmd), 3 << 8);
	snprintf(cmd, sizeof cmd, "%s info %s > %s/info.out", PT_BUILD_DIR "/posixtrace", log, dir);
	CHECK_EQ(system(cmd), 0);
	char path[160], buf[8192] = "";
	snprintf(path, sizeof path, "%s/info.out", dir);
	FILE *f = fopen(path, "r");
	REQUIRE(f != NULL);
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = 0;
	fclose(f);
	CHECK(strstr(buf, "implausibly many") != NULL);
	CHECK(strstr(buf, "4611686018427387904") == NULL); /* 2^62 itself is not shown */
	if (!strstr(buf, "implausibly many"))
		fprintf(stderr, "info:\n%s\n", buf);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CHECK_EQ(system(cmd), 0);
	T_END();
}

/*
 * logspill.c -- the log writer's memory is bounded by the writers alive,
 * not by every one the log ever had (issue 54): a forking service made a
 * summary entry per child (and kept a copy of each map entry), 170 bytes
 * a child that the recorder held until the end.  Writers whose process is
 * gone are retired once a checkpoint holds their final counts, map
 * entries once a checkpoint holds them, and the summary at the end reads
 * them back from those checkpoints (src/log/logsum.c, "spilling").
 *
 * A log written as a forking service's flusher writes it: 5 000
 * "children", one after another, each a process of its own (pid
 * 10000 + i) recording 10 events of 100 bytes and adding two map
 * entries, with a service thread's event between them; the writer's
 * question "is this process gone, with all its events given?"
 * (pid_final) answered yes for the children 20 and more behind.  In both
 * byte orders, through a descriptor that can read (O_RDWR) and one that
 * cannot (O_WRONLY: read back through /proc/self/fd).  Checked: the
 * writer's tables (its writers, the map entries it keeps) never exceed
 * 1 100 entries (on main: 5 002 and 10 002); the checkpoints fit (one at
 * least every 256 new writers); the summary read from the end of the
 * file lists every writer with its exact count, first and last times and
 * every map entry in order; the full reader returns every event and no
 * error; a copy of the log without its end, read as a log being written
 * (from its checkpoints), counts what it holds exactly.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include "t.h"
#include "logfmt_util.h"
#include "../src/ext.h"

#define KIDS    5000
#define EVENTS  10
#define BEHIND  20
#define SERVICE 77

static int32_t g_final_below;
static int g_asked;

static int final(void *ctx, int32_t pid)
{
	(void)ctx;
	g_asked++;
	return pid >= 10000 && pid < g_final_below;
}

static uint64_t ts_of(int kid, int k)
{
	return T0 + (uint64_t)kid * 1000000 + (uint64_t)k * 1000;
}

static void one(int swap, int wronly)
{
	char path[] = "/tmp/pt-logspill-XXXXXX";
	int fd = mkstemp(path);
	REQUIRE(fd >= 0);
	if (wronly) {
		close(fd);
		REQUIRE((fd = open(path, O_WRONLY)) >= 0);
	}
	struct pt_attr_img attr;
	memset(&attr, 0, sizeof attr);
	attr.max_data = 256;
	struct pt_logw_opt opt = { .swap = swap };
	struct pt_logw w;
	REQUIRE(pt_logw_init_opt(&w, fd, &attr, POSIX_TRACE_APPEND, 0, &opt) == 0);
	w.pid_final = final;
	CHECK_EQ(pt_logw_name(&w, 20, "kid-ev"), 0);
	CHECK_EQ(pt_logw_name(&w, 21, "svc-ev"), 0);
	uint32_t max_wr = 0, max_objs = 0;
	unsigned char pl[100];
	memset(pl, 0x3c, sizeof pl);
	for (int i = 0; i < KIDS; i++) {
		int32_t pid = 10000 + i;
		struct pt_ext_obj o;
		memset(&o, 0, sizeof o);
		o.kind = PT_EXT_OBJ_BEGIN, o.pid = pid, o.ts = ts_of(i, 0);
		CHECK_RC(pt_logw_obj(&w, &o), 0);
		o.kind = PT_EXT_OBJ_ADD, o.lo = 0x400000 + (uint64_t)i * 4096, o.hi = o.lo + 4096;
		snprintf(o.path, sizeof o.path, "/kid/%d", i);
		CHECK_RC(pt_logw_obj(&w, &o), 0);
		for (int k = 0; k < EVENTS; k++)
			CHECK_RC(pt_logw_event(&w, ts_of(i, k), pid, 0x7000, 0x401000, 20, 0, pl,
			                       sizeof pl), 0);
		CHECK_RC(pt_logw_event(&w, ts_of(i, EVENTS), SERVICE, 0x1000, 0x402000, 21, 0, &i,
		                       sizeof i), 0);
		g_final_below = pid - BEHIND;
		max_wr = w.sum->nwr > max_wr ? w.sum->nwr : max_wr;
		max_objs = w.nobjs - w.objs_base > max_objs ? w.nobjs - w.objs_base : max_objs;
	}
	printf("logspill: swap %d, %s: at most %u writers and %u map entries kept, %u checkpoints, "
	       "%llu writers retired\n", swap, wronly ? "write-only" : "read-write", max_wr, max_objs,
	       w.sum->ckpts, (unsigned long long)w.sum->nret);
	CHECK(max_wr <= 1100);
	CHECK(max_objs <= 1100);
	CHECK(w.sum->ckpts >= KIDS / PT_LOG_CKPT_WRITERS);
	CHECK(g_asked > 0);
	/* a copy without its end: the log as it is being written */
	struct stat st;
	REQUIRE(fstat(fd, &st) == 0);
	uint64_t cut = (uint64_t)st.st_size;
	CHECK_RC(pt_logw_finish(&w, NULL), 0);
	pt_logw_free(&w);
	close(fd);

	int rfd = open(path, O_RDONLY);
	REQUIRE(rfd >= 0);
	struct pt_log_summary s;
	CHECK_RC(pt_log_summary_read(rfd, &s), 0);
	CHECK_EQ(s.events, (uint64_t)KIDS * (EVENTS + 1));
	CHECK_EQ(s.nwr, KIDS + 1);
	int bad = 0, seen_svc = 0;
	static unsigned char seen[KIDS];
	memset(seen, 0, sizeof seen);
	for (uint32_t k = 0; k < s.nwr; k++) {
		const struct pt_logw_sumw *e = &s.wr[k];
		if (e->pid == SERVICE) {
			seen_svc++;
			bad += e->thread != 0x1000 || e->count != KIDS || e->first != ts_of(0, EVENTS) ||
			       e->last != ts_of(KIDS - 1, EVENTS);
			continue;
		}
		int i = e->pid - 10000;
		if (i < 0 || i >= KIDS || seen[i]++ || e->thread != 0x7000 || e->count != EVENTS ||
		    e->first != ts_of(i, 0) || e->last != ts_of(i, EVENTS - 1)) {
			if (bad++ < 3)
				fprintf(stderr, "writer %u: pid %d count %llu\n", k, e->pid,
				        (unsigned long long)e->count);
		}
	}
	CHECK_EQ(seen_svc, 1);
	CHECK_EQ(bad, 0);
	CHECK_EQ(s.objs.n, 2 * KIDS);
	bad = 0;
	for (uint32_t k = 0; k < s.objs.n && k < 2 * KIDS; k++) {
		struct pt_ext_obj o;
		pt_objstore_get(&s.objs, k, &o);
		char want[32];
		snprintf(want, sizeof want, "/kid/%u", k / 2);
		bad += o.pid != 10000 + (int32_t)(k / 2) ||
		       (k % 2 ? strcmp(o.path, want) != 0 : o.kind != PT_EXT_OBJ_BEGIN);
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(s.count[20], (uint64_t)KIDS * EVENTS);
	pt_log_summary_free(&s);

	/* every event, in order, no error */
	struct pt_logr r;
	REQUIRE(pt_logr_open(&r, rfd) == 0);
	uint64_t n = 0, errs = 0;
	for (;;) {
		struct posix_trace_event_info ev;
		unsigned char buf[256];
		size_t len;
		int un = 0;
		REQUIRE(pt_logr_next(&r, &ev, buf, sizeof buf, &len, &un) == 0);
		if (un)
			break;
		n++;
		errs += ev.posix_event_id == POSIX_TRACE_ERROR;
	}
	CHECK_EQ(n, (uint64_t)KIDS * (EVENTS + 1));
	CHECK_EQ(errs, 0);
	pt_logr_close(&r);

	/* cut before its summary: read as a log being written */
	char cpath[] = "/tmp/pt-logspill-cut-XXXXXX";
	int cfd = mkstemp(cpath);
	REQUIRE(cfd >= 0);
	static unsigned char big[1 << 20];
	for (uint64_t off = 0; off < cut;) {
		size_t want = cut - off < sizeof big ? (size_t)(cut - off) : sizeof big;
		REQUIRE(pread(rfd, big, want, (off_t)off) == (ssize_t)want);
		REQUIRE(write(cfd, big, want) == (ssize_t)want);
		off += want;
	}
	trace_id_t trid;
	REQUIRE(lseek(cfd, 0, SEEK_SET) == 0);
	REQUIRE(posix_trace_open(cfd, &trid) == 0);
	struct pt_ext_summary *c = NULL;
	uint64_t damaged = 0;
	CHECK_RC(pt_ext_log_census(trid, &c, &damaged), 0);
	if (c) {
		uint64_t sum = 0;
		for (size_t k = 0; k < c->nwriters; k++)
			sum += c->writers[k].count;
		CHECK_EQ(sum, c->events);
		CHECK(c->events > 0 && c->events <= (uint64_t)KIDS * (EVENTS + 1));
		CHECK_EQ(c->count[20] + c->count[21], c->events);
		pt_ext_summary_free(c);
	}
	CHECK_EQ(damaged, 0);
	posix_trace_close(trid);
	close(cfd);
	unlink(cpath);
	close(rfd);
	unlink(path);
}

int main(void)
{
	T_BEGIN(60);
	one(0, 0);
	one(1, 1);
	T_END();
}

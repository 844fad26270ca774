/*
 * logckpt.c -- checkpoints (log format 8, issue 54 items 4 and 5): an
 * APPEND log's writer writes, every so many bytes of blocks, what the log
 * holds so far (the counts, names, writers and map entries changed since
 * the last checkpoint, and the block index since it), so that
 *
 *  1. the writer's memory does not grow with the log: the block index it
 *     keeps is the entries since the last checkpoint (a counter the
 *     writer keeps, sampled all along: bounded, where a format-7 writer's
 *     grows by a block entry a block);
 *  2. a finished log opens through its summary's index and the
 *     checkpoints' (the chain), reading no block, and reads the same
 *     events as a scan;
 *  3. a log still being written (no summary yet; here, copies of the file
 *     taken as it grows, one cut inside a block) opens from its last
 *     checkpoint: the blocks before it are not read (the bytes read at
 *     open are a small part of the file), and what it gives is what a
 *     scan of every block gives: the census (events, per type, per
 *     writer), the names, the map of loaded code, and every event with
 *     its payload, in the same order;
 *  4. a damaged checkpoint is not used: the log is scanned, as before.
 *
 * On the format-7 writer, 1 fails (its index grows with the log) and 3
 * reads every block (no checkpoint to start from).
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include "t.h"
#include "logfmt_util.h"
#include "../src/ext.h"

#define BLOCK 8192u
#define CKPT  (64u << 10)
#define NEV   60000u

static unsigned char pay[64];

static void put(struct pt_logw *w, uint64_t i)
{
	int32_t pid = 2000 + (int32_t)(i / 4000); /* new processes as it goes */
	uint64_t thr = 0x7f0000001000ull + (i % 7) * 0x1000;
	uint32_t len = (uint32_t)(i % 13);

	for (uint32_t j = 0; j < len; j++)
		pay[j] = (unsigned char)(i + j);
	if (i && i % 5000 == 0) { /* a loss told */
		CHECK_RC(pt_logw_event(w, T0 + i * 1000 - 500, 0, 0, 0, POSIX_TRACE_OVERFLOW, 0,
		                       NULL, 0), 0);
		CHECK_RC(pt_logw_event_lost(w, T0 + i * 1000 - 100, 0, 0, 0, POSIX_TRACE_RESUME,
		                            i / 5000 * 3), 0);
	}
	if (i % 997 == 0) { /* a name and a map entry now and then */
		char nm[32];
		struct pt_ext_obj o;
		snprintf(nm, sizeof nm, "type-%u", (unsigned)(17 + i / 997 % 40));
		CHECK_RC(pt_logw_name(w, 17 + (unsigned)(i / 997 % 40), nm), 0);
		memset(&o, 0, sizeof o);
		o.kind = PT_EXT_OBJ_ADD, o.pid = pid, o.ts = T0 + i * 1000;
		o.lo = 0x400000 + i * 0x1000, o.hi = o.lo + 0x800, o.base = o.lo;
		snprintf(o.path, sizeof o.path, "/usr/lib/lib-%llu.so", (unsigned long long)i);
		CHECK_RC(pt_logw_obj(w, &o), 0);
	}
	CHECK_RC(pt_logw_event(w, T0 + i * 1000, pid, thr, 0x401000 + (i % 3) * 16,
	                       17 + (unsigned)(i % 40), 0, pay, len), 0);
}

/* Writes NEV events to fd (format version: 0, the current), copying the
 * file as it was after each of cuts[] events into cut_fd[] (synced: as a
 * reader of a log being written finds it); *max_idx: the most block
 * entries the writer held at once. */
static uint32_t g_block = BLOCK, g_ckpt = CKPT;
static uint64_t g_nev = NEV;
static int g_after_ckpt; /* a cut at the first checkpoint from cuts[k] on */

static void write_log(int fd, unsigned version, const uint64_t *cuts, int *cut_fd, size_t ncut,
                      uint64_t *max_idx, uint32_t *ckpts)
{
	struct pt_attr_img a = mkattr(64);
	struct pt_logw_opt o = { .block_size = g_block, .version = version, .ckpt_bytes = g_ckpt };
	struct pt_logw w;
	size_t k = 0;

	REQUIRE(pt_logw_init_opt(&w, fd, &a, POSIX_TRACE_APPEND, 0, &o) == 0);
	*max_idx = 0;
	for (uint64_t i = 0; i < g_nev; i++) {
		uint32_t before = w.sum ? w.sum->ckpts : 0;
		put(&w, i);
		if (w.sum && w.sum->nidx > *max_idx)
			*max_idx = w.sum->nidx;
		if (k < ncut && (g_after_ckpt ? i + 1 >= cuts[k] && w.sum->ckpts != before
		                              : i + 1 == cuts[k])) {
			CHECK_RC(pt_logw_sync(&w), 0);
			cut_fd[k] = mfd();
			copy_fd(fd, cut_fd[k], fsize(fd));
			k++;
		}
	}
	*ckpts = w.sum ? w.sum->ckpts : 0;
	struct posix_trace_status_info st = { 0 };
	CHECK_RC(pt_logw_finish(&w, &st), 0);
	pt_logw_free(&w);
}

/* Two readers of the same log read the same events, names, map and
 * census. */
static void same(int fd, int flags_a, const char *what, uint64_t *bytes_a, uint64_t *bytes_b)
{
	static unsigned char ba[TRACE_DATA_MAX + 1], bb[TRACE_DATA_MAX + 1];
	struct pt_logr a, b;
	uint64_t n = 0, differ = 0;

	REQUIRE(pt_logr_open_opt(&a, fd, flags_a) == 0);
	REQUIRE(pt_logr_open_opt(&b, fd, PT_LOGR_SCAN) == 0);
	*bytes_a = a.bytes_read, *bytes_b = b.bytes_read;
	/* the census (a log without summary), the names, the map */
	const struct pt_logw_sum *ca, *cb;
	uint64_t da = 0, db = 0;
	int ra = pt_logr_census(&a, &ca, &da), rb = pt_logr_census(&b, &cb, &db);
	if (!a.indexed) {
		CHECK_EQ(ra, rb);
		if (!ra && !rb) {
			CHECK_EQ(ca->events, cb->events);
			CHECK_EQ(ca->gaps, cb->gaps);
			CHECK_EQ(ca->last_lost, cb->last_lost);
			CHECK_EQ(ca->first, cb->first);
			CHECK_EQ(ca->last, cb->last);
			CHECK(!memcmp(ca->count, cb->count, sizeof ca->count));
			CHECK_EQ(ca->nwr, cb->nwr);
			for (uint32_t i = 0; i < ca->nwr && i < cb->nwr; i++)
				CHECK(ca->wr[i].pid == cb->wr[i].pid && ca->wr[i].thread == cb->wr[i].thread &&
				      ca->wr[i].count == cb->wr[i].count && ca->wr[i].first == cb->wr[i].first &&
				      ca->wr[i].last == cb->wr[i].last);
			CHECK_EQ(da, db);
		}
	}
	for (unsigned id = 0; id < PT_NIDS; id++) {
		const char *x = pt_logr_name(&a, id), *y = pt_logr_name(&b, id);
		CHECK((!x && !y) || (x && y && !strcmp(x, y)));
	}
	CHECK_EQ(a.objs.n, b.objs.n);
	for (;;) {
		struct posix_trace_event_info ea, eb;
		size_t la = 0, lb = 0;
		int ua = 0, ub = 0;
		CHECK_RC(pt_logr_next(&a, &ea, ba, sizeof ba, &la, &ua), 0);
		CHECK_RC(pt_logr_next(&b, &eb, bb, sizeof bb, &lb, &ub), 0);
		if (ua || ub) {
			CHECK_EQ(ua, ub);
			break;
		}
		n++;
		if ((ea.posix_event_id != eb.posix_event_id || ea.posix_pid != eb.posix_pid ||
		     ea.posix_thread_id != eb.posix_thread_id ||
		     ea.posix_timestamp.tv_sec != eb.posix_timestamp.tv_sec ||
		     ea.posix_timestamp.tv_nsec != eb.posix_timestamp.tv_nsec ||
		     ea.posix_prog_address != eb.posix_prog_address || la != lb ||
		     memcmp(ba, bb, la < sizeof ba ? la : sizeof ba)) && differ++ == 0)
			fprintf(stderr, "  (%s: event %llu differs)\n", what, (unsigned long long)n);
	}
	CHECK_EQ(differ, 0u);
	CHECK(n > 0);
	pt_logr_close(&a);
	pt_logr_close(&b);
}

int main(void)
{
	static const uint64_t cuts[] = { 20000, 41234, 59000 };
	int cut[3], cut7[3];
	uint64_t max8, max7, ra, rb;
	uint32_t ck8, ck7;

	T_BEGIN(120);
	int fd = mfd(), fd7 = mfd();
	write_log(fd, 0, cuts, cut, 3, &max8, &ck8);
	write_log(fd7, 7, cuts, cut7, 3, &max7, &ck7);
	printf("block entries held by the writer: at most %llu (format 8, %u checkpoints), "
	       "%llu (format 7)\n", (unsigned long long)max8, ck8, (unsigned long long)max7);
	/* 1: bounded by the checkpoints, not by the log */
	CHECK(ck8 >= 10);
	CHECK(max8 <= PT_LOG_CKPT_BLOCKS + 1);
	CHECK(max8 * 8 < max7);

	/* 2: finished, through the index and the chain: no block read */
	same(fd, 0, "finished", &ra, &rb);
	struct pt_logr r;
	REQUIRE(pt_logr_open(&r, fd) == 0);
	CHECK_EQ(r.indexed, 1);
	CHECK_EQ((unsigned)r.version, PT_LOG_VERSION);
	printf("finished: %llu bytes read at open through the index, of %llu\n",
	       (unsigned long long)r.bytes_read, (unsigned long long)fsize(fd));
	CHECK(r.bytes_read < fsize(fd) / 10);
	pt_logr_close(&r);

	/* 3: being written (and one cut inside a block) */
	for (int k = 0; k < 3; k++) {
		char what[48];
		if (k == 2) /* the last copy cut inside its last block */
			REQUIRE(ftruncate(cut[k], (off_t)(fsize(cut[k]) - 100)) == 0);
		snprintf(what, sizeof what, "being written, cut %d", k);
		same(cut[k], 0, what, &ra, &rb);
		printf("%s: %llu bytes read at open from its checkpoints, %llu by a scan\n", what,
		       (unsigned long long)ra, (unsigned long long)rb);
		CHECK(ra * 4 < rb);
		/* format 7: nothing to start from but the first block */
		same(cut7[k], 0, "format 7 being written", &ra, &rb);
		CHECK_EQ(ra, rb);
	}

	/* 4: the last checkpoint damaged: scanned as before */
	{
		unsigned char h[PT_LOG_BLK];
		uint64_t pos = PT_LOG_FIRST, last = 0;
		REQUIRE(pt_logr_open_opt(&r, cut[1], PT_LOGR_SCAN) == 0);
		while (pos + PT_LOG_BLK <= fsize(cut[1])) {
			struct pt_log_bhdr b;
			REQUIRE(pread(cut[1], h, sizeof h, (off_t)pos) == (ssize_t)sizeof h);
			if (!pt_logr_bhdr(&r, h, &b))
				break;
			if (b.type == PT_LOG_BT_CKPT)
				last = pos;
			pos += PT_LOG_ALIGN8(b.len);
		}
		pt_logr_close(&r);
		REQUIRE(last);
		unsigned char x;
		REQUIRE(pread(cut[1], &x, 1, (off_t)(last + PT_LOG_BLK + 9)) == 1);
		x ^= 0x40;
		REQUIRE(pwrite(cut[1], &x, 1, (off_t)(last + PT_LOG_BLK + 9)) == 1);
		same(cut[1], 0, "a damaged checkpoint", &ra, &rb);
		CHECK(ra >= rb); /* (every block read) */
	}
	for (int k = 0; k < 3; k++)
		close(cut[k]), close(cut7[k]);
	close(fd);
	close(fd7);

	/* small blocks, a checkpoint after nearly every one, the last block
	 * (synced) smaller than those before: a block before the checkpoint is
	 * read into a buffer the scan of the tail did not grow (fuzz/corpus/
	 * ckpt_unfinished.log read as damage once) */
	static const uint64_t small_cuts[] = { 2000 };
	int sc[1];
	g_block = 4096, g_ckpt = 4096, g_nev = 3000, g_after_ckpt = 1;
	fd = mfd();
	write_log(fd, 0, small_cuts, sc, 1, &max8, &ck8);
	CHECK(ck8 >= 5);
	same(fd, 0, "small blocks, finished", &ra, &rb);
	same(sc[0], 0, "small blocks, being written", &ra, &rb);
	printf("small blocks (%u checkpoints), being written: %llu bytes read at open, %llu by a "
	       "scan\n", ck8, (unsigned long long)ra, (unsigned long long)rb);
	CHECK(ra < rb);
	close(sc[0]);
	close(fd);

	/* the fuzzing seed that found it: its blocks before the last
	 * checkpoint larger than every block after it */
	char dir[4096], path[4200];
	t_source_dir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/fuzz/corpus/ckpt_unfinished.log", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	REQUIRE(fd >= 0);
	same(fd, 0, "fuzz/corpus/ckpt_unfinished.log", &ra, &rb);
	CHECK(ra < rb);
	close(fd);
	T_END();
}

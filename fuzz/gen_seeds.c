/*
 * gen_seeds.c -- writes the seed logs of fuzz/corpus/ (small, and the same
 * bytes every time: fixed nonce, fixed timestamps).
 *   gen_seeds DIR
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "../src/log/log.h"

static const char *dir;
static unsigned version; /* the format written: 0 the current one, or 3 */
static int late;         /* some events written late: blocks whose times overlap */
static int waits;        /* (v10) no-loss waits among the events: WAITS entries */
static int reuse;        /* (v11) processes given one pid: FORK and PROC entries midway */

static int create(const char *name)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	return fd;
}

static void must(int rc, const char *what)
{
	if (rc && rc != ENOSPC) {
		fprintf(stderr, "gen_seeds: %s: %s\n", what, strerror(rc));
		exit(1);
	}
}

/* n events from 3 writers, in runs of 4, mostly from one call site (so
 * format 4 writes short records), payloads of 0..40 bytes, a few names */
static uint64_t ckpt; /* (v8) bytes between checkpoints, 0: the writer's own */

static void seed(const char *name, int policy, uint64_t log_max, int n, int swap, int finish,
                 off_t cut, uint32_t block)
{
	struct pt_attr_img a;
	struct pt_logw_opt o = { .block_size = block, .swap = swap, .nonce = 0x5eed5eed5eed5eedull,
	                         .version = version, .ckpt_bytes = ckpt };
	struct posix_trace_status_info st = { 2, 2, 0, 0, 0, 0, 2 };
	struct pt_logw w;
	unsigned char d[40];
	int fd = create(name);

	memset(&a, 0, sizeof a);
	strcpy(a.name, "seed");
	strcpy(a.version, "posixtrace 0.1.0");
	a.res_nsec = 1, a.max_data = 40, a.log_size = log_max, a.log_policy = policy;
	a.stream_size = 65536, a.stream_policy = POSIX_TRACE_FLUSH, a.has_log = 1;
	must(pt_logw_init_opt(&w, fd, &a, policy, log_max, &o), "init");
	must(pt_logw_name(&w, 17, "open"), "name");
	must(pt_logw_name(&w, 18, "close"), "name");
	for (int i = 0; i < 3 && n; i++) { /* the map of loaded code (v3) */
		struct pt_ext_obj ob;
		memset(&ob, 0, sizeof ob);
		ob.ts = 1700000000000000000ull;
		ob.pid = 100 + i;
		ob.kind = i == 0 ? PT_EXT_OBJ_BEGIN : PT_EXT_OBJ_ADD;
		ob.lo = 0x400000, ob.hi = 0x402000, ob.base = 0;
		ob.bid_len = (uint8_t)(i * 10);
		memset(ob.bid, 0xa0 + i, ob.bid_len);
		snprintf(ob.path, sizeof ob.path, "/seed/lib%d.so", i);
		must(pt_logw_obj(&w, &ob), "obj");
		if (reuse) { /* (v11) the process, from its start */
			ob.kind = PT_EXT_OBJ_PROC, ob.lo = 1, ob.hi = 0, ob.bid_len = 0;
			snprintf(ob.path, sizeof ob.path, "seed %d", i);
			must(pt_logw_obj(&w, &ob), "proc");
		}
	}
	if (n) { /* (v6) a thread's identity and a payload description */
		struct pt_ext_obj ob;
		memset(&ob, 0, sizeof ob);
		ob.ts = 1700000000000000000ull;
		ob.pid = 100, ob.base = 0x7f00, ob.lo = 4242, ob.kind = PT_EXT_OBJ_THREAD;
		snprintf(ob.path, sizeof ob.path, "seed-worker");
		must(pt_logw_obj(&w, &ob), "thread");
		memset(&ob, 0, sizeof ob);
		ob.ts = 1700000000000000000ull;
		ob.pid = 100, ob.lo = 17, ob.kind = PT_EXT_OBJ_TYPE;
		snprintf(ob.path, sizeof ob.path, "n:u8, tag:string");
		must(pt_logw_obj(&w, &ob), "type");
	}
	for (int i = 0; i < n; i++) {
		uint32_t len = (uint32_t)(i * 7 % 41);
		memset(d, i, sizeof d);
		if (i == n / 2)
			must(pt_logw_name(&w, 19, "midway"), "name");
		if (reuse && (i == n / 3 || i == 2 * n / 3)) {
			/* a new process given pid 101 (forked: FORK, then its PROC going
			 * on), then one given pid 102 (spawned: a PROC of its own) */
			struct pt_ext_obj ob;
			memset(&ob, 0, sizeof ob);
			ob.ts = 1700000000000000000ull + (uint64_t)i * 977 - 1;
			ob.pid = i == n / 3 ? 101 : 102, ob.lo = 100;
			ob.kind = PT_EXT_OBJ_FORK;
			if (i == n / 3)
				must(pt_logw_obj(&w, &ob), "fork");
			ob.kind = PT_EXT_OBJ_PROC, ob.ts++;
			ob.flags = i == n / 3 ? PT_EXT_OBJ_CONT : 0;
			snprintf(ob.path, sizeof ob.path, "seed --child %d", i);
			must(pt_logw_obj(&w, &ob), "proc");
		}
		/* late: one in 7 stamped 25 events before its place */
		uint64_t back = late && i % 7 == 3 && i >= 25 ? 25 * 977 : 0;
		must(pt_logw_event(&w, 1700000000000000000ull + (uint64_t)i * 977 - back, 100 + i / 4 % 3,
		                   0x7f00 + (uint64_t)(i / 4 % 2), 0x401000 + (uint64_t)(i % 5 == 4) * i,
		                   17 + (unsigned)(i % 3), i % 5 == 0, d, len), "event");
		if (waits && i % 11 == 5) { /* a wait for room, its ns */
			uint64_t ns = 1000 + (uint64_t)i * 131;
			must(pt_logw_event(&w, 1700000000000000000ull + (uint64_t)i * 977 + 2,
			                   100 + i / 4 % 3, 0x7f00 + (uint64_t)(i / 4 % 2), 0x401000,
			                   PT_SYS_NOLOSS_WAIT, 0, &ns, sizeof ns), "event");
		}
		if (i % 97 == 50) { /* a gap, with its count */
			uint64_t ts = 1700000000000000000ull + (uint64_t)i * 977 + 1;
			must(pt_logw_event(&w, ts, 0, 0, 0, POSIX_TRACE_OVERFLOW, 0, NULL, 0), "event");
			must(pt_logw_event_lost(&w, ts, 0, 0, 0, POSIX_TRACE_RESUME, (uint64_t)i * 3),
			     "event");
		}
	}
	w.stream_lost = (uint64_t)n * 3;
	if (finish)
		must(pt_logw_finish(&w, &st), "finish");
	else
		must(pt_logw_sync(&w), "sync");
	pt_logw_free(&w);
	if (cut && ftruncate(fd, cut))
		perror("ftruncate");
	close(fd);
}

/* (v9) a log whose events are in CHUNK blocks: records as a stream's chunk
 * holds them (wide and short, whole words and not, one truncated, a
 * caller changing midway), then a few events the usual way; cut: the file
 * cut inside the second CHUNK block */
static void chunk_seed(const char *name, off_t cut)
{
	struct pt_attr_img a;
	struct pt_logw_opt o = { .nonce = 0x5eed5eed5eed5eedull, .chunk_size = 4096 };
	struct posix_trace_status_info st = { 2, 2, 0, 0, 0, 0, 2 };
	struct pt_logw w;
	uint64_t recs[512], t0 = 1000000, seg = 1000, ns0 = 1700000000000000000ull;
	unsigned char d[40];
	int fd = create(name);

	memset(&a, 0, sizeof a);
	strcpy(a.name, "seed");
	strcpy(a.version, "posixtrace 0.1.0");
	a.res_nsec = 1, a.max_data = 40, a.log_policy = POSIX_TRACE_APPEND;
	a.stream_size = 65536, a.stream_policy = POSIX_TRACE_FLUSH, a.has_log = 1;
	must(pt_logw_init_opt(&w, fd, &a, POSIX_TRACE_APPEND, 0, &o), "init");
	must(pt_logw_name(&w, 17, "open"), "name");
	must(pt_logw_name(&w, 18, "close"), "name");
	if (waits)
		must(pt_logw_name(&w, PT_SYS_NOLOSS_WAIT, "posixtrace_noloss_wait"), "name");
	for (int b = 0; b < 3; b++) {
		uint32_t k = 0, n = 0;
		for (int i = 0; i < 12; i++) {
			/* (waits: records 4 and 5, back to back) */
			int wt = waits && (i == 4 || i == 5);
			uint32_t len = wt ? 8 : (uint32_t)(i * 5 % 23), words = (len + 7) / 8;
			uint64_t tick = t0 + (uint64_t)(b * 100 + i) * 50;
			int wide = i == 0 || i == 6;
			uint64_t w0 = (tick & 0xffffffffull) |
			              (uint64_t)(wt ? PT_SYS_NOLOSS_WAIT : 17 + (unsigned)i % 2) << 32 |
			              (uint64_t)((wide ? PT_RF_WIDE : 0) | (i == 3 ? PT_RF_TRUNC : 0)) << 44 |
			              (uint64_t)len << 48;
			recs[k++] = w0;
			for (uint32_t j = 0; j < words; j++)
				recs[k++] = 0x0101010101010101ull * (uint64_t)(i + 1);
			if (wide)
				recs[k++] = (0x401000ull + (uint64_t)i * 16) | (tick >> 32) << 48;
			n++;
		}
		struct pt_logw_chunk c = {
			.pid = 100, .thread = 0x7f00 + (uint64_t)b, .recs = recs, .len = 8 * k, .nev = n,
			.btick = t0, .addr = 0, .seg = seg, .mult = 1ull << 32,
			.nsoff = (int64_t)ns0, .base = ns0 + t0 + (uint64_t)b * 100 * 50 - seg,
			.below = UINT64_MAX,
		};
		if (!pt_logw_chunk(&w, &c))
			must(EINVAL, "chunk");
	}
	for (int i = 0; i < 5; i++) {
		memset(d, i, sizeof d);
		must(pt_logw_event(&w, ns0 + t0 + 20000 + (uint64_t)i, 100, 0x7f00, 0x401000, 17, 0, d,
		                   (uint32_t)i * 3), "event");
	}
	must(pt_logw_finish(&w, &st), "finish");
	pt_logw_free(&w);
	if (cut && ftruncate(fd, cut))
		perror("ftruncate");
	close(fd);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen_seeds DIR\n");
		return 2;
	}
	dir = argv[1];
	seed("append.log", POSIX_TRACE_APPEND, 0, 40, 0, 1, 0, 256);
	seed("swapped.log", POSIX_TRACE_APPEND, 0, 40, 1, 1, 0, 256);
	seed("loop.log", POSIX_TRACE_LOOP, 1536, 120, 0, 1, 0, 256);
	seed("until_full.log", POSIX_TRACE_UNTIL_FULL, 1200, 100, 0, 1, 0, 256);
	seed("swapped_full.log", POSIX_TRACE_UNTIL_FULL, 1200, 100, 1, 1, 0, 256);
	seed("unfinished.log", POSIX_TRACE_APPEND, 0, 30, 0, 0, 0, 256);
	seed("torn.log", POSIX_TRACE_APPEND, 0, 30, 0, 0, 1000, 256);
	seed("empty.log", POSIX_TRACE_APPEND, 0, 0, 0, 1, 0, 256);
	seed("bigblock.log", POSIX_TRACE_APPEND, 0, 150, 0, 1, 0, 8192);
	late = 1; /* late events (read in timestamp order) */
	seed("late.log", POSIX_TRACE_APPEND, 0, 150, 0, 1, 0, 256);
	seed("late_loop.log", POSIX_TRACE_LOOP, 2048, 200, 0, 1, 0, 256);
	late = 0;
	ckpt = 2048; /* (v8) checkpoints every few blocks: finished, being written */
	seed("ckpt.log", POSIX_TRACE_APPEND, 0, 400, 0, 1, 0, 2048);
	seed("ckpt_unfinished.log", POSIX_TRACE_APPEND, 0, 400, 0, 0, 0, 2048);
	ckpt = 0;
	chunk_seed("chunk.log", 0);
	chunk_seed("chunk_torn.log", 256 + 200 + 180);
	waits = 1; /* (v10) WAITS entries in the summary */
	seed("waits.log", POSIX_TRACE_APPEND, 0, 150, 0, 1, 0, 256);
	seed("swapped_waits.log", POSIX_TRACE_APPEND, 0, 150, 1, 1, 0, 256);
	chunk_seed("chunk_waits.log", 0);
	reuse = 1;
	seed("reuse.log", POSIX_TRACE_APPEND, 0, 150, 0, 1, 0, 256);
	seed("reuse_loop.log", POSIX_TRACE_LOOP, 2048, 200, 0, 1, 0, 256);
	reuse = 0;
	version = 9; /* logs of the formats before, still read */
	seed("v9_waits.log", POSIX_TRACE_APPEND, 0, 150, 0, 1, 0, 256);
	waits = 0;
	version = 8;
	seed("v8_append.log", POSIX_TRACE_APPEND, 0, 40, 0, 1, 0, 256);
	version = 3;
	seed("v3_append.log", POSIX_TRACE_APPEND, 0, 40, 0, 1, 0, 256);
	seed("v3_loop.log", POSIX_TRACE_LOOP, 1536, 120, 0, 1, 0, 256);
	return 0;
}

/*
 * logfmt.h -- the trace log file format: a writer (logwrite.c) and a
 * reader (logread.c).  Internal to the library; see docs/log-format.md for
 * the byte layout and the rules.  Only libc and shm/layout.h: no other
 * layer of the library.
 *
 *   +--------------------+ 0
 *   | file header        |  magic, byte order, version, attributes (256 B)
 *   +--------------------+ PT_LOG_FIRST
 *   | block, block, ...  |  8-byte aligned; each: header, writer table,
 *   |                    |  records (events and event names), checksums
 *   | END block          |  status, written by pt_logw_finish()
 *   +--------------------+
 *
 * Every integer is in the byte order the header declares (the writer's own
 * unless told otherwise); payload bytes are never converted.
 */
#ifndef POSIXTRACE_LOGFMT_H
#define POSIXTRACE_LOGFMT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <trace.h>
#include "../shm/layout.h"
#include "../shm/mapent.h"
#include "batch.h"
#include "objstore.h"

/* ---- file header (PT_LOG_HDR bytes) */
#define PT_LOG_MAGIC      "PSXTRLOG"  /* 8 bytes, not NUL-terminated in the file */
#define PT_LOG_BOM        0x01020304u /* u32 at PT_LOG_H_BOM, in the log's order */
#define PT_LOG_VERSION    8u  /* written; 1 to 7 are still read */
#define PT_LOG_VERSION_MIN 1u
#define PT_LOG_HDR        256u
#define PT_LOG_FIRST      PT_LOG_HDR  /* offset of the first block */

#define PT_LOG_H_MAGIC    0   /* 8 bytes */
#define PT_LOG_H_BOM      8   /* u32 */
#define PT_LOG_H_VERSION  12  /* u16 */
#define PT_LOG_H_HDRLEN   14  /* u16 */
#define PT_LOG_H_MAXBLK   16  /* u32: no block is longer */
#define PT_LOG_H_POLICY   20  /* u32: log-full policy of the writer */
#define PT_LOG_H_LOGMAX   24  /* u64 */
#define PT_LOG_H_NONCE    32  /* u64: repeated in every block */
#define PT_LOG_H_FIRST    40  /* u64 */
#define PT_LOG_H_ATTR     48  /* attribute image, 200 bytes (below) */
#define PT_LOG_H_RESERVED 248 /* u32, zero */
#define PT_LOG_H_CRC      252 /* u32: CRC-32C of bytes 0..251 */

/* attribute image, relative to PT_LOG_H_ATTR */
#define PT_LOG_A_NAME     0   /* TRACE_NAME_MAX bytes, NUL-padded */
#define PT_LOG_A_VERSION  64  /* TRACE_NAME_MAX bytes, NUL-padded */
#define PT_LOG_A_CREATE   128 /* i64 sec, i64 nsec */
#define PT_LOG_A_RES      144 /* i64 sec, i64 nsec: clock resolution */
#define PT_LOG_A_SIZES    160 /* u64 stream_size, max_data, log_size */
#define PT_LOG_A_POLICIES 184 /* i32 stream_policy, log_policy, inherit, has_log */

/* ---- block header (PT_LOG_BLK bytes), then nw writer entries, then records */
#define PT_LOG_BLK_MAGIC  "PTLB"
#define PT_LOG_BLK        56u
#define PT_LOG_B_MAGIC    0   /* 4 bytes */
#define PT_LOG_B_TYPE     4   /* u16 */
#define PT_LOG_B_NW       6   /* u16: writer-table entries */
#define PT_LOG_B_LEN      8   /* u32: bytes from the block start, before padding */
#define PT_LOG_B_NREC     12  /* u32: records */
#define PT_LOG_B_NONCE    16  /* u64 */
#define PT_LOG_B_SEQ      24  /* u64: 1, 2, 3, ... in writing order */
#define PT_LOG_B_OLDEST   32  /* u64: oldest sequence number still in the log */
#define PT_LOG_B_BASE     40  /* u64: ns since the epoch; records hold deltas */
#define PT_LOG_B_BCRC     48  /* u32: CRC-32C of bytes PT_LOG_BLK..len */
#define PT_LOG_B_HCRC     52  /* u32: CRC-32C of bytes 0..51 */

#define PT_LOG_BT_EVENTS  1u
#define PT_LOG_BT_END     2u
#define PT_LOG_BT_SUMMARY 3u  /* (v5) what the log holds, written before END (logsum.c) */
#define PT_LOG_BT_CKPT    4u  /* (v8) a checkpoint: what the log holds so far (logsum.c) */

/* writer entry: i32 pid, u32 zero, u64 thread */
#define PT_LOG_WENT        16u
#define PT_LOG_MAX_WRITERS 256u
_Static_assert(PT_LOG_MAX_WRITERS == PT_EXT_BATCH_W, "a batch holds a block's writer table");

/* record: u32 delta ns, u16 payload length, u16 info, u64 where; payload.
 * (v4) A short record (info bit PT_LOG_RF_SHORT) stops after info: its
 * where is the one of the event record before it in the block. */
#define PT_LOG_REC         16u /* the longest header */
#define PT_LOG_REC_SHORT   8u
#define PT_LOG_R_DELTA     0
#define PT_LOG_R_LEN       4
#define PT_LOG_R_INFO      6
#define PT_LOG_R_WHERE     8   /* program address (48 bits) | writer index << 48 */
#define PT_LOG_ID_MASK     0x03ffu
#define PT_LOG_RF_TRUNC    0x0400u /* truncated when recorded */
#define PT_LOG_RF_NAME     0x0800u /* an event name: payload = name, no NUL */
#define PT_LOG_RF_INT      0x1000u /* payload is one i32 in the log's byte order */
#define PT_LOG_RF_LOST     0x2000u /* (v2) payload is one u64: the stream's loss count */
#define PT_LOG_RF_OBJ      0x4000u /* (v3) the map of loaded code: payload below */
#define PT_LOG_RF_SHORT    0x8000u /* (v4) no where: the previous event record's */

/* OBJ record payload: u64 ts (ns), u64 base, u64 lo, u64 hi, i32 pid,
 * u16 kind, u8 build-id length, u8 flags, the build-id, the path (no
 * NUL); delta, address and writer index 0, id 0 */
#define PT_LOG_OBJ_FIXED   40u
#define PT_LOG_OBJ_MAX     (PT_LOG_OBJ_FIXED + PT_EXT_OBJ_BID_MAX + PT_EXT_OBJ_PATH - 1)
#define PT_LOG_OBJS_MAX    (1u << 20) /* entries a reader keeps */

/* END block body: i32 x 7 status, u32 zero, u64 lost, u64 dropped, and
 * (v2) u64 events the stream lost */
#define PT_LOG_END_BODY    56u
#define PT_LOG_END_LEN     (PT_LOG_BLK + PT_LOG_END_BODY)
#define PT_LOG_END_LEN_V1  (PT_LOG_BLK + 48u)

/* SUMMARY block (v5): nw = 0, nrec entries back to back, each a u16
 * kind, a u16 length, then that many bytes (docs/log-format.md) */
#define PT_LOG_S_TOTALS    1u  /* 48: u64 events, first, last, gaps, last lost; u32 parts, writers */
#define PT_LOG_S_TYPE      2u  /* 32: u32 id, u32 0, u64 count, first, last */
#define PT_LOG_S_WRITER    3u  /* 40: i32 pid, u32 0, u64 thread, count, first, last */
#define PT_LOG_S_NAME      4u  /* 4 + n: u32 id, the name (1..63 bytes, no NUL) */
#define PT_LOG_S_OBJ       5u  /* an OBJ record's payload (v6: thread identities and
                                * payload descriptions too) */
#define PT_LOG_S_INDEX     6u  /* (v7) 8 + 32 k: u32 first block (0: the first block of the
                                * log), u32 k, then k block entries (below) */
#define PT_LOG_S_CHAIN     7u  /* (v8) 16: u64 offset and u64 sequence number of the
                                * checkpoint before (0, 0: none) */
#define PT_LOG_S_WRITER_AT 8u  /* (v8, checkpoints) 48: u32 index in the WRITER order,
                                * u32 0, then a WRITER entry's 40 bytes */
#define PT_LOG_S_HDR       4u
/* (v7) a block entry of the index: one events block, in writing order
 * (sequence numbers 1, 2, ... and back to back from PT_LOG_FIRST): u32
 * length, u32 flags, u64 first, smallest, largest and last event
 * timestamps (0 when it has no event) */
#define PT_LOG_IDX_ENT     40u
#define PT_LOG_IDX_LOST    1u  /* the block has a record flagged LOST */
#define PT_LOG_IDX_EVENTS  2u  /* the block has an event record */
#define PT_LOG_IDX_CKPT    4u  /* (v8) the block is a checkpoint (no event, times 0) */
#define PT_LOG_IDX_RUN_MAX 1638u /* entries in one INDEX entry (its length is a u16) */
struct pt_log_bidx { uint32_t len, flags; uint64_t first, min, max, last; };
#define PT_LOG_S_PARTS_MAX 4096u /* SUMMARY blocks a reader takes */

#define PT_LOG_NAME_MAX      TRACE_EVENT_NAME_MAX /* bytes, no NUL in the record */
/* readers of older logs refuse longer names (logread.c) */
_Static_assert(PT_LOG_NAME_MAX == 63, "longer event names would not read in older readers");
#define PT_LOG_MIN_PAYLOAD   64u       /* records always take this much */
#define PT_LOG_BLOCK_DEFAULT 65536u
/* (v8) an APPEND log's writer writes a checkpoint after PT_LOG_CKPT_BYTES
 * of blocks, or PT_LOG_CKPT_BLOCKS of them, since the last one */
#define PT_LOG_CKPT_BYTES    (64ull << 20)
/* ... or once this many writers are new or counted since (so that its
 * WRITER_AT entries fit in one block: a forking service) */
#define PT_LOG_CKPT_WRITERS  256u
/* ... or (a writer that spills, logsum.c) once this many map entries wait
 * for one: it keeps them until then */
#define PT_LOG_CKPT_OBJS     1024u
#define PT_LOG_CKPT_BLOCKS   256u
#define PT_LOG_BLOCK_LIMIT   (16u << 20) /* readers refuse larger blocks */
#define PT_LOG_MIN_BLOCK     (PT_LOG_BLK + PT_LOG_WENT + PT_LOG_REC + PT_LOG_MIN_PAYLOAD)
#define PT_LOG_ALIGN8(n)     (((uint64_t)(n) + 7u) & ~(uint64_t)7u)
/* UNTIL_FULL keeps room for a block holding only the STOP event */
#define PT_LOG_STOP_BLK      PT_LOG_ALIGN8(PT_LOG_BLK + PT_LOG_WENT + PT_LOG_REC + 4u)
/* UNTIL_FULL: the room a RESUME takes at most (a block of its own) */
#define PT_LOG_RESUME_BLK    PT_LOG_ALIGN8(PT_LOG_BLK + PT_LOG_WENT + PT_LOG_REC + 8u)

/* ---- byte order and checksum helpers */
static inline uint16_t pt_log_get16(const unsigned char *p, int swap)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return swap ? __builtin_bswap16(v) : v;
}
static inline uint32_t pt_log_get32(const unsigned char *p, int swap)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return swap ? __builtin_bswap32(v) : v;
}
static inline uint64_t pt_log_get64(const unsigned char *p, int swap)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return swap ? __builtin_bswap64(v) : v;
}
static inline void pt_log_put16(unsigned char *p, uint16_t v, int swap)
{
	v = swap ? __builtin_bswap16(v) : v;
	memcpy(p, &v, 2);
}
static inline void pt_log_put32(unsigned char *p, uint32_t v, int swap)
{
	v = swap ? __builtin_bswap32(v) : v;
	memcpy(p, &v, 4);
}
static inline void pt_log_put64(unsigned char *p, uint64_t v, int swap)
{
	v = swap ? __builtin_bswap64(v) : v;
	memcpy(p, &v, 8);
}

/* CRC-32C (Castagnoli, reflected 0x82F63B78): the SSE 4.2 instruction on
 * x86-64 processors that have it, else four bits at a time.  Chains:
 * pt_log_crc(pt_log_crc(0, a, n), b, m) is the CRC of a then b. */
static inline uint32_t pt_log_crc_sw(uint32_t crc, const unsigned char *p, size_t n)
{
	static const uint32_t t[16] = {
		0x00000000, 0x105ec76f, 0x20bd8ede, 0x30e349b1,
		0x417b1dbc, 0x5125dad3, 0x61c69362, 0x7198540d,
		0x82f63b78, 0x92a8fc17, 0xa24bb5a6, 0xb21572c9,
		0xc38d26c4, 0xd3d3e1ab, 0xe330a81a, 0xf36e6f75,
	};

	while (n--) {
		crc ^= *p++;
		crc = (crc >> 4) ^ t[crc & 15];
		crc = (crc >> 4) ^ t[crc & 15];
	}
	return crc;
}

/* a * b modulo the polynomial, both in the reflected order the CRC
 * register uses (the top bit is x^0). */
static inline uint32_t pt_log_gf_mul(uint32_t a, uint32_t b)
{
	uint32_t r = 0;

	for (int i = 0; i < 32; i++, b = (b >> 1) ^ (b & 1 ? 0x82f63b78u : 0))
		if (a & (0x80000000u >> i))
			r ^= b;
	return r;
}

/* The register after n more zero bytes: times x^(8n), built from
 * x^(8 * 2^k) for the bits k of n (x^8, its square, and so on). */
static inline uint32_t pt_log_crc_shift(uint32_t crc, size_t n)
{
	static const uint32_t x8pow2[32] = {
		0x00800000u, 0x00008000u, 0x82f63b78u, 0x6ea2d55cu,
		0x18b8ea18u, 0x510ac59au, 0xb82be955u, 0xb8fdb1e7u,
		0x88e56f72u, 0x74c360a4u, 0xe4172b16u, 0x0d65762au,
		0x35d73a62u, 0x28461564u, 0xbf455269u, 0xe2ea32dcu,
		0xfe7740e6u, 0xf946610bu, 0x3c204f8fu, 0x538586e3u,
		0x59726915u, 0x734d5309u, 0xbc1ac763u, 0x7d0722ccu,
		0xd289cabeu, 0xe94ca9bcu, 0x05b74f3fu, 0xa51e1f42u,
		0x40000000u, 0x20000000u, 0x08000000u, 0x00800000u,
	};

	for (unsigned k = 0; n && k < 32; k++, n >>= 1)
		if (n & 1)
			crc = pt_log_gf_mul(crc, x8pow2[k]);
	return crc;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* The crc32 instruction has a latency of about three of its issue slots:
 * a long buffer goes as three independent lanes, joined by shifting the
 * first two lanes' registers over the bytes after them (linearity). */
__attribute__((target("sse4.2")))
static inline uint32_t pt_log_crc_hw(uint32_t crc, const unsigned char *p, size_t n)
{
	uint64_t c = crc, w;

	if (n >= 4096) {
		size_t lane = n / 48 * 16; /* bytes per lane, a multiple of 16 */
		uint64_t c1 = 0, c2 = 0, w1, w2, x, x1, x2;
		const unsigned char *p1 = p + lane, *p2 = p + 2 * lane;
		for (size_t i = 0; i < lane; i += 16) { /* (two words a lane a turn) */
			memcpy(&w, p + i, 8);
			memcpy(&w1, p1 + i, 8);
			memcpy(&w2, p2 + i, 8);
			memcpy(&x, p + i + 8, 8);
			memcpy(&x1, p1 + i + 8, 8);
			memcpy(&x2, p2 + i + 8, 8);
			c = __builtin_ia32_crc32di(c, w);
			c1 = __builtin_ia32_crc32di(c1, w1);
			c2 = __builtin_ia32_crc32di(c2, w2);
			c = __builtin_ia32_crc32di(c, x);
			c1 = __builtin_ia32_crc32di(c1, x1);
			c2 = __builtin_ia32_crc32di(c2, x2);
		}
		c = pt_log_crc_shift(pt_log_crc_shift((uint32_t)c, lane) ^ (uint32_t)c1, lane) ^
		    (uint32_t)c2;
		p += 3 * lane;
		n -= 3 * lane;
	}
	for (; n >= 8; n -= 8, p += 8) {
		memcpy(&w, p, 8);
		c = __builtin_ia32_crc32di(c, w);
	}
	for (crc = (uint32_t)c; n--; p++)
		crc = __builtin_ia32_crc32qi(crc, *p);
	return crc;
}
#define PT_LOG_CRC_HW() __builtin_cpu_supports("sse4.2")
#else
#define pt_log_crc_hw pt_log_crc_sw
#define PT_LOG_CRC_HW() 0
#endif

static inline uint32_t pt_log_crc(uint32_t crc, const void *data, size_t n)
{
	const unsigned char *p = data;

	crc = ~crc;
	crc = PT_LOG_CRC_HW() ? pt_log_crc_hw(crc, p, n) : pt_log_crc_sw(crc, p, n);
	return ~crc;
}

/* ------------------------------------------------------------- writer */

/* the where of the last event record of the block being built (v4) */
struct pt_log_prev {
	uint64_t where;
	int ok;     /* 0: none yet */
	int legacy; /* writing format 3 (tests): no short records */
};

/* One record's header (payload follows, unpadded): short (8 bytes) when
 * the event record before it in the block has the same where, as *prev
 * says, else 16 bytes.  Returns the header's length. */
static inline uint32_t pt_log_put_rec(unsigned char *p, uint32_t delta, uint32_t len,
                                      unsigned info, uint64_t where, int swap,
                                      struct pt_log_prev *prev)
{
	int event = !(info & (PT_LOG_RF_NAME | PT_LOG_RF_OBJ));
	int shrt = event && prev->ok && !prev->legacy && prev->where == where;

	pt_log_put32(p + PT_LOG_R_DELTA, delta, swap);
	pt_log_put16(p + PT_LOG_R_LEN, (uint16_t)len, swap);
	pt_log_put16(p + PT_LOG_R_INFO, (uint16_t)(info | (shrt ? PT_LOG_RF_SHORT : 0)), swap);
	if (event)
		prev->where = where, prev->ok = 1;
	if (shrt)
		return PT_LOG_REC_SHORT;
	pt_log_put64(p + PT_LOG_R_WHERE, where, swap);
	return PT_LOG_REC;
}

struct pt_logw_opt {
	uint32_t block_size; /* 0: PT_LOG_BLOCK_DEFAULT; raised to fit one record */
	int swap;            /* write the opposite byte order (tests) */
	uint64_t nonce;      /* 0: random */
	unsigned version;    /* 0: PT_LOG_VERSION; 3, 5, 6 or 7: that format, as older
	                      * writers wrote it (tests; 5: no thread identities or
	                      * descriptions; 6: no block index in the summary; 7: no
	                      * checkpoints) */
	uint64_t ckpt_bytes; /* (v8, APPEND) a checkpoint after this many bytes of blocks
	                      * at least; 0: PT_LOG_CKPT_BYTES (tests: smaller) */
};

struct pt_logw_who {
	int32_t pid;
	uint64_t thread;
};

struct pt_logw_live {    /* LOOP: a block still in the file */
	uint64_t off, seq;
	uint32_t len, nev;
};

/* What the writer counts of the blocks it wrote, for the SUMMARY block
 * (logsum.c): APPEND and UNTIL_FULL logs only (a LOOP log keeps only its
 * last lap). */
struct pt_logw_sumw {
	int32_t pid;
	uint64_t thread, count, first, last, ckpt;
	uint32_t gi;    /* (writer side) its place in the WRITER order */
	uint32_t flags; /* (writer side) PT_LOGW_W_* */
};
/* (ckpt: the count the last checkpoint gave, writer side) */
#define PT_LOGW_W_DIRTY 1u /* new, or counted since the last checkpoint */
#define PT_LOGW_W_GONE  2u /* its process was gone, and every event of it in
                            * the log, at the checkpoint before (logsum.c) */
/* (v8) What a checkpoint holds that the writer no longer keeps: the final
 * WRITER_AT entries of writers it retired (ret), the OBJ entries it gave
 * (obj, the first of them number obj_first): offsets in the block. */
struct pt_logw_spill {
	uint64_t off, ret_first;   /* (ret_first: the number of its first retired writer) */
	uint32_t len, ret_at, nret, obj_at, nobj, obj_first;
};
struct pt_logw_sum {
	uint64_t events, first, last, gaps, last_lost;
	uint64_t count[PT_NIDS], tfirst[PT_NIDS], tlast[PT_NIDS];
	struct pt_logw_sumw *wr;   /* in order of first event */
	uint32_t nwr, wcap;
	uint32_t *hash, hcap;      /* writer (pid, thread) -> index + 1 in wr */
	struct pt_log_bidx *idx;   /* (v7) the block index: one entry per events block */
	uint64_t nidx, idx_cap;
	/* (v8) checkpoints: idx holds only the entries since the last one (the
	 * first is number idx_base); what it gave of the counts, names and map */
	uint64_t idx_base, ckpt_off, ckpt_seq, ckpt_at, tckpt[PT_NIDS];
	uint64_t named[PT_NIDS / 64];
	uint32_t obj_ckpt, ckpts, wr_given;
	uint64_t ckpt_n;           /* the next checkpoint when nidx reaches it (or the bytes) */
	int no_index;              /* the summary goes without the index (no room for it) */
	int failed;                /* out of memory once: no summary */
	/* (v8) writers gone, retired from wr once a checkpoint holds their
	 * final count; map entries dropped once a checkpoint holds them: read
	 * back from the checkpoints for the summary (logsum.c, "Spilling") */
	uint32_t nall;             /* writers in all: the WRITER order's length */
	uint32_t dirty;            /* writers PT_LOGW_W_DIRTY */
	uint32_t ret_n, ret_at;    /* the checkpoint being made: writers retired, where, */
	uint32_t obj_at;           /* ... and where its OBJ entries begin */
	uint64_t nret;             /* writers retired in all */
	int spill;                 /* 1: the log can be read back (spills allowed) */
	struct pt_logw_spill *sp;  /* the checkpoints that hold what was spilled */
	uint32_t nsp, sp_cap;
	unsigned char *sp_buf;     /* one of them, read back (summary) */
	uint32_t sp_k;             /* ... which (UINT32_MAX: none) */
	int sp_fd;                 /* the log, readable (-1: not open yet) */
	uint32_t sp_obj_i, sp_obj_off; /* the OBJ entry met last, and where */
};

/* A run of short event records of one type and one writer that the
 * caller of a span wrote (flushrun.c), counted as it wrote them: the
 * summary takes the run whole instead of reading its records again
 * (logsum.c).  off, end: its bytes in the block's records; first and
 * last: the timestamps of its first and last record, min and max the
 * smallest and largest. */
struct pt_logw_pre {
	uint32_t off, end, wi, id;
	uint64_t count, first, last, min, max;
};
#define PT_LOGW_PRE_MAX 32 /* runs a block keeps so (more are read again) */

struct pt_logw {
	/* results, for the caller to read */
	int err;             /* first write error, 0 if none */
	int full;            /* UNTIL_FULL: the STOP event is written, events refused */
	int resume_due;      /* UNTIL_FULL: an OVERFLOW is written, its RESUME not yet:
	                      * room for it is kept (PT_LOG_RESUME_BLK) */
	uint64_t lost;       /* LOOP: events in blocks overwritten */
	uint64_t dropped;    /* events discarded: log full, or their block failed to write */
	uint64_t written;    /* bytes written successfully (header included) */
	int gap_open;        /* an OVERFLOW or RESUME is the last event written: the
	                      * event after the loss is not in yet (rotation waits) */
	/* set by the caller before pt_logw_finish(): events the stream lost */
	uint64_t stream_lost;

	/* private */
	int fd, policy, swap, finished;
	unsigned version;    /* written: 3, 5 or PT_LOG_VERSION */
	int seekable, o_append, is_fifo, is_sock;
	uint32_t cap;        /* largest block (declared in the header) */
	uint32_t max_payload;
	uint64_t log_max, limit, pos, seq, nonce;
	uint64_t ckpt_every; /* (v8) bytes between checkpoints; 0: none */
	/* block being built */
	unsigned char *rec, *hdr;
	uint32_t rec_len, nrec, nev, nw, wlast;
	struct pt_log_prev prev;
	uint64_t base_ts, last_ts;
	struct pt_logw_who *wt, last_who;
	/* event names, re-emitted after each LOOP wrap */
	char (*names)[PT_LOG_NAME_MAX + 1];
	uint64_t known[PT_NIDS / 64];
	int names_due, emitting;
	uint64_t lap_new;    /* records in this lap that are not a copy of the names */
	uint32_t nsyn;       /* OVERFLOW and RESUME events in the block being built:
	                      * not counted as overwritten or dropped (the reader
	                      * tells the loss of recorded events) */
	/* the map of loaded code, re-emitted with the names: entries
	 * objs_base.. of nobjs (those before were spilled, logsum.c) */
	unsigned char **objs;
	uint32_t nobjs, objs_cap, objs_base;
	/* LOOP: blocks in the file, oldest first (a ring) */
	struct pt_logw_live *live;
	size_t live_head, live_n, live_cap;
	struct pt_logw_sum *sum;  /* NULL: no SUMMARY block (LOOP, format 3) */
	/* runs of the block being built already counted, in order */
	struct pt_logw_pre pre[PT_LOGW_PRE_MAX];
	uint32_t npre;
	/* (v8, set by the caller) is process pid gone, with every event of
	 * it given to the writer?  Its writers are then retired from the
	 * summary's memory at the next checkpoint (logsum.c); NULL: never */
	int (*pid_final)(void *ctx, int32_t pid);
	void *pid_final_ctx;
};

/* Map entry i as kept (its length, native order, then its OBJ record's
 * payload), NULL if a checkpoint holds it instead (spilled, logsum.c). */
static inline unsigned char *pt_logw_objp(const struct pt_logw *w, uint32_t i)
{
	return i < w->objs_base || i >= w->nobjs ? NULL : w->objs[i - w->objs_base];
}

/* fd: open for writing (else EBADF); LOOP and UNTIL_FULL need a regular
 * file without O_APPEND and log_max >= pt_logw_min_size() (else EINVAL);
 * APPEND takes any writable fd and ignores log_max.  A regular file is
 * truncated and the header written at offset 0 (errors: ENOSPC, EFBIG...). */
int pt_logw_init(struct pt_logw *w, int fd, const struct pt_attr_img *attr, int log_policy,
                 uint64_t log_max);
int pt_logw_init_opt(struct pt_logw *w, int fd, const struct pt_attr_img *attr,
                     int log_policy, uint64_t log_max, const struct pt_logw_opt *opt);
uint64_t pt_logw_min_size(const struct pt_attr_img *attr);
/* One entry of the map of loaded code (kept, and written again after
 * each LOOP wrap like the names).  0, ENOMEM, or a write error. */
int pt_logw_obj(struct pt_logw *w, const struct pt_ext_obj *o);
/* Binds id (< PT_NIDS) to name (1..63 characters; EINVAL otherwise). */
int pt_logw_name(struct pt_logw *w, unsigned id, const char *name);
/* Buffers one event; writes a block when one is full.  Returns 0, ENOSPC
 * when UNTIL_FULL refused it (w->full), or the error of a write it did. */
int pt_logw_event(struct pt_logw *w, uint64_t ts_ns, int32_t pid, uint64_t thread,
                  uint64_t addr, unsigned id, int truncated, const void *data, uint32_t len);
/* The same for a RESUME (or any event with no data) that carries the
 * stream's loss count, lost, when it was reported. */
int pt_logw_event_lost(struct pt_logw *w, uint64_t ts_ns, int32_t pid, uint64_t thread,
                       uint64_t addr, unsigned id, uint64_t lost);
/* Runs of events encoded by the caller straight into the block being
 * built (the flusher's fast path, flushrun.c).  Open: 1 and *s filled if
 * the block can take events of (pid, thread) from ts on without being
 * written out first; 0: use pt_logw_event(), which makes room.  The
 * caller writes records at s->p (at most s->room bytes, whole 8-byte
 * words may be stored up to that bound), in time order, each timestamp in
 * [s->base, s->base + UINT32_MAX], writer index in s->where, each header
 * through pt_log_put_rec() with &s->prev, and closes with what it wrote
 * (nev 0: nothing).  Events of another writer: pt_logw_span_who() first,
 * which makes it the span's writer (s->where, s->wi, s->who); the writer
 * of the span's last event must be the span's writer when it is closed. */
#define PT_LOGW_SPAN_ADD 64 /* writers a span may add to the block */
struct pt_logw_span {
	unsigned char *p;
	uint32_t room, max_payload;
	uint64_t base, where;
	struct pt_log_prev prev;
	int swap;
	uint32_t wi;
	struct pt_logw_who who;
	uint32_t nadd;      /* writers new to the block, indexes w->nw, w->nw + 1... */
	struct pt_logw_who add[PT_LOGW_SPAN_ADD];
	uint32_t npre;      /* runs counted by the caller (off, end from s->p) */
	struct pt_logw_pre pre[PT_LOGW_PRE_MAX];
};
int pt_logw_span_open(struct pt_logw *w, int32_t pid, uint64_t thread, uint64_t ts,
                      struct pt_logw_span *s);
/* 1 if the block takes events of (pid, thread) too, with need bytes of
 * records in all (those written so far and the next one); else 0 and
 * nothing changed. */
int pt_logw_span_who(const struct pt_logw *w, struct pt_logw_span *s, int32_t pid,
                     uint64_t thread, uint32_t need);
void pt_logw_span_close(struct pt_logw *w, const struct pt_logw_span *s, uint32_t bytes,
                        uint32_t nev, uint64_t last_ts);
/* A run of short event records of type id by the span's writer, already
 * written at s->p + off .. s->p + end, with count records, counted by the
 * caller (struct pt_logw_pre): the summary need not read them again.
 * Ignored when the span keeps as many already. */
static inline void pt_logw_span_pre(struct pt_logw_span *s, const struct pt_logw_pre *r)
{
	if (s->npre < PT_LOGW_PRE_MAX)
		s->pre[s->npre++] = *r;
}
int pt_logw_sync(struct pt_logw *w);
int pt_logw_finish(struct pt_logw *w, const struct posix_trace_status_info *st);
void pt_logw_free(struct pt_logw *w);
/* logsum.c, for logwrite.c: counting what a written events block holds
 * (its records and writer table), and the SUMMARY blocks' bodies: one
 * block's worth (at most cap bytes) from *cursor on, 0 when done. */
int pt_logw_sum_init(struct pt_logw *w);
void pt_logw_sum_block(struct pt_logw *w, const unsigned char *rec, uint32_t len, uint32_t nrec,
                       uint64_t base);
uint32_t pt_logw_sum_body(const struct pt_logw *w, unsigned char *out, uint32_t cap,
                          uint64_t *cursor, uint32_t *nrec, uint32_t parts);
/* (v8) A checkpoint's body into out (at most cap bytes): the counts, names
 * and writers changed since the last one, the index since it, the chain,
 * and as many of the new map entries as fit (*nobj).  0: it does not fit. */
uint32_t pt_logw_ckpt_body(struct pt_logw *w, unsigned char *out, uint32_t cap,
                           uint32_t *nrec, uint32_t *nobj);
/* (v8) The checkpoint of len bytes at off with sequence number seq, and
 * the first nobj of the new map entries, are written. */
void pt_logw_ckpt_done(struct pt_logw *w, uint32_t len, uint64_t off, uint64_t seq,
                       uint32_t nobj);
void pt_logw_sum_free(struct pt_logw *w);
/* (v8) After a checkpoint: the writers whose process is gone, with all
 * its events in the log (w->pid_final), are marked, to be retired at the
 * next checkpoint if nothing of them came meanwhile. */
void pt_logw_sum_mark_gone(struct pt_logw *w);
/* (v8) The log can be read back (w->fd readable, else through
 * /proc/self/fd): spilling allowed.  Called once fd is set. */
void pt_logw_spill_init(struct pt_logw *w);
struct pt_log_summary;
/* The counts of a summary read (a log's checkpoints) as w's, to count on
 * from (logread.c's census of a log being written): 0 or ENOMEM. */
int pt_logw_sum_load(struct pt_logw *w, const struct pt_log_summary *from);
/* logwio.c, for logwrite.c: writes a, b, c (one block) in one call at
 * w->pos, finishing short writes; returns 0 or an error number. */
int pt_logw_put(struct pt_logw *w, const void *a, uint32_t alen, const void *b,
                uint32_t blen, const void *c, uint32_t clen);

/* ------------------------------------------------------------- reader */

struct pt_logr_item {    /* one step of the reading order */
	uint64_t off, seq;
	uint64_t ts;         /* error items: the timestamp to report */
	uint64_t max_ts;     /* the block's largest timestamp (pt_logr_seek) */
	uint64_t min_ts;     /* its smallest (pt_logr_stop_after) */
	uint64_t last_ts;    /* (indexed) its last timestamp, as the index says */
	uint32_t len;
	uint32_t error;      /* 0: a block of events; else an error number */
	int has_lost;        /* the block has a record flagged LOST */
	int has_ev;          /* it has event records (as the index or the scan says) */
	uint64_t later_min;  /* the smallest min_ts of this block and those after it up
	                      * to an error item (UINT64_MAX: none): pt_logr_order() */
};

/* Blocks whose time ranges overlap (a late event: stamped before events
 * of other threads written before it) are read together and their events
 * returned in timestamp order (logiter.c): each block split into runs in
 * which timestamps do not step back, merged by a heap.  At most
 * PT_LOGR_MERGE_BYTES of blocks at once (a group that would need more is
 * read in parts, each in order) and PT_LOGR_MERGE_RUNS runs (beyond
 * that, one block's at least). */
#define PT_LOGR_MERGE_BYTES (64u << 20)
#define PT_LOGR_MERGE_RUNS  (1u << 16)
struct pt_logr_mblk {    /* a block of the group being merged */
	unsigned char *buf;
	uint32_t cap, nw, gen;
	uint64_t base;
	uint16_t map[PT_LOG_MAX_WRITERS]; /* writer index -> batch's (gen) */
};
struct pt_logr_run {     /* records [off, end) of a block, in time order */
	uint32_t blk, off, end;
	uint64_t where, ts;  /* where of the event before off; ts: off's */
};
struct pt_logr_merge {
	int on;              /* reading a group: items [cur, end) */
	size_t end;
	struct pt_logr_mblk *blk;
	size_t nblk, blk_cap;
	struct pt_logr_run *run;
	struct pt_logr_hent { uint64_t ts; uint64_t run; } *heap; /* runs with an event
	                      * left, their next timestamp: smallest (ts, run) first */
	size_t nrun, nheap, run_cap;
	uint32_t gen;        /* batch number (writer maps) */
	uint64_t ovf_run;    /* the last event taken was an OVERFLOW, of this run
	                      * (UINT64_MAX: not): its RESUME comes next */
	uint64_t ovf_ts;
};

struct pt_logr {
	/* from the log */
	struct pt_attr_img attr;
	int policy, swap, has_status, version;
	struct posix_trace_status_info status;
	uint64_t lost, dropped, log_max, nonce, size;
	uint64_t stream_lost;  /* from a v2 END block; has_stream_lost says so */
	int has_stream_lost;
	int last_lost_ok;      /* the last event returned carried a loss count: */
	uint64_t last_lost;    /* this one */
	int wrapped;           /* LOOP: blocks were overwritten (the oldest kept is not 1) */
	int wrap_state;        /* 0: its OVERFLOW is due, 1: its RESUME, 2: told (or none) */
	uint64_t wrap_told;    /* the count the wrap's RESUME carried, once returned */
	uint64_t lost_rec_seq; /* the newest good block with a RESUME's count */
	int lost_kept;         /* ... is one the log keeps */
	uint32_t max_block;

	/* private */
	int fd;
	char (*names)[PT_LOG_NAME_MAX + 1];
	uint64_t *name_seq;
	uint64_t known[PT_NIDS / 64];
	struct pt_objstore objs; /* the map of loaded code (v3), duplicates left out */
	uint64_t *obj_hash;      /* each one's hash (pt_logr_keep_obj) */
	size_t obj_hcap;
	uint32_t *obj_tab;       /* index + 1 of objs by obj_hash (open addressing) */
	size_t obj_tcap;
	struct pt_logr_item *items;
	size_t nitems, cur;
	unsigned char *buf;  /* one block; grown to the largest one in the log */
	uint32_t buf_cap;
	int loaded;
	int fresh;           /* the block loaded is not yet looked at for merging */
	uint32_t roff, rleft, nw;
	uint64_t where; /* the where of the block's last event record (v4 short records) */
	uint64_t base_ts;
	size_t full_len;     /* payload length of the last event returned */
	/* what the last pt_logr_check() of an events block saw besides */
	uint64_t chk_max_ts, chk_min_ts;
	int chk_lost;
	int chk_sorted;      /* its event timestamps never step back */
	int chk_meta;        /* it has a name, an OBJ record or a LOST count: what a
	                      * check with names keeps (else one check is enough) */
	int file_order;      /* PT_LOGR_FILE_ORDER */
	struct pt_logr_merge m;
	uint64_t told_early; /* RESUMEs told before the time recorded (a late event in
	                      * their gap, merged): since open or rewind */
	unsigned last_id;    /* the id of the last event returned (an OVERFLOW: a group
	                      * merged after it starts with its RESUME); 0 after an
	                      * event the reader makes */
	uint64_t out_ts;     /* the latest timestamp returned (error events and a
	                      * wrap's pair are stamped no earlier) */
	size_t stop;         /* items from this one on are not read (pt_logr_stop_after) */
	/* (v7) opened through the summary's block index: no block was read at
	 * open; each is checked when read, against its index entry too */
	int indexed;
	uint64_t bytes_read; /* bytes read from the file so far (tests) */
	/* (scanned at open) the events of the blocks that will be read,
	 * counted as the writer counts its summary (logsum.c), in the order
	 * of the file; census_ok once order() found that order is the
	 * reading order and every block counted is read (no wrap, no stale
	 * block), with the reader's error events added */
	struct pt_logw *census;
	int census_ok;
	int census_ckpt;     /* (v8) opened from checkpoints: the blocks before the last
	                      * one are counted as the writer counted them (as a
	                      * summary is), checked only when read */
	uint64_t census_seq, census_blocks, census_errors;
};

/* fd: a regular file open for reading (EBADF if not readable); anything
 * that is not a valid log: EINVAL.  The fd stays the caller's. */
int pt_logr_open(struct pt_logr *r, int fd);
/* The same; flags PT_LOGR_SCAN: scan every block even if the log has a
 * block index (tests, fuzzing: the two ways agree). */
#define PT_LOGR_SCAN 1
/* PT_LOGR_FILE_ORDER: blocks whose times overlap are not merged: each
 * block's events in the order of the file (tests: the order written) */
#define PT_LOGR_FILE_ORDER 2
int pt_logr_open_opt(struct pt_logr *r, int fd, int flags);
/* The next event in order; *unavailable = 1 at the end.  A corrupt stretch
 * of the log reads as one POSIX_TRACE_ERROR event whose data is an int. */
int pt_logr_next(struct pt_logr *r, struct posix_trace_event_info *ev, void *buf,
                 size_t cap, size_t *len, int *unavailable);
void pt_logr_rewind(struct pt_logr *r);
/* The next events as pt_logr_next() returns them, without payloads, in
 * a batch (pt_ext_next_batch() in src/ext.h); b->n == 0 at the end. */
int pt_logr_next_batch(struct pt_logr *r, struct pt_ext_batch *b);
/* The next event read is the first of the first block that may hold an
 * event stamped at or after ts: every event before it is stamped before
 * ts.  *lost_before: the loss count of the last LOST record before that
 * point (0 if none), plus, past the start of a wrapped log, what its wrap's
 * RESUME counted (as a reader from the start would have it: the count of
 * at_resume + wrap_at_resume, src/ext.h).  0, or an error reading the
 * blocks before it. */
int pt_logr_seek(struct pt_logr *r, uint64_t ts, uint64_t *lost_before);
/* Reading ends (the end of the log, as if) once no block left holds an
 * event stamped at or before ts, nor damage met before it (a late event
 * in a later block is still read: each block's smallest timestamp is
 * known at open).  UINT64_MAX: to the end again.  Kept by rewind and
 * seek. */
void pt_logr_stop_after(struct pt_logr *r, uint64_t ts);
void pt_logr_close(struct pt_logr *r);
const struct pt_attr_img *pt_logr_attr(const struct pt_logr *r);
int pt_logr_status(const struct pt_logr *r, struct posix_trace_status_info *st);
const char *pt_logr_name(const struct pt_logr *r, unsigned id);
/* The smallest named id >= from, or -1. */
int pt_logr_next_id(const struct pt_logr *r, unsigned from);

/* Reader internals shared by logread.c, logiter.c and logsum.c; the
 * bytes read and checked: logcheck.c. */
#ifdef PT_LOG_FUZZ_NOCRC /* fuzzing: reach the checks behind the checksums */
#define PT_LOG_CRC_OK(stored, computed) ((void)(stored), (void)(computed), 1)
#else
#define PT_LOG_CRC_OK(stored, computed) ((stored) == (computed))
#endif
struct pt_log_bhdr {
	unsigned type, nw;
	uint32_t len, nrec, bcrc;
	uint64_t seq, oldest, base;
};
/* the file header h into r: 0 or EINVAL */
int pt_logr_header(struct pt_logr *r, const unsigned char *h);
/* an END block's status into r */
void pt_logr_end_status(struct pt_logr *r, const unsigned char *p);
/* an OBJ record's payload in a log of that version: 0 and *o, or EBADMSG */
int pt_log_obj_decode(const unsigned char *p, uint32_t n, int swap, unsigned version,
                      struct pt_ext_obj *o);

/* The summary of a log (v5) read without its events (logsum.c): the
 * header, the END block at the end of the file and the SUMMARY blocks
 * just before it.  0; ENOENT: the log has none (older format, LOOP,
 * cut short, or a summary that does not check); EINVAL: not a log. */
struct pt_log_summary {
	struct pt_attr_img attr;
	struct posix_trace_status_info status;
	uint64_t lost, dropped, stream_lost;   /* from the END block */
	uint64_t events, first, last, gaps, last_lost;
	uint64_t count[PT_NIDS], tfirst[PT_NIDS], tlast[PT_NIDS];
	char (*names)[PT_LOG_NAME_MAX + 1];
	uint64_t known[PT_NIDS / 64];
	struct pt_logw_sumw *wr;
	uint32_t nwr, wr_cap;   /* (capacities: grown by doubling) */
	struct pt_objstore objs; /* the map's entries */
	/* (v7) the block index: its entries counted (nidx), kept only when
	 * want_index; where the first SUMMARY block is and its sequence number */
	int want_index;
	struct pt_log_bidx *idx;
	uint64_t nidx, idx_cap, sum_off, sum_seq;
	/* (v8) the first index entry's number (its INDEX entries may begin
	 * after the checkpoints'), and the last checkpoint before (CHAIN) */
	uint64_t idx_base, chain_off, chain_seq;
	int idx_based, has_chain;
	int index_only; /* (set by the caller) only the INDEX and CHAIN entries kept */
	uint64_t bytes_read; /* from the file (tests) */
};
int pt_log_summary_read(int fd, struct pt_log_summary *s);
/* The same, keeping the block index (logread.c's open) */
int pt_log_summary_read_index(int fd, struct pt_log_summary *s);
void pt_log_summary_free(struct pt_log_summary *s);
/* (v8) The checkpoint block at off with sequence number seq, read,
 * checked and its entries added to s (as pt_log_sum_parse): 0, ENOENT
 * (not such a checkpoint) or ENOMEM. */
int pt_log_ckpt_read(struct pt_logr *r, uint64_t off, uint64_t seq, struct pt_log_summary *s);
/* Checks a SUMMARY block's entries (p: the block, len, nrec); fills s
 * (which may be NULL) with them.  0 or EBADMSG. */
int pt_log_sum_parse(const unsigned char *p, uint32_t len, uint32_t nrec, int swap,
                     unsigned version, struct pt_log_summary *s);

/* (a log read by a scan at open) What its events are, counted as its
 * writer counts the SUMMARY (the same code), plus the reader's error
 * events, and the error events (damaged stretches): 0; ENOENT when the
 * log was opened through its block index, or the count is not exact (a
 * wrapped LOOP log, blocks out of order). */
int pt_logr_census(const struct pt_logr *r, const struct pt_logw_sum **sum,
                   uint64_t *damaged);

/* once the items are known: each one's later_min (logiter.c) */
void pt_logr_order(struct pt_logr *r);
/* frees the merge's buffers (logiter.c) */
void pt_logr_merge_free(struct pt_logr *r);
/* pread all n bytes at off: 0, EBADMSG (end of file first), or an error */
int pt_logr_rd(struct pt_logr *r, uint64_t off, void *dst, size_t n);
/* 1 if h is a block header of this log, decoded into *b */
int pt_logr_bhdr(const struct pt_logr *r, const unsigned char *h, struct pt_log_bhdr *b);
/* 0 if the whole block p is sound (else EBADMSG); names: record its names */
int pt_logr_check(struct pt_logr *r, const unsigned char *p, const struct pt_log_bhdr *b,
                  int names, uint64_t *first_ts, uint64_t *last_ts, uint32_t *nev);
/* type id's name (n bytes at s, from block seq; 0: the summary) into r,
 * unless a later block named it */
void pt_logr_set_name(struct pt_logr *r, unsigned id, const unsigned char *s, uint32_t n,
                      uint64_t seq);
/* an entry of the map of loaded code kept in r, once (h: a hash of it);
 * 0 (without memory, the map goes without it) */
int pt_logr_keep_obj(struct pt_logr *r, const struct pt_ext_obj *op, uint64_t h);

#endif

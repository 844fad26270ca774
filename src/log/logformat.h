/*
 * logformat.h -- the trace log file format: its constants, the offset of
 * every field of the file header, a block's header, its writer table, a
 * record, an OBJ record's payload, the END block's body and each SUMMARY
 * entry (docs/log-format.md gives them in tables: the names here follow
 * them), the limits writers and readers keep, and the integers and the
 * checksum as the file holds them.  Only libc and shm/mapent.h (an OBJ
 * payload's largest build-id and path).
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
#ifndef POSIXTRACE_LOGFORMAT_H
#define POSIXTRACE_LOGFORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <trace.h>
#include "../shm/mapent.h"

/* ---- file header (PT_LOG_HDR bytes) */
#define PT_LOG_MAGIC      "PSXTRLOG"  /* 8 bytes, not NUL-terminated in the file */
#define PT_LOG_BOM        0x01020304u /* u32 at PT_LOG_H_BOM, in the log's order */
#define PT_LOG_VERSION    11u /* written; 1 to 10 are still read */
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
#define PT_LOG_A_CREATE   128 /* i64: creation time, seconds */
#define PT_LOG_A_CREATE_NS 136 /* i64: ... nanoseconds */
#define PT_LOG_A_RES      144 /* i64: clock resolution, seconds */
#define PT_LOG_A_RES_NS   152 /* i64: ... nanoseconds */
#define PT_LOG_A_STREAM_SIZE 160 /* u64 */
#define PT_LOG_A_MAX_DATA 168 /* u64 */
#define PT_LOG_A_LOG_SIZE 176 /* u64 */
#define PT_LOG_A_STREAM_POLICY 184 /* i32 */
#define PT_LOG_A_LOG_POLICY 188 /* i32 */
#define PT_LOG_A_INHERIT  192 /* i32 */
#define PT_LOG_A_HAS_LOG  196 /* i32 */

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
#define PT_LOG_BT_CHUNK   5u  /* (v9) events as a stream's chunk holds them (logchunk.c) */

/* (v9) a CHUNK block: one writer entry, then this header (offsets from
 * PT_LOG_C_AT), then the records as the stream's chunk holds them
 * (docs/shm-format.md, "Records"), 8-byte words in the log's order.  A
 * record's time: nsoff + ((tick - seg) * mult >> 32) ns since the epoch,
 * its tick rebuilt from btick as the stream rebuilds it. */
#define PT_LOG_C_AT      (PT_LOG_BLK + PT_LOG_WENT)
#define PT_LOG_C_BTICK   0   /* u64: the chunk's base tick */
#define PT_LOG_C_ADDR    8   /* u64: the caller address of the record before the first */
#define PT_LOG_C_SEG     16  /* u64: the clock segment's first tick */
#define PT_LOG_C_MULT    24  /* u64: ns per tick << 32 in the segment */
#define PT_LOG_C_NSOFF   32  /* i64: the time of tick seg, ns since the epoch */
#define PT_LOG_CHUNK_HDR 40u
#define PT_LOG_C_RECS    (PT_LOG_C_AT + PT_LOG_CHUNK_HDR)
/* the longest CHUNK block a writer makes: a whole chunk of the largest
 * kind a stream makes (src/shm/segment.c: 256 KiB, unless four records of
 * the max data size need more) */
#define PT_LOG_CHUNK_BLOCK (PT_LOG_C_RECS + (256u << 10))

/* writer entry (the writer table, after the block header) */
#define PT_LOG_WENT        16u
#define PT_LOG_W_PID       0   /* i32 */
#define PT_LOG_W_ZERO      4   /* u32, zero */
#define PT_LOG_W_THREAD    8   /* u64: pthread_t */
#define PT_LOG_MAX_WRITERS 256u

/* record: u32 delta ns, u16 payload length, u16 info, u64 where; payload.
 * (v4) A short record (info bit PT_LOG_RF_SHORT) stops after info: its
 * where is the one of the event record before it in the block. */
#define PT_LOG_REC         16u /* the longest header */
#define PT_LOG_REC_SHORT   8u
#define PT_LOG_R_DELTA     0
#define PT_LOG_R_LEN       4
#define PT_LOG_R_INFO      6
#define PT_LOG_R_WHERE     8   /* program address (48 bits) | writer index << 48 */
#define PT_LOG_WHERE_WI    48  /* where's bit where the writer index begins (the address:
                                * the 48 bits below, PT_MASK48) */
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
#define PT_LOG_O_TS        0   /* u64: ns since the epoch */
#define PT_LOG_O_BASE      8   /* u64: load bias */
#define PT_LOG_O_LO        16  /* u64: mapped range [lo, hi); LOST: the count */
#define PT_LOG_O_HI        24  /* u64 */
#define PT_LOG_O_PID       32  /* i32 */
#define PT_LOG_O_KIND      36  /* u16: PT_EXT_OBJ_* */
#define PT_LOG_O_BIDLEN    38  /* u8: build-id bytes */
#define PT_LOG_O_FLAGS     39  /* u8: PT_EXT_OBJ_TRUNC, (v11, PROC) PT_EXT_OBJ_CONT */
#define PT_LOG_O_BID       40  /* the build-id, then the path */
#define PT_LOG_OBJ_FIXED   40u
#define PT_LOG_OBJ_MAX     (PT_LOG_OBJ_FIXED + PT_EXT_OBJ_BID_MAX + PT_EXT_OBJ_PATH - 1)
#define PT_LOG_OBJS_MAX    (1u << 20) /* entries a reader keeps */

/* END block body: i32 x 7 status, u32 zero, u64 lost, u64 dropped, and
 * (v2) u64 events the stream lost */
#define PT_LOG_END_BODY    56u
#define PT_LOG_E_STREAM_STATUS  0  /* i32 x 7: struct posix_trace_status_info, */
#define PT_LOG_E_STREAM_FULL    4  /* its members in declaration order */
#define PT_LOG_E_STREAM_OVERRUN 8
#define PT_LOG_E_FLUSH_STATUS   12
#define PT_LOG_E_FLUSH_ERROR    16
#define PT_LOG_E_LOG_OVERRUN    20
#define PT_LOG_E_LOG_FULL       24
#define PT_LOG_E_ZERO      28  /* u32, zero */
#define PT_LOG_E_LOST      32  /* u64: events overwritten (LOOP) */
#define PT_LOG_E_DROPPED   40  /* u64: events dropped */
#define PT_LOG_E_STREAM_LOST 48 /* u64 (v2): events the stream lost */
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
#define PT_LOG_S_INDEX     6u  /* (v7) 8 + 40 k: u32 first block (0: the first block of the
                                * log), u32 k, then k block entries (below) */
#define PT_LOG_S_CHAIN     7u  /* (v8) 16: u64 offset and u64 sequence number of the
                                * checkpoint before (0, 0: none) */
#define PT_LOG_S_WRITER_AT 8u  /* (v8, checkpoints) 48: u32 index in the WRITER order,
                                * u32 0, then a WRITER entry's 40 bytes */
#define PT_LOG_S_WAITS     9u  /* (v10) 32: a writer's no-loss waits: u32 index in the
                                * WRITER order, u32 0, u64 waits, total ns, longest ns */
#define PT_LOG_S_HDR       4u
#define PT_LOG_S_KIND      0   /* u16: PT_LOG_S_TOTALS... */
#define PT_LOG_S_LEN       2   /* u16: bytes after the entry's header */
/* the fields of each kind of entry, from the end of its header */
#define PT_LOG_TOT_LEN     48u /* TOTALS */
#define PT_LOG_TOT_EVENTS  0   /* u64 */
#define PT_LOG_TOT_FIRST   8   /* u64: first timestamp */
#define PT_LOG_TOT_LAST    16  /* u64: last timestamp */
#define PT_LOG_TOT_GAPS    24  /* u64: events flagged LOST */
#define PT_LOG_TOT_LAST_LOST 32 /* u64: the last LOST count */
#define PT_LOG_TOT_PARTS   40  /* u32: SUMMARY blocks in all */
#define PT_LOG_TOT_WRITERS 44  /* u32 */
#define PT_LOG_TYP_LEN     32u /* TYPE */
#define PT_LOG_TYP_ID      0   /* u32 */
#define PT_LOG_TYP_ZERO    4   /* u32, zero */
#define PT_LOG_TYP_COUNT   8   /* u64 */
#define PT_LOG_TYP_FIRST   16  /* u64: first timestamp */
#define PT_LOG_TYP_LAST    24  /* u64: last timestamp */
#define PT_LOG_WRI_LEN     40u /* WRITER (and WRITER_AT's end) */
#define PT_LOG_WRI_PID     0   /* i32 */
#define PT_LOG_WRI_ZERO    4   /* u32, zero */
#define PT_LOG_WRI_THREAD  8   /* u64 */
#define PT_LOG_WRI_COUNT   16  /* u64 */
#define PT_LOG_WRI_FIRST   24  /* u64: first timestamp */
#define PT_LOG_WRI_LAST    32  /* u64: last timestamp */
#define PT_LOG_NAM_ID      0   /* NAME: u32 */
#define PT_LOG_NAM_NAME    4   /* the name, to the entry's end */
#define PT_LOG_WAI_LEN     32u /* WAITS */
#define PT_LOG_WAI_AT      0   /* u32: place in the WRITER order */
#define PT_LOG_WAI_ZERO    4   /* u32, zero */
#define PT_LOG_WAI_N       8   /* u64: waits (posixtrace_noloss_wait events), >= 1 */
#define PT_LOG_WAI_NS      16  /* u64: their payloads added up (ns) */
#define PT_LOG_WAI_MAX     24  /* u64: the largest payload */
#define PT_LOG_IDX_FROM    0   /* INDEX: u32 first block */
#define PT_LOG_IDX_K       4   /* u32: block entries */
#define PT_LOG_IDX_ENTS    8   /* k block entries (PT_LOG_X_*) */
#define PT_LOG_CHN_LEN     16u /* CHAIN */
#define PT_LOG_CHN_OFF     0   /* u64: the checkpoint before's offset */
#define PT_LOG_CHN_SEQ     8   /* u64: its sequence number */
#define PT_LOG_WAT_LEN     48u /* WRITER_AT */
#define PT_LOG_WAT_AT      0   /* u32: place in the WRITER order */
#define PT_LOG_WAT_ZERO    4   /* u32, zero */
#define PT_LOG_WAT_WRITER  8   /* a WRITER entry (PT_LOG_WRI_*) */
/* (v7) a block entry of the index: one events block, in writing order
 * (sequence numbers 1, 2, ... and back to back from PT_LOG_FIRST): u32
 * length, u32 flags, u64 first, smallest, largest and last event
 * timestamps (0 when it has no event) */
#define PT_LOG_IDX_ENT     40u
#define PT_LOG_X_LEN       0   /* u32 */
#define PT_LOG_X_FLAGS     4   /* u32: PT_LOG_IDX_LOST... */
#define PT_LOG_X_FIRST     8   /* u64: first event timestamp */
#define PT_LOG_X_MIN       16  /* u64: smallest */
#define PT_LOG_X_MAX       24  /* u64: largest */
#define PT_LOG_X_LAST      32  /* u64: last */
#define PT_LOG_IDX_LOST    1u  /* the block has a record flagged LOST */
#define PT_LOG_IDX_EVENTS  2u  /* the block has an event record */
#define PT_LOG_IDX_CKPT    4u  /* (v8) the block is a checkpoint (no event, times 0) */
#define PT_LOG_IDX_RUN_MAX 1638u /* entries in one INDEX entry (its length is a u16) */
#define PT_LOG_S_PARTS_MAX 4096u /* SUMMARY blocks a reader takes */

/* each set of offsets covers its whole, without a hole */
_Static_assert(PT_LOG_H_ATTR + 200 == PT_LOG_H_RESERVED && PT_LOG_A_HAS_LOG + 4 == 200 &&
               PT_LOG_H_CRC + 4 == PT_LOG_HDR, "the file header's fields");
_Static_assert(PT_LOG_B_HCRC + 4 == PT_LOG_BLK && PT_LOG_W_THREAD + 8 == PT_LOG_WENT &&
               PT_LOG_R_WHERE + 8 == PT_LOG_REC && PT_LOG_R_WHERE == PT_LOG_REC_SHORT,
               "a block's header, a writer entry, a record's header");
_Static_assert(PT_LOG_O_BID == PT_LOG_OBJ_FIXED && PT_LOG_E_STREAM_LOST + 8 == PT_LOG_END_BODY,
               "an OBJ payload's fixed part, the END block's body");
_Static_assert(PT_LOG_TOT_WRITERS + 4 == PT_LOG_TOT_LEN && PT_LOG_TYP_LAST + 8 == PT_LOG_TYP_LEN &&
               PT_LOG_WRI_LAST + 8 == PT_LOG_WRI_LEN && PT_LOG_CHN_SEQ + 8 == PT_LOG_CHN_LEN &&
               PT_LOG_WAT_WRITER + PT_LOG_WRI_LEN == PT_LOG_WAT_LEN &&
               PT_LOG_WAI_MAX + 8 == PT_LOG_WAI_LEN &&
               PT_LOG_X_LAST + 8 == PT_LOG_IDX_ENT && PT_LOG_S_LEN + 2 == PT_LOG_S_HDR,
               "the SUMMARY entries");

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

#endif

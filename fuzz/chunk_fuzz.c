/*
 * chunk_fuzz.c -- libFuzzer target for the two readings of a CHUNK
 * block's records (src/log/logchunk.c): the writer's walk, which decides
 * whether a stream's chunk goes into the log as it is
 * (pt_log_chunk_scan: the records come from a segment any traced process
 * can write), and the reader's making of the events block it stands for
 * (pt_log_unchunk).  The writer's promise is that a reader takes what it
 * took, and reads what it counted.
 *
 * Per input: the first 48 bytes give the block's conversion (base tick,
 * caller, segment, ns per tick, time of the segment, block base), as they
 * come or, by the first byte's low bits, made plausible (a segment at or
 * below the base tick, 1 ns a tick or a TSC's rate, a time and block base
 * that the ticks can meet); 2 bytes the record count; 1 byte how many runs
 * the walk is told before it is told to only check the rest (0: all);
 * the rest the records (cut to 8-byte words, at most 256 KiB), each
 * reading given a buffer of exactly their size.  Checked:
 * no crash, out-of-bounds access or undefined behaviour (ASan, UBSan);
 * the walk and the making agree on whether the records are taken; when
 * they are, the runs the walk told add up to the records (all of them, or
 * as many as it told before it stopped telling), and its last time, last
 * tick's time and most time are the making's last and most time.
 * CHUNK_FUZZ_TRACE=1 prints both answers.  Seeds: fuzz/corpus-chunk (one
 * type in one shape, types taking turns, more runs than the writer keeps,
 * a no-loss wait and a truncated record, short records across 2^32 ticks).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "log/logpriv.h"

#define MAX_RECS (256u << 10)

struct ctx {
	unsigned told, stop_after; /* runs told; tell no more after (0: all) */
	uint64_t count, last, lo, hi;
	int any;
};

static int take_run(void *p, const struct pt_logw_pre *r)
{
	struct ctx *c = p;

	c->told++;
	c->count += r->count;
	c->last = r->last;
	if (!c->any || r->min < c->lo)
		c->lo = r->min;
	if (!c->any || r->max > c->hi)
		c->hi = r->max;
	c->any = 1;
	return !c->stop_after || c->told < c->stop_after;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pt_log_chunk_conv cv;
	struct pt_log_chunk_end end;
	struct pt_log_unchunked u;
	struct ctx c = { 0, 0, 0, 0, 0, 0, 0 };
	uint32_t olen;

	if (size < 51)
		return 0;
	cv.btick = get64(data), cv.addr = get64(data + 8), cv.seg = get64(data + 16);
	cv.mult = get64(data + 24), cv.nsoff = (int64_t)get64(data + 32), cv.base = get64(data + 40);
	switch (data[0] & 3) {
	case 0: /* as they come */
		break;
	case 1: /* 1 ns a tick, the segment a little before the base tick */
	case 2: /* a TSC's rate (about 0.4 ns a tick) */
		cv.addr &= PT_MASK48;
		cv.seg = cv.btick - (cv.seg & 0xffff);
		cv.mult = (data[0] & 3) == 1 ? 1ull << 32 : 0x66666666ull;
		cv.nsoff = (int64_t)(cv.base & 0x3fffffffffffffffull);
		cv.base = (uint64_t)cv.nsoff + (cv.base >> 62);
		break;
	default: /* a base tick near 2^32, where short records wrap */
		cv.addr &= PT_MASK48;
		cv.btick = 0xffff0000ull + (cv.btick & 0xffff);
		cv.seg = cv.btick & ~0xfffffull;
		cv.mult = 1ull << 32;
		cv.nsoff = 1000000000;
		cv.base = 1000000000;
		break;
	}
	uint32_t nrec = (uint32_t)data[48] | (uint32_t)data[49] << 8;
	c.stop_after = data[50];
	size_t len = (size - 51) & ~(size_t)7;
	if (len > MAX_RECS)
		len = MAX_RECS;
	/* (each in a buffer of its own size: a read past the records is
	 * AddressSanitizer's to see) */
	unsigned char *recs = malloc(len ? len : 1), *blk = malloc(PT_LOG_C_RECS + len);
	if (!recs || !blk)
		abort();
	memcpy(recs, data + 51, len);

	int rs = pt_log_chunk_scan(recs, (uint32_t)len, nrec, &cv, NULL, NULL, take_run, &c, &end);

	/* the same records as a CHUNK block: its conversion where a reader
	 * finds it, in this machine's order */
	memset(blk, 0, PT_LOG_C_RECS);
	memcpy(blk + PT_LOG_C_AT + PT_LOG_C_BTICK, &cv.btick, 8);
	memcpy(blk + PT_LOG_C_AT + PT_LOG_C_ADDR, &cv.addr, 8);
	memcpy(blk + PT_LOG_C_AT + PT_LOG_C_SEG, &cv.seg, 8);
	memcpy(blk + PT_LOG_C_AT + PT_LOG_C_MULT, &cv.mult, 8);
	memcpy(blk + PT_LOG_C_AT + PT_LOG_C_NSOFF, &cv.nsoff, 8);
	memcpy(blk + PT_LOG_B_BASE, &cv.base, 8);
	memcpy(blk + PT_LOG_C_RECS, recs, len);
	int ru = pt_log_unchunk(blk, (uint32_t)(PT_LOG_C_RECS + len), nrec, 0, &olen, &u);
	if (getenv("CHUNK_FUZZ_TRACE"))
		fprintf(stderr, "walk %d, making %d: %u records, %u runs told, %llu counted\n", rs, ru,
		        nrec, c.told, (unsigned long long)c.count);

	free(recs);
	free(blk);
	if ((rs == 0) != (ru == 0))
		abort(); /* the writer took what a reader refuses, or the other way */
	if (rs)
		return 0;
	if (!c.stop_after || c.told < c.stop_after) { /* every run told */
		if (c.count != nrec || c.last != u.last || c.hi > u.max || c.lo < u.min)
			abort();
		if (c.lo != u.min || c.hi != u.max)
			abort();
	} else if (c.count > nrec) {
		abort();
	}
	if (end.ns != u.last || end.hi < end.tick)
		abort();
	return 0;
}

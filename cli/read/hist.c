/*
 * hist.c -- a histogram of non-negative integers (durations in ns) in
 * the manner of HdrHistogram: values below 256 are counted exactly;
 * above, each power of two [2^k, 2^(k+1)) is split into 128 buckets of
 * equal width, so a bucket is at most 1/128 of the values it holds wide.
 * A quantile is reported as the middle of its bucket: within 1/256
 * (0.4%) of the true value, and never outside [min, max], which are
 * kept exact.  Memory: a row of counters per power of two met (1 KiB),
 * allocated when first needed; at most 57 rows, whatever the count.
 */
#include <stdlib.h>
#include <string.h>
#include "read.h"

#define SUB 128u

/* row 0: values 0..255 (256 counters); row r >= 1: [2^(r+7), 2^(r+8)) */
static unsigned row_of(uint64_t v)
{
	return v < 2 * SUB ? 0 : (unsigned)(63 - __builtin_clzll(v)) - 7;
}

int hist_add(struct hist *h, uint64_t v)
{
	unsigned r = row_of(v);
	if (!h->row[r]) {
		h->row[r] = calloc(r ? SUB : 2 * SUB, sizeof *h->row[r]);
		if (!h->row[r])
			return -1;
	}
	h->row[r][r ? (v >> r) - SUB : v]++;
	if (!h->n || v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->n++;
	h->sum += (double)v;
	return 0;
}

uint64_t hist_quantile(const struct hist *h, double q)
{
	if (!h->n)
		return 0;
	if (q <= 0)
		return h->min;
	if (q >= 1)
		return h->max;
	/* the value of rank ceil(q n) (1-based) */
	uint64_t rank = (uint64_t)(q * (double)h->n);
	if ((double)rank < q * (double)h->n)
		rank++;
	rank = rank ? rank : 1;
	uint64_t seen = 0;
	for (unsigned r = 0; r < HIST_ROWS; r++) {
		if (!h->row[r])
			continue;
		unsigned n = r ? SUB : 2 * SUB;
		for (unsigned i = 0; i < n; i++) {
			seen += h->row[r][i];
			if (seen < rank)
				continue;
			uint64_t lo = r ? (uint64_t)(i + SUB) << r : i, width = r ? 1ull << r : 1;
			uint64_t v = lo + (width - 1) / 2;
			return v < h->min ? h->min : v > h->max ? h->max : v;
		}
	}
	return h->max;
}

uint64_t hist_below(const struct hist *h, uint64_t v)
{
	uint64_t n = 0;
	for (unsigned r = 0; r < HIST_ROWS; r++) {
		if (!h->row[r])
			continue;
		unsigned k = r ? SUB : 2 * SUB;
		for (unsigned i = 0; i < k; i++) {
			if ((r ? (uint64_t)(i + SUB) << r : i) >= v)
				return n;
			n += h->row[r][i];
		}
	}
	return n;
}

void hist_free(struct hist *h)
{
	for (unsigned r = 0; r < HIST_ROWS; r++)
		free(h->row[r]);
	memset(h, 0, sizeof *h);
}

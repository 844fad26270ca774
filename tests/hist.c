/*
 * hist.c -- cli/read/hist.c, the histogram behind `stats`' gap quantiles:
 * against the exact quantiles of the same values sorted (the witness),
 * every quantile reported is within 1% of the true one (the design says
 * 1/256), min and max exact, the count exact; on uniform, log-uniform and
 * two-spike data, with values from 0 to 2^63, and memory bounded: at
 * most HIST_ROWS rows whatever the count.
 */
#include "t.h"
#include "../cli/read/hist.c"

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
	return *s;
}

static void check_set(uint64_t *v, size_t n)
{
	static const double qs[] = { 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999 };
	struct hist h;

	memset(&h, 0, sizeof h);
	for (size_t i = 0; i < n; i++)
		REQUIRE(hist_add(&h, v[i]) == 0);
	qsort(v, n, sizeof *v, cmp);
	CHECK_EQ(h.n, n);
	CHECK(h.min == v[0] && h.max == v[n - 1]);
	CHECK(hist_quantile(&h, 0) == v[0] && hist_quantile(&h, 1) == v[n - 1]);
	for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++) {
		size_t rank = (size_t)(qs[k] * (double)n);
		rank += (double)rank < qs[k] * (double)n;
		uint64_t want = v[(rank ? rank : 1) - 1], got = hist_quantile(&h, qs[k]);
		double err = want ? ((double)got - (double)want) / (double)want : (double)got;
		CHECK(err <= 0.01 && err >= -0.01);
		if (err > 0.01 || err < -0.01)
			fprintf(stderr, "q %.4f: %llu, exact %llu\n", qs[k], (unsigned long long)got,
			        (unsigned long long)want);
	}
	unsigned rows = 0;
	for (unsigned r = 0; r < HIST_ROWS; r++)
		rows += h.row[r] != NULL;
	CHECK(rows <= HIST_ROWS);
	hist_free(&h);
}

int main(void)
{
	enum { N = 1000000 };
	uint64_t *v = malloc(N * sizeof *v), s = 88172645463325252ull;

	T_BEGIN(60);
	REQUIRE(v);
	for (size_t i = 0; i < N; i++) /* uniform 0 .. 10 ms */
		v[i] = rnd(&s) % 10000000;
	check_set(v, N);
	for (size_t i = 0; i < N; i++) /* log-uniform 1 .. 2^63 */
		v[i] = rnd(&s) >> (rnd(&s) % 64);
	check_set(v, N);
	for (size_t i = 0; i < N; i++) /* two spikes and small values */
		v[i] = i % 3 == 0 ? 200 : i % 3 == 1 ? 1234567 : i % 250;
	check_set(v, N);
	v[0] = 42; /* one value */
	check_set(v, 1);
	free(v);
	T_END();
}

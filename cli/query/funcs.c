/*
 * funcs.c -- the SQL functions the tables come with:
 *   pt_quantile(X, Q)  an aggregate: the Q-quantile (0 <= Q <= 1) of the
 *                      non-negative integers X, from the histogram stats
 *                      uses (hist.c: within 0.4%, min and max exact), so
 *                      a span's p99 here is stats' p99; memory bounded
 *                      whatever the count
 *   pt_visited()       the events the tables of this process have read
 *                      from logs so far (what the plan's pushdown saves)
 */
#include "query.h"

struct qagg { struct hist h; double q; int have_q, bad; };

static void q_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct qagg *a = sqlite3_aggregate_context(ctx, sizeof *a);
	(void)argc;
	if (!a)
		return;
	if (!a->have_q) {
		a->q = sqlite3_value_double(argv[1]);
		a->have_q = 1;
		if (!(a->q >= 0 && a->q <= 1))
			a->bad = 1;
	}
	int t = sqlite3_value_numeric_type(argv[0]);
	if (t == SQLITE_NULL || a->bad)
		return;
	double d = sqlite3_value_double(argv[0]);
	if ((t != SQLITE_INTEGER && t != SQLITE_FLOAT) || !(d >= 0) || d > 1.8e19) {
		a->bad = 2;
		return;
	}
	uint64_t v = t == SQLITE_INTEGER ? (uint64_t)sqlite3_value_int64(argv[0]) : (uint64_t)(d + 0.5);
	if (hist_add(&a->h, v))
		a->bad = 3;
}

static void q_final(sqlite3_context *ctx)
{
	struct qagg *a = sqlite3_aggregate_context(ctx, 0);
	if (!a)
		return;
	if (a->bad == 1)
		sqlite3_result_error(ctx, "pt_quantile: Q must be between 0 and 1", -1);
	else if (a->bad == 2)
		sqlite3_result_error(ctx, "pt_quantile: X must be a non-negative number", -1);
	else if (a->bad == 3)
		sqlite3_result_error_nomem(ctx);
	else if (a->h.n)
		sqlite3_result_int64(ctx, (sqlite3_int64)hist_quantile(&a->h, a->q));
	hist_free(&a->h);
}

static void visited(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc, (void)argv;
	sqlite3_result_int64(ctx, (sqlite3_int64)pq_visited);
}

int pq_funcs_register(sqlite3 *db)
{
	int rc = sqlite3_create_function(db, "pt_quantile", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
	                                 NULL, NULL, q_step, q_final);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function(db, "pt_visited", 0, SQLITE_UTF8 | SQLITE_DIRECTONLY,
		                             NULL, visited, NULL, NULL);
	return rc;
}

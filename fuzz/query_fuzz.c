/*
 * query_fuzz.c -- libFuzzer target for the SQL tables over a log
 * (cli/query/: the module of `posixtrace query` and of
 * libposixtrace_sqlite.so): the input is a log file, as hostile as a log
 * can be; every table is made over it and read whole, every column, by
 * statements that take each path of the reader (batches, one event at a
 * time, a ts range that seeks, an id range that stops, a type, a thread,
 * slices with their fields, over a ts range and of one name, args).  Seeded with the log fuzzers' corpus
 * (fuzz/corpus).
 *
 * Checked: no crash, leak or undefined behaviour; a table that cannot be
 * made or read gives an SQL error, and then the next statement still
 * runs.
 */
#include <stdlib.h>
#include <string.h>
#include "fuzz_file.h"
#include "../cli/query/query.h"

static const char *const statements[] = {
	"SELECT count(*), sum(ts), sum(type), count(DISTINCT utid) FROM event",
	"SELECT * FROM event LIMIT 200",
	("SELECT count(*) FROM event WHERE ts BETWEEN (SELECT min(start_ts) FROM type) AND "
	 "(SELECT min(start_ts) FROM type) + 100000"),
	"SELECT min(id), max(id) FROM event WHERE id BETWEEN 3 AND 40",
	"SELECT count(*) FROM event WHERE type = 17 OR utid = 1 OR pid = 0 OR tid = 1",
	"SELECT count(*) FROM event e JOIN thread t USING (utid) WHERE t.utid = 0",
	"SELECT * FROM thread",
	"SELECT * FROM process",
	"SELECT * FROM type",
	"SELECT * FROM loss",
	"SELECT * FROM object",
	"SELECT * FROM slice LIMIT 200",
	"SELECT name, count(*), pt_quantile(dur, 0.99) FROM slice GROUP BY name",
	"SELECT * FROM flow LIMIT 200",
	"SELECT * FROM args LIMIT 200",
	/* slices over a ts range (seeks, then reads on until they end), and
	 * of one name (only its events paired, in batches when not keyed) */
	("SELECT name, count(*), sum(dur), sum(key) FROM slice WHERE ts BETWEEN (SELECT "
	 "min(start_ts) FROM type) + 1000 AND (SELECT min(start_ts) FROM type) + 100000 GROUP BY name"),
	"SELECT count(*), sum(dur) FROM slice WHERE name = (SELECT name FROM slice LIMIT 1)",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], *sql;
	sqlite3 *db = NULL;

	fuzz_file("query_fuzz", data, size, path, sizeof path);
	if (sqlite3_open(":memory:", &db) != SQLITE_OK || pq_register(db) != SQLITE_OK) {
		sqlite3_close(db);
		return 0;
	}
	for (int k = 0; k < PQ_NKINDS; k++) {
		sql = sqlite3_mprintf("CREATE VIRTUAL TABLE temp.%s USING posixtrace('%q', '%s')",
		                      pq_table_names[k], path, pq_table_names[k]);
		sqlite3_exec(db, sql, NULL, NULL, NULL);
		sqlite3_free(sql);
	}
	for (size_t i = 0; i < sizeof statements / sizeof statements[0]; i++) {
		sqlite3_stmt *st = NULL;
		if (sqlite3_prepare_v2(db, statements[i], -1, &st, NULL) != SQLITE_OK)
			continue;
		while (sqlite3_step(st) == SQLITE_ROW)
			for (int c = 0; c < sqlite3_column_count(st); c++)
				(void)sqlite3_column_text(st, c);
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return 0;
}

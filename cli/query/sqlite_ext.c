/*
 * sqlite_ext.c -- libposixtrace_sqlite.so, the loadable SQLite extension:
 * the module "posixtrace" and the functions of funcs.c on the connection
 * that loads it (sqlite3 .load, Python's load_extension, or any program's
 * sqlite3_load_extension).  Built with the rest of cli/read, enrich and
 * query (PT_SQLITE_EXT: SQLite's functions through the table it passes).
 * Only this file's entry points are exported (sqlite_ext.map).
 */
#include "query.h"

SQLITE_EXTENSION_INIT1

__attribute__((visibility("default"))) int sqlite3_posixtrace_init(sqlite3 *db, char **err,
                                                                    const sqlite3_api_routines *api);
__attribute__((visibility("default"))) int sqlite3_extension_init(sqlite3 *db, char **err,
                                                                   const sqlite3_api_routines *api);

int sqlite3_posixtrace_init(sqlite3 *db, char **err, const sqlite3_api_routines *api)
{
	SQLITE_EXTENSION_INIT2(api);
	int rc = pq_register(db);
	if (rc != SQLITE_OK && err)
		*err = sqlite3_mprintf("posixtrace: cannot register its tables: %s", sqlite3_errstr(rc));
	return rc;
}

int sqlite3_extension_init(sqlite3 *db, char **err, const sqlite3_api_routines *api)
{
	return sqlite3_posixtrace_init(db, err, api);
}

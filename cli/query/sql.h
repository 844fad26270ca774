/*
 * sql.h -- SQLite's API as the query layer sees it: the library itself
 * (the posixtrace command links libsqlite3), or, built into the loadable
 * extension (PT_SQLITE_EXT), the table of functions the loading SQLite
 * hands over (sqlite3ext.h), so that one source serves both.
 */
#ifndef POSIXTRACE_CLI_QUERY_SQL_H
#define POSIXTRACE_CLI_QUERY_SQL_H
#ifdef PT_SQLITE_EXT
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3
#else
#include <sqlite3.h>
#endif
#endif

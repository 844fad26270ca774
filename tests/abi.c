/*
 * abi.c -- the shared library exports the POSIX API, and the extensions
 * <trace.h> declares outside the POSIX names (posixtrace_*), and nothing
 * else: every public function resolves with dlsym, internal ones do not,
 * and the symbols carry the POSIXTRACE_0.1 version.  One data symbol more:
 * __posix_trace_gate, which <trace.h>'s inline posix_trace_event() test
 * reads; it points at a word that is zero while nothing is traced.  And,
 * since POSIXTRACE_0.2, __posix_trace_want, which the inline test of this
 * <trace.h> reads: 16 words of wanted bits, all zero while nothing is
 * traced.  Since POSIXTRACE_0.3, posixtrace_eventid_describe().  Since
 * POSIXTRACE_0.4, the C library's exec functions, which the library
 * stands in for (src/producer/exec.c): each differs from the C library's.
 * Since POSIXTRACE_0.6, posixtrace_event_at().
 * Since POSIXTRACE_0.7, posixtrace_trigger().
 * Since POSIXTRACE_0.8, __posix_trace_event_wanted(), which the inline
 * test of this <trace.h> calls once the id's wanted bit is set.
 * Since POSIXTRACE_0.5, posixtrace_eventid_system() and
 * posixtrace_eventid_system_name(); the table behind them (pt_sys_id,
 * pt_sys_name) stays internal.
 */
#include <dlfcn.h>
#include <link.h>
#include <string.h>
#include "t.h"

static const char *const api[] = {
	"posix_trace_attr_init", "posix_trace_attr_destroy", "posix_trace_attr_getclockres",
	"posix_trace_attr_getcreatetime", "posix_trace_attr_getgenversion",
	"posix_trace_attr_getname", "posix_trace_attr_setname", "posix_trace_attr_getinherited",
	"posix_trace_attr_setinherited", "posix_trace_attr_getlogfullpolicy",
	"posix_trace_attr_setlogfullpolicy", "posix_trace_attr_getstreamfullpolicy",
	"posix_trace_attr_setstreamfullpolicy", "posix_trace_attr_getlogsize",
	"posix_trace_attr_setlogsize", "posix_trace_attr_getmaxdatasize",
	"posix_trace_attr_setmaxdatasize", "posix_trace_attr_getmaxsystemeventsize",
	"posix_trace_attr_getmaxusereventsize", "posix_trace_attr_getstreamsize",
	"posix_trace_attr_setstreamsize", "posix_trace_create", "posix_trace_create_withlog",
	"posix_trace_flush", "posix_trace_shutdown", "posix_trace_start", "posix_trace_stop",
	"posix_trace_clear", "posix_trace_get_attr", "posix_trace_get_status",
	"posix_trace_event", "posix_trace_eventid_open", "posix_trace_trid_eventid_open",
	"posix_trace_eventid_equal", "posix_trace_eventid_get_name",
	"posix_trace_eventtypelist_getnext_id", "posix_trace_eventtypelist_rewind",
	"posix_trace_eventset_empty", "posix_trace_eventset_fill", "posix_trace_eventset_add",
	"posix_trace_eventset_del", "posix_trace_eventset_ismember", "posix_trace_set_filter",
	"posix_trace_get_filter", "posix_trace_getnext_event", "posix_trace_timedgetnext_event",
	"posix_trace_trygetnext_event", "posix_trace_open", "posix_trace_rewind",
	"posix_trace_close",
	/* extensions */
	"posixtrace_attr_setnoloss", "posixtrace_attr_getnoloss",
};

static const char *const internal[] = {
	"pt_proc", "pt_pool_acquire", "pt_pool_seal", "pt_now", "pt_stream_create",
	"pt_trid_lock", "pt_clock_tsc", "pt_nest", "pt_trid_table_lock", "record_user",
	"pt_nowait", "pt_attr_noloss", "pt_typemap_set", "pt_thrmap_chunk", "pt_ext_type_parse",
	"pt_ext_threads", "pt_sys_id", "pt_sys_name",
};

int main(void)
{
	T_BEGIN(20);
	void *h = dlopen(PT_BUILD_DIR "/libposixtrace.so", RTLD_NOW | RTLD_LOCAL);
	/* a library built is one a program can dlopen(): its initial-exec
	 * thread-local storage must fit the reserve glibc keeps for that */
	if (!h && access(PT_BUILD_DIR "/libposixtrace.so", F_OK))
		T_SKIP("libposixtrace.so not built");
	if (!h)
		fprintf(stderr, "dlopen: %s\n", dlerror());
	REQUIRE(h != NULL);
	CHECK_EQ(sizeof api / sizeof api[0], 52);
	for (unsigned i = 0; i < sizeof api / sizeof api[0]; i++) {
		void *f = dlvsym(h, api[i], "POSIXTRACE_0.1");
		if (!f)
			fprintf(stderr, "missing: %s\n", api[i]);
		CHECK(f != NULL);
	}
	const unsigned int **gate = dlvsym(h, "__posix_trace_gate", "POSIXTRACE_0.1");
	CHECK(gate != NULL && *gate != NULL);
	if (gate && *gate)
		CHECK_EQ(**gate & 0xffu, 0u);
	const unsigned long long **want = dlvsym(h, "__posix_trace_want", "POSIXTRACE_0.2");
	CHECK(want != NULL && *want != NULL);
	if (want && *want)
		for (unsigned i = 0; i < 16; i++)
			CHECK_EQ((*want)[i], 0ull);
	CHECK(dlvsym(h, "__posix_trace_want", "POSIXTRACE_0.1") == NULL);
	/* POSIXTRACE_0.3: payload descriptions */
	CHECK(dlvsym(h, "posixtrace_eventid_describe", "POSIXTRACE_0.3") != NULL);
	/* POSIXTRACE_0.4: the exec functions (a traced process's own exec) */
	static const char *const execs[] = { "execve", "execv", "execvp", "execvpe",
	                                     "execl",  "execlp", "execle", "fexecve" };
	for (unsigned i = 0; i < sizeof execs / sizeof execs[0]; i++) {
		void *f = dlvsym(h, execs[i], "POSIXTRACE_0.4");
		CHECK(f != NULL && f != dlsym(RTLD_NEXT, execs[i]));
	}
	CHECK(dlvsym(h, "posixtrace_eventid_describe", "POSIXTRACE_0.1") == NULL);
	/* POSIXTRACE_0.5: the system event types by name */
	CHECK(dlvsym(h, "posixtrace_eventid_system", "POSIXTRACE_0.5") != NULL);
	CHECK(dlvsym(h, "posixtrace_eventid_system_name", "POSIXTRACE_0.5") != NULL);
	CHECK(dlvsym(h, "posixtrace_eventid_system", "POSIXTRACE_0.4") == NULL);
	/* POSIXTRACE_0.6: an event at a call site the caller gives */
	CHECK(dlvsym(h, "posixtrace_event_at", "POSIXTRACE_0.6") != NULL);
	/* POSIXTRACE_0.7: a named trigger raised by the program */
	CHECK(dlvsym(h, "posixtrace_trigger", "POSIXTRACE_0.7") != NULL);
	CHECK(dlvsym(h, "posixtrace_trigger", "POSIXTRACE_0.6") == NULL);
	CHECK(dlvsym(h, "posixtrace_event_at", "POSIXTRACE_0.5") == NULL);
	/* POSIXTRACE_0.8: posix_trace_event() after <trace.h>'s inline test */
	CHECK(dlvsym(h, "__posix_trace_event_wanted", "POSIXTRACE_0.8") != NULL);
	CHECK(dlvsym(h, "__posix_trace_event_wanted", "POSIXTRACE_0.7") == NULL);
	for (unsigned i = 0; i < sizeof internal / sizeof internal[0]; i++) {
		void *f = dlsym(h, internal[i]);
		if (f)
			fprintf(stderr, "exported but internal: %s\n", internal[i]);
		CHECK(f == NULL);
	}
	dlclose(h);
	T_END();
}

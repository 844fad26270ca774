# posixtrace -- GNU make build.
#   make                 library (static + shared), examples
#   make check           build and run every test (tests/*.c)
#   make check SANITIZE=address,undefined | SANITIZE=thread
#   make stress          long repetition and load loops (not part of check)
#   make soak            one traced program that runs for minutes (SOAK_SECONDS)
#   make bench           micro-benchmarks (not part of check), also into
#                        $(BUILD)/bench/results.json
#   make plots           their figures ($(BUILD)/plots/*.svg; gnuplot)
#   make docs-plots      the same into docs/img and docs/performance.md's table
#   make demo            record and read back a bundled example
#   make cli             the posixtrace command ($(BUILD)/posixtrace)
#   make install PREFIX=/usr/local   (man pages: docs/posixtrace.1, docs/man/man3, man7)

VERSION  := 0.1.0
SOVER    := 0
PREFIX   ?= /usr/local
CC       ?= cc
OPT      ?= -O2
WERROR   ?= -Werror
comma    := ,
BUILD    ?= build$(if $(SANITIZE),-$(subst $(comma),-,$(SANITIZE)))

WARN     := -Wall -Wextra $(WERROR) -Wshadow -Wstrict-prototypes -Wmissing-prototypes
SANFLAGS := $(if $(SANITIZE),-fsanitize=$(SANITIZE) -fno-omit-frame-pointer,)
CFLAGS   ?= $(OPT) -g
ALLCFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) $(SANFLAGS) -Iinclude
LIBCFLAGS = $(ALLCFLAGS) -fPIC -fvisibility=hidden -Isrc
LDLIBS   += -lpthread
# Each compile writes the headers it read into a .d file beside its output
# (included at the end), so a changed header rebuilds what includes it.
DEPFLAGS  = -MMD -MP -MF $@.d -MT $@

# src/ is layered, one folder per layer, each with its header (docs/design.md):
# shm (bottom) < ring < producer, reader; shm < log (beside producer and
# reader); producer, reader, log < flush < control < api (top).  Each
# folder's name says who runs its code: producer, the traced process;
# reader, flush and control, the controller.  LIB_LAYERS is also the link
# order; the constructors' order does not hang on it (producer/lifecycle.c
# calls the clock's set-up itself, docs/design.md).
LIB_LAYERS := shm ring producer reader log flush control api
LIB_SRC  := $(foreach l,$(LIB_LAYERS),$(wildcard src/$(l)/*.c))
LIB_OBJ  := $(LIB_SRC:src/%.c=$(BUILD)/obj/%.o)
STATIC   := $(BUILD)/libposixtrace.a
SHARED   := $(BUILD)/libposixtrace.so.$(VERSION)
# (soak_fork runs for minutes: make soak-fork, not check)
TESTS    := $(patsubst tests/%.c,$(BUILD)/tests/%,$(filter-out tests/soak_fork.c tests/helpers.c,$(wildcard tests/*.c)))
EXAMPLES := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))
# section 3: a page per family of functions and a one-line .so page for
# every other name; section 7: the model (tests/manpages.c checks them)
MAN3     := $(wildcard docs/man/man3/*.3)
MAN7     := $(wildcard docs/man/man7/*.7)
# section 1 beyond posixtrace(1): a page per command that needs its own
MAN1     := $(wildcard docs/man/man1/*.1)
BENCHES  := $(patsubst bench/%.c,$(BUILD)/bench/%,$(wildcard bench/*.c))

# The posixtrace command: cli/*/*.c (layers: read < enrich < write, query < cmd,
# docs/design.md), linked with the static library.  Symbols
# and source lines come from elfutils' libdw when pkg-config finds it
# (Debian: libdw-dev); LIBDW=0 builds without it (file+offset only).
# Debug files missing here are fetched by build-id from debuginfod (when
# DEBUGINFOD_URLS is set) with elfutils' libdebuginfod when pkg-config finds
# it (Debian: libdebuginfod-dev); DEBUGINFOD=0 builds without it.
# The Perfetto export compresses its packets with zlib when pkg-config
# finds it (Debian: zlib1g-dev); ZLIB=0 builds without it (plain packets,
# and export says so).  With zlib, the same zlib streams are written by
# libdeflate, twice as fast, when pkg-config finds it too (Debian:
# libdeflate-dev; DEFLATE=0: by zlib); the tests read them with zlib.  The
# library never links either.
# `posixtrace query` and the SQLite extension (cli/query/, on enrich/)
# need SQLite when pkg-config finds it (Debian: libsqlite3-dev); SQLITE=0
# builds without them (the command then says so).
SQLITE   ?= $(shell pkg-config --exists sqlite3 2>/dev/null && echo 1 || echo 0)
SQL_EXT_SRC := cli/query/sqlite_ext.c
CLI_SRC  := $(filter-out $(SQL_EXT_SRC) $(if $(filter 1,$(SQLITE)),,cli/query/%),$(wildcard cli/*/*.c))
CLI_OBJ  := $(CLI_SRC:cli/%.c=$(BUILD)/cli/%.o)
CLI_HDR  := $(wildcard cli/*.h cli/*/*.h)
CLI      := $(BUILD)/posixtrace
LIBDW    ?= $(shell pkg-config --exists libdw 2>/dev/null && echo 1 || echo 0)
CLI_DEFS := $(if $(filter 1,$(LIBDW)),-DPT_HAVE_LIBDW $(shell pkg-config --cflags libdw),)
DEBUGINFOD ?= $(shell pkg-config --exists libdebuginfod 2>/dev/null && echo 1 || echo 0)
CLI_DEFS += $(if $(filter 1,$(DEBUGINFOD)),-DPT_HAVE_DEBUGINFOD $(shell pkg-config --cflags libdebuginfod),)
# `posixtrace view` serves its page with libmicrohttpd when pkg-config
# finds it (Debian: libmicrohttpd-dev); MHD=0 builds without it (the
# command then says so).
MHD      ?= $(shell pkg-config --exists libmicrohttpd 2>/dev/null && echo 1 || echo 0)
CLI_DEFS += $(if $(filter 1,$(MHD)),-DPT_HAVE_MHD,)
ZLIB     ?= $(shell pkg-config --exists zlib 2>/dev/null && echo 1 || echo 0)
ZLIB_DEFS := $(if $(filter 1,$(ZLIB)),-DPT_HAVE_ZLIB $(shell pkg-config --cflags zlib),)
ZLIB_LIBS := $(if $(filter 1,$(ZLIB)),$(shell pkg-config --libs zlib),)
DEFLATE  ?= $(if $(filter 1,$(ZLIB)),$(shell pkg-config --exists libdeflate 2>/dev/null && echo 1 || echo 0),0)
# the Perfetto writer's compressor (PF_), and what the tests that include it need
PF_DEFS  := $(if $(filter 1,$(DEFLATE)),-DPT_HAVE_LIBDEFLATE $(shell pkg-config --cflags libdeflate),$(ZLIB_DEFS))
PF_LIBS  := $(if $(filter 1,$(DEFLATE)),$(shell pkg-config --libs libdeflate),$(ZLIB_LIBS))
PF_TEST_DEFS := $(sort $(PF_DEFS) $(ZLIB_DEFS))
PF_TEST_LIBS := $(PF_LIBS) $(if $(filter 1,$(DEFLATE)),$(ZLIB_LIBS),)
CLI_DEFS += $(PF_DEFS)
CLI_DEFS += $(if $(filter 1,$(SQLITE)),-DPT_HAVE_SQLITE $(shell pkg-config --cflags sqlite3),)
# what reading and enriching a log links (the command, the extension)
READ_LIBS := $(if $(filter 1,$(LIBDW)),$(shell pkg-config --libs libdw),) \
            $(if $(filter 1,$(DEBUGINFOD)),$(shell pkg-config --libs libdebuginfod),)
CLI_LIBS := $(READ_LIBS) $(if $(filter 1,$(SQLITE)),$(shell pkg-config --libs sqlite3),) \
            $(if $(filter 1,$(MHD)),$(shell pkg-config --libs libmicrohttpd),) \
            $(PF_LIBS) -lm

# The reader-only part of the library: reading a log through the POSIX
# API (posix_trace_open, getnext, the ext.h extensions) and what it needs,
# without the traced side (src/producer: constructors, fork handlers, exec
# wrappers, the control memfd) or what makes and controls streams.  Not
# installed: what the SQLite extension is linked with.
READER_SRC := $(addprefix src/,shm/clock.c shm/futex.c shm/nametable.c shm/segment.c shm/filesize.c shm/fdown.c ring/pool.c \
              log/logread.c log/logiter.c log/logsum.c log/logcheck.c log/logchunk.c log/objstore.c \
              control/table.c \
              api/attr.c api/eventid.c api/eventset.c api/ext.c api/getnext.c api/logfile.c \
              api/status.c api/typedesc.c) $(wildcard src/reader/*.c)
READER   := $(BUILD)/libposixtrace_reader.a

# libposixtrace_sqlite.so: the SQLite extension (CREATE VIRTUAL TABLE t
# USING posixtrace('app.ptlog', 'event')): cli/read, enrich and query
# built position-independent, in an archive (only the members it uses:
# not cli/read's live streams), with the reader-only archive, and -z defs:
# a reference to anything else of the library fails the link, so loading
# it never sets up recording in the host process; exports only its entry
# points (sqlite3_posixtrace_init, sqlite3_extension_init)
SQL_EXT  := $(if $(filter 1,$(SQLITE)),$(BUILD)/libposixtrace_sqlite.so,)
SQL_EXT_SRCS := $(wildcard cli/read/*.c cli/enrich/*.c cli/query/*.c)
SQL_EXT_OBJ := $(SQL_EXT_SRCS:cli/%.c=$(BUILD)/sqlext/%.o)
SQL_EXT_AR := $(BUILD)/sqlext/libquery.a

.PHONY: all lib check bench plots docs-plots demo install clean examples cli stress soak
all: lib examples cli $(SQL_EXT)
cli: $(CLI)
lib: $(STATIC) $(SHARED)

$(BUILD)/obj/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(LIBCFLAGS) $(DEPFLAGS) -c $< -o $@

$(STATIC): $(LIB_OBJ)
	rm -f $@
	$(AR) rcs $@ $^

$(READER): $(READER_SRC:src/%.c=$(BUILD)/obj/%.o)
	rm -f $@
	$(AR) rcs $@ $^

$(SHARED): $(LIB_OBJ) src/libposixtrace.map
	$(CC) $(ALLCFLAGS) -shared -Wl,-soname,libposixtrace.so.$(SOVER) \
	  -Wl,--version-script=src/libposixtrace.map -o $@ $(LIB_OBJ) $(LDLIBS)
	ln -sf libposixtrace.so.$(VERSION) $(BUILD)/libposixtrace.so.$(SOVER)
	ln -sf libposixtrace.so.$(VERSION) $(BUILD)/libposixtrace.so

# (TEST_DEFS_name, TEST_LIBS_name: what one test needs besides)
# tests/helpers.c (what many tests share, helpers.h) is built once and
# linked into every test
TEST_HELPERS := $(BUILD)/tests/helpers.o
$(TEST_HELPERS): tests/helpers.c
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) $(DEPFLAGS) -Itests -c $< -o $@

$(BUILD)/tests/%: tests/%.c $(STATIC) $(TEST_HELPERS)
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) $(DEPFLAGS) $(TEST_DEFS_$*) -Itests -DPT_BUILD_DIR='"$(abspath $(BUILD))"' \
	  -DPT_TEST_CC='"$(CC)"' -DPT_TEST_SANFLAGS='"$(SANFLAGS)"' $< $(TEST_HELPERS) -o $@ $(STATIC) \
	  $(TEST_LIBS_$*) $(LDLIBS) -ldl

# cli_perfetto* (pf_export_util.h) include the Perfetto writer (cli_perfetto_writer checks it alone),
# built as the command is (libdeflate or zlib), and inflate their compressed
# packets (zlib)
# sql_ext, sql_ext_host: the AddressSanitizer runtime, preloaded into the
# sqlite3 and python3 hosts of a sanitized build's extension
ASAN_RT := $(if $(findstring address,$(SANITIZE)),$(shell $(CC) -print-file-name=libasan.so))
TEST_DEFS_sql_ext := $(if $(ASAN_RT),-DPT_ASAN_RT='"$(ASAN_RT)"')
TEST_DEFS_sql_ext_host := $(TEST_DEFS_sql_ext)
TEST_DEFS_cli_perfetto := $(PF_TEST_DEFS)
TEST_LIBS_cli_perfetto := $(PF_TEST_LIBS)
# (cli_perfetto split per feature: whole, lossy, flood, damaged, writer, typed)
TEST_DEFS_cli_perfetto_lossy := $(PF_TEST_DEFS)
TEST_LIBS_cli_perfetto_lossy := $(PF_TEST_LIBS)
TEST_DEFS_cli_perfetto_flood := $(PF_TEST_DEFS)
TEST_LIBS_cli_perfetto_flood := $(PF_TEST_LIBS)
TEST_DEFS_cli_perfetto_damaged := $(PF_TEST_DEFS)
TEST_LIBS_cli_perfetto_damaged := $(PF_TEST_LIBS)
TEST_DEFS_cli_perfetto_writer := $(PF_TEST_DEFS)
TEST_LIBS_cli_perfetto_writer := $(PF_TEST_LIBS)
TEST_DEFS_cli_perfetto_typed := $(PF_TEST_DEFS)
TEST_LIBS_cli_perfetto_typed := $(PF_TEST_LIBS)
# cli_spans inflates the Perfetto exports it decodes (pf_util.h)
TEST_DEFS_cli_spans := $(ZLIB_DEFS)
TEST_LIBS_cli_spans := $(ZLIB_LIBS)
# cli_span_key decodes a plain Perfetto export with pf_util.h (which reads zlib's when it has it)
TEST_DEFS_cli_span_key := $(ZLIB_DEFS)
TEST_LIBS_cli_span_key := $(ZLIB_LIBS)

# <trace.h> must also be valid C++ and pedantic C99
$(BUILD)/header-ok: include/trace.h
	@mkdir -p $(dir $@)
	printf '#include <trace.h>\nint main(void){char b[4] = {0};\nposix_trace_event(1, b, sizeof b);\n(posix_trace_event)(1, b, 0);\nreturn 0;}\n' > $(BUILD)/hdr.c
	$(CC) -std=c99 -pedantic -Wall -Wextra -Werror -Iinclude -fsyntax-only $(BUILD)/hdr.c
	$(CC) -std=c99 -pedantic -Wall -Wextra -Werror -Iinclude -DPOSIXTRACE_NO_INLINE \
	  -fsyntax-only $(BUILD)/hdr.c
	$${CXX:-c++} -x c++ -std=c++11 -Wall -Wextra -Werror -Iinclude -fsyntax-only $(BUILD)/hdr.c
	touch $@

$(BUILD)/examples/%: examples/%.c $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) $(DEPFLAGS) $< -o $@ $(STATIC) $(LDLIBS)

$(BUILD)/cli/%.o: cli/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) $(DEPFLAGS) $(CLI_DEFS) -c $< -o $@

$(BUILD)/sqlext/%.o: cli/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -fPIC -fvisibility=hidden -DPT_SQLITE_EXT $(DEPFLAGS) $(CLI_DEFS) -c $< -o $@

$(SQL_EXT_AR): $(filter-out %/sqlite_ext.o,$(SQL_EXT_OBJ))
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/libposixtrace_sqlite.so: $(BUILD)/sqlext/query/sqlite_ext.o $(SQL_EXT_AR) $(READER) \
                                  cli/query/sqlite_ext.map
	$(CC) $(ALLCFLAGS) -shared -Wl,-z,defs -Wl,--version-script=cli/query/sqlite_ext.map -o $@ \
	  $(BUILD)/sqlext/query/sqlite_ext.o $(SQL_EXT_AR) $(READER) $(READ_LIBS) -lm $(LDLIBS)

# the page of `posixtrace view`, built in with .incbin
$(BUILD)/cli/write/view_assets.o: cli/write/view_page.html

$(CLI): $(CLI_OBJ) $(STATIC)
	$(CC) $(ALLCFLAGS) $(CLI_OBJ) -o $@ $(STATIC) $(CLI_LIBS) $(LDLIBS)

$(BUILD)/bench/%: bench/%.c $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) $(DEPFLAGS) $(TEST_DEFS_$*) -DPT_BUILD_DIR='"$(abspath $(BUILD))"' $< -o $@ $(STATIC) \
	  $(TEST_LIBS_$*) $(LDLIBS)

# perfetto_write: the Perfetto writer alone, built as the command is
TEST_DEFS_perfetto_write := $(PF_DEFS)
TEST_LIBS_perfetto_write := $(PF_LIBS)


examples: $(EXAMPLES)

check: $(TESTS) $(SHARED) $(BUILD)/header-ok $(CLI) $(EXAMPLES) $(SQL_EXT)
	@BUILD=$(BUILD) sh tests/run.sh $(TESTS)

# stress: the long loops (not part of check; run before resolving anything
# that touches timing, processes or threads): a program that lives about a
# millisecond recorded 100 times, every run symbolized; the golden show
# output 50 times in a row; clock_truth for 20 rounds; clock_model over 100
# seeds; noloss for 20 rounds; paced_log (1/2/4/8 paced threads, a log, no
# loss) for 5 rounds; loss_order (every reading path against a per-thread
# witness) for 20 rounds; cli_loss_sum (losses that add up in every
# output) for 20 runs; then every test of threads, processes, signals or
# timing STRESS_REPEAT times in a row (a test that fails once fails stress)
STRESS_GOLDEN ?= 50
STRESS_REPEAT ?= 10
STRESS_TESTS := autoshutdown cli_live cli_record cli_relayd cli_tty clock_order concurrent_reader exec_trace fault_fork \
                fork_chunks attach_leave log_writing ctf_many record_memory \
                fault_kill fault_signals life_edges life_exec life_limits life_threads \
                getnext_wait hermetic hostile hostile_remote inherit inherit_tree log_clear log_crash log_fastpath log_merge \
                log_flusher log_types loss_count \
                log_policies log_remote records remote shutdown_race shutdown_reuse signals threads \
                traced_killed wanted
STRESS_TESTS += cli_rotate cli_rotate_keep
STRESS_TESTS += loop_exact
STRESS_TESTS += cli_snapshot_queue cli_snapshot_names cli_rotate_lost cli_rotate_types cli_relayd_rotate
STRESS_TESTS += live_order
STRESS_TESTS += cli_snapshot_backlog cli_snapshot_inflight
STRESS_TESTS += cli_relayd_faults cli_relayd_fleet
STRESS_TESTS += life_exec_ctor
STRESS_TESTS += cli_rotate_procs rotate_orphan
stress: $(TESTS) $(SHARED) $(BUILD)/header-ok $(CLI) $(EXAMPLES)
	PT_STRESS=1 $(BUILD)/tests/cli_symbols
	PT_STRESS=1 $(BUILD)/tests/logsum
	@i=0; while [ $$i -lt $(STRESS_GOLDEN) ]; do i=$$((i + 1)); \
	  $(BUILD)/tests/cli_golden >$(BUILD)/stress-golden.log 2>&1 || \
	  { echo "cli_golden failed in run $$i of $(STRESS_GOLDEN)"; tail -n 30 $(BUILD)/stress-golden.log; exit 1; }; \
	done; echo "cli_golden: $(STRESS_GOLDEN) of $(STRESS_GOLDEN) runs passed"
	@CLOCK_TRUTH_ROUNDS=20 $(BUILD)/tests/clock_truth && echo "PASS clock_truth, 20 rounds"
	@for s in $$(seq 1 100); do CLOCK_MODEL_SEED=$$s $(BUILD)/tests/clock_model || exit 1; \
	 done && echo "PASS clock_model, 100 seeds"
	@NOLOSS_ROUNDS=20 $(BUILD)/tests/noloss && echo "PASS noloss, 20 rounds"
	@PACED_LOG_ROUNDS=5 $(BUILD)/tests/paced_log && echo "PASS paced_log, 5 rounds"
	@$(BUILD)/tests/loss_order 20 >$(BUILD)/stress-loss_order.log 2>&1 || \
	  { echo "loss_order failed"; tail -n 30 $(BUILD)/stress-loss_order.log; exit 1; }; \
	  echo "PASS loss_order, 20 rounds"
	@PT_STRESS=1 $(BUILD)/tests/cli_loss_sum >$(BUILD)/stress-cli_loss_sum.log 2>&1 || \
	  { echo "cli_loss_sum failed"; tail -n 30 $(BUILD)/stress-cli_loss_sum.log; exit 1; }; \
	  echo "PASS cli_loss_sum, 20 runs"
	@PT_STRESS=1 $(BUILD)/tests/cli_rotate >$(BUILD)/stress-cli_rotate.log 2>&1 || \
	  { echo "cli_rotate failed"; tail -n 30 $(BUILD)/stress-cli_rotate.log; exit 1; }; \
	  echo "PASS cli_rotate, 36 M events cut every 100 MB"
	@for t in $(STRESS_TESTS); do i=0; while [ $$i -lt $(STRESS_REPEAT) ]; do i=$$((i + 1)); \
	  BUILD=$(BUILD) $(BUILD)/tests/$$t >$(BUILD)/stress-$$t.log 2>&1 || \
	  { echo "$$t failed in run $$i of $(STRESS_REPEAT)"; tail -n 30 $(BUILD)/stress-$$t.log; exit 1; }; \
	done; echo "PASS $$t, $(STRESS_REPEAT) runs"; done

# soak: a program recorded for SOAK_SECONDS (6 minutes) under 2x
# oversubscription, into a flight recorder read only at the end, a FLUSH
# log and a live reader at once; every bracketed mark's time checked
# against CLOCK_REALTIME and every one counted (tests/clock_truth)
SOAK_SECONDS ?= 360
soak: $(BUILD)/tests/clock_truth
	@CLOCK_TRUTH_SOAK=$(SOAK_SECONDS) $(BUILD)/tests/clock_truth && \
	 echo "PASS clock_truth soak, $(SOAK_SECONDS) s"

# soak-fork: an always-on service under record for SOAK_FORK_SECONDS (20
# minutes): worker threads, a pool of short threads, a helper forked every
# 10 ms, 100 attaches; no loss, every writer's sequence whole, the
# service's memory, the recorder's RSS and every descriptor count flat
# from the first minute (tests/soak_fork.c); SOAK_FORK_EVERY_MS=3000 forks
# a helper every 3 s instead, as issue 54's service did
SOAK_FORK_SECONDS ?= 1200
soak-fork: $(BUILD)/tests/soak_fork $(CLI)
	@SOAK_FORK_SECONDS=$(SOAK_FORK_SECONDS) $(BUILD)/tests/soak_fork && \
	 echo "PASS soak_fork, $(SOAK_FORK_SECONDS) s"

# bench: bench-lttng first (it builds bench/fleet's LTTng side), then every
# bench/*.c; each row also goes to $(BENCH_DIR)/results.json (bench/results.sh)
# (a failure is noted in $(BENCH_DIR)/failed, so that the line that calls
# $(MAKE), which make -n runs too, runs nothing else)
BENCH_DIR = $(BUILD)/bench
BENCH_ROWS = BENCH_JSON='$(abspath $(BENCH_DIR))/rows.jsonl'
bench: $(BENCHES) $(CLI) $(SQL_EXT) $(BUILD)/tests/cli_view_cdp
	@rm -f $(BENCH_DIR)/failed && sh bench/results.sh begin $(BENCH_DIR)
	@$(BENCH_ROWS) $(MAKE) --no-print-directory bench-lttng || : >$(BENCH_DIR)/failed
	@export $(BENCH_ROWS); st=0; [ ! -e $(BENCH_DIR)/failed ] || st=1; \
	 if [ $$st = 0 ]; then for b in $(BENCHES); do $$b || { st=1; break; }; done; fi; \
	 sh bench/results.sh end $(BENCH_DIR) $$st; exit $$st

# plots: the figures of the last make bench, drawn by gnuplot (bench/plots.sh)
# into $(BUILD)/plots; docs-plots: the same, copied into docs/img with the
# results they come from (what docs/performance.md shows).  `make bench
# docs-plots` refreshes the page's figures and tables in one command.
plots: $(filter bench,$(MAKECMDGOALS))
	@sh bench/plots.sh $(BENCH_DIR)/results.json $(BUILD)/plots

docs-plots: plots
	@mkdir -p docs/img && cp $(BUILD)/plots/*.svg docs/img/ && \
	 cp $(BENCH_DIR)/results.json docs/img/results.json && \
	 sh bench/table.sh $(BENCH_DIR)/results.json docs/performance.md && \
	 echo "docs/img and the table in docs/performance.md are from $(BENCH_DIR)/results.json"

# demo: the in-process demo, then the posixtrace command on examples/app
# (threads, a forked child, several event types): record, show, stats, and
# an HTML timeline.
DEMO_LOG := $(BUILD)/demo/app.ptlog
demo: $(EXAMPLES) $(CLI)
	@$(BUILD)/examples/demo
	@mkdir -p $(BUILD)/demo
	@echo
	@echo '$$ posixtrace record --force -o $(DEMO_LOG) -- $(BUILD)/examples/app'
	@$(CLI) record --force -o $(DEMO_LOG) -- $(BUILD)/examples/app
	@echo
	@echo '$$ posixtrace show $(DEMO_LOG) | head -n 20'
	@$(CLI) show $(DEMO_LOG) | head -n 20
	@echo
	@echo '$$ posixtrace stats $(DEMO_LOG)'
	@$(CLI) stats $(DEMO_LOG)
	@echo
	@echo '$$ posixtrace export --format html --force -o $(BUILD)/demo/app.html $(DEMO_LOG)'
	@$(CLI) export --format html --force -o $(BUILD)/demo/app.html $(DEMO_LOG)
	@echo "timeline: $(abspath $(BUILD)/demo/app.html)"

install: lib $(CLI) $(SQL_EXT)
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(CLI) $(DESTDIR)$(PREFIX)/bin/posixtrace
	install -m 644 docs/posixtrace.1 $(DESTDIR)$(PREFIX)/share/man/man1/posixtrace.1
	install -d $(DESTDIR)$(PREFIX)/share/man/man3 $(DESTDIR)$(PREFIX)/share/man/man7
	install -m 644 $(MAN3) $(DESTDIR)$(PREFIX)/share/man/man3/
	install -m 644 $(MAN7) $(DESTDIR)$(PREFIX)/share/man/man7/
	install -m 644 include/trace.h $(DESTDIR)$(PREFIX)/include/trace.h
	install -m 644 $(STATIC) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(SHARED) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libposixtrace.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libposixtrace.so.$(SOVER)
	ln -sf libposixtrace.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libposixtrace.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' posixtrace.pc.in \
	  > $(DESTDIR)$(PREFIX)/lib/pkgconfig/posixtrace.pc
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 644 $(MAN1) $(DESTDIR)$(PREFIX)/share/man/man1/
ifeq ($(SQLITE),1)
	install -m 755 $(SQL_EXT) $(DESTDIR)$(PREFIX)/lib/libposixtrace_sqlite.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' posixtrace_sqlite.pc.in \
	  > $(DESTDIR)$(PREFIX)/lib/pkgconfig/posixtrace_sqlite.pc
endif

clean:
	rm -rf build build-*

# ------------------------------------------------------------------ fuzz
# libFuzzer targets (clang with its compiler-rt):
#   log_fuzz         the trace log reader; log_fuzz_nocrc the same built with
#                    PT_LOG_FUZZ_NOCRC (checksums ignored: the fuzzer gets
#                    past them to the structure checks)
#   logapi_fuzz      a log read through the library's calls as the commands
#                    read one (fuzz/logapi_fuzz.c: attributes, events, loss
#                    counts and their cap, the map's entries, seek), the whole
#                    library built with PT_LOG_FUZZ_NOCRC
#   stream_fuzz      the stream reader and the controller's calls on a segment
#                    a hostile traced process writes over (fuzz/stream_fuzz.c;
#                    the whole library, built with its clock and thread ids
#                    redirected to the target so that runs are deterministic)
#   relayd_fuzz      the relay's replies and the --relayd URL, as
#                    `record --relayd` parses them (cli/write/relayd_proto.c)
#   typed_fuzz       payload descriptions read from a trace: the grammar's
#                    parser and the command's decoder and exporters' helpers
#                    (fuzz/typed_fuzz.c: src/api/typedesc.c, cli/enrich/typed.c)
#   spans_fuzz       the span engine of the command (cli/enrich/spans.c) on events in
#                    any order, with its invariants checked (fuzz/spans_fuzz.c)
#   join_fuzz        POSIXTRACE_JOIN, the streams a process joins at load
#                    (src/producer/join.c; the library built as for stream_fuzz)
#   query_fuzz       the SQL tables of `posixtrace query` and of the SQLite
#                    extension (cli/query/) over a log, every table and
#                    every reading path (fuzz/query_fuzz.c; the library
#                    built sanitized, with its own clock; SQLite as it is)
#   read_fuzz        the reading commands over a log as a user runs them
#                    (fuzz/read_fuzz.c: info, stats, show --processes, and
#                    export to chrome, perfetto, html and ctf; every part of
#                    the command but main.c, without libdw), each ending
#                    with status 0 or 1
#   where_fuzz       the --where expression of the reading commands
#                    (fuzz/where_fuzz.c: cli/read/where.c, parse and evaluate)
#   view_fuzz        what `posixtrace view` does with a request before it
#                    reads the log (cli/write/view_req.c) and its JSON strings
#                    (cli/read/vbuf.c)
#   chunk_fuzz       a stream's chunk as the log writer walks it before it
#                    writes it as a CHUNK block (records any traced process
#                    can write) and as a reader makes it an events block:
#                    both take the same records and find the same counts
#                    and times (fuzz/chunk_fuzz.c: src/log/logchunk.c)
#   make fuzz        build them in $(BUILD)/fuzz/
#   make fuzz-run    each of FUZZ_TARGETS for FUZZ_SECONDS (those in
#                    FUZZ_QUICK for a third of it: small grammars, whose
#                    edges of a 60 s run are 97-100% reached in 15 s).
#                    New inputs go to
#                    $(BUILD)/fuzz/corpus-<target>, which is kept from run to
#                    run; the committed corpus is read as seeds.  Prints the
#                    corpus size before and after; crashes go to
#                    $(BUILD)/fuzz/<target>-crash-*
#   make fuzz-merge  add the inputs of those corpora that reach new coverage
#                    to the committed corpus (libFuzzer -merge=1), to commit
#   make fuzz-seeds  regenerate fuzz/corpus (logs, fuzz/gen_seeds.c) and
#                    fuzz/corpus-stream (fuzz/stream_seeds.sh)
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_QUICK   ?= relayd_fuzz join_fuzz typed_fuzz spans_fuzz view_fuzz chunk_fuzz
# a target's seconds (shell arithmetic, at least 1: 0 is libFuzzer's "no limit")
fuzz_secs     = $(if $(filter $(1),$(FUZZ_QUICK)),$$(( $(FUZZ_SECONDS) / 3 > 0 ? $(FUZZ_SECONDS) / 3 : 1 )),$(FUZZ_SECONDS))
FUZZ_MAX_LEN ?= 8192
FUZZ_TARGETS ?= log_fuzz log_fuzz_nocrc logapi_fuzz stream_fuzz relayd_fuzz typed_fuzz spans_fuzz view_fuzz \
                join_fuzz where_fuzz chunk_fuzz read_fuzz $(if $(filter 1,$(SQLITE)),query_fuzz,)
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined
# (PT_LOG_CHECK_MADE: an events block made of a CHUNK block is walked too,
# and the walk must find what the making said: logcheck.c)
FUZZ_CFLAGS  := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -g -O1 -Iinclude -Isrc \
                -DPT_LOG_CHECK_MADE -fsanitize=fuzzer $(FUZZ_SAN)
FUZZ_SRC     := fuzz/log_fuzz.c src/log/logread.c src/log/logiter.c src/log/logsum.c src/log/logcheck.c \
                src/log/logchunk.c \
                src/log/objstore.c
FUZZ_DEPS    := $(FUZZ_SRC) $(wildcard src/log/*.h) src/shm/layout.h include/trace.h fuzz/fuzz_file.h
# the committed corpus of each target
FUZZ_CORPUS_log_fuzz       := fuzz/corpus
FUZZ_CORPUS_log_fuzz_nocrc := fuzz/corpus
FUZZ_CORPUS_logapi_fuzz    := fuzz/corpus
FUZZ_CORPUS_stream_fuzz    := fuzz/corpus-stream
FUZZ_CORPUS_relayd_fuzz    := fuzz/corpus-relayd
FUZZ_CORPUS_typed_fuzz     := fuzz/corpus-typed
FUZZ_CORPUS_spans_fuzz     := fuzz/corpus-spans
FUZZ_CORPUS_view_fuzz      := fuzz/corpus-view
FUZZ_CORPUS_join_fuzz      := fuzz/corpus-join
FUZZ_CORPUS_query_fuzz     := fuzz/corpus
FUZZ_CORPUS_read_fuzz      := fuzz/corpus
FUZZ_CORPUS_where_fuzz     := fuzz/corpus-where
FUZZ_CORPUS_chunk_fuzz     := fuzz/corpus-chunk
# the library for stream_fuzz: coverage-instrumented, sanitized, and with
# its clock and thread ids taken from the target
FUZZ_LIB_OBJ := $(LIB_SRC:src/%.c=$(BUILD)/fuzz/obj/%.o)
FUZZ_LIB_CFLAGS := $(filter-out -fsanitize=fuzzer,$(FUZZ_CFLAGS)) -fsanitize=fuzzer-no-link \
                -Dclock_gettime=ptfuzz_clock_gettime -Dpthread_self=ptfuzz_thread_self
# the same with checksums ignored, for logapi_fuzz
FUZZ_NC_OBJ  := $(LIB_SRC:src/%.c=$(BUILD)/fuzz/objnc/%.o)
FUZZ_OPTS     = -rss_limit_mb=512 -timeout=5 -max_len=$(FUZZ_MAX_LEN)
# files and bytes in a directory
fuzz_size     = echo "$$(ls $(1) | wc -l) files, $$(cat $(1)/* 2>/dev/null | wc -c) bytes"

.PHONY: fuzz fuzz-run fuzz-merge fuzz-seeds
fuzz: $(FUZZ_TARGETS:%=$(BUILD)/fuzz/%)

$(BUILD)/fuzz/log_fuzz: $(FUZZ_DEPS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SRC) -o $@

$(BUILD)/fuzz/log_fuzz_nocrc: $(FUZZ_DEPS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -DPT_LOG_FUZZ_NOCRC $(FUZZ_SRC) -o $@

$(BUILD)/fuzz/obj/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_LIB_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/fuzz/objnc/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_LIB_CFLAGS) -DPT_LOG_FUZZ_NOCRC $(DEPFLAGS) -c $< -o $@

$(BUILD)/fuzz/logapi_fuzz: fuzz/logapi_fuzz.c fuzz/fuzz_file.h $(FUZZ_NC_OBJ)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) fuzz/logapi_fuzz.c $(FUZZ_NC_OBJ) -o $@ -lpthread

$(BUILD)/fuzz/stream_fuzz: fuzz/stream_fuzz.c $(FUZZ_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) fuzz/stream_fuzz.c $(FUZZ_LIB_OBJ) -o $@ -lpthread

$(BUILD)/fuzz/join_fuzz: fuzz/join_fuzz.c $(FUZZ_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) fuzz/join_fuzz.c $(FUZZ_LIB_OBJ) -o $@ -lpthread

$(BUILD)/fuzz/relayd_fuzz: fuzz/relayd_fuzz.c cli/write/relayd_proto.c $(CLI_HDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) fuzz/relayd_fuzz.c cli/write/relayd_proto.c -o $@
$(BUILD)/fuzz/typed_fuzz: fuzz/typed_fuzz.c cli/enrich/typed.c cli/read/layout.c $(CLI_HDR) src/api/typedesc.c src/ext.h src/shm/mapent.h src/log/batch.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) fuzz/typed_fuzz.c src/api/typedesc.c -o $@
$(BUILD)/fuzz/where_fuzz: fuzz/where_fuzz.c cli/read/where.c $(CLI_HDR) include/trace.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) fuzz/where_fuzz.c -o $@ -lm
$(BUILD)/fuzz/chunk_fuzz: fuzz/chunk_fuzz.c src/log/logchunk.c $(wildcard src/log/*.h) src/shm/layout.h include/trace.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) fuzz/chunk_fuzz.c src/log/logchunk.c -o $@
$(BUILD)/fuzz/view_fuzz: fuzz/view_fuzz.c cli/write/view_req.c cli/read/vbuf.c $(CLI_HDR) include/trace.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) fuzz/view_fuzz.c cli/write/view_req.c cli/read/vbuf.c -o $@

# query_fuzz: the library as it is (no redirected clock), and the command's
# read, enrich and query layers (without libdw: call sites as file+offset)
QFUZZ_OBJ := $(LIB_SRC:src/%.c=$(BUILD)/fuzz/qobj/%.o)
QFUZZ_SRC := fuzz/query_fuzz.c $(filter-out $(SQL_EXT_SRC) cli/query/print.c,\
             $(wildcard cli/read/*.c cli/enrich/*.c cli/query/*.c))
$(BUILD)/fuzz/qobj/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(filter-out -fsanitize=fuzzer,$(FUZZ_CFLAGS)) -fsanitize=fuzzer-no-link \
	  $(DEPFLAGS) -c $< -o $@
$(BUILD)/fuzz/query_fuzz: $(QFUZZ_SRC) $(QFUZZ_OBJ) $(CLI_HDR) fuzz/fuzz_file.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(QFUZZ_SRC) $(QFUZZ_OBJ) -o $@ -lsqlite3 -lm -lpthread

# read_fuzz: the same library, and every part of the command but main.c
# (info, stats, show, export), without libdw and libmicrohttpd
RFUZZ_SRC  := fuzz/read_fuzz.c $(filter-out cli/cmd/main.c,$(CLI_SRC))
RFUZZ_DEFS := $(PF_DEFS) $(if $(filter 1,$(SQLITE)),-DPT_HAVE_SQLITE $(shell pkg-config --cflags sqlite3),)
RFUZZ_LIBS := $(PF_LIBS) $(if $(filter 1,$(SQLITE)),$(shell pkg-config --libs sqlite3),) -lm -lpthread
$(BUILD)/fuzz/read_fuzz: $(RFUZZ_SRC) $(QFUZZ_OBJ) $(CLI_HDR) fuzz/fuzz_file.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(RFUZZ_DEFS) $(RFUZZ_SRC) $(QFUZZ_OBJ) -o $@ $(RFUZZ_LIBS)

$(BUILD)/fuzz/spans_fuzz: fuzz/spans_fuzz.c cli/enrich/spans.c cli/read/hist.c cli/read/layout.c src/api/typedesc.c $(CLI_HDR) include/trace.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) fuzz/spans_fuzz.c cli/enrich/spans.c cli/read/hist.c cli/read/layout.c \
	  src/api/typedesc.c -o $@

fuzz-run: fuzz
	@$(foreach f,$(FUZZ_TARGETS),\
	  work=$(BUILD)/fuzz/corpus-$(f) && mkdir -p $$work && \
	  echo "fuzz: $(f) for $(call fuzz_secs,$(f)) s; corpus before: $$($(call fuzz_size,$$work)) + $(FUZZ_CORPUS_$(f)): $$($(call fuzz_size,$(FUZZ_CORPUS_$(f))))" && \
	  $(BUILD)/fuzz/$(f) -max_total_time=$(call fuzz_secs,$(f)) $(FUZZ_OPTS) -print_final_stats=1 \
	    -artifact_prefix=$(BUILD)/fuzz/$(f)- $$work $(FUZZ_CORPUS_$(f)) && \
	  echo "fuzz: $(f) corpus after: $$($(call fuzz_size,$$work))" &&) true

fuzz-merge: fuzz
	@$(foreach f,$(FUZZ_TARGETS),\
	  work=$(BUILD)/fuzz/corpus-$(f) && mkdir -p $$work && \
	  echo "fuzz-merge: $(f): $(FUZZ_CORPUS_$(f)) was $$($(call fuzz_size,$(FUZZ_CORPUS_$(f))))" && \
	  $(BUILD)/fuzz/$(f) -merge=1 $(FUZZ_OPTS) -artifact_prefix=$(BUILD)/fuzz/$(f)-merge- \
	    $(FUZZ_CORPUS_$(f)) $$work 2>$(BUILD)/fuzz/merge-$(f).log && \
	  echo "fuzz-merge: $(f): $(FUZZ_CORPUS_$(f)) now $$($(call fuzz_size,$(FUZZ_CORPUS_$(f))))" &&) true

$(BUILD)/fuzz/gen_seeds: fuzz/gen_seeds.c $(wildcard src/log/*.c) $(wildcard src/log/*.h) src/shm/layout.h
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -Isrc fuzz/gen_seeds.c $(wildcard src/log/*.c) -o $@

fuzz-seeds: $(BUILD)/fuzz/gen_seeds
	@mkdir -p fuzz/corpus fuzz/corpus-stream
	$(BUILD)/fuzz/gen_seeds fuzz/corpus
	sh fuzz/stream_seeds.sh fuzz/corpus-stream
# ------------------------------------------------------------- end fuzz
-include bench/lttng/lttng.mk

# the headers each object, test, example and bench was built from (DEPFLAGS)
-include $(wildcard $(BUILD)/obj/*/*.d $(BUILD)/cli/*/*.d $(BUILD)/tests/*.d \
  $(BUILD)/examples/*.d $(BUILD)/bench/*.d $(BUILD)/fuzz/obj/*/*.d $(BUILD)/sqlext/*/*.d \
  $(BUILD)/fuzz/qobj/*/*.d $(BUILD)/fuzz/objnc/*/*.d)

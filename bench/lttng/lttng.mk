# bench/lttng/lttng.mk -- the same-run comparison with LTTng-UST, included
# from the Makefile (`-include bench/lttng/lttng.mk`).
#
#   make bench-lttng     build $(BUILD)/bench-lttng/lttng_cmp and run it
#                        through bench/lttng/run.sh; prints a Markdown
#                        report.  Prints "SKIP: reason" and succeeds if
#                        lttng-tools or the lttng-ust (>= 2.13) headers
#                        are missing.  `make bench` runs it first.
#                        It also builds $(BUILD)/bench-lttng/lttng_fleet,
#                        LTTng-UST's side of bench/fleet (which runs it
#                        through run.sh, in the same run as its own fleet).
#                        And $(BUILD)/bench-lttng/lttng_keep, LTTng-UST's
#                        side of bench/keep (events kept at full speed).
#   LTTNG_ARGS="-r 7 -n 20000000"   repetitions, events per repetition
#
# Debian packages: liblttng-ust-dev lttng-tools (babeltrace2 to count the
# events LTTng wrote; without it only lttng's own discard counter is shown).

LTTNG_DIR   := bench/lttng
LTTNG_OUT    = $(BUILD)/bench-lttng
LTTNG_BIN    = $(LTTNG_OUT)/lttng_cmp
LTTNG_CFLAGS = $(ALLCFLAGS) -I$(LTTNG_DIR)
LTTNG_LIBS   = $(or $(shell pkg-config --libs lttng-ust 2>/dev/null),-llttng-ust -llttng-ust-common -ldl)
LTTNG_FLEET  = $(LTTNG_OUT)/lttng_fleet
LTTNG_KEEP   = $(LTTNG_OUT)/lttng_keep
LTTNG_ARGS  ?=

# bench/fleet runs $(LTTNG_FLEET) through run.sh when it is built
TEST_DEFS_fleet := -DPT_SRC_DIR='"$(abspath .)"'
# ... and bench/keep $(LTTNG_KEEP)
TEST_DEFS_keep := -DPT_SRC_DIR='"$(abspath .)"'

$(LTTNG_OUT)/%.o: $(LTTNG_DIR)/%.c $(LTTNG_DIR)/ptbench_tp.h bench/bench_util.h include/trace.h
	@mkdir -p $(dir $@)
	$(CC) $(LTTNG_CFLAGS) -c $< -o $@

$(LTTNG_FLEET): $(LTTNG_OUT)/lttng_fleet.o $(LTTNG_OUT)/ptbench_tp.o
	$(CC) $(ALLCFLAGS) $^ -o $@ $(LTTNG_LIBS) $(LDLIBS)

$(LTTNG_KEEP): $(LTTNG_OUT)/lttng_keep.o $(LTTNG_OUT)/ptbench_tp.o
	$(CC) $(ALLCFLAGS) $^ -o $@ $(LTTNG_LIBS) $(LDLIBS)

$(LTTNG_BIN): $(LTTNG_OUT)/lttng_cmp.o $(LTTNG_OUT)/ptbench_tp.o $(STATIC)
	$(CC) $(ALLCFLAGS) $^ -o $@ $(LTTNG_LIBS) $(LDLIBS)

# (three lines, so that make -n, which runs the line that calls $(MAKE),
# runs nothing else: a reason to skip is kept in $(LTTNG_SKIP))
LTTNG_SKIP   = $(BUILD)/bench-lttng.skip
.PHONY: bench-lttng
bench-lttng:
	@mkdir -p $(BUILD) && reason=$$(sh $(LTTNG_DIR)/run.sh --check '$(CC)'); \
	if [ -n "$$reason" ]; then echo "SKIP: bench-lttng: $$reason"; echo "$$reason" >$(LTTNG_SKIP); \
	else rm -f $(LTTNG_SKIP); fi
	@[ -e $(LTTNG_SKIP) ] || $(MAKE) --no-print-directory $(LTTNG_BIN) $(LTTNG_FLEET) $(LTTNG_KEEP)
	@[ -e $(LTTNG_SKIP) ] || sh $(LTTNG_DIR)/run.sh $(LTTNG_BIN) $(LTTNG_ARGS)


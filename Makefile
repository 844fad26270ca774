# posixtrace -- GNU make build.
#   make                 library (static + shared), examples
#   make check           build and run every test (tests/*.c)
#   make check SANITIZE=address,undefined | SANITIZE=thread
#   make bench           micro-benchmarks (not part of check)
#   make demo            record and read back a bundled example
#   make install PREFIX=/usr/local

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

LIB_SRC  := $(wildcard src/*.c)
LIB_OBJ  := $(LIB_SRC:src/%.c=$(BUILD)/obj/%.o)
STATIC   := $(BUILD)/libposixtrace.a
SHARED   := $(BUILD)/libposixtrace.so.$(VERSION)
TESTS    := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/*.c))
EXAMPLES := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))
BENCHES  := $(patsubst bench/%.c,$(BUILD)/bench/%,$(wildcard bench/*.c))

.PHONY: all lib check bench demo install clean examples
all: lib examples
lib: $(STATIC) $(SHARED)

$(BUILD)/obj/%.o: src/%.c $(wildcard src/*.h) include/trace.h
	@mkdir -p $(dir $@)
	$(CC) $(LIBCFLAGS) -c $< -o $@

$(STATIC): $(LIB_OBJ)
	rm -f $@
	$(AR) rcs $@ $^

$(SHARED): $(LIB_OBJ) src/libposixtrace.map
	$(CC) $(ALLCFLAGS) -shared -Wl,-soname,libposixtrace.so.$(SOVER) \
	  -Wl,--version-script=src/libposixtrace.map -o $@ $(LIB_OBJ) $(LDLIBS)
	ln -sf libposixtrace.so.$(VERSION) $(BUILD)/libposixtrace.so.$(SOVER)
	ln -sf libposixtrace.so.$(VERSION) $(BUILD)/libposixtrace.so

$(BUILD)/tests/%: tests/%.c tests/t.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -Itests -DPT_BUILD_DIR='"$(abspath $(BUILD))"' $< -o $@ $(STATIC) $(LDLIBS) -ldl

# <trace.h> must also be valid C++ and pedantic C99
$(BUILD)/header-ok: include/trace.h
	@mkdir -p $(dir $@)
	printf '#include <trace.h>\nint main(void){return 0;}\n' > $(BUILD)/hdr.c
	$(CC) -std=c99 -pedantic -Wall -Wextra -Werror -Iinclude -fsyntax-only $(BUILD)/hdr.c
	$${CXX:-c++} -x c++ -std=c++11 -Wall -Wextra -Werror -Iinclude -fsyntax-only $(BUILD)/hdr.c
	touch $@

$(BUILD)/examples/%: examples/%.c $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) $< -o $@ $(STATIC) $(LDLIBS)

$(BUILD)/bench/%: bench/%.c $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) $< -o $@ $(STATIC) $(LDLIBS)

examples: $(EXAMPLES)

check: $(TESTS) $(SHARED) $(BUILD)/header-ok
	@BUILD=$(BUILD) sh tests/run.sh $(TESTS)

bench: $(BENCHES)
	@for b in $(BENCHES); do $$b || exit 1; done

demo: $(EXAMPLES)
	@$(BUILD)/examples/demo

install: lib
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 include/trace.h $(DESTDIR)$(PREFIX)/include/trace.h
	install -m 644 $(STATIC) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(SHARED) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libposixtrace.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libposixtrace.so.$(SOVER)
	ln -sf libposixtrace.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libposixtrace.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' posixtrace.pc.in \
	  > $(DESTDIR)$(PREFIX)/lib/pkgconfig/posixtrace.pc

clean:
	rm -rf build build-*

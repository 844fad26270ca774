/*
 * cli_perfetto_flood.c -- `posixtrace export --format perfetto` of an
 * 8-byte-payload flood (one thread, 200 000 events): in plain packets, the
 * bytes per event exactly as the encoding says; the compressed export
 * inflates to the same bytes and takes at most 20 bytes per event.
 * Decoded against the published schema when it is beside the repository,
 * else against tests/perfetto_min.proto alone: a clone checks its exports
 * too (pf_util.h).  Skipped without protoc.  Its shared parts, the traced
 * program and the decoder: pf_export_util.h.
 */
#include <trace.h>
#include "t.h"
#include "helpers.h"
#include "cli_util.h"
#include "pf_util.h"
#include "pf_export_util.h"

/* The bytes of a varint. */
static int vsize(uint64_t v)
{
	int n = 1;
	for (; v >= 128; v >>= 7)
		n++;
	return n;
}

/* An 8-byte-payload flood, symbolized, exported in plain packets: each
 * event's packet is 19 bytes plus the varints of its timestamp delta and
 * of its value (0 to 199999, 1 to 3 bytes); nothing else in the file is
 * more than a few kB.  The deltas depend on the machine: the size without
 * them does not.  Then compressed (the default, with zlib): its
 * containers inflate to the very same packets, at most 20 bytes per event
 * in the file (issue 32's bound; about 2 to 4).  The times are printed
 * only (a loaded machine's). */
#define FLOOD_N 200000

static void run_flood(const char *self)
{
	char *err = NULL, num[32];
	struct x x;

	snprintf(num, sizeof num, "%d", FLOOD_N);
	const char *log = cli_path("flood.ptlog"), *pf = cli_path("flood.pftrace");
	const char *plain = cli_path("flood-plain.pftrace");
	CHECK_EQ(cli_run(CLI("record", "--no-loss", "-o", (char *)log, "--", (char *)self, "flood",
	                     num), NULL, &err), 0);
	free(err);
	double t0 = t_now_s();
	REQUIRE(cli_run(CLI("export", "--format", "perfetto", "--no-compress", (char *)log, "-o",
	                    (char *)plain), NULL, NULL) == 0);
	double t1 = t_now_s();
	REQUIRE(cli_run(CLI("export", "--format", "perfetto", (char *)log, "-o", (char *)pf), NULL,
	                &err) == 0);
	double t2 = t_now_s();
	/* a build without zlib says it writes plain packets */
	CHECK_EQ(cli_contains(err, "built without zlib: plain packets"), !PF_CAN_COMPRESS);
	free(err);
	REQUIRE(decode(plain, cli_path("flood.txt"), &x, 1) == 0);
	CHECK_EQ(x.unresolved, 0);
	CHECK_EQ(x.f.containers, 0);
	long long flood = 0, bytes = 0, delta_bytes = 0, values_bad = 0;
	/* each at flood() (file+offset only, without libdw: in the program's file) */
	char site[160];
	snprintf(site, sizeof site, "%s+0x", cli_has_libdw() ? "flood" : strrchr(self, '/') + 1);
	for (int t = 0; t < x.nt; t++)
		for (int e = 0; e < x.t[t].ne; e++) {
			const struct xev *v = &x.t[t].e[e];
			unsigned long long u;
			if (strcmp(v->name, "flood"))
				continue;
			values_bad += sscanf(v->val, "u64=%llu", &u) != 1 || u != (unsigned long long)flood;
			values_bad += !v->sym || strncmp(v->sym, site, strlen(site));
			flood++;
			bytes += 19 + vsize(v->delta) + vsize(u);
			delta_bytes += vsize(v->delta);
		}
	CHECK_EQ(flood, FLOOD_N);
	CHECK_EQ(values_bad, 0);
	long long size = x.f.file_bytes;
	CHECK(size >= bytes && size - bytes < 8192);
	printf("perfetto, plain packets: %lld bytes for %llu events, %.2f bytes per event (8-byte "
	       "payloads, symbolized), %.2f of them the time deltas\n", size,
	       (unsigned long long)x.events, (double)size / (double)x.events,
	       (double)delta_bytes / FLOOD_N);
	CHECK_EQ(bytes - delta_bytes, 19ll * FLOOD_N + 128 + 2 * (16384 - 128) + 3 * (FLOOD_N - 16384));

	struct pfile zf;
	const char *inflated = cli_path("flood.pftrace.plain");
	if (!PF_CAN_COMPRESS) {
		printf("perfetto: built without zlib, compressed packets not tried\n");
	} else if (unpack(pf, inflated, &zf) == 0) {
		CHECK(zf.containers >= size / (256 << 10) && zf.top_plain == 0);
		CHECK_EQ(zf.packet_bytes, size);
		char *a = NULL, *b = NULL;
		size_t na = 0, nb = 0;
		FILE *fa = fopen(plain, "rb"), *fb = fopen(inflated, "rb");
		REQUIRE(fa && fb);
		na = fread(a = malloc((size_t)size + 1), 1, (size_t)size + 1, fa);
		nb = fread(b = malloc((size_t)size + 1), 1, (size_t)size + 1, fb);
		CHECK(na == (size_t)size && nb == (size_t)size && memcmp(a, b, na) == 0);
		fclose(fa);
		fclose(fb);
		free(a);
		free(b);
		printf("perfetto, compressed: %lld bytes in %ld containers, %.2f bytes per event\n",
		       zf.file_bytes, zf.containers, (double)zf.file_bytes / (double)x.events);
		CHECK(zf.file_bytes <= 20 * (long long)x.events);
	}
	printf("perfetto: export of %d events (the log read and the trace written) took %.2f s plain, "
	       "%.2f s %s, on a machine others load\n", FLOOD_N, t1 - t0, t2 - t1,
	       PF_CAN_COMPRESS ? "compressed" : "again (no zlib)");
	free_x(&x);
}

int main(int argc, char **argv)
{
	return pf_main(argc, argv, run_flood);
}

/*
 * ctf_text.c -- what the two CTF 1.8 writers share: export_ctf.c (a log
 * as a CTF directory) and relay_ctf.c (live packets for lttng-relayd).
 * Little-endian fields, random uuids, TSDL string literals, and the
 * common text of the metadata: the integer types, the trace block with
 * its packet header, the environment and the clock.
 */
#include <stdio.h>
#include <sys/random.h>
#include "write.h"

void ctf_le(unsigned char *o, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		o[i] = (unsigned char)(v >> (8 * i));
}

int ctf_uuid_new(unsigned char u[16])
{
	if (getrandom(u, 16, 0) != 16)
		return -1;
	u[6] = (u[6] & 0x0f) | 0x40; /* version 4, variant 1: never the nil uuid */
	u[8] = (u[8] & 0x3f) | 0x80;
	return 0;
}

void ctf_uuid_str(char out[37], const unsigned char u[16])
{
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
	         u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
	         u[13], u[14], u[15]);
}

/* A TSDL string literal: printable ASCII only, quotes and backslashes
 * escaped (whatever a name or a path holds, the metadata stays valid). */
void ctf_tsdl_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if ((unsigned char)*s >= 0x20 && (unsigned char)*s < 0x7f)
			fputc(*s, f);
	}
	fputc('"', f);
}

void ctf_tsdl_trace(FILE *f, const unsigned char uuid[16], int instance_id)
{
	char u[37];

	ctf_uuid_str(u, uuid);
	fprintf(f, "/* CTF 1.8 */\n\n"
	           "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
	           "typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
	           "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
	           "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
	           "typealias integer { size = 32; align = 8; signed = true; } := int32_t;\n"
	           "typealias integer { size = 64; align = 8; signed = false; base = 16; } "
	           ":= uint64_hex_t;\n\n"
	           "trace {\n\tmajor = 1;\n\tminor = 8;\n\tuuid = \"%s\";\n\tbyte_order = le;\n"
	           "\tpacket.header := struct {\n\t\tuint32_t magic;\n\t\tuint8_t uuid[16];\n"
	           "\t\tuint32_t stream_id;\n%s\t};\n};\n\n",
	        u, instance_id ? "\t\tuint64_t stream_instance_id;\n" : "");
}

void ctf_tsdl_env(FILE *f, const char *const kv[])
{
	fprintf(f, "env {\n\ttracer_name = \"posixtrace\";\n\ttracer_major = 0;\n"
	           "\ttracer_minor = 1;\n");
	for (; kv[0]; kv += 2) {
		fprintf(f, "\t%s = ", kv[0]);
		ctf_tsdl_str(f, kv[1]);
		fprintf(f, ";\n");
	}
	fprintf(f, "};\n\n");
}

void ctf_tsdl_clock(FILE *f, const unsigned char cuuid[16], uint64_t offset_s)
{
	char cu[37];

	ctf_uuid_str(cu, cuuid);
	fprintf(f, "clock {\n\tname = \"realtime\";\n\tuuid = \"%s\";\n"
	           "\tdescription = \"CLOCK_REALTIME, as recorded by posixtrace\";\n"
	           "\tfreq = 1000000000;\n\tprecision = 1;\n\toffset_s = %llu;\n\toffset = 0;\n"
	           "\tabsolute = true;\n};\n\n"
	           "typealias integer {\n\tsize = 64; align = 8; signed = false;\n"
	           "\tmap = clock.realtime.value;\n} := uint64_clock_t;\n",
	        cu, (unsigned long long)offset_s);
}

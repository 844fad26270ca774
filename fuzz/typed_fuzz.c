/*
 * typed_fuzz.c -- libFuzzer target for payload descriptions read from a
 * trace (untrusted: any process that records into a stream writes them):
 * the grammar's parser (src/api/typedesc.c, pt_ext_type_parse) and the
 * command's decoder and exporters' helpers (cli/enrich/typed.c).
 *
 * Input: a description up to the first NUL byte (at most 300 bytes), then
 * the payload.  Checked: no crash, out-of-bounds access or undefined
 * behaviour (ASan, UBSan); every output NUL-terminated within its buffer;
 * a payload that decodes has every field inside it; the CTF bytes fit
 * their buffer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../cli/read/layout.c"
#include "../cli/enrich/typed.c"

/* what typedesc.c and typed.c call of the rest of the library */
int pt_typemap_set(unsigned id, const char *desc)
{
	(void)id, (void)desc;
	return 0;
}

int pt_ext_types(trace_id_t trid, size_t from, struct pt_ext_type *out, size_t cap, size_t *n)
{
	(void)trid, (void)from, (void)out, (void)cap;
	*n = 0;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char desc[301], out[700];
	const uint8_t *z = memchr(data, 0, size < 300 ? size : 300);
	size_t dl = z ? (size_t)(z - data) : (size < 300 ? size : 300);
	memcpy(desc, data, dl);
	desc[dl] = 0;
	const unsigned char *p = data + dl + (z != NULL);
	size_t len = size - dl - (z != NULL);

	struct pt_ext_field f[PT_EXT_FIELDS_MAX];
	size_t n = 0, at = 0;
	if (pt_ext_type_parse(desc, f, PT_EXT_FIELDS_MAX, &n, &at) == 0) {
		if (n == 0 || n > PT_EXT_FIELDS_MAX || at > dl)
			abort();
	}
	struct typed_at ta[PT_EXT_FIELDS_MAX];
	if (typed_layout(desc, p, len, ta, &n, out, sizeof out) == 0)
		for (size_t i = 0; i < n; i++)
			if (ta[i].off > len || ta[i].len > len - ta[i].off)
				abort();
	if (!memchr(out, 0, sizeof out))
		abort();
	for (size_t cap = 1; cap <= sizeof out; cap *= 7) {
		typed_decode(out, cap, desc, p, len);
		if (!memchr(out, 0, cap))
			abort();
		typed_misfit(out, cap, desc, p, len, size & 1);
		if (!memchr(out, 0, cap))
			abort();
		typed_json_args(out, cap, desc, p, len);
		if (!memchr(out, 0, cap))
			abort();
		typed_tsdl_fields(out, cap, desc, "\t");
		if (!memchr(out, 0, cap))
			abort();
	}
	unsigned char ctf[256];
	long k = typed_ctf_payload(ctf, sizeof ctf, desc, p, len);
	if (k > (long)sizeof ctf)
		abort();
	return 0;
}

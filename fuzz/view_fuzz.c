/*
 * view_fuzz.c -- libFuzzer target for what `posixtrace view` does with a
 * request before it reads the log (cli/write/view_req.c: the Host and token
 * checks, the path, each argument) and for the JSON strings of its
 * answers (cli/read/vbuf.c).  The input is split at newlines into method,
 * path, Host header, token and query string ("k=v&k=v", the values as
 * libmicrohttpd would hand them over: a key without '=' has no value);
 * the rest of the input is escaped as a JSON string.  Checked: a refusal
 * is one of the statuses the server sends; an accepted request is
 * within range (from <= to, 1 <= cols <= VIEW_MAX_COLS) and carried
 * the token and a right Host; the JSON string has no raw control
 * character, quote or markup character inside.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../cli/write/write.h"

#define PORT 8080
static const char token[] = "0123456789abcdef0123456789abcdef";

struct args { char *q; char val[64][256]; };

static const char *arg(void *ctx, const char *key)
{
	struct args *a = ctx;
	size_t kn = strlen(key), i = 0;

	for (char *p = a->q; p && *p && i < 64; i++) {
		char *amp = strchr(p, '&'), *eq = strchr(p, '=');
		size_t n = amp ? (size_t)(amp - p) : strlen(p);
		if (eq && eq < p + n && (size_t)(eq - p) == kn && !memcmp(p, key, kn)) {
			size_t vn = n - kn - 1 < 255 ? n - kn - 1 : 255;
			memcpy(a->val[i], eq + 1, vn);
			a->val[i][vn] = 0;
			return a->val[i];
		}
		p = amp ? amp + 1 : NULL;
	}
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), *f[6] = { 0 };
	static struct args a;
	struct vreq r;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	char *p = s;
	for (int i = 0; i < 6; i++) {
		f[i] = p;
		p = p ? strchr(p, '\n') : NULL;
		if (p)
			*p++ = 0;
	}
	/* a query with the right token unless the fourth field gives one */
	char q[4096];
	snprintf(q, sizeof q, "t=%s&%s", f[3] && f[3][0] ? f[3] : token, f[4] ? f[4] : "");
	a.q = q;
	int st = view_route(f[0], f[1], f[2], PORT, token, arg, &a, &r);
	if (st != 0 && st != 400 && st != 403 && st != 404 && st != 405)
		abort();
	if (st == 0) {
		if (!view_host_ok(f[2], PORT) || strcmp(arg(&a, "t"), token))
			abort();
		if (r.route == VR_QUERY && (r.from > r.to || r.cols < 1 || r.cols > VIEW_MAX_COLS))
			abort();
	}
	struct vbuf b = { 0 };
	vb_str(&b, f[5] ? f[5] : "");
	for (size_t i = 1; !b.oom && i + 1 < b.n; i++) {
		unsigned char c = (unsigned char)b.p[i];
		if (c < 0x20 || c == '<' || c == '>' || c == '&' ||
		    (c == '"' && b.p[i - 1] != '\\'))
			abort();
	}
	free(b.p);
	free(s);
	return 0;
}

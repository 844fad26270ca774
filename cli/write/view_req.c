/*
 * view_req.c -- the checks every request to `posixtrace view` passes
 * before anything reads the log: the method (GET only), the Host header
 * (127.0.0.1:PORT or localhost:PORT, or localhost on a Unix socket, so
 * that a page of another origin
 * cannot reach the server through a DNS name rebound to loopback), the
 * token (compared in constant time), the path (the page and three
 * queries, nothing from the file system) and each argument (decimal
 * numbers in range, the whole string).  No HTTP library here: the
 * server (view.c) hands over what libmicrohttpd parsed, and the fuzzer
 * (fuzz/view_fuzz.c) hands over arbitrary bytes.
 */
#include <string.h>
#include "write.h"

int view_parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!s || !*s || strlen(s) > 20)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

int view_host_ok(const char *host, unsigned port)
{
	static const char *const names[] = { "127.0.0.1:", "localhost:" };
	uint64_t p;

	if (!host)
		return 0;
	if (port == 0) /* on a Unix socket (--unix): the URL it printed */
		return strcmp(host, "localhost") == 0;
	for (size_t i = 0; i < 2; i++) {
		size_t n = strlen(names[i]);
		if (strncmp(host, names[i], n) == 0)
			return view_parse_u64(host + n, &p) == 0 && p == port;
	}
	return 0;
}

/* Constant time in the token's bytes: the position of the first
 * difference is not told by the time the refusal takes. */
static int token_ok(const char *given, const char *token)
{
	unsigned char d = 0;

	if (!given || strlen(given) != VIEW_TOKEN_LEN || strlen(token) != VIEW_TOKEN_LEN)
		return 0;
	for (size_t i = 0; i < VIEW_TOKEN_LEN; i++)
		d |= (unsigned char)(given[i] ^ token[i]);
	return d == 0;
}

static int num(varg_fn arg, void *ctx, const char *key, uint64_t *out)
{
	return view_parse_u64(arg(ctx, key), out);
}

int view_route(const char *method, const char *path, const char *host, unsigned port,
               const char *token, varg_fn arg, void *ctx, struct vreq *out)
{
	uint64_t v;

	memset(out, 0, sizeof *out);
	if (!view_host_ok(host, port))
		return 403;
	if (!token_ok(arg(ctx, "t"), token))
		return 403;
	if (!method || (strcmp(method, "GET") && strcmp(method, "HEAD")))
		return 405;
	if (!path)
		return 404;
	if (!strcmp(path, "/")) {
		out->route = VR_PAGE;
		return 0;
	}
	if (!strcmp(path, "/meta")) {
		out->route = VR_META;
		return 0;
	}
	if (!strcmp(path, "/query")) {
		out->route = VR_QUERY;
		if (num(arg, ctx, "from", &out->from) || num(arg, ctx, "to", &out->to) ||
		    out->to < out->from || num(arg, ctx, "cols", &v) || v == 0 || v > VIEW_MAX_COLS)
			return 400;
		out->cols = (unsigned)v;
		return 0;
	}
	if (!strcmp(path, "/event")) {
		out->route = VR_EVENT;
		if (num(arg, ctx, "at", &out->at) || num(arg, ctx, "lane", &v) || v >= UINT32_MAX)
			return 400;
		out->lane = (uint32_t)v;
		if (arg(ctx, "n") ? num(arg, ctx, "n", &out->n) : 0)
			return 400;
		return 0;
	}
	return 404;
}

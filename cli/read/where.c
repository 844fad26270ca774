/*
 * where.c -- the --where expression of the reading commands: comparisons
 * of a payload's typed fields with literals, joined by && and ||, negated
 * by !, grouped by parentheses:
 *
 *   status<0   job==42 && name=="worker-*"   !(cost_us<=100 || path!="/tmp/x*")
 *
 * A string literal ("..." or '...', \-escapes for the quote and the
 * backslash) compared with == or != is a glob (* any run, ? any one
 * character, \ quotes the next); < <= > >= compare strings byte by byte.
 * Numbers are decimal, 0x hex, or with a fraction or exponent (a float).
 * An event whose type has no such field does not match the comparison.
 *
 * The expression comes from whoever runs the command, but a script may
 * build it from data it read: it is parsed as untrusted text, within
 * bounds (WHERE_MAX_LEN characters, WHERE_MAX_DEPTH nested levels,
 * WHERE_MAX_NODES nodes), without recursion deeper than those levels, and
 * evaluated without allocating.  fuzz/where_fuzz.c runs it on any input.
 * Self-contained (libc), so the fuzz target includes it whole.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "read.h"

enum { N_CMP, N_AND, N_OR, N_NOT };

struct wnode {
	int kind;
	int a, b;                 /* children (N_AND, N_OR: both; N_NOT: a) */
	int op;                   /* WHERE_EQ... */
	char field[WHERE_FIELD_MAX];
	struct where_val lit;     /* WV_STR (s: malloc'd, n bytes), WV_INT, WV_UINT or WV_FLOAT */
};

struct where {
	struct wnode *n;
	int nn, root;
};

struct wparse {
	const char *s, *p;
	struct where *w;
	char *err;
	size_t cap;
	int failed;
};

static void perr(struct wparse *P, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void perr(struct wparse *P, const char *fmt, ...)
{
	char what[160];
	va_list ap;

	if (P->failed)
		return;
	P->failed = 1;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	if (!P->cap)
		return;
	if (*P->p)
		snprintf(P->err, P->cap, "at character %d ('%.12s'): %s", (int)(P->p - P->s) + 1, P->p,
		         what);
	else
		snprintf(P->err, P->cap, "at its end: %s", what);
}

static void skip_space(struct wparse *P)
{
	while (*P->p == ' ' || *P->p == '\t' || *P->p == '\n' || *P->p == '\r')
		P->p++;
}

static int new_node(struct wparse *P, int kind)
{
	if (P->w->nn >= WHERE_MAX_NODES) {
		perr(P, "more than %d comparisons and operators", WHERE_MAX_NODES);
		return -1;
	}
	struct wnode *n = &P->w->n[P->w->nn];
	memset(n, 0, sizeof *n);
	n->kind = kind;
	n->a = n->b = -1;
	return P->w->nn++;
}

static int is_ident0(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_ident(char c)
{
	return is_ident0(c) || (c >= '0' && c <= '9');
}

static int parse_op(struct wparse *P)
{
	const char *p = P->p;
	int op = -1, len = 2;

	if (p[0] == '=' && p[1] == '=')
		op = WHERE_EQ;
	else if (p[0] == '!' && p[1] == '=')
		op = WHERE_NE;
	else if (p[0] == '<' && p[1] == '=')
		op = WHERE_LE;
	else if (p[0] == '>' && p[1] == '=')
		op = WHERE_GE;
	else if (p[0] == '<')
		op = WHERE_LT, len = 1;
	else if (p[0] == '>')
		op = WHERE_GT, len = 1;
	else if (p[0] == '=') {
		perr(P, "'=' is not a comparison: write '=='");
		return -1;
	}
	if (op < 0) {
		perr(P, "expected a comparison (== != < <= > >=)");
		return -1;
	}
	P->p += len;
	return op;
}

static int parse_string(struct wparse *P, struct where_val *v)
{
	char q = *P->p++;
	const char *start = P->p;
	size_t n = 0;

	/* first its length, then the copy */
	for (const char *p = start; *p != q; p++) {
		if (!*p) {
			perr(P, "a string with no closing %c", q);
			return -1;
		}
		if (*p == '\\' && (p[1] == q || p[1] == '\\'))
			p++;
		n++;
	}
	char *s = malloc(n + 1);
	if (!s) {
		perr(P, "out of memory");
		return -1;
	}
	size_t k = 0;
	const char *p = start;
	for (; *p != q; p++) {
		if (*p == '\\' && (p[1] == q || p[1] == '\\'))
			p++;
		s[k++] = *p;
	}
	s[k] = 0;
	P->p = p + 1;
	v->kind = WV_STR;
	v->s = s;
	v->n = k;
	return 0;
}

static int parse_number(struct wparse *P, struct where_val *v)
{
	const char *p = P->p;
	char *end = NULL;
	int neg = *p == '-';
	const char *d = p + (neg || *p == '+');

	if (!(*d >= '0' && *d <= '9') && !(*d == '.' && d[1] >= '0' && d[1] <= '9')) {
		perr(P, "expected a number or a string in quotes");
		return -1;
	}
	/* an integer if it is all digits (or 0x hex), else a float */
	int hex = d[0] == '0' && (d[1] == 'x' || d[1] == 'X');
	const char *e = d + (hex ? 2 : 0);
	while ((*e >= '0' && *e <= '9') || (hex && ((*e >= 'a' && *e <= 'f') || (*e >= 'A' && *e <= 'F'))))
		e++;
	if (!is_ident(*e) && *e != '.') {
		errno = 0;
		if (neg) {
			long long x = strtoll(p, &end, 0);
			if (!errno && end == e) {
				v->kind = WV_INT;
				v->i = x;
				P->p = e;
				return 0;
			}
		} else {
			unsigned long long x = strtoull(d, &end, 0);
			if (!errno && end == e) {
				v->kind = x <= INT64_MAX ? WV_INT : WV_UINT;
				v->i = (int64_t)(x <= INT64_MAX ? x : 0);
				v->u = x;
				P->p = e;
				return 0;
			}
		}
		if (errno == ERANGE) {
			perr(P, "a number too large for 64 bits");
			return -1;
		}
	}
	errno = 0;
	double f = strtod(p, &end);
	if (end == p || is_ident(*end) || *end == '.' || !isfinite(f)) {
		perr(P, "not a number");
		return -1;
	}
	v->kind = WV_FLOAT;
	v->f = f;
	P->p = end;
	return 0;
}

static int parse_or(struct wparse *P, int depth);

static int parse_unary(struct wparse *P, int depth)
{
	if (depth > WHERE_MAX_DEPTH) {
		perr(P, "nested more than %d levels", WHERE_MAX_DEPTH);
		return -1;
	}
	skip_space(P);
	if (*P->p == '!' && P->p[1] != '=') {
		P->p++;
		int k = new_node(P, N_NOT), a;
		if (k < 0 || (a = parse_unary(P, depth + 1)) < 0)
			return -1;
		P->w->n[k].a = a;
		return k;
	}
	if (*P->p == '(') {
		P->p++;
		int k = parse_or(P, depth + 1);
		if (k < 0)
			return -1;
		skip_space(P);
		if (*P->p != ')') {
			perr(P, "expected ')'");
			return -1;
		}
		P->p++;
		return k;
	}
	if (!is_ident0(*P->p)) {
		perr(P, *P->p ? "expected a field name" : "expected a comparison (FIELD OP VALUE)");
		return -1;
	}
	const char *f = P->p;
	while (is_ident(*P->p))
		P->p++;
	size_t fl = (size_t)(P->p - f);
	if (fl >= WHERE_FIELD_MAX) {
		P->p = f;
		perr(P, "a field name longer than %d characters", WHERE_FIELD_MAX - 1);
		return -1;
	}
	int k = new_node(P, N_CMP);
	if (k < 0)
		return -1;
	struct wnode *n = &P->w->n[k];
	memcpy(n->field, f, fl);
	n->field[fl] = 0;
	skip_space(P);
	if ((n->op = parse_op(P)) < 0)
		return -1;
	skip_space(P);
	if (*P->p == '"' || *P->p == '\'')
		return parse_string(P, &n->lit) ? -1 : k;
	return parse_number(P, &n->lit) ? -1 : k;
}

static int parse_and(struct wparse *P, int depth)
{
	int k = parse_unary(P, depth);

	while (k >= 0) {
		skip_space(P);
		if (P->p[0] != '&' || P->p[1] != '&') {
			if (P->p[0] == '&') {
				perr(P, "'&' is not an operator: write '&&'");
				return -1;
			}
			break;
		}
		P->p += 2;
		int j = new_node(P, N_AND), b;
		if (j < 0 || (b = parse_unary(P, depth)) < 0)
			return -1;
		P->w->n[j].a = k;
		P->w->n[j].b = b;
		k = j;
	}
	return k;
}

static int parse_or(struct wparse *P, int depth)
{
	int k = parse_and(P, depth);

	while (k >= 0) {
		skip_space(P);
		if (P->p[0] != '|' || P->p[1] != '|') {
			if (P->p[0] == '|') {
				perr(P, "'|' is not an operator: write '||'");
				return -1;
			}
			break;
		}
		P->p += 2;
		int j = new_node(P, N_OR), b;
		if (j < 0 || (b = parse_and(P, depth)) < 0)
			return -1;
		P->w->n[j].a = k;
		P->w->n[j].b = b;
		k = j;
	}
	return k;
}

struct where *where_parse(const char *expr, char *err, size_t cap)
{
	struct wparse P = { .s = expr, .p = expr, .err = err, .cap = cap };

	if (cap)
		err[0] = 0;
	if (strlen(expr) > WHERE_MAX_LEN) {
		if (cap)
			snprintf(err, cap, "longer than %d characters", WHERE_MAX_LEN);
		return NULL;
	}
	struct where *w = calloc(1, sizeof *w);
	if (w)
		w->n = calloc(WHERE_MAX_NODES, sizeof *w->n);
	if (!w || !w->n) {
		free(w);
		if (cap)
			snprintf(err, cap, "out of memory");
		return NULL;
	}
	P.w = w;
	w->root = parse_or(&P, 0);
	skip_space(&P);
	if (w->root >= 0 && *P.p)
		perr(&P, *P.p == ')' ? "a ')' with no '('" : "expected && or || or the end");
	if (P.failed || w->root < 0) {
		if (!P.failed && cap)
			snprintf(err, cap, "not an expression");
		where_free(w);
		return NULL;
	}
	return w;
}

void where_free(struct where *w)
{
	if (!w)
		return;
	for (int i = 0; i < w->nn; i++)
		if (w->n[i].kind == N_CMP && w->n[i].lit.kind == WV_STR)
			free((char *)w->n[i].lit.s);
	free(w->n);
	free(w);
}

int where_fields(const struct where *w, int (*fn)(void *arg, const char *field, int op,
                                                  const struct where_val *lit), void *arg)
{
	for (int i = 0; w && i < w->nn; i++)
		if (w->n[i].kind == N_CMP) {
			int r = fn(arg, w->n[i].field, w->n[i].op, &w->n[i].lit);
			if (r)
				return r;
		}
	return 0;
}

/* ------------------------------------------------------------ glob */
int glob_match(const char *pat, const char *s, size_t n)
{
	/* one backtrack point (the last '*'): linear in each, never recursive */
	const char *star = NULL;
	size_t i = 0, star_i = 0;

	for (;;) {
		if (*pat == '*') {
			while (*pat == '*')
				pat++;
			star = pat;
			star_i = i;
			continue;
		}
		if (i == n) {
			if (!*pat)
				return 1;
		} else if (*pat == '?' || (*pat == '\\' && pat[1] && pat[1] == s[i]) ||
		           (*pat && *pat != '\\' && *pat == s[i])) {
			pat += *pat == '\\' ? 2 : 1;
			i++;
			continue;
		}
		if (!star || star_i >= n)
			return 0;
		pat = star;
		i = ++star_i;
	}
}

/* ------------------------------------------------------------ evaluation */
static int sign(long double d)
{
	return d < 0 ? -1 : d > 0;
}

/* -1, 0, 1; 2: not ordered (a NaN, or a string against a number) */
static int compare(const struct where_val *a, const struct where_val *b)
{
	if ((a->kind == WV_STR) != (b->kind == WV_STR))
		return 2;
	if (a->kind == WV_STR) {
		size_t m = a->n < b->n ? a->n : b->n;
		int c = memcmp(a->s, b->s, m);
		return c ? (c < 0 ? -1 : 1) : a->n < b->n ? -1 : a->n > b->n;
	}
	if (a->kind == WV_FLOAT || b->kind == WV_FLOAT) {
		/* (long double holds every 64-bit integer exactly on x86-64) */
		long double x = a->kind == WV_FLOAT ? (long double)a->f
		              : a->kind == WV_INT ? (long double)a->i : (long double)a->u;
		long double y = b->kind == WV_FLOAT ? (long double)b->f
		              : b->kind == WV_INT ? (long double)b->i : (long double)b->u;
		if (x != x || y != y)
			return 2;
		return sign(x - y);
	}
	if (a->kind == WV_INT && b->kind == WV_INT)
		return a->i < b->i ? -1 : a->i > b->i;
	if (a->kind == WV_INT && a->i < 0) /* a negative against an unsigned */
		return -1;
	if (b->kind == WV_INT && b->i < 0)
		return 1;
	uint64_t x = a->kind == WV_INT ? (uint64_t)a->i : a->u;
	uint64_t y = b->kind == WV_INT ? (uint64_t)b->i : b->u;
	return x < y ? -1 : x > y;
}

static int eval_cmp(const struct wnode *n, where_get get, void *arg)
{
	struct where_val v;

	if (get(arg, n->field, &v) != 0)
		return 0;                        /* no such field in this event */
	if (v.kind == WV_STR && n->lit.kind == WV_STR && (n->op == WHERE_EQ || n->op == WHERE_NE)) {
		int m = glob_match(n->lit.s, v.s, v.n);
		return n->op == WHERE_EQ ? m : !m;
	}
	int c = compare(&v, &n->lit);
	if (c == 2)
		return n->op == WHERE_NE;
	switch (n->op) {
	case WHERE_EQ: return c == 0;
	case WHERE_NE: return c != 0;
	case WHERE_LT: return c < 0;
	case WHERE_LE: return c <= 0;
	case WHERE_GT: return c > 0;
	default: return c >= 0;
	}
}

int where_eval(const struct where *w, where_get get, void *arg)
{
	/* without recursion: an explicit stack of nodes to expand (k >= 0)
	 * and to combine once their children are known (~k); every node is
	 * pushed at most twice */
	int todo[2 * WHERE_MAX_NODES + 2], val[WHERE_MAX_NODES + 1], tp = 0, vp = 0;

	if (!w || w->root < 0)
		return 1;
	todo[tp++] = w->root;
	while (tp) {
		int k = todo[--tp];
		if (k >= 0) {
			const struct wnode *n = &w->n[k];
			if (n->kind == N_CMP) {
				val[vp++] = eval_cmp(n, get, arg);
				continue;
			}
			todo[tp++] = ~k;
			if (n->b >= 0)
				todo[tp++] = n->b;
			todo[tp++] = n->a;
			continue;
		}
		const struct wnode *n = &w->n[~k];
		if (n->kind == N_NOT) {
			val[vp - 1] = !val[vp - 1];
			continue;
		}
		int b = val[--vp], a = val[--vp];
		val[vp++] = n->kind == N_AND ? a && b : a || b;
	}
	return vp == 1 ? val[0] : 0;
}

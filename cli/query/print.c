/*
 * print.c -- a statement's rows as `posixtrace query` prints them: an
 * aligned table fitted to a width (the first TABLE_ROWS rows set the
 * columns' widths, later rows are printed in them as they come, so
 * memory stays bounded however many rows), CSV (RFC 4180), or JSON (an
 * array of objects per statement).  NULL prints as nothing (table, CSV)
 * or null; a blob as hex.
 */
#include <math.h>
#include <string.h>
#include "query.h"

#define TABLE_ROWS 256
#define MIN_COL 6

struct pq_out { FILE *f; int mode, width; };

struct pq_out *pq_out_new(FILE *f, int mode, int width)
{
	struct pq_out *o = calloc(1, sizeof *o);
	if (o)
		*o = (struct pq_out){ f, mode, width };
	return o;
}

void pq_out_free(struct pq_out *o)
{
	free(o);
}

/* a cell as text (malloc'd): numbers as SQLite gives them, blobs in hex */
static char *cell(sqlite3_stmt *st, int i)
{
	int t = sqlite3_column_type(st, i);
	if (t == SQLITE_NULL)
		return strdup("");
	if (t == SQLITE_BLOB) {
		const unsigned char *b = sqlite3_column_blob(st, i);
		int n = sqlite3_column_bytes(st, i);
		char *h = malloc(2 * (size_t)n + 1);
		if (!h)
			return NULL;
		for (int k = 0; k < n; k++)
			snprintf(h + 2 * k, 3, "%02x", b[k]);
		h[2 * n] = 0;
		return h;
	}
	const char *s = (const char *)sqlite3_column_text(st, i);
	return strdup(s ? s : "");
}

/* display columns of s: UTF-8 sequences count one */
static size_t cols_of(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* s in w columns: cut (with '~') or padded, right-aligned if right */
static void put_cell(FILE *f, const char *s, size_t w, int right)
{
	size_t n = cols_of(s), c = 0;
	if (n > w) {
		for (const char *p = s; *p; p++) {
			int lead = ((unsigned char)*p & 0xc0) != 0x80;
			if (lead && ++c > w - 1)
				break;
			fputc(*p == '\n' || *p == '\t' || *p == '\r' ? ' ' : *p, f);
		}
		fputc('~', f);
		return;
	}
	if (right)
		fprintf(f, "%*s", (int)(w - n), "");
	for (const char *p = s; *p; p++)
		fputc(*p == '\n' || *p == '\t' || *p == '\r' ? ' ' : *p, f);
	if (!right)
		fprintf(f, "%*s", (int)(w - n), "");
}

/* narrows the widest columns until the row fits width (none below MIN_COL) */
static void fit(size_t *w, int nc, int width)
{
	for (;;) {
		size_t total = 0, max = 0;
		int wi = -1;
		for (int i = 0; i < nc; i++) {
			total += w[i] + (i ? 2 : 0);
			if (w[i] > max)
				max = w[i], wi = i;
		}
		if (total <= (size_t)width || max <= MIN_COL)
			return;
		size_t over = total - (size_t)width, room = max - MIN_COL;
		w[wi] = max - (over < room ? over : room);
	}
}

static int table(struct pq_out *o, sqlite3_stmt *st)
{
	int nc = sqlite3_column_count(st), rc = SQLITE_ROW, n = 0;
	char **buf = calloc((size_t)TABLE_ROWS * (size_t)(nc ? nc : 1), sizeof *buf);
	size_t *w = calloc((size_t)(nc ? nc : 1), sizeof *w);
	unsigned char *num = calloc((size_t)(nc ? nc : 1), 1);

	if (!buf || !w || !num) {
		free(buf), free(w), free(num);
		return SQLITE_NOMEM;
	}
	for (int i = 0; i < nc; i++)
		w[i] = cols_of(sqlite3_column_name(st, i));
	while (n < TABLE_ROWS && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int i = 0; i < nc; i++) {
			char *s = buf[n * nc + i] = cell(st, i);
			if (!s) {
				rc = SQLITE_NOMEM;
				goto out;
			}
			size_t c = cols_of(s);
			w[i] = c > w[i] ? c : w[i];
			int t = sqlite3_column_type(st, i);
			num[i] |= (unsigned char)(t == SQLITE_INTEGER || t == SQLITE_FLOAT);
		}
		n++;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		goto out;
	if (nc) {
		fit(w, nc, o->width);
		for (int i = 0; i < nc; i++) {
			fputs(i ? "  " : "", o->f);
			put_cell(o->f, sqlite3_column_name(st, i), w[i], num[i]);
		}
		fputc('\n', o->f);
		for (int i = 0; i < nc; i++) {
			fputs(i ? "  " : "", o->f);
			for (size_t k = 0; k < w[i]; k++)
				fputc('-', o->f);
		}
		fputc('\n', o->f);
	}
	for (int r = 0; r < n; r++) {
		for (int i = 0; i < nc; i++) {
			fputs(i ? "  " : "", o->f);
			put_cell(o->f, buf[r * nc + i], w[i], num[i]);
		}
		fputc('\n', o->f);
	}
	while (rc == SQLITE_ROW && (rc = sqlite3_step(st)) == SQLITE_ROW)
		for (int i = 0; i < nc; i++) {
			char *s = cell(st, i);
			if (!s) {
				rc = SQLITE_NOMEM;
				break;
			}
			fputs(i ? "  " : "", o->f);
			put_cell(o->f, s, w[i], num[i]);
			free(s);
			if (i == nc - 1)
				fputc('\n', o->f);
		}
out:
	for (int k = 0; k < n * nc + (rc == SQLITE_NOMEM ? nc : 0) && k < TABLE_ROWS * nc; k++)
		free(buf[k]);
	free(buf), free(w), free(num);
	return rc;
}

static void csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static int csv(struct pq_out *o, sqlite3_stmt *st)
{
	int nc = sqlite3_column_count(st), rc;
	for (int i = 0; i < nc; i++) {
		fputs(i ? "," : "", o->f);
		csv_field(o->f, sqlite3_column_name(st, i));
	}
	if (nc)
		fputs("\r\n", o->f);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int i = 0; i < nc; i++) {
			char *s = cell(st, i);
			if (!s)
				return SQLITE_NOMEM;
			fputs(i ? "," : "", o->f);
			csv_field(o->f, s);
			free(s);
		}
		fputs("\r\n", o->f);
	}
	return rc;
}

static int json(struct pq_out *o, sqlite3_stmt *st)
{
	int nc = sqlite3_column_count(st), rc, first = 1;
	struct vbuf b = { 0 };

	fputc('[', o->f);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		b.n = 0;
		vb_put(&b, first ? "\n{" : ",\n{", first ? 2 : 3);
		first = 0;
		for (int i = 0; i < nc; i++) {
			if (i)
				vb_put(&b, ",", 1);
			vb_str(&b, sqlite3_column_name(st, i));
			vb_put(&b, ":", 1);
			switch (sqlite3_column_type(st, i)) {
			case SQLITE_NULL: vb_put(&b, "null", 4); break;
			case SQLITE_INTEGER: vb_printf(&b, "%lld", (long long)sqlite3_column_int64(st, i)); break;
			case SQLITE_FLOAT: {
				double d = sqlite3_column_double(st, i);
				if (isfinite(d))
					vb_printf(&b, "%.17g", d);
				else
					vb_put(&b, "null", 4);
				break;
			}
			default: {
				char *s = cell(st, i);
				if (!s) {
					free(b.p);
					return SQLITE_NOMEM;
				}
				vb_str(&b, s);
				free(s);
			}
			}
		}
		vb_put(&b, "}", 1);
		if (b.oom) {
			free(b.p);
			return SQLITE_NOMEM;
		}
		fwrite(b.p, 1, b.n, o->f);
	}
	fputs(first ? "]\n" : "\n]\n", o->f);
	free(b.p);
	return rc;
}

int pq_out_run(struct pq_out *o, sqlite3_stmt *st)
{
	int rc = o->mode == PQ_OUT_CSV ? csv(o, st) : o->mode == PQ_OUT_JSON ? json(o, st)
	                                                                        : table(o, st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : -1;
}

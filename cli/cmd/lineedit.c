/*
 * lineedit.c -- a line typed at a terminal, with editing and a history:
 * `posixtrace query`'s prompt.  No library: the terminal is put in
 * non-canonical mode without echo while a line is typed (and given back
 * as it was before the line is returned), and the line is drawn again
 * after each key, on one row (a line wider than the terminal scrolls
 * sideways around the cursor).
 *
 * Keys: characters insert at the cursor; Left, Right, Home, End, Ctrl-A,
 * Ctrl-E, Ctrl-B, Ctrl-F move; Backspace, Delete, Ctrl-D (on a line with
 * text), Ctrl-K (to the end), Ctrl-U (to the start) delete; Up, Down,
 * Ctrl-P, Ctrl-N walk the history (the line being typed is kept, and
 * comes back below the newest entry); Enter gives the line; Ctrl-C drops
 * it; Ctrl-D on an empty line is the end of input; Ctrl-L clears the
 * screen.  The history is this process's (at most HIST_MAX lines, the
 * oldest dropped), nothing is written to a file.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>
#include "cmd.h"

#define HIST_MAX 1000
#define LINE_MAX_BYTES 65536

struct line { char *p; size_t n, cap, pos; };

int ledit_usable(void)
{
	return isatty(0) && isatty(2);
}

void ledit_add(struct ledit *le, const char *s)
{
	if (!s[0] || (le->n && !strcmp(le->h[le->n - 1], s)))
		return;
	char *c = strdup(s);
	if (!c)
		return;
	if (le->n == HIST_MAX) {
		free(le->h[0]);
		memmove(le->h, le->h + 1, (le->n - 1) * sizeof *le->h);
		le->n--;
	}
	if (le->n == le->cap) {
		size_t ncap = le->cap ? 2 * le->cap : 32;
		char **h = realloc(le->h, ncap * sizeof *h);
		if (!h) {
			free(c);
			return;
		}
		le->h = h;
		le->cap = ncap;
	}
	le->h[le->n++] = c;
}

void ledit_free(struct ledit *le)
{
	for (size_t i = 0; i < le->n; i++)
		free(le->h[i]);
	free(le->h);
	memset(le, 0, sizeof *le);
}

static void out(const char *s, size_t n)
{
	while (n) {
		ssize_t k = write(2, s, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return;
		s += k;
		n -= (size_t)k;
	}
}

/* display columns of s[0..n): a character per UTF-8 lead byte */
static size_t cols_of(const char *s, size_t n)
{
	size_t c = 0;
	for (size_t i = 0; i < n; i++)
		c += ((unsigned char)s[i] & 0xc0) != 0x80;
	return c;
}

static size_t next_char(const struct line *l, size_t i)
{
	if (i < l->n)
		i++;
	while (i < l->n && ((unsigned char)l->p[i] & 0xc0) == 0x80)
		i++;
	return i;
}

static size_t prev_char(const struct line *l, size_t i)
{
	if (i > 0)
		i--;
	while (i > 0 && ((unsigned char)l->p[i] & 0xc0) == 0x80)
		i--;
	return i;
}

static void redraw(const char *prompt, const struct line *l)
{
	struct winsize ws;
	size_t width = ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col : 80;
	size_t plen = cols_of(prompt, strlen(prompt));
	size_t room = width > plen + 1 ? width - plen - 1 : 1;
	size_t from = 0, to;
	while (from < l->pos && cols_of(l->p + from, l->pos - from) >= room)
		from = next_char(l, from);
	for (to = from; to < l->n && cols_of(l->p + from, next_char(l, to) - from) <= room;)
		to = next_char(l, to);
	struct vbuf b = { 0 };
	char mv[32];
	vb_put(&b, "\r", 1);
	vb_put(&b, prompt, strlen(prompt));
	vb_put(&b, l->p + from, to - from);
	vb_put(&b, "\x1b[K", 3);
	if (to > l->pos) {
		int n = snprintf(mv, sizeof mv, "\x1b[%zuD", cols_of(l->p + l->pos, to - l->pos));
		vb_put(&b, mv, (size_t)n);
	}
	if (!b.oom)
		out(b.p, b.n);
	free(b.p);
}

static int set_text(struct line *l, const char *s)
{
	size_t n = strlen(s);
	if (n + 1 > l->cap) {
		char *p = realloc(l->p, n + 1);
		if (!p)
			return -1;
		l->p = p;
		l->cap = n + 1;
	}
	memcpy(l->p, s, n + 1);
	l->n = l->pos = n;
	return 0;
}

static int insert(struct line *l, const char *s, size_t n)
{
	if (l->n + n >= LINE_MAX_BYTES)
		return 0; /* (ignored past the limit) */
	if (l->n + n + 1 > l->cap) {
		size_t ncap = l->cap ? l->cap : 128;
		while (ncap < l->n + n + 1)
			ncap *= 2;
		char *p = realloc(l->p, ncap);
		if (!p)
			return -1;
		l->p = p;
		l->cap = ncap;
	}
	memmove(l->p + l->pos + n, l->p + l->pos, l->n - l->pos);
	memcpy(l->p + l->pos, s, n);
	l->n += n;
	l->pos += n;
	l->p[l->n] = 0;
	return 0;
}

static void cut(struct line *l, size_t a, size_t b)
{
	memmove(l->p + a, l->p + b, l->n - b);
	l->n -= b - a;
	l->p[l->n] = 0;
	if (l->pos > b)
		l->pos -= b - a;
	else if (l->pos > a)
		l->pos = a;
}

/* one byte of input: 1, 0 at its end, -1 on an error; with wait_ms >= 0,
 * 0 also when none comes in that time */
static int byte(unsigned char *c, int wait_ms)
{
	for (;;) {
		if (wait_ms >= 0) {
			struct pollfd p = { 0, POLLIN, 0 };
			int r = poll(&p, 1, wait_ms);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				return r;
		}
		ssize_t k = read(0, c, 1);
		if (k < 0 && errno == EINTR)
			continue;
		return k < 0 ? -1 : (int)k;
	}
}

enum { K_NONE, K_UP, K_DOWN, K_LEFT, K_RIGHT, K_HOME, K_END, K_DEL };

/* the key of an escape sequence (its ESC read): CSI or SS3 */
static int escape_key(void)
{
	unsigned char c, fin;
	char num[8];
	size_t nn = 0;
	if (byte(&c, 50) <= 0 || (c != '[' && c != 'O'))
		return K_NONE;
	for (;;) {
		if (byte(&fin, 50) <= 0)
			return K_NONE;
		if (fin >= 0x40 && fin <= 0x7e)
			break;
		if (nn + 1 < sizeof num)
			num[nn++] = (char)fin;
	}
	num[nn] = 0;
	switch (fin) {
	case 'A': return K_UP;
	case 'B': return K_DOWN;
	case 'C': return K_RIGHT;
	case 'D': return K_LEFT;
	case 'H': return K_HOME;
	case 'F': return K_END;
	case '~':
		return !strcmp(num, "1") || !strcmp(num, "7") ? K_HOME :
		       !strcmp(num, "4") || !strcmp(num, "8") ? K_END : !strcmp(num, "3") ? K_DEL :
		       K_NONE;
	default: return K_NONE;
	}
}

/* ledit_read's statuses are -1, 0, 1 and 2; LE_MORE: the line goes on. */
enum { LE_MORE = 3 };

/* A byte typed (not Enter): an edit of l, or a key named in *key.
 * LE_MORE, or how the read ends: 2 (Ctrl-C), 0 (Ctrl-D on an empty
 * line), -1 (out of memory). */
static int edit_byte(struct line *l, unsigned char c, int *key)
{
	switch (c) {
	case 1: *key = K_HOME; break;        /* Ctrl-A */
	case 5: *key = K_END; break;         /* Ctrl-E */
	case 2: *key = K_LEFT; break;        /* Ctrl-B */
	case 6: *key = K_RIGHT; break;       /* Ctrl-F */
	case 16: *key = K_UP; break;         /* Ctrl-P */
	case 14: *key = K_DOWN; break;       /* Ctrl-N */
	case 27: *key = escape_key(); break;
	case 3:                              /* Ctrl-C: the line dropped */
		out("^C\n", 3); /* (the terminal makes \n a new line) */
		return 2;
	case 0:
		/* Ctrl-D typed while a statement ran, the terminal then
		 * canonical: it ends an empty line there, which a read in
		 * this mode gets as a NUL (Ctrl-@ on an empty line is
		 * taken for it too) */
		if (!l->n)
			return 0;
		break;
	case 4:                              /* Ctrl-D */
		if (!l->n)
			return 0;
		*key = K_DEL;
		break;
	case 8: case 127:                    /* Backspace */
		if (l->pos)
			cut(l, prev_char(l, l->pos), l->pos);
		break;
	case 11: cut(l, l->pos, l->n); break; /* Ctrl-K */
	case 21: cut(l, 0, l->pos); break;   /* Ctrl-U */
	case 12: out("\x1b[H\x1b[2J", 7); break; /* Ctrl-L */
	default:
		if (c == '\t')
			c = ' ';
		if (c >= 0x20 && insert(l, (const char *)&c, 1))
			return -1;
	}
	return LE_MORE;
}

/* A key: the cursor moved, a character deleted, or another history entry
 * shown (*at; the line being typed kept in *saved meanwhile).  0, or -1
 * (out of memory). */
static int edit_key(const struct ledit *le, struct line *l, int key, size_t *at, char **saved)
{
	switch (key) {
	case K_LEFT: l->pos = prev_char(l, l->pos); break;
	case K_RIGHT: l->pos = next_char(l, l->pos); break;
	case K_HOME: l->pos = 0; break;
	case K_END: l->pos = l->n; break;
	case K_DEL:
		if (l->pos < l->n)
			cut(l, l->pos, next_char(l, l->pos));
		break;
	case K_UP:
	case K_DOWN: {
		size_t to = key == K_UP ? (*at ? *at - 1 : *at) : (*at < le->n ? *at + 1 : *at);
		if (to == *at)
			break;
		if (*at == le->n && !(*saved = strdup(l->p)))
			return -1;
		if (set_text(l, to == le->n ? *saved : le->h[to]))
			return -1;
		if (to == le->n) {
			free(*saved);
			*saved = NULL;
		}
		*at = to;
		break;
	}
	default: break;
	}
	return 0;
}

int ledit_read(struct ledit *le, const char *prompt, char **linep)
{
	struct termios was, raw;
	struct line l = { 0 };
	char *saved = NULL;          /* the line being typed, while the history is shown */
	size_t at = le->n;           /* the history entry shown; n: the line being typed */
	int rc = 1;

	*linep = NULL;
	if (tcgetattr(0, &was) != 0)
		return -1;
	raw = was;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO | ISIG | IEXTEN);
	raw.c_iflag &= ~(tcflag_t)(IXON);
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	if (tcsetattr(0, TCSADRAIN, &raw) != 0 || set_text(&l, "") != 0) {
		free(l.p);
		return -1;
	}
	redraw(prompt, &l);
	for (;;) {
		unsigned char c;
		int r = byte(&c, -1), key = K_NONE;
		if (r <= 0) {
			rc = r < 0 ? -1 : l.n ? 1 : 0;
			break;
		}
		if (c == '\r' || c == '\n')
			break;
		if ((r = edit_byte(&l, c, &key)) != LE_MORE) {
			rc = r;
			goto done;
		}
		if (edit_key(le, &l, key, &at, &saved) != 0) {
			rc = -1;
			goto done;
		}
		redraw(prompt, &l);
	}
	if (rc == 1)
		out("\n", 1);
done:
	tcsetattr(0, TCSADRAIN, &was);
	free(saved);
	if (rc == 1)
		*linep = l.p;
	else
		free(l.p);
	return rc;
}

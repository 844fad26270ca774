/*
 * segment.c -- sizing, creating and checking a stream's shared segment.
 *
 * Chunk size: the smallest power of two of at least 4 KiB that holds four
 * maximum-size records and is at least 1/64 of the stream (up to 256 KiB).
 *
 * Capacity: the stream is full when its sealed chunks hold stream-min-size
 * bytes.  A chunk sealed because the next record did not fit holds more
 * than (chunk_size - max_record) bytes, so sealed_max chunks (preallocated)
 * cover that; chunks sealed early (thread exit) and open chunks, one per
 * recording thread and nesting level, come from a reserve that is part of
 * the segment but, being a sparse memfd, costs memory only where used.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <unistd.h>
#include "shm.h"

#define PAGE 4096u

static uint64_t round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

int pt_geom_compute(struct pt_geom *g, uint64_t stream_size, uint64_t max_data)
{
	uint64_t biggest = max_data > 2 * sizeof(trace_event_set_t)
	                       ? max_data : 2 * sizeof(trace_event_set_t);
	uint32_t max_rec = PT_REC_SIZE(biggest);
	uint32_t c = PAGE, reserve;
	uint64_t sealed_max, n;

	memset(g, 0, sizeof *g);
	/* four maximum records at least; and about 1/64 of the stream, up to
	 * 256 KiB, so that taking a chunk (a few contended atomics) is rare */
	while (c < 4 * max_rec || (c < (256u << 10) && (uint64_t)c * 64 < stream_size))
		c *= 2;
	sealed_max = stream_size / (c - max_rec) + 1;
	reserve = (uint32_t)((64u << 20) / c);
	reserve = reserve < 64 ? 64 : reserve > 1024 ? 1024 : reserve;
	n = sealed_max + reserve;
	if (n >= PT_MAX_CHUNKS)
		return ENOMEM;
	g->chunk_size = c;
	g->nchunks = (uint32_t)n;
	g->sealed_max = (uint32_t)sealed_max;
	g->log_len = 1;
	while (g->log_len < 2 * n)
		g->log_len *= 2;
	g->chunks_off = round_up(sizeof(struct pt_hdr), PAGE);
	g->names_off = round_up(g->chunks_off + n * sizeof(struct pt_chunk), PAGE);
	g->acq_off = round_up(g->names_off + PT_NIDS * sizeof(struct pt_name), PAGE);
	g->seal_off = round_up(g->acq_off + g->log_len * 8ull, PAGE);
	g->data_off = round_up(g->seal_off + g->log_len * 8ull, PAGE);
	g->objs_off = g->data_off + n * c; /* after the data: sparse until used */
	g->seg_size = g->objs_off + (uint64_t)PT_OBJ_SLOTS * PT_OBJ_SZ;
	g->prealloc = g->data_off + (sealed_max + PT_PREALLOC_SPARE) * c;
	if (g->prealloc > g->seg_size)
		g->prealloc = g->seg_size;
	return 0;
}

/* Could the machine back what the segment preallocates at all? */
int pt_geom_backable(const struct pt_geom *g)
{
	struct sysinfo si;

	return sysinfo(&si) != 0 || g->prealloc / si.mem_unit <= (uint64_t)si.totalram + si.totalswap;
}

int pt_segment_create(const struct pt_geom *g, int *fdp, struct pt_hdr **hdrp)
{
	int fd, rc;
	void *p;

	if (!pt_geom_backable(g))
		return ENOMEM;
	fd = memfd_create("posixtrace-stream", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return errno == EMFILE || errno == ENFILE ? EAGAIN : ENOMEM;
	if (pt_fsz_truncate(fd, g->seg_size) != 0) /* (EFBIG: RLIMIT_FSIZE) */
		goto nomem;
	/* reserve the memory the stream is promised; the reserve stays sparse */
	rc = pt_fsz_allocate(fd, 0, g->prealloc);
	if (rc != 0)
		goto nomem;
	/* nobody may shrink the segment under a reader (that would be SIGBUS) */
	fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW);
	p = mmap(NULL, g->seg_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		goto nomem;
	*fdp = fd;
	*hdrp = p;
	return 0;
nomem:
	close(fd);
	return ENOMEM;
}

void pt_segment_init(struct pt_hdr *h, const struct pt_geom *g,
                     const struct pt_attr_img *attr, const struct pt_clock_img *clk)
{
	struct pt_chunk *ck = (struct pt_chunk *)((char *)h + g->chunks_off);

	h->magic = PT_MAGIC;
	h->version = PT_LAYOUT_VERSION;
	h->hdr_size = sizeof *h;
	h->seg_size = g->seg_size;
	h->chunk_size = g->chunk_size;
	h->nchunks = g->nchunks;
	h->sealed_max = g->sealed_max;
	h->log_len = g->log_len;
	h->chunks_off = g->chunks_off;
	h->names_off = g->names_off;
	h->acq_off = g->acq_off;
	h->seal_off = g->seal_off;
	h->data_off = g->data_off;
	h->objs_off = g->objs_off;
	h->creator_pid = getpid();
	h->traced_pid = getpid();
	h->attr = *attr;
	h->clk = *clk;
	h->room_wakes = 1; /* (ring/pool.c: frees wake no-loss writers) */
	/* the hot chunks on the free stack, the others on the cold one
	 * (ring/pool.c: taken when the free stack is empty; cold_top holds
	 * index + 1) */
	uint32_t warm = PT_HOT_CHUNKS(g->sealed_max, g->nchunks);
	for (uint32_t i = 0; i < g->nchunks; i++) {
		atomic_init(&ck[i].ss, PT_SS(0, PT_CK_FREE));
		atomic_init(&ck[i].next, i + 1 < g->nchunks && i + 1 != warm ? i + 1 : PT_NIL);
	}
	atomic_init(&h->free_top, 0);
	atomic_init(&h->cold_top, warm < g->nchunks ? warm + 1 : 0);
	atomic_init(&h->spare_top, 0);
	atomic_init(&h->state, 1u << PT_ST_EPOCH_SHIFT);
	pt_names_init((struct pt_name *)((char *)h + g->names_off));
}

/* Check the geometry of a mapped segment before trusting any offset in it. */
int pt_segment_check(const struct pt_hdr *h, size_t map_size)
{
	uint64_t n = h->nchunks, c = h->chunk_size, L = h->log_len;

	if (map_size < sizeof *h || h->magic != PT_MAGIC || h->version != PT_LAYOUT_VERSION ||
	    h->seg_size != map_size || n == 0 || n >= PT_MAX_CHUNKS ||
	    c < PAGE || (c & (c - 1)) || L < 2 * n || (L & (L - 1)) ||
	    h->sealed_max == 0 || h->sealed_max > n)
		return EINVAL;
	if (h->chunks_off < sizeof *h || h->chunks_off + n * sizeof(struct pt_chunk) > h->names_off ||
	    h->names_off + PT_NIDS * sizeof(struct pt_name) > h->acq_off ||
	    h->acq_off + L * 8 > h->seal_off || h->seal_off + L * 8 > h->data_off ||
	    h->data_off + n * c > h->objs_off || h->objs_off % 64 ||
	    h->objs_off > map_size || map_size - h->objs_off < (uint64_t)PT_OBJ_SLOTS * PT_OBJ_SZ ||
	    (h->chunks_off | h->data_off) % 64)
		return EINVAL;
	if (h->attr.max_data > TRACE_DATA_MAX || PT_REC_SIZE(h->attr.max_data) * 2 > c ||
	    h->attr.stream_size == 0)
		return EINVAL;
	return 0;
}

void pt_slot_fill(struct pt_view *sl, struct pt_hdr *h, size_t map_size)
{
	char *b = (char *)h;

	sl->hdr = h;
	sl->chunks = (struct pt_chunk *)(b + h->chunks_off);
	sl->names = (struct pt_name *)(b + h->names_off);
	sl->acq_log = (_Atomic uint64_t *)(b + h->acq_off);
	sl->seal_log = (_Atomic uint64_t *)(b + h->seal_off);
	sl->data = b + h->data_off;
	sl->objs = (struct pt_obj *)(b + h->objs_off);
	sl->chunk_size = h->chunk_size;
	sl->nchunks = h->nchunks;
	sl->sealed_max = h->sealed_max;
	sl->log_mask = h->log_len - 1;
	sl->max_data = (uint32_t)h->attr.max_data;
	sl->budget = h->attr.stream_size;
	sl->policy = h->attr.stream_policy;
	sl->inherit = h->attr.inherit;
	sl->map_size = map_size;
	sl->test_hdr_filter = 0;
	/* only a FLUSH stream has a flusher to wait for; and the header is
	 * the controller's word, not ours to trust: the bound is clamped */
	uint32_t nl = *(volatile uint32_t *)&h->noloss_ms; /* read once */
	sl->noloss_ms = sl->policy != POSIX_TRACE_FLUSH ? 0 : nl > PT_NOLOSS_MAX_MS ? PT_NOLOSS_MAX_MS : nl;
	atomic_store_explicit(&sl->noloss_gave_up, 0, memory_order_relaxed);
	sl->room_wakes = *(volatile uint32_t *)&h->room_wakes == 1;
	atomic_store_explicit(&sl->taken, 0, memory_order_relaxed);
	atomic_store_explicit(&sl->taken_pid, 0, memory_order_relaxed);
	for (unsigned i = 0; i < PT_NIDS / 64; i++)
		atomic_store_explicit(&sl->filter[i],
		                      atomic_load_explicit(&h->filter[i], memory_order_relaxed),
		                      memory_order_relaxed);
}

/* The controller's view of a segment it has just built: every pointer and
 * size from its own geometry and attributes, none read back from the
 * segment, which the traced process can already write. */
void pt_slot_fill_trusted(struct pt_view *sl, struct pt_hdr *h, const struct pt_geom *g,
                          const struct pt_attr_img *a)
{
	char *b = (char *)h;

	sl->hdr = h;
	sl->chunks = (struct pt_chunk *)(b + g->chunks_off);
	sl->names = (struct pt_name *)(b + g->names_off);
	sl->acq_log = (_Atomic uint64_t *)(b + g->acq_off);
	sl->seal_log = (_Atomic uint64_t *)(b + g->seal_off);
	sl->data = b + g->data_off;
	sl->objs = (struct pt_obj *)(b + g->objs_off);
	sl->chunk_size = g->chunk_size;
	sl->nchunks = g->nchunks;
	sl->sealed_max = g->sealed_max;
	sl->log_mask = g->log_len - 1;
	sl->max_data = (uint32_t)a->max_data;
	sl->budget = a->stream_size;
	sl->policy = a->stream_policy;
	sl->inherit = a->inherit;
	sl->map_size = g->seg_size;
	sl->test_hdr_filter = 0;
	sl->noloss_ms = 0; /* the controller's own writes never wait */
	sl->room_wakes = 1;
	atomic_store_explicit(&sl->noloss_gave_up, 0, memory_order_relaxed);
	atomic_store_explicit(&sl->taken, 0, memory_order_relaxed);
	atomic_store_explicit(&sl->taken_pid, 0, memory_order_relaxed);
	for (unsigned i = 0; i < PT_NIDS / 64; i++)
		atomic_store_explicit(&sl->filter[i], 0, memory_order_relaxed);
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
int pt_slot_warm(const struct pt_view *sl, uint32_t k)
{
	uint32_t base = PT_HOT_CHUNKS(sl->sealed_max, sl->nchunks);
	uint32_t cap = PT_WARM_MAX / sl->chunk_size, map = PT_OBJ_SLOTS * PT_OBJ_SZ;
	char *at;
	size_t len;

	if (base > cap)
		base = cap;
	if (k < base) {
		at = sl->data + (size_t)k * sl->chunk_size;
		len = sl->chunk_size;
	} else if ((uint64_t)(k - base) * PT_WARM_PIECE < map) {
		at = (char *)sl->objs + (size_t)(k - base) * PT_WARM_PIECE;
		len = PT_WARM_PIECE;
	} else {
		return 0;
	}
	int saved = errno;
	(void)madvise(at, len, MADV_POPULATE_WRITE);
	errno = saved;
	return 1;
}

/* Is the controller of a stream alive?  It holds a write lock on one
 * byte of the file the segment lives in for as long as the stream exists
 * (an OFD lock: it goes with the last close, at exit or exec too). */
int pt_owner_alive(int fd, uint32_t byte)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = byte, .l_len = 1 };

	if (byte == UINT32_MAX)
		return 1; /* a private stream of this process */
	if (fcntl(fd, F_OFD_GETLK, &fl) != 0)
		return 1; /* cannot tell: keep recording */
	return fl.l_type != F_UNLCK;
}

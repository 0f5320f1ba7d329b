/*
 * scan_int.h - internals of the Parquet scan (storage.h, section 8).
 *
 * Design notes
 * ------------
 * Phases. pq_scan_open (scan_open.c) resolves paths, takes every footer from
 * the metadata cache, maps the requested columns per file, binds the
 * predicates (scan_pred.c) and prunes row groups by their statistics. What
 * survives is a list of *units* (one row group of one file each). One scan
 * thread (scan_run.c) then walks the units in order:
 *
 *     plan + submit unit i+k ... ; wait for unit i to be decoded ;
 *     push its chunk onto the output queue (blocks while full)
 *
 * keeping up to read_ahead units' reads in flight, so reading overlaps
 * decoding. With several decoders (a scan of two or more row groups on a
 * host-visible device), a unit is decoded by one pool thread, started as
 * soon as its reads complete, while others decode other units; with one,
 * the scan thread decodes unit i itself, its page batches spread over the
 * pool. read_first (the engine's BLOCKING mode) submits every read and
 * waits for all of them before any decoding. Planning a unit (scan_plan.c) reads the page
 * index of the predicate columns (when present) to get the surviving row
 * ranges, picks the pages of every read column that overlap them, and turns
 * the byte ranges (whole column chunks, or dictionary page + surviving pages)
 * into coalesced reads (io_plan_ranges) into ONE pinned buffer per unit.
 * Completions arrive through a callback on the I/O engine's threads that only
 * decrements the unit's pending count under the scan's lock.
 *
 * Decoding a unit (scan_decode.c) runs three batches of independent page
 * tasks on the decoder's pool (none for a pool decoder: one thread): decompress every compressed page into a scratch
 * arena; measure the string bytes of VARCHAR pages (kn_page_measure) so every
 * page's output position is known up front; decode every page (kn_page_job,
 * codec already applied) straight into the column buffers. When the unit has
 * at least two read columns per worker (or one worker), it runs instead one
 * task per column, largest first, doing all of that column's stages in order:
 * pages are decoded while still in cache, and string buffers are sized by an
 * upper bound (PLAIN: the page bytes; dictionary: rows x longest entry) so no
 * measuring pass is needed. Decompressed pages go into one scratch arena the
 * scan keeps from unit to unit. Then the
 * predicates are applied and the columns compacted in place (scan_filter.c).
 *
 * Rows and positions. Every read column decodes a subset of its pages; its
 * *segments* say which rows landed where: segment k holds rows [row, row+n)
 * of the row group at positions [pos, pos+n) of the column buffer, rows and
 * positions both increasing. The surviving row ranges R of the unit are
 * covered by every read column's segments. The selection (row ids, uint32,
 * increasing) starts as R and shrinks predicate by predicate; compaction
 * moves position(sel[k]) to k, which never moves data to a higher position,
 * so it works in place (memmove for string bytes).
 *
 * Memory. Output columns are decoded into chunk buffers (dv_chunk_alloc) on
 * a host-visible device, so there is no copy at all; on other devices into
 * pinned staging, copied to the chunk's device buffers after compaction (one
 * batched copy, one stream sync per chunk: the CPU decoders need host
 * memory). Predicate-only columns, dictionaries and decompression scratch
 * are pa_malloc'ed per unit and freed when the unit is done. Read buffers are
 * pinned (dv_host_alloc); when the pinned pool is full and other units are in
 * flight, planning waits instead of failing.
 *
 * Errors. The scan thread keeps the first error (lowest page index within a
 * batch, so messages are deterministic) in scan->err, with the file, row
 * group, column and page in the message; then it stops, and the output queue
 * is closed after the chunks before the failure. Closing the scan early
 * closes the output queue (the scan thread's push fails), cancels reads not
 * started (io_cancel_tag with the scan as tag) and waits for the rest.
 */
#ifndef PISTA_SCAN_INT_H
#define PISTA_SCAN_INT_H

#include "kernels/kernels.h"
#include "storage/storage.h"

#include <pthread.h>

/* A constant bound to a column's engine type. Integer-like types (INTEGER,
 * BIGINT, DATE, DECIMAL, BOOLEAN) hold q = floor(constant * 10^scale) and
 * whether that was exact, which makes every comparison exact. */
typedef struct scan_const {
    int64_t q;
    bool exact;
    double d;              /* DOUBLE */
    char *s;               /* VARCHAR (owned), len bytes */
    size_t len;
} scan_const;

typedef enum scan_kind { SCAN_K_INT, SCAN_K_DOUBLE, SCAN_K_STRING } scan_kind;

typedef struct scan_pred {
    int col;               /* index into scan->rcols */
    pq_op op;
    scan_kind kind;
    scan_const c;
} scan_pred;

/* A column the scan reads (projected, or only filtered on). */
typedef struct scan_rcol {
    const char *name;      /* owned copy */
    pa_type type;          /* engine type, equal in every file */
    bool output;           /* some output column shows it */
    pq_column_desc *desc;  /* per file: mapping in that file (name points into its meta) */
    uint8_t *src;          /* per file: SCAN_SRC_* */
    int part;              /* a partition column: its key in scan->hive; else -1 */
    bool mixed;            /* some file holds another type, converted on the host */
} scan_rcol;

/* Where a read column's values come from in a file: its column chunks, a
 * NULL (union_by_name, the file lacks it), or the file's partition value. */
enum { SCAN_SRC_FILE, SCAN_SRC_NULL, SCAN_SRC_PART };

/* One file of the scan. */
typedef struct scan_file {
    char *path;
    const pq_file_meta *meta;   /* a reference from the cache */
    io_file *io;
    uint32_t hive_file;         /* its row in scan->hive's values */
} scan_file;

/* Row ranges [lo, hi) of a row group, sorted and disjoint. */
typedef struct scan_ranges {
    int64_t *lo, *hi;
    uint32_t n, cap;
} scan_ranges;

/* A page chosen for reading: its location and rows in the row group. */
typedef struct scan_pick {
    int64_t offset;        /* file offset of the page header */
    int32_t size;          /* header included */
    int64_t first_row, rows;
} scan_pick;

/* What a unit reads of one column. */
typedef struct scan_ucol {
    bool used;             /* the column is read in this unit */
    bool whole;            /* the whole column chunk (no offset index, or no pruning) */
    int64_t start, len;    /* whole: the chunk; else the dictionary page prefix (len 0: none) */
    scan_pick *picks;      /* !whole: surviving data pages, in order */
    uint32_t n_picks, n_pages;   /* n_pages: data pages of the chunk (offset index) */
    uint32_t first_range;  /* index of its first byte range in the unit's plan */
} scan_ucol;

/* One row group to read and decode. */
typedef struct scan_unit {
    uint32_t file, rg;
    int64_t num_rows;
    bool planned, submitted, empty;   /* empty: the page index pruned every row */
    scan_ranges rows;      /* surviving rows (n == 1 covering all when no pruning) */
    bool all_rows;
    scan_ucol *ucols;      /* per read column */
    io_range *ranges;      /* byte ranges, in column order */
    size_t n_ranges;
    io_plan plan;
    uint64_t *range_at;    /* per range: position in buf */
    uint8_t *buf;          /* pinned */
    size_t buf_len;
    io_request *reqs;
    size_t n_reqs;
    size_t pending;        /* guarded by scan->mu */
    int status;            /* first failed read's status (guarded by scan->mu) */
    pa_err err;            /* read errors */
    uint64_t t_submit, t_done;
    /* Parallel decoding (scan_run.c): guarded by scan->mu. */
    int dstate;            /* SCAN_D_* */
    int drc;               /* the decode's status, its message in err */
    dv_chunk *chunk;       /* the decoded chunk, waiting for its turn */
    uint64_t mem_est;      /* device bytes its decoding may take (scan__plan_unit) */
    bool mem_waited;       /* held back by the memory regulation once (under mu) */
} scan_unit;

/* The scan's chunks still alive (decoded and not yet freed by whoever holds
 * them): counted by a hook on each chunk (dv_chunk_on_free). Outlives the
 * scan while chunks it made are alive; s is NULL once the scan closed. */
typedef struct scan_live {
    pthread_mutex_t mu;    /* guards s and refs; taken before the scan's mu */
    struct pq_scan *s;
    int refs;              /* the scan's, and one per live chunk */
    int chunks;            /* live chunks (atomic) */
} scan_live;

enum { SCAN_D_WAITING, SCAN_D_RUNNING, SCAN_D_DONE };

/* What one decoder keeps for itself: the pool its page batches run on
 * (NULL: the decoding thread alone) and buffers reused from unit to unit,
 * so their pages are faulted in once. */
typedef struct scan_wctx {
    pa_threadpool *tp;
    uint8_t *scratch;      /* decompressed pages of the unit being decoded */
    uint64_t scratch_cap;
    uint32_t *sel_buf;     /* the row selection of the unit being filtered */
    uint64_t sel_cap;
    bool busy;             /* a pool decoder with a task under way (under scan->mu) */
    struct pq_scan *s;     /* pool decoders: the task's scan and unit */
    uint32_t unit;
    dv_stream *stream;     /* non-host-visible devices: the decoder's uploads and kernels */
    dv_event *done;        /* recorded after each unit's work, its stream-ordered frees
                            * included: the memory regulation waits for it (under mu) */
    bool done_set;
} scan_wctx;

#define SCAN_POOL_MAX 32

struct pq_scan {
    dv_device *dev;
    io_engine *io;
    pa_threadpool *tp, *own_tp;
    pq_scan_options opt;

    scan_file *files;
    uint32_t n_files;
    pq_hive *hive;         /* partitions of every file before pruning; NULL: none */
    scan_rcol *rcols;
    int n_rcols;
    int *out_rcol;         /* per output column: its read column */
    int n_out;
    scan_pred *preds;
    int n_preds;

    scan_unit *units;
    uint32_t n_units;

    pa_queue *outq;
    pthread_t thread;
    bool thread_started;
    pthread_mutex_t mu;
    pthread_cond_t cv;     /* a unit's reads completed */
    int stop;              /* set by pq_scan_close; atomic access only (scan_stopped) */
    pa_err err;            /* the scan thread's first error */
    int final_rc;

    pq_scan_stats stats;   /* guarded by mu while the thread runs */
    scan_wctx *wctx;       /* decoders: n_wctx units decode at once */
    int n_wctx;
    int decoding;          /* pool decoders busy (under mu) */
    bool hold;             /* read_first: no decoding until every read is done (under mu) */
    uint32_t win_lo, win_hi;   /* units [win_lo, win_hi) were submitted and not yet pushed (under mu) */
    scan_live *live;       /* memory regulation (scan_run.c): chunks alive */
    uint64_t mem_high;     /* pool use a row group may start under (0: no regulation) */
    uint64_t mem_decoding; /* estimates of the units being decoded (under mu) */
    bool mem_blocked;      /* a decoded-ready unit waits for memory: poll (under mu) */
    uint64_t mem_seen;     /* the pool's use at the last check past the mark (under mu) */
    int mem_unsteady;      /* checks in a row that found it changed (under mu) */
    uint64_t *pred_in, *pred_out;   /* per predicate: rows tested / passed so far (under mu) */
    pthread_mutex_t pool_mu;        /* guards the pool */
    void *pool[SCAN_POOL_MAX];      /* host working buffers kept for the next unit (scan_decode.c) */
    size_t pool_size[SCAN_POOL_MAX];
    int n_pool;
};

static inline bool scan_stopped(const pq_scan *s)
{
    return __atomic_load_n(&s->stop, __ATOMIC_ACQUIRE) != 0;
}


/* scan_pred.c */
int scan__bind_pred(pq_scan *s, const pq_pred *p, int col, scan_pred *out, pa_err *err);
/* The same against a type of one's own (partition columns). */
int scan__bind_pred_type(const pq_pred *p, pa_type t, int col, scan_pred *out, pa_err *err);
/* Does a constant (the text of a partition value read as type t; NULL for
 * NULL) satisfy p? Exact. */
bool scan__const_match(const scan_pred *p, pa_type t, const char *value);
/* The value of partition column r for file f (NULL: NULL). */
const char *scan__part_value(const pq_scan *s, int r, uint32_t f);
void scan__pred_free(scan_pred *p);
/* May a column with these statistics hold a matching row? (true = keep).
 * min/max as stored (PLAIN, column order); absent ones have ptr NULL.
 * legacy: min/max are the deprecated signed fields. null_count < 0 =
 * unknown; all_null: every value is NULL. */
bool scan__may_match(const scan_pred *p, const pq_column_desc *d, pq_bin min, pq_bin max,
                     bool legacy, int64_t null_count, int64_t num_values, int64_t nan_count,
                     bool all_null);
/* Row-group pruning from the chunk statistics. */
bool scan__rg_may_match(const scan_pred *p, const pq_column_desc *d, const pq_column_meta *cm);

/* scan_ranges.c helpers (in scan_plan.c) */
int scan__ranges_add(scan_ranges *r, int64_t lo, int64_t hi, pa_err *err);
int scan__ranges_intersect(scan_ranges *a, const scan_ranges *b, pa_err *err);
void scan__ranges_free(scan_ranges *r);

/* scan_plan.c: page index, byte ranges, pinned buffer. PA_ENOMEM from the
 * pinned pool is returned with *pinned_full set (the caller may retry). */
int scan__plan_unit(pq_scan *s, scan_unit *u, pa_err *err);
int scan__alloc_unit_buffer(pq_scan *s, scan_unit *u, bool *pinned_full, pa_err *err);
void scan__unit_release(pq_scan *s, scan_unit *u);

/* scan_decode.c: decode a unit whose reads completed into a chunk (*out
 * NULL when no row survives). */
int scan__decode_unit(pq_scan *s, scan_wctx *w, scan_unit *u, dv_chunk **out, pa_err *err);

/* scan_run.c: the memory regulation's bookkeeping. */
int scan__live_create(pq_scan *s, pa_err *err);
void scan__live_detach(pq_scan *s);

/* scan_filter.c */
typedef struct scan_seg {
    int64_t row, n, pos;
} scan_seg;

/* A decoded read column of a unit. */
typedef struct scan_dcol {
    kn_column kc;
    pa_type type;
    uint64_t rows;          /* decoded positions */
    void *values;
    int32_t *offsets;
    uint8_t *bytes;
    uint8_t *validity;      /* NULL when REQUIRED */
    scan_seg *segs;
    uint32_t n_segs;
} scan_dcol;

/* Select the rows of u that survive (R, then each predicate when filtering).
 * *sel = NULL and *n = num_rows means every row, in place. Otherwise *sel
 * is the decoder's own buffer (w->sel_buf), valid until its next call: not
 * freed by the caller. */
int scan__select(pq_scan *s, scan_wctx *w, scan_unit *u, scan_dcol *const *cols, uint32_t **sel, uint64_t *n,
                 pa_err *err);
/* Move the selected rows of c to the front (in place). */
void scan__compact(scan_dcol *c, const uint32_t *sel, uint64_t n);

/* "file: row group N" prefix for messages. */
#define SCAN_WHERE(s, u) (s)->files[(u)->file].path, (u)->rg

#endif /* PISTA_SCAN_INT_H */

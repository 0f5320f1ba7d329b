/*
 * writer_int.h - internals of the Parquet writer (writer*.c).
 *
 * Design notes
 * - Buffering: pq_writer_write copies rows into one row-group buffer per
 *   column (values, or int32 offsets + bytes for VARCHAR, and a validity
 *   bitmap for nullable columns). NULL rows are stored as zeroed slots or
 *   empty strings, so nothing downstream reads unspecified input bytes.
 *   The buffers are reused from row group to row group; they never hold
 *   more than row_group_rows rows or row_group_bytes bytes (string bytes
 *   < 2^31, so the int32 offsets cannot overflow).
 * - Flush (writer_chunk.c): each column chunk is encoded and written page
 *   by page, straight into the output buffer. Page row ranges are fixed
 *   first from the PLAIN size (page_bytes, page_rows). A dictionary of the
 *   first 65536 values decides whether one pays off at all; if so it is
 *   built over the whole chunk; when it exceeds dictionary_bytes, a binary
 *   search over page boundaries finds the longest run of leading pages
 *   whose dictionary fits: those pages are RLE_DICTIONARY, the rest PLAIN
 *   (the layout other writers produce when they fall back). A dictionary
 *   that would not make the pages smaller is not used.
 * - Footer state kept for the whole file is per column chunk, not per row:
 *   pq_column_chunk structs (their strings and statistics in an arena) and
 *   the encoded ColumnIndex / OffsetIndex bytes, written at close.
 * - Output goes through a 1 MiB buffer to "<path>.tmp"; w->offset is the
 *   logical file offset (bytes written + buffered). Every write is checked.
 * - Errors are sticky: the first failure sets w->status and every later
 *   call returns at once; close/abort remove the temporary file.
 */
#ifndef PISTA_STORAGE_WRITER_INT_H
#define PISTA_STORAGE_WRITER_INT_H

#include "kernels/kernels.h"
#include "storage/pq_meta_int.h"

/* One column: its declaration, Parquet mapping and row-group buffer. */
typedef struct wr_col {
    const char *name;          /* in the writer's arena */
    pa_type type;
    bool nullable;
    kn_column kc;              /* physical type + engine type for the kernels */
    int width;                 /* engine bytes per value; 0 for VARCHAR */

    uint8_t *values;           /* fixed width: cap_rows * width */
    int32_t *offsets;          /* VARCHAR: cap_rows + 1 */
    uint8_t *bytes;            /* VARCHAR bytes */
    uint8_t *validity;         /* nullable: cap_rows bits */
    int64_t cap_rows;
    uint64_t cap_bytes, n_bytes;
    int64_t n_nulls;           /* NULL rows in the buffer */
} wr_col;

/* The encoded page index of one column chunk (empty buf = not written). */
typedef struct wr_index {
    pq_buf column_index, offset_index;
} wr_index;

struct pq_writer {
    char *path, *tmp_path;
    bool no_replace;
    int fd;
    int status;                /* PA_OK until the first failure */
    pq_writer_options opt;     /* strings point into the arena */
    pq__arena *arena;          /* names, footer metadata */

    wr_col *cols;
    uint32_t n_cols;
    int64_t rg_rows;           /* rows buffered */
    uint64_t rg_bytes;         /* bytes buffered (all columns) */
    int64_t total_rows;        /* rows in flushed row groups */

    pq_row_group *rgs;         /* flushed row groups (columns in the arena) */
    uint32_t n_rgs, cap_rgs;
    wr_index *index;           /* n_rgs * n_cols */

    uint64_t offset;           /* logical file offset */
    pq_buf out;                /* unwritten output */

    /* Flush scratch, reused (grown as needed). */
    pq_buf page, zpage, hdr;
    uint32_t *sel, *indices, *entry_rows;
    void *dict_scratch;
    size_t cap_sel, cap_dict_scratch;
};

/* Min/max/null count of some values of one column. */
typedef struct wr_stats {
    int64_t nulls, values;     /* NULL rows, non-NULL values */
    bool has;                  /* min/max set (some value other than NaN seen) */
    int64_t imin, imax;        /* integer types, DATE, DECIMAL(<= 18), BOOLEAN */
    __int128 wmin, wmax;       /* DECIMAL(19..38) */
    double dmin, dmax;         /* DOUBLE */
    const uint8_t *smin, *smax; /* VARCHAR: bytes in the column buffer */
    uint32_t smin_len, smax_len;
} wr_stats;

/* One data page: rows [r0, r1) of the chunk, non-NULL values [s0, s1). */
typedef struct wr_page {
    int64_t r0, r1;
    size_t s0, s1;
    uint64_t plain_bytes;      /* PLAIN size of its values */
    wr_stats st;
} wr_page;

/* State of the chunk being written. */
typedef struct wr_chunk {
    pq_writer *w;
    wr_col *c;
    int64_t rows;
    kn_values view;            /* the buffered column, rows 0..rows-1 */
    const uint32_t *sel;       /* rows of the non-NULL values; NULL = all rows */
    size_t n_values;
    wr_page *pages;
    uint32_t n_pages;
    uint32_t dict_pages;       /* leading pages that are dictionary encoded */
    uint32_t n_entries;
    pq_page_location *locs;
    int64_t *unencoded;        /* BYTE_ARRAY: per page string bytes */
    int64_t uncompressed, compressed;
    int64_t data_page_offset, dict_page_offset;
} wr_chunk;

/* writer.c */
int wr__write(pq_writer *w, const void *p, size_t n, pa_err *err);
/* Grow b to hold at least n bytes (contents kept). */
int wr__reserve(pq_buf *b, size_t n, pa_err *err);
/* Duplicate len bytes into the arena (PA_ENOMEM on failure). */
int wr__arena_dup(pq_writer *w, const void *p, size_t len, pq_bin *out, pa_err *err);

/* writer_buffer.c: write the buffered rows as one row group and empty the
 * buffer (the row group stays counted in w->n_rgs even on error, so that
 * pq_writer_abort frees its index buffers). */
int wr__flush_row_group(pq_writer *w, pa_err *err);

/* writer_chunk.c: encode and write the buffered rows of column c as one
 * column chunk; fills *cc and (page index on) *idx. */
int wr__chunk_write(pq_writer *w, uint32_t c, pq_column_chunk *cc, wr_index *idx, pa_err *err);

/* writer_meta.c: the ColumnMetaData of a written chunk (strings and
 * statistics in the writer's arena), given its merged statistics st. */
int wr__chunk_meta(wr_chunk *x, pq_column_chunk *cc, const wr_stats *st, pa_err *err);
/* Append the chunk's encoded ColumnIndex to *out; leaves it unchanged
 * when some non-NULL page has no bounds (only NaN), as the index must
 * then be omitted. */
int wr__column_index(wr_chunk *x, pq_buf *out, pa_err *err);

/* writer_stats.c */

void wr__stats_init(wr_stats *s);
/* Add the non-NULL values [s0, s1) of the chunk (rows sel[k], or k itself
 * when sel is NULL) to s. */
void wr__stats_add(const wr_col *c, const uint32_t *sel, size_t s0, size_t s1, wr_stats *s);
void wr__stats_merge(wr_stats *into, const wr_stats *s);
/* Plain-encoded min and max of s into the caller's buffers min/max (each
 * at least truncate + 8 bytes); *_exact say whether they are the values.
 * Returns false when there is no bound to write (no value, or a string max
 * that cannot be rounded up). */
bool wr__stats_bounds(const wr_col *c, const wr_stats *s, uint32_t truncate, uint8_t *min,
                      uint32_t *min_len, bool *min_exact, uint8_t *max, uint32_t *max_len,
                      bool *max_exact);
/* Order of two plain-encoded bounds of column c: <0, 0, >0. */
int wr__stats_cmp(const wr_col *c, const uint8_t *a, uint32_t alen, const uint8_t *b,
                  uint32_t blen);

#endif /* PISTA_STORAGE_WRITER_INT_H */

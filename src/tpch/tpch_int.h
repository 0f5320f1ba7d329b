/*
 * tpch_int.h - internals of src/tpch, shared only inside the module.
 *
 * Design notes
 * ------------
 * dbgen draws every column from its own Lehmer stream
 *     x' = 16807 * x mod (2^31 - 1)
 * and gives each stream a fixed *boundary*: the number of draws reserved per
 * unit (row of the driving table). A unit uses some of its draws; at the end
 * of the unit the stream jumps to the start of the next unit's slots. So the
 * draws of unit u start at draw u * boundary of the stream, whatever earlier
 * units did, and we start a range at unit u by jumping ahead u * boundary
 * draws (square-and-multiply, tp__skip). Per stream we keep `base`, the seed
 * at the start of the current unit, and `bmul` = 16807^boundary, so the
 * end-of-unit jump is one modular multiplication.
 *
 * A uniform draw in [lo, hi] is lo + (int64)((double)x / (2^31 - 1) * (hi - lo + 1))
 * computed in doubles exactly like dbgen (tp__unif). dbgen computes the range
 * of a draw over [0, 2^31 - 1] in 32-bit arithmetic, where it wraps to -2^31:
 * such draws (random alphanumeric strings) are negative, and their low 6-bit
 * groups index the 64-character alphabet (tp__unif_wrapped).
 *
 * Comments are slices of one 300 MiB text pool built once from stream
 * "text" (seed 933588178) by the grammar of spec clause 4.2.2.14: a comment
 * draws an offset in [0, POOL - max] and a length in [min, max] from its own
 * stream. The pool is shared by every generator of the process (refcounted).
 *
 * Weighted word lists (spec 4.2.2.13, dbgen's dists.dss) pick with one draw in
 * [1, total weight] and take the first entry whose cumulative weight reaches
 * it; a lookup table per list makes that O(1).
 */
#ifndef PISTA_TPCH_INT_H
#define PISTA_TPCH_INT_H

#include "tpch/tpch.h"

#include <string.h>

/* --------------------------------------------------------------------- rng */

#define TP__MOD 2147483647LL   /* 2^31 - 1, the Lehmer modulus */
#define TP__MUL 16807LL        /* 7^5, the Lehmer multiplier */

/* a * b mod (2^31 - 1) for a, b in [0, 2^31 - 1) (Mersenne folding). */
static inline int64_t tp__mulmod(int64_t a, int64_t b)
{
    uint64_t x = (uint64_t)a * (uint64_t)b;
    x = (x & (uint64_t)TP__MOD) + (x >> 31);
    x = (x & (uint64_t)TP__MOD) + (x >> 31);
    if (x >= (uint64_t)TP__MOD)
        x -= (uint64_t)TP__MOD;
    return (int64_t)x;
}

/* seed advanced by n draws. */
int64_t tp__skip(int64_t seed, int64_t n);

typedef struct tp__stream {
    int64_t seed;   /* current value */
    int64_t base;   /* value at the start of the current unit */
    int64_t bmul;   /* 16807^boundary mod M: one unit's jump */
} tp__stream;

static inline int64_t tp__unif(tp__stream *s, int64_t lo, int64_t hi)
{
    s->seed = tp__mulmod(s->seed, TP__MUL);
    double range = (double)(hi - lo + 1);
    return lo + (int64_t)((double)s->seed / 2147483647.0 * range);
}

/* dbgen's draw over [0, 2^31 - 1], whose range wraps to -2^31 in int32. */
static inline int64_t tp__unif_wrapped(tp__stream *s)
{
    s->seed = tp__mulmod(s->seed, TP__MUL);
    return (int64_t)((double)s->seed / 2147483647.0 * -2147483648.0);
}

static inline void tp__next_unit(tp__stream *s)
{
    s->base = tp__mulmod(s->base, s->bmul);
    s->seed = s->base;
}

/* X(ID, initial seed, boundary = draws reserved per unit). Seeds and
 * boundaries of dbgen's stream table; the two supplier "BBB" streams for the
 * junk length and the offset use the seeds dbgen actually assigns them. */
#define TP__STREAM_LIST(X)                                                    \
    X(P_MFG, 1, 1) X(P_BRND, 46831694, 1) X(P_TYPE, 1841581359, 1)            \
    X(P_SIZE, 1193163244, 1) X(P_CNTR, 727633698, 1) X(P_CMNT, 804159733, 2)  \
    X(P_NAME, 709314158, 92)                                                  \
    X(PS_QTY, 1671059989, 4) X(PS_SCST, 1051288424, 4)                        \
    X(PS_CMNT, 1961692154, 8)                                                 \
    X(O_CLRK, 1171034773, 1) X(O_CMNT, 276090261, 2)                          \
    X(O_ODATE, 1066728069, 1) X(O_PRIO, 591449447, 1)                         \
    X(O_CKEY, 851767375, 1) X(O_LCNT, 1434868289, 1)                          \
    X(L_QTY, 209208115, 7) X(L_DCNT, 554590007, 7) X(L_TAX, 721958466, 7)     \
    X(L_SHIP, 1371272478, 7) X(L_SMODE, 675466456, 7)                         \
    X(L_PKEY, 1808217256, 7) X(L_SKEY, 2095021727, 7)                         \
    X(L_SDTE, 1769349045, 7) X(L_CDTE, 904914315, 7)                          \
    X(L_RDTE, 373135028, 7) X(L_RFLG, 717419739, 7) X(L_CMNT, 1095462486, 14) \
    X(C_ADDR, 881155353, 9) X(C_NTRG, 1489529863, 1) X(C_PHNE, 1521138112, 3) \
    X(C_ABAL, 298370230, 1) X(C_MSEG, 1140279430, 1) X(C_CMNT, 1335826707, 2) \
    X(S_ADDR, 706178559, 9) X(S_NTRG, 110356601, 1) X(S_PHNE, 884434366, 3)   \
    X(S_ABAL, 962338209, 1) X(S_CMNT, 1341315363, 2)                          \
    X(BBB_CMNT, 202794285, 1) X(BBB_TYPE, 753643799, 1)                       \
    X(BBB_JNK, 263032577, 1) X(BBB_OFFSET, 715851524, 1)                      \
    X(N_CMNT, 606179079, 2) X(R_CMNT, 1500869201, 2)

enum tp__stream_id {
#define TP__SID(id, seed, b) TP__S_##id,
    TP__STREAM_LIST(TP__SID)
#undef TP__SID
    TP__S_COUNT
};

#define TP__TEXT_SEED 933588178LL   /* stream of the text pool */

/* Position the listed streams at the start of unit `unit` (0-based). */
void tp__streams_at(tp__stream *s, const int *ids, int n_ids, int64_t unit);

/* ------------------------------------------------------------ word lists */

typedef struct tp__dist {
    const char *const *words;
    const int *weights;
    int count;
    int total;              /* sum of weights */
    const uint8_t *lookup;  /* [1..total] -> index of the picked word */
    uint8_t lens[160];      /* strlen of each word */
} tp__dist;

enum tp__dist_id {
    TP__D_NOUNS, TP__D_VERBS, TP__D_ADJECTIVES, TP__D_ADVERBS,
    TP__D_PREPOSITIONS, TP__D_AUXILIARIES, TP__D_TERMINATORS,
    TP__D_GRAMMAR, TP__D_NP, TP__D_VP,
    TP__D_PRIORITIES, TP__D_INSTRUCTIONS, TP__D_SHIPMODES, TP__D_RFLAGS,
    TP__D_SEGMENTS, TP__D_TYPES, TP__D_CONTAINERS, TP__D_COLORS,
    TP__D_NATIONS, TP__D_REGIONS,
    TP__D_COUNT
};

/* The lists, built once (thread-safe). */
const tp__dist *tp__dists(void);

static inline int tp__pick(const tp__dist *d, tp__stream *s)
{
    return d->lookup[tp__unif(s, 1, d->total)];
}

/* Region key of nation index 0..24. */
extern const int tp__nation_region[25];

/* ------------------------------------------------------------- text pool */

#define TP__POOL_SIZE (300LL * 1024 * 1024)   /* dbgen's TEXT_POOL_SIZE */

/* Get the shared pool, building it on first use with up to `threads`
 * threads (<= 0: online CPUs). Pair with tp__pool_release. */
int tp__pool_acquire(int threads, const char **pool, pa_err *err);
void tp__pool_release(void);

/* Checkpoint k: the first sentence that starts at or after k * 4 MiB of the
 * pool, at `offset`, is drawn from stream state `seed`. The compiled-in
 * table (text_checkpoints.c) lets segments be built independently;
 * tp__pool_walk_checkpoints recomputes it by walking the whole stream
 * (tests check the two agree; about half a second). */
#define TP__POOL_SEGMENT (4LL << 20)
#define TP__POOL_CHECKPOINTS 75   /* 300 MiB / 4 MiB */
typedef struct tp__pool_checkpoint {
    int64_t offset, seed;
} tp__pool_checkpoint;
extern const tp__pool_checkpoint tp__pool_checkpoints[TP__POOL_CHECKPOINTS];
void tp__pool_walk_checkpoints(tp__pool_checkpoint *out);

/* --------------------------------------------------------------- batches */

struct tp_gen {
    double sf;             /* what dbgen uses */
    int64_t scale;         /* dbgen's integer `scale` (1 below SF 1) */
    int64_t n_supp, n_cust, n_part, n_orders;
    int64_t clerks;        /* clerk numbers are 1..clerks */
    const char *pool;
    const tp__dist *d;
};

/* Make room for `rows` rows (fixed columns, offsets, and every VARCHAR at its
 * max_len); resets the batch to 0 rows. */
int tp__batch_reserve(tp_batch *b, int64_t rows, pa_err *err);

static inline void tp__put_str(tp_column *c, int64_t row, const char *s, int32_t len)
{
    int32_t o = c->offsets[row];
    memcpy(c->bytes + o, s, (size_t)len);
    c->offsets[row + 1] = o + len;
}
#define TP__I32(b, col) ((int32_t *)(b)->cols[col].values)
#define TP__I64(b, col) ((int64_t *)(b)->cols[col].values)

/* Days since 1970-01-01 of dbgen's first date, 1992-01-01. */
#define TP__EPOCH_1992 8035
/* 1995-06-17 (dbgen's CURRENTDATE) as days since 1992-01-01. */
#define TP__CURRENT_OFFSET 1263

/* Generators of gen_*.c: units [first, first + n), 0-based. */
int tp__gen_region(const tp_gen *g, int64_t first, int64_t n, tp_batch *b, pa_err *err);
int tp__gen_nation(const tp_gen *g, int64_t first, int64_t n, tp_batch *b, pa_err *err);
int tp__gen_supplier(const tp_gen *g, int64_t first, int64_t n, tp_batch *b, pa_err *err);
int tp__gen_customer(const tp_gen *g, int64_t first, int64_t n, tp_batch *b, pa_err *err);
/* part and/or partsupp (either may be NULL). */
int tp__gen_part(const tp_gen *g, int64_t first, int64_t n, tp_batch *part,
                 tp_batch *partsupp, pa_err *err);
/* orders and/or lineitem (either may be NULL). */
int tp__gen_orders(const tp_gen *g, int64_t first, int64_t n, tp_batch *orders,
                   tp_batch *lineitem, pa_err *err);

/* Comment: pool[offset, offset + len) with offset and len from stream s. */
static inline void tp__text(const tp_gen *g, tp__stream *s, int min, int max,
                            tp_column *c, int64_t row)
{
    int64_t off = tp__unif(s, 0, TP__POOL_SIZE - max);
    int64_t len = tp__unif(s, min, max);
    tp__put_str(c, row, g->pool + off, (int32_t)len);
}

/* The same draws as tp__text, but the copy is deferred: the row's length is
 * set now and its pool offset kept in src[row]; tp__text_fill copies rows
 * [0, n) later, prefetching ahead, since pool reads are random and the big
 * tables are bound by their cache misses. */
static inline void tp__text_defer(tp__stream *s, int min, int max, tp_column *c, int64_t row,
                                  int64_t *src)
{
    src[row] = tp__unif(s, 0, TP__POOL_SIZE - max);
    c->offsets[row + 1] = c->offsets[row] + (int32_t)tp__unif(s, min, max);
}
void tp__text_fill(const tp_gen *g, tp_column *c, const int64_t *src, int64_t n);

/* dbgen's random alphanumeric string of length [min, max] ("v-string"). */
void tp__vstr(tp__stream *s, int min, int max, tp_column *c, int64_t row);
/* Phone number "CC-AAA-EEE-NNNN" for nation index nk (3 draws). */
void tp__phone(tp__stream *s, int64_t nk, tp_column *c, int64_t row);
/* "Prefix#%09lld" style names: prefix then key zero-padded to `width`. */
int tp__fmt_key(char *out, const char *prefix, int64_t key, int width);

/* ---------------------------------------------------------------- writing
 *
 * tp_write (write.c) cuts the tables into chunks of consecutive units and
 * hands each chunk's rows, one *piece* per table, to the *sink* of the file
 * they belong to. A sink takes its pieces strictly in chunk order, from
 * whichever worker is free; write_sink.c knows the formats (.tbl text with
 * write(2), Parquet through pq_writer).
 */

/* The rows of one chunk of one table. Owned by tp_write's free and pending
 * lists; the batch and text memory is reused from chunk to chunk. */
typedef struct tp__piece {
    struct tp__piece *next;   /* in a free list or the pending list */
    int64_t chunk;            /* index in the chunk list */
    int64_t file;             /* index of its sink */
    tp_batch b;
    char *text;               /* TBL: the rows formatted (tp__piece_prepare) */
    size_t text_len, text_cap;
    int64_t in_bytes;         /* column bytes of b (tp_write_stats.in_bytes) */
} tp__piece;

/* One output file: DIR/<table>.<ext> or DIR/<table>/<table>.<part>.<ext>. */
typedef struct tp__sink {
    tp_table t;
    int part;
    int64_t next_chunk;       /* the chunk whose piece goes in next */
    bool busy;                /* a worker is feeding it */
    int fd;                   /* TBL: open file, -1 when none */
    pq_writer *pw;            /* PARQUET: open writer, NULL when none */
} tp__sink;

/* Worker-side work on a generated piece, in parallel with other pieces:
 * counts its column bytes and, for TBL, formats its text. PA_ENOMEM. */
int tp__piece_prepare(const tp_write_opts *o, tp__piece *p, pa_err *err);
/* Free a piece's memory and the piece (NULL is ignored). */
void tp__piece_free(tp__piece *p);

/* Create the sink's file (o->out_dir NULL: TBL writes nowhere; PARQUET is
 * refused by tp_write before). o->parquet must be set. PA_EIO naming the
 * path, or the writer's errors; nothing stays open on error. */
int tp__sink_open(const tp_write_opts *o, tp__sink *s, pa_err *err);
/* Append the piece's rows. On error the sink stays open (tp__sink_abort). */
int tp__sink_put(const tp_write_opts *o, tp__sink *s, const tp__piece *p, pa_err *err);
/* Finish the file; *bytes = its size. Closed even on error. */
int tp__sink_close(const tp_write_opts *o, tp__sink *s, int64_t *bytes, pa_err *err);
/* Drop an open file after a failure: a Parquet file never appears under its
 * name; a .tbl file is left as far as it got (as dbgen does). */
void tp__sink_abort(tp__sink *s);

/* mkdir -p. PA_EIO naming the folder that cannot be made. */
int tp__mkdir_p(const char *path, pa_err *err);

#endif /* PISTA_TPCH_INT_H */

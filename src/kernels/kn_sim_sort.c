/*
 * kn_sim_sort.c - the `sim` device's entries for sort and top-N. The
 * layout travels by value; sources (an array of pointers to each chunk's
 * column descriptors) are copied into the argument block with the columns
 * the kernel reads (the VARCHAR keys', or the gathered one) and their
 * pointer array is rebuilt inside the kernel's copy of the block.
 */
#include "kernels/kn_sim_int.h"

typedef struct sort_args {
    kn_ctx ctx;
    kn_sort_layout l;
    size_t ptr_at, src_at;       /* sources: pointers, then n_sources x ncols columns */
    int n_sources, ncols;
    bool has_sources;
    size_t runs_at, counts_at;   /* merge_next: n_runs run pointers and counts */
    int n_runs;
    int64_t *pos;
    const uint8_t *a, *b;        /* inputs (a: records, or the threshold's input) */
    int64_t na, nb;
    const uint8_t *threshold;
    uint8_t *out;                /* records written (sorted in place: the records) */
    void *scratch;
    size_t scratch_size;
    uint32_t tag;
    int column;
    int64_t *count;              /* pinned */
    pa_column col;               /* gather: the output column */
} sort_args;

static size_t up16(size_t n) { return (n + 15) & ~(size_t)15; }

/* Copy sources[0, n_sources) with their columns [0, ncols) after a's head. */
static void put_sources(kn__args *b, sort_args *a, const kn_sort_source *sources, int n_sources, int ncols)
{
    a->has_sources = sources != NULL;
    a->n_sources = sources && n_sources > 0 ? n_sources : 0;
    a->ncols = ncols > 0 ? ncols : 0;
    a->ptr_at = kn__args_put(b, NULL, (size_t)a->n_sources * sizeof *sources);
    a->src_at = kn__args_put(b, NULL, 0);
    for (int i = 0; i < a->n_sources; i++)
        kn__args_put(b, sources[i], (size_t)a->ncols * sizeof(pa_column));
}

/* Inside the kernel: the sources' pointer array, rebuilt over the block. */
static const kn_sort_source *sources_of(sort_args *a)
{
    if (!a->has_sources)
        return NULL;
    kn_sort_source *ptr = KN__AT(a, kn_sort_source, a->ptr_at);
    size_t stride = up16((size_t)a->ncols * sizeof(pa_column));
    for (int i = 0; i < a->n_sources; i++)
        ptr[i] = KN__AT(a, const pa_column, a->src_at + (size_t)i * stride);
    return ptr;
}

/* Columns the order reads from a source: up to the last VARCHAR key's. */
static int string_columns(const kn_sort_layout *l)
{
    int n = 0;
    for (int k = 0; k < l->n_keys; k++)
        if (l->keys[k].type.id == PA_TYPE_VARCHAR && l->keys[k].column + 1 > n)
            n = l->keys[k].column + 1;
    return n;
}

/* Start a block for layout l with the given sources. */
static void sort_block(kn__args *b, sort_args *a, const kn_ctx *ctx, const kn_sort_layout *l,
                       const kn_sort_source *sources, int n_sources, int ncols)
{
    kn__args_begin(b, sizeof *a);
    a->ctx = *ctx;
    a->l = *l;
    put_sources(b, a, sources, n_sources, ncols);
}

/* ------------------------------------------------------------ encode, copy */

static int encode_k(void *p, pa_err *err)
{
    sort_args *a = p;
    return kn__cpu_sort_encode(&a->ctx, &a->l, sources_of(a)[0], a->na, a->tag, a->out, err);
}

int kn__sim_sort_encode(const kn_ctx *ctx, const kn_sort_layout *l, kn_sort_source cols, int64_t n, uint32_t tag,
                        uint8_t *recs, pa_err *err)
{
    int ncols = 0;
    for (int k = 0; k < l->n_keys; k++)
        ncols = l->keys[k].column + 1 > ncols ? l->keys[k].column + 1 : ncols;
    kn__args b;
    sort_args a = {.na = n, .tag = tag, .out = recs};
    sort_block(&b, &a, ctx, l, &cols, 1, ncols);
    return kn__args_launch(&b, &a, sizeof a, ctx, encode_k, err);
}

static int copy_k(void *p, pa_err *err)
{
    sort_args *a = p;
    return kn__cpu_sort_copy(&a->ctx, &a->l, a->a, a->na, a->tag, a->out, err);
}

int kn__sim_sort_copy(const kn_ctx *ctx, const kn_sort_layout *l, const uint8_t *src, int64_t n, uint32_t tag_add,
                      uint8_t *dst, pa_err *err)
{
    sort_args a = {.ctx = *ctx, .l = *l, .a = src, .na = n, .tag = tag_add, .out = dst};
    return kn__sim_launch(ctx, copy_k, &a, sizeof a, err);
}

/* ------------------------------------------------------- sort and merges */

static int records_k(void *p, pa_err *err)
{
    sort_args *a = p;
    return kn__cpu_sort_records(&a->ctx, &a->l, a->out, a->na, a->scratch, a->scratch_size, sources_of(a),
                                a->n_sources, err);
}

int kn__sim_sort_records(const kn_ctx *ctx, const kn_sort_layout *l, uint8_t *recs, int64_t n, void *scratch,
                         size_t scratch_size, const kn_sort_source *sources, int n_sources, pa_err *err)
{
    kn__args b;
    sort_args a = {.out = recs, .na = n, .scratch = scratch, .scratch_size = scratch_size};
    sort_block(&b, &a, ctx, l, sources, n_sources, string_columns(l));
    return kn__args_launch(&b, &a, sizeof a, ctx, records_k, err);
}

static int merge_k(void *p, pa_err *err)
{
    sort_args *a = p;
    return kn__cpu_sort_merge(&a->ctx, &a->l, a->a, a->na, a->b, a->nb, a->out, sources_of(a), a->n_sources,
                              err);
}

int kn__sim_sort_merge(const kn_ctx *ctx, const kn_sort_layout *l, const uint8_t *a_recs, int64_t na,
                       const uint8_t *b_recs, int64_t nb, uint8_t *out, const kn_sort_source *sources, int n_sources,
                       pa_err *err)
{
    kn__args b;
    sort_args a = {.a = a_recs, .na = na, .b = b_recs, .nb = nb, .out = out};
    sort_block(&b, &a, ctx, l, sources, n_sources, string_columns(l));
    return kn__args_launch(&b, &a, sizeof a, ctx, merge_k, err);
}

static int merge_next_k(void *p, pa_err *err)
{
    sort_args *a = p;
    return kn__cpu_sort_merge_next(&a->ctx, &a->l, KN__AT(a, const uint8_t *const, a->runs_at),
                                   KN__AT(a, const int64_t, a->counts_at), a->pos, a->n_runs, a->na, a->out,
                                   sources_of(a), a->n_sources, err);
}

int kn__sim_sort_merge_next(const kn_ctx *ctx, const kn_sort_layout *l, const uint8_t *const *runs,
                            const int64_t *counts, int64_t *pos, int n_runs, int64_t m, uint8_t *out,
                            const kn_sort_source *sources, int n_sources, pa_err *err)
{
    kn__args b;
    size_t nr = (size_t)(n_runs > 0 ? n_runs : 0);
    sort_args a = {.pos = pos, .n_runs = n_runs, .na = m, .out = out};
    sort_block(&b, &a, ctx, l, sources, n_sources, string_columns(l));
    a.runs_at = kn__args_put(&b, runs, nr * sizeof *runs);
    a.counts_at = kn__args_put(&b, counts, nr * sizeof *counts);
    return kn__args_launch(&b, &a, sizeof a, ctx, merge_next_k, err);
}

static int filter_k(void *p, pa_err *err)
{
    sort_args *a = p;
    return kn__cpu_sort_filter(&a->ctx, &a->l, a->a, a->na, a->threshold, a->out, a->count, sources_of(a),
                               a->n_sources, err);
}

int kn__sim_sort_filter(const kn_ctx *ctx, const kn_sort_layout *l, const uint8_t *in, int64_t n,
                        const uint8_t *threshold, uint8_t *out, int64_t *count, const kn_sort_source *sources,
                        int n_sources, pa_err *err)
{
    kn__args b;
    sort_args a = {.a = in, .na = n, .threshold = threshold, .out = out, .count = count};
    sort_block(&b, &a, ctx, l, sources, n_sources, string_columns(l));
    KN__POISON(ctx, count);
    return kn__args_launch(&b, &a, sizeof a, ctx, filter_k, err);
}

/* ------------------------------------------------------------------ gather */

static int gather_bytes_k(void *p, pa_err *err)
{
    sort_args *a = p;
    return kn__cpu_sort_gather_bytes(&a->ctx, &a->l, sources_of(a), a->n_sources, a->column, a->a, a->na,
                                     a->count, err);
}

int kn__sim_sort_gather_bytes(const kn_ctx *ctx, const kn_sort_layout *l, const kn_sort_source *sources,
                              int n_sources, int column, const uint8_t *recs, int64_t n, int64_t *bytes, pa_err *err)
{
    kn__args b;
    sort_args a = {.column = column, .a = recs, .na = n, .count = bytes};
    sort_block(&b, &a, ctx, l, sources, n_sources, column + 1);
    KN__POISON(ctx, bytes);
    return kn__args_launch(&b, &a, sizeof a, ctx, gather_bytes_k, err);
}

static int gather_k(void *p, pa_err *err)
{
    sort_args *a = p;
    return kn__cpu_sort_gather(&a->ctx, &a->l, sources_of(a), a->n_sources, a->column, a->a, a->na, &a->col, err);
}

int kn__sim_sort_gather(const kn_ctx *ctx, const kn_sort_layout *l, const kn_sort_source *sources, int n_sources,
                        int column, const uint8_t *recs, int64_t n, pa_column *out, pa_err *err)
{
    kn__args b;
    out->length = n;
    sort_args a = {.column = column, .a = recs, .na = n, .col = *out};
    sort_block(&b, &a, ctx, l, sources, n_sources, column + 1);
    return kn__args_launch(&b, &a, sizeof a, ctx, gather_k, err);
}

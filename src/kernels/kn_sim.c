/*
 * kn_sim.c - the `sim` device's table of kernels: the argument blocks and
 * launch shared by every entry (kn_sim_int.h), and the entries for
 * hashing, partitioning, take, append and concatenation. Expressions and
 * selection, joins, aggregation and sort are in kn_sim_*.c.
 */
#include "kernels/kn_sim_int.h"

#include <string.h>

#define KN__SIM_ENTRY(name, params, args) .name = kn__sim_##name,
const kn_ops kn__sim_ops = {KN_OPS_LIST(KN__SIM_ENTRY)};
#undef KN__SIM_ENTRY

/* ------------------------------------------------------ argument blocks */

static size_t up16(size_t n) { return (n + 15) & ~(size_t)15; }

void kn__args_begin(kn__args *b, size_t head_size)
{
    memset(b, 0, sizeof *b);
    kn__args_put(b, NULL, head_size);
}

size_t kn__args_put(kn__args *b, const void *src, size_t n)
{
    if (b->oom)
        return 0;
    size_t at = up16(b->used);
    if (at + n > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < at + n)
            cap *= 2;
        uint8_t *p = pa_realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return 0;
        }
        b->p = p;
        b->cap = cap;
    }
    if (n && src)
        memcpy(b->p + at, src, n);
    b->used = at + n;
    return at;
}

int kn__args_launch(kn__args *b, const void *head, size_t head_size, const kn_ctx *ctx, dv_kernel_fn fn,
                    pa_err *err)
{
    int rc;
    if (b->oom) {
        rc = pa_error(err, PA_ENOMEM, "out of memory for the arguments of a kernel on %s", dv_name(ctx->dev));
    } else {
        memcpy(b->p, head, head_size);
        rc = kn__sim_launch(ctx, fn, b->p, b->used, err);
    }
    pa_free(b->p);
    b->p = NULL;
    return rc;
}

int kn__sim_launch(const kn_ctx *ctx, dv_kernel_fn fn, const void *args, size_t size, pa_err *err)
{
    if (!ctx->stream)
        return pa_error(err, PA_EINVAL, "a kernel on device %s needs a stream", dv_name(ctx->dev));
    return dv_launch_kernel(ctx->stream, fn, args, size, err);
}

/* ---------------------------------------------------------------- hashing */

typedef struct hash_args {
    kn_ctx ctx;
    size_t keys_at;
    int n_keys;
    int64_t rows;
    uint64_t *hashes;
} hash_args;

static int hash_k(void *p, pa_err *err)
{
    hash_args *a = p;
    return kn__cpu_hash_keys(&a->ctx, KN__AT(a, pa_column, a->keys_at), a->n_keys, a->rows, a->hashes, err);
}

int kn__sim_hash_keys(const kn_ctx *ctx, const pa_column *keys, int n_keys, int64_t rows, uint64_t *hashes,
                      pa_err *err)
{
    kn__args b;
    kn__args_begin(&b, sizeof(hash_args));
    hash_args a = {*ctx, kn__args_put(&b, keys, (size_t)(n_keys > 0 ? n_keys : 0) * sizeof *keys), n_keys, rows,
                   hashes};
    return kn__args_launch(&b, &a, sizeof a, ctx, hash_k, err);
}

/* ----------------------------------------------------------- partitioning */

typedef struct part_args {
    kn_ctx ctx;
    const void *in;              /* hashes (ids) or partition ids */
    int64_t rows;
    uint32_t n_parts;
    void *out;                   /* ids, offsets, or the row order */
    const int64_t *offsets;      /* order */
    void *scratch;
    size_t scratch_size;
} part_args;

static int part_ids_k(void *p, pa_err *err)
{
    part_args *a = p;
    return kn__cpu_partition_ids(&a->ctx, a->in, a->rows, a->n_parts, a->out, err);
}

int kn__sim_partition_ids(const kn_ctx *ctx, const uint64_t *hashes, int64_t rows, uint32_t n_parts,
                          uint32_t *part, pa_err *err)
{
    part_args a = {*ctx, hashes, rows, n_parts, part, NULL, NULL, 0};
    return kn__sim_launch(ctx, part_ids_k, &a, sizeof a, err);
}

static int part_offsets_k(void *p, pa_err *err)
{
    part_args *a = p;
    return kn__cpu_partition_offsets(&a->ctx, a->in, a->rows, a->n_parts, a->out, err);
}

int kn__sim_partition_offsets(const kn_ctx *ctx, const uint32_t *part, int64_t rows, uint32_t n_parts,
                              int64_t *offsets, pa_err *err)
{
    part_args a = {*ctx, part, rows, n_parts, offsets, NULL, NULL, 0};
    if (n_parts >= 1)
        dv_poison_output(ctx->dev, offsets, ((size_t)n_parts + 1) * sizeof *offsets);
    return kn__sim_launch(ctx, part_offsets_k, &a, sizeof a, err);
}

static int part_order_k(void *p, pa_err *err)
{
    part_args *a = p;
    return kn__cpu_partition_order(&a->ctx, a->in, a->rows, a->n_parts, a->offsets, a->scratch, a->scratch_size,
                                   a->out, err);
}

int kn__sim_partition_order(const kn_ctx *ctx, const uint32_t *part, int64_t rows, uint32_t n_parts,
                            const int64_t *offsets, void *scratch, size_t scratch_size, int32_t *row_order,
                            pa_err *err)
{
    part_args a = {*ctx, part, rows, n_parts, row_order, offsets, scratch, scratch_size};
    return kn__sim_launch(ctx, part_order_k, &a, sizeof a, err);
}

/* ------------------------------------------------------ take and append */

typedef struct take_args {
    kn_ctx ctx;
    pa_column src, dst;
    const int32_t *idx;
    int64_t n;                   /* take: rows; append: the row `at` */
    int64_t *bytes;
} take_args;

static int take_bytes_k(void *p, pa_err *err)
{
    take_args *a = p;
    return kn__cpu_take_string_bytes(&a->ctx, &a->src, a->idx, a->n, a->bytes, err);
}

int kn__sim_take_string_bytes(const kn_ctx *ctx, const pa_column *src, const int32_t *idx, int64_t n,
                              int64_t *bytes, pa_err *err)
{
    take_args a = {.ctx = *ctx, .src = *src, .idx = idx, .n = n, .bytes = bytes};
    KN__POISON(ctx, bytes);
    return kn__sim_launch(ctx, take_bytes_k, &a, sizeof a, err);
}

static int take_k(void *p, pa_err *err)
{
    take_args *a = p;
    return kn__cpu_take(&a->ctx, &a->src, a->idx, a->n, &a->dst, err);
}

int kn__sim_take(const kn_ctx *ctx, const pa_column *src, const int32_t *idx, int64_t n, pa_column *dst,
                 pa_err *err)
{
    dst->type = src->type;
    dst->length = n;
    take_args a = {.ctx = *ctx, .src = *src, .dst = *dst, .idx = idx, .n = n};
    return kn__sim_launch(ctx, take_k, &a, sizeof a, err);
}

static int append_k(void *p, pa_err *err)
{
    take_args *a = p;
    return kn__cpu_append_column(&a->ctx, &a->src, &a->dst, a->n, err);
}

int kn__sim_append_column(const kn_ctx *ctx, const pa_column *src, pa_column *dst, int64_t at, pa_err *err)
{
    take_args a = {.ctx = *ctx, .src = *src, .dst = *dst, .n = at};
    return kn__sim_launch(ctx, append_k, &a, sizeof a, err);
}

/* ---------------------------------------------------------- concatenation */

typedef struct concat_args {
    kn_ctx ctx;
    size_t srcs_at;
    int n;
    pa_column dst;
    int64_t *bytes;
} concat_args;

static int concat_bytes_k(void *p, pa_err *err)
{
    concat_args *a = p;
    return kn__cpu_concat_bytes(&a->ctx, KN__AT(a, pa_column, a->srcs_at), a->n, a->bytes, err);
}

static int concat_k(void *p, pa_err *err)
{
    concat_args *a = p;
    return kn__cpu_concat(&a->ctx, KN__AT(a, pa_column, a->srcs_at), a->n, &a->dst, err);
}

static int concat_launch(const kn_ctx *ctx, const pa_column *srcs, int n, const pa_column *dst, int64_t *bytes,
                         dv_kernel_fn fn, pa_err *err)
{
    kn__args b;
    kn__args_begin(&b, sizeof(concat_args));
    concat_args a = {.ctx = *ctx, .srcs_at = kn__args_put(&b, srcs, (size_t)(n > 0 ? n : 0) * sizeof *srcs),
                     .n = n, .bytes = bytes};
    if (dst)
        a.dst = *dst;
    return kn__args_launch(&b, &a, sizeof a, ctx, fn, err);
}

int kn__sim_concat_bytes(const kn_ctx *ctx, const pa_column *srcs, int n, int64_t *bytes, pa_err *err)
{
    KN__POISON(ctx, bytes);
    return concat_launch(ctx, srcs, n, NULL, bytes, concat_bytes_k, err);
}

int kn__sim_concat(const kn_ctx *ctx, const pa_column *srcs, int n, pa_column *dst, pa_err *err)
{
    return concat_launch(ctx, srcs, n, dst, NULL, concat_k, err);
}

/*
 * kn_ops_int.h - the relational kernels' table of operations (kn_ops): one
 * function pointer per kernel entry point that takes a kn_ctx, one table per
 * device kind, and the thin public wrappers of kernels.h that pick a table.
 *
 * Design notes
 * - KN_OPS_LIST is the one list of kernels: X(name, params, args) with the
 *   public function kn_<name>, its parameter list and the names to forward.
 *   It generates the kn_ops fields, the declarations of every backend's
 *   entries (kn__cpu_<name>, kn__sim_<name>), the public wrappers
 *   (kn_dispatch.c) and the tables. A public prototype in kernels.h that
 *   disagrees with the list does not compile.
 * - Tables: DV_KIND_CPU -> kn__cpu_ops, the loops themselves, run on the
 *   calling thread before the call returns (a NULL ctx or ctx->dev picks it
 *   too: host evaluation, e.g. constant folding). DV_KIND_SIM -> kn__sim_ops:
 *   the SIMT emulation of the CUDA sources (kn__gpu_<name>_simt, kn_gpu_*.cu)
 *   enqueued on the device's executor, and for a kernel of the host list
 *   (none at present) an entry of kn_sim*.c that enqueues the kn__cpu_ loop.
 *   DV_KIND_CUDA -> kn__cuda_ops (kn__gpu_<name>_cuda, built by nvcc). A
 *   kernel missing from a table is PA_EUNSUPPORTED naming the kernel and the
 *   device, never a host fallback.
 * - A kernel launch is counted once (PA_CTR_KERNELS_LAUNCHED): by the
 *   wrapper on the cpu device (with a device), by dv_launch_kernel on sim;
 *   the loops themselves count nothing.
 * - Host-side metadata of outputs that the call fixes (kn_take's dst->type
 *   and length, kn_sort_gather's out->length) is set on the calling thread
 *   by every backend, before the kernel runs.
 */
#ifndef PISTA_KN_OPS_INT_H
#define PISTA_KN_OPS_INT_H

#include "kernels/kernels.h"
#include "kernels/kn_regex.h"
#include "kernels/kn_scalar.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kernels that have a CUDA implementation (kn_gpu_*.cu): entries
 * kn__gpu_<name>_cuda on the cuda device and kn__gpu_<name>_simt, the same
 * source under SIMT emulation, on sim. */
#define KN_OPS_GPU_LIST(X)                                                                                      \
    X(select, (const kn_ctx *ctx, const pa_column *pred, int64_t rows, int32_t *sel, int64_t *count,            \
               pa_err *err),                                                                                    \
      (ctx, pred, rows, sel, count, err))                                                                       \
    X(gather, (const kn_ctx *ctx, const pa_column *in, const int32_t *sel, int64_t in_at, int64_t n,            \
               pa_column *out, int64_t out_at, pa_err *err),                                                    \
      (ctx, in, sel, in_at, n, out, out_at, err))                                                               \
    X(gather_str_bytes, (const kn_ctx *ctx, const pa_column *in, const int32_t *sel, int64_t in_at,             \
                         int64_t n, int64_t *bytes, pa_err *err),                                               \
      (ctx, in, sel, in_at, n, bytes, err))                                                                     \
    X(hash_keys, (const kn_ctx *ctx, const pa_column *keys, int n_keys, int64_t rows, uint64_t *hashes,         \
                  pa_err *err),                                                                                 \
      (ctx, keys, n_keys, rows, hashes, err))                                                                   \
    X(sequence, (const kn_ctx *ctx, int64_t start, int64_t step, int64_t n, int64_t *out, pa_err *err),         \
      (ctx, start, step, n, out, err))                                                                          \
    X(partition_ids, (const kn_ctx *ctx, const uint64_t *hashes, int64_t rows, uint32_t n_parts,                \
                      uint32_t *part, pa_err *err),                                                             \
      (ctx, hashes, rows, n_parts, part, err))                                                                  \
    X(partition_offsets, (const kn_ctx *ctx, const uint32_t *part, int64_t rows, uint32_t n_parts,              \
                          int64_t *offsets, pa_err *err),                                                       \
      (ctx, part, rows, n_parts, offsets, err))                                                                 \
    X(take_string_bytes, (const kn_ctx *ctx, const pa_column *src, const int32_t *idx, int64_t n,               \
                          int64_t *bytes, pa_err *err),                                                         \
      (ctx, src, idx, n, bytes, err))                                                                           \
    X(take, (const kn_ctx *ctx, const pa_column *src, const int32_t *idx, int64_t n, pa_column *dst,            \
             pa_err *err),                                                                                      \
      (ctx, src, idx, n, dst, err))                                                                             \
    X(append_column, (const kn_ctx *ctx, const pa_column *src, pa_column *dst, int64_t at, pa_err *err),        \
      (ctx, src, dst, at, err))                                                                                 \
    X(decompress_pages, (const kn_ctx *ctx, kn_codec_job *jobs, int64_t n, pa_err *err),                        \
      (ctx, jobs, n, err))                                                                                      \
    X(decode_pages, (const kn_ctx *ctx, kn_page_job *jobs, int64_t n, pa_err *err),                             \
      (ctx, jobs, n, err))                                                                                      \
    X(copy_bits, (const kn_ctx *ctx, const uint8_t *src, int64_t src_at, int64_t n, uint8_t *dst,               \
                  pa_err *err),                                                                                 \
      (ctx, src, src_at, n, dst, err))                                                                          \
    X(concat_bytes, (const kn_ctx *ctx, const pa_column *srcs, int n, int64_t *bytes, pa_err *err),             \
      (ctx, srcs, n, bytes, err))                                                                               \
    X(concat, (const kn_ctx *ctx, const pa_column *srcs, int n, pa_column *dst, pa_err *err),                   \
      (ctx, srcs, n, dst, err))                                                                                 \
    X(join_build, (const kn_ctx *ctx, kn_join_table *t, const uint64_t *hashes, pa_err *err),                   \
      (ctx, t, hashes, err))                                                                                    \
    X(join_build_begin, (const kn_ctx *ctx, kn_join_table *t, uint64_t slot_lo, uint64_t slot_hi,               \
                         pa_err *err),                                                                          \
      (ctx, t, slot_lo, slot_hi, err))                                                                          \
    X(join_build_rows, (const kn_ctx *ctx, kn_join_table *t, const uint64_t *hashes, int64_t lo,                \
                        int64_t hi, pa_err *err),                                                               \
      (ctx, t, hashes, lo, hi, err))                                                                            \
    X(join_probe, (const kn_ctx *ctx, const kn_join_table *t, kn_join_kind kind, const pa_column *probe_keys,   \
                   const uint64_t *hashes, int64_t rows, void *scratch, size_t scratch_size,                    \
                   kn_join_cursor *cur, int64_t capacity, int32_t *probe_idx, int32_t *build_idx,               \
                   uint8_t *mark, uint8_t *mark_valid, pa_err *err),                                            \
      (ctx, t, kind, probe_keys, hashes, rows, scratch, scratch_size, cur, capacity, probe_idx, build_idx,      \
       mark, mark_valid, err))                                                                                  \
    X(join_in_unknown, (const kn_ctx *ctx, const kn_join_table *t, const pa_column *probe_keys,                 \
                        int64_t rows, uint8_t *unknown, pa_err *err),                                           \
      (ctx, t, probe_keys, rows, unknown, err))                                                                 \
    X(join_cross, (const kn_ctx *ctx, int64_t rows, int64_t build_rows, kn_join_cursor *cur,                    \
                   int64_t capacity, int32_t *probe_idx, int32_t *build_idx, pa_err *err),                      \
      (ctx, rows, build_rows, cur, capacity, probe_idx, build_idx, err))                                        \
    X(join_pairs_filter, (const kn_ctx *ctx, const pa_column *pred, int64_t n, int32_t *probe_idx,              \
                          int32_t *build_idx, uint8_t *row_state, int64_t *count, pa_err *err),                 \
      (ctx, pred, n, probe_idx, build_idx, row_state, count, err))                                              \
    X(join_finish, (const kn_ctx *ctx, kn_join_kind kind, const uint8_t *row_state, const uint8_t *unknown,     \
                    int64_t rows, int32_t *probe_idx, int32_t *build_idx, uint8_t *mark,                        \
                    uint8_t *mark_valid, int64_t *count, int64_t *n_null, pa_err *err),                         \
      (ctx, kind, row_state, unknown, rows, probe_idx, build_idx, mark, mark_valid, count, n_null, err))        \
    /* expressions and selection */                                                                             \
    X(eval, (const kn_ctx *ctx, const kn_program *p, const pa_column *inputs, int n_inputs, int64_t rows,       \
             pa_column *outs, void *scratch, void *text, int64_t text_bytes, pa_err *err),                      \
      (ctx, p, inputs, n_inputs, rows, outs, scratch, text, text_bytes, err))                                   \
    X(eval_str_bytes, (const kn_ctx *ctx, const kn_program *p, int out, const pa_column *inputs,                \
                       int n_inputs, int64_t rows, int64_t *bytes, pa_err *err),                                \
      (ctx, p, out, inputs, n_inputs, rows, bytes, err))                                                        \
    X(filter, (const kn_ctx *ctx, const kn_program *p, const pa_column *inputs, int n_inputs, int64_t rows,     \
               int32_t *sel, int64_t *count, void *scratch, void *text, int64_t text_bytes, pa_err *err),       \
      (ctx, p, inputs, n_inputs, rows, sel, count, scratch, text, text_bytes, err))                             \
    /* partitioning */                                                                                          \
    X(partition_order, (const kn_ctx *ctx, const uint32_t *part, int64_t rows, uint32_t n_parts,                \
                        const int64_t *offsets, void *scratch, size_t scratch_size, int32_t *row_order,         \
                        pa_err *err),                                                                           \
      (ctx, part, rows, n_parts, offsets, scratch, scratch_size, row_order, err))                               \
    /* sort and top-N */                                                                                        \
    X(sort_encode, (const kn_ctx *ctx, const kn_sort_layout *l, kn_sort_source cols, int64_t n,                 \
                    uint32_t tag, uint8_t *recs, pa_err *err),                                                  \
      (ctx, l, cols, n, tag, recs, err))                                                                        \
    X(sort_records, (const kn_ctx *ctx, const kn_sort_layout *l, uint8_t *recs, int64_t n, void *scratch,       \
                     size_t scratch_size, const kn_sort_source *sources, int n_sources, pa_err *err),           \
      (ctx, l, recs, n, scratch, scratch_size, sources, n_sources, err))                                        \
    X(sort_merge, (const kn_ctx *ctx, const kn_sort_layout *l, const uint8_t *a, int64_t na,                    \
                   const uint8_t *b, int64_t nb, uint8_t *out, const kn_sort_source *sources,                   \
                   int n_sources, pa_err *err),                                                                 \
      (ctx, l, a, na, b, nb, out, sources, n_sources, err))                                                     \
    X(sort_merge_next, (const kn_ctx *ctx, const kn_sort_layout *l, const uint8_t *const *runs,                 \
                        const int64_t *counts, int64_t *pos, int n_runs, int64_t m, uint8_t *out,               \
                        const kn_sort_source *sources, int n_sources, pa_err *err),                             \
      (ctx, l, runs, counts, pos, n_runs, m, out, sources, n_sources, err))                                     \
    X(sort_filter, (const kn_ctx *ctx, const kn_sort_layout *l, const uint8_t *in, int64_t n,                   \
                    const uint8_t *threshold, uint8_t *out, int64_t *count, const kn_sort_source *sources,      \
                    int n_sources, pa_err *err),                                                                \
      (ctx, l, in, n, threshold, out, count, sources, n_sources, err))                                          \
    X(sort_copy, (const kn_ctx *ctx, const kn_sort_layout *l, const uint8_t *src, int64_t n,                    \
                  uint32_t tag_add, uint8_t *dst, pa_err *err),                                                 \
      (ctx, l, src, n, tag_add, dst, err))                                                                      \
    X(sort_gather_bytes, (const kn_ctx *ctx, const kn_sort_layout *l, const kn_sort_source *sources,            \
                          int n_sources, int column, const uint8_t *recs, int64_t n, int64_t *bytes,            \
                          pa_err *err),                                                                         \
      (ctx, l, sources, n_sources, column, recs, n, bytes, err))                                                \
    X(sort_gather, (const kn_ctx *ctx, const kn_sort_layout *l, const kn_sort_source *sources,                  \
                    int n_sources, int column, const uint8_t *recs, int64_t n, pa_column *out, pa_err *err),    \
      (ctx, l, sources, n_sources, column, recs, n, out, err))                                                   \
    /* aggregation */                                                                                           \
    X(agg_table_init, (const kn_ctx *ctx, kn_agg_table *t, const kn_agg_layout *L, void *mem,                   \
                       int64_t cap_groups, int64_t cap_arena, int64_t *sizes, pa_err *err),                     \
      (ctx, t, L, mem, cap_groups, cap_arena, sizes, err))                                                      \
    X(agg_table_move, (const kn_ctx *ctx, kn_agg_table *dst, const kn_agg_table *src, pa_err *err),             \
      (ctx, dst, src, err))                                                                                     \
    X(agg_input_bytes, (const kn_ctx *ctx, const kn_agg_table *t, const pa_column *keys,                        \
                        const pa_column *args, int64_t n, int64_t *out, pa_err *err),                           \
      (ctx, t, keys, args, n, out, err))                                                                        \
    X(agg_update, (const kn_ctx *ctx, kn_agg_table *t, const pa_column *keys, const pa_column *args,            \
                   int64_t n, void *scratch, size_t scratch_bytes, uint32_t *gids, pa_err *err),                \
      (ctx, t, keys, args, n, scratch, scratch_bytes, gids, err))                                               \
    X(agg_merge, (const kn_ctx *ctx, kn_agg_table *dst, const kn_agg_table *src, const uint32_t *key0_map,      \
                  uint32_t *gid_map, pa_err *err),                                                              \
      (ctx, dst, src, key0_map, gid_map, err))                                                                  \
    X(agg_partition, (const kn_ctx *ctx, kn_agg_table *t, void *scratch, size_t scratch_bytes,                  \
                      int64_t *start, int64_t *arena, pa_err *err),                                             \
      (ctx, t, scratch, scratch_bytes, start, arena, err))                                                      \
    X(agg_merge_range, (const kn_ctx *ctx, kn_agg_table *dst, const kn_agg_table *src, int64_t first,           \
                        int64_t n, pa_err *err),                                                                \
      (ctx, dst, src, first, n, err))                                                                           \
    X(agg_count_distinct, (const kn_ctx *ctx, kn_agg_table *t, int slot, const kn_agg_table *pairs,             \
                           pa_err *err),                                                                        \
      (ctx, t, slot, pairs, err))                                                                               \
    X(agg_emit_bytes, (const kn_ctx *ctx, const kn_agg_table *t, int key, const kn_agg_fin *f,                  \
                       int64_t first, int64_t count, int64_t *out, pa_err *err),                                \
      (ctx, t, key, f, first, count, out, err))                                                                 \
    X(agg_emit_key, (const kn_ctx *ctx, const kn_agg_table *t, int key, int64_t first, int64_t count,           \
                     pa_column *out, pa_err *err),                                                              \
      (ctx, t, key, first, count, out, err))                                                                    \
    X(agg_emit, (const kn_ctx *ctx, const kn_agg_table *t, const kn_agg_fin *f, int64_t first,                  \
                 int64_t count, pa_column *out, pa_err *err),                                                   \
      (ctx, t, f, first, count, out, err))                                                                    \
    /* window functions */                                                                                      \
    X(window_bounds, (const kn_ctx *ctx, const pa_column *keys, int n_part, int n_keys, int64_t rows,           \
                      int32_t *bounds, void *scratch, size_t scratch_bytes, pa_err *err),                       \
      (ctx, keys, n_part, n_keys, rows, bounds, scratch, scratch_bytes, err))                                   \
    X(window_frames, (const kn_ctx *ctx, const kn_window_frame *f, const int32_t *bounds, int64_t rows,         \
                      const pa_column *order_key, int32_t *frames, pa_err *err),                                \
      (ctx, f, bounds, rows, order_key, frames, err))                                                           \
    X(window_tree, (const kn_ctx *ctx, const kn_window_fn *fn, const pa_column *arg, const int32_t *bounds,     \
                    int64_t rows, void *tree, size_t tree_bytes, pa_err *err),                                  \
      (ctx, fn, arg, bounds, rows, tree, tree_bytes, err))                                                      \
    X(window_text_bytes, (const kn_ctx *ctx, const kn_window_fn *fn, const int32_t *bounds, const void *tree,   \
                          int64_t rows, int64_t first, int64_t n, int64_t *bytes, pa_err *err),                 \
      (ctx, fn, bounds, tree, rows, first, n, bytes, err))                                                      \
    X(window_eval, (const kn_ctx *ctx, const kn_window_fn *fn, const pa_column *arg, const int32_t *bounds,     \
                    const int32_t *frames, const void *tree, int64_t rows, int64_t first, int64_t n,            \
                    pa_column *out, int32_t *idx, pa_err *err),                                                 \
      (ctx, fn, arg, bounds, frames, tree, rows, first, n, out, idx, err))

/* Kernels without a GPU implementation: the loops run on the cpu device and
 * as enqueued host functions (kn__sim_<name>) on sim; on cuda they are
 * PA_EUNSUPPORTED. None at present. */
#define KN_OPS_HOST_LIST(X)

/* X(name, (params), (args)) for every relational kernel. */
#define KN_OPS_LIST(X) KN_OPS_GPU_LIST(X) KN_OPS_HOST_LIST(X)

typedef struct kn_ops {
#define KN__OPS_FIELD(name, params, args) int (*name) params;
    KN_OPS_LIST(KN__OPS_FIELD)
#undef KN__OPS_FIELD
} kn_ops;

/* Every backend's entries: kn__cpu_<name> (the loops, kn_*.c),
 * kn__sim_<name> (kn_sim*.c) for the host list, kn__gpu_<name>_simt and
 * kn__gpu_<name>_cuda (kn_gpu_*.cu) for the GPU list. */
#define KN__OPS_DECL(name, params, args) int kn__cpu_##name params;
#define KN__OPS_DECL_SIM(name, params, args) int kn__sim_##name params;
#define KN__OPS_DECL_GPU(name, params, args) int kn__gpu_##name##_simt params; int kn__gpu_##name##_cuda params;
KN_OPS_LIST(KN__OPS_DECL)
KN_OPS_HOST_LIST(KN__OPS_DECL_SIM)
KN_OPS_GPU_LIST(KN__OPS_DECL_GPU)
#undef KN__OPS_DECL
#undef KN__OPS_DECL_SIM
#undef KN__OPS_DECL_GPU

extern const kn_ops kn__cpu_ops;
extern const kn_ops kn__sim_ops;
#ifdef PISTA_HAVE_CUDA
extern const kn_ops kn__cuda_ops;
#endif

/* Host-side checks of a gather's rows and of its output (kn_select.c),
 * shared by the cpu loop and the CUDA entry. */
int kn__gather_rows_check(const pa_column *in, const int32_t *sel, int64_t in_at, int64_t n, pa_err *err);
int kn__gather_check(const pa_column *in, const int32_t *sel, int64_t in_at, int64_t n, const pa_column *out,
                     pa_err *err);

/* The table kernels on d use (NULL d: the cpu table); NULL when the device
 * kind has none. */
const kn_ops *kn__ops_for(const dv_device *d);
/* Tests only: make kind's kernels go through ops (NULL: no table) and
 * return the table it had. Not thread-safe against running kernels. */
const kn_ops *kn__ops_swap(dv_kind kind, const kn_ops *ops);

/* Expression programs: what the host checks before any evaluator runs
 * (kn_expr.c): the inputs have the types the program reads (and VARCHAR
 * ones offsets), outs (when not NULL) the output types; and a filter's
 * program has one BOOLEAN output and rows fit a selection vector. */
int kn__eval_check(const kn_program *p, const pa_column *inputs, int n_inputs, const pa_column *outs, pa_err *err);
int kn__filter_check(const kn_program *p, int64_t rows, pa_err *err);

/* Largest bytes of one character of fill text, walked as kn__s_pad walks
 * it (by lead bytes, a cut last one included; 1 for empty text). */
static inline PA_HD int64_t kn__max_char_bytes(const char *s, int64_t n)
{
    int64_t m = 1;
    for (int64_t f = 0; f < n;) {
        int64_t l = kn__s_u8len((unsigned char)s[f]);
        l = f + l > n ? n - f : l;
        m = l > m ? l : m;
        f += l;
    }
    return m;
}

/* The bound of a VARCHAR instruction's result from its operands': k[0..2]
 * bytes per byte of a, b, c (a constant operand counting its length per
 * row) and per_row bytes per row besides. The compiler's per-row slots
 * (kn_program_fill_text) and kn__str_bound apply this one rule, so they
 * agree. */
static inline PA_HD void kn__text_rule(const kn_program *p, const kn_insn *in, int64_t k[3], int64_t *per_row)
{
    const kn_value *cs = kn_program_consts(p);
    k[0] = k[1] = k[2] = 0;
    *per_row = 0;
    switch (in->op) {
    case KN_OP_CONST: *per_row = cs[in->a].str_len; return;
    case KN_OP_SUBSTR:
    case KN_OP_STRFN: k[0] = 1; return;   /* parts of a: views, never longer */
    case KN_OP_SELECT: k[1] = k[2] = 1; return;
    case KN_OP_TEXT: break;
    default: *per_row = KN_EVAL_STR_ROW_BYTES; return;   /* CAST to VARCHAR */
    }
    switch ((kn_textfn)in->sub) {
    case KN_TEXT_UPPER:
    case KN_TEXT_LOWER:
    case KN_TEXT_INITCAP:
        /* A mapped code point has at most one byte more than a two-byte
         * one, and ASCII maps to ASCII (kn_case.h): 1.5 times at most. */
        k[0] = 2;
        return;
    case KN_TEXT_CONCAT: k[0] = k[1] = 1; return;
    case KN_TEXT_CONCAT_WS: k[0] = k[1] = k[2] = 1; return;
    case KN_TEXT_REPLACE: {
        int64_t from = cs[in->b].str_len, to = cs[in->c].str_len;
        k[0] = from == 0 || to <= from ? 1 : (to + from - 1) / from;
        return;
    }
    case KN_TEXT_LPAD:
    case KN_TEXT_RPAD: {
        const kn_value *n = &cs[in->b], *fill = &cs[in->c];
        k[0] = 1;
        if (!n->is_null && n->v.i > 0 && !fill->is_null)   /* (the compiler refuses a count this large) */
            *per_row = (n->v.i < ((int64_t)1 << 40) ? n->v.i : ((int64_t)1 << 40)) *
                       kn__max_char_bytes(kn_program_pool(p) + fill->str_off, fill->str_len);
        return;
    }
    case KN_TEXT_REPEAT: {
        const kn_value *n = &cs[in->b];
        k[0] = n->is_null || n->v.i <= 0 ? 0 : n->v.i < ((int64_t)1 << 40) ? n->v.i : ((int64_t)1 << 40);
        return;
    }
    case KN_TEXT_REVERSE: k[0] = 1; return;
    case KN_TEXT_TRANSLATE:   /* each character (a byte at least) becomes at most one of c's */
        k[0] = kn__max_char_bytes(kn_program_pool(p) + cs[in->c].str_off, cs[in->c].str_len);
        return;
    case KN_TEXT_MD5: *per_row = 32; return;
    case KN_TEXT_BYTEA_IN: k[0] = 1; return;   /* never longer than its text */
    case KN_TEXT_BYTEA_OUT: k[0] = 2, *per_row = 2; return;
    case KN_TEXT_UUID_IN: *per_row = PA_UUID_BYTES; return;
    case KN_TEXT_UUID_OUT: *per_row = 36; return;
    case KN_TEXT_REGEXP_REPLACE: {
        /* At most n + 1 matches, which do not overlap: the text between
         * them (n), the replacement's literal bytes each time ((n + 1) *
         * lit) and each group reference's text (at most n in all). */
        kn__str r = {kn_program_pool(p) + cs[in->c].str_off, cs[in->c].str_len};
        int64_t lit, refs;
        uint32_t groups;
        kn__re_repl_measure(r, &lit, &refs, &groups);
        k[0] = 1 + lit + refs;
        *per_row = lit;
        return;
    }
    }
}

/* pos(i) of a kn_text_reg (kernels.h): where row i's slot starts. */
static inline PA_HD int64_t kn__text_pos(const kn_text_reg *t, const pa_column *inputs, int64_t i)
{
    int64_t v = t->per_row * i;
    for (int j = 0; j < t->n; j++) {
        const int32_t *o = inputs[t->col[j]].offsets;
        v += t->k[j] * (int64_t)(o[i] - o[0]);
    }
    return v;
}

/* Bytes of register text j's area over rows rows (8-byte multiples). */
static inline PA_HD int64_t kn__text_area_of(const kn_text_reg *t, const pa_column *inputs, int64_t rows)
{
    return (kn__text_pos(t, inputs, rows) + 7) & ~(int64_t)7;
}

/* kn_eval_str_bound's walk, callable where the inputs' offsets are: on the
 * host for host columns, in a kernel for device ones. Bounds past 2^62
 * saturate there (the allocation of such a size fails). */
static inline PA_HD int64_t kn__str_bound(const kn_program *p, int out, const pa_column *inputs, int n_inputs,
                                          int64_t rows)
{
    const int64_t big = (int64_t)1 << 62;
    if (out == KN_EVAL_TEXT_AREA) {
        int64_t sum = 0;
        for (int j = 0; j < p->n_text; j++) {
            sum += kn__text_area_of(&kn_program_text(p)[j], inputs, rows);
            sum = sum < big ? sum : big;
        }
        return sum;
    }
    int64_t b[KN_EVAL_MAX_REGS];
    const kn_insn *ins = kn_program_insns(p);
    const kn_value *cs = kn_program_consts(p);
    for (int r = 0; r < p->n_regs; r++)
        b[r] = 0;
    for (int i = 0; i < p->n_insns; i++) {
        const kn_insn *in = &ins[i];
        if (!pa_type_is_varlen(in->type.id))
            continue;
        __int128 v = 0;
        if (in->op == KN_OP_LOAD) {
            if (in->imm < n_inputs && inputs[in->imm].offsets && rows > 0)
                v = (int64_t)inputs[in->imm].offsets[rows] - inputs[in->imm].offsets[0];
        } else {
            int64_t k[3], per_row;
            kn__text_rule(p, in, k, &per_row);
            const int16_t op[3] = {in->a, in->b, in->c};
            v = (__int128)per_row * rows;
            for (int t = 0; t < 3; t++) {
                if (!k[t] || op[t] < 0)
                    continue;
                int64_t ob = ((in->flags >> t) & 1) ? rows * (int64_t)cs[op[t]].str_len : b[op[t]];
                v += (__int128)k[t] * ob;
            }
        }
        b[in->dst] = v < big ? (int64_t)v : big;
    }
    if (out < 0 || out >= p->n_outputs)
        return 0;
    return b[kn_program_outputs(p)[out].reg];
}

#ifdef __cplusplus
}
#endif

#endif /* PISTA_KN_OPS_INT_H */

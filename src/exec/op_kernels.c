/*
 * op_kernels.c - which relational kernels each kind of operator calls (the
 * kn_ functions of src/exec/op_*.c), so that a plan can be checked against
 * its device before it runs: an operator whose kernel the device lacks is
 * an error naming both, and EXPLAIN shows it, instead of a failure in the
 * middle of a query (or, worse, a quiet run somewhere else).
 */
#include "exec/sched_int.h"

static const char *const k_filter[] = {"filter", "gather", "gather_str_bytes"};
static const char *const k_project[] = {"eval", "eval_str_bytes"};
static const char *const k_join[] = {"append_column", "concat_bytes", "hash_keys", "join_build_begin",
                                     "join_build_rows", "join_probe", "take", "take_string_bytes", "join_cross",
                                     "join_finish", "join_in_unknown", "join_pairs_filter", "eval"};
static const char *const k_agg[] = {"agg_table_init", "agg_table_move", "agg_input_bytes", "agg_update",
                                    "agg_merge", "agg_partition", "agg_merge_range", "agg_count_distinct",
                                    "agg_emit_bytes", "agg_emit_key", "agg_emit"};
static const char *const k_sort[] = {"sort_encode", "sort_copy", "sort_records", "sort_merge_next",
                                     "sort_gather", "sort_gather_bytes"};
static const char *const k_topn[] = {"sort_encode", "sort_filter", "sort_copy", "sort_records",
                                     "sort_merge_next", "sort_gather", "sort_gather_bytes"};
static const char *const k_limit[] = {"copy_bits"};
static const char *const k_rechunk[] = {"concat", "concat_bytes"};
static const char *const k_series[] = {"sequence"};

#define LIST(a) *n = (int)(sizeof a / sizeof a[0]); return a

static const char *const *kernels_of(ex_op_kind k, int *n)
{
    switch (k) {
    case EX_OP_FILTER: LIST(k_filter);
    case EX_OP_PROJECT: LIST(k_project);
    case EX_OP_HASH_JOIN: LIST(k_join);
    case EX_OP_AGGREGATE:
    case EX_OP_DISTINCT: LIST(k_agg);
    case EX_OP_SORT: LIST(k_sort);
    case EX_OP_TOPN: LIST(k_topn);
    case EX_OP_LIMIT: LIST(k_limit);
    case EX_OP_RECHUNK: LIST(k_rechunk);
    case EX_OP_SERIES: LIST(k_series);
    default: *n = 0; return NULL;
    }
}
#undef LIST

const char *ex__op_lacks(const ex_op *op, const dv_device *d)
{
    int n = 0;
    const char *const *k = kernels_of(op->vt->kind, &n);
    return n ? kn_device_lacks(d, k, n) : NULL;
}

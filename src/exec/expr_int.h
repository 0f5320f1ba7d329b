/*
 * expr_int.h - internals of expressions: the node tree the ex_expr_*
 * builders make (expr.c, expr_build.c) and its compilation into a kernel
 * program (expr_compile.c), used by FILTER and PROJECT.
 *
 * Design notes
 * - Nodes are typed when built. Operand promotion is explicit: a builder
 *   wraps an operand in a CAST node when its type differs from the one the
 *   operation works in, so every instruction of the compiled program has
 *   uniform operand kinds. The rules (DuckDB's, which produced the TPC-H
 *   answers):
 *     numbers rank INTEGER < BIGINT < DECIMAL < DOUBLE; the wider wins.
 *     An INTEGER in DECIMAL arithmetic counts as DECIMAL(10,0), a BIGINT as
 *     DECIMAL(19,0).
 *     + and -: DECIMAL(max(p1-s1, p2-s2) + s + 1, s), s = max(s1, s2);
 *              both operands are rescaled to s.
 *     *:       DECIMAL(p1 + p2, s1 + s2); when that exceeds 18 digits but
 *              both operands have at most 18, the result stays DECIMAL(18,
 *              s1 + s2) in 64 bits, checked for overflow at run time.
 *     Precision above 38 is capped at 38, with a run-time check; scale
 *     above 38 is a build error.
 *     /:       both operands as DOUBLE.
 *     comparisons, IN, CASE: the common type; for DECIMALs
 *              DECIMAL(max(p1-s1, p2-s2) + s, s). A constant compared with
 *              a column is cast to the column's type when that is exact, so
 *              the column is read as is (l_quantity < 24 compares scaled
 *              integers).
 * - Folding: a node whose operands are all constants is evaluated at build
 *   time with the same kernel program (on the host, one row) and replaced
 *   by a constant; strict operations with a NULL constant operand become a
 *   NULL constant; AND/OR with a constant side simplify.
 * - Nodes live in the plan's arena: nothing is freed on its own.
 */
#ifndef PISTA_EXPR_INT_H
#define PISTA_EXPR_INT_H

#include "exec/exec_int.h"

#define EX__NODE_LIST(X)                                                      \
    X(COL) X(CONST) X(ARITH) X(NEG) X(CMP) X(AND) X(OR) X(NOT) X(IS_NULL)       \
    X(CASE) X(IN) X(LIKE) X(SUBSTR) X(EXTRACT) X(ADD_MONTHS) X(CAST) X(MATH)        \
    X(DATE_TRUNC) X(MAKE_DATE) X(STRFN) X(TEXT) X(DTARITH)

typedef enum ex__node {
#define EX__N(name) EX__##name,
    EX__NODE_LIST(EX__N)
#undef EX__N
} ex__node;

struct ex_expr {
    ex__node kind;
    int sub;                 /* ex_arith, ex_cmp, ex_field, kn_dtarith, negate flag */
    pa_type type;
    int n_args;
    ex_expr **args;          /* CASE: when0, then0, ..., else; IN: a, list... */
    int index;               /* COL: input column */
    int64_t imm;             /* ADD_MONTHS: months; ARITH: 1 = overflow check;
                              * MATH: the instruction's imm (low 32 bits) and imm2 */
    /* CONST (LIKE keeps its pattern here too). */
    bool is_null;
    union {
        int64_t i;           /* BOOLEAN, INTEGER, DATE, BIGINT, DECIMAL(<=18),
                                the timestamps, TIME */
        double f;
        __int128 w;          /* DECIMAL(19..38); INTERVAL a pa_interval's bytes */
    } v;
    const char *str;         /* VARCHAR bytes (plan memory) */
    int32_t str_len;
};

/* A new node of kind k and type t with n_args argument slots (plan memory). */
ex_expr *ex__node_new(ex_plan *p, ex__node k, pa_type t, int n_args, pa_err *err);
/* A constant from raw value memory of type t (the engine layout; VARCHAR
 * as bytes + length), or a NULL of type t. */
ex_expr *ex__const_raw(ex_plan *p, pa_type t, const void *value, const char *str, int32_t str_len, bool is_null,
                       pa_err *err);
/* Evaluate a node whose operands are all constants into a constant node;
 * returns e itself when it is not foldable. NULL on error (overflow...). */
ex_expr *ex__fold(ex_plan *p, ex_expr *e, pa_err *err);
/* CAST node (folded when a is constant); a itself when the type matches. */
ex_expr *ex__cast(ex_plan *p, ex_expr *a, pa_type t, pa_err *err);
/* Structural equality (for sharing subexpressions). */
bool ex__expr_equal(const ex_expr *a, const ex_expr *b);
static inline bool ex__type_eq(pa_type a, pa_type b)
{
    return a.id == b.id && (a.id != PA_TYPE_DECIMAL || (a.precision == b.precision && a.scale == b.scale));
}

/* Compile n expressions into one program with n outputs (output i =
 * exprs[i]). *out is pa_malloc'd: the caller frees it with pa_free (or
 * copies it). Column references must fit n_inputs / input_types when given
 * (input_types NULL: not checked). */
int ex__compile(ex_expr *const *exprs, int n, const pa_type *input_types, int n_inputs, kn_program **out,
                pa_err *err);
/* The same, with the program copied into the plan's memory. */
int ex__compile_plan(ex_plan *p, ex_expr *const *exprs, int n, const ex_op *input, kn_program **out, pa_err *err);

/* The text area an operator's program calls need (kn_eval_str_bound with
 * KN_EVAL_TEXT_AREA): worker-local state, grown (stream-ordered, as
 * ex_free is) to the largest chunk's need so far. */
typedef struct ex_text_area {
    void *p;
    int64_t cap;
} ex_text_area;
int ex_text_area_reserve(ex_op *op, ex_text_area *a, int64_t bytes, pa_err *err);
void ex_text_area_free(ex_op *op, ex_text_area *a);

#endif /* PISTA_EXPR_INT_H */

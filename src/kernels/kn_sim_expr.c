/*
 * kn_sim_expr.c - the `sim` device's entries for expression programs and
 * selection: kn_eval, kn_eval_str_bytes, kn_filter, kn_select, kn_gather.
 * A program is copied whole into the argument block, as a GPU launch would
 * copy it to the device, so the kernel never reads the caller's copy.
 */
#include "kernels/kn_sim_int.h"

/* ------------------------------------------------------------ programs */

typedef struct prog_args {
    kn_ctx ctx;
    size_t prog_at, in_at, out_at;  /* the program, inputs[n_inputs], outs[] */
    int n_inputs;
    int out;                        /* eval_str_bytes: the output */
    int64_t rows;
    void *scratch;
    int32_t *sel;
    int64_t *count;                 /* filter: the count; eval_str_bytes: the bytes */
} prog_args;

/* Block with the program and the inputs; outs (n_outs of them) if any. */
static void prog_block(kn__args *b, prog_args *a, const kn_ctx *ctx, const kn_program *p, const pa_column *inputs,
                       int n_inputs, const pa_column *outs, int n_outs)
{
    kn__args_begin(b, sizeof *a);
    a->ctx = *ctx;
    a->prog_at = kn__args_put(b, p, p->bytes);
    a->in_at = kn__args_put(b, inputs, (size_t)(n_inputs > 0 ? n_inputs : 0) * sizeof *inputs);
    a->out_at = kn__args_put(b, outs, (size_t)n_outs * sizeof *outs);
    a->n_inputs = n_inputs;
}

static int eval_k(void *p, pa_err *err)
{
    prog_args *a = p;
    return kn__cpu_eval(&a->ctx, KN__AT(a, kn_program, a->prog_at), KN__AT(a, pa_column, a->in_at), a->n_inputs,
                        a->rows, KN__AT(a, pa_column, a->out_at), a->scratch, err);
}

int kn__sim_eval(const kn_ctx *ctx, const kn_program *p, const pa_column *inputs, int n_inputs, int64_t rows,
                 pa_column *outs, void *scratch, pa_err *err)
{
    kn__args b;
    prog_args a = {.rows = rows, .scratch = scratch};
    prog_block(&b, &a, ctx, p, inputs, n_inputs, outs, p->n_outputs);
    return kn__args_launch(&b, &a, sizeof a, ctx, eval_k, err);
}

static int str_bytes_k(void *p, pa_err *err)
{
    prog_args *a = p;
    return kn__cpu_eval_str_bytes(&a->ctx, KN__AT(a, kn_program, a->prog_at), a->out,
                                  KN__AT(a, pa_column, a->in_at), a->n_inputs, a->rows, a->count, err);
}

int kn__sim_eval_str_bytes(const kn_ctx *ctx, const kn_program *p, int out, const pa_column *inputs, int n_inputs,
                           int64_t rows, int64_t *bytes, pa_err *err)
{
    kn__args b;
    prog_args a = {.out = out, .rows = rows, .count = bytes};
    prog_block(&b, &a, ctx, p, inputs, n_inputs, NULL, 0);
    KN__POISON(ctx, bytes);
    return kn__args_launch(&b, &a, sizeof a, ctx, str_bytes_k, err);
}

static int filter_k(void *p, pa_err *err)
{
    prog_args *a = p;
    return kn__cpu_filter(&a->ctx, KN__AT(a, kn_program, a->prog_at), KN__AT(a, pa_column, a->in_at), a->n_inputs,
                          a->rows, a->sel, a->count, a->scratch, err);
}

int kn__sim_filter(const kn_ctx *ctx, const kn_program *p, const pa_column *inputs, int n_inputs, int64_t rows,
                   int32_t *sel, int64_t *count, void *scratch, pa_err *err)
{
    kn__args b;
    prog_args a = {.rows = rows, .scratch = scratch, .sel = sel, .count = count};
    prog_block(&b, &a, ctx, p, inputs, n_inputs, NULL, 0);
    KN__POISON(ctx, count);
    return kn__args_launch(&b, &a, sizeof a, ctx, filter_k, err);
}

/* ------------------------------------------------------ select, gather */

typedef struct sel_args {
    kn_ctx ctx;
    pa_column in, out;
    const int32_t *sel_in;       /* gather: the selection, or NULL */
    int32_t *sel_out;            /* select: the selection written */
    int64_t rows, in_at, out_at; /* select: rows; gather: n rows from in_at to out_at */
    int64_t *count;              /* select: the count; gather_str_bytes: the bytes */
} sel_args;

static int select_k(void *p, pa_err *err)
{
    sel_args *a = p;
    return kn__cpu_select(&a->ctx, &a->in, a->rows, a->sel_out, a->count, err);
}

int kn__sim_select(const kn_ctx *ctx, const pa_column *pred, int64_t rows, int32_t *sel, int64_t *count,
                   pa_err *err)
{
    sel_args a = {.ctx = *ctx, .in = *pred, .sel_out = sel, .rows = rows, .count = count};
    KN__POISON(ctx, count);
    return kn__sim_launch(ctx, select_k, &a, sizeof a, err);
}

static int gather_k(void *p, pa_err *err)
{
    sel_args *a = p;
    return kn__cpu_gather(&a->ctx, &a->in, a->sel_in, a->in_at, a->rows, &a->out, a->out_at, err);
}

int kn__sim_gather(const kn_ctx *ctx, const pa_column *in, const int32_t *sel, int64_t in_at, int64_t n,
                   pa_column *out, int64_t out_at, pa_err *err)
{
    sel_args a = {.ctx = *ctx, .in = *in, .out = *out, .sel_in = sel, .rows = n, .in_at = in_at, .out_at = out_at};
    return kn__sim_launch(ctx, gather_k, &a, sizeof a, err);
}

static int gather_bytes_k(void *p, pa_err *err)
{
    sel_args *a = p;
    return kn__cpu_gather_str_bytes(&a->ctx, &a->in, a->sel_in, a->in_at, a->rows, a->count, err);
}

int kn__sim_gather_str_bytes(const kn_ctx *ctx, const pa_column *in, const int32_t *sel, int64_t in_at, int64_t n,
                             int64_t *bytes, pa_err *err)
{
    sel_args a = {.ctx = *ctx, .in = *in, .sel_in = sel, .rows = n, .in_at = in_at, .count = bytes};
    KN__POISON(ctx, bytes);
    return kn__sim_launch(ctx, gather_bytes_k, &a, sizeof a, err);
}

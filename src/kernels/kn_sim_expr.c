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

/*
 * plan.c - physical plans: the arena that holds operators, names and builder
 * parameters, operator creation, output schemas, and the names of operator
 * kinds and execution modes.
 */
#include "exec/sched_int.h"

#include <string.h>
#include <strings.h>

/* Arena blocks: small requests share a block, large ones get their own. */
#define ARENA_BLOCK (16u << 10)
#define ARENA_ALIGN 16

typedef struct ex__block {
    struct ex__block *next;
    size_t used, cap;
    _Alignas(ARENA_ALIGN) unsigned char data[];
} ex__block;

int ex_plan_create(ex_plan **out, pa_err *err)
{
    ex_plan *p = pa_calloc(1, sizeof *p);
    if (!p)
        return pa_error(err, PA_ENOMEM, "out of memory creating a plan");
    *out = p;
    return PA_OK;
}

void ex__plan_destroy_ops(ex_plan *p)
{
    /* Tops first is not needed: destroy frees an op's own state only. */
    for (int i = 0; i < p->n_ops; i++) {
        if (!p->destroyed[i] && p->ops[i]->vt && p->ops[i]->vt->destroy)
            p->ops[i]->vt->destroy(p->ops[i]);
        p->destroyed[i] = 1;
    }
}

void ex_plan_destroy(ex_plan *p)
{
    if (!p)
        return;
    ex__plan_destroy_ops(p);
    for (ex__block *b = p->blocks, *n; b; b = n) {
        n = b->next;
        pa_free(b);
    }
    pa_free(p->ops);
    pa_free(p->destroyed);
    pa_free(p);
}

void *ex_plan_alloc(ex_plan *p, size_t size)
{
    size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    ex__block *b = p->blocks;
    if (!b || b->cap - b->used < size) {
        size_t cap = size > ARENA_BLOCK / 4 ? size : ARENA_BLOCK;
        ex__block *nb = pa_malloc(sizeof *nb + cap);
        if (!nb)
            return NULL;
        nb->used = 0;
        nb->cap = cap;
        if (b && cap != ARENA_BLOCK) {   /* a big one: keep filling the current block */
            nb->next = b->next;
            b->next = nb;
        } else {
            nb->next = b;
            p->blocks = nb;
        }
        b = nb;
    }
    void *r = b->data + b->used;
    b->used += size;
    memset(r, 0, size);
    return r;
}

char *ex_plan_strdup(ex_plan *p, const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *r = ex_plan_alloc(p, n);
    if (r)
        memcpy(r, s, n);
    return r;
}

int ex_op_new(ex_plan *p, const ex_op_vt *vt, int n_cols, ex_op **out, pa_err *err)
{
    if (!p || !vt || n_cols < 0)
        return pa_error(err, PA_EINVAL, "ex_op_new: bad arguments");
    if (p->ran)
        return pa_error(err, PA_EINVAL, "plan already ran: operators cannot be added");
    if (p->n_ops == p->cap_ops) {
        int cap = p->cap_ops ? p->cap_ops * 2 : 16;
        ex_op **ops = pa_realloc(p->ops, (size_t)cap * sizeof *ops);
        if (!ops)
            return pa_error(err, PA_ENOMEM, "out of memory adding an operator");
        p->ops = ops;
        uint8_t *d = pa_realloc(p->destroyed, (size_t)cap);
        if (!d)
            return pa_error(err, PA_ENOMEM, "out of memory adding an operator");
        p->destroyed = d;
        p->cap_ops = cap;
    }
    ex_op *op = ex_plan_alloc(p, sizeof *op);
    const char **names = ex_plan_alloc(p, (size_t)(n_cols ? n_cols : 1) * sizeof *names);
    pa_type *types = ex_plan_alloc(p, (size_t)(n_cols ? n_cols : 1) * sizeof *types);
    if (!op || !names || !types)
        return pa_error(err, PA_ENOMEM, "out of memory adding an operator");
    op->vt = vt;
    op->plan = p;
    op->n_cols = n_cols;
    op->names = names;
    op->types = types;
    op->est_rows = -1;
    op->pipeline = -1;
    snprintf(op->label, sizeof op->label, "%s", ex_op_kind_name(vt->kind));
    p->ops[p->n_ops] = op;
    p->destroyed[p->n_ops] = 0;
    p->n_ops++;
    *out = op;
    return PA_OK;
}

int ex_op_set_column(ex_op *op, int i, const char *name, pa_type type, pa_err *err)
{
    if (!op || i < 0 || i >= op->n_cols)
        return pa_error(err, PA_EINVAL, "output column %d of %s out of range", i, op ? op->label : "?");
    if (type.id < 0 || type.id >= PA_TYPE__COUNT)
        return pa_error(err, PA_EINVAL, "output column %d of %s: bad type", i, op->label);
    const char *n = ex_plan_strdup(op->plan, name ? name : "");
    if (!n)
        return pa_error(err, PA_ENOMEM, "out of memory naming a column");
    op->names[i] = n;
    op->types[i] = type;
    return PA_OK;
}

void ex_op_set_label(ex_op *op, const char *label)
{
    if (op && label)
        snprintf(op->label, sizeof op->label, "%s", label);
}

void ex_op_set_estimate(ex_op *op, double rows)
{
    if (!op)
        return;
    op->has_est = rows >= 0;   /* false for NaN too */
    op->est = op->has_est ? rows : 0;
    if (op->has_est)
        op->est_rows = rows < 9e18 ? (int64_t)(rows + 0.5) : INT64_MAX;
}

int ex_op_columns(const ex_op *op) { return op ? op->n_cols : 0; }

const char *ex_op_column_name(const ex_op *op, int i)
{
    return op && i >= 0 && i < op->n_cols ? op->names[i] : NULL;
}

pa_type ex_op_column_type(const ex_op *op, int i)
{
    pa_type none = {PA_TYPE__COUNT, 0, 0};
    return op && i >= 0 && i < op->n_cols ? op->types[i] : none;
}

int ex_op_find_column(const ex_op *op, const char *name)
{
    if (!op || !name)
        return -1;
    for (int i = 0; i < op->n_cols; i++)
        if (op->names[i] && !strcmp(op->names[i], name))
            return i;
    return -1;
}

const char *ex_op_kind_name(ex_op_kind k)
{
    static const char *const names[] = {
#define EX__KN(name) #name,
        EX_OP_KIND_LIST(EX__KN)
#undef EX__KN
    };
    return (unsigned)k < EX_OP__COUNT ? names[k] : "?";
}

const char *ex_mode_name(ex_mode m)
{
    switch (m) {
    case EX_MODE_OVERLAPPED: return "overlapped";
    case EX_MODE_CHUNKED: return "chunked";
    case EX_MODE_BLOCKING: return "blocking";
    }
    return "?";
}

int ex_mode_parse(const char *text, ex_mode *out, pa_err *err)
{
    static const ex_mode all[] = {EX_MODE_OVERLAPPED, EX_MODE_CHUNKED, EX_MODE_BLOCKING};
    for (size_t i = 0; text && i < sizeof all / sizeof all[0]; i++)
        if (!strcasecmp(text, ex_mode_name(all[i]))) {
            *out = all[i];
            return PA_OK;
        }
    return pa_error(err, PA_EINVAL, "unknown execution mode '%s' (overlapped, chunked or blocking)",
                    text ? text : "");
}

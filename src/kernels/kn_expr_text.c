/*
 * kn_expr_text.c - TEXT instructions (kernels.h, kn_textfn) over a batch:
 * functions that make new text. Each row's result goes to its own slot of
 * the register's part of the call's text area (kn_text_reg: no two rows,
 * batches or registers share bytes), and the register holds views of it.
 * The per-value work is kn_text.h's, which the CUDA kernels share.
 */
#include "kernels/kn_expr_int.h"
#include "kernels/kn_text.h"

#include <string.h>

/* Operand k of in as string views: a register's, or a constant's. */
static kn__str operand_str(const kn__eval *e, const kn_insn *in, int k, int i)
{
    int16_t idx = k == 0 ? in->a : k == 1 ? in->b : in->c;
    if ((in->flags >> k) & 1)
        return kn__const_str(e, &e->consts[idx]);
    return ((const kn__str *)e->regs[idx].data)[i];
}

/* memcpy, but a view of no bytes may have no pointer (an empty area). */
static void put(char *dst, kn__str s)
{
    if (s.len > 0)
        memcpy(dst, s.p, (size_t)s.len);
}

static bool operand_valid(const kn__eval *e, const kn_insn *in, int k, int i)
{
    int16_t idx = k == 0 ? in->a : k == 1 ? in->b : in->c;
    if ((in->flags >> k) & 1)
        return !e->consts[idx].is_null;
    return kn__valid(&e->regs[idx], i);
}

int kn__op_text(kn__eval *e, const kn_insn *in)
{
    kn__reg *d = &e->regs[in->dst];
    if (!d->slots)
        return pa_error(e->err, PA_EINVAL, "expression program: TEXT into register %d without a text slot", in->dst);
    kn__str *D = d->data = d->slot;
    const kn_textfn fn = (kn_textfn)in->sub;
    const int n = e->n;
    const bool ws = fn == KN_TEXT_CONCAT_WS;
    /* Validity: CONCAT_WS is NULL only when a and c are; the others are
     * NULL when an operand is (REPLACE, LPAD, RPAD, REPEAT: constants). */
    bool any_null = false;
    for (int i = 0; i < n; i++) {
        bool ok;
        if (ws)
            ok = operand_valid(e, in, 0, i) || operand_valid(e, in, 2, i);
        else
            ok = operand_valid(e, in, 0, i) && (in->b < 0 || operand_valid(e, in, 1, i)) &&
                 (in->c < 0 || operand_valid(e, in, 2, i));
        if (!ok && !any_null) {
            any_null = true;
            memset(d->valid, 0xff, KN__WORDS * 8);
        }
        if (any_null)
            kn__set_bit(d->valid, i, ok);
    }
    d->nulls = any_null;
    const int64_t cb = (in->flags & KN_F_B_CONST) ? e->consts[in->b].v.i : 0;
    for (int i = 0; i < n; i++) {
        if (!kn__valid(d, i)) {
            D[i].p = d->area, D[i].len = 0;
            continue;
        }
        char *slot = d->area + kn__text_pos(d->slots, e->inputs, e->base + i);
        kn__str a = operand_str(e, in, 0, i);
        int64_t len = 0;
        switch (fn) {
        case KN_TEXT_UPPER: len = kn__s_case(a, slot, 0); break;
        case KN_TEXT_LOWER: len = kn__s_case(a, slot, 1); break;
        case KN_TEXT_INITCAP: len = kn__s_case(a, slot, 2); break;
        case KN_TEXT_CONCAT: {
            kn__str b = operand_str(e, in, 1, i);
            put(slot, a);
            put(slot + a.len, b);
            len = a.len + b.len;
            break;
        }
        case KN_TEXT_CONCAT_WS: {
            bool va = operand_valid(e, in, 0, i), vc = operand_valid(e, in, 2, i);
            kn__str c = operand_str(e, in, 2, i);
            if (!vc) {
                D[i] = a;   /* a view of a's slot: nothing to copy */
                continue;
            }
            if (!va) {
                D[i] = c;
                continue;
            }
            kn__str b = operand_valid(e, in, 1, i) ? operand_str(e, in, 1, i) : (kn__str){a.p, 0};
            put(slot, a);
            put(slot + a.len, b);
            put(slot + a.len + b.len, c);
            len = a.len + b.len + c.len;
            break;
        }
        case KN_TEXT_REPLACE:
            len = kn__s_replace(a, operand_str(e, in, 1, i), operand_str(e, in, 2, i), slot);
            break;
        case KN_TEXT_LPAD:
        case KN_TEXT_RPAD: len = kn__s_pad(a, cb, operand_str(e, in, 2, i), fn == KN_TEXT_LPAD, slot); break;
        case KN_TEXT_REPEAT:
            for (int64_t k = 0; k < cb; k++)
                put(slot + k * a.len, a);
            len = cb > 0 ? cb * a.len : 0;
            break;
        case KN_TEXT_REVERSE: len = kn__s_reverse(a, slot); break;
        case KN_TEXT_TRANSLATE:
            len = kn__s_translate(a, operand_str(e, in, 1, i), operand_str(e, in, 2, i), slot);
            break;
        case KN_TEXT_MD5: len = kn__s_md5(a, slot); break;
        case KN_TEXT_REGEXP_REPLACE: {
            kn__str prog = operand_str(e, in, 1, i);
            len = kn__re_replace((const uint8_t *)prog.p, a, operand_str(e, in, 2, i), slot);
            break;
        }
        case KN_TEXT_BYTEA_IN:
        case KN_TEXT_BYTEA_OUT:
        case KN_TEXT_UUID_IN:
        case KN_TEXT_UUID_OUT:
            if (!kn__s_bytes_cast(fn, a, slot, &len)) {
                if (fn == KN_TEXT_UUID_OUT)
                    return pa_error(e->err, PA_ECORRUPT, "a UUID value of %lld bytes (16 expected)", (long long)a.len);
                return pa_error(e->err, PA_EINVAL, "invalid input syntax for type %s: \"%.*s\"",
                                kn__s_pg_type_name(in->type.id), (int)(a.len > 200 ? 200 : a.len), a.p);
            }
            break;
        default: return pa_error(e->err, PA_EINVAL, "expression program: TEXT function %d", in->sub);
        }
        D[i].p = slot;
        D[i].len = len;
    }
    return PA_OK;
}

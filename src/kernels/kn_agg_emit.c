/*
 * kn_agg_emit.c - turning a group-by table into result columns: group keys
 * from the normalised rows, aggregates from their slots (SUM checked
 * against its output type, AVG as DuckDB computes it: the exact sum over
 * count * 10^scale in long double, NULL where no value was seen).
 */
#include "kernels/kn_agg_int.h"

static void set_valid(uint8_t *v, int64_t i, bool ok)
{
    if (ok)
        v[i >> 3] |= (uint8_t)(1u << (i & 7));
}

int kn__cpu_agg_emit_bytes(const kn_ctx *ctx, const kn_agg_table *t, int key, const kn_agg_fin *f, int64_t first,
                           int64_t count, int64_t *out, pa_err *err)
{
    const kn_agg_layout *L = &t->L;
    int64_t b = 0;
    if (first < 0 || count < 0 || first + count > t->hdr->groups)
        return pa_error(err, PA_EINVAL, "aggregation emit: groups %lld+%lld out of range", (long long)first,
                        (long long)count);
    if (key >= 0) {
        if (key >= L->n_keys || !pa_type_is_varlen(L->key_types[key].id))
            return pa_error(err, PA_EINVAL, "aggregation emit: key %d is not a string", key);
        for (int64_t g = first; g < first + count; g++) {
            uint32_t len;
            memcpy(&len, t->keys + (size_t)g * L->stride + L->key_off[key], 4);
            b += len;
        }
    } else {
        if (!f || kn__agg_slot_repr(&L->slots[f->value_slot]) != KN__AGG_R_STR)
            return pa_error(err, PA_EINVAL, "aggregation emit: result is not a string");
        const kn__agg_str *s = t->state[f->value_slot];
        for (int64_t g = first; g < first + count; g++)
            b += s[g].set ? s[g].len : 0;
    }
    *out = b;
    return PA_OK;
}

int kn__cpu_agg_emit_key(const kn_ctx *ctx, const kn_agg_table *t, int key, int64_t first, int64_t count,
                         pa_column *out, pa_err *err)
{
    const kn_agg_layout *L = &t->L;
    if (key < 0 || key >= L->n_keys || first < 0 || count < 0 || first + count > t->hdr->groups)
        return pa_error(err, PA_EINVAL, "aggregation emit: key %d, groups %lld+%lld out of range", key,
                        (long long)first, (long long)count);
    pa_type ty = L->key_types[key];
    int off = L->key_off[key], nf = L->null_off + key;
    size_t st = (size_t)L->stride;
    int w = pa_type_bytes(ty);
    memset(out->validity, 0, (size_t)(count + 7) / 8);
    const uint8_t *row = t->keys + (size_t)first * st;
    if (pa_type_is_varlen(ty.id)) {
        int32_t pos = 0;
        int j = L->key_str[key];
        out->offsets[0] = 0;
        for (int64_t i = 0; i < count; i++, row += st) {
            uint32_t len;
            memcpy(&len, row + off, 4);
            memcpy((uint8_t *)out->data + pos, t->arena + t->str_off[(size_t)(first + i) * L->n_str + j], len);
            pos += (int32_t)len;
            out->offsets[i + 1] = pos;
            set_valid(out->validity, i, !row[nf]);
        }
        return PA_OK;
    }
    uint8_t *dst = out->data;
    for (int64_t i = 0; i < count; i++, row += st) {
        memcpy(dst + i * w, row + off, (size_t)w);
        set_valid(out->validity, i, !row[nf]);
    }
    return PA_OK;
}

static long double pow10l_(int s)
{
    long double p = 1;
    while (s-- > 0)
        p *= 10;
    return p;
}

int kn__cpu_agg_emit(const kn_ctx *ctx, const kn_agg_table *t, const kn_agg_fin *f, int64_t first, int64_t count,
                     pa_column *out, pa_err *err)
{
    const kn_agg_layout *L = &t->L;
    if (first < 0 || count < 0 || first + count > t->hdr->groups || f->value_slot < 0 ||
        f->value_slot >= L->n_slots || (f->kind != KN_AGG_FIN_COUNT && (f->count_slot < 0 ||
                                                                        f->count_slot >= L->n_slots)))
        return pa_error(err, PA_EINVAL, "aggregation emit: bad result spec or range");
    const kn_agg_slot *vs = &L->slots[f->value_slot];
    const void *sv = t->state[f->value_slot];
    const int64_t *cnt = f->kind == KN_AGG_FIN_COUNT ? NULL : (const int64_t *)t->state[f->count_slot];
    memset(out->validity, 0, (size_t)(count + 7) / 8);
    switch (f->kind) {
    case KN_AGG_FIN_COUNT: {
        int64_t *o = out->data;
        for (int64_t i = 0; i < count; i++) {
            o[i] = ((const int64_t *)sv)[first + i];
            set_valid(out->validity, i, true);
        }
        return PA_OK;
    }
    case KN_AGG_FIN_SUM:
        if (pa_type_is_float(vs->type.id)) {
            double *o = out->data;
            for (int64_t i = 0; i < count; i++) {
                o[i] = ((const double *)sv)[first + i];
                set_valid(out->validity, i, cnt[first + i] > 0);
            }
            return PA_OK;
        }
        for (int64_t i = 0; i < count; i++) {
            __int128 v = ((const __int128 *)sv)[first + i];
            bool ok = cnt[first + i] > 0;
            set_valid(out->validity, i, ok);
            if (out->type.id == PA_TYPE_BIGINT) {
                if (v > INT64_MAX || v < INT64_MIN)
                    return pa_error(err, PA_EOVERFLOW, "SUM overflows BIGINT");
                ((int64_t *)out->data)[i] = (int64_t)v;
            } else {
                const __int128 lim = (__int128)100000000000000000LL * (__int128)100000000000000000LL * 10000;
                if (v >= lim || v <= -lim)
                    return pa_error(err, PA_EOVERFLOW, "SUM overflows DECIMAL(38)");
                ((__int128 *)out->data)[i] = v;
            }
        }
        return PA_OK;
    case KN_AGG_FIN_AVG: {
        double *o = out->data;
        long double scale = vs->type.id == PA_TYPE_DECIMAL ? pow10l_(vs->type.scale) : 1;
        for (int64_t i = 0; i < count; i++) {
            int64_t c = cnt[first + i];
            set_valid(out->validity, i, c > 0);
            if (c == 0)
                o[i] = 0;
            else if (pa_type_is_float(vs->type.id))
                o[i] = ((const double *)sv)[first + i] / (double)c;
            else if (((const __int128 *)sv)[first + i] == KN__AGG_SUM_OVERFLOW)
                return pa_error(err, PA_EOVERFLOW, "AVG overflows: the sum of its DECIMAL(38) values passes 128 bits");
            else
                o[i] = (double)((long double)((const __int128 *)sv)[first + i] / ((long double)c * scale));
        }
        return PA_OK;
    }
    case KN_AGG_FIN_MINMAX: {
        kn__agg_repr r = kn__agg_slot_repr(vs);
        if (r == KN__AGG_R_STR) {
            const kn__agg_str *s = sv;
            int32_t pos = 0;
            out->offsets[0] = 0;
            for (int64_t i = 0; i < count; i++) {
                const kn__agg_str *x = &s[first + i];
                bool ok = cnt[first + i] > 0 && x->set;
                if (ok) {
                    memcpy((uint8_t *)out->data + pos, t->arena + x->off, (size_t)x->len);
                    pos += x->len;
                }
                out->offsets[i + 1] = pos;
                set_valid(out->validity, i, ok);
            }
            return PA_OK;
        }
        int w = L->slot_width[f->value_slot];
        memcpy(out->data, (const uint8_t *)sv + first * w, (size_t)(count * w));
        for (int64_t i = 0; i < count; i++)
            set_valid(out->validity, i, cnt[first + i] > 0);
        return PA_OK;
    }
    }
    return pa_error(err, PA_EINVAL, "aggregation emit: unknown result kind");
}

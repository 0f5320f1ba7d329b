/*
 * rng.c - dbgen's random streams: jump-ahead, positioning a set of streams at
 * a unit, and the small value generators shared by several tables
 * (alphanumeric strings, phone numbers, zero-padded names).
 */
#include "tpch/tpch_int.h"

static const int64_t stream_seed[TP__S_COUNT] = {
#define TP__SEED(id, seed, b) seed,
    TP__STREAM_LIST(TP__SEED)
#undef TP__SEED
};
static const int64_t stream_boundary[TP__S_COUNT] = {
#define TP__BOUND(id, seed, b) b,
    TP__STREAM_LIST(TP__BOUND)
#undef TP__BOUND
};

int64_t tp__skip(int64_t seed, int64_t n)
{
    int64_t mult = TP__MUL;
    while (n > 0) {
        if (n & 1)
            seed = tp__mulmod(seed, mult);
        n >>= 1;
        mult = tp__mulmod(mult, mult);
    }
    return seed;
}

void tp__streams_at(tp__stream *s, const int *ids, int n_ids, int64_t unit)
{
    for (int k = 0; k < n_ids; k++) {
        int id = ids[k];
        tp__stream *st = &s[id];
        st->bmul = tp__skip(1, stream_boundary[id]);
        st->base = tp__skip(stream_seed[id], unit * stream_boundary[id]);
        st->seed = st->base;
    }
}

/* dbgen's alphabet for random strings: 64 characters, indexed by 6 bits. */
static const char alnum[] =
    "0123456789abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ,";

void tp__vstr(tp__stream *s, int min, int max, tp_column *c, int64_t row)
{
    int len = (int)tp__unif(s, min, max);
    char *d = c->bytes + c->offsets[row];
    int64_t bits = 0;
    for (int i = 0; i < len; i++) {
        if (i % 5 == 0)
            bits = tp__unif_wrapped(s);
        d[i] = alnum[bits & 63];
        bits >>= 6;   /* arithmetic shift of a negative value, as in dbgen */
    }
    c->offsets[row + 1] = c->offsets[row] + len;
}

static char *put_digits(char *d, int64_t v, int width)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v > 0);
    while (n < width)
        tmp[n++] = '0';
    while (n > 0)
        *d++ = tmp[--n];
    return d;
}

void tp__phone(tp__stream *s, int64_t nk, tp_column *c, int64_t row)
{
    int64_t area = tp__unif(s, 100, 999);
    int64_t exch = tp__unif(s, 100, 999);
    int64_t num = tp__unif(s, 1000, 9999);
    char buf[16], *d = buf;
    d = put_digits(d, 10 + nk % 90, 2);   /* 90 = dbgen's NATIONS_MAX */
    *d++ = '-';
    d = put_digits(d, area, 3);
    *d++ = '-';
    d = put_digits(d, exch, 3);
    *d++ = '-';
    d = put_digits(d, num, 4);
    tp__put_str(c, row, buf, (int32_t)(d - buf));
}

int tp__fmt_key(char *out, const char *prefix, int64_t key, int width)
{
    size_t n = strlen(prefix);
    memcpy(out, prefix, n);
    return (int)(put_digits(out + n, key, width) - out);
}

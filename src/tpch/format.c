/*
 * format.c - dbgen's .tbl text from a batch: every field followed by '|',
 * a row ends with "|\n"; integers in decimal, money with exactly two
 * decimals ("-123.45", "0.04"), l_quantity as an integer, dates YYYY-MM-DD,
 * strings verbatim. Hand-written number formatting: this is the hot path of
 * .tbl output.
 */
#include "tpch/tpch_int.h"

#include <pthread.h>

static char digits2[200];
static char date_text[2557][10];   /* 1992-01-01 + i: every date dbgen writes */
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Civil date of days since 1970-01-01 (proleptic Gregorian). */
static void civil(int64_t z, int *y, int *m, int *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = (int)(yoe + era * 400 + (*m <= 2));
}

static void date_into(char *o, int64_t days)
{
    int y, m, d;
    civil(days, &y, &m, &d);
    if (y < 0 || y > 9999)
        y = 0;
    o[0] = (char)('0' + y / 1000);
    o[1] = (char)('0' + y / 100 % 10);
    o[2] = (char)('0' + y / 10 % 10);
    o[3] = (char)('0' + y % 10);
    o[4] = '-';
    o[5] = (char)('0' + m / 10);
    o[6] = (char)('0' + m % 10);
    o[7] = '-';
    o[8] = (char)('0' + d / 10);
    o[9] = (char)('0' + d % 10);
}

static void init(void)
{
    for (int i = 0; i < 100; i++) {
        digits2[2 * i] = (char)('0' + i / 10);
        digits2[2 * i + 1] = (char)('0' + i % 10);
    }
    for (int i = 0; i < 2557; i++)
        date_into(date_text[i], TP__EPOCH_1992 + i);
}

static inline char *put_u64(char *o, uint64_t v)
{
    char tmp[24];
    char *e = tmp + sizeof tmp, *p = e;
    while (v >= 100) {
        p -= 2;
        memcpy(p, digits2 + 2 * (v % 100), 2);
        v /= 100;
    }
    if (v >= 10) {
        p -= 2;
        memcpy(p, digits2 + 2 * v, 2);
    } else {
        *--p = (char)('0' + v);
    }
    memcpy(o, p, (size_t)(e - p));
    return o + (e - p);
}

static inline char *put_i64(char *o, int64_t v)
{
    if (v < 0) {
        *o++ = '-';
        return put_u64(o, (uint64_t)0 - (uint64_t)v);
    }
    return put_u64(o, (uint64_t)v);
}

static inline char *put_money(char *o, int64_t cents)
{
    uint64_t c = (uint64_t)cents;
    if (cents < 0) {
        *o++ = '-';
        c = (uint64_t)0 - c;
    }
    o = put_u64(o, c / 100);
    *o++ = '.';
    memcpy(o, digits2 + 2 * (c % 100), 2);
    return o + 2;
}

size_t tp_tbl_bound(const tp_batch *b, int64_t begin, int64_t end)
{
    size_t row = 1;
    for (int i = 0; i < b->n_columns; i++) {
        const tp_column_info *ci = b->cols[i].info;
        switch (ci->type.id) {
        case PA_TYPE_VARCHAR: row += (size_t)ci->max_len + 1; break;
        case PA_TYPE_DATE: row += 11; break;
        default: row += 22; break;
        }
    }
    return row * (size_t)(end > begin ? end - begin : 0);
}

size_t tp_batch_format_tbl(const tp_batch *b, int64_t begin, int64_t end, char *out)
{
    pthread_once(&once, init);
    char *o = out;
    /* l_quantity is DECIMAL(15,2) in the batch but an integer in dbgen's text. */
    int qty_col = b->table == TP_LINEITEM ? 4 : -1;
    for (int64_t r = begin; r < end; r++) {
        for (int i = 0; i < b->n_columns; i++) {
            const tp_column *c = &b->cols[i];
            switch (c->info->type.id) {
            case PA_TYPE_VARCHAR: {
                int32_t s = c->offsets[r], n = c->offsets[r + 1] - s;
                memcpy(o, c->bytes + s, (size_t)n);
                o += n;
                break;
            }
            case PA_TYPE_INTEGER:
                o = put_i64(o, ((const int32_t *)c->values)[r]);
                break;
            case PA_TYPE_DATE: {
                int64_t d = ((const int32_t *)c->values)[r];
                if (d >= TP__EPOCH_1992 && d < TP__EPOCH_1992 + 2557)
                    memcpy(o, date_text[d - TP__EPOCH_1992], 10);
                else
                    date_into(o, d);
                o += 10;
                break;
            }
            case PA_TYPE_DECIMAL: {
                int64_t v = ((const int64_t *)c->values)[r];
                o = i == qty_col ? put_i64(o, v / 100) : put_money(o, v);
                break;
            }
            default: /* BIGINT */
                o = put_i64(o, ((const int64_t *)c->values)[r]);
                break;
            }
            *o++ = '|';
        }
        *o++ = '\n';
    }
    return (size_t)(o - out);
}

/*
 * layout.c - what several Parquet files make together (storage.h, section
 * 8b): hive partition columns from key=value folders, and the type that
 * holds a column whose type differs between files.
 */
#include "storage/storage.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct kv {
    char *key, *value;   /* value NULL: NULL */
} kv;

static int hexval(int c)
{
    return isdigit(c) ? c - '0' : isxdigit(c) ? tolower(c) - 'a' + 10 : -1;
}

/* s[0..n) with %XX decoded, NUL-terminated; NULL on no memory. */
static char *decode(const char *s, size_t n)
{
    char *d = pa_malloc(n + 1);
    if (!d)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int h, l;
        if (s[i] == '%' && i + 2 < n && (h = hexval((unsigned char)s[i + 1])) >= 0 &&
            (l = hexval((unsigned char)s[i + 2])) >= 0) {
            d[k++] = (char)(h * 16 + l);
            i += 2;
        } else {
            d[k++] = s[i];
        }
    }
    d[k] = 0;
    return d;
}

static void kv_free(kv *v, int n)
{
    for (int i = 0; v && i < n; i++) {
        pa_free(v[i].key);
        pa_free(v[i].value);
    }
    pa_free(v);
}

static int cmp_kv(const void *a, const void *b)
{
    return strcmp(((const kv *)a)->key, ((const kv *)b)->key);
}

/* The key=value folders of path, sorted by key (a key given twice: the
 * last one). */
static int parse_path(const char *path, kv **out, int *n_out, pa_err *err)
{
    kv *v = NULL;
    int n = 0, cap = 0;
    const char *slash = strrchr(path, '/');
    const char *end = slash ? slash : path;   /* directories only */
    const char *p = path;
    while (p < end) {
        const char *q = memchr(p, '/', (size_t)(end - p));
        if (!q)
            q = end;
        const char *eq = memchr(p, '=', (size_t)(q - p));
        if (eq && eq > p) {
            char *key = decode(p, (size_t)(eq - p));
            char *val = decode(eq + 1, (size_t)(q - eq - 1));
            if (!key || !val) {
                pa_free(key), pa_free(val);
                kv_free(v, n);
                return pa_error(err, PA_ENOMEM, "out of memory reading partitions of %s", path);
            }
            if (!strcmp(val, "NULL") || !strcmp(val, "__HIVE_DEFAULT_PARTITION__")) {
                pa_free(val);
                val = NULL;
            }
            int at = -1;
            for (int i = 0; i < n; i++)
                if (!strcmp(v[i].key, key))
                    at = i;
            if (at >= 0) {
                pa_free(key);
                pa_free(v[at].value);
                v[at].value = val;
            } else {
                if (n == cap) {
                    int nc = cap ? cap * 2 : 4;
                    kv *nv = pa_realloc(v, (size_t)nc * sizeof *nv);
                    if (!nv) {
                        pa_free(key), pa_free(val);
                        kv_free(v, n);
                        return pa_error(err, PA_ENOMEM, "out of memory reading partitions of %s", path);
                    }
                    v = nv, cap = nc;
                }
                v[n].key = key;
                v[n++].value = val;
            }
        }
        p = q + 1;
    }
    if (n > 1)
        qsort(v, (size_t)n, sizeof *v, cmp_kv);
    *out = v;
    *n_out = n;
    return PA_OK;
}

void pq_hive_free(pq_hive *h)
{
    if (!h)
        return;
    for (int k = 0; k < h->n_keys; k++)
        pa_free(h->keys[k]);
    for (size_t i = 0; h->values && i < (size_t)h->n_files * (size_t)h->n_keys; i++)
        pa_free(h->values[i]);
    pa_free(h->keys);
    pa_free(h->types);
    pa_free(h->values);
    pa_free(h);
}

int pq_hive_key(const pq_hive *h, const char *key)
{
    for (int k = 0; h && k < h->n_keys; k++)
        if (!strcmp(h->keys[k], key))
            return k;
    return -1;
}

/* An integer as BIGINT prints it: optional '-', no leading zero, fits. */
static bool is_bigint(const char *s)
{
    const char *p = s + (*s == '-');
    if (!isdigit((unsigned char)*p) || (p[0] == '0' && p[1]) || (s[0] == '-' && p[0] == '0'))
        return false;
    size_t n = strspn(p, "0123456789");
    if (p[n] || n > 19)
        return false;
    if (n < 19)
        return true;
    return strcmp(p, s[0] == '-' ? "9223372036854775808" : "9223372036854775807") <= 0;
}

static bool is_date(const char *s)
{
    int32_t d;
    if (!isdigit((unsigned char)s[0]) || strpbrk(s, " \t+"))
        return false;
    return pa_date_parse(s, &d, NULL) == PA_OK;
}

/* A date and a time of day, "2020-01-01 12:00:00[.5]" or with a 'T', no
 * offset: what DuckDB 1.5 detects as TIMESTAMP in folder names (a date
 * alone is not one: dates and timestamps mixed stay VARCHAR there). */
static bool is_timestamp(const char *s)
{
    size_t n = strcspn(s, " T");
    int64_t v;
    bool exact;
    return isdigit((unsigned char)s[0]) && s[n] && !strpbrk(s + n + 1, " +-TZzU") &&
           pq_time_parse(s, PA_TYPE_TIMESTAMP, &v, &exact) == PA_OK && exact;
}

/* A date and a time of day with a UTC offset or Z ("2020-01-01 12:00:00+02",
 * "2020-01-01T10:00:00Z"): an instant, TIMESTAMPTZ (DuckDB 1.5 reads these
 * as TIMESTAMP and drops the offset; PostgreSQL's timestamptz keeps the
 * instant). */
static bool is_timestamptz(const char *s)
{
    size_t n = strcspn(s, " T");
    int64_t v;
    bool exact;
    return isdigit((unsigned char)s[0]) && s[n] && strpbrk(s + n + 1, "+-Zz") &&
           pq_time_parse(s, PA_TYPE_TIMESTAMPTZ, &v, &exact) == PA_OK && exact;
}

int pq_hive_detect(const char *const *files, uint32_t n, int mode, pq_hive **out, pa_err *err)
{
    *out = NULL;
    if (mode == PQ_HIVE_OFF || n == 0)
        return PA_OK;
    kv *first = NULL;
    int n_first = 0;
    int rc = parse_path(files[0], &first, &n_first, err);
    if (rc != PA_OK)
        return rc;
    if (n_first == 0) {
        pa_free(first);
        if (mode == PQ_HIVE_ON)
            return pa_error(err, PA_EINVAL, "hive_partitioning: %s has no key=value folder", files[0]);
        return PA_OK;
    }
    pq_hive *h = pa_calloc(1, sizeof *h);
    if (h) {
        h->n_keys = n_first;
        h->n_files = n;
        h->keys = pa_calloc((size_t)n_first, sizeof *h->keys);
        h->types = pa_calloc((size_t)n_first, sizeof *h->types);
        h->values = pa_calloc((size_t)n * (size_t)n_first, sizeof *h->values);
    }
    if (!h || !h->keys || !h->types || !h->values) {
        kv_free(first, n_first);
        pq_hive_free(h);
        return pa_error(err, PA_ENOMEM, "out of memory reading partitions");
    }
    for (int k = 0; k < n_first; k++) {
        h->keys[k] = first[k].key;
        first[k].key = NULL;
    }
    kv_free(first, n_first);
    bool mismatch = false;
    for (uint32_t f = 0; f < n && !mismatch; f++) {
        kv *v;
        int nv;
        if ((rc = parse_path(files[f], &v, &nv, err)) != PA_OK) {
            pq_hive_free(h);
            return rc;
        }
        bool same = nv == h->n_keys;
        for (int k = 0; same && k < nv; k++)
            same = !strcmp(v[k].key, h->keys[k]);
        if (!same) {
            mismatch = true;
            if (mode == PQ_HIVE_ON) {
                char a[256] = "", b[256] = "";
                for (int k = 0; k < h->n_keys; k++)
                    snprintf(a + strlen(a), sizeof a - strlen(a), "%s%s", k ? ", " : "", h->keys[k]);
                for (int k = 0; k < nv; k++)
                    snprintf(b + strlen(b), sizeof b - strlen(b), "%s%s", k ? ", " : "", v[k].key);
                rc = pa_error(err, PA_EINVAL, "hive partitions differ: %s has keys (%s) but %s has (%s)", files[0], a,
                              files[f], nv ? b : "none");
            }
        } else {
            for (int k = 0; k < nv; k++) {
                h->values[(size_t)f * (size_t)h->n_keys + (size_t)k] = v[k].value;
                v[k].value = NULL;
            }
        }
        kv_free(v, nv);
    }
    if (mismatch) {
        pq_hive_free(h);
        return rc;
    }
    for (int k = 0; k < h->n_keys; k++) {
        bool date = true, big = true, ts = true, tz = true, any = false;
        for (uint32_t f = 0; f < n; f++) {
            const char *s = h->values[(size_t)f * (size_t)h->n_keys + (size_t)k];
            if (!s)
                continue;
            any = true;
            date = date && is_date(s);
            big = big && is_bigint(s);
            ts = ts && is_timestamp(s);
            tz = tz && (is_timestamp(s) || is_timestamptz(s));
        }
        h->types[k] = (pa_type){!any    ? PA_TYPE_VARCHAR
                                : date  ? PA_TYPE_DATE
                                : big   ? PA_TYPE_BIGINT
                                : ts    ? PA_TYPE_TIMESTAMP
                                : tz    ? PA_TYPE_TIMESTAMPTZ
                                        : PA_TYPE_VARCHAR,
                                0, 0};
    }
    *out = h;
    return PA_OK;
}

/* Dates and timestamps in the order they widen (DuckDB's union of file
 * types): DATE, TIMESTAMP, TIMESTAMPTZ (the same UTC instants), then
 * TIMESTAMP_NS; 0 for other types. */
static int time_rank(pa_type_id id)
{
    switch (id) {
    case PA_TYPE_DATE: return 1;
    case PA_TYPE_TIMESTAMP: return 2;
    case PA_TYPE_TIMESTAMPTZ: return 3;
    case PA_TYPE_TIMESTAMP_NS: return 4;
    default: return 0;
    }
}

bool pq_type_widen(pa_type a, pa_type b, pa_type *out, char *why, size_t why_cap)
{
    if (why && why_cap)
        why[0] = 0;
    if (a.id == b.id && (a.id != PA_TYPE_DECIMAL || (a.precision == b.precision && a.scale == b.scale))) {
        *out = a;
        return true;
    }
    int ta = time_rank(a.id), tb = time_rank(b.id);
    if (ta && tb) {
        *out = ta > tb ? a : b;
        return true;
    }
    bool ai = a.id == PA_TYPE_INTEGER || a.id == PA_TYPE_BIGINT, bi = b.id == PA_TYPE_INTEGER || b.id == PA_TYPE_BIGINT;
    bool an = ai || a.id == PA_TYPE_DECIMAL || pa_type_is_float(a.id);
    bool bn = bi || b.id == PA_TYPE_DECIMAL || pa_type_is_float(b.id);
    if (!an || !bn)
        return false;
    if (pa_type_is_float(a.id) || pa_type_is_float(b.id)) {   /* (FLOAT beside FLOAT stays REAL above) */
        *out = (pa_type){PA_TYPE_DOUBLE, 0, 0};
        return true;
    }
    if (ai && bi) {
        *out = (pa_type){PA_TYPE_BIGINT, 0, 0};
        return true;
    }
    /* DECIMALs; an integer as DECIMAL(10,0) or (19,0), as DuckDB. */
    pa_type da = a.id == PA_TYPE_DECIMAL ? a : (pa_type){PA_TYPE_DECIMAL, a.id == PA_TYPE_INTEGER ? 10 : 19, 0};
    pa_type db = b.id == PA_TYPE_DECIMAL ? b : (pa_type){PA_TYPE_DECIMAL, b.id == PA_TYPE_INTEGER ? 10 : 19, 0};
    int scale = da.scale > db.scale ? da.scale : db.scale;
    int ia = da.precision - da.scale, ib = db.precision - db.scale;
    int prec = (ia > ib ? ia : ib) + scale;
    if (prec > 38) {
        if (why && why_cap)
            snprintf(why, why_cap, "DECIMAL(%d,%d) would need more than 38 digits", prec, scale);
        return false;
    }
    *out = (pa_type){PA_TYPE_DECIMAL, (uint8_t)prec, (uint8_t)scale};
    return true;
}

/*
 * queries.c - the 22 TPC-H queries with their substitution parameters.
 *
 * Templates (query_text.c) hold ${NAME} placeholders. Without a seed they
 * get the validation values of spec clause 2.4.N.4 (the texts of
 * shared/tpch/queries). With a seed, each parameter is drawn uniformly from
 * its domain in clause 2.4.N.3, by our own generator (splitmix64 of the
 * seed, so one seed always gives one text; it does not reproduce qgen's
 * stream). The domains implemented:
 *   Q1  DELTA in [60, 120] days
 *   Q2  SIZE in [1, 50]; TYPE a type syllable 3 (TIN NICKEL BRASS STEEL COPPER); REGION
 *   Q3  SEGMENT a market segment; DATE a day of 1995-03-01 .. 1995-03-31
 *   Q4  DATE the first of a month, 1993-01 .. 1997-10
 *   Q5  REGION; DATE January 1st of 1993 .. 1997
 *   Q6  DATE January 1st of 1993 .. 1997; DISCOUNT 0.02 .. 0.09; QUANTITY 24 or 25
 *   Q7  NATION1, NATION2 two different nations
 *   Q8  NATION; REGION the region of NATION; TYPE any 3-syllable part type
 *   Q9  COLOR one of the 92 p_name colors
 *   Q10 DATE the first of a month, 1993-02 .. 1995-01
 *   Q11 NATION; FRACTION = 0.0001 / SF
 *   Q12 SHIPMODE1, SHIPMODE2 two different ship modes; DATE January 1st of 1993 .. 1997
 *   Q13 WORD1 in special pending unusual express; WORD2 in packages requests accounts deposits
 *   Q14 DATE the first of a month, 1993-01 .. 1997-12
 *   Q15 DATE the first of a month, 1993-01 .. 1997-10
 *   Q16 BRAND Brand#MN (M, N in 1..5); TYPE syllables 1 and 2 of a type; SIZE1..8 eight
 *       different sizes in [1, 50]
 *   Q17 BRAND Brand#MN; CONTAINER any container (syllables 1 and 2)
 *   Q18 QUANTITY in [312, 315]
 *   Q19 QUANTITY1 in [1, 10], QUANTITY2 in [10, 20], QUANTITY3 in [20, 30]; BRAND1..3 Brand#MN
 *   Q20 COLOR; DATE January 1st of 1993 .. 1997; NATION
 *   Q21 NATION
 *   Q22 I1..I7 seven different country codes in [10, 34]
 */
#include "tpch/tpch_int.h"

#include <stdio.h>

extern const char *const tp__query_templates[22];

#define MAX_PARAMS 8

typedef struct params {
    int n;
    const char *name[MAX_PARAMS];
    char value[MAX_PARAMS][128];
} params;

static void put(params *p, const char *name, const char *fmt, ...) PA_PRINTF(3, 4);
static void put(params *p, const char *name, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    p->name[p->n] = name;
    vsnprintf(p->value[p->n], sizeof p->value[0], fmt, ap);
    p->n++;
    va_end(ap);
}

/* Validation parameters (spec clause 2.4.N.4). */
static void validation(int q, params *p)
{
    switch (q) {
    case 1: put(p, "DELTA", "90"); break;
    case 2: put(p, "SIZE", "15"); put(p, "TYPE", "BRASS"); put(p, "REGION", "EUROPE"); break;
    case 3: put(p, "SEGMENT", "BUILDING"); put(p, "DATE", "1995-03-15"); break;
    case 4: put(p, "DATE", "1993-07-01"); break;
    case 5: put(p, "REGION", "ASIA"); put(p, "DATE", "1994-01-01"); break;
    case 6:
        put(p, "DATE", "1994-01-01"); put(p, "DISCOUNT", "0.06"); put(p, "QUANTITY", "24");
        put(p, "DISCOUNT_LO", "0.05"); put(p, "DISCOUNT_HI", "0.07");
        break;
    case 7: put(p, "NATION1", "FRANCE"); put(p, "NATION2", "GERMANY"); break;
    case 8:
        put(p, "NATION", "BRAZIL"); put(p, "REGION", "AMERICA");
        put(p, "TYPE", "ECONOMY ANODIZED STEEL");
        break;
    case 9: put(p, "COLOR", "green"); break;
    case 10: put(p, "DATE", "1993-10-01"); break;
    case 11: put(p, "NATION", "GERMANY"); put(p, "FRACTION", "0.0001"); break;
    case 12:
        put(p, "SHIPMODE1", "MAIL"); put(p, "SHIPMODE2", "SHIP"); put(p, "DATE", "1994-01-01");
        break;
    case 13: put(p, "WORD1", "special"); put(p, "WORD2", "requests"); break;
    case 14: put(p, "DATE", "1995-09-01"); break;
    case 15: put(p, "DATE", "1996-01-01"); break;
    case 16:
        put(p, "BRAND", "Brand#45"); put(p, "TYPE", "MEDIUM POLISHED");
        put(p, "SIZES", "49, 14, 23, 45, 19, 3, 36, 9");
        break;
    case 17: put(p, "BRAND", "Brand#23"); put(p, "CONTAINER", "MED BOX"); break;
    case 18: put(p, "QUANTITY", "300"); break;
    case 19:
        put(p, "QUANTITY1", "1"); put(p, "QUANTITY2", "10"); put(p, "QUANTITY3", "20");
        put(p, "BRAND1", "Brand#12"); put(p, "BRAND2", "Brand#23"); put(p, "BRAND3", "Brand#34");
        break;
    case 20: put(p, "COLOR", "forest"); put(p, "DATE", "1994-01-01"); put(p, "NATION", "CANADA"); break;
    case 21: put(p, "NATION", "SAUDI ARABIA"); break;
    case 22:
        put(p, "CODES", "13, 31, 23, 29, 30, 18, 17");
        put(p, "QCODES", "'13', '31', '23', '29', '30', '18', '17'");
        break;
    }
}

/* ------------------------------------------------------ seeded parameters */

typedef struct rng { uint64_t s; } rng;

static uint64_t next64(rng *r)   /* splitmix64 */
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static int uni(rng *r, int lo, int hi)
{
    return lo + (int)(next64(r) % (uint64_t)(hi - lo + 1));
}

static const char *pick(rng *r, const tp__dist *d) { return d->words[uni(r, 0, d->count - 1)]; }

/* k different values of [lo, hi] into out. */
static void distinct(rng *r, int lo, int hi, int k, int *out)
{
    for (int i = 0; i < k; i++) {
        int v, dup;
        do {
            v = uni(r, lo, hi);
            dup = 0;
            for (int j = 0; j < i; j++)
                dup |= out[j] == v;
        } while (dup);
        out[i] = v;
    }
}

/* First of a month, months counted from 1993-01 (0) on. */
static void month(params *p, const char *name, int m)
{
    put(p, name, "%04d-%02d-01", 1993 + m / 12, m % 12 + 1);
}

static void brand(params *p, const char *name, rng *r)
{
    put(p, name, "Brand#%d%d", uni(r, 1, 5), uni(r, 1, 5));
}

/* Syllable k (0-based) of a space-separated word list entry. */
static void syllables(char *out, size_t cap, const char *w, int from, int to)
{
    int k = 0;
    size_t n = 0;
    for (const char *c = w; *c && n + 1 < cap; c++) {
        if (*c == ' ') {
            k++;
            if (k > from && k <= to)
                out[n++] = ' ';
            continue;
        }
        if (k >= from && k <= to)
            out[n++] = *c;
    }
    out[n] = '\0';
}

static void fraction(params *p, double sf)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.12f", 0.0001 / sf);
    size_t n = strlen(buf);
    while (n > 1 && buf[n - 1] == '0' && buf[n - 2] != '.')
        buf[--n] = '\0';
    put(p, "FRACTION", "%s", buf);
}

static void seeded(int q, uint64_t seed, double sf, params *p)
{
    const tp__dist *d = tp__dists();
    rng r = {seed * 0x100000001b3ULL + (uint64_t)q};
    char buf[64];
    int v[8];
    switch (q) {
    case 1: put(p, "DELTA", "%d", uni(&r, 60, 120)); break;
    case 2:
        put(p, "SIZE", "%d", uni(&r, 1, 50));
        syllables(buf, sizeof buf, pick(&r, &d[TP__D_TYPES]), 2, 2);
        put(p, "TYPE", "%s", buf);
        put(p, "REGION", "%s", pick(&r, &d[TP__D_REGIONS]));
        break;
    case 3:
        put(p, "SEGMENT", "%s", pick(&r, &d[TP__D_SEGMENTS]));
        put(p, "DATE", "1995-03-%02d", uni(&r, 1, 31));
        break;
    case 4: month(p, "DATE", uni(&r, 0, 57)); break;
    case 5:
        put(p, "REGION", "%s", pick(&r, &d[TP__D_REGIONS]));
        put(p, "DATE", "%d-01-01", uni(&r, 1993, 1997));
        break;
    case 6: {
        put(p, "DATE", "%d-01-01", uni(&r, 1993, 1997));
        int disc = uni(&r, 2, 9);
        put(p, "DISCOUNT", "0.%02d", disc);
        put(p, "QUANTITY", "%d", uni(&r, 24, 25));
        put(p, "DISCOUNT_LO", "0.%02d", disc - 1);
        put(p, "DISCOUNT_HI", "0.%02d", disc + 1);
        break;
    }
    case 7:
        distinct(&r, 0, 24, 2, v);
        put(p, "NATION1", "%s", d[TP__D_NATIONS].words[v[0]]);
        put(p, "NATION2", "%s", d[TP__D_NATIONS].words[v[1]]);
        break;
    case 8: {
        int n = uni(&r, 0, 24);
        put(p, "NATION", "%s", d[TP__D_NATIONS].words[n]);
        put(p, "REGION", "%s", d[TP__D_REGIONS].words[tp__nation_region[n]]);
        put(p, "TYPE", "%s", pick(&r, &d[TP__D_TYPES]));
        break;
    }
    case 9: put(p, "COLOR", "%s", pick(&r, &d[TP__D_COLORS])); break;
    case 10: month(p, "DATE", uni(&r, 1, 24)); break;
    case 11:
        put(p, "NATION", "%s", pick(&r, &d[TP__D_NATIONS]));
        fraction(p, sf);
        break;
    case 12:
        distinct(&r, 0, 6, 2, v);
        put(p, "SHIPMODE1", "%s", d[TP__D_SHIPMODES].words[v[0]]);
        put(p, "SHIPMODE2", "%s", d[TP__D_SHIPMODES].words[v[1]]);
        put(p, "DATE", "%d-01-01", uni(&r, 1993, 1997));
        break;
    case 13:
        put(p, "WORD1", "%s", d[TP__D_ADJECTIVES].words[uni(&r, 0, 3)]);
        put(p, "WORD2", "%s", d[TP__D_NOUNS].words[uni(&r, 0, 3)]);
        break;
    case 14: month(p, "DATE", uni(&r, 0, 59)); break;
    case 15: month(p, "DATE", uni(&r, 0, 57)); break;
    case 16: {
        brand(p, "BRAND", &r);
        syllables(buf, sizeof buf, pick(&r, &d[TP__D_TYPES]), 0, 1);
        put(p, "TYPE", "%s", buf);
        distinct(&r, 1, 50, 8, v);
        put(p, "SIZES", "%d, %d, %d, %d, %d, %d, %d, %d", v[0], v[1], v[2], v[3], v[4], v[5],
            v[6], v[7]);
        break;
    }
    case 17:
        brand(p, "BRAND", &r);
        put(p, "CONTAINER", "%s", pick(&r, &d[TP__D_CONTAINERS]));
        break;
    case 18: put(p, "QUANTITY", "%d", uni(&r, 312, 315)); break;
    case 19:
        put(p, "QUANTITY1", "%d", uni(&r, 1, 10));
        put(p, "QUANTITY2", "%d", uni(&r, 10, 20));
        put(p, "QUANTITY3", "%d", uni(&r, 20, 30));
        brand(p, "BRAND1", &r);
        brand(p, "BRAND2", &r);
        brand(p, "BRAND3", &r);
        break;
    case 20:
        put(p, "COLOR", "%s", pick(&r, &d[TP__D_COLORS]));
        put(p, "DATE", "%d-01-01", uni(&r, 1993, 1997));
        put(p, "NATION", "%s", pick(&r, &d[TP__D_NATIONS]));
        break;
    case 21: put(p, "NATION", "%s", pick(&r, &d[TP__D_NATIONS])); break;
    case 22:
        distinct(&r, 10, 34, 7, v);
        put(p, "CODES", "%d, %d, %d, %d, %d, %d, %d", v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
        put(p, "QCODES", "'%d', '%d', '%d', '%d', '%d', '%d', '%d'", v[0], v[1], v[2], v[3],
            v[4], v[5], v[6]);
        break;
    }
}

static const char *lookup(const params *p, const char *name, size_t n)
{
    for (int i = 0; i < p->n; i++)
        if (strlen(p->name[i]) == n && !memcmp(p->name[i], name, n))
            return p->value[i];
    return NULL;
}

int tp_query_text(int n, uint64_t seed, double sf, char **out, pa_err *err)
{
    if (n < 1 || n > 22)
        return pa_error(err, PA_EINVAL, "TPC-H has queries 1 to 22 (got %d)", n);
    if (!(sf > 0))
        return pa_error(err, PA_EINVAL, "scale factor must be positive (got %g)", sf);
    params p = {0};
    if (seed)
        seeded(n, seed, sf, &p);
    else
        validation(n, &p);
    const char *t = tp__query_templates[n - 1];
    char label[64] = "validation parameters";
    if (seed)
        snprintf(label, sizeof label, "parameters of seed %llu", (unsigned long long)seed);
    const char *header_end = strchr(t, '\n');
    /* Two passes: measure, then fill. */
    char *buf = NULL;
    size_t len = 0;
    for (int pass = 0; pass < 2; pass++) {
        size_t o = 0;
        for (const char *c = t; *c;) {
            const char *v = NULL;
            size_t skip = 1, vn = 0;
            if (c[0] == '$' && c[1] == '{') {
                const char *e = strchr(c, '}');
                if (e && (v = lookup(&p, c + 2, (size_t)(e - c - 2))) != NULL) {
                    vn = strlen(v);
                    skip = (size_t)(e - c) + 1;
                }
            } else if (c < header_end && !strncmp(c, "validation parameters", 21)) {
                v = label;   /* the header line names where the parameters came from */
                vn = strlen(label);
                skip = 21;
            }
            if (!v) {
                v = c;
                vn = 1;
            }
            if (pass == 1)
                memcpy(buf + o, v, vn);
            o += vn;
            c += skip;
        }
        if (pass == 0) {
            len = o;
            buf = pa_malloc(len + 1);
            if (!buf)
                return pa_error(err, PA_ENOMEM, "query text");
        }
    }
    buf[len] = '\0';
    *out = buf;
    return PA_OK;
}

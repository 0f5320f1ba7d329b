/*
 * text.c - the 300 MiB text pool every comment is cut from (spec clause
 * 4.2.2.14, dbgen's TEXT_POOL_SIZE). Sentences follow the grammar
 *   sentence: N V T | N V P T | N V N T | N P V N T | N P V P T
 *   N (noun phrase): noun | adj noun | adj, adj noun | adverb adj noun
 *   V (verb phrase): verb | aux verb | verb adverb | aux verb adverb
 *   P: preposition "the" N;   T: a terminator replacing the last space
 * with every pick drawn from one stream (seed 933588178), in text order:
 * the shape first, then each word. The pool is sentence, space, sentence,
 * ... and the last sentence is cut at the pool size. Built once per process
 * and shared; the last release frees it.
 */
#include "tpch/tpch_int.h"

#include <pthread.h>
#include <sys/mman.h>

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static char *pool_data;
static int pool_refs;

static inline char *word(char *d, const tp__dist *ds, int list, tp__stream *s)
{
    const tp__dist *l = &ds[list];
    int i = tp__pick(l, s);
    memcpy(d, l->words[i], l->lens[i]);
    d += l->lens[i];
    *d++ = ' ';
    return d;
}

static char *noun_phrase(char *d, const tp__dist *ds, tp__stream *s)
{
    switch (tp__pick(&ds[TP__D_NP], s)) {
    case 0: /* N */
        break;
    case 1: /* J N */
        d = word(d, ds, TP__D_ADJECTIVES, s);
        break;
    case 2: /* J, J N */
        d = word(d, ds, TP__D_ADJECTIVES, s);
        d[-1] = ',';
        *d++ = ' ';
        d = word(d, ds, TP__D_ADJECTIVES, s);
        break;
    default: /* D J N */
        d = word(d, ds, TP__D_ADVERBS, s);
        d = word(d, ds, TP__D_ADJECTIVES, s);
        break;
    }
    return word(d, ds, TP__D_NOUNS, s);
}

static char *verb_phrase(char *d, const tp__dist *ds, tp__stream *s)
{
    int shape = tp__pick(&ds[TP__D_VP], s);   /* V, X V, V D, X V D */
    if (shape == 1 || shape == 3)
        d = word(d, ds, TP__D_AUXILIARIES, s);
    d = word(d, ds, TP__D_VERBS, s);
    if (shape >= 2)
        d = word(d, ds, TP__D_ADVERBS, s);
    return d;
}

static char *prep_phrase(char *d, const tp__dist *ds, tp__stream *s)
{
    d = word(d, ds, TP__D_PREPOSITIONS, s);
    memcpy(d, "the ", 4);
    return noun_phrase(d + 4, ds, s);
}

/* One sentence into d (room for 512 bytes); returns its length. */
static size_t sentence(char *d0, const tp__dist *ds, tp__stream *s)
{
    char *d = d0;
    int shape = tp__pick(&ds[TP__D_GRAMMAR], s);
    d = noun_phrase(d, ds, s);
    switch (shape) {
    case 0: /* N V T */
        d = verb_phrase(d, ds, s);
        break;
    case 1: /* N V P T */
        d = verb_phrase(d, ds, s);
        d = prep_phrase(d, ds, s);
        break;
    case 2: /* N V N T */
        d = verb_phrase(d, ds, s);
        d = noun_phrase(d, ds, s);
        break;
    case 3: /* N P V N T */
        d = prep_phrase(d, ds, s);
        d = verb_phrase(d, ds, s);
        d = noun_phrase(d, ds, s);
        break;
    default: /* N P V P T */
        d = prep_phrase(d, ds, s);
        d = verb_phrase(d, ds, s);
        d = prep_phrase(d, ds, s);
        break;
    }
    const tp__dist *t = &ds[TP__D_TERMINATORS];
    int i = tp__pick(t, s);
    d--;   /* the terminator replaces the trailing space */
    memcpy(d, t->words[i], t->lens[i]);
    return (size_t)(d - d0) + t->lens[i];
}

static void build(char *pool)
{
    const tp__dist *ds = tp__dists();
    tp__stream s = {.seed = TP__TEXT_SEED};
    char buf[512];
    size_t len = 0, size = (size_t)TP__POOL_SIZE;
    while (len < size) {
        size_t n = sentence(buf, ds, &s);
        size_t room = size - len;
        if (room >= n + 1) {
            memcpy(pool + len, buf, n);
            len += n;
            pool[len++] = ' ';
        } else {
            memcpy(pool + len, buf, room);
            len += room;
        }
    }
}

int tp__pool_acquire(const char **pool, pa_err *err)
{
    pthread_mutex_lock(&pool_mu);
    if (!pool_data) {
        char *p = pa_malloc((size_t)TP__POOL_SIZE);
        if (!p) {
            pthread_mutex_unlock(&pool_mu);
            return pa_error(err, PA_ENOMEM, "TPC-H text pool: cannot allocate %lld bytes",
                            (long long)TP__POOL_SIZE);
        }
#ifdef MADV_HUGEPAGE
        /* Comments read the pool at random offsets: with 4 KiB pages nearly
         * every read misses the TLB. Huge pages make it about twice as fast.
         * Advice only; failure is harmless. */
        uintptr_t lo = ((uintptr_t)p + 0x1fffff) & ~(uintptr_t)0x1fffff;
        uintptr_t hi = ((uintptr_t)p + (uintptr_t)TP__POOL_SIZE) & ~(uintptr_t)0x1fffff;
        if (hi > lo)
            (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#endif
        build(p);
        pool_data = p;
    }
    pool_refs++;
    *pool = pool_data;
    pthread_mutex_unlock(&pool_mu);
    return PA_OK;
}

void tp__pool_release(void)
{
    pthread_mutex_lock(&pool_mu);
    if (pool_refs > 0 && --pool_refs == 0) {
        pa_free(pool_data);
        pool_data = NULL;
    }
    pthread_mutex_unlock(&pool_mu);
}

/* Rows ahead to prefetch: enough misses in flight to cover memory latency. */
#define PREFETCH_AHEAD 16

void tp__text_fill(const tp_gen *g, tp_column *c, const int64_t *src, int64_t n)
{
    for (int64_t r = 0; r < n && r < PREFETCH_AHEAD; r++)
        __builtin_prefetch(g->pool + src[r]);
    for (int64_t r = 0; r < n; r++) {
        if (r + PREFETCH_AHEAD < n) {
            const char *p = g->pool + src[r + PREFETCH_AHEAD];
            __builtin_prefetch(p);
            __builtin_prefetch(p + 64);
        }
        memcpy(c->bytes + c->offsets[r], g->pool + src[r],
               (size_t)(c->offsets[r + 1] - c->offsets[r]));
    }
}

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
 * and shared; the last release frees it. The build is split into segments
 * at sentence starts whose stream states are known in advance (checkpoints,
 * text_checkpoints.c), so several threads build it at once.
 */
#include "tpch/tpch_int.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

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

/* Sentences from stream state *seed into pool[len, end): the pool is
 * sentence, space, sentence, ...; a sentence (with its space) that does not
 * fit the pool is cut at the pool's end. end is a sentence start or the pool
 * size. Leaves *seed after the last sentence drawn. */
static void fill(char *pool, int64_t *seed, int64_t len, int64_t end)
{
    const tp__dist *ds = tp__dists();
    tp__stream s = {.seed = *seed};
    char buf[512];
    size_t n, room;
    while (len < end) {
        n = sentence(buf, ds, &s);
        room = (size_t)(TP__POOL_SIZE - len);
        if (room >= n + 1) {
            memcpy(pool + len, buf, n);
            len += (int64_t)n;
            pool[len++] = ' ';
        } else {
            memcpy(pool + len, buf, room);
            len += (int64_t)room;
        }
    }
    *seed = s.seed;
}

void tp__pool_walk_checkpoints(tp__pool_checkpoint *out)
{
    const tp__dist *ds = tp__dists();
    tp__stream s = {.seed = TP__TEXT_SEED};
    char buf[512];
    int64_t len = 0;
    int k = 0;
    while (len < TP__POOL_SIZE && k < TP__POOL_CHECKPOINTS) {
        if (len >= k * TP__POOL_SEGMENT)
            out[k++] = (tp__pool_checkpoint){len, s.seed};
        len += (int64_t)sentence(buf, ds, &s) + 1;
    }
}

/* Segment k of the pool: from checkpoint k to checkpoint k + 1 (the pool's
 * end for the last one). The checkpoints (text_checkpoints.c) make the
 * segments independent, so several threads build the pool. */
static void fill_segment(char *pool, int k)
{
    int64_t seed = tp__pool_checkpoints[k].seed;
    int64_t end = k + 1 < TP__POOL_CHECKPOINTS ? tp__pool_checkpoints[k + 1].offset : TP__POOL_SIZE;
    fill(pool, &seed, tp__pool_checkpoints[k].offset, end);
}

typedef struct pool_job {
    char *pool;
    int next;   /* next segment to build, claimed with an atomic add */
} pool_job;

static void *fill_worker(void *arg)
{
    pool_job *j = arg;
    int k;
    while ((k = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED)) < TP__POOL_CHECKPOINTS)
        fill_segment(j->pool, k);
    return NULL;
}

/* Build the pool with up to `threads` threads (<= 0: online CPUs). A thread
 * that cannot start leaves its share to the others. */
static void build(char *pool, int threads)
{
    if (threads <= 0)
        threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (threads > 16)
        threads = 16;
    pool_job j = {pool, 0};
    pthread_t th[16];
    int started = 0;
    for (int i = 1; i < threads; i++)
        if (pthread_create(&th[started], NULL, fill_worker, &j) == 0)
            started++;
    fill_worker(&j);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
}

int tp__pool_acquire(int threads, const char **pool, pa_err *err)
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
        build(p, threads);
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

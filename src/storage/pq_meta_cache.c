/*
 * pq_meta_cache.c - the process-wide cache of parsed footers.
 *
 * A chained hash table keyed by path; an entry remembers the size and mtime
 * the footer was read at, so a rewritten file is parsed again. The first
 * thread to ask for a file inserts a "loading" entry and parses outside the
 * lock; others asking for the same file wait on the condition variable, so
 * each footer is parsed once. A failed parse removes its entry (errors are
 * not cached) and wakes the waiters, who then try themselves.
 */
#include "storage/pq_meta_int.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>

#define N_BUCKETS 1024   /* fixed: a chain stays short up to ~10^4 files */

typedef struct entry {
    struct entry *next;
    char *path;
    uint64_t size;
    int64_t mtime_ns;
    const pq_file_meta *meta;   /* NULL while loading */
    bool loading;
} entry;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    entry *buckets[N_BUCKETS];
    pq_meta_cache_stats stats;
} cache = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, {0, 0, 0, 0}};

static uint32_t hash_path(const char *s)
{
    uint32_t h = 2166136261u;   /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h % N_BUCKETS;
}

static entry **find(const char *path)
{
    entry **pp = &cache.buckets[hash_path(path)];
    while (*pp && strcmp((*pp)->path, path) != 0)
        pp = &(*pp)->next;
    return pp;
}

/* Unlinks *pp and frees it; the caller holds the lock. Returns the meta the
 * entry held (to be released outside the lock). */
static const pq_file_meta *remove_entry(entry **pp)
{
    entry *e = *pp;
    *pp = e->next;
    const pq_file_meta *m = e->meta;
    pa_free(e->path);
    pa_free(e);
    cache.stats.entries--;
    return m;
}

int pq_meta_get(const char *path, const pq_file_meta **out, pa_err *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return pa_error(err, PA_EIO, "%s: cannot stat: %s", path, strerror(errno));
    uint64_t size = (uint64_t)st.st_size;
    int64_t mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;

    pthread_mutex_lock(&cache.mu);
    for (;;) {
        entry **pp = find(path);
        entry *e = *pp;
        if (e && e->loading) {
            pthread_cond_wait(&cache.cv, &cache.mu);
            continue;   /* the entry may be gone or replaced: look again */
        }
        if (e && e->size == size && e->mtime_ns == mtime) {
            pq_file_meta_retain(e->meta);
            *out = e->meta;
            cache.stats.hits++;
            pthread_mutex_unlock(&cache.mu);
            return PA_OK;
        }
        const pq_file_meta *stale = e ? remove_entry(pp) : NULL;
        entry *ne = pa_calloc(1, sizeof *ne);
        char *p = ne ? pa_strdup(path) : NULL;
        if (!p) {
            pa_free(ne);
            pthread_mutex_unlock(&cache.mu);
            pq_file_meta_release(stale);
            return pa_error(err, PA_ENOMEM, "%s: out of memory in the metadata cache", path);
        }
        ne->path = p;
        ne->loading = true;
        ne->next = cache.buckets[hash_path(path)];
        cache.buckets[hash_path(path)] = ne;
        cache.stats.entries++;
        cache.stats.misses++;
        pthread_mutex_unlock(&cache.mu);
        pq_file_meta_release(stale);

        pq_file_meta *m = NULL;
        int rc = pq_footer_read(path, &m, err);

        pthread_mutex_lock(&cache.mu);
        cache.stats.parses++;
        entry **self = find(path);   /* our entry: loading entries are never removed by others */
        if (rc) {
            remove_entry(self);
        } else {
            /* Key by what was actually read (the file may have changed since stat). */
            (*self)->size = m->file_size;
            (*self)->mtime_ns = m->mtime_ns;
            (*self)->meta = m;
            (*self)->loading = false;
            pq_file_meta_retain(m);   /* one reference for the cache, one for the caller */
            *out = m;
        }
        pthread_cond_broadcast(&cache.cv);
        pthread_mutex_unlock(&cache.mu);
        return rc;
    }
}

void pq_meta_cache_clear(void)
{
    const pq_file_meta **drop = NULL;
    size_t n = 0, cap = 0;
    pthread_mutex_lock(&cache.mu);
    for (int b = 0; b < N_BUCKETS; b++) {
        entry **pp = &cache.buckets[b];
        while (*pp) {
            if ((*pp)->loading) {   /* its loader will finish it */
                pp = &(*pp)->next;
                continue;
            }
            const pq_file_meta *m = remove_entry(pp);
            if (n == cap) {
                size_t ncap = cap ? cap * 2 : 64;
                const pq_file_meta **nd = pa_realloc(drop, ncap * sizeof *nd);
                if (!nd) {   /* release under the lock instead: it only frees memory */
                    pq_file_meta_release(m);
                    continue;
                }
                drop = nd;
                cap = ncap;
            }
            drop[n++] = m;
        }
    }
    pthread_mutex_unlock(&cache.mu);
    for (size_t i = 0; i < n; i++)
        pq_file_meta_release(drop[i]);
    pa_free(drop);
}

void pq_meta_cache_stats_get(pq_meta_cache_stats *out)
{
    pthread_mutex_lock(&cache.mu);
    *out = cache.stats;
    pthread_mutex_unlock(&cache.mu);
}

/*
 * metrics.c - the monotonic clock and the process-wide named counters
 * (PA_COUNTER_LIST). Counters are relaxed atomics: cheap enough to bump from
 * any thread on every copy or kernel launch; readers take snapshots.
 */
#include "core/core.h"

#include <pthread.h>
#include <time.h>

uint64_t pa_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int64_t counters[PA_CTR__COUNT];

static const char *const counter_names[] = {
#define X(name, desc) #name,
    PA_COUNTER_LIST(X)
#undef X
};
static const char *const counter_descs[] = {
#define X(name, desc) desc,
    PA_COUNTER_LIST(X)
#undef X
};
/* Lower-case copies of the names, filled once. */
static char counter_lower[PA_CTR__COUNT][32];
static pthread_once_t counter_lower_once = PTHREAD_ONCE_INIT;

static void fill_lower(void)
{
    for (int i = 0; i < PA_CTR__COUNT; i++) {
        const char *s = counter_names[i];
        size_t j = 0;
        for (; s[j] && j + 1 < sizeof counter_lower[i]; j++)
            counter_lower[i][j] = (char)(s[j] >= 'A' && s[j] <= 'Z' ? s[j] + 32 : s[j]);
        counter_lower[i][j] = '\0';
    }
}

void pa_counter_add(pa_counter_id id, int64_t delta)
{
    if ((unsigned)id < PA_CTR__COUNT)
        __atomic_fetch_add(&counters[id], delta, __ATOMIC_RELAXED);
}

int64_t pa_counter_get(pa_counter_id id)
{
    return (unsigned)id < PA_CTR__COUNT ? __atomic_load_n(&counters[id], __ATOMIC_RELAXED) : 0;
}

const char *pa_counter_name(pa_counter_id id)
{
    if ((unsigned)id >= PA_CTR__COUNT)
        return NULL;
    pthread_once(&counter_lower_once, fill_lower);
    return counter_lower[id];
}

const char *pa_counter_desc(pa_counter_id id)
{
    return (unsigned)id < PA_CTR__COUNT ? counter_descs[id] : NULL;
}

void pa_counters_snapshot(pa_counters *out)
{
    for (int i = 0; i < PA_CTR__COUNT; i++)
        out->v[i] = __atomic_load_n(&counters[i], __ATOMIC_RELAXED);
}

void pa_counters_diff(const pa_counters *after, const pa_counters *before, pa_counters *out)
{
    for (int i = 0; i < PA_CTR__COUNT; i++)
        out->v[i] = after->v[i] - before->v[i];
}

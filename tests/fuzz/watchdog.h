/*
 * watchdog.h - the fuzz targets' statement watchdog: a thread that cancels
 * the statement running in the watched session once its time is up
 * (sql_session_cancel is safe from any thread). A statement that ignores
 * the cancel runs into libFuzzer's -timeout, which is a finding. Included
 * by one target per binary.
 */
#ifndef PISTA_FUZZ_WATCHDOG_H
#define PISTA_FUZZ_WATCHDOG_H

#include "sql/sql.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>

static pthread_mutex_t wd_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wd_cv = PTHREAD_COND_INITIALIZER;
static sql_session *wd_session;   /* the statement being watched, or NULL */
static struct timespec wd_deadline;

static void *watchdog(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&wd_mu);
    for (;;) {
        if (!wd_session) {
            pthread_cond_wait(&wd_cv, &wd_mu);
            continue;
        }
        if (pthread_cond_timedwait(&wd_cv, &wd_mu, &wd_deadline) == ETIMEDOUT && wd_session) {
            sql_session_cancel(wd_session);
            wd_session = NULL;
        }
    }
    return NULL;
}

/* Start the watchdog thread (once). */
static bool watchdog_start(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, watchdog, NULL) != 0)
        return false;
    pthread_detach(t);
    return true;
}

/* Watch s for ms milliseconds from now; NULL stops watching. */
static void watch(sql_session *s, long ms)
{
    pthread_mutex_lock(&wd_mu);
    wd_session = s;
    if (s) {
        clock_gettime(CLOCK_REALTIME, &wd_deadline);
        wd_deadline.tv_sec += ms / 1000;
        wd_deadline.tv_nsec += (ms % 1000) * 1000000L;
        if (wd_deadline.tv_nsec >= 1000000000L) {
            wd_deadline.tv_sec++;
            wd_deadline.tv_nsec -= 1000000000L;
        }
    }
    pthread_cond_signal(&wd_cv);
    pthread_mutex_unlock(&wd_mu);
}

#endif

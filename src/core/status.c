/*
 * status.c - status names and messages (from PA_STATUS_LIST), the first-error
 * context and the logging sink. A pa_err's lock is created lazily so a
 * zero-initialised or pa_err_init'ed context works from any thread.
 */
#include "core/core.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const status_names[] = {
#define X(name, msg) "PA_" #name,
    PA_STATUS_LIST(X)
#undef X
};
static const char *const status_msgs[] = {
#define X(name, msg) msg,
    PA_STATUS_LIST(X)
#undef X
};

const char *pa_status_name(int status)
{
    int i = -status;
    return (i >= 0 && i < PA__STATUS_COUNT) ? status_names[i] : "PA_UNKNOWN";
}

const char *pa_status_message(int status)
{
    int i = -status;
    return (i >= 0 && i < PA__STATUS_COUNT) ? status_msgs[i] : "unknown status";
}

/* One global lock guards lazy creation of the per-context locks. */
static pthread_mutex_t err_init_mu = PTHREAD_MUTEX_INITIALIZER;

static pthread_mutex_t *err_lock(pa_err *e)
{
    pthread_mutex_t *mu = __atomic_load_n((pthread_mutex_t **)&e->mu_, __ATOMIC_ACQUIRE);
    if (mu)
        return mu;
    pthread_mutex_lock(&err_init_mu);
    mu = e->mu_;
    if (!mu) {
        /* Plain malloc: the lock must exist even when allocation faults are injected. */
        mu = malloc(sizeof *mu);
        if (mu) {
            pthread_mutex_init(mu, NULL);
            __atomic_store_n((pthread_mutex_t **)&e->mu_, mu, __ATOMIC_RELEASE);
        }
    }
    pthread_mutex_unlock(&err_init_mu);
    return mu ? mu : &err_init_mu;   /* fall back to the global lock */
}

void pa_err_init(pa_err *e)
{
    memset(e, 0, sizeof *e);
}

void pa_err_close(pa_err *e)
{
    if (!e)
        return;
    if (e->mu_) {
        pthread_mutex_destroy(e->mu_);
        free(e->mu_);
        e->mu_ = NULL;
    }
}

void pa_err_clear(pa_err *e)
{
    if (!e)
        return;
    pthread_mutex_t *mu = err_lock(e);
    pthread_mutex_lock(mu);
    e->code = PA_OK;
    e->line = 0;
    e->file = NULL;
    e->n_errors = 0;
    e->msg[0] = '\0';
    pthread_mutex_unlock(mu);
}

int pa_verror_at(pa_err *e, int code, const char *file, int line, const char *fmt, va_list ap)
{
    if (code == PA_OK)
        code = PA_EINTERNAL;
    if (!e)
        return code;
    pthread_mutex_t *mu = err_lock(e);
    pthread_mutex_lock(mu);
    e->n_errors++;
    if (e->code == PA_OK) {
        e->code = code;
        e->file = file;
        e->line = line;
        if (fmt && *fmt)
            vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        else
            snprintf(e->msg, sizeof e->msg, "%s", pa_status_message(code));
    }
    pthread_mutex_unlock(mu);
    return code;
}

int pa_error_at(pa_err *e, int code, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = pa_verror_at(e, code, file, line, fmt, ap);
    va_end(ap);
    return rc;
}

int pa_err_propagate(pa_err *dst, const pa_err *src)
{
    if (!src || src->code == PA_OK)
        return PA_OK;
    pa_error_at(dst, src->code, src->file, src->line, "%s", src->msg);
    return src->code;
}

/* ------------------------------------------------------------------ logging */

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static pa_log_sink log_sink;
static void *log_user;
static int log_min = PA_LOG_INFO;

void pa_log_set_sink(pa_log_sink sink, void *user, pa_log_level min_level)
{
    pthread_mutex_lock(&log_mu);
    log_sink = sink;
    log_user = user;
    __atomic_store_n(&log_min, (int)min_level, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&log_mu);
}

void pa_log(pa_log_level level, const char *fmt, ...)
{
    if ((int)level < __atomic_load_n(&log_min, __ATOMIC_RELAXED))
        return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&log_mu);
    if (log_sink)
        log_sink(log_user, level, buf);
    pthread_mutex_unlock(&log_mu);
}

const char *pa_log_level_name(pa_log_level level)
{
    switch (level) {
    case PA_LOG_DEBUG: return "debug";
    case PA_LOG_INFO: return "info";
    case PA_LOG_WARN: return "warning";
    case PA_LOG_ERROR: return "error";
    }
    return "?";
}

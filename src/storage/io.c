/*
 * io.c - the I/O engine object: option defaults, backend choice ("auto"
 * tries io_uring, then the pread pool), orderly shutdown, the process-wide
 * shared engine and statistics. The request path is in io_req.c.
 */
#include "storage/io_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int io__test_uring_errno;
bool io__test_direct_refused;

#define IO_DEFAULT_DEPTH 64
#define IO_DEFAULT_THREADS 8
#define IO_DEFAULT_MAX_IO (1u << 20)
/* Bounds that keep a ring and a thread set reasonable. */
#define IO_MAX_DEPTH 4096
#define IO_MAX_THREADS 256
#define IO_MAX_IO_SIZE (256u << 20)

static int resolve_options(const io_options *in, io_options *o, pa_err *err)
{
    memset(o, 0, sizeof *o);
    if (in)
        *o = *in;
    const char *b = o->backend && *o->backend ? o->backend : "auto";
    if (strcmp(b, "auto") == 0)
        o->backend = "auto";
    else if (strcmp(b, "uring") == 0 || strcmp(b, "io_uring") == 0)
        o->backend = "uring";
    else if (strcmp(b, "pread") == 0)
        o->backend = "pread";
    else
        return pa_error(err, PA_EINVAL, "unknown I/O backend '%s' (expected auto, uring or pread)", b);
    if (o->queue_depth < 0 || o->queue_depth > IO_MAX_DEPTH)
        return pa_error(err, PA_EINVAL, "I/O queue depth %d out of range 1..%d", o->queue_depth,
                        IO_MAX_DEPTH);
    if (o->threads < 0 || o->threads > IO_MAX_THREADS)
        return pa_error(err, PA_EINVAL, "I/O thread count %d out of range 1..%d", o->threads,
                        IO_MAX_THREADS);
    if (o->max_io_size % IO_DIRECT_ALIGN != 0 || o->max_io_size > IO_MAX_IO_SIZE)
        return pa_error(err, PA_EINVAL, "max I/O size %zu is not a multiple of %u up to %u",
                        o->max_io_size, IO_DIRECT_ALIGN, IO_MAX_IO_SIZE);
    if (o->queue_depth == 0)
        o->queue_depth = IO_DEFAULT_DEPTH;
    if (o->threads == 0)
        o->threads = IO_DEFAULT_THREADS;
    if (o->max_io_size == 0)
        o->max_io_size = IO_DEFAULT_MAX_IO;
    return PA_OK;
}

/* Start the backend the options ask for; "auto" falls back to pread. */
static int start_backend(io_engine *e, pa_err *err)
{
    const char *want = e->opt.backend;
    if (strcmp(want, "pread") == 0) {
        e->ops = &io__pread_backend;
        snprintf(e->note, sizeof e->note, "requested pread (%d threads)", e->opt.threads);
        return e->ops->start(e, err);
    }
    pa_err uerr;
    pa_err_init(&uerr);
    e->ops = &io__uring_backend;
    int rc = e->ops->start(e, &uerr);
    if (rc == PA_OK) {
        snprintf(e->note, sizeof e->note, "%s uring (queue depth %d)",
                 strcmp(want, "auto") == 0 ? "auto: io_uring available; using" : "requested",
                 e->opt.queue_depth);
    } else if (strcmp(want, "uring") == 0) {
        rc = pa_error(err, rc, "%s", uerr.msg);
    } else {
        snprintf(e->note, sizeof e->note, "auto: io_uring unavailable (%.180s); using pread (%d threads)",
                 uerr.msg, e->opt.threads);
        e->ops = &io__pread_backend;
        rc = e->ops->start(e, err);
    }
    pa_err_close(&uerr);
    return rc;
}

int io_engine_create(const io_options *opt, io_engine **out, pa_err *err)
{
    io_options o;
    int rc = resolve_options(opt, &o, err);
    if (rc != PA_OK)
        return rc;
    io_engine *e = pa_calloc(1, sizeof *e);
    if (!e)
        return pa_error(err, PA_ENOMEM, "out of memory creating the I/O engine");
    e->opt = o;
    pthread_mutex_init(&e->mu, NULL);
    pthread_mutex_init(&e->files_mu, NULL);
    pthread_cond_init(&e->work, NULL);
    pthread_cond_init(&e->idle, NULL);
    if ((rc = start_backend(e, err)) != PA_OK)
        goto fail;
    *out = e;
    return PA_OK;
fail:
    pthread_mutex_destroy(&e->mu);
    pthread_mutex_destroy(&e->files_mu);
    pthread_cond_destroy(&e->work);
    pthread_cond_destroy(&e->idle);
    pa_free(e);
    return rc;
}

void io_engine_destroy(io_engine *e)
{
    if (!e)
        return;
    /* 1. Refuse new requests and cancel everything not yet started. */
    pthread_mutex_lock(&e->mu);
    e->stopping = true;
    pthread_mutex_unlock(&e->mu);
    io__cancel(e, NULL, true);
    /* 2. Let running reads and their deliveries end. */
    pthread_mutex_lock(&e->mu);
    while (e->in_flight > 0 || e->delivering > 0)
        pthread_cond_wait(&e->idle, &e->mu);
    pthread_cond_broadcast(&e->work);
    pthread_mutex_unlock(&e->mu);
    /* 3. Stop the threads, close the files. */
    e->ops->stop(e);
    io__files_close_all(e);
    pthread_mutex_destroy(&e->mu);
    pthread_mutex_destroy(&e->files_mu);
    pthread_cond_destroy(&e->work);
    pthread_cond_destroy(&e->idle);
    pa_free(e);
}

const char *io_engine_backend(const io_engine *e) { return e->ops->name; }
const char *io_engine_note(const io_engine *e) { return e->note; }
void io_engine_get_options(const io_engine *e, io_options *out) { *out = e->opt; }

void io_engine_stats(io_engine *e, io_stats *out)
{
    pthread_mutex_lock(&e->mu);
    *out = e->stats;
    if (e->in_flight > 0)
        out->busy_ns += pa_now_ns() - e->busy_since;
    pthread_mutex_unlock(&e->mu);
}

/* ------------------------------------------------------- the shared engine */

static pthread_mutex_t shared_mu = PTHREAD_MUTEX_INITIALIZER;
static io_engine *shared_engine;

/* Parse an optional non-negative integer environment variable. */
static int env_int(const char *name, int *out, pa_err *err)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return PA_OK;
    char *end;
    long x = strtol(v, &end, 10);
    if (*end || x < 0 || x > 1000000)
        return pa_error(err, PA_EINVAL, "%s='%s' is not a count", name, v);
    *out = (int)x;
    return PA_OK;
}

static int options_from_env(io_options *o, pa_err *err)
{
    memset(o, 0, sizeof *o);
    o->backend = getenv("PISTA_IO_BACKEND");
    int rc, direct = 0;
    if ((rc = env_int("PISTA_IO_DEPTH", &o->queue_depth, err)) != PA_OK ||
        (rc = env_int("PISTA_IO_THREADS", &o->threads, err)) != PA_OK ||
        (rc = env_int("PISTA_IO_DIRECT", &direct, err)) != PA_OK)
        return rc;
    o->direct = direct != 0;
    return PA_OK;
}

int io_engine_shared(io_engine **out, pa_err *err)
{
    int rc = PA_OK;
    pthread_mutex_lock(&shared_mu);
    if (!shared_engine) {
        io_options o;
        if ((rc = options_from_env(&o, err)) == PA_OK)
            rc = io_engine_create(&o, &shared_engine, err);
    }
    if (rc == PA_OK)
        *out = shared_engine;
    pthread_mutex_unlock(&shared_mu);
    return rc;
}

void io_engine_shared_shutdown(void)
{
    pthread_mutex_lock(&shared_mu);
    io_engine *e = shared_engine;
    shared_engine = NULL;
    pthread_mutex_unlock(&shared_mu);
    io_engine_destroy(e);
}

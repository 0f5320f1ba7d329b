/*
 * write.c - whole tables to .tbl files, in parallel, in order.
 *
 * The selected tables are cut into chunks of consecutive units (a few MB of
 * text each), listed in output order: table group (region, nation, supplier,
 * customer, part+partsupp, orders+lineitem), then part, then unit. Workers
 * claim chunks in list order, generate and format them into their own
 * buffers, then wait for their turn: chunk k is written only after chunk
 * k - 1, so the files are the same for any thread count. At most one buffer
 * per worker is alive. A file is opened by its first chunk and closed by its
 * last one, so only one file per table is open at a time, whatever the
 * number of parts.
 */
#include "tpch/tpch_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

/* Generation groups: tables drawn in one pass share a group. */
static const struct {
    tp_table t[2];
    int n;
    int bytes_per_unit;   /* rough .tbl bytes per unit, for chunk sizing */
} groups[] = {
    {{TP_REGION}, 1, 120},
    {{TP_NATION}, 1, 110},
    {{TP_SUPPLIER}, 1, 140},
    {{TP_CUSTOMER}, 1, 165},
    {{TP_PART, TP_PARTSUPP}, 2, 720},
    {{TP_ORDERS, TP_LINEITEM}, 2, 630},
};
#define N_GROUPS ((int)(sizeof groups / sizeof groups[0]))
#define CHUNK_BYTES (2 << 20)

typedef struct chunk {
    int group, part;
    int64_t first, n;
    bool first_of_file, last_of_file;
} chunk;

typedef struct writer {
    const tp_gen *g;
    const tp_write_opts *o;
    unsigned mask;
    chunk *chunks;
    int64_t n_chunks;

    pthread_mutex_t mu;
    pthread_cond_t turn;
    int64_t next;        /* next chunk to claim */
    int64_t commit;      /* next chunk to write */
    bool failed;
    int rc;              /* first error */
    pa_err *err;

    int fd[TP_TABLE__COUNT];
    int64_t units_done[TP_TABLE__COUNT], units_total[TP_TABLE__COUNT];
    uint64_t t_start[TP_TABLE__COUNT], t_end[TP_TABLE__COUNT];
    tp_write_stats *stats;
} writer;

void tp_write_opts_defaults(tp_write_opts *o)
{
    memset(o, 0, sizeof *o);
    o->format = TP_FORMAT_TBL;
    o->part = -1;
}

void tp_part_range(const tp_gen *g, tp_table t, int parts, int part, int64_t *first, int64_t *n)
{
    int64_t u = tp_gen_units(g, t);
    if (parts <= 1) {
        *first = 0;
        *n = u;
        return;
    }
    int64_t b = u * part / parts, e = u * (part + 1) / parts;
    *first = b;
    *n = e - b;
}

static int mkdir_p(const char *path, pa_err *err)
{
    char buf[PATH_MAX];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf)
        return pa_error(err, PA_EINVAL, "bad output directory '%s'", path);
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return pa_error(err, PA_EIO, "creating directory %s: %s", buf, strerror(errno));
        buf[i] = c;
    }
    return PA_OK;
}

static int file_path(const writer *w, tp_table t, int part, char *out, size_t cap, pa_err *err)
{
    const char *name = tp_table_name(t);
    int n = w->o->parts > 1
                ? snprintf(out, cap, "%s/%s/%s.%d.tbl", w->o->out_dir, name, name, part)
                : snprintf(out, cap, "%s/%s.tbl", w->o->out_dir, name);
    if (n < 0 || (size_t)n >= cap)
        return pa_error(err, PA_EINVAL, "output path too long under %s", w->o->out_dir);
    return PA_OK;
}

static int write_all(int fd, const char *p, size_t n, const char *what, pa_err *err)
{
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return pa_error(err, PA_EIO, "writing %s: %s", what, strerror(errno));
        }
        p += k;
        n -= (size_t)k;
    }
    return PA_OK;
}

/* Write chunk c's text of table t (called in chunk order). */
static int emit(writer *w, const chunk *c, tp_table t, const char *text, size_t len, pa_err *err)
{
    if (!w->o->out_dir)
        return PA_OK;
    char path[PATH_MAX];
    int rc = file_path(w, t, c->part, path, sizeof path, err);
    if (rc != PA_OK)
        return rc;
    if (c->first_of_file) {
        w->fd[t] = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (w->fd[t] < 0)
            return pa_error(err, PA_EIO, "creating %s: %s", path, strerror(errno));
    }
    rc = write_all(w->fd[t], text, len, path, err);
    if (c->last_of_file) {
        if (close(w->fd[t]) != 0 && rc == PA_OK)
            rc = pa_error(err, PA_EIO, "closing %s: %s", path, strerror(errno));
        w->fd[t] = -1;
    }
    return rc;
}

typedef struct worker {
    writer *w;
    tp_batch b[2];
    char *buf[2];
    size_t cap[2];
    pa_err err;
} worker;

static int grow(worker *k, int i, size_t need, pa_err *err)
{
    if (need <= k->cap[i])
        return PA_OK;
    char *p = pa_realloc(k->buf[i], need);
    if (!p)
        return pa_error(err, PA_ENOMEM, "TPC-H output buffer of %zu bytes", need);
    k->buf[i] = p;
    k->cap[i] = need;
    return PA_OK;
}

static void *work(void *arg)
{
    worker *k = arg;
    writer *w = k->w;
    for (;;) {
        pthread_mutex_lock(&w->mu);
        int64_t id = w->next++;
        bool stop = w->failed || id >= w->n_chunks;
        const chunk *c = stop ? NULL : &w->chunks[id];
        if (c)
            for (int j = 0; j < groups[c->group].n; j++) {
                tp_table t = groups[c->group].t[j];
                if ((w->mask >> t & 1) && !w->t_start[t])
                    w->t_start[t] = pa_now_ns();
            }
        pthread_mutex_unlock(&w->mu);
        if (stop)
            break;

        /* Generate: a group's tables in one pass; unselected ones are skipped. */
        const tp_table *gt = groups[c->group].t;
        tp_batch *out[2] = {NULL, NULL};
        for (int j = 0; j < groups[c->group].n; j++) {
            if (!(w->mask >> gt[j] & 1))
                continue;
            out[j] = &k->b[j];
            if (out[j]->table != gt[j]) {   /* reuse the memory only for the same table */
                tp_batch_close(out[j]);
                tp_batch_init(out[j], gt[j]);
            }
        }
        int rc;
        if (out[0])
            rc = tp_gen_batch(w->g, gt[0], c->first, c->n, out[0], out[1], &k->err);
        else
            rc = tp_gen_batch(w->g, gt[1], c->first, c->n, out[1], NULL, &k->err);
        size_t len[2] = {0, 0};
        for (int j = 0; j < 2 && rc == PA_OK; j++) {
            if (!out[j])
                continue;
            rc = grow(k, j, tp_tbl_bound(out[j], 0, out[j]->n_rows), &k->err);
            if (rc == PA_OK)
                len[j] = tp_batch_format_tbl(out[j], 0, out[j]->n_rows, k->buf[j]);
        }

        /* Wait for our turn, write, pass the turn on. */
        pthread_mutex_lock(&w->mu);
        while (w->commit != id && !w->failed)
            pthread_cond_wait(&w->turn, &w->mu);
        bool go = !w->failed && rc == PA_OK;
        pthread_mutex_unlock(&w->mu);
        for (int j = 0; j < 2 && go; j++)
            if (out[j] && (rc = emit(w, c, gt[j], k->buf[j], len[j], &k->err)) != PA_OK)
                go = false;

        pthread_mutex_lock(&w->mu);
        if (rc != PA_OK && !w->failed) {
            w->failed = true;
            w->rc = rc;
            pa_err_propagate(w->err, &k->err);
        }
        if (!w->failed) {
            uint64_t now = pa_now_ns();
            for (int j = 0; j < 2; j++) {
                if (!out[j])
                    continue;
                tp_table t = gt[j];
                w->stats->rows[t] += out[j]->n_rows;
                w->stats->bytes[t] += (int64_t)len[j];
                w->units_done[t] += c->n;
                w->t_end[t] = now;
                if (w->o->progress) {
                    tp_progress p = {
                        .table = t, .rows = w->stats->rows[t], .bytes = w->stats->bytes[t],
                        .units_done = w->units_done[t], .units = w->units_total[t],
                        .seconds = (double)(now - w->t_start[t]) * 1e-9,
                        .done = w->units_done[t] == w->units_total[t] && c->last_of_file};
                    w->o->progress(w->o->progress_user, &p);
                }
            }
        }
        w->commit = id + 1;
        pthread_cond_broadcast(&w->turn);
        pthread_mutex_unlock(&w->mu);
    }
    return NULL;
}

/* List the chunks in output order. */
static int plan(writer *w, pa_err *err)
{
    const tp_write_opts *o = w->o;
    int parts = o->parts > 1 ? o->parts : 1;
    int p0 = o->parts > 1 && o->part >= 0 ? o->part : 0;
    int p1 = o->parts > 1 && o->part >= 0 ? o->part + 1 : parts;
    int64_t total = 0, cap = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int gi = 0; gi < N_GROUPS; gi++) {
            unsigned gm = 0;
            for (int j = 0; j < groups[gi].n; j++)
                gm |= 1u << groups[gi].t[j];
            if (!(gm & w->mask))
                continue;
            int64_t per = CHUNK_BYTES / groups[gi].bytes_per_unit;
            for (int p = p0; p < p1; p++) {
                int64_t first, n;
                tp_part_range(w->g, groups[gi].t[0], o->parts, p, &first, &n);
                if (pass == 1)
                    for (int j = 0; j < groups[gi].n; j++)
                        w->units_total[groups[gi].t[j]] += n;
                int64_t m = n == 0 ? 1 : (n + per - 1) / per;
                for (int64_t i = 0; i < m; i++) {
                    if (pass == 1) {
                        chunk *c = &w->chunks[total];
                        c->group = gi;
                        c->part = p;
                        c->first = first + i * per;
                        c->n = i == m - 1 ? n - i * per : per;
                        c->first_of_file = i == 0;
                        c->last_of_file = i == m - 1;
                    }
                    total++;
                }
            }
        }
        if (pass == 0) {
            cap = total;
            total = 0;
            w->chunks = pa_calloc((size_t)(cap ? cap : 1), sizeof(chunk));
            if (!w->chunks)
                return pa_error(err, PA_ENOMEM, "TPC-H chunk list of %lld", (long long)cap);
        }
    }
    w->n_chunks = total;
    return PA_OK;
}

int tp_write(const tp_gen *g, const tp_write_opts *o, tp_write_stats *stats, pa_err *err)
{
    tp_write_stats local;
    if (!stats)
        stats = &local;
    memset(stats, 0, sizeof *stats);
    if (o->format != TP_FORMAT_TBL)
        return pa_error(err, PA_EUNSUPPORTED,
                        "Parquet output is not available yet (no Parquet writer in this "
                        "build); use the tbl format");
    if (o->parts < 0 || (o->parts > 1 && o->part >= o->parts) || o->part < -1)
        return pa_error(err, PA_EINVAL, "part %d of %d parts does not exist", o->part, o->parts);
    uint64_t t0 = pa_now_ns();
    writer w;
    memset(&w, 0, sizeof w);
    w.g = g;
    w.o = o;
    w.mask = o->tables ? o->tables & TP_ALL_TABLES : TP_ALL_TABLES;
    w.err = err;
    w.stats = stats;
    for (int t = 0; t < TP_TABLE__COUNT; t++)
        w.fd[t] = -1;
    int rc = PA_OK;
    if (o->out_dir) {
        if ((rc = mkdir_p(o->out_dir, err)) != PA_OK)
            return rc;
        if (o->parts > 1) {
            for (int t = 0; t < TP_TABLE__COUNT; t++) {
                if (!(w.mask >> t & 1))
                    continue;
                char dir[PATH_MAX];
                int n = snprintf(dir, sizeof dir, "%s/%s", o->out_dir, tp_table_name(t));
                if (n < 0 || (size_t)n >= sizeof dir)
                    return pa_error(err, PA_EINVAL, "output path too long");
                if ((rc = mkdir_p(dir, err)) != PA_OK)
                    return rc;
            }
        }
    }
    if ((rc = plan(&w, err)) != PA_OK)
        return rc;

    int nt = o->threads > 0 ? o->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (nt < 1)
        nt = 1;
    if (nt > w.n_chunks)
        nt = (int)w.n_chunks;
    if (nt < 1)
        nt = 1;
    worker *ks = pa_calloc((size_t)nt, sizeof(worker));
    pthread_t *th = pa_calloc((size_t)nt, sizeof(pthread_t));
    if (!ks || !th) {
        rc = pa_error(err, PA_ENOMEM, "TPC-H writer threads");
        goto out;
    }
    pthread_mutex_init(&w.mu, NULL);
    pthread_cond_init(&w.turn, NULL);
    int started = 0;
    for (int i = 0; i < nt; i++) {
        ks[i].w = &w;
        pa_err_init(&ks[i].err);
        tp_batch_init(&ks[i].b[0], TP_REGION);
        tp_batch_init(&ks[i].b[1], TP_REGION);
    }
    for (int i = 0; i < nt; i++) {
        if (pthread_create(&th[i], NULL, work, &ks[i]) != 0) {
            pthread_mutex_lock(&w.mu);
            if (!w.failed) {
                w.failed = true;
                w.rc = PA_EINTERNAL;
                pa_error(err, PA_EINTERNAL, "cannot start TPC-H writer thread");
            }
            pthread_cond_broadcast(&w.turn);
            pthread_mutex_unlock(&w.mu);
            break;
        }
        started++;
    }
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < nt; i++) {
        for (int j = 0; j < 2; j++) {
            tp_batch_close(&ks[i].b[j]);
            pa_free(ks[i].buf[j]);
        }
        pa_err_close(&ks[i].err);
    }
    for (int t = 0; t < TP_TABLE__COUNT; t++)
        if (w.fd[t] >= 0)
            close(w.fd[t]);
    pthread_cond_destroy(&w.turn);
    pthread_mutex_destroy(&w.mu);
    rc = w.failed ? w.rc : PA_OK;
    for (int t = 0; t < TP_TABLE__COUNT; t++)
        if (w.t_start[t])
            stats->seconds[t] = (double)(w.t_end[t] - w.t_start[t]) * 1e-9;
out:
    pa_free(ks);
    pa_free(th);
    pa_free(w.chunks);
    stats->total_seconds = (double)(pa_now_ns() - t0) * 1e-9;
    return rc;
}

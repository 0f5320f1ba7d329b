/*
 * write.c - whole tables to .tbl or Parquet files, in parallel, in order.
 *
 * The selected tables are cut into chunks of consecutive units (a few MB of
 * text each), listed by table group (region, nation, supplier, customer,
 * part+partsupp, orders+lineitem), then part, then unit. Workers claim
 * chunks, each group's in list order, the groups in claim_order, and
 * generate them (a group's tables in one pass), one piece per table,
 * formatting .tbl text on the way. Every output file has a sink that takes
 * its pieces strictly in chunk order, so files are the same for any thread
 * count. A worker that finishes a piece puts it on the pending list and, if
 * the piece's sink is idle and its turn has come, feeds the sink every piece
 * that is ready; a busy sink is left to the worker feeding it. So orders and
 * lineitem (or the parts of a table, or other tables) are written and
 * encoded by different workers at once, while generation goes on. Chunks in
 * flight are bounded per group (back-pressure); a file is opened by its
 * first chunk and closed by its last one.
 */
#include "tpch/tpch_int.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
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
/* The order workers claim chunks in, across groups: the group whose file
 * takes longest to write first (one lineitem file is written by one thread
 * at a time, the longest serial chain), so that generating and writing the
 * other tables fills the gaps while it runs. Each file still receives its
 * rows in order, so the order of claims changes no output byte. */
static const int claim_order[] = {5, 4, 3, 2, 1, 0};
#define CHUNK_BYTES (2 << 20)

/* Chunks in flight (claimed, not yet written) per group and worker thread.
 * A Parquet writer encodes a whole row group at once, while the other
 * workers go on generating: the pieces they make meanwhile wait, so Parquet
 * allows more chunks in flight per group to keep generation going through a
 * lineitem row-group flush (a 2^20-row group is ~80 chunks of 13000 lines;
 * a chunk is 2 MB of text, 3-4 MB of batches). On two cores 64 was no
 * faster than 32 at SF 1 and held ~70 MB more. */
#define INFLIGHT_PER_THREAD 2
#define INFLIGHT_PARQUET 32

typedef struct chunk {
    int group, part;
    int64_t first, n;
    bool first_of_file, last_of_file;
    int64_t file[2];     /* sink of each table of the group, -1 = not selected */
    int left;            /* pieces not yet written */
} chunk;

typedef struct writer {
    const tp_gen *g;
    const tp_write_opts *o;
    unsigned mask;
    chunk *chunks;
    int64_t n_chunks;
    tp__sink *sinks;
    int64_t n_sinks;

    pthread_mutex_t mu;
    pthread_cond_t space;  /* a chunk was written, or failure */
    int64_t g_next[N_GROUPS], g_end[N_GROUPS]; /* per group: next chunk to claim, end */
    int g_inflight[N_GROUPS];                  /* per group: claimed, not yet written */
    int max_inflight;                          /* per group */
    tp__piece *free[TP_TABLE__COUNT];
    tp__piece *pending;    /* generated, waiting for their sink */
    bool failed;
    int rc;                /* first error */
    pa_err *err;

    int64_t units_done[TP_TABLE__COUNT], units_total[TP_TABLE__COUNT];
    int64_t pieces_left[TP_TABLE__COUNT];
    uint64_t t_start[TP_TABLE__COUNT], t_end[TP_TABLE__COUNT];
    tp_write_stats *stats;
} writer;

typedef struct worker {
    writer *w;
    pa_err err;
} worker;

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

/* Record the first failure (caller holds mu) and wake everyone. */
static void fail_locked(writer *w, int rc, pa_err *err)
{
    if (!w->failed) {
        w->failed = true;
        w->rc = rc;
        pa_err_propagate(w->err, err);
    }
    pthread_cond_broadcast(&w->space);
}

/* A piece for table t from its free list, or a new one (caller holds mu). */
static tp__piece *take_piece(writer *w, tp_table t)
{
    tp__piece *p = w->free[t];
    if (p) {
        w->free[t] = p->next;
    } else if ((p = pa_calloc(1, sizeof *p)) != NULL) {
        tp_batch_init(&p->b, t);
    }
    return p;
}

static void give_piece(writer *w, tp__piece *p)
{
    p->next = w->free[p->b.table];
    w->free[p->b.table] = p;
}

/* The pending piece of chunk `chunk` for sink f, unlinked; NULL if none yet. */
static tp__piece *take_pending(writer *w, int64_t f, int64_t chunk)
{
    for (tp__piece **pp = &w->pending; *pp; pp = &(*pp)->next)
        if ((*pp)->file == f && (*pp)->chunk == chunk) {
            tp__piece *p = *pp;
            *pp = p->next;
            return p;
        }
    return NULL;
}

/* Account a written piece and report progress (caller holds mu). */
static void written(writer *w, const tp__piece *p, int64_t file_bytes)
{
    chunk *c = &w->chunks[p->chunk];
    tp_table t = p->b.table;
    uint64_t now = pa_now_ns();
    w->stats->rows[t] += p->b.n_rows;
    w->stats->in_bytes[t] += p->in_bytes;
    w->stats->bytes[t] += w->o->format == TP_FORMAT_TBL ? (int64_t)p->text_len : file_bytes;
    w->units_done[t] += c->n;
    w->t_end[t] = now;
    bool done = --w->pieces_left[t] == 0;
    if (w->o->progress) {
        tp_progress pr = {
            .table = t, .rows = w->stats->rows[t], .bytes = w->stats->bytes[t],
            .in_bytes = w->stats->in_bytes[t], .units_done = w->units_done[t],
            .units = w->units_total[t], .seconds = (double)(now - w->t_start[t]) * 1e-9,
            .done = done};
        w->o->progress(w->o->progress_user, &pr);
    }
    if (--c->left == 0) {
        w->g_inflight[c->group]--;
        pthread_cond_broadcast(&w->space);
    }
}

/* Feed sink f every piece that is its turn, unless another worker already
 * does. Pieces are written outside the lock, so sinks fill in parallel. */
static void drain(writer *w, worker *k, int64_t f)
{
    tp__sink *s = &w->sinks[f];
    pthread_mutex_lock(&w->mu);
    if (s->busy) {
        pthread_mutex_unlock(&w->mu);
        return;
    }
    s->busy = true;
    tp__piece *p;
    while (!w->failed && (p = take_pending(w, f, s->next_chunk)) != NULL) {
        pthread_mutex_unlock(&w->mu);
        const chunk *c = &w->chunks[p->chunk];
        int64_t bytes = 0;
        int rc = PA_OK;
        uint64_t t0 = pa_now_ns();
        if (c->first_of_file)
            rc = tp__sink_open(w->o, s, &k->err);
        if (rc == PA_OK)
            rc = tp__sink_put(w->o, s, p, &k->err);
        if (rc == PA_OK && c->last_of_file)
            rc = tp__sink_close(w->o, s, &bytes, &k->err);
        uint64_t t1 = pa_now_ns();
        pthread_mutex_lock(&w->mu);
        w->stats->write_seconds[s->t] += (double)(t1 - t0) * 1e-9;
        if (rc != PA_OK) {
            fail_locked(w, rc, &k->err);
            give_piece(w, p);
            break;
        }
        written(w, p, bytes);
        s->next_chunk++;
        give_piece(w, p);
    }
    s->busy = false;
    pthread_mutex_unlock(&w->mu);
}

/* The next chunk to generate (caller holds mu): from the first group in
 * claim order that has chunks left and room in flight; -1 when none has
 * room, -2 when every chunk is claimed. */
static int64_t claim(writer *w)
{
    bool left = false;
    for (int k = 0; k < N_GROUPS; k++) {
        int gi = claim_order[k];
        if (w->g_next[gi] >= w->g_end[gi])
            continue;
        left = true;
        if (w->g_inflight[gi] < w->max_inflight) {
            w->g_inflight[gi]++;
            return w->g_next[gi]++;
        }
    }
    return left ? -1 : -2;
}

static void *work(void *arg)
{
    worker *k = arg;
    writer *w = k->w;
    for (;;) {
        pthread_mutex_lock(&w->mu);
        int64_t id = -1;
        while (!w->failed && (id = claim(w)) == -1)
            pthread_cond_wait(&w->space, &w->mu);
        if (w->failed || id < 0) {
            pthread_mutex_unlock(&w->mu);
            break;
        }
        chunk *c = &w->chunks[id];
        const tp_table *gt = groups[c->group].t;
        tp__piece *pc[2] = {NULL, NULL};
        int rc = PA_OK;
        for (int j = 0; j < groups[c->group].n; j++) {
            if (c->file[j] < 0)
                continue;
            if (!w->t_start[gt[j]])
                w->t_start[gt[j]] = pa_now_ns();
            if (!(pc[j] = take_piece(w, gt[j])))
                rc = pa_error(&k->err, PA_ENOMEM, "TPC-H %s batch", tp_table_name(gt[j]));
        }
        pthread_mutex_unlock(&w->mu);

        /* Generate (a group's tables in one pass) and prepare, in parallel. */
        if (rc == PA_OK)
            rc = pc[0] ? tp_gen_batch(w->g, gt[0], c->first, c->n, &pc[0]->b,
                                      pc[1] ? &pc[1]->b : NULL, &k->err)
                       : tp_gen_batch(w->g, gt[1], c->first, c->n, &pc[1]->b, NULL, &k->err);
        for (int j = 0; j < 2 && rc == PA_OK; j++)
            if (pc[j])
                rc = tp__piece_prepare(w->o, pc[j], &k->err);

        pthread_mutex_lock(&w->mu);
        for (int j = 0; j < 2; j++) {
            if (!pc[j])
                continue;
            if (rc != PA_OK) {
                give_piece(w, pc[j]);
                continue;
            }
            pc[j]->chunk = id;
            pc[j]->file = c->file[j];
            pc[j]->next = w->pending;
            w->pending = pc[j];
        }
        if (rc != PA_OK)
            fail_locked(w, rc, &k->err);
        pthread_mutex_unlock(&w->mu);
        if (rc != PA_OK)
            break;
        for (int j = 0; j < 2; j++)
            if (c->file[j] >= 0)
                drain(w, k, c->file[j]);
    }
    return NULL;
}

/* List the chunks in output order, and the files (sinks) they fill. */
static int plan(writer *w, pa_err *err)
{
    const tp_write_opts *o = w->o;
    int parts = o->parts > 1 ? o->parts : 1;
    int p0 = o->parts > 1 && o->part >= 0 ? o->part : 0;
    int p1 = o->parts > 1 && o->part >= 0 ? o->part + 1 : parts;
    int64_t total = 0, files = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int gi = 0; gi < N_GROUPS; gi++) {
            unsigned gm = 0;
            for (int j = 0; j < groups[gi].n; j++)
                gm |= 1u << groups[gi].t[j];
            if (!(gm & w->mask))
                continue;
            int64_t per = CHUNK_BYTES / groups[gi].bytes_per_unit;
            w->g_next[gi] = total;
            for (int p = p0; p < p1; p++) {
                int64_t first, n, file[2] = {-1, -1};
                tp_part_range(w->g, groups[gi].t[0], o->parts, p, &first, &n);
                for (int j = 0; j < groups[gi].n; j++) {
                    tp_table t = groups[gi].t[j];
                    if (!(w->mask >> t & 1))
                        continue;
                    file[j] = files++;
                    if (pass == 1) {
                        w->units_total[t] += n;
                        w->sinks[file[j]] = (tp__sink){.t = t, .part = p, .next_chunk = total,
                                                       .fd = -1};
                    }
                }
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
                        c->file[0] = file[0];
                        c->file[1] = file[1];
                        c->left = (file[0] >= 0) + (file[1] >= 0);
                        for (int j = 0; j < 2; j++)
                            if (file[j] >= 0)
                                w->pieces_left[groups[gi].t[j]]++;
                    }
                    total++;
                }
            }
            w->g_end[gi] = total;
        }
        if (pass == 0) {
            w->chunks = pa_calloc((size_t)(total ? total : 1), sizeof(chunk));
            w->sinks = pa_calloc((size_t)(files ? files : 1), sizeof(tp__sink));
            if (!w->chunks || !w->sinks)
                return pa_error(err, PA_ENOMEM, "TPC-H chunk list of %lld", (long long)total);
            w->n_sinks = files;
            total = files = 0;
        }
    }
    w->n_chunks = total;
    return PA_OK;
}

/* Create out_dir and, with parts, a folder per table. */
static int make_dirs(const writer *w, pa_err *err)
{
    const tp_write_opts *o = w->o;
    int rc;
    if (!o->out_dir)
        return PA_OK;
    if ((rc = tp__mkdir_p(o->out_dir, err)) != PA_OK || o->parts <= 1)
        return rc;
    for (int t = 0; t < TP_TABLE__COUNT; t++) {
        if (!(w->mask >> t & 1))
            continue;
        char dir[PATH_MAX];
        int n = snprintf(dir, sizeof dir, "%s/%s", o->out_dir, tp_table_name(t));
        if (n < 0 || (size_t)n >= sizeof dir)
            return pa_error(err, PA_EINVAL, "output path too long under %s", o->out_dir);
        if ((rc = tp__mkdir_p(dir, err)) != PA_OK)
            return rc;
    }
    return PA_OK;
}

static int run_workers(writer *w, int nt, pa_err *err)
{
    worker *ks = pa_calloc((size_t)nt, sizeof(worker));
    pthread_t *th = pa_calloc((size_t)nt, sizeof(pthread_t));
    if (!ks || !th) {
        pa_free(ks);
        pa_free(th);
        return pa_error(err, PA_ENOMEM, "TPC-H writer threads");
    }
    int started = 0;
    for (int i = 0; i < nt; i++) {
        ks[i].w = w;
        pa_err_init(&ks[i].err);
    }
    for (int i = 0; i < nt; i++) {
        if (pthread_create(&th[i], NULL, work, &ks[i]) != 0) {
            pthread_mutex_lock(&w->mu);
            pa_error(&ks[i].err, PA_EINTERNAL, "cannot start TPC-H writer thread");
            fail_locked(w, PA_EINTERNAL, &ks[i].err);
            pthread_mutex_unlock(&w->mu);
            break;
        }
        started++;
    }
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < nt; i++)
        pa_err_close(&ks[i].err);
    pa_free(ks);
    pa_free(th);
    return w->failed ? w->rc : PA_OK;
}

int tp_write(const tp_gen *g, const tp_write_opts *o_in, tp_write_stats *stats, pa_err *err)
{
    tp_write_stats local;
    if (!stats)
        stats = &local;
    memset(stats, 0, sizeof *stats);
    tp_write_opts o = *o_in;
    pq_writer_options po;
    if (o.format != TP_FORMAT_TBL && o.format != TP_FORMAT_PARQUET)
        return pa_error(err, PA_EINVAL, "bad TPC-H output format %d", (int)o.format);
    if (o.format == TP_FORMAT_PARQUET && !o.out_dir)
        return pa_error(err, PA_EINVAL, "Parquet output needs an output folder");
    if (o.format == TP_FORMAT_PARQUET && !o.parquet) {
        tp_parquet_defaults(&po);
        o.parquet = &po;
    }
    if (o.parts < 0 || (o.parts > 1 && o.part >= o.parts) || o.part < -1)
        return pa_error(err, PA_EINVAL, "part %d of %d parts does not exist", o.part, o.parts);
    uint64_t t0 = pa_now_ns();
    writer w;
    memset(&w, 0, sizeof w);
    w.g = g;
    w.o = &o;
    w.mask = o.tables ? o.tables & TP_ALL_TABLES : TP_ALL_TABLES;
    w.err = err;
    w.stats = stats;
    int rc;
    if ((rc = make_dirs(&w, err)) != PA_OK || (rc = plan(&w, err)) != PA_OK)
        goto out;

    int nt = o.threads > 0 ? o.threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (nt > w.n_chunks)
        nt = (int)w.n_chunks;
    if (nt < 1)
        nt = 1;
    w.max_inflight = INFLIGHT_PER_THREAD * nt + 2;
    if (o.format == TP_FORMAT_PARQUET && w.max_inflight < INFLIGHT_PARQUET)
        w.max_inflight = INFLIGHT_PARQUET;
    pthread_mutex_init(&w.mu, NULL);
    pthread_cond_init(&w.space, NULL);
    rc = run_workers(&w, nt, err);
    pthread_cond_destroy(&w.space);
    pthread_mutex_destroy(&w.mu);
    for (int64_t f = 0; f < w.n_sinks; f++)
        tp__sink_abort(&w.sinks[f]);   /* only files a failure left open */
    for (int t = 0; t < TP_TABLE__COUNT; t++)
        if (w.t_start[t])
            stats->seconds[t] = (double)(w.t_end[t] - w.t_start[t]) * 1e-9;
out:
    for (tp__piece *p = w.pending, *nx; p; p = nx) {
        nx = p->next;
        tp__piece_free(p);
    }
    for (int t = 0; t < TP_TABLE__COUNT; t++)
        for (tp__piece *p = w.free[t], *nx; p; p = nx) {
            nx = p->next;
            tp__piece_free(p);
        }
    pa_free(w.chunks);
    pa_free(w.sinks);
    stats->total_seconds = (double)(pa_now_ns() - t0) * 1e-9;
    return rc;
}

/*
 * write_sink.c - the output formats of tp_write: a piece's preparation on
 * its worker (column byte count, .tbl text) and the files, one sink each:
 * .tbl text appended with write(2), or Parquet through one pq_writer per
 * file with the table's column names and engine types (tpch.h), every
 * column REQUIRED (no TPC-H column holds a NULL).
 */
#include "tpch/tpch_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int tp__mkdir_p(const char *path, pa_err *err)
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

void tp_parquet_defaults(pq_writer_options *o)
{
    pq_writer_options_init(o);
}

/* ------------------------------------------------------------------ pieces */

int tp__piece_prepare(const tp_write_opts *o, tp__piece *p, pa_err *err)
{
    const tp_batch *b = &p->b;
    int64_t bytes = 0;
    for (int i = 0; i < b->n_columns; i++) {
        const tp_column *c = &b->cols[i];
        bytes += c->info->type.id == PA_TYPE_VARCHAR
                     ? c->offsets[b->n_rows]
                     : b->n_rows * pa_type_width(c->info->type.id);
    }
    p->in_bytes = bytes;
    p->text_len = 0;
    if (o->format != TP_FORMAT_TBL)
        return PA_OK;
    size_t need = tp_tbl_bound(b, 0, b->n_rows);
    if (need > p->text_cap) {
        char *t = pa_realloc(p->text, need);
        if (!t)
            return pa_error(err, PA_ENOMEM, "TPC-H output buffer of %zu bytes", need);
        p->text = t;
        p->text_cap = need;
    }
    p->text_len = tp_batch_format_tbl(b, 0, b->n_rows, p->text);
    return PA_OK;
}

void tp__piece_free(tp__piece *p)
{
    if (!p)
        return;
    tp_batch_close(&p->b);
    pa_free(p->text);
    pa_free(p);
}

/* ------------------------------------------------------------------- files */

static int sink_path(const tp_write_opts *o, const tp__sink *s, char *out, size_t cap, pa_err *err)
{
    const char *name = tp_table_name(s->t);
    const char *ext = o->format == TP_FORMAT_TBL ? "tbl" : "parquet";
    int n = o->parts > 1 ? snprintf(out, cap, "%s/%s/%s.%d.%s", o->out_dir, name, name, s->part, ext)
                         : snprintf(out, cap, "%s/%s.%s", o->out_dir, name, ext);
    if (n < 0 || (size_t)n >= cap)
        return pa_error(err, PA_EINVAL, "output path too long under %s", o->out_dir);
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

int tp__sink_open(const tp_write_opts *o, tp__sink *s, pa_err *err)
{
    if (!o->out_dir)
        return PA_OK;
    char path[PATH_MAX];
    int rc = sink_path(o, s, path, sizeof path, err);
    if (rc != PA_OK)
        return rc;
    if (o->format == TP_FORMAT_TBL) {
        s->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (s->fd < 0)
            return pa_error(err, PA_EIO, "creating %s: %s", path, strerror(errno));
        return PA_OK;
    }
    const tp_column_info *ci;
    int n = tp_table_columns(s->t, &ci);
    pq_write_column cols[TP_MAX_COLUMNS];
    for (int i = 0; i < n; i++)
        cols[i] = (pq_write_column){.name = ci[i].name, .type = ci[i].type, .nullable = false};
    return pq_writer_create(path, cols, (uint32_t)n, o->parquet, &s->pw, err);
}

int tp__sink_put(const tp_write_opts *o, tp__sink *s, const tp__piece *p, pa_err *err)
{
    if (!o->out_dir)
        return PA_OK;
    if (o->format == TP_FORMAT_TBL) {
        char path[PATH_MAX];
        if (sink_path(o, s, path, sizeof path, NULL) != PA_OK)
            snprintf(path, sizeof path, "%s", tp_table_name(s->t));
        return write_all(s->fd, p->text, p->text_len, path, err);
    }
    const tp_batch *b = &p->b;
    pa_column cols[TP_MAX_COLUMNS];
    for (int i = 0; i < b->n_columns; i++) {
        const tp_column *c = &b->cols[i];
        bool str = c->info->type.id == PA_TYPE_VARCHAR;
        cols[i] = (pa_column){.type = c->info->type,
                              .length = b->n_rows,
                              .data = str ? (void *)c->bytes : c->values,
                              .offsets = str ? c->offsets : NULL,
                              .validity = NULL};
    }
    return pq_writer_write(s->pw, cols, b->n_rows, err);
}

int tp__sink_close(const tp_write_opts *o, tp__sink *s, int64_t *bytes, pa_err *err)
{
    *bytes = 0;
    if (!o->out_dir)
        return PA_OK;
    char path[PATH_MAX];
    int rc = sink_path(o, s, path, sizeof path, err);
    if (o->format == TP_FORMAT_TBL) {
        struct stat st;
        if (rc == PA_OK && fstat(s->fd, &st) == 0)
            *bytes = (int64_t)st.st_size;
        if (close(s->fd) != 0 && rc == PA_OK)
            rc = pa_error(err, PA_EIO, "closing %s: %s", path, strerror(errno));
        s->fd = -1;
        return rc;
    }
    pq_writer *w = s->pw;
    s->pw = NULL;
    if (rc != PA_OK) {
        pq_writer_abort(w);
        return rc;
    }
    if ((rc = pq_writer_close(w, err)) != PA_OK)
        return rc;
    struct stat st;
    if (stat(path, &st) != 0)
        return pa_error(err, PA_EIO, "%s after writing it: %s", path, strerror(errno));
    *bytes = (int64_t)st.st_size;
    return PA_OK;
}

void tp__sink_abort(tp__sink *s)
{
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    pq_writer_abort(s->pw);
    s->pw = NULL;
}

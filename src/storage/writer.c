/*
 * writer.c - the Parquet writer's life cycle: options, schema mapping,
 * output to a unique hidden temporary file next to path, and at close the page index, the footer and the
 * rename. Row buffering is in writer_buffer.c, column chunk encoding in
 * writer_chunk.c, statistics in writer_stats.c; design notes in writer_int.h.
 */
#include "storage/writer_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef PISTA_VERSION
#define PISTA_VERSION "unknown"
#endif

#define OUT_BUFFER (1u << 20)          /* bytes buffered before a write() */
#define MAX_STRING_BYTES 0x7FFFFFFFull /* int32 offsets of the row-group buffer */

void pq_writer_options_init(pq_writer_options *o)
{
    memset(o, 0, sizeof *o);
    o->codec = kn_codec_supported(PQ_CODEC_LZ4_RAW) ? PQ_CODEC_LZ4_RAW : PQ_CODEC_UNCOMPRESSED;
    o->row_group_rows = 1 << 20;
    o->row_group_bytes = 512ull << 20;
    o->page_bytes = 1u << 20;
    o->data_page_version = 1;
    o->dictionary = true;
    o->dictionary_bytes = 1u << 20;
    o->statistics = true;
    o->page_index = true;
    o->stats_truncate = 64;
}

int64_t pq_writer_rows(const pq_writer *w) { return w->total_rows + w->rg_rows; }
uint32_t pq_writer_row_groups(const pq_writer *w) { return w->n_rgs; }

int wr__reserve(pq_buf *b, size_t n, pa_err *err)
{
    if (b->cap >= n)
        return PA_OK;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < n)
        cap *= 2;
    uint8_t *d = pa_realloc(b->data, cap);
    if (!d)
        return pa_error(err, PA_ENOMEM, "parquet writer: cannot grow a buffer to %zu bytes", cap);
    b->data = d;
    b->cap = cap;
    return PA_OK;
}

int wr__arena_dup(pq_writer *w, const void *p, size_t len, pq_bin *out, pa_err *err)
{
    uint8_t *d = pq__arena_alloc(w->arena, len ? len : 1);
    if (!d)
        return pa_error(err, PA_ENOMEM, "parquet writer %s: out of memory for metadata", w->path);
    if (len)
        memcpy(d, p, len);
    out->ptr = d;
    out->len = (uint32_t)len;
    return PA_OK;
}

/* ------------------------------------------------------------------ output */

static int write_fd(pq_writer *w, const uint8_t *p, size_t n, pa_err *err)
{
    while (n > 0) {
        ssize_t k = write(w->fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return pa_error(err, PA_EIO, "writing %s: %s", w->tmp_path,
                            k < 0 ? strerror(errno) : "write returned 0");
        p += k;
        n -= (size_t)k;
    }
    return PA_OK;
}

static int flush_out(pq_writer *w, pa_err *err)
{
    int rc = write_fd(w, w->out.data, w->out.len, err);
    w->out.len = 0;
    return rc;
}

int wr__write(pq_writer *w, const void *p, size_t n, pa_err *err)
{
    int rc;
    if (w->out.len + n > OUT_BUFFER && w->out.len && (rc = flush_out(w, err)) != PA_OK)
        return rc;
    if (n >= OUT_BUFFER) {
        if ((rc = write_fd(w, p, n, err)) != PA_OK)
            return rc;
    } else {
        if ((rc = wr__reserve(&w->out, OUT_BUFFER, err)) != PA_OK)
            return rc;
        memcpy(w->out.data + w->out.len, p, n);
        w->out.len += n;
    }
    w->offset += n;
    return PA_OK;
}

/* ------------------------------------------------------------------ create */

static int map_column(pq_writer *w, const pq_write_column *d, wr_col *c, pa_err *err)
{
    if (!d->name || !d->name[0])
        return pa_error(err, PA_EINVAL, "parquet writer %s: a column has no name", w->path);
    size_t len = strlen(d->name);
    pq_bin name = {0};
    int rc = wr__arena_dup(w, d->name, len + 1, &name, err);
    if (rc != PA_OK)
        return rc;
    c->name = (const char *)name.ptr;
    c->type = d->type;
    c->nullable = d->nullable;
    c->kc.type = d->type;
    c->width = d->type.id < PA_TYPE__COUNT ? pa_type_bytes(d->type) : 0;
    switch (d->type.id) {
    case PA_TYPE_BOOLEAN: c->kc.ptype = KN_PT_BOOLEAN; break;
    case PA_TYPE_INTEGER:
    case PA_TYPE_DATE: c->kc.ptype = KN_PT_INT32; break;
    case PA_TYPE_BIGINT:
    case PA_TYPE_TIMESTAMP:
    case PA_TYPE_TIMESTAMPTZ:
    case PA_TYPE_TIMESTAMP_NS:
    case PA_TYPE_TIME: c->kc.ptype = KN_PT_INT64; break;
    case PA_TYPE_INTERVAL:   /* three little-endian uint32: months, days, milliseconds */
        c->kc.ptype = KN_PT_FIXED_LEN_BYTE_ARRAY;
        c->kc.type_length = 12;
        break;
    case PA_TYPE_DOUBLE: c->kc.ptype = KN_PT_DOUBLE; break;
    case PA_TYPE_REAL: c->kc.ptype = KN_PT_FLOAT; break;
    case PA_TYPE_VARCHAR:
    case PA_TYPE_BYTEA: c->kc.ptype = KN_PT_BYTE_ARRAY; break;
    case PA_TYPE_UUID:   /* 16 bytes, big-endian (the format's UUID) */
        c->kc.ptype = KN_PT_FIXED_LEN_BYTE_ARRAY;
        c->kc.type_length = PA_UUID_BYTES;
        break;
    case PA_TYPE_DECIMAL:
        if (d->type.precision < 1 || d->type.precision > 38 || d->type.scale > d->type.precision)
            return pa_error(err, PA_EINVAL, "parquet writer %s: column %s: DECIMAL(%d,%d) is not "
                            "supported (precision 1..38, scale <= precision)", w->path, d->name,
                            d->type.precision, d->type.scale);
        /* DuckDB's and arrow's layouts: INT32, INT64, then 16-byte FIXED_LEN_BYTE_ARRAY */
        c->kc.ptype = d->type.precision <= 9 ? KN_PT_INT32 : d->type.precision <= 18 ? KN_PT_INT64 : KN_PT_FIXED_LEN_BYTE_ARRAY;
        c->kc.type_length = d->type.precision > 18 ? 16 : 0;
        break;
    default:
        return pa_error(err, PA_EINVAL, "parquet writer %s: column %s: bad type id %d", w->path,
                        d->name, (int)d->type.id);
    }
    c->kc.max_def_level = d->nullable ? 1 : 0;
    return PA_OK;
}

static int check_options(const char *path, const pq_writer_options *o, pa_err *err)
{
    int32_t cd = o->codec;
    if (cd != PQ_CODEC_UNCOMPRESSED && cd != PQ_CODEC_SNAPPY && cd != PQ_CODEC_GZIP &&
        cd != PQ_CODEC_ZSTD && cd != PQ_CODEC_LZ4_RAW && cd != PQ_CODEC_BROTLI)
        return pa_error(err, PA_EUNSUPPORTED, "parquet writer %s: codec %s (%d) cannot be written",
                        path, kn_codec_name(cd), cd);
    if (!kn_codec_supported(cd))
        return pa_error(err, PA_EUNSUPPORTED, "parquet writer %s: this build has no %s library",
                        path, kn_codec_name(cd));
    if (o->row_group_rows < 1 || o->row_group_rows > INT32_MAX)
        return pa_error(err, PA_EINVAL, "parquet writer %s: row_group_rows %lld not in 1..2^31-1",
                        path, (long long)o->row_group_rows);
    if (o->row_group_bytes < 1 || o->page_bytes < 1 || o->page_rows < 0 || o->stats_truncate < 1)
        return pa_error(err, PA_EINVAL, "parquet writer %s: row_group_bytes, page_bytes and "
                        "stats_truncate must be positive, page_rows >= 0", path);
    if (o->data_page_version != 1 && o->data_page_version != 2)
        return pa_error(err, PA_EINVAL, "parquet writer %s: data_page_version %d (1 or 2)", path,
                        o->data_page_version);
    return PA_OK;
}

static int copy_options(pq_writer *w, const pq_writer_options *o, pa_err *err)
{
    w->opt = *o;
    if (w->opt.row_group_bytes > MAX_STRING_BYTES)
        w->opt.row_group_bytes = MAX_STRING_BYTES;
    char dflt[64];
    snprintf(dflt, sizeof dflt, "pista version %s", PISTA_VERSION);
    const char *cb = o->created_by ? o->created_by : dflt;
    pq_bin b = {0};
    int rc = wr__arena_dup(w, cb, strlen(cb) + 1, &b, err);
    if (rc != PA_OK)
        return rc;
    w->opt.created_by = (const char *)b.ptr;
    if (o->n_key_value) {
        pq_key_value *kv = pq__arena_alloc(w->arena, o->n_key_value * sizeof *kv);
        if (!kv)
            return pa_error(err, PA_ENOMEM, "parquet writer %s: out of memory", w->path);
        for (uint32_t i = 0; i < o->n_key_value; i++) {
            if (!o->key_value[i].key)
                return pa_error(err, PA_EINVAL, "parquet writer %s: key-value %u has no key", w->path, i);
            kv[i].key = pq__arena_strndup(w->arena, o->key_value[i].key, strlen(o->key_value[i].key));
            kv[i].value = o->key_value[i].value ? pq__arena_strndup(w->arena, o->key_value[i].value,
                                                                    strlen(o->key_value[i].value))
                                                : NULL;
            if (!kv[i].key || (o->key_value[i].value && !kv[i].value))
                return pa_error(err, PA_ENOMEM, "parquet writer %s: out of memory", w->path);
        }
        w->opt.key_value = kv;
    }
    return PA_OK;
}

static void writer_free(pq_writer *w)
{
    if (w->cols) {
        for (uint32_t i = 0; i < w->n_cols; i++) {
            pa_free(w->cols[i].values);
            pa_free(w->cols[i].offsets);
            pa_free(w->cols[i].bytes);
            pa_free(w->cols[i].validity);
        }
    }
    if (w->index)
        for (size_t i = 0; i < (size_t)w->n_rgs * w->n_cols; i++) {
            pq_buf_free(&w->index[i].column_index);
            pq_buf_free(&w->index[i].offset_index);
        }
    pa_free(w->index);
    pa_free(w->rgs);
    pa_free(w->cols);
    pq_buf_free(&w->out);
    pq_buf_free(&w->page);
    pq_buf_free(&w->zpage);
    pq_buf_free(&w->hdr);
    pa_free(w->sel);
    pa_free(w->indices);
    pa_free(w->entry_rows);
    pa_free(w->dict_scratch);
    pq__arena_destroy(w->arena);
    pa_free(w->path);
    pa_free(w->tmp_path);
    pa_free(w);
}

/* The process's umask, read without changing it for other threads
 * (/proc; 022 when that is not there). */
static mode_t current_umask(void)
{
    mode_t m = 022;
    FILE *f = fopen("/proc/self/status", "r");
    char line[128];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "Umask:", 6)) {
            m = (mode_t)strtol(line + 6, NULL, 8);
            break;
        }
    if (f)
        fclose(f);
    return m;
}

int pq_writer_clean_stale(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *nm = de->d_name, *t = nm[0] == '.' ? strstr(nm, ".tmp.") : NULL;
        if (!t)
            continue;
        char *end;
        long pid = strtol(t + 5, &end, 10);
        if (pid <= 0 || *end != '.' || strlen(end + 1) != 6 || pid == (long)getpid())
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue; /* still running (or not ours to ask): its file may be in use */
        char path[4096];
        struct stat st;
        /* Untouched for 10 minutes too: a writer on another machine sharing
         * the directory may have a pid that means nothing here. */
        if (snprintf(path, sizeof path, "%s/%s", dir, nm) < (int)sizeof path && lstat(path, &st) == 0 &&
            S_ISREG(st.st_mode) && st.st_mtime < time(NULL) - 600 && unlink(path) == 0)
            n++;
    }
    closedir(d);
    return n;
}

void pq_writer_abort(pq_writer *w)
{
    if (!w)
        return;
    if (w->fd >= 0) {
        close(w->fd);
        unlink(w->tmp_path);
    }
    writer_free(w);
}

int pq_writer_create(const char *path, const pq_write_column *cols, uint32_t n,
                     const pq_writer_options *opt, pq_writer **out, pa_err *err)
{
    pq_writer_options dflt;
    if (!opt) {
        pq_writer_options_init(&dflt);
        opt = &dflt;
    }
    if (!path || !*path || !cols || n < 1 || n > 32767)
        return pa_error(err, PA_EINVAL, "parquet writer: need a path and 1..32767 columns (got %u)", n);
    int rc = check_options(path, opt, err);
    if (rc != PA_OK)
        return rc;
    pq_writer *w = pa_calloc(1, sizeof *w);
    if (!w)
        return pa_error(err, PA_ENOMEM, "parquet writer %s: out of memory", path);
    w->fd = -1;
    size_t plen = strlen(path);
    w->path = pa_strdup(path);
    w->tmp_path = pa_malloc(plen + 64);
    w->arena = pq__arena_create();
    w->cols = pa_calloc(n, sizeof *w->cols);
    if (!w->path || !w->tmp_path || !w->arena || !w->cols) {
        rc = pa_error(err, PA_ENOMEM, "parquet writer %s: out of memory", path);
        goto fail;
    }
    {
        const char *slash = strrchr(path, '/');
        size_t dlen = slash ? (size_t)(slash - path) + 1 : 0;
        snprintf(w->tmp_path, plen + 64, "%.*s.%s.tmp.%ld.XXXXXX", (int)dlen, path, path + dlen, (long)getpid());
    }
    w->no_replace = opt->no_replace;
    w->n_cols = n;
    PA_TRY(rc = copy_options(w, opt, err));
    for (uint32_t i = 0; i < n; i++) {
        PA_TRY(rc = map_column(w, &cols[i], &w->cols[i], err));
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(w->cols[j].name, w->cols[i].name) == 0) {
                rc = pa_error(err, PA_EINVAL, "parquet writer %s: duplicate column name %s", path,
                              w->cols[i].name);
                goto fail;
            }
    }
    w->fd = mkstemp(w->tmp_path);
    if (w->fd >= 0) {
        fcntl(w->fd, F_SETFD, FD_CLOEXEC);
        fchmod(w->fd, 0644 & ~current_umask());
    }
    if (w->fd < 0) {
        rc = pa_error(err, PA_EIO, "creating %s: %s", w->tmp_path, strerror(errno));
        goto fail;
    }
    PA_TRY(rc = wr__write(w, "PAR1", 4, err));
    *out = w;
    return PA_OK;
fail:
    pq_writer_abort(w);
    return rc;
}

/* ------------------------------------------------------------------- close */

static void fill_schema(pq_writer *w, pq_schema_element *s)
{
    memset(s, 0, (w->n_cols + 1) * sizeof *s);
    s[0].name = "schema";
    s[0].num_children = (int32_t)w->n_cols;
    s[0].has_num_children = true;
    for (uint32_t i = 0; i < w->n_cols; i++) {
        const wr_col *c = &w->cols[i];
        pq_schema_element *e = &s[i + 1];
        e->name = c->name;
        e->type = c->kc.ptype;
        e->repetition = c->nullable ? PQ_REP_OPTIONAL : PQ_REP_REQUIRED;
        e->has_type = e->has_repetition = true;
        if (c->kc.ptype == KN_PT_FIXED_LEN_BYTE_ARRAY) {
            e->type_length = c->kc.type_length;
            e->has_type_length = true;
        }
        switch (c->type.id) {
        case PA_TYPE_INTEGER:
            e->converted_type = PQ_CT_INT_32;
            e->logical = (pq_logical_type){.kind = PQ_LT_INTEGER, .bit_width = 32, .is_signed = true};
            break;
        case PA_TYPE_DATE:
            e->converted_type = PQ_CT_DATE;
            e->logical.kind = PQ_LT_DATE;
            break;
        case PA_TYPE_VARCHAR:
            e->converted_type = PQ_CT_UTF8;
            e->logical.kind = PQ_LT_STRING;
            break;
        case PA_TYPE_BYTEA: continue;   /* plain bytes: no annotation */
        case PA_TYPE_UUID:
            e->logical.kind = PQ_LT_UUID;
            continue;
        case PA_TYPE_DECIMAL:
            e->converted_type = PQ_CT_DECIMAL;
            e->scale = c->type.scale;
            e->precision = c->type.precision;
            e->has_scale = e->has_precision = true;
            e->logical = (pq_logical_type){.kind = PQ_LT_DECIMAL, .scale = c->type.scale,
                                           .precision = c->type.precision};
            break;
        /* The ConvertedTypes TIMESTAMP_MICROS and TIME_MICROS mean
         * UTC-adjusted values: only TIMESTAMPTZ has one. */
        case PA_TYPE_TIMESTAMP:
        case PA_TYPE_TIMESTAMP_NS:
            e->logical = (pq_logical_type){.kind = PQ_LT_TIMESTAMP, .is_adjusted_to_utc = false,
                                           .unit = c->type.id == PA_TYPE_TIMESTAMP ? PQ_TU_MICROS : PQ_TU_NANOS};
            continue;
        case PA_TYPE_TIMESTAMPTZ:
            e->converted_type = PQ_CT_TIMESTAMP_MICROS;
            e->logical = (pq_logical_type){.kind = PQ_LT_TIMESTAMP, .is_adjusted_to_utc = true, .unit = PQ_TU_MICROS};
            break;
        case PA_TYPE_TIME:
            e->logical = (pq_logical_type){.kind = PQ_LT_TIME, .is_adjusted_to_utc = false, .unit = PQ_TU_MICROS};
            continue;
        case PA_TYPE_INTERVAL:   /* no LogicalType has it */
            e->converted_type = PQ_CT_INTERVAL;
            break;
        default: continue;
        }
        e->has_converted_type = true;
    }
}

/* Write every ColumnIndex, then every OffsetIndex, and point the chunks at them. */
static int write_page_index(pq_writer *w, pa_err *err)
{
    int rc;
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t g = 0; g < w->n_rgs; g++)
            for (uint32_t i = 0; i < w->n_cols; i++) {
                wr_index *x = &w->index[(size_t)g * w->n_cols + i];
                pq_buf *b = pass == 0 ? &x->column_index : &x->offset_index;
                if (!b->len)
                    continue;
                pq_column_chunk *cc = &w->rgs[g].columns[i];
                if (pass == 0) {
                    cc->column_index_offset = (int64_t)w->offset;
                    cc->column_index_length = (int32_t)b->len;
                    cc->has_column_index_offset = cc->has_column_index_length = true;
                } else {
                    cc->offset_index_offset = (int64_t)w->offset;
                    cc->offset_index_length = (int32_t)b->len;
                    cc->has_offset_index_offset = cc->has_offset_index_length = true;
                }
                if ((rc = wr__write(w, b->data, b->len, err)) != PA_OK)
                    return rc;
            }
    return PA_OK;
}

static int write_footer(pq_writer *w, pa_err *err)
{
    pq_file_meta m;
    memset(&m, 0, sizeof m);
    int rc = PA_ENOMEM;
    pq_buf buf = {0};
    m.schema = pa_malloc((w->n_cols + 1) * sizeof *m.schema);
    m.column_orders = pa_malloc(w->n_cols * sizeof *m.column_orders);
    if (!m.schema || !m.column_orders) {
        pa_error(err, PA_ENOMEM, "parquet writer %s: out of memory for the footer", w->path);
        goto done;
    }
    fill_schema(w, m.schema);
    m.version = w->opt.data_page_version == 2 ? 2 : 1;
    m.n_schema = w->n_cols + 1;
    m.num_rows = w->total_rows;
    m.row_groups = w->rgs;
    m.n_row_groups = w->n_rgs;
    m.key_value_metadata = (pq_key_value *)w->opt.key_value;
    m.n_key_value_metadata = w->opt.n_key_value;
    m.created_by = w->opt.created_by;
    for (uint32_t i = 0; i < w->n_cols; i++)
        m.column_orders[i] = 1;   /* TYPE_ORDER: min_value/max_value follow the type order */
    m.n_column_orders = w->n_cols;
    if ((rc = pq_file_meta_encode(&m, &buf, err)) != PA_OK)
        goto done;
    uint8_t tail[8];
    uint32_t len = (uint32_t)buf.len;
    memcpy(tail, &len, 4);
    memcpy(tail + 4, "PAR1", 4);
    if ((rc = wr__write(w, buf.data, buf.len, err)) == PA_OK)
        rc = wr__write(w, tail, 8, err);
done:
    pq_buf_free(&buf);
    pa_free(m.schema);
    pa_free(m.column_orders);
    return rc;
}

int pq_writer_close(pq_writer *w, pa_err *err)
{
    if (!w)
        return pa_error(err, PA_EINVAL, "parquet writer: close of NULL");
    int rc = w->status;
    if (rc != PA_OK) {
        pa_error(err, rc, "parquet writer %s: failed earlier (%s), nothing written", w->path,
                 pa_status_name(rc));
        goto fail;
    }
    if (w->rg_rows > 0)
        PA_TRY(rc = wr__flush_row_group(w, err));
    PA_TRY(rc = write_page_index(w, err));
    PA_TRY(rc = write_footer(w, err));
    PA_TRY(rc = flush_out(w, err));
    int fd = w->fd;
    w->fd = -1;
    if (close(fd) != 0) {
        rc = pa_error(err, PA_EIO, "closing %s: %s", w->tmp_path, strerror(errno));
        unlink(w->tmp_path);
        writer_free(w);
        return rc;
    }
    if (w->no_replace) {
        /* link() never replaces: it fails when path exists, atomically. */
        if (link(w->tmp_path, w->path) != 0) {
            int e = errno;
            rc = e == EEXIST ? pa_error(err, PA_EINVAL, "%s already exists (not replaced)", w->path)
                             : pa_error(err, PA_EIO, "linking %s to %s: %s", w->tmp_path, w->path, strerror(e));
            unlink(w->tmp_path);
            writer_free(w);
            return rc;
        }
        unlink(w->tmp_path);
    } else if (rename(w->tmp_path, w->path) != 0) {
        rc = pa_error(err, PA_EIO, "renaming %s to %s: %s", w->tmp_path, w->path, strerror(errno));
        unlink(w->tmp_path);
        writer_free(w);
        return rc;
    }
    writer_free(w);
    return PA_OK;
fail:
    pq_writer_abort(w);
    return rc;
}

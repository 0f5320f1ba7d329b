/*
 * catalog.c - tables (Parquet files, directories of parts, globs) and
 * views of a session, with the footer statistics the optimiser estimates
 * from.
 */
#include "sql/sql_int.h"

#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void sq_table_free(sq_table *t)
{
    if (!t)
        return;
    pq_paths_free(t->paths, (uint32_t)t->n_paths);
    for (int i = 0; i < t->n_cols; i++) {
        pa_free(t->col_names[i]);
        if (t->col_unsupported)
            pa_free(t->col_unsupported[i]);
    }
    pa_free(t->col_names);
    pa_free(t->col_unsupported);
    pa_free(t->col_types);
    pa_free(t->col_nullable);
    pa_free(t->stats);
    pa_free(t->name);
    pa_free(t->source);
    pa_free(t);
}

/* Numbers and dates of a statistics value, as a double. */
static bool stat_number(const pq_column_desc *d, pq_bin v, double *out)
{
    if (!v.ptr)
        return false;
    char buf[128];
    pq_stat_format(d, v, buf, sizeof buf);
    switch (d->type.id) {
    case PA_TYPE_INTEGER:
    case PA_TYPE_BIGINT:
    case PA_TYPE_DECIMAL:
    case PA_TYPE_DOUBLE: {
        char *end;
        *out = strtod(buf, &end);
        return end != buf;
    }
    case PA_TYPE_DATE: {
        int32_t days;
        if (pa_date_parse(buf, &days, NULL) != PA_OK)
            return false;
        *out = days;
        return true;
    }
    default: return false;
    }
}

/* Fold the row groups' min/max of every column into t->stats: a range
 * only when every row group has one. */
static void load_stats(sq_table *t, const pq_file_meta *m, const pq_column_desc *d)
{
    for (int c = 0; c < t->n_cols; c++) {
        sq_colstat *s = &t->stats[c];
        if (d[c].unsupported[0])
            continue;
        for (uint32_t rg = 0; rg < m->n_row_groups; rg++) {
            const pq_row_group *g = &m->row_groups[rg];
            if (d[c].leaf_index >= g->n_columns)
                continue;
            const pq_column_meta *cm = &g->columns[d[c].leaf_index].meta_data;
            const pq_statistics *st = &cm->statistics;
            pq_bin mn = st->min_value.ptr ? st->min_value : st->min;
            pq_bin mx = st->max_value.ptr ? st->max_value : st->max;
            if (t->col_types[c].id == PA_TYPE_VARCHAR && s->dict_ndv >= 0) {
                /* Distinct strings of a dictionary-encoded chunk: about the
                 * dictionary's (compressed) bytes over the average entry
                 * (4 length bytes + the mean of the min and max lengths),
                 * times 2.5 for compression. A guess, but one that tells
                 * a status flag from a name. */
                int64_t bytes = cm->data_page_offset - cm->dictionary_page_offset;
                if (!cm->has_dictionary_page_offset || bytes <= 0 || !mn.ptr || !mx.ptr)
                    s->dict_ndv = -1;
                else {
                    double e = 2.5 * (double)bytes / (4 + (double)(mn.len + mx.len) / 2);
                    if (e > s->dict_ndv)
                        s->dict_ndv = e;
                }
            }
            double lo, hi;
            bool ok = stat_number(&d[c], mn, &lo) && stat_number(&d[c], mx, &hi);
            if (!ok)
                s->has_range = false;
            else if (!s->seen) {
                s->has_range = true;
                s->lo = lo;
                s->hi = hi;
            } else if (s->has_range) {
                if (lo < s->lo)
                    s->lo = lo;
                if (hi > s->hi)
                    s->hi = hi;
            }
            s->seen = true;
        }
    }
}

int sq_table_load(const char *name, const char *path, sq_table **out, pa_err *err)
{
    return sq_table_load_paths(name, &path, 1, path, out, err);
}

int sq_table_load_paths(const char *name, const char *const *paths, int n, const char *source, sq_table **out,
                        pa_err *err)
{
    sq_table *t = pa_calloc(1, sizeof *t);
    if (!t || !(t->name = pa_strdup(name)) || !(t->source = pa_strdup(source))) {
        sq_table_free(t);
        return pa_error(err, PA_ENOMEM, "table %s", name);
    }
    uint32_t n_paths = 0;
    int rc = pq_paths_expand(paths, (size_t)n, &t->paths, &n_paths, err);
    t->n_paths = (int)n_paths;
    for (int f = 0; rc == PA_OK && f < t->n_paths; f++) {
        const pq_file_meta *m = NULL;
        pq_column_desc *d = NULL;
        uint32_t nd = 0;
        rc = pq_meta_get(t->paths[f], &m, err);
        if (rc == PA_OK)
            rc = pq_schema_map(m, &d, &nd, err);
        if (rc == PA_OK && f == 0) {
            t->n_cols = (int)nd;
            t->col_names = pa_calloc((size_t)t->n_cols + 1, sizeof *t->col_names);
            t->col_types = pa_calloc((size_t)t->n_cols + 1, sizeof *t->col_types);
            t->col_nullable = pa_calloc((size_t)t->n_cols + 1, sizeof *t->col_nullable);
            t->col_unsupported = pa_calloc((size_t)t->n_cols + 1, sizeof *t->col_unsupported);
            t->stats = pa_calloc((size_t)t->n_cols + 1, sizeof *t->stats);
            if (!t->col_names || !t->col_types || !t->col_nullable || !t->col_unsupported || !t->stats)
                rc = pa_error(err, PA_ENOMEM, "table %s", name);
            for (int c = 0; rc == PA_OK && c < t->n_cols; c++) {
                t->col_types[c] = d[c].type;
                t->col_nullable[c] = d[c].nullable;
                if (!(t->col_names[c] = pa_strdup(d[c].name)) ||
                    (d[c].unsupported[0] && !(t->col_unsupported[c] = pa_strdup(d[c].unsupported))))
                    rc = pa_error(err, PA_ENOMEM, "table %s", name);
                for (char *p = t->col_names[c]; p && *p; p++)
                    *p = (char)tolower((unsigned char)*p);
            }
        } else if (rc == PA_OK && (int)nd != t->n_cols) {
            rc = pa_error(err, PA_EINVAL, "%s: %u columns, but %s has %d", t->paths[f], nd, t->paths[0], t->n_cols);
        }
        if (rc == PA_OK) {
            t->rows += m->num_rows;
            load_stats(t, m, d);
        }
        pa_free(d);
        if (m)
            pq_file_meta_release(m);
    }
    if (rc != PA_OK) {
        sq_table_free(t);
        return rc;
    }
    for (int c = 0; c < t->n_cols; c++) {
        sq_colstat *s = &t->stats[c];
        double ndv = (double)t->rows;
        if (s->has_range && (t->col_types[c].id == PA_TYPE_INTEGER || t->col_types[c].id == PA_TYPE_BIGINT ||
                             t->col_types[c].id == PA_TYPE_DATE)) {
            double span = s->hi - s->lo + 1;
            if (span < ndv)
                ndv = span;
        }
        if (s->dict_ndv > 0 && s->dict_ndv < ndv)
            ndv = s->dict_ndv;
        s->ndv = ndv > 1 ? ndv : 1;
    }
    *out = t;
    return PA_OK;
}

static int find_index(const sql_session *s, const char *name, bool *found)
{
    int lo = 0, hi = s->n_tables;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        int c = strcmp(s->tables[mid]->name, name);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

sq_table *sq_catalog_find(sql_session *s, const char *name)
{
    bool found;
    int i = find_index(s, name, &found);
    return found ? s->tables[i] : NULL;
}

int sq_catalog_put(sql_session *s, sq_table *t, pa_err *err)
{
    bool found;
    int i = find_index(s, t->name, &found);
    if (found) {
        sq_table_free(s->tables[i]);
        s->tables[i] = t;
        return PA_OK;
    }
    sq_table **v = pa_realloc(s->tables, (size_t)(s->n_tables + 1) * sizeof *v);
    if (!v)
        return pa_error(err, PA_ENOMEM, "catalog");
    s->tables = v;
    memmove(v + i + 1, v + i, (size_t)(s->n_tables - i) * sizeof *v);
    v[i] = t;
    s->n_tables++;
    return PA_OK;
}

int sq_catalog_adhoc(sql_session *s, const char *const *paths, int n, sq_table **out, pa_err *err)
{
    /* The cache key: the paths, one per line. */
    size_t len = 1;
    for (int i = 0; i < n; i++)
        len += strlen(paths[i]) + 1;
    char *key = pa_malloc(len);
    if (!key)
        return pa_error(err, PA_ENOMEM, "catalog");
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        size_t l = strlen(paths[i]);
        memcpy(key + at, paths[i], l);
        at += l;
        key[at++] = i + 1 < n ? '\n' : 0;
    }
    key[at] = 0;
    for (int i = 0; i < s->n_adhoc; i++)
        if (strcmp(s->adhoc[i]->source, key) == 0) {
            *out = s->adhoc[i];
            pa_free(key);
            return PA_OK;
        }
    sq_table *t;
    int rc = sq_table_load_paths("read_parquet", paths, n, key, &t, err);
    pa_free(key);
    if (rc != PA_OK)
        return rc;
    sq_table **v = pa_realloc(s->adhoc, (size_t)(s->n_adhoc + 1) * sizeof *v);
    if (!v) {
        sq_table_free(t);
        return pa_error(err, PA_ENOMEM, "catalog");
    }
    s->adhoc = v;
    v[s->n_adhoc++] = t;
    *out = t;
    return PA_OK;
}

static char *lower_dup(const char *s, size_t n)
{
    char *d = pa_malloc(n + 1);
    if (!d)
        return NULL;
    for (size_t i = 0; i < n; i++)
        d[i] = (char)tolower((unsigned char)s[i]);
    d[n] = 0;
    return d;
}

int sql_register_table(sql_session *s, const char *name, const char *path, pa_err *err)
{
    char *lname = lower_dup(name, strlen(name));
    if (!lname)
        return pa_error(err, PA_ENOMEM, "table %s", name);
    sq_table *t;
    int rc = sq_table_load(lname, path, &t, err);
    pa_free(lname);
    if (rc == PA_OK && (rc = sq_catalog_put(s, t, err)) != PA_OK)
        sq_table_free(t);
    return rc;
}

int sql_register_dir(sql_session *s, const char *dir, pa_err *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return pa_error(err, PA_EIO, "cannot read data directory '%s'", dir);
    int rc = PA_OK;
    struct dirent *de;
    while (rc == PA_OK && (de = readdir(d))) {
        const char *nm = de->d_name;
        if (nm[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, nm);
        struct stat st;
        if (stat(path, &st) != 0)
            continue;
        size_t len = strlen(nm);
        if (S_ISREG(st.st_mode) && len > 8 && strcmp(nm + len - 8, ".parquet") == 0) {
            char *name = lower_dup(nm, len - 8);
            rc = name ? sql_register_table(s, name, path, err) : pa_error(err, PA_ENOMEM, "catalog");
            pa_free(name);
        } else if (S_ISDIR(st.st_mode)) {
            /* A directory of parts; one without *.parquet is not a table. */
            const char *one = path;
            char **files;
            uint32_t n;
            pa_err quiet;
            pa_err_init(&quiet);
            if (pq_paths_expand(&one, 1, &files, &n, &quiet) == PA_OK) {
                pq_paths_free(files, n);
                rc = sql_register_table(s, nm, path, err);
            }
            pa_err_close(&quiet);
        }
    }
    closedir(d);
    return rc;
}

int sql_table_count(const sql_session *s) { return s->n_tables; }

static void fill_info(const sq_table *t, sql_table_info *out)
{
    out->name = t->name;
    out->is_view = t->is_view;
    out->source = t->source;
    out->n_columns = t->n_cols;
    out->column_names = (const char *const *)t->col_names;
    out->column_types = t->col_types;
    out->rows = t->is_view ? -1 : t->rows;
}

int sql_table_get(sql_session *s, int i, sql_table_info *out, pa_err *err)
{
    if (i < 0 || i >= s->n_tables)
        return pa_error(err, PA_ENOTFOUND, "no table number %d", i);
    fill_info(s->tables[i], out);
    return PA_OK;
}

int sql_table_find(sql_session *s, const char *name, sql_table_info *out, pa_err *err)
{
    char *lname = lower_dup(name, strlen(name));
    sq_table *t = lname ? sq_catalog_find(s, lname) : NULL;
    pa_free(lname);
    if (!t)
        return pa_error(err, PA_ENOTFOUND, "no table or view named '%s'", name);
    fill_info(t, out);
    return PA_OK;
}

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
    pa_free(t->col_mixed);
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
    case PA_TYPE_DOUBLE:
    case PA_TYPE_REAL: {
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
static void load_stats(sq_table *t, int n_cols, const pq_file_meta *m, const pq_column_desc *d)
{
    for (int c = 0; c < n_cols; c++) {
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

/* A folder holding no *.parquet of its own but key=value folders: its
 * hive partitions: the glob DIR/(two stars)/(star).parquet into buf. */
static bool hive_folder(const char *dir, char *buf, size_t cap)
{
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return false;
    DIR *d = opendir(dir);
    if (!d)
        return false;
    bool parts = false, files = false;
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *nm = de->d_name;
        size_t len = strlen(nm);
        if (nm[0] == '.')
            continue;
        if (len > 8 && !strcmp(nm + len - 8, ".parquet"))
            files = true;
        else if (strchr(nm, '=') && nm[0] != '=')
            parts = true;
    }
    closedir(d);
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    return parts && !files && (size_t)snprintf(buf, cap, "%.*s/**/*.parquet", (int)n, dir) < cap;
}

int sq_table_load(const char *name, const char *path, sq_table **out, pa_err *err)
{
    char glob[4200];
    if (hive_folder(path, glob, sizeof glob)) {
        const char *g = glob;
        return sq_table_load_paths(name, &g, 1, path, out, err);
    }
    return sq_table_load_paths(name, &path, 1, path, out, err);
}

int sq_table_load_paths(const char *name, const char *const *paths, int n, const char *source, sq_table **out,
                        pa_err *err)
{
    return sq_table_load_layout(name, paths, n, source, NULL, out, err);
}

/* Room for one more column in t (arrays of cap entries). */
static int grow_cols(sq_table *t, int *cap)
{
    if (t->n_cols < *cap)
        return PA_OK;
    int nc = *cap ? *cap * 2 : 16;
    char **names = pa_realloc(t->col_names, (size_t)nc * sizeof *names);
    if (names)
        t->col_names = names;
    pa_type *types = pa_realloc(t->col_types, (size_t)nc * sizeof *types);
    if (types)
        t->col_types = types;
    bool *nul = pa_realloc(t->col_nullable, (size_t)nc * sizeof *nul);
    if (nul)
        t->col_nullable = nul;
    char **uns = pa_realloc(t->col_unsupported, (size_t)nc * sizeof *uns);
    if (uns)
        t->col_unsupported = uns;
    sq_colstat *st = pa_realloc(t->stats, (size_t)nc * sizeof *st);
    if (st)
        t->stats = st;
    bool *mix = pa_realloc(t->col_mixed, (size_t)nc * sizeof *mix);
    if (mix)
        t->col_mixed = mix;
    if (!names || !types || !nul || !uns || !st || !mix)
        return PA_ENOMEM;
    *cap = nc;
    return PA_OK;
}

static int add_col(sq_table *t, int *cap, const char *name, pa_type type, bool nullable, const char *unsupported)
{
    if (grow_cols(t, cap) != PA_OK)
        return PA_ENOMEM;
    int c = t->n_cols;
    t->col_names[c] = pa_strdup(name);
    t->col_types[c] = type;
    t->col_nullable[c] = nullable;
    t->col_unsupported[c] = unsupported && unsupported[0] ? pa_strdup(unsupported) : NULL;
    t->col_mixed[c] = false;
    memset(&t->stats[c], 0, sizeof t->stats[c]);
    t->n_cols++;
    if (!t->col_names[c] || (unsupported && unsupported[0] && !t->col_unsupported[c]))
        return PA_ENOMEM;
    for (char *p = t->col_names[c]; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return PA_OK;
}

static int find_col(const sq_table *t, int n, const char *name)
{
    for (int c = 0; c < n; c++)
        if (!strcasecmp(t->col_names[c], name))
            return c;
    return -1;
}

static int cmp_cstr(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    return !x ? (y ? -1 : 0) : !y ? 1 : strcmp(x, y);
}

/* Distinct non-NULL values of partition key k. */
static double hive_ndv(const pq_hive *h, int k)
{
    const char **v = pa_malloc(((size_t)h->n_files + 1) * sizeof *v);
    if (!v)
        return -1;
    for (uint32_t f = 0; f < h->n_files; f++)
        v[f] = h->values[(size_t)f * (size_t)h->n_keys + (size_t)k];
    qsort(v, h->n_files, sizeof *v, cmp_cstr);
    double n = 0;
    for (uint32_t f = 0; f < h->n_files; f++)
        if (v[f] && (f == 0 || !v[f - 1] || strcmp(v[f], v[f - 1])))
            n++;
    pa_free(v);
    return n;
}

/* Columns of file f mapped onto t's: fc[c] (c < n_file_cols) is the file's
 * column, unsupported "absent" when it has none. New columns are added
 * (union_by_name) and types widened; anything else that does not fit is
 * an error naming both files. */
static int merge_file(sq_table *t, int *cap, int *n_file_cols, const sq_layout *lay, const pq_hive *h, uint32_t f,
                      const pq_column_desc *d, uint32_t nd, pq_column_desc **fc, pa_err *err)
{
    const char *path = t->paths[f];
    for (uint32_t i = 0; i < nd; i++) {
        if (pq_hive_key(h, d[i].name) >= 0)
            continue;   /* the partition value wins */
        int c = find_col(t, *n_file_cols, d[i].name);
        if (c < 0) {
            if (f > 0 && !lay->union_by_name)
                continue;   /* as DuckDB: the first file's columns */
            c = *n_file_cols;
            if (add_col(t, cap, d[i].name, d[i].type, f > 0 || d[i].nullable, d[i].unsupported) != PA_OK)
                return pa_error(err, PA_ENOMEM, "table %s", t->name);
            (*n_file_cols)++;
            continue;
        }
        if (d[i].nullable)
            t->col_nullable[c] = true;
        if (t->col_unsupported[c] || d[i].unsupported[0]) {
            if (!t->col_unsupported[c] && !(t->col_unsupported[c] = pa_strdup(d[i].unsupported)))
                return pa_error(err, PA_ENOMEM, "table %s", t->name);
            continue;
        }
        pa_type w;
        char why[128], t0[32], t1[32];
        pa_type old = t->col_types[c];
        if (!pq_type_widen(old, d[i].type, &w, why, sizeof why))
            return pa_error(err, PA_EINVAL, "column %s is %s in %s but %s in %s%s%s", t->col_names[c],
                            pa_type_format(old, t0, sizeof t0), t->paths[0], pa_type_format(d[i].type, t1, sizeof t1),
                            path, why[0] ? ": " : ": no type holds both", why);
        if (w.id != old.id || w.precision != old.precision || w.scale != old.scale ||
            w.id != d[i].type.id || w.precision != d[i].type.precision || w.scale != d[i].type.scale)
            t->col_mixed[c] = true;
        t->col_types[c] = w;
    }
    pq_column_desc *m = pa_calloc((size_t)*n_file_cols + 1, sizeof *m);
    if (!m)
        return pa_error(err, PA_ENOMEM, "table %s", t->name);
    for (int c = 0; c < *n_file_cols; c++) {
        int i = -1;
        for (uint32_t k = 0; k < nd && i < 0; k++)
            if (!strcasecmp(d[k].name, t->col_names[c]))
                i = (int)k;
        if (i >= 0) {
            m[c] = d[i];
            continue;
        }
        if (!lay->union_by_name) {
            pa_free(m);
            return pa_error(err, PA_EINVAL,
                            "column %s is in %s but not in %s (union_by_name => true reads it as NULL there)",
                            t->col_names[c], t->paths[0], path);
        }
        t->col_nullable[c] = true;
        snprintf(m[c].unsupported, sizeof m[c].unsupported, "absent");
    }
    *fc = m;
    return PA_OK;
}

int sq_table_load_layout(const char *name, const char *const *paths, int n, const char *source,
                         const sq_layout *lay_in, sq_table **out, pa_err *err)
{
    sq_layout lay = lay_in ? *lay_in : (sq_layout){PQ_HIVE_AUTO, false};
    sq_table *t = pa_calloc(1, sizeof *t);
    if (!t || !(t->name = pa_strdup(name)) || !(t->source = pa_strdup(source))) {
        sq_table_free(t);
        return pa_error(err, PA_ENOMEM, "table %s", name);
    }
    t->hive = lay.hive;
    t->union_by_name = lay.union_by_name;
    uint32_t n_paths = 0;
    pq_hive *h = NULL;
    int cap = 0, n_file_cols = 0;
    int rc = pq_paths_expand(paths, (size_t)n, &t->paths, &n_paths, err);
    t->n_paths = (int)n_paths;
    if (rc == PA_OK)
        rc = pq_hive_detect((const char *const *)t->paths, n_paths, lay.hive, &h, err);
    if (rc == PA_OK && grow_cols(t, &cap) != PA_OK)
        rc = pa_error(err, PA_ENOMEM, "table %s", name);
    for (int f = 0; rc == PA_OK && f < t->n_paths; f++) {
        const pq_file_meta *m = NULL;
        pq_column_desc *d = NULL, *fc = NULL;
        uint32_t nd = 0;
        rc = pq_meta_get(t->paths[f], &m, err);
        if (rc == PA_OK)
            rc = pq_schema_map(m, &d, &nd, err);
        if (rc == PA_OK)
            rc = merge_file(t, &cap, &n_file_cols, &lay, h, (uint32_t)f, d, nd, &fc, err);
        if (rc == PA_OK) {
            t->rows += m->num_rows;
            load_stats(t, n_file_cols, m, fc);
        }
        pa_free(fc);
        pa_free(d);
        if (m)
            pq_file_meta_release(m);
    }
    for (int k = 0; rc == PA_OK && h && k < h->n_keys; k++) {
        int c = find_col(t, t->n_cols, h->keys[k]);
        if (c >= 0)
            continue;
        if (add_col(t, &cap, h->keys[k], h->types[k], true, NULL) != PA_OK)
            rc = pa_error(err, PA_ENOMEM, "table %s", name);
        else
            t->stats[t->n_cols - 1].dict_ndv = hive_ndv(h, k);
    }
    pq_hive_free(h);
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

int sq_catalog_adhoc(sql_session *s, const char *const *paths, int n, const sq_layout *lay, sq_table **out,
                     pa_err *err)
{
    /* The cache key: the paths, one per line (then the layout). */
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
    sq_layout dflt = {PQ_HIVE_AUTO, false};
    if (!lay)
        lay = &dflt;
    for (int i = 0; i < s->n_adhoc; i++)
        if (strcmp(s->adhoc[i]->source, key) == 0 && s->adhoc[i]->hive == lay->hive &&
            s->adhoc[i]->union_by_name == lay->union_by_name) {
            *out = s->adhoc[i];
            pa_free(key);
            return PA_OK;
        }
    sq_table *t;
    char glob[4200];
    const char *g = glob;
    int rc = n == 1 && hive_folder(paths[0], glob, sizeof glob)   /* a folder of partition folders */
                 ? sq_table_load_layout("read_parquet", &g, 1, key, lay, &t, err)
                 : sq_table_load_layout("read_parquet", paths, n, key, lay, &t, err);
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

/* A table of DIR that cannot be loaded: kept as a warning for the caller. */
static int warn(sql_session *s, const char *table, const pa_err *why, pa_err *err)
{
    char **v = pa_realloc(s->warnings, (size_t)(s->n_warnings + 1) * sizeof *v);
    if (!v)
        return pa_error(err, PA_ENOMEM, "catalog");
    s->warnings = v;
    size_t len = strlen(table) + strlen(why->msg) + 32;
    if (!(v[s->n_warnings] = pa_malloc(len)))
        return pa_error(err, PA_ENOMEM, "catalog");
    snprintf(v[s->n_warnings++], len, "table %s skipped: %s", table, why->msg);
    return PA_OK;
}

int sql_session_warnings(const sql_session *s, const char *const **out)
{
    *out = (const char *const *)s->warnings;
    return s->n_warnings;
}

void sql_session_clear_warnings(sql_session *s)
{
    for (int i = 0; i < s->n_warnings; i++)
        pa_free(s->warnings[i]);
    pa_free(s->warnings);
    s->warnings = NULL;
    s->n_warnings = 0;
}

/* Register one table of DIR; a failure other than memory is a warning. */
static int register_one(sql_session *s, const char *name, const char *path, pa_err *err)
{
    pa_err e2;
    pa_err_init(&e2);
    int rc = sql_register_table(s, name, path, &e2);
    if (rc == PA_ENOMEM)
        pa_err_propagate(err, &e2);
    else if (rc != PA_OK)
        rc = warn(s, name, &e2, err);
    pa_err_close(&e2);
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
            rc = name ? register_one(s, name, path, err) : pa_error(err, PA_ENOMEM, "catalog");
            pa_free(name);
        } else if (S_ISDIR(st.st_mode)) {
            /* A directory of parts, or of hive partition folders; one
             * without either is not a table. */
            const char *one = path;
            char **files;
            uint32_t n;
            char glob[4200];
            pa_err quiet;
            pa_err_init(&quiet);
            if (hive_folder(path, glob, sizeof glob)) {
                rc = register_one(s, nm, path, err);
            } else if (pq_paths_expand(&one, 1, &files, &n, &quiet) == PA_OK) {
                pq_paths_free(files, n);
                rc = register_one(s, nm, path, err);
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

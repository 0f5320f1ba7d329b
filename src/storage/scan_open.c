/*
 * scan_open.c - opening and closing a scan: paths to files, hive partitions
 * (files pruned by predicates on them), footers from the metadata cache,
 * columns mapped per file (types widened across files, NULL where
 * union_by_name finds none, partition values),
 * predicates bound, row groups pruned by statistics; then the scan thread
 * (scan_run.c) starts. Also the accessors, pq_scan_next and the stats.
 */
#include "storage/scan_int.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void *scan__thread_main(void *arg);   /* scan_run.c */

void pq_scan_options_init(pq_scan_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->filter_rows = true;
    opt->use_page_index = true;
}

/* ------------------------------------------------------------- files */

static int add_file(pq_scan *s, uint32_t *cap, const char *path, pa_err *err)
{
    if (s->n_files == *cap) {
        uint32_t nc = *cap ? *cap * 2 : 8;
        scan_file *nf = pa_realloc(s->files, nc * sizeof *nf);
        if (!nf)
            return pa_error(err, PA_ENOMEM, "out of memory listing scan files");
        s->files = nf;
        *cap = nc;
    }
    scan_file *f = &s->files[s->n_files];
    memset(f, 0, sizeof *f);
    if (!(f->path = pa_strdup(path)))
        return pa_error(err, PA_ENOMEM, "out of memory listing scan files");
    s->n_files++;
    return PA_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A growing list of owned path strings. */
typedef struct path_list {
    char **v;
    uint32_t n, cap;
} path_list;

static int list_add(path_list *l, const char *path, pa_err *err)
{
    if (l->n == l->cap) {
        uint32_t nc = l->cap ? l->cap * 2 : 8;
        char **nv = pa_realloc(l->v, nc * sizeof *nv);
        if (!nv)
            return pa_error(err, PA_ENOMEM, "out of memory listing scan files");
        l->v = nv;
        l->cap = nc;
    }
    if (!(l->v[l->n] = pa_strdup(path)))
        return pa_error(err, PA_ENOMEM, "out of memory listing scan files");
    l->n++;
    return PA_OK;
}

/* A directory's *.parquet entries (not recursive), sorted by name. */
static int add_dir(path_list *l, const char *dir, pa_err *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return pa_error(err, PA_EIO, "%s: cannot open directory: %s", dir, strerror(errno));
    uint32_t first = l->n;
    int rc = PA_OK;
    struct dirent *e;
    size_t dl = strlen(dir);
    while (rc == PA_OK && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 9 || strcmp(e->d_name + len - 8, ".parquet") || e->d_name[0] == '.')
            continue;
        char *name = pa_malloc(dl + len + 2);
        if (!name) {
            rc = pa_error(err, PA_ENOMEM, "out of memory listing %s", dir);
            break;
        }
        snprintf(name, dl + len + 2, "%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/", e->d_name);
        rc = list_add(l, name, err);
        pa_free(name);
    }
    closedir(d);
    if (rc == PA_OK && l->n == first)
        rc = pa_error(err, PA_ENOTFOUND, "%s: directory holds no *.parquet files", dir);
    if (rc == PA_OK)
        qsort(l->v + first, l->n - first, sizeof *l->v, cmp_str);
    return rc;
}

/* A `**` glob: components matched one directory level at a time, `**`
 * standing for zero or more directories (not hidden ones, at most 64
 * levels deep, so a symbolic link loop ends). Regular files that match
 * are added; the caller sorts and removes duplicates. */
static int glob_deep(path_list *l, char *prefix, size_t plen, size_t pcap, char **comp, int nc, int depth,
                     pa_err *err)
{
    struct stat st;
    const char *dir = plen ? prefix : ".";
    if (nc == 0)
        return plen && stat(prefix, &st) == 0 && S_ISREG(st.st_mode) ? list_add(l, prefix, err) : PA_OK;
    const char *c = comp[0];
    bool deep = !strcmp(c, "**");
    int rc = PA_OK;
    if (deep && (rc = glob_deep(l, prefix, plen, pcap, comp + 1, nc - 1, depth, err)) != PA_OK)
        return rc;
    if (deep && depth >= 64)
        return PA_OK;
    if (!deep && !strpbrk(c, "*?[")) {   /* a plain name: no listing */
        size_t n = strlen(c);
        if (plen + n + 2 > pcap)
            return PA_OK;
        size_t at = plen;
        if (plen && prefix[plen - 1] != '/')
            prefix[at++] = '/';
        memcpy(prefix + at, c, n + 1);
        rc = stat(prefix, &st) == 0 ? glob_deep(l, prefix, at + n, pcap, comp + 1, nc - 1, depth, err) : PA_OK;
        prefix[plen] = 0;
        return rc;
    }
    DIR *d = opendir(dir);
    if (!d)
        return PA_OK;   /* not a directory, or unreadable: nothing matches below it */
    struct dirent *e;
    while (rc == PA_OK && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (!deep && fnmatch(c, e->d_name, FNM_PERIOD) != 0)
            continue;
        size_t n = strlen(e->d_name);
        if (plen + n + 2 > pcap)
            continue;
        size_t at = plen;
        if (plen && prefix[plen - 1] != '/')
            prefix[at++] = '/';
        memcpy(prefix + at, e->d_name, n + 1);
        if (deep) {   /* one more level of directories, still under ** */
            if (stat(prefix, &st) == 0 && S_ISDIR(st.st_mode))
                rc = glob_deep(l, prefix, at + n, pcap, comp, nc, depth + 1, err);
        } else {
            rc = glob_deep(l, prefix, at + n, pcap, comp + 1, nc - 1, depth, err);
        }
        prefix[plen] = 0;
    }
    closedir(d);
    return rc;
}

static int expand_deep(path_list *l, const char *pattern, pa_err *err)
{
    size_t len = strlen(pattern);
    char *copy = pa_malloc(len + 1), *prefix = pa_malloc(4096 + 2);
    char **comp = pa_malloc((len / 2 + 2) * sizeof *comp);
    if (!copy || !prefix || !comp) {
        pa_free(copy), pa_free(prefix), pa_free(comp);
        return pa_error(err, PA_ENOMEM, "out of memory expanding %s", pattern);
    }
    memcpy(copy, pattern, len + 1);
    int nc = 0;
    for (char *t = strtok(copy, "/"); t; t = strtok(NULL, "/"))
        comp[nc++] = t;
    size_t plen = 0;
    if (pattern[0] == '/')
        prefix[plen++] = '/';
    prefix[plen] = 0;
    uint32_t first = l->n;
    int rc = glob_deep(l, prefix, plen, 4096, comp, nc, 0, err);
    if (rc == PA_OK) {   /* sorted, duplicates (two ** components) removed */
        if (l->n > first)   /* (no list at all when nothing matched) */
            qsort(l->v + first, l->n - first, sizeof *l->v, cmp_str);
        uint32_t k = first;
        for (uint32_t i = first; i < l->n; i++) {
            if (k > first && !strcmp(l->v[k - 1], l->v[i]))
                pa_free(l->v[i]);
            else
                l->v[k++] = l->v[i];
        }
        l->n = k;
        if (l->n == first)
            rc = pa_error(err, PA_ENOTFOUND, "%s: no file matches", pattern);
    }
    pa_free(copy), pa_free(prefix), pa_free(comp);
    return rc;
}

/* Whether a pattern has a `**` component. */
static bool has_deep(const char *p)
{
    for (const char *q = strstr(p, "**"); q; q = strstr(q + 1, "**"))
        if ((q == p || q[-1] == '/') && (q[2] == 0 || q[2] == '/'))
            return true;
    return false;
}

void pq_paths_free(char **files, uint32_t n)
{
    for (uint32_t i = 0; files && i < n; i++)
        pa_free(files[i]);
    pa_free(files);
}

int pq_paths_expand(const char *const *paths, size_t n_paths, char ***files, uint32_t *n_files, pa_err *err)
{
    path_list l = {0};
    int rc = n_paths ? PA_OK : pa_error(err, PA_EINVAL, "scan of no files");
    for (size_t i = 0; rc == PA_OK && i < n_paths; i++) {
        const char *p = paths[i];
        struct stat st;
        if (!p)
            rc = pa_error(err, PA_EINVAL, "scan path %zu is NULL", i);
        else if (stat(p, &st) == 0) {
            rc = S_ISDIR(st.st_mode)   ? add_dir(&l, p, err)
                 : S_ISREG(st.st_mode) ? list_add(&l, p, err)
                                       : pa_error(err, PA_EINVAL, "%s: not a regular file (%s)", p, pq_file_kind(st.st_mode));
        } else if (has_deep(p)) {
            rc = expand_deep(&l, p, err);
        } else if (strpbrk(p, "*?[")) {
            glob_t g;
            int gr = glob(p, 0, NULL, &g);
            if (gr == GLOB_NOMATCH)
                rc = pa_error(err, PA_ENOTFOUND, "%s: no file matches", p);
            else if (gr != 0)
                rc = pa_error(err, PA_EIO, "%s: glob failed", p);
            for (size_t k = 0; gr == 0 && k < g.gl_pathc && rc == PA_OK; k++)
                rc = list_add(&l, g.gl_pathv[k], err);   /* glob sorts */
            if (gr == 0)
                globfree(&g);
        } else {
            rc = pa_error(err, errno == ENOENT ? PA_ENOTFOUND : PA_EIO, "%s: %s", p, strerror(errno));
        }
    }
    if (rc != PA_OK) {
        pq_paths_free(l.v, l.n);
        return rc;
    }
    *files = l.v;
    *n_files = l.n;
    return PA_OK;
}

/* The files, their partitions, and the files predicates on partition
 * columns rule out (never opened). */
static int resolve_paths(pq_scan *s, pa_err *err)
{
    char **files;
    uint32_t n, cap = 0;
    int rc = pq_paths_expand(s->opt.paths, s->opt.n_paths, &files, &n, err);
    if (rc != PA_OK)
        return rc;
    rc = pq_hive_detect((const char *const *)files, n, s->opt.hive_partitioning, &s->hive, err);
    scan_pred *fp = NULL;
    int n_fp = 0;
    const pq_hive *h = s->hive;
    if (rc == PA_OK && h && s->opt.n_preds && !(fp = pa_calloc(s->opt.n_preds, sizeof *fp)))
        rc = pa_error(err, PA_ENOMEM, "out of memory binding predicates");
    for (size_t i = 0; rc == PA_OK && h && i < s->opt.n_preds; i++) {
        const pq_pred *p = &s->opt.preds[i];
        int k = p->column ? pq_hive_key(h, p->column) : -1;
        if (k >= 0 && (rc = scan__bind_pred_type(p, h->types[k], k, &fp[n_fp], err)) == PA_OK)
            n_fp++;
    }
    for (uint32_t i = 0; rc == PA_OK && i < n; i++) {
        bool keep = true;
        for (int j = 0; keep && j < n_fp; j++)
            keep = scan__const_match(&fp[j], h->types[fp[j].col], h->values[(size_t)i * (size_t)h->n_keys + (size_t)fp[j].col]);
        if (!keep) {
            s->stats.files_pruned++;
            continue;
        }
        if ((rc = add_file(s, &cap, files[i], err)) == PA_OK)
            s->files[s->n_files - 1].hive_file = i;
    }
    for (int j = 0; j < n_fp; j++)
        scan__pred_free(&fp[j]);
    pa_free(fp);
    pq_paths_free(files, n);
    return rc;
}

/* ------------------------------------------------------------- columns */

static int find_or_add_rcol(pq_scan *s, const char *name, bool output, pa_err *err)
{
    for (int i = 0; i < s->n_rcols; i++)
        if (!strcmp(s->rcols[i].name, name)) {
            s->rcols[i].output |= output;
            return i;
        }
    scan_rcol *nr = pa_realloc(s->rcols, (size_t)(s->n_rcols + 1) * sizeof *nr);
    if (!nr)
        return pa_error(err, PA_ENOMEM, "out of memory mapping scan columns");
    s->rcols = nr;
    scan_rcol *r = &s->rcols[s->n_rcols];
    memset(r, 0, sizeof *r);
    r->output = output;
    r->part = pq_hive_key(s->hive, name);
    size_t nf = s->n_files ? s->n_files : 1;
    if (!(r->name = pa_strdup(name)) || !(r->desc = pa_calloc(nf, sizeof *r->desc)) ||
        !(r->src = pa_calloc(nf, 1))) {
        pa_free((void *)r->name);
        pa_free(r->desc);
        return pa_error(err, PA_ENOMEM, "out of memory mapping scan columns");
    }
    return s->n_rcols++;
}

/* Leaf of top-level column name in m, or -1. */
static int find_leaf(const pq_file_meta *m, const char *name)
{
    size_t nl = strlen(name);
    for (uint32_t i = 0; i < m->n_leaves; i++) {
        const char *lp = m->leaves[i].path;
        if (!strcmp(lp, name) || (!strncmp(lp, name, nl) && lp[nl] == '.'))
            return (int)i;
    }
    return -1;
}

/* Map read column r in file f (its leaf by name, checked supported). The
 * column's type is settled afterwards (settle_type). */
static int map_column(pq_scan *s, int r, uint32_t f, pa_err *err)
{
    const pq_file_meta *m = s->files[f].meta;
    scan_rcol *rc = &s->rcols[r];
    const char *path = s->files[f].path;
    if (rc->part >= 0) {
        rc->src[f] = SCAN_SRC_PART;
        return PA_OK;
    }
    int li = find_leaf(m, rc->name);
    if (li >= 0) {
        const pq_leaf *l = &m->leaves[li];
        if (l->max_rep_level > 0 || strchr(l->path, '.'))
            return pa_error(err, PA_EUNSUPPORTED, "%s: column %s is nested (only flat columns are supported)", path,
                            rc->name);
        pq_column_desc *d = &rc->desc[f];
        pa_err e2;
        pa_err_init(&e2);
        int st = pq_element_type(&m->schema[l->schema_index], l->path, d, &e2);
        if (st != PA_OK) {
            pa_error(err, st, "%s: %s", path, e2.msg);
            pa_err_close(&e2);
            return st;
        }
        pa_err_close(&e2);
        d->leaf_index = (uint32_t)li;
        d->schema_index = l->schema_index;
        d->nullable = l->max_def_level > 0;
        rc->src[f] = SCAN_SRC_FILE;
        return PA_OK;
    }
    if (s->opt.union_by_name) {
        rc->src[f] = SCAN_SRC_NULL;
        return PA_OK;
    }
    if (f > 0)
        return pa_error(err, PA_EINVAL, "column %s is in %s but not in %s (union_by_name reads it as NULL there)",
                        rc->name, s->files[0].path, path);
    return pa_error(err, PA_ENOTFOUND, "%s: no column %s", path, rc->name);
}

/* The column's type: the caller's (want, when given) or the widening of
 * its type in every file; each file's type must widen into it. */
static int settle_type(pq_scan *s, int r, const pa_type *want, pa_err *err)
{
    scan_rcol *rc = &s->rcols[r];
    if (rc->part >= 0) {
        rc->type = s->hive->types[rc->part];
        if (want && (want->id != rc->type.id))
            return pa_error(err, PA_EINVAL, "partition column %s changed type", rc->name);
        return PA_OK;
    }
    int first = -1;
    for (uint32_t f = 0; f < s->n_files; f++) {
        if (rc->src[f] != SCAN_SRC_FILE)
            continue;
        pa_type t = rc->desc[f].type, w = {PA_TYPE__COUNT, 0, 0};
        char why[128], t0[32], t1[32];
        if (first < 0) {
            first = (int)f;
            rc->type = want ? *want : t;
        }
        bool ok = pq_type_widen(rc->type, t, &w, why, sizeof why);
        if (want && (!ok || w.id != want->id || w.precision != want->precision || w.scale != want->scale))
            return pa_error(err, PA_EINVAL, "column %s is %s in %s, which does not fit the table's %s%s%s", rc->name,
                            pa_type_format(t, t1, sizeof t1), s->files[f].path, pa_type_format(*want, t0, sizeof t0),
                            why[0] ? ": " : "", why);
        if (!ok)
            return pa_error(err, PA_EINVAL, "column %s is %s in %s but %s in %s%s%s", rc->name,
                            pa_type_format(rc->desc[first].type, t0, sizeof t0), s->files[first].path,
                            pa_type_format(t, t1, sizeof t1), s->files[f].path, why[0] ? ": " : "", why);
        rc->type = w;
    }
    if (first < 0)   /* in no file scanned: NULLs of the caller's type */
        rc->type = want ? *want : (pa_type){PA_TYPE_VARCHAR, 0, 0};
    for (uint32_t f = 0; f < s->n_files; f++) {
        const pa_type *t = &rc->desc[f].type;
        if (rc->src[f] == SCAN_SRC_FILE &&
            (t->id != rc->type.id || t->precision != rc->type.precision || t->scale != rc->type.scale))
            rc->mixed = true;
    }
    return PA_OK;
}

static bool name_in(char **v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i], name))
            return true;
    return false;
}

/* Every column: the first file's, then (union_by_name) the others' new
 * ones in file order, then the partition columns. Names are copies. */
static int all_columns(pq_scan *s, char ***out, size_t *n_out, pa_err *err)
{
    size_t cap = (s->hive ? (size_t)s->hive->n_keys : 0) + 1;
    for (uint32_t f = 0; f < s->n_files; f++)
        cap += s->files[f].meta->n_leaves;
    char **v = pa_calloc(cap, sizeof *v);
    size_t n = 0;
    if (!v)
        return pa_error(err, PA_ENOMEM, "out of memory mapping scan columns");
    for (uint32_t f = 0; f < s->n_files && (f == 0 || s->opt.union_by_name); f++) {
        const pq_file_meta *m = s->files[f].meta;
        for (uint32_t i = 0; i < m->n_leaves; i++) {
            const char *name = m->leaves[i].path;
            if (name_in(v, n, name) || pq_hive_key(s->hive, name) >= 0)
                continue;
            v[n++] = (char *)name;
        }
    }
    for (int k = 0; s->hive && k < s->hive->n_keys; k++)
        v[n++] = s->hive->keys[k];
    *out = v;
    *n_out = n;
    return PA_OK;
}

static int map_columns(pq_scan *s, pa_err *err)
{
    char **all = NULL;
    size_t n_out = s->opt.n_columns;
    if (!s->opt.columns) {
        int rc = all_columns(s, &all, &n_out, err);
        if (rc != PA_OK)
            return rc;
    }
    s->out_rcol = pa_calloc(n_out ? n_out : 1, sizeof *s->out_rcol);
    if (!s->out_rcol) {
        pa_free(all);
        return pa_error(err, PA_ENOMEM, "out of memory mapping scan columns");
    }
    for (size_t i = 0; i < n_out; i++) {
        const char *name = s->opt.columns ? s->opt.columns[i] : all[i];
        if (!name) {
            pa_free(all);
            return pa_error(err, PA_EINVAL, "scan column %zu is NULL", i);
        }
        int r = find_or_add_rcol(s, name, true, err);
        if (r < 0) {
            pa_free(all);
            return r;
        }
        s->out_rcol[s->n_out++] = r;
    }
    pa_free(all);
    /* Filter-only columns are read only when rows are filtered. */
    s->preds = pa_calloc(s->opt.n_preds ? s->opt.n_preds : 1, sizeof *s->preds);
    if (!s->preds)
        return pa_error(err, PA_ENOMEM, "out of memory binding predicates");
    for (size_t i = 0; i < s->opt.n_preds; i++) {
        const pq_pred *p = &s->opt.preds[i];
        if (!p->column)
            return pa_error(err, PA_EINVAL, "predicate %zu has no column", i);
        if (pq_hive_key(s->hive, p->column) >= 0)
            continue;   /* applied to whole files (resolve_paths) */
        int r = find_or_add_rcol(s, p->column, false, err);
        if (r < 0)
            return r;
    }
    for (int r = 0; r < s->n_rcols; r++) {
        for (uint32_t f = 0; f < s->n_files; f++) {
            int rc = map_column(s, r, f, err);
            if (rc != PA_OK)
                return rc;
        }
        const pa_type *want = NULL;
        for (int i = 0; s->opt.types && i < s->n_out; i++)
            if (s->out_rcol[i] == r)
                want = &s->opt.types[i];
        int rc = settle_type(s, r, want, err);
        if (rc != PA_OK)
            return rc;
    }
    for (size_t i = 0; i < s->opt.n_preds; i++) {
        const pq_pred *p = &s->opt.preds[i];
        if (pq_hive_key(s->hive, p->column) >= 0)
            continue;
        int r = find_or_add_rcol(s, p->column, false, err);
        if (s->rcols[r].mixed)
            return pa_error(err, PA_EUNSUPPORTED,
                            "predicate on %s: its type differs between the files (filter above the scan instead)",
                            p->column);
        int rc = scan__bind_pred(s, p, r, &s->preds[s->n_preds], err);
        if (rc != PA_OK)
            return rc;
        s->n_preds++;
    }
    return PA_OK;
}

/* ------------------------------------------------------------- pruning */

static int make_units(pq_scan *s, pa_err *err)
{
    uint64_t total = 0;
    for (uint32_t f = 0; f < s->n_files; f++)
        total += s->files[f].meta->n_row_groups;
    s->units = pa_calloc(total ? total : 1, sizeof *s->units);
    if (!s->units)
        return pa_error(err, PA_ENOMEM, "out of memory planning the scan");
    s->stats.files = s->n_files;
    s->stats.row_groups = total;
    uint64_t index = 0;   /* over every file, for the share */
    int parts = s->opt.share_parts;
    if (parts > 1 && (s->opt.share_part < 0 || s->opt.share_part >= parts))
        return pa_error(err, PA_EINVAL, "scan share %d of %d", s->opt.share_part, parts);
    for (uint32_t f = 0; f < s->n_files; f++) {
        const pq_file_meta *m = s->files[f].meta;
        /* union_by_name: a file without a predicate's column is NULL there. */
        bool file_keep = true;
        for (int k = 0; k < s->n_preds && file_keep; k++)
            if (s->rcols[s->preds[k].col].src[f] == SCAN_SRC_NULL)
                file_keep = scan__const_match(&s->preds[k], s->rcols[s->preds[k].col].type, NULL);
        if (!file_keep) {
            s->stats.files_pruned++;
            s->stats.files--;
            s->stats.row_groups -= m->n_row_groups;
            index += m->n_row_groups;
            continue;
        }
        for (uint32_t g = 0; g < m->n_row_groups; g++, index++) {
            const pq_row_group *rg = &m->row_groups[g];
            if (parts > 1 && index % (uint64_t)parts != (uint64_t)s->opt.share_part)
                continue;   /* another rank's */
            bool keep = rg->num_rows > 0;
            for (int k = 0; k < s->n_preds && keep; k++) {
                const scan_rcol *rc = &s->rcols[s->preds[k].col];
                if (rc->src[f] != SCAN_SRC_FILE)
                    continue;   /* a NULL column: decided for the whole file */
                const pq_column_desc *d = &rc->desc[f];
                keep = scan__rg_may_match(&s->preds[k], d, &rg->columns[d->leaf_index].meta_data);
            }
            if (!keep) {
                s->stats.row_groups_pruned++;
                continue;
            }
            if (rg->num_rows > INT32_MAX)
                return pa_error(err, PA_EUNSUPPORTED, "%s: row group %u has %lld rows (at most 2^31-1 supported)",
                                s->files[f].path, g, (long long)rg->num_rows);
            scan_unit *u = &s->units[s->n_units++];
            u->file = f;
            u->rg = g;
            u->num_rows = rg->num_rows;
            pa_err_init(&u->err);
        }
    }
    return PA_OK;
}

/* ------------------------------------------------------------- open/close */

/* The decoders. With several row groups, whole units decode at once, one
 * per pool thread, each on its own thread: no barrier per unit, and each
 * unit's pages stay in one core's cache. Else one decoder spreads each
 * unit's pages over the pool. On a device that is not host-visible each
 * decoder has a stream of its own, so the kernels of several row groups
 * (a unit's pages are few) run on the device at once. */
static int make_decoders(pq_scan *s, pa_err *err)
{
    int pool = pa_threadpool_size(s->tp);
    int n = s->opt.unit_workers;
    if (n <= 0)
        n = s->n_units >= 2 ? pool : 1;
    if (n > pool)
        n = pool;
    if (n > (int)s->n_units)
        n = (int)s->n_units;
    if (n < 1)
        n = 1;
    if (!(s->wctx = pa_calloc((size_t)n, sizeof *s->wctx)))
        return pa_error(err, PA_ENOMEM, "out of memory opening a scan");
    s->n_wctx = n;
    if (n == 1)
        s->wctx[0].tp = s->tp;   /* else NULL: each unit on its pool decoder's thread */
    s->opt.read_ahead += 2 * (n - 1);
    if (!dv_host_visible(s->dev))
        for (int i = 0; i < n; i++) {
            int rc = dv_stream_create(s->dev, &s->wctx[i].stream, err);
            if (rc == PA_OK)
                rc = dv_event_create(s->dev, &s->wctx[i].done, err);
            if (rc != PA_OK)
                return rc;
        }
    return PA_OK;
}

int pq_scan_open(const pq_scan_options *opt, pq_scan **out, pa_err *err)
{
    if (!opt || !opt->device || !out)
        return pa_error(err, PA_EINVAL, "pq_scan_open: options with a device are required");
    pq_scan *s = pa_calloc(1, sizeof *s);
    if (!s)
        return pa_error(err, PA_ENOMEM, "out of memory opening a scan");
    s->opt = *opt;
    s->dev = opt->device;
    pa_err_init(&s->err);
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->pool_mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    if (s->opt.max_chunks <= 0)
        s->opt.max_chunks = 4;
    if (s->opt.read_ahead <= 0)
        s->opt.read_ahead = 3;
    if (!s->opt.max_read)
        s->opt.max_read = 16u << 20;
    int rc;
    PA_TRY(rc = resolve_paths(s, err));
    for (uint32_t f = 0; f < s->n_files; f++)
        PA_TRY(rc = pq_meta_get(s->files[f].path, &s->files[f].meta, err));
    PA_TRY(rc = map_columns(s, err));
    PA_TRY(rc = make_units(s, err));
    s->io = opt->io;
    if (!s->io)
        PA_TRY(rc = io_engine_shared(&s->io, err));
    for (uint32_t f = 0; f < s->n_files; f++)
        PA_TRY(rc = io_file_open(s->io, s->files[f].path, IO_OPEN_DEFAULT, &s->files[f].io, err));
    s->tp = opt->threads ? opt->threads : dv_cpu_threads(s->dev);
    if (!s->tp) {
        PA_TRY(rc = pa_threadpool_create(opt->decode_threads, &s->own_tp, err));
        s->tp = s->own_tp;
    }
    PA_TRY(rc = make_decoders(s, err));
    PA_TRY(rc = scan__live_create(s, err));
    PA_TRY(rc = pa_queue_create((size_t)s->opt.max_chunks, &s->outq, err));
    if (pthread_create(&s->thread, NULL, scan__thread_main, s) != 0) {
        rc = pa_error(err, PA_ENOMEM, "cannot start the scan thread");
        goto fail;
    }
    s->thread_started = true;
    *out = s;
    return PA_OK;
fail:
    pq_scan_close(s);
    return rc;
}

int pq_scan_n_columns(const pq_scan *s) { return s->n_out; }

const char *pq_scan_column_name(const pq_scan *s, int i)
{
    return i >= 0 && i < s->n_out ? s->rcols[s->out_rcol[i]].name : NULL;
}

pa_type pq_scan_column_type(const pq_scan *s, int i)
{
    pa_type none = {PA_TYPE__COUNT, 0, 0};
    return i >= 0 && i < s->n_out ? s->rcols[s->out_rcol[i]].type : none;
}

int pq_scan_next(pq_scan *s, dv_chunk **out, pa_err *err)
{
    *out = NULL;
    void *item = NULL;
    int rc = pa_queue_pop(s->outq, &item, PA_WAIT_FOREVER);
    if (rc == PA_OK) {
        *out = item;
        return PA_OK;
    }
    /* Closed: the scan thread ended (after its last push). */
    pthread_mutex_lock(&s->mu);
    int code = s->err.code;
    pthread_mutex_unlock(&s->mu);
    if (code != PA_OK) {
        pa_err_propagate(err, &s->err);
        return code;
    }
    return PA_OK;
}

void pq_scan_get_stats(pq_scan *s, pq_scan_stats *out)
{
    pthread_mutex_lock(&s->mu);
    *out = s->stats;
    pthread_mutex_unlock(&s->mu);
}

void pq_scan_close(pq_scan *s)
{
    if (!s)
        return;
    __atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
    if (s->outq)
        pa_queue_close(s->outq);
    if (s->thread_started)
        pthread_join(s->thread, NULL);
    if (s->outq) {
        void *item;
        while (pa_queue_pop(s->outq, &item, 0) == PA_OK)
            dv_chunk_destroy(item);
        pa_queue_destroy(s->outq);
    }
    for (uint32_t i = 0; i < s->n_units; i++) {
        dv_chunk_destroy(s->units[i].chunk);
        scan__unit_release(s, &s->units[i]);
        pa_err_close(&s->units[i].err);
    }
    pa_free(s->units);
    for (int i = 0; i < s->n_wctx; i++) {
        pa_free(s->wctx[i].scratch);
        pa_free(s->wctx[i].sel_buf);
        dv_event_destroy(s->wctx[i].done);
        if (s->wctx[i].stream)
            dv_stream_destroy(s->wctx[i].stream);
    }
    pa_free(s->wctx);
    pa_free(s->pred_in);
    pa_free(s->pred_out);
    for (int i = 0; i < s->n_pool; i++)
        pa_free(s->pool[i]);
    if (s->own_tp)
        pa_threadpool_destroy(s->own_tp);
    for (int k = 0; k < s->n_preds; k++)
        scan__pred_free(&s->preds[k]);
    pa_free(s->preds);
    for (int r = 0; r < s->n_rcols; r++) {
        pa_free((void *)s->rcols[r].name);
        pa_free(s->rcols[r].desc);
        pa_free(s->rcols[r].src);
    }
    pa_free(s->rcols);
    pa_free(s->out_rcol);
    for (uint32_t f = 0; f < s->n_files; f++) {
        if (s->files[f].io)
            io_file_close(s->files[f].io);
        if (s->files[f].meta)
            pq_file_meta_release(s->files[f].meta);
        pa_free(s->files[f].path);
    }
    pa_free(s->files);
    pq_hive_free(s->hive);
    scan__live_detach(s);   /* chunks still held elsewhere no longer wake the scan */
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->pool_mu);
    pthread_cond_destroy(&s->cv);
    pa_err_close(&s->err);
    pa_free(s);
}

/*
 * cmd_bench_tpch_out.c - the side work of `pista bench tpch`: evicting the
 * data files from the OS page cache before a cold run, comparing results
 * with the answers, DuckDB's views over the same files, and the outputs
 * that outlive the run (tpch.csv with every number, tpch.png by gnuplot).
 */
#define _GNU_SOURCE
#include "cli/bench_tpch.h"
#include "tpch/tpch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bytes of fd's first `size` bytes held by the page cache, or -1. */
static int64_t resident_bytes(int fd, int64_t size)
{
    if (size == 0)
        return 0;
    long page = sysconf(_SC_PAGESIZE);
    void *map = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED)
        return -1;
    size_t pages = (size_t)((size + page - 1) / page);
    unsigned char *vec = pa_malloc(pages);
    int64_t n = -1;
    if (vec && mincore(map, (size_t)size, vec) == 0) {
        n = 0;
        for (size_t i = 0; i < pages; i++)
            n += vec[i] & 1;
        n *= page;
        if (n > size)
            n = size;
    }
    pa_free(vec);
    munmap(map, (size_t)size);
    return n;
}

static int evict_walk(const char *dir, int depth, int64_t *files, int64_t *bytes, int64_t *resident)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            if (depth < 2)   /* DIR/<table>/ parts; no deeper */
                evict_walk(path, depth + 1, files, bytes, resident);
            continue;
        }
        if (!S_ISREG(st.st_mode))
            continue;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        fdatasync(fd);   /* dirty pages (a file just written) cannot be dropped */
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        int64_t r = resident_bytes(fd, st.st_size);
        if (r < 0 || *resident < 0)
            *resident = -1;
        else
            *resident += r;
        close(fd);
        (*files)++;
        *bytes += st.st_size;
    }
    closedir(d);
    return 0;
}

int bt_evict_dir(const char *dir, int64_t *files, int64_t *bytes, int64_t *resident, char *why, size_t why_cap)
{
    *files = *bytes = *resident = 0;
    if (evict_walk(dir, 0, files, bytes, resident) != 0) {
        snprintf(why, why_cap, "%s: %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

int bt_mkdirs(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(buf, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

/* The whole of a file as a NUL-terminated pa_malloc'd string, or NULL. */
char *bt_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    char tmp[65536];
    while ((n = fread(tmp, 1, sizeof tmp, f)) > 0) {
        if (len + n + 1 > cap) {
            cap = (len + n + 1) * 2;
            char *nb = pa_realloc(buf, cap);
            if (!nb) {
                pa_free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        memcpy(buf + len, tmp, n);
        len += n;
    }
    fclose(f);
    if (!buf)
        buf = pa_calloc(1, 1);
    else
        buf[len] = '\0';
    return buf;
}

/* "ok", "DIFFERENT (line N)" or "no answer file" for result text csv. */
bool bt_check_answer(const char *dir, int q, const char *csv, char *out, size_t cap)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/q%02d.csv", dir, q);
    char *want = bt_read_file(path);
    if (!want) {
        snprintf(out, cap, "no answer file");
        return false;
    }
    int line = 1;
    size_t i = 0;
    for (; want[i] && want[i] == csv[i]; i++)
        line += want[i] == '\n';
    bool same = want[i] == csv[i];
    if (same)
        snprintf(out, cap, "ok");
    else
        snprintf(out, cap, "DIFFERENT (line %d)", line);
    pa_free(want);
    return same;
}

/* DuckDB's views over the same files: DIR/<t>.parquet or DIR/<t>/ parts. */
void bt_duckdb_views(const char *data, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (int t = 0; t < TP_TABLE__COUNT; t++) {
        const char *name = tp_table_name((tp_table)t);
        char file[2048], quoted[4200];
        struct stat st;
        snprintf(file, sizeof file, "%s/%s.parquet", data, name);
        if (stat(file, &st) != 0)
            snprintf(file, sizeof file, "%s/%s/*.parquet", data, name);
        size_t k = 0;
        for (const char *p = file; *p && k + 2 < sizeof quoted; p++) {
            if (*p == '\'')
                quoted[k++] = '\'';
            quoted[k++] = *p;
        }
        quoted[k] = '\0';
        len += (size_t)snprintf(out + len, len < cap ? cap - len : 0,
                                "create view %s as select * from read_parquet('%s');\n", name, quoted);
    }
}

/* A number field, empty when v < 0 (not measured). */
static void put_num(FILE *f, double v, const char *fmt)
{
    fputc(',', f);
    if (v >= 0)
        fprintf(f, fmt, v);
}

/* A text field, quoted as CSV wants when it holds a comma, quote or newline. */
static void put_text(FILE *f, const char *s)
{
    fputc(',', f);
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
    }
    fputc('"', f);
}

int bt_write_csv(const char *out_dir, const bt_query *qs, int n, char *why, size_t why_cap)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/tpch.csv", out_dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(why, why_cap, "%s: %s", path, strerror(errno));
        return -1;
    }
    fprintf(f, "query,rows,cold_s,warm_s,plan_s,bytes_read,duckdb_s,duckdb_rows,ratio,check,error\n");
    for (int i = 0; i < n; i++) {
        const bt_query *q = &qs[i];
        fprintf(f, "%d", q->q);
        put_num(f, q->ok ? (double)q->rows : -1, "%.0f");
        put_num(f, q->ok ? q->cold_s : -1, "%.6f");
        put_num(f, q->ok ? q->warm_s : -1, "%.6f");
        put_num(f, q->ok ? q->plan_s : -1, "%.6f");
        put_num(f, q->ok ? (double)q->bytes_read : -1, "%.0f");
        put_num(f, q->duck_s, "%.6f");
        put_num(f, q->duck_rows >= 0 ? (double)q->duck_rows : -1, "%.0f");
        put_num(f, q->ok && q->duck_s > 0 && q->warm_s > 0 ? q->duck_s / q->warm_s : -1, "%.4f");
        put_text(f, q->check);
        put_text(f, q->ok ? "" : q->error);
        fputc('\n', f);
    }
    if (fclose(f) != 0) {
        snprintf(why, why_cap, "%s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

static bool have_program(const char *name)
{
    const char *path = getenv("PATH");
    if (!path)
        return false;
    char buf[4096], dir[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *save = NULL, *p = strtok_r(buf, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
        snprintf(dir, sizeof dir, "%s/%s", p, name);
        if (access(dir, X_OK) == 0)
            return true;
    }
    return false;
}

int bt_plot(const char *out_dir, const bt_query *qs, int n, const char *title, char *why, size_t why_cap)
{
    if (!have_program("gnuplot"))
        return 1;
    /* Log scale when the bars span more than a factor 30 (short queries
     * would be invisible next to long ones otherwise). */
    double lo = 1e30, hi = 0;
    bool duck = false;
    for (int i = 0; i < n; i++) {
        double v[2] = {qs[i].ok ? qs[i].warm_s : -1, qs[i].duck_s};
        duck |= qs[i].duck_s > 0;
        for (int k = 0; k < 2; k++)
            if (v[k] > 0) {
                lo = fmin(lo, v[k]);
                hi = fmax(hi, v[k]);
            }
    }
    if (hi <= 0) {
        snprintf(why, why_cap, "no query has a time to plot");
        return -1;
    }
    bool logy = hi / lo > 30;
    FILE *g = popen("gnuplot", "w");
    if (!g) {
        snprintf(why, why_cap, "cannot start gnuplot: %s", strerror(errno));
        return -1;
    }
    fprintf(g, "set terminal pngcairo size 1200,560 font ',10'\n"
               "set output '%s/tpch.png'\n"
               "set title \"%s\" noenhanced\n"
               "set style data histograms\nset style histogram clustered gap 1\n"
               "set style fill solid 0.85 border -1\nset boxwidth 0.9\n"
               "set ylabel 'warm time (s)%s'\nset xlabel 'TPC-H query'\n"
               "set grid ytics\nset key top left\nset datafile missing 'NaN'\n%s"
               "$data << EOD\n",
            out_dir, title, logy ? ", log scale" : "", logy ? "set logscale y\n" : "set yrange [0:*]\n");
    for (int i = 0; i < n; i++) {
        fprintf(g, "Q%d ", qs[i].q);
        if (qs[i].ok && qs[i].warm_s > 0)
            fprintf(g, "%.6f ", qs[i].warm_s);
        else
            fprintf(g, "NaN ");
        if (qs[i].duck_s > 0)
            fprintf(g, "%.6f\n", qs[i].duck_s);
        else
            fprintf(g, "NaN\n");
    }
    fprintf(g, "EOD\nplot $data using 2:xtic(1) title 'pista' lc rgb '#d95f02'");
    if (duck)
        fprintf(g, ", '' using 3 title 'DuckDB' lc rgb '#7570b3'");
    fprintf(g, "\n");
    int st = pclose(g);
    if (st != 0) {
        snprintf(why, why_cap, "gnuplot failed (status %d; its message is above)", st);
        return -1;
    }
    return 0;
}

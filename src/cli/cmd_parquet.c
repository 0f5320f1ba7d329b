/*
 * cmd_parquet.c - `pista parquet meta|cat ...`. `cat` (the rows) lives in
 * cmd_parquet_cat.c. `pista parquet meta [--pages | --csv] FILE...`: print what
 * a Parquet file's footer says (schema with engine types, row groups, column
 * chunks with codec, encodings, sizes, statistics, page index presence) and,
 * with --pages, every page header of every column chunk. --csv prints one
 * '|'-separated line per column chunk with the column names of DuckDB's
 * parquet_metadata(), for comparison with it.
 */
#include "cli/cli.h"
#include "storage/storage.h"

#include <stdio.h>
#include <string.h>

static const char *or_num(const char *name, int32_t v, char *buf, size_t cap)
{
    if (name)
        return name;
    snprintf(buf, cap, "?(%d)", v);
    return buf;
}

static void encodings_text(const pq_column_meta *cm, const char *sep, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < cm->n_encodings && n < cap; i++) {
        char tmp[16];
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? sep : "",
                              or_num(pq_encoding_name(cm->encodings[i]), cm->encodings[i], tmp, sizeof tmp));
    }
}

static void logical_text(const pq_schema_element *e, char *buf, size_t cap)
{
    const pq_logical_type *lt = &e->logical;
    char tmp[16];
    const char *name = or_num(pq_logical_kind_name(lt->kind), lt->kind, tmp, sizeof tmp);
    switch (lt->kind) {
    case PQ_LT_NONE: snprintf(buf, cap, "-"); break;
    case PQ_LT_DECIMAL: snprintf(buf, cap, "DECIMAL(%d,%d)", lt->precision, lt->scale); break;
    case PQ_LT_TIME:
    case PQ_LT_TIMESTAMP:
        snprintf(buf, cap, "%s(%s%s)", name, pq_time_unit_name(lt->unit) ? pq_time_unit_name(lt->unit) : "?",
                 lt->is_adjusted_to_utc ? ",UTC" : "");
        break;
    case PQ_LT_INTEGER:
        snprintf(buf, cap, "INTEGER(%d,%s)", lt->bit_width, lt->is_signed ? "signed" : "unsigned");
        break;
    default: snprintf(buf, cap, "%s", name); break;
    }
}

/* Engine type text of schema element i, or why it has none. */
static void engine_text(const pq_file_meta *m, uint32_t i, pq_column_desc *d, bool *ok, char *buf, size_t cap)
{
    const pq_schema_element *e = &m->schema[i];
    pa_err err;
    pa_err_init(&err);
    *ok = pq_element_type(e, e->name, d, &err) == PA_OK;
    if (*ok)
        pa_type_format(d->type, buf, cap);
    else
        snprintf(buf, cap, "unsupported");
    pa_err_close(&err);
}

static void print_schema(const pq_file_meta *m)
{
    printf("schema: %u columns\n", m->n_leaves);
    printf("  %-4s %-24s %-22s %-18s %-16s %-10s %s\n", "col", "name", "physical", "logical", "converted",
           "repetition", "engine type");
    uint32_t leaf = 0;
    /* Depth of each element from the num_children counts (validated). */
    int depth = 0;
    int64_t left[64] = {0};
    left[0] = m->schema[0].num_children;
    for (uint32_t i = 1; i < m->n_schema; i++) {
        while (depth > 0 && left[depth] == 0)
            depth--;
        left[depth]--;
        const pq_schema_element *e = &m->schema[i];
        char phys[40], lt[48], ct[24], rep[16], eng[48], t1[16];
        bool group = leaf >= m->n_leaves || m->leaves[leaf].schema_index != i;
        if (group)
            snprintf(phys, sizeof phys, "group(%d)", e->num_children);
        else if (e->type == PQ_T_FIXED_LEN_BYTE_ARRAY)
            snprintf(phys, sizeof phys, "FIXED_LEN_BYTE_ARRAY(%d)", e->type_length);
        else
            snprintf(phys, sizeof phys, "%s", or_num(pq_physical_type_name(e->type), e->type, t1, sizeof t1));
        logical_text(e, lt, sizeof lt);
        snprintf(ct, sizeof ct, "%s", e->has_converted_type
                 ? or_num(pq_converted_type_name(e->converted_type), e->converted_type, t1, sizeof t1) : "-");
        snprintf(rep, sizeof rep, "%s", e->has_repetition
                 ? or_num(pq_repetition_name(e->repetition), e->repetition, t1, sizeof t1) : "-");
        char col[16] = "";
        if (!group) {
            pq_column_desc d;
            bool ok;
            engine_text(m, i, &d, &ok, eng, sizeof eng);
            if (ok && m->leaves[leaf].max_rep_level + (strchr(m->leaves[leaf].path, '.') != NULL) > 0)
                snprintf(eng, sizeof eng, "unsupported (nested)");
            snprintf(col, sizeof col, "%u", leaf);
            leaf++;
        } else {
            snprintf(eng, sizeof eng, "-");
        }
        printf("  %-4s %*s%-*s %-22s %-18s %-16s %-10s %s\n", col, 2 * depth, "", 24 - 2 * depth, e->name,
               phys, lt, ct, rep, eng);
        if (group && depth < 63)
            left[++depth] = e->num_children;
    }
}

/* Statistics values as text for column c of a chunk; "-" when absent. */
static void stat_values(const pq_column_desc *d, bool ok, const pq_statistics *s, bool legacy,
                        char *min, char *max, size_t cap)
{
    pq_bin lo = legacy ? s->min : s->min_value, hi = legacy ? s->max : s->max_value;
    pq_column_desc raw = *d;
    if (!ok) {   /* no engine type: show the physical value (integers, escaped bytes) */
        bool ints = d->physical_type == PQ_T_INT32 || d->physical_type == PQ_T_INT64;
        raw.type = (pa_type){ints ? PA_TYPE_BIGINT : PA_TYPE_VARCHAR, 0, 0};
    }
    min[0] = max[0] = '\0';
    if (lo.ptr)
        pq_stat_format(&raw, lo, min, cap);
    if (hi.ptr)
        pq_stat_format(&raw, hi, max, cap);
}

static void clip(char *s, size_t n)
{
    if (strlen(s) > n)
        strcpy(s + n - 3, "...");
}

static int print_pages(const pq_file_meta *m, uint32_t g, uint32_t c, const pq_column_desc *d, bool ok)
{
    pa_err err;
    pa_err_init(&err);
    uint8_t *chunk = NULL;
    pq_page_info *pages = NULL;
    uint32_t n = 0;
    int rc = pq_chunk_pages_read(m, g, c, &chunk, &pages, &n, &err);
    if (rc) {
        cli_fail(&err);
        pa_err_close(&err);
        return rc;
    }
    for (uint32_t i = 0; i < n; i++) {
        const pq_page_header *h = &pages[i].header;
        char t1[16], t2[16], t3[16], extra[200] = "", mn[64], mx[64];
        const pq_statistics *st = NULL;
        if (h->type == PQ_PAGE_DICTIONARY_PAGE) {
            snprintf(extra, sizeof extra, "%d values, %s%s", h->dictionary_page.num_values,
                     or_num(pq_encoding_name(h->dictionary_page.encoding), h->dictionary_page.encoding, t1, sizeof t1),
                     h->dictionary_page.is_sorted ? ", sorted" : "");
        } else if (h->type == PQ_PAGE_DATA_PAGE) {
            const pq_data_page_header *dp = &h->data_page;
            snprintf(extra, sizeof extra, "%d values, %s, levels def %s rep %s", dp->num_values,
                     or_num(pq_encoding_name(dp->encoding), dp->encoding, t1, sizeof t1),
                     or_num(pq_encoding_name(dp->definition_level_encoding), dp->definition_level_encoding, t2, sizeof t2),
                     or_num(pq_encoding_name(dp->repetition_level_encoding), dp->repetition_level_encoding, t3, sizeof t3));
            st = dp->has_statistics ? &dp->statistics : NULL;
        } else if (h->type == PQ_PAGE_DATA_PAGE_V2) {
            const pq_data_page_header_v2 *v2 = &h->data_page_v2;
            snprintf(extra, sizeof extra, "%d values, %d nulls, %d rows, %s, levels %d+%d bytes%s", v2->num_values,
                     v2->num_nulls, v2->num_rows, or_num(pq_encoding_name(v2->encoding), v2->encoding, t1, sizeof t1),
                     v2->definition_levels_byte_length, v2->repetition_levels_byte_length,
                     v2->is_compressed ? "" : ", values not compressed");
            st = v2->has_statistics ? &v2->statistics : NULL;
        }
        printf("      page %u at byte %llu: %s, header %u bytes, %d bytes (%d uncompressed), %s", i,
               (unsigned long long)pages[i].offset,
               or_num(pq_page_type_name(h->type), h->type, t1, sizeof t1), pages[i].header_len,
               h->compressed_page_size, h->uncompressed_page_size, extra);
        if (st) {
            bool legacy = !st->min_value.ptr && st->min.ptr;
            stat_values(d, ok, st, legacy, mn, mx, sizeof mn);
            clip(mn, 24);
            clip(mx, 24);
            if (st->min_value.ptr || st->min.ptr)
                printf(", min %s max %s", mn, mx);
            if (st->has_null_count)
                printf(", nulls %lld", (long long)st->null_count);
        }
        if (h->has_crc)
            printf(", crc %08x", (uint32_t)h->crc);
        printf("\n");
    }
    pa_free(pages);
    pa_free(chunk);
    pa_err_close(&err);
    return PA_OK;
}

static int print_meta(const pq_file_meta *m, bool pages)
{
    char b1[32], b2[32];
    printf("file:       %s\n", m->path);
    printf("size:       %llu bytes (%s), footer %u bytes\n", (unsigned long long)m->file_size,
           pa_format_size(m->file_size, b1, sizeof b1), m->footer_len);
    printf("created by: %s\n", m->created_by ? m->created_by : "-");
    printf("version:    %d\n", m->version);
    printf("rows:       %lld in %u row group%s\n", (long long)m->num_rows, m->n_row_groups,
           m->n_row_groups == 1 ? "" : "s");
    for (uint32_t i = 0; i < m->n_key_value_metadata; i++) {
        char v[80];
        snprintf(v, sizeof v, "%s", m->key_value_metadata[i].value ? m->key_value_metadata[i].value : "");
        clip(v, 60);
        printf("metadata:   %s = %s\n", m->key_value_metadata[i].key, v);
    }
    printf("\n");
    print_schema(m);
    int rc = PA_OK;
    for (uint32_t g = 0; g < m->n_row_groups; g++) {
        const pq_row_group *rg = &m->row_groups[g];
        printf("\nrow group %u: %lld rows, %lld bytes uncompressed", g, (long long)rg->num_rows,
               (long long)rg->total_byte_size);
        if (rg->has_total_compressed_size)
            printf(", %lld compressed", (long long)rg->total_compressed_size);
        if (rg->has_file_offset)
            printf(", at byte %lld", (long long)rg->file_offset);
        printf("\n  %-4s %-18s %-12s %-26s %8s %11s %12s %10s %10s %-24s %-24s %6s %s\n", "col", "name", "codec",
               "encodings", "values", "compressed", "uncompressed", "dict at", "data at", "min", "max", "nulls",
               "page index");
        for (uint32_t c = 0; c < rg->n_columns; c++) {
            const pq_column_chunk *cc = &rg->columns[c];
            const pq_column_meta *cm = &cc->meta_data;
            pq_column_desc d;
            bool ok;
            char eng[48], enc[128], mn[200], mx[200], nulls[24] = "-", dict[24] = "-", pidx[24] = "-", name[40];
            engine_text(m, m->leaves[c].schema_index, &d, &ok, eng, sizeof eng);
            encodings_text(cm, ",", enc, sizeof enc);
            bool legacy = cm->has_statistics && !cm->statistics.min_value.ptr && cm->statistics.min.ptr;
            stat_values(&d, ok, &cm->statistics, legacy, mn, mx, sizeof mn);
            if (!cm->has_statistics || !mn[0])
                snprintf(mn, sizeof mn, "-");
            if (!cm->has_statistics || !mx[0])
                snprintf(mx, sizeof mx, "-");
            clip(mn, 24);
            clip(mx, 24);
            snprintf(name, sizeof name, "%s", m->leaves[c].path);
            clip(name, 18);
            if (cm->has_statistics && cm->statistics.has_null_count)
                snprintf(nulls, sizeof nulls, "%lld", (long long)cm->statistics.null_count);
            if (cm->has_dictionary_page_offset)
                snprintf(dict, sizeof dict, "%lld", (long long)cm->dictionary_page_offset);
            bool oi = cc->has_offset_index_offset, ci = cc->has_column_index_offset;
            if (oi || ci)
                snprintf(pidx, sizeof pidx, "%s%s%s", oi ? "offset" : "", oi && ci ? "+" : "", ci ? "column" : "");
            printf("  %-4u %-18s %-12s %-26s %8lld %11lld %12lld %10s %10lld %-24s %-24s %6s %s\n", c, name,
                   or_num(pq_codec_name(cm->codec), cm->codec, b2, sizeof b2), enc, (long long)cm->num_values,
                   (long long)cm->total_compressed_size, (long long)cm->total_uncompressed_size, dict,
                   (long long)cm->data_page_offset, mn, mx, nulls, pidx);
            if (pages && (rc = print_pages(m, g, c, &d, ok)))
                return rc;
        }
    }
    return PA_OK;
}

/* One line per column chunk, named like DuckDB's parquet_metadata() columns. */
static void print_csv(const pq_file_meta *m, bool header)
{
    if (header)
        printf("row_group_id|column_id|path_in_schema|type|num_values|compression|encodings|"
               "total_compressed_size|total_uncompressed_size|dictionary_page_offset|data_page_offset|"
               "stats_null_count|stats_min|stats_max|stats_min_value|stats_max_value|"
               "has_offset_index|has_column_index\n");
    for (uint32_t g = 0; g < m->n_row_groups; g++) {
        for (uint32_t c = 0; c < m->row_groups[g].n_columns; c++) {
            const pq_column_chunk *cc = &m->row_groups[g].columns[c];
            const pq_column_meta *cm = &cc->meta_data;
            pq_column_desc d;
            bool ok;
            char eng[48], enc[128], t1[16], t2[16], dict[24] = "", nulls[24] = "";
            char mn[4096], mx[4096], mnv[4096], mxv[4096];
            engine_text(m, m->leaves[c].schema_index, &d, &ok, eng, sizeof eng);
            encodings_text(cm, ", ", enc, sizeof enc);
            stat_values(&d, ok, &cm->statistics, true, mn, mx, sizeof mn);
            stat_values(&d, ok, &cm->statistics, false, mnv, mxv, sizeof mnv);
            if (cm->has_dictionary_page_offset)
                snprintf(dict, sizeof dict, "%lld", (long long)cm->dictionary_page_offset);
            if (cm->statistics.has_null_count)
                snprintf(nulls, sizeof nulls, "%lld", (long long)cm->statistics.null_count);
            printf("%u|%u|%s|%s|%lld|%s|%s|%lld|%lld|%s|%lld|%s|%s|%s|%s|%s|%s|%s\n", g, c, m->leaves[c].path,
                   or_num(pq_physical_type_name(cm->type), cm->type, t1, sizeof t1), (long long)cm->num_values,
                   or_num(pq_codec_name(cm->codec), cm->codec, t2, sizeof t2), enc,
                   (long long)cm->total_compressed_size, (long long)cm->total_uncompressed_size, dict,
                   (long long)cm->data_page_offset, nulls, mn, mx, mnv, mxv,
                   cc->has_offset_index_offset ? "true" : "false", cc->has_column_index_offset ? "true" : "false");
        }
    }
}

static int cmd_meta(int argc, char **argv)
{
    bool pages = false, csv = false;
    int first = -1;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--pages"))
            pages = true;
        else if (!strcmp(argv[i], "--csv"))
            csv = true;
        else if (argv[i][0] == '-' && argv[i][1])
            return cli_usage("parquet meta: unknown option '%s'", argv[i]);
        else if (first < 0)
            first = i;
    }
    if (first < 0)
        return cli_usage("usage: pista parquet meta [--pages | --csv] FILE...");
    if (pages && csv)
        return cli_usage("parquet meta: --pages and --csv cannot be combined");
    int status = 0;
    bool header = true;
    for (int i = first; i < argc; i++) {
        if (argv[i][0] == '-' && argv[i][1])
            continue;
        pa_err err;
        pa_err_init(&err);
        const pq_file_meta *m = NULL;
        if (pq_meta_get(argv[i], &m, &err) != PA_OK) {
            fflush(stdout);
            status = cli_fail(&err);
        } else {
            if (csv) {
                print_csv(m, header);
                header = false;
            } else {
                if (i > first)
                    printf("\n");
                if (print_meta(m, pages) != PA_OK)
                    status = 1;
            }
            pq_file_meta_release(m);
        }
        pa_err_close(&err);
    }
    pq_meta_cache_clear();
    return status;
}

int cli_cmd_parquet(int argc, char **argv)
{
    if (argc < 1 || !strcmp(argv[0], "-h") || !strcmp(argv[0], "--help")) {
        fprintf(argc < 1 ? stderr : stdout,
                "usage: pista parquet meta [--pages | --csv] FILE...\n"
                "       pista parquet cat FILE|DIR|GLOB... [--columns a,b] [--where \"col op value\"]...\n"
                "             [--limit N] [--format csv|table] [--stats] (cat --help for more)\n"
                "  cat      print the rows of Parquet files (scan with projection and predicates)\n"
                "  meta     print a Parquet file's footer: schema and engine types, row groups,\n"
                "           column chunks (codec, encodings, sizes, statistics, page index)\n"
                "  --pages  also list every page header of every column chunk\n"
                "  --csv    one '|'-separated line per column chunk (DuckDB parquet_metadata names)\n");
        return argc < 1 ? 2 : 0;
    }
    if (!strcmp(argv[0], "meta"))
        return cmd_meta(argc - 1, argv + 1);
    if (!strcmp(argv[0], "cat"))
        return cli_parquet_cat(argc - 1, argv + 1);
    if (!strcmp(argv[0], "write-test"))   /* hidden: test files for the DuckDB oracle */
        return cli_parquet_write_test(argc - 1, argv + 1);
    if (!strcmp(argv[0], "copy"))   /* hidden: a scan written back by the writer */
        return cli_parquet_copy(argc - 1, argv + 1);
    return cli_usage("parquet: unknown subcommand '%s' (try: pista parquet meta FILE, pista parquet cat FILE)", argv[0]);
}

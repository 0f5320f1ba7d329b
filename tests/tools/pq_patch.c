/*
 * pq_patch.c - a test tool that damages Parquet files on purpose, through the
 * storage layer's own footer decoder and encoder, for the corrupt-file cases
 * of tests/sh/test_parquet_codecs.sh. Not installed; tests find it in the
 * build folder.
 *
 *   pq_patch IN OUT uncompressed COL VALUE   set total_uncompressed_size of
 *                                            leaf COL in every row group
 *   pq_patch IN OUT repetition COL required|optional
 *                                            set the leaf's repetition type
 *   pq_patch IN OUT flip COL PAGE AT         invert byte AT of the stored
 *                                            body of page PAGE (0 = first,
 *                                            dictionary included) of leaf COL
 *                                            in row group 0
 *   pq_patch IN OUT int96 COL                make FIXED_LEN_BYTE_ARRAY(12) leaf
 *                                            COL (DuckDB's INTERVAL) an INT96
 *                                            one: same page bytes, no
 *                                            annotation, statistics dropped
 *   pq_patch IN OUT nological COL            drop the leaf's LogicalType,
 *                                            keeping its ConvertedType
 *   pq_patch IN OUT tsmillis COL             annotate INT64 leaf COL as
 *                                            TIMESTAMP(MILLIS) only, its
 *                                            statistics dropped
 *   pq_patch IN OUT timemillis COL           annotate INT32 leaf COL as
 *                                            TIME(MILLIS) only (statistics
 *                                            kept: the same int32 order)
 *   pq_patch IN - pages                      print, per page of every chunk,
 *                                            "rg col page body_offset body_len crc"
 *                                            (crc unsigned, "-" when absent)
 */
#include "storage/storage.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(n > 0 ? (size_t)n : 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return b;
}

/* Write the pieces a, b, c (c may be NULL) as the file at path. */
static int put(const char *path, const uint8_t *a, size_t na, const uint8_t *b, size_t nb,
               const uint8_t *c, size_t nc)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return 1;
    bool ok = fwrite(a, 1, na, f) == na && (!nb || fwrite(b, 1, nb, f) == nb) &&
              (!nc || fwrite(c, 1, nc, f) == nc);
    return (fclose(f) != 0 || !ok) ? 1 : 0;
}

/* Write file's data part, then m's footer, its length and the magic. */
static int rewrite(const char *out, const uint8_t *file, size_t len, pq_file_meta *m, pa_err *err)
{
    pq_buf b = {0};
    if (pq_file_meta_encode(m, &b, err) != PA_OK)
        return 1;
    uint8_t tail[8] = {(uint8_t)b.len, (uint8_t)(b.len >> 8), (uint8_t)(b.len >> 16), (uint8_t)(b.len >> 24),
                       'P', 'A', 'R', '1'};
    int rc = put(out, file, len - 8 - m->footer_len, b.data, b.len, tail, 8);
    pq_buf_free(&b);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: pq_patch IN OUT uncompressed|repetition|int96|nological|tsmillis|timemillis|flip|pages ARGS...\n");
        return 2;
    }
    const char *in = argv[1], *out = argv[2], *cmd = argv[3];
    pa_err err;
    pa_err_init(&err);
    pq_file_meta *m;
    size_t len;
    uint8_t *file = slurp(in, &len);
    if (!file || pq_footer_read(in, &m, &err) != PA_OK) {
        fprintf(stderr, "pq_patch: %s: %s\n", in, file ? err.msg : "cannot read");
        return 1;
    }
    int rc = 0;
    uint32_t col = argc > 4 ? (uint32_t)strtoul(argv[4], NULL, 10) : 0;
    if (argc > 4 && col >= m->n_leaves) {
        fprintf(stderr, "pq_patch: no leaf column %u\n", col);
        return 1;
    }
    if (!strcmp(cmd, "uncompressed") && argc == 6) {
        for (uint32_t g = 0; g < m->n_row_groups; g++)
            m->row_groups[g].columns[col].meta_data.total_uncompressed_size = strtoll(argv[5], NULL, 10);
        rc = rewrite(out, file, len, m, &err);
    } else if (!strcmp(cmd, "repetition") && argc == 6) {
        pq_schema_element *e = &m->schema[m->leaves[col].schema_index];
        e->repetition = !strcmp(argv[5], "required") ? PQ_REP_REQUIRED : PQ_REP_OPTIONAL;
        e->has_repetition = true;
        rc = rewrite(out, file, len, m, &err);
    } else if (!strcmp(cmd, "int96") && argc == 5) {
        pq_schema_element *e = &m->schema[m->leaves[col].schema_index];
        if (e->type != PQ_T_FIXED_LEN_BYTE_ARRAY || e->type_length != 12) {
            fprintf(stderr, "pq_patch: leaf %u is not a FIXED_LEN_BYTE_ARRAY(12)\n", col);
            rc = 1;
        } else {
            e->type = PQ_T_INT96;
            e->has_type_length = false;
            e->type_length = 0;
            e->has_converted_type = false;
            e->logical.kind = PQ_LT_NONE;
            for (uint32_t g = 0; g < m->n_row_groups; g++) {
                pq_column_meta *cm = &m->row_groups[g].columns[col].meta_data;
                cm->type = PQ_T_INT96;
                memset(&cm->statistics, 0, sizeof cm->statistics);
                cm->has_statistics = false;
            }
            rc = rewrite(out, file, len, m, &err);
        }
    } else if (!strcmp(cmd, "nological") && argc == 5) {
        m->schema[m->leaves[col].schema_index].logical.kind = PQ_LT_NONE;
        rc = rewrite(out, file, len, m, &err);
    } else if (!strcmp(cmd, "tsmillis") && argc == 5) {
        pq_schema_element *e = &m->schema[m->leaves[col].schema_index];
        e->has_converted_type = false;
        e->logical = (pq_logical_type){.kind = PQ_LT_TIMESTAMP, .unit = PQ_TU_MILLIS};
        for (uint32_t g = 0; g < m->n_row_groups; g++) {
            pq_column_meta *cm = &m->row_groups[g].columns[col].meta_data;
            memset(&cm->statistics, 0, sizeof cm->statistics);
            cm->has_statistics = false;
        }
        rc = rewrite(out, file, len, m, &err);
    } else if (!strcmp(cmd, "timemillis") && argc == 5) {
        pq_schema_element *e = &m->schema[m->leaves[col].schema_index];
        e->has_converted_type = false;
        e->logical = (pq_logical_type){.kind = PQ_LT_TIME, .unit = PQ_TU_MILLIS};
        rc = rewrite(out, file, len, m, &err);
    } else if (!strcmp(cmd, "flip") && argc == 7) {
        uint8_t *chunk;
        pq_page_info *pages;
        uint32_t n, page = (uint32_t)strtoul(argv[5], NULL, 10);
        size_t at = strtoul(argv[6], NULL, 10);
        if (pq_chunk_pages_read(m, 0, col, &chunk, &pages, &n, &err) != PA_OK)
            rc = 1;
        else {
            if (page >= n || at >= (size_t)pages[page].header.compressed_page_size) {
                fprintf(stderr, "pq_patch: no byte %zu in page %u (%u pages)\n", at, page, n);
                rc = 1;
            } else {
                file[pages[page].offset + pages[page].header_len + at] ^= 0xFF;
                rc = put(out, file, len, NULL, 0, NULL, 0);
            }
            pa_free(chunk);
            pa_free(pages);
        }
    } else if (!strcmp(cmd, "pages")) {
        for (uint32_t g = 0; g < m->n_row_groups && !rc; g++)
            for (uint32_t c = 0; c < m->n_leaves && !rc; c++) {
                uint8_t *chunk;
                pq_page_info *pages;
                uint32_t n;
                if (pq_chunk_pages_read(m, g, c, &chunk, &pages, &n, &err) != PA_OK) {
                    rc = 1;
                    break;
                }
                for (uint32_t p = 0; p < n; p++) {
                    const pq_page_header *h = &pages[p].header;
                    printf("%u %u %u %llu %d ", g, c, p,
                           (unsigned long long)(pages[p].offset + pages[p].header_len), h->compressed_page_size);
                    if (h->has_crc)
                        printf("%u\n", (unsigned)h->crc);
                    else
                        printf("-\n");
                }
                pa_free(chunk);
                pa_free(pages);
            }
    } else {
        fprintf(stderr, "pq_patch: bad command %s\n", cmd);
        rc = 2;
    }
    if (rc == 1 && err.code)
        fprintf(stderr, "pq_patch: %s\n", err.msg);
    pq_file_meta_release(m);
    free(file);
    return rc;
}

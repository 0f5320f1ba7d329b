/*
 * fuzz_parquet.c - libFuzzer target over Parquet footer and page decoding.
 *
 * The input is a whole file. It goes through what a scan does with a file's
 * bytes: footer parse and validation, schema mapping, the page-header walk of
 * every column chunk, decompression, dictionary and data page decoding. Any
 * outcome but a crash, a sanitizer report or a leak is fine. Claims that are
 * legal but huge (a page of 10^9 values) are skipped so the fuzzer spends its
 * time on parsing, not on allocating.
 *
 * Every fourth input (by its length; every input with PISTA_FUZZ_DEVICE=1,
 * none with PISTA_FUZZ_DEVICE=0)
 * also drives the device decoders under
 * the SIMT emulation: each data page the host decoded (or refused) that
 * kn_decode_pages takes is decoded again on a `sim` device, and the two must
 * agree, the status and, when both decoded it, every value and validity bit
 * (abort() otherwise, which the fuzzer reports as a crash).
 */
#include "kernels/kernels.h"
#include "kernels/kernels_int.h"
#include "storage/storage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROWS (1u << 20)
#define MAX_BYTES (16u << 20)

typedef struct dict_buf {
    kn_dict dict;
    void *values;
    int32_t *offsets;
    uint8_t *bytes;
} dict_buf;

static void dict_free(dict_buf *d)
{
    free(d->values);
    free(d->offsets);
    free(d->bytes);
    memset(d, 0, sizeof *d);
}

/* ------------------------------------------------ the device differential */

static dv_device *sim_dev;
static dv_stream *sim_stream;
static int device_turn;   /* this input also runs the device decoders */

static bool sim_open(void)
{
    if (sim_dev)
        return true;
    dv_options o = {.spec = "sim", .cpu_threads = 1};
    if (dv_open(&o, &sim_dev, NULL) != PA_OK)
        return false;
    if (dv_stream_create(sim_dev, &sim_stream, NULL) != PA_OK) {
        dv_close(sim_dev);
        sim_dev = NULL;
        return false;
    }
    return true;
}

static void *up(const void *host, size_t n)
{
    void *d = NULL;
    if (dv_alloc(sim_dev, n ? n : 1, &d, NULL) != PA_OK)
        abort();
    if (n && dv_copy_async(sim_stream, d, host, n, DV_COPY_H2D, NULL) != PA_OK)
        abort();
    return d;
}

/* The page pg (uncompressed; v2: its levels at pg->levels) decoded by the
 * host with status host_rc into host_out (rows rows): decode it on sim too
 * and compare. */
static void device_compare(const kn_page *pg, const kn_column *col, const kn_dict *dict, int host_rc,
                           const kn_out *host_out, uint64_t rows)
{
    kn_page_job j;
    memset(&j, 0, sizeof j);
    j.codec = KN_CODEC_UNCOMPRESSED;
    j.page = *pg;
    j.col = *col;
    bool is_dict = pg->encoding == KN_ENC_PLAIN_DICTIONARY || pg->encoding == KN_ENC_RLE_DICTIONARY;
    if (!kn_decode_pages_supported(&j) || (is_dict && !dict) || !sim_open())
        return;
    bool str = pa_type_is_varlen(col->type.id);
    /* The width the decoders write: INT64 pages into a DECIMAL(20,0) (UINT64)
     * come out as 8-byte values, widened later by the scan's host fixup. */
    kn__colinfo ci;
    if (kn__colinfo_get(col, &ci, NULL) != PA_OK)
        return;
    int w = str ? 0 : ci.out_width;
    uint64_t lv = pg->version == 2 ? (uint64_t)pg->rep_levels_size + pg->def_levels_size : 0;
    size_t total = (size_t)(lv + pg->size);
    uint8_t *bytes = malloc(total + 1);
    if (lv)
        memcpy(bytes, pg->levels, (size_t)lv);
    if (pg->size)
        memcpy(bytes + lv, pg->data, (size_t)pg->size);
    void *dsrc = up(bytes, total), *ddict = NULL, *dscr = NULL, *dvals, *dvalid, *djob;
    j.src = dsrc;
    j.src_size = total;
    j.uncompressed_size = total;
    j.page.data = NULL;
    j.page.levels = NULL;
    if (is_dict && str) {   /* offsets, then bytes, in one buffer */
        size_t ob = ((size_t)dict->n + 1) * 4, db = ob + (size_t)dict->offsets[dict->n];
        uint8_t *h = malloc(db + 1);
        memcpy(h, dict->offsets, ob);
        memcpy(h + ob, dict->bytes, db - ob);
        ddict = up(h, db);
        if (dv_stream_sync(sim_stream, NULL) != PA_OK)
            abort();
        free(h);
        j.dict = (kn_dict){NULL, ddict, (uint8_t *)ddict + ob, dict->n};
    } else if (is_dict) {
        ddict = up(dict->values, (size_t)dict->n * (size_t)w);
        j.dict = (kn_dict){ddict, NULL, NULL, dict->n};
    }
    /* indices, offsets, DELTA's values, RLE booleans' runs (as the scan's scratch_bytes) */
    if (is_dict || str || pg->encoding == KN_ENC_DELTA_BINARY_PACKED || pg->encoding == KN_ENC_RLE) {
        j.scratch_size = (rows + 1) * 12;
        if (dv_alloc(sim_dev, (size_t)j.scratch_size, &dscr, NULL) != PA_OK)
            abort();
        j.scratch = dscr;
    }
    /* Strings: the bytes the host measured, the offsets from 0. */
    size_t vb = str ? (size_t)host_out->bytes_capacity + 1 : (size_t)(rows + 1) * (size_t)w;
    size_t ob = str ? (size_t)(rows + 1) * 4 : 0, wb = (size_t)(rows + 31) / 32 * 4 + 4;
    void *doffs = NULL;
    int32_t zero = 0;
    if (dv_alloc(sim_dev, vb, &dvals, NULL) != PA_OK || dv_alloc(sim_dev, wb, &dvalid, NULL) != PA_OK ||
        (str && dv_alloc(sim_dev, ob, &doffs, NULL) != PA_OK))
        abort();
    if (str && dv_copy_async(sim_stream, doffs, &zero, 4, DV_COPY_H2D, NULL) != PA_OK)
        abort();
    j.out = str ? (kn_out){NULL, doffs, dvals, col->max_def_level > 0 ? dvalid : NULL, rows, host_out->bytes_capacity}
                : (kn_out){dvals, NULL, NULL, col->max_def_level > 0 ? dvalid : NULL, rows, 0};
    djob = up(&j, sizeof j);
    kn_ctx kn = {sim_dev, sim_stream};
    int rc = kn_decode_pages(&kn, djob, 1, NULL);
    int rs = dv_stream_sync(sim_stream, NULL);
    dv_clear_fault(sim_dev);
    uint8_t *vals = malloc(vb), *valid = malloc(wb);
    int32_t *offs = str ? malloc(ob) : NULL;
    if ((str && dv_copy_async(sim_stream, offs, doffs, ob, DV_COPY_D2H, NULL) != PA_OK) ||
        dv_copy_async(sim_stream, &j, djob, sizeof j, DV_COPY_D2H, NULL) != PA_OK ||
        dv_copy_async(sim_stream, vals, dvals, vb, DV_COPY_D2H, NULL) != PA_OK ||
        dv_copy_async(sim_stream, valid, dvalid, wb, DV_COPY_D2H, NULL) != PA_OK ||
        dv_stream_sync(sim_stream, NULL) != PA_OK)
        abort();
    if (rc == PA_OK && rs != PA_OK)
        rc = rs;
    if (j.status != host_rc || (rc == PA_OK) != (host_rc == PA_OK)) {
        fprintf(stderr, "fuzz: device decode status %d (call %d), host %d (v%d, encoding %d, ptype %d)\n", j.status,
                rc, host_rc, pg->version, pg->encoding, col->ptype);
        abort();
    }
    if (host_rc == PA_OK) {
        const uint8_t *hv = host_out->values;
        for (uint64_t r = 0; r < rows; r++) {
            bool hvalid = !host_out->validity || ((host_out->validity[r >> 3] >> (r & 7)) & 1);
            bool dvd = col->max_def_level == 0 || ((valid[r >> 3] >> (r & 7)) & 1);
            bool same = !hvalid || (str ? offs[r + 1] == host_out->offsets[r + 1] &&
                                              memcmp(vals + offs[r], host_out->bytes + host_out->offsets[r],
                                                     (size_t)(offs[r + 1] - offs[r])) == 0
                                        : memcmp(hv + r * (uint64_t)w, vals + r * (uint64_t)w, (size_t)w) == 0);
            if (hvalid != dvd || !same || (str && offs[r + 1] != host_out->offsets[r + 1])) {
                fprintf(stderr, "fuzz: device decode differs from the host at row %llu (v%d, encoding %d, ptype %d, %s)\n",
                        (unsigned long long)r, pg->version, pg->encoding, col->ptype, pa_type_name(col->type.id));
                abort();
            }
        }
    }
    free(vals);
    free(valid);
    free(offs);
    free(bytes);
    if (doffs)
        dv_free(sim_dev, doffs);
    dv_free(sim_dev, dsrc);
    dv_free(sim_dev, djob);
    dv_free(sim_dev, dvals);
    dv_free(sim_dev, dvalid);
    if (ddict)
        dv_free(sim_dev, ddict);
    if (dscr)
        dv_free(sim_dev, dscr);
}

/* Decode n values of p[0..size) with `encoding` into fresh buffers. */
static int decode_flat(const kn_column *col, const kn_dict *dict, int encoding, const uint8_t *p, size_t size,
                       uint64_t n, dict_buf *out)
{
    uint64_t sbytes = 0;
    if (n > MAX_ROWS || kn_measure_values(encoding, col, dict, p, size, n, &sbytes, NULL) != PA_OK ||
        sbytes > MAX_BYTES)
        return -1;
    int w = pa_type_bytes(col->type);
    out->values = calloc(n + 1, w ? (size_t)w : 1);
    out->offsets = calloc(n + 1, sizeof(int32_t));
    out->bytes = malloc(sbytes + 1);
    kn_out o = {.values = out->values, .offsets = out->offsets, .bytes = out->bytes, .capacity = n,
                .bytes_capacity = sbytes};
    int rc = kn_decode_values(encoding, col, dict, p, size, n, &o, 0, NULL, NULL);
    out->dict = (kn_dict){.values = out->values, .offsets = out->offsets, .bytes = out->bytes, .n = n};
    return rc == PA_OK ? 0 : -1;
}

static void decode_data_page(const kn_column *col, const kn_dict *dict, const pq_page_header *h, int codec,
                             const uint8_t *src, size_t src_size)
{
    kn_page pg = {0};
    size_t usize = (size_t)h->uncompressed_page_size;
    if (h->uncompressed_page_size < 0 || usize > MAX_BYTES)
        return;
    uint8_t *scratch = malloc(usize + 1);
    const uint8_t *body = src;
    if (h->type == PQ_PAGE_DATA_PAGE && h->has_data_page) {
        if (codec != KN_CODEC_UNCOMPRESSED) {
            if (kn_decompress(codec, src, src_size, scratch, usize, NULL) != PA_OK)
                goto done;
            body = scratch;
        } else if (src_size != usize) {
            goto done;
        }
        pg = (kn_page){.version = 1, .encoding = h->data_page.encoding,
                       .def_level_encoding = h->data_page.definition_level_encoding,
                       .num_values = h->data_page.num_values, .data = body, .size = usize};
    } else if (h->type == PQ_PAGE_DATA_PAGE_V2 && h->has_data_page_v2) {
        const pq_data_page_header_v2 *v = &h->data_page_v2;
        uint64_t lv = (uint64_t)(uint32_t)v->definition_levels_byte_length +
                      (uint32_t)v->repetition_levels_byte_length;
        if (v->definition_levels_byte_length < 0 || v->repetition_levels_byte_length < 0 || lv > src_size ||
            lv > usize)
            goto done;
        const uint8_t *vals = src + lv;
        size_t vsize = src_size - lv, vusize = usize - lv;
        if (codec != KN_CODEC_UNCOMPRESSED && v->is_compressed) {
            if (kn_decompress(codec, vals, vsize, scratch, vusize, NULL) != PA_OK)
                goto done;
            vals = scratch;
            vsize = vusize;
        }
        pg = (kn_page){.version = 2, .encoding = v->encoding, .num_values = v->num_values,
                       .num_nulls = v->num_nulls, .data = vals, .size = vsize, .levels = src,
                       .rep_levels_size = (uint32_t)v->repetition_levels_byte_length,
                       .def_levels_size = (uint32_t)v->definition_levels_byte_length};
    } else {
        goto done;
    }
    kn_page_info info;
    if (pg.num_values < 0 || (uint64_t)pg.num_values > MAX_ROWS ||
        kn_page_measure(&pg, col, dict, &info, NULL) != PA_OK || info.rows > MAX_ROWS ||
        info.string_bytes > MAX_BYTES)
        goto done;
    int w = pa_type_bytes(col->type);
    kn_out o = {.capacity = info.rows, .bytes_capacity = info.string_bytes};
    o.values = calloc(info.rows + 1, w ? (size_t)w : 1);
    o.offsets = calloc(info.rows + 1, sizeof(int32_t));
    o.bytes = malloc(info.string_bytes + 1);
    o.validity = calloc(info.rows / 8 + 1, 1);
    int host_rc = kn_page_decode(&pg, col, dict, &o, 0, NULL);
    if (device_turn)
        device_compare(&pg, col, dict, host_rc, &o, info.rows);
    free(o.values);
    free(o.offsets);
    free(o.bytes);
    free(o.validity);
done:
    free(scratch);
}

static void decode_chunk(const pq_file_meta *m, const pq_column_desc *d, const pq_column_meta *cm,
                         const uint8_t *data, size_t size)
{
    int64_t start = pq_chunk_start(cm);
    if (start < 0 || cm->total_compressed_size < 0 || (uint64_t)start > size ||
        (uint64_t)cm->total_compressed_size > size - (uint64_t)start)
        return;
    const uint8_t *chunk = data + start;
    pq_page_info *pages = NULL;
    uint32_t n = 0;
    if (pq_chunk_pages(cm, chunk, (size_t)cm->total_compressed_size, "fuzz", &pages, &n, NULL) != PA_OK)
        return;
    const pq_leaf *leaf = &m->leaves[d->leaf_index];
    kn_column col = {.ptype = d->physical_type, .type_length = d->type_length, .type = d->type,
                     .max_def_level = leaf->max_def_level, .max_rep_level = leaf->max_rep_level};
    dict_buf dict = {0};
    int have_dict = 0;
    for (uint32_t i = 0; i < n; i++) {
        const pq_page_header *h = &pages[i].header;
        uint64_t at = pages[i].offset - (uint64_t)start + pages[i].header_len;
        if (h->compressed_page_size < 0 || at > (uint64_t)cm->total_compressed_size ||
            (uint64_t)h->compressed_page_size > (uint64_t)cm->total_compressed_size - at)
            break;
        const uint8_t *src = chunk + at;
        size_t src_size = (size_t)h->compressed_page_size;
        if (h->type == PQ_PAGE_DICTIONARY_PAGE && h->has_dictionary_page) {
            size_t usize = (size_t)h->uncompressed_page_size;
            if (h->uncompressed_page_size < 0 || usize > MAX_BYTES || have_dict)
                break;
            uint8_t *buf = malloc(usize + 1);
            const uint8_t *body = src;
            int ok = 1;
            if (cm->codec != KN_CODEC_UNCOMPRESSED) {
                ok = kn_decompress(cm->codec, src, src_size, buf, usize, NULL) == PA_OK;
                body = buf;
            } else {
                usize = src_size;
            }
            if (ok)
                have_dict = decode_flat(&col, NULL, KN_ENC_PLAIN, body, usize,
                                        (uint64_t)(uint32_t)h->dictionary_page.num_values, &dict) == 0;
            free(buf);
            if (!have_dict)
                break;
        } else {
            decode_data_page(&col, have_dict ? &dict.dict : NULL, h, cm->codec, src, src_size);
        }
    }
    dict_free(&dict);
    pa_free(pages);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pq_file_meta *m = NULL;
    size_t need = 0;
    /* PISTA_FUZZ_DEVICE=1: every input (the corpus replay test); =0: none
     * (long host-only runs: the emulated kernels are most of an input's
     * time when they run). */
    static int every = -2;
    if (every < -1) {
        const char *v = getenv("PISTA_FUZZ_DEVICE");
        every = v && !strcmp(v, "1") ? 1 : v && !strcmp(v, "0") ? -1 : 0;
    }
    device_turn = every > 0 || (every == 0 && size % 4 == 0);
    if (pq_footer_parse(data, size, size, "fuzz", &m, &need, NULL) != PA_OK)
        return 0;
    pq_column_desc *descs = NULL;
    uint32_t nd = 0;
    if (pq_schema_map(m, &descs, &nd, NULL) == PA_OK) {
        for (uint32_t rg = 0; rg < m->n_row_groups; rg++)
            for (uint32_t k = 0; k < nd; k++) {
                uint32_t c = descs[k].leaf_index;   /* the readable columns' chunks */
                if (!descs[k].unsupported[0] && c < m->row_groups[rg].n_columns &&
                    m->row_groups[rg].columns[c].has_meta_data)
                    decode_chunk(m, &descs[k], &m->row_groups[rg].columns[c].meta_data, data, size);
            }
        pa_free(descs);
    }
    pq_file_meta_release(m);
    return 0;
}

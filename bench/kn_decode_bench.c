/*
 * kn_decode_bench.c - single-thread throughput of the CPU Parquet page
 * kernels against a memcpy of the same output bytes (the ceiling). Built as
 * bench_kn_decode_bench: run build/normal/bench_kn_decode_bench.
 *
 * Each line: output MB/s (decoded bytes written per second), best of 5 runs,
 * and the ratio to memcpy.
 */
#include "kernels/kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N (1u << 22)   /* rows per page-sized run (4 Mi) */

static double best_of(int (*fn)(void *), void *ctx)
{
    double best = 1e30;
    for (int r = 0; r < 5; r++) {
        double t0 = pa_now_s();
        if (fn(ctx) != PA_OK) {
            fprintf(stderr, "kernel failed\n");
            exit(1);
        }
        double t = pa_now_s() - t0;
        if (t < best)
            best = t;
    }
    return best;
}

typedef struct job {
    kn_page pg;
    kn_column col;
    kn_dict *dict;
    kn_out out;
    const void *src;
    size_t n;
} job;

static int run_page(void *p)
{
    job *j = p;
    return kn_page_decode(&j->pg, &j->col, j->dict, &j->out, 0, NULL);
}

static int run_memcpy(void *p)
{
    job *j = p;
    memcpy(j->out.values, j->src, j->n);
    return PA_OK;
}

static void report(const char *name, double secs, size_t bytes, double ceiling)
{
    double mbs = (double)bytes / secs / 1e6;
    printf("%-44s %9.0f MB/s  %5.2fx memcpy\n", name, mbs, mbs / ceiling);
}

static void bench_fixed(const char *name, int enc, kn_column col, int distinct, int nulls,
                        double ceiling)
{
    int64_t *v = malloc(N * 8);
    uint8_t *valid = malloc(N / 8 + 1);
    uint32_t *sel = malloc(N * 4);
    size_t nv = 0;
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        v[i] = distinct ? (int64_t)(x % (uint64_t)distinct) : (int64_t)(i * 3 + (x & 7));
        bool ok = !nulls || (x >> 60) != 0;
        if (ok)
            sel[nv++] = (uint32_t)i;
        if (ok)
            valid[i / 8] |= (uint8_t)(1u << (i % 8));
        else
            valid[i / 8] &= (uint8_t)~(1u << (i % 8));
        if (!ok)
            v[i] = 0;   /* NULL rows decode to zero */
    }
    col.max_def_level = (int16_t)nulls;
    kn_values in = {v, NULL, NULL, N};
    uint8_t *page;
    size_t len = 0, dict_len;
    kn_dict dict = {0};
    int64_t *dvals = NULL;
    if (enc == KN_ENC_RLE_DICTIONARY) {
        size_t scr = kn_dict_build_scratch(nv);
        void *scratch = malloc(scr);
        uint32_t *rows = malloc(nv * 4), *idx = malloc(nv * 4);
        kn_dict_result res;
        kn_dict_build(&col, &in, sel, nv, NULL, scratch, scr, rows, idx, &res, NULL);
        dvals = malloc(res.n_entries * 8);
        for (uint32_t k = 0; k < res.n_entries; k++)
            dvals[k] = v[rows[k]];
        dict = (kn_dict){dvals, NULL, NULL, res.n_entries};
        size_t cap = 1 + kn_rle_encode_bound(nv, kn_dict_index_width(res.n_entries));
        page = malloc(cap + kn_rle_encode_bound(N, 1) + 4);
        dict_len = 0;
        size_t lv = 0;
        if (nulls)
            kn_encode_def_levels(valid, 0, N, true, page, kn_rle_encode_bound(N, 1) + 4, &lv, NULL);
        kn_encode_dict_indices(idx, nv, res.n_entries, page + lv, cap, &dict_len, NULL);
        len = lv + dict_len;
        free(scratch), free(rows), free(idx);
    } else {
        size_t cap = kn_encode_bound(enc, &col, &in, sel, nv);
        page = malloc(cap + kn_rle_encode_bound(N, 1) + 4);
        size_t lv = 0;
        if (nulls)
            kn_encode_def_levels(valid, 0, N, true, page, kn_rle_encode_bound(N, 1) + 4, &lv, NULL);
        kn_encode_values(enc, &col, &in, sel, nv, page + lv, cap, &len, NULL);
        len += lv;
    }
    int64_t *out = malloc(N * 8);
    uint8_t *ov = malloc(N / 8 + 1);
    job j = {.pg = {.version = 1, .encoding = enc, .def_level_encoding = KN_ENC_RLE,
                    .num_values = N, .data = page, .size = len},
             .col = col, .dict = dict.values ? &dict : NULL,
             .out = {.values = out, .validity = ov, .capacity = N}};
    double t = best_of(run_page, &j);
    report(name, t, (size_t)N * 8, ceiling);
    if (memcmp(out, v, N * 8) != 0)
        printf("  (mismatch!)\n");
    free(v), free(valid), free(sel), free(page), free(out), free(ov), free(dvals);
}

int main(void)
{
    int64_t *a = malloc(N * 8), *b = malloc(N * 8);
    memset(a, 1, N * 8);
    job m = {.out = {.values = b}, .src = a, .n = (size_t)N * 8};
    double ceiling = (double)N * 8 / best_of(run_memcpy, &m) / 1e6;
    printf("%-44s %9.0f MB/s\n", "memcpy (ceiling)", ceiling);
    kn_column c64 = {.ptype = KN_PT_INT64, .type = {.id = PA_TYPE_BIGINT}};
    bench_fixed("PLAIN int64, required", KN_ENC_PLAIN, c64, 0, 0, ceiling);
    bench_fixed("PLAIN int64, ~6% NULLs", KN_ENC_PLAIN, c64, 0, 1, ceiling);
    bench_fixed("DELTA_BINARY_PACKED int64 (sorted)", KN_ENC_DELTA_BINARY_PACKED, c64, 0, 0, ceiling);
    bench_fixed("RLE_DICTIONARY int64, 1000 entries", KN_ENC_RLE_DICTIONARY, c64, 1000, 0, ceiling);
    bench_fixed("RLE_DICTIONARY int64, 1000 entries, NULLs", KN_ENC_RLE_DICTIONARY, c64, 1000, 1, ceiling);
    bench_fixed("BYTE_STREAM_SPLIT int64", KN_ENC_BYTE_STREAM_SPLIT, c64, 0, 0, ceiling);
    free(a), free(b);
    return 0;
}

/*
 * cmd_bench_kernels.c - `pista bench kernels`: throughput of the relational
 * kernels on one device, next to that device's copy bandwidth measured in
 * the same run. Each kernel runs on columns of --rows rows (default 10^8 on
 * a GPU, fewer where the kernels run on host cores or under emulation);
 * bytes are what the kernel must read plus what it writes, and the copy
 * (device to device) is counted the same way, so the ratio says how close a
 * kernel comes to moving its bytes at memory speed. A kernel the device has
 * no implementation of is listed as such.
 */
#include "cli/cli.h"
#include "device/device.h"
#include "kernels/kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct kbench {
    dv_device *dev;
    dv_stream *s;
    kn_ctx ctx;
    int64_t rows;
    int repeat;
    pa_err err;
    /* device buffers */
    uint8_t *pred;
    int64_t *vals, *out;
    int32_t *sel, *idx;
    uint64_t *hashes;
    uint32_t *part;
    int64_t *count;   /* pinned */
    /* hash join: a table over the first rows/10 keys, probed with all */
    int64_t build_rows;
    kn_join_table table;
    void *table_mem, *probe_scratch;
    size_t scratch_size;
    kn_join_build_info *info;   /* pinned */
    kn_join_cursor *cur;        /* pinned */
    /* filter: the program `vals < rows / 2` and its scratch */
    kn_program *prog;
    void *eval_scratch;
    /* sort: records of the random INTEGER key idx, and the sort's scratch */
    kn_sort_layout layout;
    uint8_t *recs, *sort_scratch;
    /* page decompression: rows * 8 bytes of text in 1 MiB pages, per codec
     * (SNAPPY, LZ4_RAW) the compressed pages and their jobs */
    int64_t n_pages;
    uint8_t *comp[2];
    kn_codec_job *jobs[2];
    double comp_bytes[2];
} kbench;

typedef enum kb_op {
    KB_COPY, KB_SELECT, KB_FILTER, KB_GATHER, KB_TAKE, KB_HASH, KB_PARTITION, KB_BUILD, KB_PROBE, KB_SORT,
    KB_SNAPPY, KB_LZ4, KB_N
} kb_op;

static const char *const op_names[KB_N] = {
    "device->device copy", "select (BOOLEAN -> selection)", "filter (BIGINT < constant)",
    "gather BIGINT by selection", "take BIGINT by random index", "hash BIGINT key", "partition ids (256 ways)",
    "hash-join build (rows/10 keys)", "hash-join probe (INNER, 10% hit)", "sort INTEGER key (encode + sort)",
    "decompress SNAPPY 1 MiB pages", "decompress LZ4_RAW 1 MiB pages",
};

#define PAGE_BYTES (1 << 20)

/* The expression program `column 0 (BIGINT) < limit`: a CONST in the
 * prologue, then LOAD and CMP; laid out as src/exec/expr_compile.c does. */
static kn_program *less_than_program(int64_t limit)
{
#define AL16(n) (((n) + 15) & ~(size_t)15)   /* every part 16-aligned (kn_value holds an __int128) */
    size_t insns_at = AL16(sizeof(kn_program)), consts_at = AL16(insns_at + 3 * sizeof(kn_insn));
    size_t regs_at = AL16(consts_at + sizeof(kn_value)), inputs_at = AL16(regs_at + 3 * sizeof(uint32_t));
    size_t outputs_at = AL16(inputs_at + sizeof(pa_type)), at = AL16(outputs_at + sizeof(kn_output));
#undef AL16
    kn_program *p = pa_calloc(1, at);
    if (!p)
        return NULL;
    const pa_type big = {.id = PA_TYPE_BIGINT}, boolean = {.id = PA_TYPE_BOOLEAN};
    *p = (kn_program){.bytes = (uint32_t)at, .n_insns = 3, .n_prologue = 1, .n_consts = 1, .n_regs = 3,
                      .n_inputs = 1, .n_outputs = 1, .insns_at = (uint32_t)insns_at, .consts_at = (uint32_t)consts_at,
                      .reg_bytes_at = (uint32_t)regs_at, .inputs_at = (uint32_t)inputs_at,
                      .outputs_at = (uint32_t)outputs_at, .pool_at = (uint32_t)at, .pool_bytes = 0};
    kn_insn *in = (kn_insn *)((char *)p + insns_at);
    in[0] = (kn_insn){.op = KN_OP_CONST, .dst = 1, .a = 0, .b = -1, .c = -1, .type = big, .atype = big};
    in[1] = (kn_insn){.op = KN_OP_LOAD, .dst = 0, .a = -1, .b = -1, .c = -1, .imm = 0, .type = big, .atype = big};
    in[2] = (kn_insn){.op = KN_OP_CMP, .sub = KN_CMP_LT, .dst = 2, .a = 0, .b = 1, .c = -1, .type = boolean,
                      .atype = big};
    kn_value *c = (kn_value *)((char *)p + consts_at);
    c->type = big;
    c->v.i = limit;
    *(pa_type *)((char *)p + inputs_at) = big;
    *(kn_output *)((char *)p + outputs_at) = (kn_output){.reg = 2, .type = boolean};
    return p;
}

/* One call of op; *bytes = bytes it reads and writes. */
static int run_op(kbench *b, kb_op op, int64_t selected, double *bytes)
{
    int64_t n = b->rows;
    pa_column vcol = {.type = {.id = PA_TYPE_BIGINT}, .length = n, .data = b->vals};
    pa_column ocol = {.type = {.id = PA_TYPE_BIGINT}, .length = n, .data = b->out};
    switch (op) {
    case KB_COPY:
        *bytes = 2.0 * (double)n * 8;
        return dv_copy_async(b->s, b->out, b->vals, (size_t)n * 8, DV_COPY_D2D, &b->err);
    case KB_SELECT: {
        pa_column p = {.type = {.id = PA_TYPE_BOOLEAN}, .length = n, .data = b->pred};
        *bytes = (double)n + 4.0 * (double)selected;
        return kn_select(&b->ctx, &p, n, b->sel, b->count, &b->err);
    }
    case KB_FILTER:
        *bytes = (double)n * 8 + 4.0 * (double)n / 2;
        return kn_filter(&b->ctx, b->prog, &vcol, 1, n, b->sel, b->count, b->eval_scratch, NULL, 0, &b->err);
    case KB_SORT: {
        /* the key read, the records written, and one read and write of the
         * records: what an ideal sort moves */
        pa_column key = {.type = {.id = PA_TYPE_INTEGER}, .length = n, .data = b->idx};
        size_t st = b->layout.stride;
        *bytes = (double)n * (4 + 3.0 * (double)st);
        int rc = kn_sort_encode(&b->ctx, &b->layout, &key, n, 0, b->recs, &b->err);
        return rc != PA_OK ? rc : kn_sort_records(&b->ctx, &b->layout, b->recs, n, b->sort_scratch,
                                                  kn_sort_scratch_size(&b->layout, n), NULL, 0, &b->err);
    }
    case KB_GATHER:
        *bytes = (double)selected * (4 + 8 + 8);
        return kn_gather(&b->ctx, &vcol, b->sel, 0, selected, &ocol, 0, &b->err);
    case KB_TAKE:
        *bytes = (double)n * (4 + 8 + 8);
        return kn_take(&b->ctx, &vcol, b->idx, n, &ocol, &b->err);
    case KB_HASH:
        *bytes = (double)n * 16;
        return kn_hash_keys(&b->ctx, &vcol, 1, n, b->hashes, &b->err);
    case KB_PARTITION:
        *bytes = (double)n * 12;
        return kn_partition_ids(&b->ctx, b->hashes, n, 256, b->part, &b->err);
    case KB_BUILD:
        /* key and hash read, a 16-byte slot and the chain link written */
        *bytes = (double)b->build_rows * (8 + 8 + 16 + 4);
        return kn_join_build(&b->ctx, &b->table, b->hashes, &b->err);
    case KB_PROBE: {
        /* key, hash and slot read per probe row; the matches' two indexes */
        *bytes = (double)n * (8 + 8 + 16) + (double)b->build_rows * 8;
        memset(b->cur, 0, sizeof *b->cur);
        return kn_join_probe(&b->ctx, &b->table, KN_JOIN_INNER, &vcol, b->hashes, n, b->probe_scratch,
                             b->scratch_size, b->cur, n, b->sel, (int32_t *)b->part, NULL, NULL, &b->err);
    }
    case KB_SNAPPY:
    case KB_LZ4: {
        /* compressed pages read, the text written */
        int k = op == KB_LZ4;
        *bytes = b->comp_bytes[k] + (double)n * 8;
        return kn_decompress_pages(&b->ctx, b->jobs[k], b->n_pages, &b->err);
    }
    default: return pa_error(&b->err, PA_EINVAL, "unknown kernel benchmark %d", (int)op);
    }
}

/* Warm up once, then time `repeat` calls; GB/s. */
static int time_op(kbench *b, kb_op op, int64_t selected, double *gbs)
{
    double bytes = 0;
    int rc;
    if ((rc = run_op(b, op, selected, &bytes)) != PA_OK || (rc = dv_stream_sync(b->s, &b->err)) != PA_OK)
        return rc;
    uint64_t t0 = pa_now_ns();
    for (int i = 0; i < b->repeat; i++)
        if ((rc = run_op(b, op, selected, &bytes)) != PA_OK)
            return rc;
    if ((rc = dv_stream_sync(b->s, &b->err)) != PA_OK)
        return rc;
    double secs = (double)(pa_now_ns() - t0) * 1e-9;
    *gbs = bytes * b->repeat / secs / 1e9;
    return PA_OK;
}

static uint64_t lcg(uint64_t *x) { return *x = *x * 6364136223846793005ull + 1442695040888963407ull; }

/* Inputs made on the host and uploaded: half the predicate true (random),
 * values 0..n-1, a random permutation of the rows as take's index. */
static int make_inputs(kbench *b)
{
    int64_t n = b->rows;
    size_t big = (size_t)n * 8;
    uint8_t *h = NULL;
    int rc;
    if ((rc = dv_host_alloc(b->dev, big, (void **)&h, &b->err)) != PA_OK)
        return rc;
    uint64_t seed = 7;
    for (int64_t i = 0; i < n; i++)
        h[i] = (uint8_t)(lcg(&seed) >> 63);
    if ((rc = dv_copy_async(b->s, b->pred, h, (size_t)n, DV_COPY_H2D, &b->err)) != PA_OK ||
        (rc = dv_stream_sync(b->s, &b->err)) != PA_OK)
        goto out;
    int64_t *v = (int64_t *)(void *)h;
    for (int64_t i = 0; i < n; i++)
        v[i] = i;
    if ((rc = dv_copy_async(b->s, b->vals, h, big, DV_COPY_H2D, &b->err)) != PA_OK ||
        (rc = dv_stream_sync(b->s, &b->err)) != PA_OK)
        goto out;
    int32_t *p = (int32_t *)(void *)h;
    for (int64_t i = 0; i < n; i++)
        p[i] = (int32_t)i;
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)(lcg(&seed) >> 33) % (i + 1);
        int32_t t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
    if ((rc = dv_copy_async(b->s, b->idx, h, (size_t)n * 4, DV_COPY_H2D, &b->err)) == PA_OK)
        rc = dv_stream_sync(b->s, &b->err);
out:
    dv_host_free(b->dev, h);
    return rc;
}

/* rows * 8 bytes of text from a small vocabulary (about what SNAPPY makes
 * of TPC-H's comments: a third to a half), compressed with codec into
 * 1 MiB pages on the host and uploaded with their jobs (outputs: b->out). */
static int make_pages(kbench *b, int k, int codec)
{
    static const char *words[] = {"carefully ", "final ", "deposits ", "sleep ", "furiously ", "regular ",
                                  "accounts ", "|", "special ", "requests ", "ironic ", "packages "};
    size_t raw = (size_t)b->rows * 8, pages = (raw + PAGE_BYTES - 1) / PAGE_BYTES;
    size_t bound = kn_compress_bound(codec, PAGE_BYTES);
    if (!bound)
        return pa_error(&b->err, PA_EUNSUPPORTED, "this build cannot compress %s", kn_codec_name(codec));
    uint8_t *text = NULL, *comp = NULL;
    kn_codec_job *jobs = NULL;
    int rc;
    if ((rc = dv_host_alloc(b->dev, raw, (void **)&text, &b->err)) != PA_OK ||
        (rc = dv_host_alloc(b->dev, pages * bound, (void **)&comp, &b->err)) != PA_OK ||
        (rc = dv_host_alloc(b->dev, pages * sizeof *jobs, (void **)&jobs, &b->err)) != PA_OK)
        goto out;
    uint64_t seed = 11;
    for (size_t i = 0; i < raw;)
        for (const char *w = words[(lcg(&seed) >> 33) % 12]; *w && i < raw; w++)
            text[i++] = (uint8_t)*w;
    size_t at = 0;
    for (size_t p = 0; p < pages; p++) {
        size_t n = raw - p * PAGE_BYTES < PAGE_BYTES ? raw - p * PAGE_BYTES : PAGE_BYTES, got = 0;
        if ((rc = kn_compress(codec, 0, text + p * PAGE_BYTES, n, comp + at, bound, &got, &b->err)) != PA_OK)
            goto out;
        jobs[p] = (kn_codec_job){.src = (void *)(uintptr_t)at, .src_size = got,
                                 .dst = (uint8_t *)b->out + p * PAGE_BYTES, .dst_size = n, .codec = codec};
        at += got;
    }
    if ((rc = dv_alloc(b->dev, at, (void **)&b->comp[k], &b->err)) != PA_OK ||
        (rc = dv_alloc(b->dev, pages * sizeof *jobs, (void **)&b->jobs[k], &b->err)) != PA_OK)
        goto out;
    for (size_t p = 0; p < pages; p++)
        jobs[p].src = b->comp[k] + (uintptr_t)jobs[p].src;
    if ((rc = dv_copy_async(b->s, b->comp[k], comp, at, DV_COPY_H2D, &b->err)) != PA_OK ||
        (rc = dv_copy_async(b->s, b->jobs[k], jobs, pages * sizeof *jobs, DV_COPY_H2D, &b->err)) != PA_OK ||
        (rc = dv_stream_sync(b->s, &b->err)) != PA_OK)
        goto out;
    b->n_pages = (int64_t)pages;
    b->comp_bytes[k] = (double)at;
out:
    dv_host_free(b->dev, text);
    dv_host_free(b->dev, comp);
    dv_host_free(b->dev, jobs);
    return rc;
}

int cli_bench_kernels(int argc, char **argv)
{
    cli_global g;
    cli_global_defaults(&g);
    int json = 0, repeat = 5;
    int64_t rows = 0;
    for (int i = 0; i < argc;) {
        int r = cli_global_option(&g, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r > 0)
            continue;
        if (!strcmp(argv[i], "--json")) {
            json = 1;
            i++;
        } else if (!strcmp(argv[i], "--rows") && i + 1 < argc) {
            char *end;
            long long v = strtoll(argv[i + 1], &end, 10);
            if (*end || v < 1024 || v > INT32_MAX - 1)
                return cli_usage("--rows: '%s' is not a row count between 1024 and %d", argv[i + 1],
                                 INT32_MAX - 1);
            rows = v;
            i += 2;
        } else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) {
            char *end;
            long v = strtol(argv[i + 1], &end, 10);
            if (*end || v < 1 || v > 1000)
                return cli_usage("--repeat: '%s' is not between 1 and 1000", argv[i + 1]);
            repeat = (int)v;
            i += 2;
        } else {
            return cli_usage("bench kernels: unknown option '%s' (options: --rows N --repeat N --json "
                             "--device D --memory-limit SIZE --threads N)", argv[i]);
        }
    }

    kbench b = {.repeat = repeat};
    pa_err_init(&b.err);
    dv_options opt = {.spec = g.device, .memory_limit = g.memory_limit, .cpu_threads = g.threads, .page_decode = g.page_decode};
    int rc;
    if ((rc = dv_open(&opt, &b.dev, &b.err)) != PA_OK)
        return cli_fail(&b.err);
    dv_kind kind = dv_kind_of(b.dev);
    b.rows = rows ? rows : kind == DV_KIND_CUDA ? 100000000 : kind == DV_KIND_SIM ? 1000000 : 10000000;
    double res[KB_N] = {0};
    int have[KB_N] = {0};
    char why[KB_N][160];
    memset(why, 0, sizeof why);
    size_t n = (size_t)b.rows;
    if ((rc = dv_stream_create(b.dev, &b.s, &b.err)) != PA_OK)
        goto fail;
    b.ctx = (kn_ctx){b.dev, b.s};
    if ((rc = dv_alloc(b.dev, n, (void **)&b.pred, &b.err)) != PA_OK ||
        (rc = dv_alloc(b.dev, n * 8, (void **)&b.vals, &b.err)) != PA_OK ||
        (rc = dv_alloc(b.dev, n * 8, (void **)&b.out, &b.err)) != PA_OK ||
        (rc = dv_alloc(b.dev, n * 4, (void **)&b.sel, &b.err)) != PA_OK ||
        (rc = dv_alloc(b.dev, n * 4, (void **)&b.idx, &b.err)) != PA_OK ||
        (rc = dv_alloc(b.dev, n * 8, (void **)&b.hashes, &b.err)) != PA_OK ||
        (rc = dv_alloc(b.dev, n * 4, (void **)&b.part, &b.err)) != PA_OK ||
        (rc = dv_host_alloc(b.dev, sizeof *b.count, (void **)&b.count, &b.err)) != PA_OK)
        goto fail;
    if ((rc = make_inputs(&b)) != PA_OK)
        goto fail;
    /* The selection's size, for gather. */
    pa_column p = {.type = {.id = PA_TYPE_BOOLEAN}, .length = b.rows, .data = b.pred};
    int64_t selected = 0;
    if (kn_select(&b.ctx, &p, b.rows, b.sel, b.count, &b.err) == PA_OK && dv_stream_sync(b.s, &b.err) == PA_OK)
        selected = *b.count;
    pa_err_clear(&b.err);
    /* The join table over the first rows/10 keys (hashes are the hash
     * step's: it runs first). */
    b.build_rows = b.rows / 10;
    pa_column bkey = {.type = {.id = PA_TYPE_BIGINT}, .length = b.build_rows, .data = b.vals};
    pa_type bt = bkey.type;
    size_t tb = kn_join_table_bytes(b.build_rows, &bt, &bt, 1);
    b.scratch_size = 0;
    if ((rc = dv_alloc(b.dev, tb, &b.table_mem, &b.err)) != PA_OK ||
        (rc = dv_host_alloc(b.dev, sizeof *b.info, (void **)&b.info, &b.err)) != PA_OK ||
        (rc = dv_host_alloc(b.dev, sizeof *b.cur, (void **)&b.cur, &b.err)) != PA_OK ||
        (rc = kn_join_table_init(&b.table, b.table_mem, tb, b.build_rows, &bkey, &bt, 1, b.info, &b.err)) != PA_OK)
        goto fail;
    b.scratch_size = kn_join_probe_scratch_size(&b.table, b.rows);
    if ((rc = dv_alloc(b.dev, b.scratch_size, &b.probe_scratch, &b.err)) != PA_OK)
        goto fail;
    b.prog = less_than_program(b.rows / 2);
    kn_sort_key sk = {.column = 0, .type = {.id = PA_TYPE_INTEGER}};
    if (!b.prog) {
        rc = pa_error(&b.err, PA_ENOMEM, "out of host memory");
        goto fail;
    }
    if ((rc = dv_alloc(b.dev, kn_eval_scratch_size(b.prog), &b.eval_scratch, &b.err)) != PA_OK ||
        (rc = kn_sort_layout_init(&b.layout, &sk, 1, &b.err)) != PA_OK ||
        (rc = dv_alloc(b.dev, n * b.layout.stride, (void **)&b.recs, &b.err)) != PA_OK ||
        (rc = dv_alloc(b.dev, n * b.layout.stride, (void **)&b.sort_scratch, &b.err)) != PA_OK)
        goto fail;
    for (int op = 0; op < KB_N; op++) {
        if ((op == KB_BUILD || op == KB_PROBE) && !have[KB_HASH]) {
            snprintf(why[op], sizeof why[op], "no hashes (kn_hash_keys failed)");
            continue;
        }
        if (op == KB_PROBE && !have[KB_BUILD]) {
            snprintf(why[op], sizeof why[op], "no table (kn_join_build failed)");
            continue;
        }
        if (op == KB_GATHER && selected == 0) {
            snprintf(why[op], sizeof why[op], "no selection (kn_select failed)");
            continue;
        }
        if (op == KB_SNAPPY || op == KB_LZ4) {
            int k = op == KB_LZ4;
            rc = make_pages(&b, k, k ? KN_CODEC_LZ4_RAW : KN_CODEC_SNAPPY);
            if (rc == PA_EUNSUPPORTED) {
                snprintf(why[op], sizeof why[op], "%s", b.err.msg);
                pa_err_clear(&b.err);
                continue;
            }
            if (rc != PA_OK)
                goto fail;
        }
        rc = time_op(&b, (kb_op)op, selected, &res[op]);
        if (rc == PA_OK) {
            have[op] = 1;
        } else if (rc == PA_EUNSUPPORTED) {
            snprintf(why[op], sizeof why[op], "%s", b.err.msg);
        } else {
            goto fail;
        }
        pa_err_clear(&b.err);
        rc = PA_OK;
    }
    double copy = have[KB_COPY] ? res[KB_COPY] : 0;
    if (json) {
        printf("{\"device\": \"%s\", \"rows\": %lld, \"repeat\": %d, \"results\": [", dv_describe(b.dev),
               (long long)b.rows, b.repeat);
        int first = 1;
        for (int op = 0; op < KB_N; op++) {
            if (!have[op])
                continue;
            printf("%s{\"kernel\": \"%s\", \"gb_per_s\": %.6g, \"of_copy\": %.6g}", first ? "" : ", ", op_names[op],
                   res[op], copy > 0 ? res[op] / copy : 0);
            first = 0;
        }
        printf("]}\n");
    } else {
        printf("device:    %s\nrows:      %lld (selection: %lld), %d timed calls after a warm-up\n"
               "bytes:     read + written by each kernel; the copy is counted the same way\n\n",
               dv_describe(b.dev), (long long)b.rows, (long long)selected, b.repeat);
        printf("%-34s %10s  %s\n", "kernel", "GB/s", "of the device->device copy");
        for (int op = 0; op < KB_N; op++) {
            if (have[op])
                printf("%-34s %10.2f  %5.1f%%\n", op_names[op], res[op], copy > 0 ? 100 * res[op] / copy : 0);
            else
                printf("%-34s %10s  %s\n", op_names[op], "-", why[op]);
        }
    }
fail:
    if (b.s)
        dv_stream_sync(b.s, NULL);
    if (b.dev) {
        dv_free(b.dev, b.pred);
        dv_free(b.dev, b.vals);
        dv_free(b.dev, b.out);
        dv_free(b.dev, b.sel);
        dv_free(b.dev, b.idx);
        dv_free(b.dev, b.hashes);
        dv_free(b.dev, b.part);
        dv_host_free(b.dev, b.count);
        dv_free(b.dev, b.table_mem);
        dv_free(b.dev, b.probe_scratch);
        dv_host_free(b.dev, b.info);
        dv_host_free(b.dev, b.cur);
        dv_free(b.dev, b.eval_scratch);
        dv_free(b.dev, b.recs);
        dv_free(b.dev, b.sort_scratch);
        for (int k = 0; k < 2; k++) {
            dv_free(b.dev, b.comp[k]);
            dv_free(b.dev, b.jobs[k]);
        }
    }
    pa_free(b.prog);
    dv_stream_destroy(b.s);
    dv_close(b.dev);
    if (rc != PA_OK) {
        cli_fail(&b.err);
        pa_err_close(&b.err);
        return 1;
    }
    pa_err_close(&b.err);
    return 0;
}

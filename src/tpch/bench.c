/*
 * bench.c - generation throughput, each table alone and then all tables in
 * one run. .tbl text is formatted and discarded, so those numbers measure the
 * generator and the formatter, not the disk; Parquet files are written (the
 * writer needs a file) into the caller's folder and removed after each run.
 */
#include "tpch/tpch_int.h"

#include <limits.h>
#include <stdio.h>
#include <unistd.h>

/* Remove the Parquet files a run wrote into dir (no parts: DIR/<table>.parquet). */
static void remove_files(const char *dir, unsigned mask)
{
    for (int t = 0; t < TP_TABLE__COUNT; t++) {
        char path[PATH_MAX];
        if (!(mask >> t & 1) ||
            snprintf(path, sizeof path, "%s/%s.parquet", dir, tp_table_name(t)) >= (int)sizeof path)
            continue;
        unlink(path);
    }
}

int tp_bench_gen(double sf, int threads, tp_format format, const char *dir,
                 const pq_writer_options *po, tp_bench_result *out, pa_err *err)
{
    memset(out, 0, sizeof *out);
    if (format == TP_FORMAT_PARQUET && !dir)
        return pa_error(err, PA_EINVAL, "the Parquet bench needs a folder to write into");
    uint64_t t0 = pa_now_ns();
    tp_gen *g;
    int rc = tp_gen_create_ex(sf, threads, &g, err);
    if (rc != PA_OK)
        return rc;
    out->pool_seconds = (double)(pa_now_ns() - t0) * 1e-9;
    out->sf = tp_gen_effective_sf(g);
    out->threads = threads;
    out->format = format;
    tp_write_opts o;
    tp_write_opts_defaults(&o);
    o.threads = threads;
    o.format = format;
    o.parquet = po;
    o.out_dir = format == TP_FORMAT_PARQUET ? dir : NULL;
    /* One table at a time, so each table's time is its own (orders and
     * lineitem each draw the other's streams too), then all in one run. */
    static const unsigned order[] = {
        1u << TP_REGION, 1u << TP_NATION, 1u << TP_SUPPLIER, 1u << TP_CUSTOMER,
        1u << TP_PART, 1u << TP_PARTSUPP, 1u << TP_ORDERS, 1u << TP_LINEITEM, TP_ALL_TABLES};
    size_t n_runs = sizeof order / sizeof order[0];
    for (size_t i = 0; i < n_runs && rc == PA_OK; i++) {
        tp_write_stats st;
        o.tables = order[i];
        rc = tp_write(g, &o, &st, err);
        if (o.out_dir)
            remove_files(o.out_dir, order[i]);
        if (order[i] == TP_ALL_TABLES) {
            out->all = st;
            break;
        }
        for (int t = 0; t < TP_TABLE__COUNT; t++)
            if (order[i] >> t & 1) {
                out->stats.rows[t] = st.rows[t];
                out->stats.bytes[t] = st.bytes[t];
                out->stats.in_bytes[t] = st.in_bytes[t];
                out->stats.seconds[t] = st.total_seconds;
                out->stats.write_seconds[t] = st.write_seconds[t];
            }
        out->stats.total_seconds += st.total_seconds;
    }
    tp_gen_destroy(g);
    return rc;
}

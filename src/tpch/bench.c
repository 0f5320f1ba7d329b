/*
 * bench.c - generation throughput: every table into memory as .tbl text
 * (formatted, then discarded), so the numbers measure the generator and the
 * formatter, not the disk.
 */
#include "tpch/tpch_int.h"

int tp_bench_gen(double sf, int threads, tp_bench_result *out, pa_err *err)
{
    memset(out, 0, sizeof *out);
    uint64_t t0 = pa_now_ns();
    tp_gen *g;
    int rc = tp_gen_create(sf, &g, err);
    if (rc != PA_OK)
        return rc;
    out->pool_seconds = (double)(pa_now_ns() - t0) * 1e-9;
    out->sf = tp_gen_effective_sf(g);
    tp_write_opts o;
    tp_write_opts_defaults(&o);
    o.threads = threads;
    out->threads = threads;
    /* One table group at a time, so each table's time is its own. */
    static const unsigned order[] = {
        1u << TP_REGION, 1u << TP_NATION, 1u << TP_SUPPLIER, 1u << TP_CUSTOMER,
        1u << TP_PART, 1u << TP_PARTSUPP, 1u << TP_ORDERS, 1u << TP_LINEITEM};
    for (size_t i = 0; i < sizeof order / sizeof order[0] && rc == PA_OK; i++) {
        tp_write_stats st;
        o.tables = order[i];
        rc = tp_write(g, &o, &st, err);
        for (int t = 0; t < TP_TABLE__COUNT; t++)
            if (order[i] >> t & 1) {
                out->stats.rows[t] = st.rows[t];
                out->stats.bytes[t] = st.bytes[t];
                out->stats.seconds[t] = st.total_seconds;
            }
        out->stats.total_seconds += st.total_seconds;
    }
    tp_gen_destroy(g);
    return rc;
}

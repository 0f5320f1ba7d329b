/*
 * fuzz_scan.c - libFuzzer target over whole-file scans: the input is a
 * Parquet file, registered as table t and read by SQL the way a user reads
 * it (footer, schema mapping, row-group and page-index pruning, the scan
 * operator's chunks, page decoding, the result).
 *
 * Each input is written to one temporary file (per process) and queried in
 * a fresh session on a `cpu` device: SELECT * FROM t and SELECT count(*)
 * FROM t. Every fourth input (by its length; every input with
 * PISTA_FUZZ_DEVICE=1) runs SELECT * again on a `sim` device, where pages
 * decode under the SIMT emulation, and the two must agree: both fail, or
 * both succeed with byte-identical CSV (abort() otherwise). A watchdog
 * cancels a statement still running after WATCHDOG_MS; one that ignores the
 * cancel runs into libFuzzer's -timeout. Any outcome but a crash, a
 * sanitizer report, a leak, a hang or a disagreement is fine; a failed
 * statement must have a message.
 */
#include "sql/sql.h"
#include "watchdog.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_FILE (8u << 20)
#define WATCHDOG_MS 3000

static dv_device *cpu_dev, *sim_dev;
static char path[256];

static void remove_file(void)
{
    unlink(path);
}

static bool setup(void)
{
    static bool failed;
    if (cpu_dev || failed)
        return cpu_dev != NULL;
    failed = true;
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/pista-fuzz-scan-%ld.parquet", tmp && *tmp ? tmp : "/tmp", (long)getpid());
    dv_options co = {.spec = "cpu", .cpu_threads = 1, .memory_limit = 256u << 20};
    dv_options so = {.spec = "sim", .cpu_threads = 1, .memory_limit = 256u << 20};
    if (dv_open(&co, &cpu_dev, NULL) != PA_OK)
        return false;
    if (dv_open(&so, &sim_dev, NULL) != PA_OK) {
        dv_close(cpu_dev);
        cpu_dev = NULL;
        return false;
    }
    if (!watchdog_start())
        return false;
    atexit(remove_file);
    failed = false;
    return true;
}

static bool write_file(const uint8_t *data, size_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return false;
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(fd, data + done, size - done);
        if (w <= 0) {
            close(fd);
            return false;
        }
        done += (size_t)w;
    }
    return close(fd) == 0;
}

/* Run text on dev over the file as t. Returns the status; with csv, a
 * successful result's CSV (malloc'd) goes there. Status -1: the file is
 * not a table (registration failed), nothing ran. */
static int query(dv_device *dev, const char *text, char **csv, size_t *csv_len)
{
    sql_options o = {.dev = dev, .threads = 1};
    sql_session *s = NULL;
    pa_err err;
    pa_err_init(&err);
    if (sql_session_create(&o, &s, &err) != PA_OK) {
        fprintf(stderr, "fuzz_scan: no session: %s\n", err.msg);
        abort();
    }
    int rc = sql_register_table(s, "t", path, &err);
    if (rc != PA_OK) {
        if (!err.msg[0])
            abort();
        pa_err_close(&err);
        sql_session_destroy(s);
        return -1;
    }
    sql_result *r = NULL;
    watch(s, WATCHDOG_MS);
    rc = sql_execute(s, text, &r, &err);
    watch(NULL, 0);
    if (getenv("PISTA_FUZZ_VERBOSE"))
        fprintf(stderr, "fuzz_scan: %s on %s: %s\n", text, dev == cpu_dev ? "cpu" : "sim",
                rc == PA_OK ? "ok" : err.msg);
    if (rc != PA_OK && !err.msg[0]) {
        fprintf(stderr, "fuzz_scan: status %d without a message\n", rc);
        abort();
    }
    if (rc == PA_OK && csv) {
        FILE *f = open_memstream(csv, csv_len);
        if (!f || (r->rows && ex_result_write_csv_full(r->rows, f, ',', true) != PA_OK)) {
            if (f)
                fclose(f);
            free(*csv);
            *csv = NULL;
            rc = PA_ENOMEM;   /* not a finding: no comparison this time */
        } else {
            fclose(f);
        }
    }
    sql_result_destroy(r);
    pa_err_close(&err);
    sql_session_destroy(s);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MAX_FILE || !setup() || !write_file(data, size))
        return 0;
    const char *dev_env = getenv("PISTA_FUZZ_DEVICE");
    bool device_turn = (dev_env && *dev_env == '1') || size % 4 == 0;
    char *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    int rc = query(cpu_dev, "SELECT * FROM t", device_turn ? &a : NULL, &na);
    if (rc == -1)
        return 0;
    if (device_turn && rc != PA_ENOMEM && rc != PA_ECANCELED) {
        int rs = query(sim_dev, "SELECT * FROM t", &b, &nb);
        if (rs != PA_ENOMEM && rs != PA_ECANCELED && rs != -1 &&
            ((rc == PA_OK) != (rs == PA_OK) || (rc == PA_OK && (na != nb || memcmp(a, b, na) != 0)))) {
            fprintf(stderr, "fuzz_scan: cpu and sim disagree (cpu status %d, %zu bytes; sim status %d, %zu bytes)\n",
                    rc, na, rs, nb);
            abort();
        }
    }
    free(a);
    free(b);
    query(cpu_dev, "SELECT count(*) FROM t", NULL, NULL);
    return 0;
}

/*
 * fuzz_sql.c - libFuzzer target over SQL text: parse, bind, optimise, lower
 * and run one statement.
 *
 * The input is a statement's text. Each input gets a fresh session on a
 * `cpu` device (one worker, a 256 MiB device pool) with the eight TPC-H
 * tables of SF 0.01 registered (PISTA_FUZZ_SQL_DATA, default the tests' copy)
 * and no data folder (CREATE TABLE has nowhere to write), so what one input
 * creates or drops never changes the next. A watchdog
 * thread cancels a statement still running after WATCHDOG_MS (a cross join
 * of the big tables is a legal, slow query, not a finding); a statement that
 * ignores the cancel runs into libFuzzer's -timeout, which is a finding.
 *
 * Any outcome but a crash, a sanitizer report, a leak or a hang is fine,
 * with two checks of the error contract (abort() otherwise): a failed
 * statement has a message, and its position, when it has one, lies inside
 * the text. Inputs with a NUL byte (the API takes C strings), longer than
 * MAX_TEXT, or naming COPY (it writes files wherever the text says) are
 * skipped. PISTA_FUZZ_VERBOSE=1 prints each statement's outcome.
 */
#include "sql/sql.h"
#include "watchdog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#ifndef PISTA_FUZZ_SQL_DATA
#define PISTA_FUZZ_SQL_DATA "tests/data/parquet/sf0.01"
#endif

#define MAX_TEXT (1 << 20)
#define WATCHDOG_MS 2000

static dv_device *dev;

static bool setup(void)
{
    static bool failed;
    if (dev || failed)
        return dev != NULL;
    failed = true;
    dv_options o = {.spec = "cpu", .cpu_threads = 1, .memory_limit = 256u << 20};
    pa_err err;
    pa_err_init(&err);
    if (dv_open(&o, &dev, &err) != PA_OK) {
        fprintf(stderr, "fuzz_sql: cannot open the cpu device: %s\n", err.msg);
        pa_err_close(&err);
        return false;
    }
    pa_err_close(&err);
    if (!watchdog_start()) {
        dv_close(dev);
        dev = NULL;
        return false;
    }
    failed = false;
    return true;
}

static bool names_copy(const char *text)
{
    for (const char *p = text; *p; p++)
        if (strncasecmp(p, "copy", 4) == 0)
            return true;
    return false;
}

static void run(const char *text)
{
    static const char *const tables[] = {"region", "nation", "supplier", "customer",
                                         "part",   "partsupp", "orders", "lineitem"};
    const char *dir = getenv("PISTA_FUZZ_SQL_DATA");
    if (!dir || !*dir)
        dir = PISTA_FUZZ_SQL_DATA;
    sql_options o = {.dev = dev, .threads = 1};   /* no data dir: CREATE TABLE writes nowhere */
    sql_session *s = NULL;
    pa_err err;
    pa_err_init(&err);
    int rc = sql_session_create(&o, &s, &err);
    for (size_t i = 0; rc == PA_OK && i < sizeof tables / sizeof tables[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.parquet", dir, tables[i]);
        rc = sql_register_table(s, tables[i], path, &err);
    }
    if (rc != PA_OK) {
        fprintf(stderr, "fuzz_sql: no session over %s: %s\n", dir, err.msg);
        abort();   /* the setup is broken, not the input: say so at once */
    }
    pa_err_close(&err);
    pa_err_init(&err);
    sql_result *r = NULL;
    watch(s, WATCHDOG_MS);
    rc = sql_execute(s, text, &r, &err);
    watch(NULL, 0);
    if (getenv("PISTA_FUZZ_VERBOSE"))
        fprintf(stderr, "fuzz_sql: %s\n", rc == PA_OK ? "ok" : err.msg);
    if (rc != PA_OK) {
        int at = sql_error_offset(s);
        if (!err.msg[0] || at < -1 || at > (int)strlen(text)) {
            fprintf(stderr, "fuzz_sql: error contract broken (status %d, offset %d, message \"%s\")\n", rc, at,
                    err.msg);
            abort();
        }
    }
    sql_result_destroy(r);
    pa_err_close(&err);
    sql_session_destroy(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MAX_TEXT || memchr(data, 0, size) || !setup())
        return 0;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    if (!names_copy(text))
        run(text);
    free(text);
    return 0;
}

/*
 * test_cli_print.c - the shell's result printers (src/cli/print.c, built
 * into the `pista` program, so compiled into this test directly): the
 * aligned table, CSV and JSON lines over a hand-built result with every type,
 * NULLs, escapes and two chunks, checked against hand-written text; and
 * the three modes over a real scan of nation.parquet, checked against
 * dbgen's nation table.
 */
#include "op_testutil.h"

#include "cli/print.c"

static dv_device *D;

static int setup(void **state)
{
    ot_paths();
    D = et_open(0);
    return 0;
}

static int teardown(void **state)
{
    dv_close(D);
    return 0;
}

/* The printer's output as a malloc'ed string. */
static char *print_to_string(const ex_result *r, cli_print_mode mode, char sep)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    cli_print_opts o = {.mode = mode, .sep = sep};
    assert_int_equal(cli_print_result(r, &o, f), 0);
    fclose(f);
    return text;
}

/* ------------------------------------------------------ hand-built result */

static const char *const hb_names[] = {"id", "name", "price", "big", "ratio", "day", "ok"};
#define HB_COLS 7

/* Host columns for rows [0, n) of the test data set `set` (0: two rows,
 * 1: one row), validity given per column. */
static void hb_chunk_columns(int set, pa_column *c, int32_t *ids, char *bytes, int32_t *offs, int64_t *price,
                             __int128 *big, double *ratio, int32_t *day, uint8_t *ok, uint8_t *valid)
{
    int n = set == 0 ? 2 : 1;
    const char *strs[2];
    if (set == 0) {
        ids[0] = 1, ids[1] = 0;
        strs[0] = "ALGERIA", strs[1] = "say \"hi\"\tnow";
        price[0] = 12345, price[1] = -5;
        big[0] = 123456789, big[1] = -1;
        ratio[0] = 0.1, ratio[1] = 1e20;
        day[0] = pa_date_from_ymd(1995, 3, 15), day[1] = 0;
        ok[0] = 1, ok[1] = 0;
        valid[0] = 0x1;   /* id: row 1 NULL */
        valid[1] = 0x3;   /* every other nullable column: all valid */
    } else {
        ids[0] = 42;
        strs[0] = "\xc3\xbc" "ber";
        price[0] = 0;
        big[0] = 0;
        ratio[0] = NAN;
        day[0] = 0;
        ok[0] = 0;
        valid[0] = 0x1;
        valid[1] = 0x0;   /* price, day, ok: NULL */
    }
    offs[0] = 0;
    for (int i = 0; i < n; i++) {
        size_t l = strlen(strs[i]);
        memcpy(bytes + offs[i], strs[i], l);
        offs[i + 1] = offs[i] + (int32_t)l;
    }
    c[0] = (pa_column){.type = et_t(PA_TYPE_INTEGER), .length = n, .data = ids, .offsets = NULL, .validity = &valid[0]};
    c[1] = (pa_column){.type = et_t(PA_TYPE_VARCHAR), .length = n, .data = bytes, .offsets = offs, .validity = NULL};
    c[2] = (pa_column){.type = et_dec(15, 2), .length = n, .data = price, .offsets = NULL, .validity = &valid[1]};
    c[3] = (pa_column){.type = et_dec(38, 4), .length = n, .data = big, .offsets = NULL, .validity = NULL};
    c[4] = (pa_column){.type = et_t(PA_TYPE_DOUBLE), .length = n, .data = ratio, .offsets = NULL, .validity = NULL};
    c[5] = (pa_column){.type = et_t(PA_TYPE_DATE), .length = n, .data = day, .offsets = NULL, .validity = &valid[1]};
    c[6] = (pa_column){.type = et_t(PA_TYPE_BOOLEAN), .length = n, .data = ok, .offsets = NULL, .validity = &valid[1]};
}

/* A result as ex_run would return it: names, types and chunks in memory
 * the host reads, owned by the result (ex_result_destroy frees them). */
static ex_result *hand_built(void)
{
    ex_result *r = pa_calloc(1, sizeof *r);
    assert_non_null(r);
    r->n_columns = HB_COLS;
    r->names = pa_calloc(HB_COLS, sizeof *r->names);
    r->types = pa_calloc(HB_COLS, sizeof *r->types);
    r->chunks = pa_calloc(2, sizeof *r->chunks);
    for (int set = 0; set < 2; set++) {
        pa_column c[HB_COLS];
        int32_t ids[2], offs[3], day[2];
        char bytes[64];
        int64_t price[2];
        __int128 big[2];
        double ratio[2];
        uint8_t ok[2], valid[2];
        hb_chunk_columns(set, c, ids, bytes, offs, price, big, ratio, day, ok, valid);
        r->chunks[set] = ot_chunk_in(D, c, HB_COLS, true);
        r->n_rows += c[0].length;
        if (set == 0)
            for (int i = 0; i < HB_COLS; i++) {
                r->names[i] = pa_strdup(hb_names[i]);
                r->types[i] = c[i].type;
            }
    }
    r->n_chunks = 2;
    return r;
}

static void test_table_every_type(void **state)
{
    ex_result *r = hand_built();
    char *t = print_to_string(r, CLI_PRINT_TABLE, '|');
    const char *want =
        "+------+---------------+--------+------------+-------+------------+-------+\n"
        "|   id | name          |  price |        big | ratio | day        | ok    |\n"
        "+------+---------------+--------+------------+-------+------------+-------+\n"
        "|    1 | ALGERIA       | 123.45 | 12345.6789 |   0.1 | 1995-03-15 | true  |\n"
        "| NULL | say \"hi\"\\tnow |  -0.05 |    -0.0001 | 1e+20 | 1970-01-01 | false |\n"
        "|   42 | \xc3\xbc" "ber          |   NULL |     0.0000 |   nan | NULL       | NULL  |\n"
        "+------+---------------+--------+------------+-------+------------+-------+\n"
        "(3 rows)\n";
    assert_string_equal(t, want);
    free(t);
    ex_result_destroy(r);
}

static void test_json_every_type(void **state)
{
    ex_result *r = hand_built();
    char *t = print_to_string(r, CLI_PRINT_JSON, '|');
    const char *want =
        "{\"id\":1,\"name\":\"ALGERIA\",\"price\":123.45,\"big\":12345.6789,\"ratio\":0.1,\"day\":\"1995-03-15\","
        "\"ok\":true}\n"
        "{\"id\":null,\"name\":\"say \\\"hi\\\"\\tnow\",\"price\":-0.05,\"big\":-0.0001,\"ratio\":1e+20,"
        "\"day\":\"1970-01-01\",\"ok\":false}\n"
        "{\"id\":42,\"name\":\"\xc3\xbc" "ber\",\"price\":null,\"big\":0.0000,\"ratio\":\"NaN\",\"day\":null,"
        "\"ok\":null}\n";
    assert_string_equal(t, want);
    free(t);
    ex_result_destroy(r);
}

/* CSV (RFC 4180): a header, every digit of a DECIMAL, a DOUBLE's shortest
 * round-trip digits, NULL as an empty field, quotes only where needed
 * (here a value with quotes: doubled inside quotes; the tab stays raw). */
static void test_csv_every_type(void **state)
{
    ex_result *r = hand_built();
    char *t = print_to_string(r, CLI_PRINT_CSV, 0);
    const char *want = "id,name,price,big,ratio,day,ok\n"
                       "1,ALGERIA,123.45,12345.6789,0.1,1995-03-15,true\n"
                       ",\"say \"\"hi\"\"\tnow\",-0.05,-0.0001,1e+20,1970-01-01,false\n"
                       "42,\xc3\xbc" "ber,,0.0000,nan,,\n";
    assert_string_equal(t, want);
    free(t);
    /* Another separator quotes what holds it. */
    t = print_to_string(r, CLI_PRINT_CSV, 'A');
    assert_non_null(strstr(t, "1A\"ALGERIA\"A123.45A"));
    free(t);
    ex_result_destroy(r);
}

/* Doubles print with the fewest digits that read back exactly. */
static void test_double_shortest(void **state)
{
    char buf[64];
    /* What Python's repr, a shortest round-trip printer, gives. */
    double cases[] = {0.1 + 0.2, 1.0 / 3, 2.5, -0.0, 123456789012345678.0, 5e-324, 1e-310, 2.2250738585072014e-308};
    const char *want[] = {"0.30000000000000004", "0.3333333333333333", "2.5", "-0", "1.2345678901234568e+17",
                          "5e-324", "1e-310", "2.2250738585072014e-308"};
    for (int i = 0; i < 8; i++) {
        format_double(cases[i], buf, sizeof buf);
        assert_string_equal(buf, want[i]);
    }
}

/* CSV doubles as DuckDB's CSV writer and Python's repr print them. */
static void test_double_repr(void **state)
{
    char buf[64];
    double cases[] = {100.0, 1e15, 1e16, 1e-5, 0.0001, -0.0, 123.456, 1.5e-10, 5e-324, 2.5, 0.1 + 0.2, 1.0 / 3,
                      123456789012345678.0, 12345678.9, -7e22, 0.0};
    const char *want[] = {"100.0", "1000000000000000.0", "1e+16", "1e-05", "0.0001", "-0.0", "123.456",
                          "1.5e-10", "5e-324", "2.5", "0.30000000000000004", "0.3333333333333333",
                          "1.2345678901234568e+17", "12345678.9", "-7e+22", "0.0"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ex_format_double_repr(cases[i], buf, sizeof buf);
        assert_string_equal(buf, want[i]);
    }
}

static void test_empty_result(void **state)
{
    ex_result *r = hand_built();
    for (int i = 0; i < r->n_chunks; i++)
        dv_chunk_destroy(r->chunks[i]);
    r->n_chunks = 0;
    r->n_rows = 0;
    char *t = print_to_string(r, CLI_PRINT_TABLE, '|');
    assert_string_equal(t, "+----+------+-------+-----+-------+-----+----+\n"
                           "| id | name | price | big | ratio | day | ok |\n"
                           "+----+------+-------+-----+-------+-----+----+\n"
                           "+----+------+-------+-----+-------+-----+----+\n"
                           "(0 rows)\n");
    free(t);
    t = print_to_string(r, CLI_PRINT_JSON, '|');
    assert_string_equal(t, "");
    free(t);
    t = print_to_string(r, CLI_PRINT_CSV, 0);
    assert_string_equal(t, "id,name,price,big,ratio,day,ok\n");
    free(t);
    t = print_to_string(r, CLI_PRINT_ANSWERS, 0);
    assert_string_equal(t, "id|name|price|big|ratio|day|ok\n");
    free(t);
    ex_result_destroy(r);
}

/* ------------------------------------------------------- nation.parquet */

static void test_nation_scan(void **state)
{
    ex_plan *p;
    assert_int_equal(ex_plan_create(&p, NULL), PA_OK);
    static const char *const cols[] = {"n_nationkey", "n_name", "n_regionkey"};
    ex_op *scan = ot_scan(p, "nation.parquet", cols, 3);
    int rc;
    char msg[512];
    ex_result *r = ot_run(D, p, scan, EX_MODE_OVERLAPPED, &rc, msg);
    assert_int_equal(rc, PA_OK);
    assert_int_equal(r->n_rows, 25);

    /* dbgen's nation table: key, name, region key. */
    char *t = print_to_string(r, CLI_PRINT_TABLE, '|');
    const char *head = "+-------------+----------------+-------------+\n"
                       "| n_nationkey | n_name         | n_regionkey |\n"
                       "+-------------+----------------+-------------+\n"
                       "|           0 | ALGERIA        |           0 |\n"
                       "|           1 | ARGENTINA      |           1 |\n";
    assert_memory_equal(t, head, strlen(head));
    assert_non_null(strstr(t, "\n|          23 | UNITED KINGDOM |           3 |\n"));
    const char *tail = "|          24 | UNITED STATES  |           1 |\n"
                       "+-------------+----------------+-------------+\n"
                       "(25 rows)\n";
    assert_string_equal(t + strlen(t) - strlen(tail), tail);
    int lines = 0;
    for (const char *s = t; *s; s++)
        lines += *s == '\n';
    assert_int_equal(lines, 25 + 5);
    free(t);

    t = print_to_string(r, CLI_PRINT_ANSWERS, 0);
    const char *ans = "n_nationkey|n_name|n_regionkey\n0|ALGERIA|0\n1|ARGENTINA|1\n2|BRAZIL|1\n";
    assert_memory_equal(t, ans, strlen(ans));
    free(t);
    t = print_to_string(r, CLI_PRINT_CSV, 0);
    const char *csv = "n_nationkey,n_name,n_regionkey\n0,ALGERIA,0\n1,ARGENTINA,1\n2,BRAZIL,1\n";
    assert_memory_equal(t, csv, strlen(csv));
    free(t);

    t = print_to_string(r, CLI_PRINT_JSON, '|');
    const char *json = "{\"n_nationkey\":0,\"n_name\":\"ALGERIA\",\"n_regionkey\":0}\n"
                       "{\"n_nationkey\":1,\"n_name\":\"ARGENTINA\",\"n_regionkey\":1}\n";
    assert_memory_equal(t, json, strlen(json));
    free(t);
    ex_result_destroy(r);
    ex_plan_destroy(p);
}

static void test_mode_names(void **state)
{
    cli_print_mode m;
    assert_int_equal(cli_print_mode_parse("json", &m), 0);
    assert_int_equal(m, CLI_PRINT_JSON);
    assert_int_equal(cli_print_mode_parse("csv", &m), 0);
    assert_int_equal(m, CLI_PRINT_CSV);
    assert_int_equal(cli_print_mode_parse("answers", &m), 0);
    assert_int_equal(m, CLI_PRINT_ANSWERS);
    assert_string_equal(cli_print_mode_name(CLI_PRINT_ANSWERS), "answers");
    assert_int_equal(cli_print_mode_parse("box", &m), -1);
    assert_string_equal(cli_print_mode_name(CLI_PRINT_TABLE), "table");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_every_type), cmocka_unit_test(test_json_every_type), cmocka_unit_test(test_csv_every_type), cmocka_unit_test(test_double_repr),
        cmocka_unit_test(test_double_shortest),  cmocka_unit_test(test_empty_result),
        cmocka_unit_test(test_nation_scan),      cmocka_unit_test(test_mode_names),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

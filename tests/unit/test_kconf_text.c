/*
 * test_kconf_text.c - conformance of the TEXT functions (upper, lower,
 * initcap, ||, concat_ws, replace, lpad, rpad, repeat, reverse) on the
 * device named by PISTA_TEST_DEVICE, against references written here in
 * plain C (case mapping by the C library's towupper/towlower in a UTF-8
 * locale, not by kn_case.h): random strings with multi-byte characters,
 * malformed bytes and NULLs over several batches, several text registers
 * in one program (their slots in one text area), nesting, a text area too
 * small (an error, not a write past it) and a program whose text slots do
 * not match its instructions (refused).
 */
#include "expr_testutil.h"

#include <locale.h>
#include <wctype.h>

#define N 2500   /* rows: two full batches and a partial one */

static et_dev X;
static ex_plan *P;
static pa_err E;
static bool have_locale;

static int setup(void **state)
{
    X = et_dev_open(0);
    have_locale = setlocale(LC_CTYPE, "C.UTF-8") != NULL;
    return 0;
}
static int teardown(void **state)
{
    et_dev_close(&X);
    return 0;
}
static int each_setup(void **state)
{
    pa_err_init(&E);
    assert_int_equal(ex_plan_create(&P, NULL), PA_OK);
    return 0;
}
static int each_teardown(void **state)
{
    ex_plan_destroy(P);
    pa_err_close(&E);
    return 0;
}

static pa_type V(void) { return et_t(PA_TYPE_VARCHAR); }
static ex_expr *col(int i) { return ex_expr_col_typed(P, i, V(), &E); }
static ex_expr *str(const char *s) { return ex_expr_varchar(P, s, &E); }

/* ------------------------------------------------------------ references */

typedef struct buf {
    char b[4096];
    int n;
} buf;

static void put(buf *o, const char *s, int n)
{
    assert_true(o->n + n <= (int)sizeof o->b);
    memcpy(o->b + o->n, s, (size_t)n);
    o->n += n;
}

/* One character of s (n bytes): its length and code point, or -1 for a
 * byte that does not start a well-formed sequence (taken alone). */
static int ref_char(const unsigned char *s, int n, uint32_t *cp)
{
    int l = s[0] < 0x80 ? 1 : s[0] >= 0xC2 && s[0] < 0xE0 ? 2 : s[0] >= 0xE0 && s[0] < 0xF0 ? 3
          : s[0] >= 0xF0 && s[0] < 0xF5 ? 4 : 0;
    if (l == 0 || l > n)
        return -1;
    uint32_t v = s[0] & (l == 1 ? 0x7F : l == 2 ? 0x1F : l == 3 ? 0x0F : 0x07);
    for (int k = 1; k < l; k++) {
        if ((s[k] & 0xC0) != 0x80)
            return -1;
        v = v << 6 | (s[k] & 0x3F);
    }
    if ((l == 3 && (v < 0x800 || (v >= 0xD800 && v < 0xE000))) || (l == 4 && (v < 0x10000 || v > 0x10FFFF)))
        return -1;
    *cp = v;
    return l;
}

static void put_cp(buf *o, uint32_t c)
{
    char t[4];
    int n = c < 0x80 ? (t[0] = (char)c, 1)
          : c < 0x800 ? (t[0] = (char)(0xC0 | c >> 6), t[1] = (char)(0x80 | (c & 0x3F)), 2)
          : c < 0x10000 ? (t[0] = (char)(0xE0 | c >> 12), t[1] = (char)(0x80 | (c >> 6 & 0x3F)),
                           t[2] = (char)(0x80 | (c & 0x3F)), 3)
                        : (t[0] = (char)(0xF0 | c >> 18), t[1] = (char)(0x80 | (c >> 12 & 0x3F)),
                           t[2] = (char)(0x80 | (c >> 6 & 0x3F)), t[3] = (char)(0x80 | (c & 0x3F)), 4);
    put(o, t, n);
}

/* mode 0 upper, 1 lower, 2 initcap (PostgreSQL's: the first alphanumeric
 * character of each run in upper case, the others lower). */
static void ref_case(buf *o, const char *s, int n, int mode)
{
    bool in_word = false;
    for (int i = 0; i < n;) {
        uint32_t c;
        int l = ref_char((const unsigned char *)s + i, n - i, &c);
        if (l < 0) {
            put(o, s + i, 1);
            i++;
            in_word = false;
            continue;
        }
        i += l;
        if (mode == 0)
            c = (uint32_t)towupper((wint_t)c);
        else if (mode == 1)
            c = (uint32_t)towlower((wint_t)c);
        else {
            bool w = iswalnum((wint_t)c) != 0;
            c = !w ? c : in_word ? (uint32_t)towlower((wint_t)c) : (uint32_t)towupper((wint_t)c);
            in_word = w;
        }
        put_cp(o, c);
    }
}

static int chars(const char *s, int n)
{
    int k = 0;
    for (int i = 0; i < n;) {
        uint32_t c;
        int l = ref_char((const unsigned char *)s + i, n - i, &c);
        i += l < 0 ? 1 : l;
        k++;
    }
    return k;
}

static void ref_reverse(buf *o, const char *s, int n)
{
    int at[512], k = 0;
    for (int i = 0; i < n;) {
        uint32_t c;
        int l = ref_char((const unsigned char *)s + i, n - i, &c);
        at[k++] = i;
        i += l < 0 ? 1 : l;
    }
    at[k] = n;
    for (int j = k - 1; j >= 0; j--)
        put(o, s + at[j], at[j + 1] - at[j]);
}

static void ref_replace(buf *o, const char *s, int n, const char *from, const char *to)
{
    int fl = (int)strlen(from);
    for (int i = 0; i < n;) {
        if (fl && i + fl <= n && !memcmp(s + i, from, (size_t)fl)) {
            put(o, to, (int)strlen(to));
            i += fl;
        } else {
            put(o, s + i++, 1);
        }
    }
}

/* fill holds whole well-formed characters here. */
static void ref_pad(buf *o, const char *s, int n, int len, const char *fill, bool left)
{
    int have = chars(s, n);
    if (len <= 0)
        return;
    if (have >= len) {   /* the first len characters */
        int i = 0;
        for (int k = 0; k < len; k++) {
            uint32_t c;
            int l = ref_char((const unsigned char *)s + i, n - i, &c);
            i += l < 0 ? 1 : l;
        }
        put(o, s, i);
        return;
    }
    if (!left)
        put(o, s, n);
    int fn = (int)strlen(fill);
    for (int k = 0, f = 0; k < len - have; k++) {
        uint32_t c;
        int l = ref_char((const unsigned char *)fill + f, fn - f, &c);
        put(o, fill + f, l);
        f = (f + l) % fn;
    }
    if (left)
        put(o, s, n);
}

/* ----------------------------------------------------------------- inputs */

/* Random strings of pieces: ASCII words and punctuation, two- to
 * four-byte characters (with and without case), and malformed bytes. */
static const char *rnd_string(char *b)
{
    static const char *const piece[] = {"a",  "Z",  "hello", " ",  "-x_", "3d",    "\xc3\xa9", "\xc3\x89",
                                        "\xc3\x9f", "\xce\xa3", "\xcf\x82", "\xd0\xb6", "\xe2\x82\xac",
                                        "\xf0\x9f\x98\x80", "\xff", "\xc3", "\x80", "ab",   "\xc8\xba", "is"};
    int k = (int)(et_next() % 9), n = 0;
    for (int i = 0; i < k; i++) {
        const char *p = piece[et_next() % 20];
        memcpy(b + n, p, strlen(p));
        n += (int)strlen(p);
    }
    b[n] = 0;
    return b;
}

static pa_column random_strings(int64_t rows, int null_pct, char (*store)[64], const char **ss)
{
    for (int64_t i = 0; i < rows; i++)
        ss[i] = (int)(et_next() % 100) < null_pct ? NULL : rnd_string(store[i]);
    return et_strs(ss, rows);
}

static void expect_row(const pa_column *r, int64_t i, const buf *want, const char *what)
{
    if (et_slen(r, i) != want->n || memcmp(et_sp(r, i), want->b, (size_t)want->n))
        fail_msg("row %lld %s: got '%.*s' (%d bytes), want '%.*s' (%d bytes)", (long long)i, what, et_slen(r, i),
                 et_sp(r, i), et_slen(r, i), want->n, want->b, want->n);
}

/* ------------------------------------------------------------------ tests */

static void test_functions(void **state)
{
    if (!have_locale)
        skip();
    char (*store)[64] = malloc((size_t)2 * N * sizeof *store);
    const char **ss = malloc((size_t)2 * N * sizeof *ss);
    pa_column in[2] = {random_strings(N, 10, store, ss), random_strings(N, 10, store + N, ss + N)};
    enum { UP, LO, IC, REV, CAT, WS, REP, REP2, LP, RP, RPT, NEST, NX };
    ex_expr *ex[NX] = {
        [UP] = ex_expr_text(P, EX_UPPER, col(0), NULL, NULL, &E),
        [LO] = ex_expr_text(P, EX_LOWER, col(0), NULL, NULL, &E),
        [IC] = ex_expr_text(P, EX_INITCAP, col(1), NULL, NULL, &E),
        [REV] = ex_expr_text(P, EX_REVERSE, col(1), NULL, NULL, &E),
        [CAT] = ex_expr_text(P, EX_CONCAT, col(0), col(1), NULL, &E),
        [WS] = ex_expr_concat(P, str("\xe2\x82\xac"), (ex_expr *[]){col(0), col(1), str("!")}, 3, &E),
        [REP] = ex_expr_text(P, EX_REPLACE, col(0), str("a"), str("<\xc3\xa9\xc3\xa9>"), &E),
        [REP2] = ex_expr_text(P, EX_REPLACE, col(1), str("ab"), str(""), &E),
        [LP] = ex_expr_text(P, EX_LPAD, col(0), ex_expr_int(P, 7, &E), str("\xc3\xa9\xe2\x82\xac"), &E),
        [RP] = ex_expr_text(P, EX_RPAD, col(1), ex_expr_int(P, 3, &E), NULL, &E),
        [RPT] = ex_expr_text(P, EX_REPEAT, col(1), ex_expr_int(P, 3, &E), NULL, &E),
        [NEST] = ex_expr_text(P, EX_UPPER,
                              ex_expr_text(P, EX_CONCAT, col(0), ex_expr_text(P, EX_LOWER, col(1), NULL, NULL, &E),
                                           NULL, &E),
                              NULL, NULL, &E),
    };
    for (int k = 0; k < NX; k++)
        assert_non_null(ex[k]);
    pa_column r[NX];
    assert_int_equal(et_eval(&X, ex, NX, in, 2, N, r, &E), PA_OK);
    for (int64_t i = 0; i < N; i++) {
        const char *a = ss[i], *b = ss[N + i];
        int an = a ? (int)strlen(a) : 0, bn = b ? (int)strlen(b) : 0;
        buf w;
        /* NULLs: strict functions are NULL with an operand; concat_ws skips. */
        for (int k = 0; k < NX; k++) {
            bool want = k == WS ? true : k == UP || k == LO || k == REP || k == LP ? a != NULL
                      : k == CAT || k == NEST                                      ? a && b
                                                                                   : b != NULL;
            if (et_valid(&r[k], i) != want)
                fail_msg("row %lld expression %d: valid %d", (long long)i, k, et_valid(&r[k], i));
        }
        if (a) {
            w.n = 0, ref_case(&w, a, an, 0), expect_row(&r[UP], i, &w, "upper");
            w.n = 0, ref_case(&w, a, an, 1), expect_row(&r[LO], i, &w, "lower");
            w.n = 0, ref_replace(&w, a, an, "a", "<\xc3\xa9\xc3\xa9>"), expect_row(&r[REP], i, &w, "replace");
            w.n = 0, ref_pad(&w, a, an, 7, "\xc3\xa9\xe2\x82\xac", true), expect_row(&r[LP], i, &w, "lpad");
        }
        if (b) {
            w.n = 0, ref_case(&w, b, bn, 2), expect_row(&r[IC], i, &w, "initcap");
            w.n = 0, ref_reverse(&w, b, bn), expect_row(&r[REV], i, &w, "reverse");
            w.n = 0, ref_replace(&w, b, bn, "ab", ""), expect_row(&r[REP2], i, &w, "replace ''");
            w.n = 0, ref_pad(&w, b, bn, 3, " ", false), expect_row(&r[RP], i, &w, "rpad");
            w.n = 0;
            for (int k = 0; k < 3; k++)
                put(&w, b, bn);
            expect_row(&r[RPT], i, &w, "repeat");
        }
        if (a && b) {
            w.n = 0, put(&w, a, an), put(&w, b, bn), expect_row(&r[CAT], i, &w, "||");
            buf lb = {.n = 0}, cat = {.n = 0};
            ref_case(&lb, b, bn, 1);
            put(&cat, a, an), put(&cat, lb.b, lb.n);
            w.n = 0, ref_case(&w, cat.b, cat.n, 0), expect_row(&r[NEST], i, &w, "upper(a || lower(b))");
        }
        w.n = 0;   /* concat_ws('€', a, b, '!'): NULLs skipped with their separator */
        if (a)
            put(&w, a, an), put(&w, "\xe2\x82\xac", 3);
        if (b)
            put(&w, b, bn), put(&w, "\xe2\x82\xac", 3);
        put(&w, "!", 1);
        expect_row(&r[WS], i, &w, "concat_ws");
    }
    for (int k = 0; k < NX; k++)
        et_col_free(&r[k]);
    et_col_free(&in[0]), et_col_free(&in[1]);
    free(store), free(ss);
}

/* The byte bounds the slots rest on hold for every code point: a case
 * mapping never grows text by more than half, ASCII stays ASCII. */
static void test_case_growth(void **state)
{
    char *all = malloc(4 * 0x110000);
    int64_t n = 0;
    for (uint32_t c = 0x80; c < 0x110000; c++) {
        if (c >= 0xD800 && c < 0xE000)
            continue;
        char t[4];
        int l = c < 0x800 ? (t[0] = (char)(0xC0 | c >> 6), t[1] = (char)(0x80 | (c & 0x3F)), 2)
              : c < 0x10000 ? (t[0] = (char)(0xE0 | c >> 12), t[1] = (char)(0x80 | (c >> 6 & 0x3F)),
                               t[2] = (char)(0x80 | (c & 0x3F)), 3)
                            : (t[0] = (char)(0xF0 | c >> 18), t[1] = (char)(0x80 | (c >> 12 & 0x3F)),
                               t[2] = (char)(0x80 | (c >> 6 & 0x3F)), t[3] = (char)(0x80 | (c & 0x3F)), 4);
        memcpy(all + n, t, (size_t)l);
        n += l;
    }
    /* One row of every code point, upper and lower: the slot (twice the
     * input) holds them, and no other row's bytes are touched. */
    const char *rows[3] = {"ab", NULL, "cd"};
    char *big = malloc((size_t)n + 1);
    memcpy(big, all, (size_t)n);
    big[n] = 0;
    rows[1] = big;
    pa_column in = et_strs(rows, 3);
    ex_expr *ex[2] = {ex_expr_text(P, EX_UPPER, col(0), NULL, NULL, &E),
                      ex_expr_text(P, EX_LOWER, col(0), NULL, NULL, &E)};
    pa_column r[2];
    assert_int_equal(et_eval(&X, ex, 2, &in, 1, 3, r, &E), PA_OK);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(et_slen(&r[k], 0), 2);
        assert_memory_equal(et_sp(&r[k], 0), k ? "ab" : "AB", 2);
        assert_true(et_slen(&r[k], 1) <= n + n / 2);
        assert_memory_equal(et_sp(&r[k], 2), k ? "cd" : "CD", 2);
        et_col_free(&r[k]);
    }
    et_col_free(&in);
    free(big), free(all);
}

/* Constants fold on the host; what the compiler refuses says why. */
static void test_constants_and_refusals(void **state)
{
    struct { ex_expr *e; const char *want; } k[] = {
        {ex_expr_text(P, EX_UPPER, str("stra\xc3\x9f" "e \xc4\xb1"), NULL, NULL, &E), "STRA\xc3\x9f" "E I"},
        {ex_expr_text(P, EX_INITCAP, str("hi THERE o'neil 3rd-place"), NULL, NULL, &E), "Hi There O'Neil 3rd-Place"},
        {ex_expr_text(P, EX_LPAD, str("hello"), ex_expr_int(P, 2, &E), str("x"), &E), "he"},
        {ex_expr_text(P, EX_LPAD, str("hi"), ex_expr_int(P, 5, &E), str(""), &E), "hi"},
        {ex_expr_text(P, EX_RPAD, str("hi"), ex_expr_int(P, -1, &E), str("x"), &E), ""},
        {ex_expr_text(P, EX_REPLACE, str("aaa"), str("aa"), str("b"), &E), "ba"},
        {ex_expr_text(P, EX_REPEAT, str("ab"), ex_expr_int(P, 0, &E), NULL, &E), ""},
        {ex_expr_concat(P, NULL, (ex_expr *[]){ex_expr_null(P, V(), &E), ex_expr_null(P, V(), &E)}, 2, &E), ""},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        assert_non_null(k[i].e);
        assert_true(ex_expr_is_const(k[i].e));
        if (k[i].e->str_len != (int)strlen(k[i].want) || memcmp(k[i].e->str, k[i].want, strlen(k[i].want)))
            fail_msg("constant %zu: '%.*s', want '%s'", i, k[i].e->str_len, k[i].e->str, k[i].want);
    }
    ex_expr *n = ex_expr_concat(P, ex_expr_null(P, V(), &E), (ex_expr *[]){str("a")}, 1, &E);
    assert_true(ex_expr_is_const(n) && n->is_null);   /* concat_ws with a NULL separator */
    pa_err e;
    pa_err_init(&e);
    assert_null(ex_expr_text(P, EX_REPLACE, col(0), col(1), str("x"), &e));
    assert_int_equal(e.code, PA_EUNSUPPORTED);
    assert_non_null(strstr(e.msg, "replace: the text to replace must be a constant"));
    pa_err_close(&e);
    pa_err_init(&e);
    assert_null(ex_expr_text(P, EX_REPEAT, col(0), ex_expr_int(P, 200000000, &e), NULL, &e));
    assert_non_null(strstr(e.msg, "requested length too large"));
    pa_err_close(&e);
    pa_err_init(&e);
    assert_null(ex_expr_text(P, EX_UPPER, ex_expr_int(P, 1, &e), NULL, NULL, &e));
    assert_non_null(strstr(e.msg, "upper: an argument of type INTEGER"));
    pa_err_close(&e);
}

/* A text area smaller than the program needs is an error before any
 * byte is written; a program whose slots disagree with its instructions
 * is refused by the check every evaluator runs. */
static void test_bad_area_and_program(void **state)
{
    const char *rows[] = {"abc", "de", "", "fghij"};
    pa_column in = et_strs(rows, 4);
    ex_expr *e = ex_expr_text(P, EX_CONCAT, col(0), ex_expr_text(P, EX_UPPER, col(0), NULL, NULL, &E), NULL, &E);
    pa_type t = V();
    kn_program *prog = NULL;
    assert_int_equal(ex__compile(&e, 1, &t, 1, &prog, &E), PA_OK);
    assert_int_equal(prog->n_text, 2);
    int64_t need = kn_eval_str_bound(prog, KN_EVAL_TEXT_AREA, &in, 1, 4);
    /* upper(a): twice a's 10 bytes, 24 rounded; a || upper(a): 10 + 20, 32. */
    assert_int_equal(need, 24 + 32);
    pa_column din = et_to_dev(&X, &in), dout = {.type = t, .length = 4};
    void *scratch = NULL, *text = NULL;
    assert_int_equal(dv_alloc(X.d, kn_eval_scratch_size(prog), &scratch, NULL), PA_OK);
    assert_int_equal(dv_alloc(X.d, (size_t)need, &text, NULL), PA_OK);
    assert_int_equal(dv_alloc(X.d, 64, &dout.data, NULL), PA_OK);
    int32_t z[5] = {0};
    dout.offsets = et_up(&X, z, sizeof z);
    kn_ctx ctx = kc_err_ctx(X.d, X.s);
    pa_err err;
    pa_err_init(&err);
    int rc = kc_err_end(&ctx, kn_eval(&ctx, prog, &din, 1, 4, &dout, scratch, text, need - 8, &err), &err);
    assert_int_equal(rc, PA_EINVAL);
    assert_non_null(strstr(err.msg, "text area"));
    pa_err_close(&err);
    ((kn_text_reg *)((char *)prog + prog->text_at))[0].per_row = 1;   /* tampered */
    pa_err_init(&err);
    assert_int_equal(kn_program_check(prog, &err), PA_EINVAL);
    assert_non_null(strstr(err.msg, "text slots"));
    pa_err_close(&err);
    dv_free(X.d, scratch), dv_free(X.d, text);
    et_dcol_free(&X, &din), et_dcol_free(&X, &dout);
    et_col_free(&in);
    pa_free(prog);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_functions, each_setup, each_teardown),
        cmocka_unit_test_setup_teardown(test_case_growth, each_setup, each_teardown),
        cmocka_unit_test_setup_teardown(test_constants_and_refusals, each_setup, each_teardown),
        cmocka_unit_test_setup_teardown(test_bad_area_and_program, each_setup, each_teardown),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

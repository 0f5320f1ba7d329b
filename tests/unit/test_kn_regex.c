/*
 * test_kn_regex.c - the regular-expression compiler (kn_regex.c) and the
 * per-row matcher every device runs (kn_regex.h): matches and their
 * positions, captures, leftmost-first priority, greedy and lazy and counted
 * repetition, classes, UTF-8, case folding, regexp_replace's rules for
 * empty matches and replacement escapes (DuckDB's results, checked with
 * tests/oracle; PostgreSQL 15's where DuckDB errs or leaves the string
 * unchanged), the errors, the size limit and a pattern that would take
 * exponential time with backtracking. Expected values by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "kernels/kn_expr_int.h"
#include "kernels/kn_regex.h"

static uint8_t prog[KN_RE_MAX_BYTES];
static int64_t prog_len;

/* Compiles pat (must succeed) into prog; the program must pass the check. */
static void compile(const char *pat, int flags)
{
    pa_err e;
    pa_err_init(&e);
    if (kn_regex_compile(pat, (int64_t)strlen(pat), flags, prog, &prog_len, &e) != PA_OK)
        fail_msg("'%s' refused: %s", pat, e.msg);
    pa_err_close(&e);
    if (!kn__re_check(prog, prog_len))
        fail_msg("'%s': the compiled program fails kn__re_check", pat);
}

static kn__str str(const char *s) { return (kn__str){s, (int64_t)strlen(s)}; }

static bool like(const char *pat, int flags, const char *s)
{
    compile(pat, flags);
    return kn__re_like(prog, str(s));
}

/* The span of group g of the leftmost-first match of pat in s (from byte
 * from), compared with lo, hi (-1, -1: no match, or the group took no part). */
static void span_from(const char *pat, int flags, const char *s, int64_t from, int g, int32_t lo, int32_t hi)
{
    compile(pat, flags);
    int32_t ms = -1, me = -1, glo = -1, ghi = -1;
    bool m = kn__re_search(prog, s, (int64_t)strlen(s), from, false, 0, false, &ms, &me);
    if (m && g > 0 && !kn__re_search(prog, s, (int64_t)strlen(s), ms, true, g, false, &glo, &ghi))
        fail_msg("'%s' on '%s': the anchored run found no match", pat, s);
    if (!m)
        ms = me = -1;
    int32_t got_lo = g ? glo : ms, got_hi = g ? ghi : me;
    if (got_lo != lo || got_hi != hi)
        fail_msg("'%s' on '%s' group %d: [%d, %d), want [%d, %d)", pat, s, g, got_lo, got_hi, lo, hi);
}

static void span(const char *pat, int flags, const char *s, int g, int32_t lo, int32_t hi)
{
    span_from(pat, flags, s, 0, g, lo, hi);
}

/* regexp_replace(s, pat, r, flags) must give want, within the bound the
 * text area is sized by (kn__text_rule). */
static void replace(const char *s, const char *pat, const char *r, int flags, const char *want)
{
    compile(pat, flags);
    static char out[1 << 16];
    int64_t n = (int64_t)strlen(s), lit, refs;
    uint32_t groups;
    kn__re_repl_measure(str(r), &lit, &refs, &groups);
    int64_t len = kn__re_replace(prog, str(s), str(r), out);
    if (len != (int64_t)strlen(want) || memcmp(out, want, (size_t)len) != 0)
        fail_msg("regexp_replace('%s', '%s', '%s', %d) = '%.*s', want '%s'", s, pat, r, flags, (int)len, out, want);
    assert_true(len <= n + (n + 1) * lit + refs * n);
}

/* pat must be refused with a message holding what. */
static void refused(const char *pat, const char *what)
{
    pa_err e;
    pa_err_init(&e);
    int64_t len;
    int rc = kn_regex_compile(pat, (int64_t)strlen(pat), 0, prog, &len, &e);
    if (rc != PA_EINVAL || !strstr(e.msg, what))
        fail_msg("'%s': rc %d, message '%s', want '%s'", pat, rc, e.msg, what);
    pa_err_close(&e);
}

static void test_literals_and_positions(void **state)
{
    assert_true(like("abc", 0, "xxabcxx"));
    assert_false(like("abd", 0, "xxabcxx"));
    assert_true(like("", 0, ""));
    assert_true(like("", 0, "abc"));
    assert_false(like("a", 0, ""));
    span("b+", 0, "abbbc", 0, 1, 4);
    span("c", 0, "abab", 0, -1, -1);
    span("a\\.b", 0, "axb a.b", 0, 4, 7);
    span("\\(\\*\\)", 0, "x(*)", 0, 1, 4);
    span("a\\tb", 0, "a\tb", 0, 0, 3);
    span("x}]", 0, "x}]", 0, 0, 3);   /* } and ] alone are characters */
}

static void test_leftmost_first(void **state)
{
    span("a|ab", 0, "ab", 0, 0, 1);   /* alternation order, not the longest */
    span("ab|a", 0, "ab", 0, 0, 2);
    span("b|ab", 0, "ab", 0, 0, 2);   /* the leftmost start wins over order */
    span("(a|ab)(c|bcd)", 0, "abcd", 0, 0, 4);
    span("(a|ab)(c|bcd)", 0, "abcd", 1, 0, 1);
    span("(a|ab)(c|bcd)", 0, "abcd", 2, 1, 4);
    span("(a|ab)(c|bcd)", 0, "abc", 1, 0, 2);   /* a fails later: ab */
}

static void test_greedy_lazy(void **state)
{
    span("a+", 0, "aaa", 0, 0, 3);
    span("a+?", 0, "aaa", 0, 0, 1);
    span("a*?", 0, "aaa", 0, 0, 0);
    span("a??", 0, "aaa", 0, 0, 0);
    span("a?", 0, "aaa", 0, 0, 1);
    span("a*?b", 0, "aab", 0, 0, 3);
    span("<.*>", 0, "<a><b>", 0, 0, 6);
    span("<.*?>", 0, "<a><b>", 0, 0, 3);
    span("(a+)(a*)", 0, "aaa", 2, 3, 3);
    span("(a+?)(a*)", 0, "aaa", 2, 1, 3);
}

static void test_counted(void **state)
{
    span("a{2}", 0, "aaaa", 0, 0, 2);
    span("a{2,3}", 0, "aaaa", 0, 0, 3);
    span("a{2,}", 0, "aaaaa", 0, 0, 5);
    span("a{2,3}?", 0, "aaaa", 0, 0, 2);
    span("a{2,}?", 0, "aaaa", 0, 0, 2);
    span("a{3}", 0, "aa", 0, -1, -1);
    span("xa{0}y", 0, "xy", 0, 0, 2);
    span("(ab){2}", 0, "ababab", 0, 0, 4);
    span("(ab){2}", 0, "ababab", 1, 2, 4);   /* the last iteration's */
    span("[0-9]{3}-[0-9]{4}", 0, "tel 555-1234.", 0, 4, 12);
    compile("a{1,60}", 0);   /* 1 + 59 x 2 + 3 instructions: fits */
}

static void test_classes(void **state)
{
    span("[a-c]+", 0, "xxbcaz", 0, 2, 5);
    span("[^a-z]", 0, "abC", 0, 2, 3);
    span("[[:digit:]]+", 0, "ab123c", 0, 2, 5);
    span("[[:alpha:][:digit:]_]+", 0, "-a_9-", 0, 1, 4);
    span("[[:xdigit:]]+", 0, "xyzBEEFg", 0, 3, 7);
    span("[[:upper:]]+", 0, "abCDe", 0, 2, 4);
    span("[[:lower:]]+", 0, "ABcdE", 0, 2, 4);
    span("[[:space:]]+", 0, "a \t\nb", 0, 1, 4);
    span("[[:punct:]]+", 0, "ab!?.c", 0, 2, 5);
    span("[[:alnum:]]+", 0, "--a1--", 0, 2, 4);
    span("[]a]+", 0, "x]a]", 0, 1, 4);    /* ] first is a character */
    span("[a-]+", 0, "x-a-", 0, 1, 4);    /* - last too */
    span("[\\]\\\\]+", 0, "x]\\", 0, 1, 3);
    span("[\\d.]+", 0, "v1.25!", 0, 1, 5);
    span("\\d+", 0, "ab123c", 0, 2, 5);
    span("\\D+", 0, "12ab3", 0, 2, 4);
    span("\\w+", 0, "--a_1--", 0, 2, 5);
    span("\\W+", 0, "ab--c", 0, 2, 4);
    span("\\s+", 0, "a \tb", 0, 1, 3);
    span("\\S+", 0, "  ab ", 0, 2, 4);
    span(".", 0, "\n", 0, 0, 1);         /* . takes a newline, as in PostgreSQL */
    assert_false(like("[[:alpha:]]", 0, "\xc3\xa9"));   /* ASCII classes, as RE2's */
}

static void test_utf8(void **state)
{
    span("\xc3\xa9", 0, "caf\xc3\xa9", 0, 3, 5);       /* é */
    span(".", 0, "\xc3\xa9x", 0, 0, 2);                /* one character, two bytes */
    assert_true(like("^.$", 0, "\xe2\x82\xac"));       /* € */
    assert_false(like("^..$", 0, "\xe2\x82\xac"));
    span("[\xc3\xa0-\xc3\xbf]+", 0, "na\xc3\xafve", 0, 2, 4);   /* [à-ÿ] on naïve */
    assert_true(like("h.llo", 0, "h\xc3\xa9llo"));
    span("[^a]", 0, "a\xf0\x9f\x98\x80", 0, 1, 5);      /* a 4-byte character */
}

static void test_case_insensitive(void **state)
{
    assert_true(like("abc", KN_RE_ICASE, "xABCx"));
    assert_false(like("abc", 0, "xABCx"));
    assert_true(like("\xc3\xa4", KN_RE_ICASE, "\xc3\x84"));        /* ä and Ä */
    span("[a-z]+", KN_RE_ICASE, "1ABC2", 0, 1, 4);
    span("[^a-z]", KN_RE_ICASE, "ABC1", 0, 3, 4);
    span("[[:upper:]]+", KN_RE_ICASE, "1ab2", 0, 1, 3);
    assert_true(like("s", KN_RE_ICASE, "\xc5\xbf"));               /* U+017F long s folds with s */
    assert_true(like("K", KN_RE_ICASE, "\xe2\x84\xaa"));           /* U+212A Kelvin sign with k */
    replace("\xc3\x84\xc3\x96\xc3\x9c \xc3\xa4\xc3\xb6\xc3\xbc", "\xc3\xa4", "X", KN_RE_ICASE | KN_RE_GLOBAL,
            "X\xc3\x96\xc3\x9c X\xc3\xb6\xc3\xbc");
}

static void test_anchors(void **state)
{
    assert_false(like("^a", 0, "ba"));
    assert_false(like("a$", 0, "ab"));
    assert_true(like("^$", 0, ""));
    assert_false(like("^$", 0, "a"));
    assert_true(like("^(green|blue)", 0, "blue sky"));
    span_from("^a", 0, "aa", 1, 0, -1, -1);   /* the string's start, not the search's */
    span_from("a$", 0, "aa", 1, 0, 1, 2);
    assert_false(like("a$", 0, "a\n"));       /* not before a final newline */
}

static void test_captures(void **state)
{
    span("(a)|b", 0, "b", 1, -1, -1);
    span("(?:a)(b)", 0, "ab", 1, 1, 2);
    span("((a)(b))", 0, "ab", 3, 1, 2);
    span("(a*)*", 0, "b", 0, 0, 0);
    replace("abc", "(x)?b", "[\\1]", 0, "a[]c");
    replace("12-345", "(\\d+)-(\\d+)", "\\2-\\1", 0, "345-12");
    replace("25-989-741", "([0-9]+)-([0-9]+)", "\\2-\\1", 0, "989-25-741");
    replace("abab", "(a)(b)", "\\2\\1", KN_RE_GLOBAL, "baba");
}

/* Empty matches under g, as RE2's GlobalReplace (DuckDB) has them: an
 * empty match right where the last one ended is skipped. PostgreSQL 15
 * agrees on x*, ^, $ and '' but gives -a--c- for b* and -- for (a*)*. */
static void test_replace_empty_matches(void **state)
{
    replace("abc", "x*", "-", KN_RE_GLOBAL, "-a-b-c-");
    replace("abc", "b*", "-", KN_RE_GLOBAL, "-a-c-");
    replace("aaa", "(a*)*", "-", KN_RE_GLOBAL, "-");
    replace("ab", "", "-", KN_RE_GLOBAL, "-a-b-");
    replace("abc", "^", "-", KN_RE_GLOBAL, "-abc");
    replace("abc", "$", "-", KN_RE_GLOBAL, "abc-");
    replace("", "x*", "-", KN_RE_GLOBAL, "-");
    replace("h\xc3\xa9", "x*", "-", KN_RE_GLOBAL, "-h-\xc3\xa9-");   /* a whole character at a time */
    replace("aaa", "a*?", "-", 0, "-aaa");
    replace("aaa", "a+?", "-", KN_RE_GLOBAL, "---");
    replace("aaa", "a", "b", 0, "baa");
    replace("abc", "z", "-", KN_RE_GLOBAL, "abc");
}

static void test_replacement_escapes(void **state)
{
    replace("abc", "b", "\\\\", 0, "a\\c");
    replace("abc", "a|ab", "[\\0]", 0, "[a]bc");
    replace("abc", "b", "<\\&>", 0, "a<b>c");
    replace("abc", "b", "\\x", 0, "a\\xc");     /* PostgreSQL's: the backslash stays */
    replace("abc", "b", "x\\", 0, "ax\\c");
    replace("abc", "(b)", "[\\3]", 0, "a[]c");  /* a group the pattern lacks: '' (PostgreSQL) */
    int64_t lit, refs;
    uint32_t groups;
    kn__re_repl_measure(str("a\\1\\\\b\\&\\9\\x"), &lit, &refs, &groups);
    assert_int_equal(lit, 5);
    assert_int_equal(refs, 3);
    assert_int_equal(groups, (1u << 1) | (1u << 0) | (1u << 9));
}

static void test_errors(void **state)
{
    refused("(a", "missing ) for the ( at position 1");
    refused("ab)", "unmatched ) at position 3");
    refused("[a", "missing ] for the [ at position 1");
    refused("*a", "* has nothing to repeat at position 1");
    refused("a|+", "+ has nothing to repeat at position 3");
    refused("a**", "* follows another quantifier at position 3");
    refused("(?=a)", "(?= (lookahead) is not supported at position 1");
    refused("x(?<n>a)", "at position 2");
    refused("(?i)a", "embedded option");
    refused("(a)\\1", "\\1 (a backreference) is not supported at position 4");
    refused("\\bx", "\\b is not supported at position 1");
    refused("a\\", "trailing \\ at position 2");
    refused("a{3,2}", "invalid repetition count");
    refused("a{", "{ is not a valid repetition");
    refused("a{1001}", "above 1000");
    refused("[z-a]", "invalid range");
    refused("[[:foo:]]", "unknown class [:foo:]");
    refused("[\\D]", "\\D inside [ ] is not supported");
    refused("\xc3(", "malformed UTF-8 at position 1");
    refused("\xc3\xa9\xc3\xa9)", "unmatched ) at position 3");   /* characters, not bytes */
    refused("(a", "invalid regular expression '(a'");
}

static void test_too_complex(void **state)
{
    refused("a{1,70}", "too complex");
    refused("a{1,100}", "at most 128 instructions");
    char deep[200] = "";
    for (int k = 0; k < 65; k++)
        strcat(deep, "(");
    strcat(deep, "a");
    for (int k = 0; k < 65; k++)
        strcat(deep, ")");
    refused(deep, "too complex");
    char big[400];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = 0;
    refused(big, "too complex");
}

/* With backtracking (a*)*b takes exponential time on a run of a's with no
 * b; the VM is linear. */
static void test_pathological(void **state)
{
    enum { N = 200000 };
    static char s[N + 2];
    memset(s, 'a', N);
    clock_t t0 = clock();
    assert_false(like("(a*)*b", 0, s));
    assert_false(like("(a|aa)*c", 0, s));
    assert_false(like("(a+a+)+y", 0, s));
    s[N] = 'b';
    span("(a*)*b", 0, s, 0, 0, N + 1);
    replace("aaaa", "(a*)*b", "-", KN_RE_GLOBAL, "aaaa");
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    if (secs > 20)
        fail_msg("pathological patterns took %.1f s", secs);
}

/* The program check refuses what the VM could run out of bounds with. */
static void test_check(void **state)
{
    compile("a(b|c)*[x-z]$", 0);
    assert_true(kn__re_check(prog, prog_len));
    assert_false(kn__re_check(prog, KN_RE_HDR + 4));   /* truncated */
    uint8_t bad[KN_RE_MAX_BYTES];
    memcpy(bad, prog, (size_t)prog_len);
    bad[0] ^= 1;
    assert_false(kn__re_check(bad, prog_len));
    for (int pc = 0; pc < prog[2]; pc++) {
        memcpy(bad, prog, (size_t)prog_len);
        uint8_t *in = bad + KN_RE_HDR + 4 * pc;
        if (in[0] == KN_RE_SPLIT || in[0] == KN_RE_JMP)
            in[1] = prog[2];   /* a target past the end */
        else if (in[0] == KN_RE_CLASS)
            in[1] = 0, in[2] = 0;   /* ranges inside the header */
        else if (in[0] == KN_RE_SAVE)
            in[1] = 200;
        else
            in[0] = KN_RE__NOPS;
        assert_false(kn__re_check(bad, prog_len));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_literals_and_positions), cmocka_unit_test(test_leftmost_first),
        cmocka_unit_test(test_greedy_lazy),            cmocka_unit_test(test_counted),
        cmocka_unit_test(test_classes),                cmocka_unit_test(test_utf8),
        cmocka_unit_test(test_case_insensitive),       cmocka_unit_test(test_anchors),
        cmocka_unit_test(test_captures),               cmocka_unit_test(test_replace_empty_matches),
        cmocka_unit_test(test_replacement_escapes),    cmocka_unit_test(test_errors),
        cmocka_unit_test(test_too_complex),            cmocka_unit_test(test_pathological),
        cmocka_unit_test(test_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

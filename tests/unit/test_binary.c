/*
 * test_binary.c - core/binary.h: BYTEA and UUID text as PostgreSQL writes
 * and reads it. Expected values are PostgreSQL's (its documentation's
 * examples, checked by hand), then random values round trip through
 * format and parse, and column printing (pa_format_value) cuts long
 * values without overrunning the buffer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/binary.h"

static bool bytea_in(const char *s, uint8_t *out, int64_t *n) { return pa_bytea_parse(s, (int64_t)strlen(s), out, n); }

static void test_bytea_text(void **state)
{
    (void)state;
    uint8_t b[64];
    int64_t n = 0;
    char t[160];
    /* PostgreSQL 8.4 docs, "bytea Escape Format": SELECT 'abc \153\154\155 \052\251\124'::bytea */
    assert_true(bytea_in("abc \\153\\154\\155 \\052\\251\\124", b, &n));
    assert_int_equal(pa_bytea_format(b, n, t), 24);
    assert_memory_equal(t, "\\x616263206b6c6d202aa954", 24);
    assert_true(bytea_in("\\xDEADBEEF", b, &n));
    assert_int_equal(n, 4);
    assert_memory_equal(b, "\xde\xad\xbe\xef", 4);
    assert_true(bytea_in("\\x de ad\nbe\tef", b, &n));   /* whitespace between pairs */
    assert_int_equal(n, 4);
    assert_true(bytea_in("\\x", b, &n));
    assert_int_equal(n, 0);
    assert_int_equal(pa_bytea_format(b, 0, t), 2);
    assert_true(bytea_in("", b, &n));
    assert_int_equal(n, 0);
    assert_true(bytea_in("a\\\\b", b, &n));   /* a backslash doubled */
    assert_int_equal(n, 3);
    assert_memory_equal(b, "a\\b", 3);
    assert_true(bytea_in("\\000x", b, &n));   /* a NUL byte */
    assert_int_equal(n, 2);
    assert_int_equal(b[0], 0);
    /* Errors, as PostgreSQL's byteain gives them. */
    assert_false(bytea_in("\\xabc", b, &n));   /* an odd number of digits */
    assert_false(bytea_in("\\xzz", b, &n));
    assert_false(bytea_in("\\x a b", b, &n));   /* a pair split by a space */
    assert_false(bytea_in("a\\b", b, &n));      /* a lone backslash */
    assert_false(bytea_in("\\400", b, &n));     /* above \377 */
    assert_false(bytea_in("\\12", b, &n));      /* too few octal digits */
}

static bool uuid_in(const char *s, uint8_t *out) { return pa_uuid_parse(s, (int64_t)strlen(s), out); }

static void test_uuid_text(void **state)
{
    (void)state;
    /* The input forms of PostgreSQL's documentation (8.12, UUID Type): all
     * the same value. */
    static const char *const forms[] = {
        "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11", "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}",
        "a0eebc999c0b4ef8bb6d6bb9bd380a11",     "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11",
        "{a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11}", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        uint8_t u[16];
        char t[PA_UUID_TEXT];
        assert_true(uuid_in(forms[i], u));
        assert_int_equal(pa_uuid_format(u, t), PA_UUID_TEXT);
        assert_memory_equal(t, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", PA_UUID_TEXT);
    }
    uint8_t u[16];
    static const char *const bad[] = {
        "",
        "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1",     /* a digit short */
        "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a111",   /* a digit over */
        "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-",   /* a hyphen at the end */
        "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1g",    /* not hex */
        "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",   /* an open brace */
        "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}",   /* a close brace without an open one */
        "a0e-ebc99-9c0b-4ef8-bb6d-6bb9bd380a11",   /* a hyphen inside a group of four */
        "-a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        "a0eebc99--9c0b-4ef8-bb6d-6bb9bd380a11",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_false(uuid_in(bad[i], u));
}

static void test_round_trips(void **state)
{
    (void)state;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int round = 0; round < 20000; round++) {
        uint8_t v[40], back[80];
        int64_t n = (int64_t)(pa_mix64(x++) % 40), m = 0;
        for (int64_t i = 0; i < n; i++)
            v[i] = (uint8_t)pa_mix64(x++);
        char t[2 + 80];
        int64_t tl = pa_bytea_format(v, n, t);
        assert_int_equal(tl, 2 + 2 * n);
        assert_true(pa_bytea_parse(t, tl, back, &m));
        assert_int_equal(m, n);
        assert_memory_equal(back, v, (size_t)n);
        /* Escape format: every byte as \ooo reads back the same. */
        char e[160];
        int64_t el = 0;
        for (int64_t i = 0; i < n; i++) {
            e[el++] = '\\';
            e[el++] = (char)('0' + (v[i] >> 6));
            e[el++] = (char)('0' + ((v[i] >> 3) & 7));
            e[el++] = (char)('0' + (v[i] & 7));
        }
        assert_true(pa_bytea_parse(e, el, back, &m));
        assert_int_equal(m, n);
        assert_memory_equal(back, v, (size_t)n);
        uint8_t u[16], u2[16];
        char ut[PA_UUID_TEXT];
        for (int i = 0; i < 16; i++)
            u[i] = (uint8_t)pa_mix64(x++);
        pa_uuid_format(u, ut);
        assert_true(pa_uuid_parse(ut, PA_UUID_TEXT, u2));
        assert_memory_equal(u, u2, 16);
    }
}

/* pa_format_value of BYTEA and UUID columns: the whole length returned,
 * the text cut to the buffer, NUL-terminated, and NULL bytes printed. */
static void test_format_value(void **state)
{
    (void)state;
    char data[] = "\x00\x01\xff" "0123456789abcdef";
    int32_t off[] = {0, 3, 3, 19};
    pa_column c = {.type = {PA_TYPE_BYTEA, 0, 0}, .length = 3, .data = data, .offsets = off};
    char buf[64];
    assert_int_equal(pa_format_value(&c, 0, PA_FMT_FULL, buf, sizeof buf), 8);
    assert_string_equal(buf, "\\x0001ff");
    assert_int_equal(pa_format_value(&c, 1, PA_FMT_FULL, buf, sizeof buf), 2);
    assert_string_equal(buf, "\\x");
    for (size_t cap = 1; cap <= 9; cap++) {   /* cut anywhere, odd or even */
        memset(buf, '#', sizeof buf);
        assert_int_equal(pa_format_value(&c, 0, PA_FMT_FULL, buf, cap), 8);
        assert_int_equal(strlen(buf), cap - 1 < 8 ? cap - 1 : 8);
        assert_memory_equal(buf, "\\x0001ff", strlen(buf));
        assert_int_equal(buf[cap], '#');
    }
    c.type.id = PA_TYPE_UUID;
    assert_int_equal(pa_format_value(&c, 2, PA_FMT_FULL, buf, sizeof buf), 36);
    assert_string_equal(buf, "30313233-3435-3637-3839-616263646566");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bytea_text),
        cmocka_unit_test(test_uuid_text),
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_format_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

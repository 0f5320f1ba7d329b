/*
 * test_case.c - the simple case mappings of kn_case.h: hand-picked facts
 * from the Unicode data (not read back from the generated tables) and, over
 * every code point, the UTF-8 length bounds the string functions size their
 * output by.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "kernels/kn_case.h"

#define UP(c) kn__s_upper_cp(c)
#define LO(c) kn__s_lower_cp(c)
#define TI(c) kn__s_title_cp(c)

/* c upper-cases to u and u lower-cases to c. */
static void pair(uint32_t c, uint32_t u)
{
    assert_int_equal(UP(c), u);
    assert_int_equal(LO(u), c);
    assert_int_equal(UP(u), u);
    assert_int_equal(LO(c), c);
}

static void test_ascii(void **state)
{
    pair('a', 'A');
    pair('z', 'Z');
    for (uint32_t c = 'a'; c <= 'z'; c++)
        pair(c, c - 32);
    const char same[] = "@[`{09 ~\x7f";
    for (const char *p = same; *p; p++) {
        assert_int_equal(UP((uint32_t)*p), (uint32_t)*p);
        assert_int_equal(LO((uint32_t)*p), (uint32_t)*p);
    }
    assert_int_equal(UP(0), 0);
    assert_int_equal(TI('q'), 'Q');
    assert_int_equal(TI('Q'), 'Q');
    assert_int_equal(TI('1'), '1');
}

static void test_latin(void **state)
{
    pair(0xE9, 0xC9);                  /* é É */
    assert_int_equal(UP(0xDF), 0xDF);  /* ß: its uppercase is "SS", no simple one */
    assert_int_equal(LO(0xDF), 0xDF);
    assert_int_equal(TI(0xDF), 0xDF);
    assert_int_equal(UP(0xFF), 0x178); /* ÿ Ÿ */
    assert_int_equal(LO(0x178), 0xFF);
    assert_int_equal(UP(0xB5), 0x39C); /* micro sign to Greek capital mu */
    assert_int_equal(UP(0xD7), 0xD7);  /* × between the letters */
    assert_int_equal(UP(0x131), 'I');  /* dotless ı */
    assert_int_equal(LO(0x130), 'i');  /* İ: the full mapping adds U+0307 */
    assert_int_equal(LO('I'), 'i');    /* no Turkish rules */
    pair(0x101, 0x100);                /* the alternating pairs of Latin Extended-A */
    pair(0x12F, 0x12E);
    pair(0x17E, 0x17D);
    assert_int_equal(UP(0x17F), 'S');  /* long s */
    assert_int_equal(LO(0x23A), 0x2C65);
    assert_int_equal(UP(0x2C65), 0x23A);
    assert_int_equal(LO(0x1E9E), 0xDF); /* capital sharp s */
    assert_int_equal(UP(0x1E9E), 0x1E9E);
    assert_int_equal(LO(0x212A), 'k');  /* Kelvin sign */
    pair(0xFF41, 0xFF21);               /* fullwidth a A */
}

static void test_other_scripts(void **state)
{
    pair(0x3C3, 0x3A3);                /* σ Σ */
    assert_int_equal(UP(0x3C2), 0x3A3); /* final ς */
    assert_int_equal(LO(0x3A3), 0x3C3);
    assert_int_equal(UP(0x1F80), 0x1F88); /* its full uppercase is 2 code points */
    pair(0x436, 0x416);                /* ж Ж */
    pair(0x451, 0x401);                /* ё Ё */
    pair(0x561, 0x531);                /* Armenian */
    pair(0x2D00, 0x10A0);              /* Georgian Asomtavruli and Nuskhuri */
    pair(0x10D0, 0x1C90);              /* Georgian Mkhedruli and Mtavruli */
    pair(0xAB70, 0x13A0);              /* Cherokee: the capitals are the older letters */
    pair(0x13F8, 0x13F0);
    pair(0x10428, 0x10400);            /* Deseret */
    pair(0x1E922, 0x1E900);            /* Adlam */
    const uint32_t same[] = {'0', 0x660, 0x4E00, 0x3042, 0xAC00, 0x1F600, 0xFFFD, 0xD800, 0xDFFF, 0x10FFFF};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        assert_int_equal(UP(same[i]), same[i]);
        assert_int_equal(LO(same[i]), same[i]);
        assert_int_equal(TI(same[i]), same[i]);
    }
}

static void test_title(void **state)
{
    assert_int_equal(UP(0x1C6), 0x1C4); /* dž DŽ */
    assert_int_equal(TI(0x1C6), 0x1C5); /* Dž */
    assert_int_equal(TI(0x1C4), 0x1C5);
    assert_int_equal(TI(0x1C5), 0x1C5);
    assert_int_equal(LO(0x1C5), 0x1C6);
    assert_int_equal(UP(0x1C5), 0x1C4);
    assert_int_equal(TI(0x1C9), 0x1C8); /* lj Lj */
    assert_int_equal(TI(0x1F3), 0x1F2); /* dz Dz */
    assert_int_equal(TI(0x10D0), 0x10D0); /* Mkhedruli has no titlecase of its own */
    assert_int_equal(TI(0xE9), 0xC9);   /* elsewhere, the uppercase */
    assert_int_equal(TI(0x3C2), 0x3A3);
    assert_int_equal(TI(0x1F80), 0x1F88);
    assert_int_equal(TI(0x10428), 0x10400);
}

static void test_beyond_unicode(void **state)
{
    const uint32_t big[] = {0x110000, 0x110041, 0x1FFFFF, 0x7FFFFFFF, 0xFFFFFFFF};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
        assert_int_equal(UP(big[i]), big[i]);
        assert_int_equal(LO(big[i]), big[i]);
        assert_int_equal(TI(big[i]), big[i]);
    }
}

static int len8(uint32_t c)
{
    return c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
}

/* Every mapping stays a code point, grows the UTF-8 by at most one byte,
 * keeps ASCII one byte and 2-byte characters at most 3: UPPER, LOWER and
 * INITCAP size their output at 1.5 times the input (1x for ASCII). */
static void test_utf8_bounds(void **state)
{
    int grown = 0;
    for (uint32_t c = 0; c < 0x110000; c++) {
        uint32_t m[3] = {UP(c), LO(c), TI(c)};
        for (int k = 0; k < 3; k++) {
            if (m[k] >= 0x110000 || len8(m[k]) > len8(c) + 1 || (len8(c) == 1 && len8(m[k]) != 1) ||
                (len8(c) == 2 && len8(m[k]) > 3))
                fail_msg("U+%04X maps (%d) to U+%04X", (unsigned)c, k, (unsigned)m[k]);
            grown += len8(m[k]) > len8(c);
        }
    }
    assert_true(grown > 0); /* e.g. U+023A, so the bound is not vacuous */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ascii),          cmocka_unit_test(test_latin),
        cmocka_unit_test(test_other_scripts),  cmocka_unit_test(test_title),
        cmocka_unit_test(test_beyond_unicode), cmocka_unit_test(test_utf8_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

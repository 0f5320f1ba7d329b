/*
 * binary.h - text of the byte types, with PostgreSQL's formats: BYTEA out
 * as "\x" and two lowercase hex digits per byte, in as that hex format
 * (whitespace allowed between pairs) or the escape format (bytes as they
 * are, "\\" a backslash, "\ooo" an octal byte); UUID out as
 * 8-4-4-4-12 lowercase hex digits, in as PostgreSQL's string_to_uuid
 * accepts (either case, optional braces, a hyphen allowed after any four
 * digits). Kernels (CPU loops and CUDA), storage, exec and the CLI share
 * it, so every function is static inline PA_HD: no libc calls, no tables
 * at file scope.
 *
 * Parsers take s[0, n) (not NUL-terminated) and return false on invalid
 * input, leaving the output unspecified.
 */
#ifndef PISTA_CORE_BINARY_H
#define PISTA_CORE_BINARY_H

#include "core/core.h"

#define PA_UUID_TEXT 36

static inline PA_HD char pa_hex_digit(unsigned v) { return (char)(v < 10 ? '0' + v : 'a' + (v - 10)); }

/* The value of hex digit c, or -1. */
static inline PA_HD int pa_hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Length of the text of n bytes of BYTEA. */
static inline PA_HD int64_t pa_bytea_text_len(int64_t n) { return 2 + 2 * n; }

/* Byte k of the text of BYTEA value p (k < pa_bytea_text_len): "\x", then
 * each byte's high and low hex digit. */
static inline PA_HD char pa_bytea_text_char(const uint8_t *p, int64_t k)
{
    if (k < 2)
        return k == 0 ? '\\' : 'x';
    uint8_t b = p[(k - 2) / 2];
    return pa_hex_digit(k % 2 == 0 ? b >> 4 : b & 15u);
}

/* Write the text of p[0, n) ("\x...") into out, which holds
 * pa_bytea_text_len(n) bytes (no NUL); returns that length. */
static inline PA_HD int64_t pa_bytea_format(const uint8_t *p, int64_t n, char *out)
{
    const int64_t len = pa_bytea_text_len(n);
    for (int64_t k = 0; k < len; k++)
        out[k] = pa_bytea_text_char(p, k);
    return len;
}

/* Parse BYTEA text s[0, n) into out (room for n bytes: the value is never
 * longer than its text); *len the bytes. */
static inline PA_HD bool pa_bytea_parse(const char *s, int64_t n, uint8_t *out, int64_t *len)
{
    int64_t k = 0;
    if (n >= 2 && s[0] == '\\' && s[1] == 'x') {
        for (int64_t i = 2; i < n;) {
            char c = s[i];
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
                i++;
                continue;
            }
            int hi = pa_hex_value(c), lo = i + 1 < n ? pa_hex_value(s[i + 1]) : -1;
            if (hi < 0 || lo < 0)
                return false;
            out[k++] = (uint8_t)(hi << 4 | lo);
            i += 2;
        }
        *len = k;
        return true;
    }
    for (int64_t i = 0; i < n;) {
        if (s[i] != '\\') {
            out[k++] = (uint8_t)s[i++];
            continue;
        }
        if (i + 1 < n && s[i + 1] == '\\') {
            out[k++] = '\\';
            i += 2;
            continue;
        }
        if (i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' &&
            s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
            out[k++] = (uint8_t)((s[i + 1] - '0') << 6 | (s[i + 2] - '0') << 3 | (s[i + 3] - '0'));
            i += 4;
            continue;
        }
        return false;
    }
    *len = k;
    return true;
}

/* Write the text of a UUID's 16 bytes into out (PA_UUID_TEXT bytes, no
 * NUL); returns PA_UUID_TEXT. */
static inline PA_HD int pa_uuid_format(const uint8_t *p, char *out)
{
    int k = 0;
    for (int i = 0; i < PA_UUID_BYTES; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[k++] = '-';
        out[k++] = pa_hex_digit(p[i] >> 4);
        out[k++] = pa_hex_digit(p[i] & 15u);
    }
    return k;
}

/* Parse UUID text s[0, n) into out[16]. */
static inline PA_HD bool pa_uuid_parse(const char *s, int64_t n, uint8_t *out)
{
    int64_t i = 0;
    bool braces = n > 0 && s[0] == '{';
    if (braces)
        i++;
    for (int b = 0; b < PA_UUID_BYTES; b++) {
        int hi = i < n ? pa_hex_value(s[i]) : -1, lo = i + 1 < n ? pa_hex_value(s[i + 1]) : -1;
        if (hi < 0 || lo < 0)
            return false;
        out[b] = (uint8_t)(hi << 4 | lo);
        i += 2;
        if (b % 2 == 1 && b < PA_UUID_BYTES - 1 && i < n && s[i] == '-')
            i++;
    }
    if (braces) {
        if (i >= n || s[i] != '}')
            return false;
        i++;
    }
    return i == n;
}

#endif

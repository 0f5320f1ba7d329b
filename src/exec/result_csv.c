/*
 * result_csv.c - a result as CSV text with every value in full (the shell's
 * --csv and COPY ... TO 'file' (FORMAT csv)): a DECIMAL's every digit, a
 * DOUBLE's shortest round-trip digits as DuckDB writes them, RFC 4180
 * quoting, NULL as an empty field.
 */
#include "exec/exec.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* x as DuckDB's CSV writer (and Python's repr) print a double: the
 * shortest round-trip digits, positional when the decimal exponent is in
 * [-4, 16) with at least one fractional digit ("100.0", "0.0001",
 * "-0.0"), else d.ddde+XX ("1e+16", "1e-05"); nan, inf, -inf. */
size_t ex_format_double_repr(double x, char *buf, size_t cap)
{
    if (isnan(x) || isinf(x))
        return (size_t)snprintf(buf, cap, "%s", isnan(x) ? "nan" : x > 0 ? "inf" : "-inf");
    char e[40];
    for (int p = 1; p <= 17; p++) {
        snprintf(e, sizeof e, "%.*e", p - 1, x);
        if (strtod(e, NULL) == x)
            break;
    }
    /* e = [-]d[.ddd]e[+-]XX: the digits and the exponent */
    char digits[24];
    int nd = 0, ex;
    const char *q = e;
    bool neg = *q == '-';
    if (neg)
        q++;
    for (; *q && *q != 'e'; q++)
        if (*q != '.')
            digits[nd++] = *q;
    ex = atoi(q + 1);
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    char out[64];
    size_t n = 0;
    if (neg)
        out[n++] = '-';
    if (ex >= -4 && ex < 16) {
        if (ex < 0) {
            out[n++] = '0', out[n++] = '.';
            for (int z = -1; z > ex; z--)
                out[n++] = '0';
            for (int i = 0; i < nd; i++)
                out[n++] = digits[i];
        } else {
            for (int i = 0; i <= ex; i++)
                out[n++] = i < nd ? digits[i] : '0';
            out[n++] = '.';
            if (nd > ex + 1)
                for (int i = ex + 1; i < nd; i++)
                    out[n++] = digits[i];
            else
                out[n++] = '0';
        }
        out[n] = 0;
    } else {
        out[n++] = digits[0];
        if (nd > 1) {
            out[n++] = '.';
            for (int i = 1; i < nd; i++)
                out[n++] = digits[i];
        }
        snprintf(out + n, sizeof out - n, "e%c%02d", ex < 0 ? '-' : '+', ex < 0 ? -ex : ex);
    }
    return (size_t)snprintf(buf, cap, "%s", out);
}

/* One CSV field (RFC 4180): quoted when it holds the separator, a quote, a
 * line break or '#' (which DuckDB's reader may take for a comment), or is
 * an empty string (so that it differs from NULL, an empty field), as
 * DuckDB writes them; quotes doubled. */
static int put_csv_field(const char *s, size_t n, char sep, bool is_string, FILE *f)
{
    bool quote = is_string && n == 0;
    for (size_t i = 0; i < n && !quote; i++)
        quote = s[i] == sep || s[i] == '"' || s[i] == '\n' || s[i] == '\r' || s[i] == '#';
    if (!quote)
        return fwrite(s, 1, n, f) == n ? 0 : -1;
    if (fputc('"', f) == EOF)
        return -1;
    for (size_t i = 0; i < n; i++)
        if ((s[i] == '"' && fputc('"', f) == EOF) || fputc(s[i], f) == EOF)
            return -1;
    return fputc('"', f) == EOF ? -1 : 0;
}

int ex_result_write_csv_full(const ex_result *r, FILE *f, char sep, bool header)
{
    char small[128], *buf = small;
    size_t cap = sizeof small;
    int rc = -1;
    for (int i = 0; header && i < r->n_columns; i++)
        if ((i && fputc(sep, f) == EOF) || put_csv_field(r->names[i], strlen(r->names[i]), sep, true, f))
            goto done;
    if (header && fputc('\n', f) == EOF)
        goto done;
    for (int k = 0; k < r->n_chunks; k++) {
        const dv_chunk *ch = r->chunks[k];
        for (int64_t row = 0; row < ch->length; row++) {
            for (int i = 0; i < r->n_columns && i < ch->n_columns; i++) {
                const pa_column *col = &ch->columns[i];
                if (i && fputc(sep, f) == EOF)
                    goto done;
                if (!pa_column_valid(col, row))
                    continue;
                size_t n;
                if (col->type.id == PA_TYPE_DOUBLE)
                    n = ex_format_double_repr(((const double *)col->data)[row], buf, cap);
                else if ((n = pa_format_value(col, row, PA_FMT_FULL, buf, cap)) >= cap) {   /* a long string */
                    char *nb = pa_malloc(n + 1);
                    if (!nb)
                        goto done;
                    if (buf != small)
                        pa_free(buf);
                    buf = nb;
                    cap = n + 1;
                    n = pa_format_value(col, row, PA_FMT_FULL, buf, cap);
                }
                if (put_csv_field(buf, n, sep, col->type.id == PA_TYPE_VARCHAR, f))
                    goto done;
            }
            if (fputc('\n', f) == EOF)
                goto done;
        }
    }
    rc = 0;
done:
    if (buf != small)
        pa_free(buf);
    return rc;
}

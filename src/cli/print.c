/*
 * print.c - query results as text for people and programs: an aligned
 * table (the shell's default), CSV (--csv: RFC 4180, every digit kept),
 * the TPC-H answers format (--answers, written by ex_result_write_csv;
 * the tests compare it with DuckDB's answers) and JSON lines (--json).
 *
 * Table mode shows every value in full (DECIMAL with its own scale, DOUBLE
 * with the fewest digits that read back as the same double, NULL as
 * "NULL"), right-aligns numeric columns, escapes control characters so a
 * string cannot break the layout, and ends with a row count line. Widths
 * come from a first pass over all rows, so nothing is held in memory.
 *
 * JSON mode writes one object per row, keys in column order: INTEGER,
 * BIGINT, DOUBLE and DECIMAL as JSON numbers (a DECIMAL's exact digits, a
 * DOUBLE's shortest round-trip digits; NaN and the infinities, which JSON
 * cannot hold as numbers, as the strings "NaN", "Infinity", "-Infinity"),
 * BOOLEAN as true/false, DATE and VARCHAR as strings, NULL as null.
 */
#include "cli/cli.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A growable text buffer for one formatted value; long strings grow it. */
typedef struct cell {
    char small[128];
    char *buf;
    size_t cap;
} cell;

static void cell_init(cell *c)
{
    c->buf = c->small;
    c->cap = sizeof c->small;
}

static void cell_close(cell *c)
{
    if (c->buf != c->small)
        pa_free(c->buf);
}

static int cell_reserve(cell *c, size_t need)
{
    if (need <= c->cap)
        return 0;
    char *nb = pa_malloc(need);
    if (!nb)
        return -1;
    cell_close(c);
    c->buf = nb;
    c->cap = need;
    return 0;
}

/* The shortest "%.Ng" text that reads back as x. For a normal double
 * "%.15g" is shortest whenever it round-trips (it carries at least 15
 * digits, so a shorter exact form would show as itself); subnormals have
 * fewer digits and search from 1. */
static size_t format_double(double x, char *buf, size_t cap)
{
    size_t n = 0;
    for (int p = x != 0 && fabs(x) < DBL_MIN ? 1 : 15; p <= 17; p++) {
        n = (size_t)snprintf(buf, cap, "%.*g", p, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    return n;
}

/* x as DuckDB's CSV writer (and Python's repr) print a double: the
 * shortest round-trip digits, positional when the decimal exponent is in
 * [-4, 16) with at least one fractional digit ("100.0", "0.0001",
 * "-0.0"), else d.ddde+XX ("1e+16", "1e-05"); nan, inf, -inf. */
static size_t format_double_repr(double x, char *buf, size_t cap)
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

/* Row `row` of c in full into cell->buf (NUL-terminated). Returns its
 * length, or -1 when out of memory. NULL is left to the callers. */
static long format_full(const pa_column *col, int64_t row, cell *c)
{
    if (col->type.id == PA_TYPE_DOUBLE)
        return (long)format_double(((const double *)col->data)[row], c->buf, c->cap);
    size_t n = pa_format_value(col, row, PA_FMT_FULL, c->buf, c->cap);
    if (n >= c->cap) {
        if (cell_reserve(c, n + 1) != 0)
            return -1;
        n = pa_format_value(col, row, PA_FMT_FULL, c->buf, c->cap);
    }
    return (long)n;
}

static bool is_numeric(pa_type_id t)
{
    return t == PA_TYPE_INTEGER || t == PA_TYPE_BIGINT || t == PA_TYPE_DOUBLE || t == PA_TYPE_DECIMAL;
}

/* ------------------------------------------------------------------ table */

/* Bytes of s shown escaped: "\n", "\t", "\r" and "\xNN" for other control
 * bytes, so a value is always one line. */
static size_t escaped_char(unsigned char ch, char out[5])
{
    if (ch >= 0x20 && ch != 0x7f) {
        out[0] = (char)ch;
        return 1;
    }
    if (ch == '\n' || ch == '\t' || ch == '\r') {
        out[0] = '\\';
        out[1] = ch == '\n' ? 'n' : ch == '\t' ? 't' : 'r';
        return 2;
    }
    snprintf(out, 5, "\\x%02x", ch);
    return 4;
}

/* Columns the text takes on a terminal: UTF-8 continuation bytes take none,
 * escapes take their length. Good enough for alignment of common text. */
static size_t display_width(const char *s, size_t n)
{
    size_t w = 0;
    char tmp[5];
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if ((ch & 0xc0) == 0x80)
            continue;
        w += ch >= 0x80 ? 1 : escaped_char(ch, tmp);
    }
    return w;
}

static int put_escaped(const char *s, size_t n, FILE *f)
{
    char tmp[5];
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        size_t k = ch >= 0x80 ? (tmp[0] = (char)ch, 1) : escaped_char(ch, tmp);
        if (fwrite(tmp, 1, k, f) != k)
            return -1;
    }
    return 0;
}

static int put_repeat(char ch, size_t n, FILE *f)
{
    for (size_t i = 0; i < n; i++)
        if (fputc(ch, f) == EOF)
            return -1;
    return 0;
}

/* One padded cell "| text   " (left) or "|   text " (right). */
static int put_cell(const char *s, size_t n, size_t width, bool right, FILE *f)
{
    size_t pad = width - display_width(s, n);
    if (fputs("| ", f) == EOF || (right && put_repeat(' ', pad, f)) || put_escaped(s, n, f) ||
        (!right && put_repeat(' ', pad, f)) || fputc(' ', f) == EOF)
        return -1;
    return 0;
}

static int put_rule(const size_t *width, int n, FILE *f)
{
    for (int i = 0; i < n; i++)
        if (fputc('+', f) == EOF || put_repeat('-', width[i] + 2, f))
            return -1;
    return fputs("+\n", f) == EOF ? -1 : 0;
}

/* The text of one table cell: the full value, or "NULL". */
static long table_text(const pa_column *col, int64_t row, cell *c, const char **s)
{
    if (!pa_column_valid(col, row)) {
        *s = "NULL";
        return 4;
    }
    *s = c->buf;
    return format_full(col, row, c);
}

static int print_table(const ex_result *r, FILE *f)
{
    int rc = -1, nc = r->n_columns;
    cell c;
    cell_init(&c);
    size_t *width = pa_calloc(nc ? (size_t)nc : 1, sizeof *width);
    if (!width)
        return -1;
    for (int i = 0; i < nc; i++)
        width[i] = display_width(r->names[i], strlen(r->names[i]));
    for (int k = 0; k < r->n_chunks; k++) {
        const dv_chunk *ch = r->chunks[k];
        for (int i = 0; i < nc && i < ch->n_columns; i++)
            for (int64_t row = 0; row < ch->length; row++) {
                const char *s;
                long n = table_text(&ch->columns[i], row, &c, &s);
                if (n < 0)
                    goto done;
                size_t w = display_width(s, (size_t)n);
                if (w > width[i])
                    width[i] = w;
            }
    }
    if (nc > 0) {
        if (put_rule(width, nc, f))
            goto done;
        for (int i = 0; i < nc; i++)
            if (put_cell(r->names[i], strlen(r->names[i]), width[i], is_numeric(r->types[i].id), f))
                goto done;
        if (fputs("|\n", f) == EOF || put_rule(width, nc, f))
            goto done;
        for (int k = 0; k < r->n_chunks; k++) {
            const dv_chunk *ch = r->chunks[k];
            for (int64_t row = 0; row < ch->length; row++) {
                for (int i = 0; i < nc; i++) {
                    const char *s = "";
                    long n = i < ch->n_columns ? table_text(&ch->columns[i], row, &c, &s) : 0;
                    if (n < 0 || put_cell(s, (size_t)n, width[i], is_numeric(r->types[i].id), f))
                        goto done;
                }
                if (fputs("|\n", f) == EOF)
                    goto done;
            }
        }
        if (put_rule(width, nc, f))
            goto done;
    }
    if (fprintf(f, "(%lld row%s)\n", (long long)r->n_rows, r->n_rows == 1 ? "" : "s") < 0)
        goto done;
    rc = 0;
done:
    cell_close(&c);
    pa_free(width);
    return rc;
}

/* -------------------------------------------------------------------- csv */

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

/* A header line of the column names, then one line per row: every value in
 * full (a DECIMAL's every digit, a DOUBLE's shortest round-trip digits as
 * DuckDB writes them), NULL as an empty field. */
static int print_csv(const ex_result *r, char sep, FILE *f)
{
    int rc = -1;
    cell c;
    cell_init(&c);
    for (int i = 0; i < r->n_columns; i++)
        if ((i && fputc(sep, f) == EOF) || put_csv_field(r->names[i], strlen(r->names[i]), sep, true, f))
            goto done;
    if (fputc('\n', f) == EOF)
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
                long n = col->type.id == PA_TYPE_DOUBLE
                             ? (long)format_double_repr(((const double *)col->data)[row], c.buf, c.cap)
                             : format_full(col, row, &c);
                if (n < 0 || put_csv_field(c.buf, (size_t)n, sep, col->type.id == PA_TYPE_VARCHAR, f))
                    goto done;
            }
            if (fputc('\n', f) == EOF)
                goto done;
        }
    }
    rc = 0;
done:
    cell_close(&c);
    return rc;
}

/* ------------------------------------------------------------------- json */

static int put_json_string(const char *s, size_t n, FILE *f)
{
    if (fputc('"', f) == EOF)
        return -1;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        int w;
        if (ch == '"' || ch == '\\')
            w = fprintf(f, "\\%c", ch);
        else if (ch == '\n')
            w = fputs("\\n", f);
        else if (ch == '\t')
            w = fputs("\\t", f);
        else if (ch == '\r')
            w = fputs("\\r", f);
        else if (ch < 0x20)
            w = fprintf(f, "\\u%04x", ch);
        else
            w = fputc(ch, f);
        if (w < 0)
            return -1;
    }
    return fputc('"', f) == EOF ? -1 : 0;
}

static int put_json_value(const pa_column *col, int64_t row, cell *c, FILE *f)
{
    if (!pa_column_valid(col, row))
        return fputs("null", f) == EOF ? -1 : 0;
    if (col->type.id == PA_TYPE_DOUBLE) {
        double x = ((const double *)col->data)[row];
        if (isnan(x))
            return fputs("\"NaN\"", f) == EOF ? -1 : 0;
        if (isinf(x))
            return fputs(x > 0 ? "\"Infinity\"" : "\"-Infinity\"", f) == EOF ? -1 : 0;
    }
    long n = format_full(col, row, c);
    if (n < 0)
        return -1;
    pa_type_id t = col->type.id;
    if (is_numeric(t) || t == PA_TYPE_BOOLEAN)
        return fwrite(c->buf, 1, (size_t)n, f) == (size_t)n ? 0 : -1;
    return put_json_string(c->buf, (size_t)n, f);
}

static int print_json(const ex_result *r, FILE *f)
{
    int rc = -1;
    cell c;
    cell_init(&c);
    for (int k = 0; k < r->n_chunks; k++) {
        const dv_chunk *ch = r->chunks[k];
        for (int64_t row = 0; row < ch->length; row++) {
            if (fputc('{', f) == EOF)
                goto done;
            for (int i = 0; i < r->n_columns && i < ch->n_columns; i++) {
                if ((i && fputc(',', f) == EOF) || put_json_string(r->names[i], strlen(r->names[i]), f) ||
                    fputc(':', f) == EOF || put_json_value(&ch->columns[i], row, &c, f))
                    goto done;
            }
            if (fputs("}\n", f) == EOF)
                goto done;
        }
    }
    rc = 0;
done:
    cell_close(&c);
    return rc;
}

int cli_print_result(const ex_result *r, cli_print_mode mode, char sep, FILE *f)
{
    switch (mode) {
    case CLI_PRINT_ANSWERS:
        return ex_result_write_csv(r, f, sep ? sep : '|', true) < 0 ? -1 : 0;
    case CLI_PRINT_CSV:
        return print_csv(r, sep ? sep : ',', f);
    case CLI_PRINT_JSON:
        return print_json(r, f);
    case CLI_PRINT_TABLE:
        break;
    }
    return print_table(r, f);
}

static const char *const mode_names[] = {[CLI_PRINT_TABLE] = "table", [CLI_PRINT_CSV] = "csv",
                                         [CLI_PRINT_JSON] = "json", [CLI_PRINT_ANSWERS] = "answers"};

const char *cli_print_mode_name(cli_print_mode mode)
{
    return (unsigned)mode < sizeof mode_names / sizeof mode_names[0] ? mode_names[mode] : "table";
}

int cli_print_mode_parse(const char *text, cli_print_mode *out)
{
    for (size_t i = 0; i < sizeof mode_names / sizeof mode_names[0]; i++)
        if (!strcmp(text, mode_names[i])) {
            *out = (cli_print_mode)i;
            return 0;
        }
    return -1;
}

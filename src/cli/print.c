/*
 * print.c - query results as text for people and programs: an aligned
 * table (the shell's default), CSV (--csv: RFC 4180, every digit kept),
 * the TPC-H answers format (--answers, written by ex_result_write_csv;
 * the tests compare it with DuckDB's answers) and JSON lines (--json).
 *
 * Table mode shows every value in full (DECIMAL with its own scale, DOUBLE
 * with the fewest digits that read back as the same double, NULL as
 * "NULL"), right-aligns numeric columns, escapes control characters so a
 * string cannot break the layout, counts wide characters (CJK, emoji) as
 * two columns, and ends with a row count line. Widths come from a first
 * pass over the shown rows, so nothing is held in memory. With max_rows,
 * a longer result shows its first and last rows around a row of "…"; with
 * max_width (the shell passes the terminal's), the widest values are cut
 * (ending in "…") down to 12 columns, then middle columns are left out
 * behind a "…" column, and the row count line says what is not shown.
 * Markdown mode is the same table in GitHub's pipe syntax (never cut).
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
    return t == PA_TYPE_INTEGER || t == PA_TYPE_BIGINT || pa_type_is_float(t) || t == PA_TYPE_DECIMAL;
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

/* Columns a code point takes on a terminal: 0 for combining marks, zero
 * width spaces and joiners and variation selectors, 2 for East Asian wide
 * and fullwidth characters and emoji, 1 otherwise (the ranges of Unicode's
 * EastAsianWidth W/F and of Mn/Me that text in tables meets). */
static int cp_width(uint32_t c)
{
    static const uint32_t zero[][2] = {
        {0x0300, 0x036F}, {0x0483, 0x0489}, {0x0591, 0x05BD}, {0x0610, 0x061A}, {0x064B, 0x065F},
        {0x0E31, 0x0E31}, {0x0E34, 0x0E3A}, {0x0E47, 0x0E4E}, {0x1AB0, 0x1AFF}, {0x1DC0, 0x1DFF},
        {0x200B, 0x200F}, {0x2028, 0x202E}, {0x2060, 0x2064}, {0x20D0, 0x20FF}, {0xFE00, 0xFE0F},
        {0xFE20, 0xFE2F}, {0xFEFF, 0xFEFF}, {0xE0100, 0xE01EF},
    };
    static const uint32_t wide[][2] = {
        {0x1100, 0x115F}, {0x231A, 0x231B}, {0x2329, 0x232A}, {0x23E9, 0x23EC}, {0x23F0, 0x23F3},
        {0x25FD, 0x25FE}, {0x2614, 0x2615}, {0x2648, 0x2653}, {0x26AA, 0x26AB}, {0x26BD, 0x26BE},
        {0x26C4, 0x26C5}, {0x26F2, 0x26F5}, {0x26FA, 0x26FD}, {0x2705, 0x2705}, {0x270A, 0x270B},
        {0x2728, 0x2728}, {0x274C, 0x274C}, {0x2753, 0x2755}, {0x2757, 0x2757}, {0x2795, 0x2797},
        {0x27B0, 0x27B0}, {0x27BF, 0x27BF}, {0x2B1B, 0x2B1C}, {0x2B50, 0x2B50}, {0x2B55, 0x2B55},
        {0x2E80, 0x303E}, {0x3041, 0x33FF}, {0x3400, 0x4DBF}, {0x4E00, 0x9FFF}, {0xA000, 0xA4CF},
        {0xA960, 0xA97F}, {0xAC00, 0xD7A3}, {0xF900, 0xFAFF}, {0xFE10, 0xFE19}, {0xFE30, 0xFE6F},
        {0xFF00, 0xFF60}, {0xFFE0, 0xFFE6}, {0x16FE0, 0x18CFF}, {0x1B000, 0x1B2FF}, {0x1F004, 0x1F004},
        {0x1F0CF, 0x1F0CF}, {0x1F18E, 0x1F18E}, {0x1F191, 0x1F19A}, {0x1F200, 0x1F251}, {0x1F300, 0x1F64F},
        {0x1F680, 0x1F6FF}, {0x1F7E0, 0x1F7EB}, {0x1F90C, 0x1F9FF}, {0x1FA70, 0x1FAFF}, {0x20000, 0x3FFFD},
    };
    if (c < 0x300)
        return 1;
    for (size_t i = 0; i < sizeof zero / sizeof zero[0]; i++)
        if (c >= zero[i][0] && c <= zero[i][1])
            return 0;
    for (size_t i = 0; i < sizeof wide / sizeof wide[0]; i++)
        if (c >= wide[i][0] && c <= wide[i][1])
            return 2;
    return 1;
}

/* The next displayed unit of s[0, n) at *i: a control byte (shown as its
 * escape) or a UTF-8 sequence (a malformed byte counts as one column).
 * Returns its width and advances *i. */
static size_t next_unit(const char *s, size_t n, size_t *i)
{
    unsigned char ch = (unsigned char)s[*i];
    char tmp[5];
    if (ch < 0x80) {
        (*i)++;
        return escaped_char(ch, tmp);
    }
    int len = ch >= 0xF0 ? 4 : ch >= 0xE0 ? 3 : ch >= 0xC0 ? 2 : 1;
    uint32_t c = len == 4 ? ch & 7u : len == 3 ? ch & 15u : ch & 31u;
    if (len == 1 || *i + (size_t)len > n) {
        (*i)++;
        return 1;
    }
    for (int k = 1; k < len; k++) {
        unsigned char cc = (unsigned char)s[*i + (size_t)k];
        if ((cc & 0xC0) != 0x80) {
            (*i)++;
            return 1;
        }
        c = c << 6 | (cc & 0x3Fu);
    }
    *i += (size_t)len;
    return (size_t)cp_width(c);
}

/* Columns the text takes on a terminal. */
static size_t display_width(const char *s, size_t n)
{
    size_t w = 0;
    for (size_t i = 0; i < n;)
        w += next_unit(s, n, &i);
    return w;
}

/* The bytes of the longest prefix of s that fits in `cols` columns. */
static size_t fit_prefix(const char *s, size_t n, size_t cols, size_t *width)
{
    size_t w = 0, i = 0;
    while (i < n) {
        size_t j = i, u = next_unit(s, n, &j);
        if (w + u > cols)
            break;
        w += u;
        i = j;
    }
    *width = w;
    return i;
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

static int put_repeat(const char *text, size_t n, FILE *f)
{
    for (size_t i = 0; i < n; i++)
        if (fputs(text, f) == EOF)
            return -1;
    return 0;
}

#define ELLIPSIS "\xe2\x80\xa6" /* U+2026, one column */

/* The '|' in s: Markdown shows each as "\|", one column more. */
static size_t bars(const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += s[i] == '|';
    return k;
}

/* One padded cell "| text   " (left) or "|   text " (right); a value wider
 * than the column is cut and ends with an ellipsis. Markdown escapes '|'. */
static int put_cell(const char *s, size_t n, size_t width, bool right, bool markdown, FILE *f)
{
    size_t w = display_width(s, n) + (markdown ? bars(s, n) : 0);
    bool cut = w > width;
    if (cut)
        n = fit_prefix(s, n, width ? width - 1 : 0, &w), w++;
    size_t pad = width - w;
    if (fputs("| ", f) == EOF || (right && put_repeat(" ", pad, f)))
        return -1;
    if (markdown) {
        for (size_t i = 0; i < n; i++)
            if ((s[i] == '|' ? fputc('\\', f) == EOF : 0) || put_escaped(s + i, 1, f))
                return -1;
    } else if (put_escaped(s, n, f)) {
        return -1;
    }
    if ((cut && fputs(ELLIPSIS, f) == EOF) || (!right && put_repeat(" ", pad, f)) || fputc(' ', f) == EOF)
        return -1;
    return 0;
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

/* What a table shows: rows [0, top) and [n - bottom, n) (one elision row
 * between when they are not all), and the columns with show[i]. */
typedef struct layout {
    int nc;
    size_t *width;
    bool *show;
    int shown_cols;
    int gap_after;      /* the elided columns' mark follows this shown column; -1: none */
    int64_t n, top, bottom;
} layout;

/* Calls fn for each shown row in order (and the elision row as -1). */
typedef int (*row_fn)(const ex_result *r, const dv_chunk *ch, int64_t at, void *arg);

static int each_row(const ex_result *r, const layout *L, row_fn fn, void *arg)
{
    int64_t row = 0;
    for (int k = 0; k < r->n_chunks; k++) {
        const dv_chunk *ch = r->chunks[k];
        for (int64_t at = 0; at < ch->length; at++, row++) {
            if (row == L->top && L->top + L->bottom < L->n && fn(r, NULL, -1, arg))
                return -1;
            if ((row < L->top || row >= L->n - L->bottom) && fn(r, ch, at, arg))
                return -1;
        }
    }
    return 0;
}

typedef struct measure_arg {
    layout *L;
    cell *c;
    bool markdown;
} measure_arg;

static int measure_row(const ex_result *r, const dv_chunk *ch, int64_t at, void *p)
{
    measure_arg *m = p;
    for (int i = 0; i < m->L->nc; i++) {
        size_t w = 1;   /* the elision row's ellipsis */
        if (ch) {
            const char *s = "";
            long n = i < ch->n_columns ? table_text(&ch->columns[i], at, m->c, &s) : 0;
            if (n < 0)
                return -1;
            w = display_width(s, (size_t)n) + (m->markdown ? bars(s, (size_t)n) : 0);
        }
        if (w > m->L->width[i])
            m->L->width[i] = w;
    }
    (void)r;
    return 0;
}

/* Narrow the widest columns, then leave out middle columns, until the
 * table fits max_width terminal columns (each column takes its width + 3,
 * the table 1 more). Values keep at least MIN_CUT columns before they are
 * cut; then whole columns go, taken alternately from the left and right
 * ends so that the first and last columns stay. */
#define MIN_CUT 12
static void fit(layout *L, int max_width)
{
    size_t total = 1;
    for (int i = 0; i < L->nc; i++)
        total += L->width[i] + 3;
    while (total > (size_t)max_width) {
        int wi = -1;
        for (int i = 0; i < L->nc; i++)
            if (L->width[i] > MIN_CUT && (wi < 0 || L->width[i] > L->width[wi]))
                wi = i;
        if (wi < 0)
            break;
        L->width[wi]--;
        total--;
    }
    if (total <= (size_t)max_width || L->nc <= 1)
        return;
    /* Keep columns from both ends while they fit beside the mark column "…" (4). */
    for (int i = 0; i < L->nc; i++)
        L->show[i] = false;
    size_t used = 1 + 4;
    int lo = 0, hi = L->nc - 1;
    bool left = true;
    while (lo <= hi) {
        int i = left ? lo : hi;
        if (used + L->width[i] + 3 > (size_t)max_width && !(lo == 0 && hi == L->nc - 1))
            break;
        used += L->width[i] + 3;
        L->show[i] = true;
        if (left)
            lo++;
        else
            hi--;
        left = !left;
    }
    L->shown_cols = 0;
    for (int i = 0; i < L->nc; i++)
        L->shown_cols += L->show[i];
    L->gap_after = lo - 1;
}

typedef struct emit_arg {
    const ex_result *r;
    const layout *L;
    cell *c;
    bool markdown;
    FILE *f;
} emit_arg;

static int put_row_end(FILE *f) { return fputs("|\n", f) == EOF ? -1 : 0; }

static int emit_row(const ex_result *r, const dv_chunk *ch, int64_t at, void *p)
{
    emit_arg *e = p;
    const layout *L = e->L;
    for (int i = 0; i < L->nc; i++) {
        if (!L->show[i])
            continue;
        const char *s = ELLIPSIS;
        long n = 3;
        if (ch) {
            s = "";
            n = i < ch->n_columns ? table_text(&ch->columns[i], at, e->c, &s) : 0;
            if (n < 0)
                return -1;
        }
        if (put_cell(s, (size_t)n, L->width[i], ch && is_numeric(r->types[i].id), e->markdown, e->f))
            return -1;
        if (i == L->gap_after && put_cell(ELLIPSIS, 3, 1, false, false, e->f))
            return -1;
    }
    return put_row_end(e->f);
}

static int put_rule(const layout *L, bool markdown, const ex_result *r, FILE *f)
{
    for (int i = 0; i < L->nc; i++) {
        if (!L->show[i])
            continue;
        if (markdown) {
            bool right = is_numeric(r->types[i].id);
            if (fputc('|', f) == EOF || put_repeat("-", L->width[i] + (right ? 1 : 2), f) ||
                (right && fputc(':', f) == EOF))
                return -1;
        } else if (fputc('+', f) == EOF || put_repeat("-", L->width[i] + 2, f)) {
            return -1;
        }
        if (i == L->gap_after && (markdown ? fputs("|---", f) == EOF : fputs("+---", f) == EOF))
            return -1;
    }
    return fputs(markdown ? "|\n" : "+\n", f) == EOF ? -1 : 0;
}

static int print_table(const ex_result *r, const cli_print_opts *o, FILE *f)
{
    bool markdown = o->mode == CLI_PRINT_MARKDOWN;
    int rc = -1, nc = r->n_columns;
    cell c;
    cell_init(&c);
    layout L = {.nc = nc, .shown_cols = nc, .gap_after = -1, .n = r->n_rows, .top = r->n_rows};
    L.width = pa_calloc(nc ? (size_t)nc : 1, sizeof *L.width);
    L.show = pa_calloc(nc ? (size_t)nc : 1, sizeof *L.show);
    if (!L.width || !L.show)
        goto done;
    if (o->max_rows > 0 && r->n_rows > o->max_rows) {
        L.top = (o->max_rows + 1) / 2;
        L.bottom = o->max_rows / 2;
    }
    for (int i = 0; i < nc; i++) {
        size_t len = strlen(r->names[i]);
        L.width[i] = display_width(r->names[i], len) + (markdown ? bars(r->names[i], len) : 0);
        L.show[i] = true;
    }
    measure_arg m = {&L, &c, markdown};
    if (each_row(r, &L, measure_row, &m))
        goto done;
    if (o->max_width > 0 && !markdown)
        fit(&L, o->max_width);
    if (nc > 0) {
        if (!markdown && put_rule(&L, false, r, f))
            goto done;
        for (int i = 0; i < nc; i++) {
            if (!L.show[i])
                continue;
            if (put_cell(r->names[i], strlen(r->names[i]), L.width[i], !markdown && is_numeric(r->types[i].id),
                         markdown, f) ||
                (i == L.gap_after && put_cell(ELLIPSIS, 3, 1, false, false, f)))
                goto done;
        }
        if (put_row_end(f) || put_rule(&L, markdown, r, f))
            goto done;
        emit_arg e = {r, &L, &c, markdown, f};
        if (each_row(r, &L, emit_row, &e))
            goto done;
        if (!markdown && put_rule(&L, false, r, f))
            goto done;
    }
    if (!markdown) {
        bool rows_cut = L.top + L.bottom < L.n, cols_cut = L.shown_cols < nc;
        if (fprintf(f, "(%lld row%s", (long long)r->n_rows, r->n_rows == 1 ? "" : "s") < 0 ||
            (rows_cut && fprintf(f, ", %lld shown", (long long)(L.top + L.bottom)) < 0) ||
            (cols_cut && fprintf(f, "; %d columns, %d shown", nc, L.shown_cols) < 0) || fputs(")\n", f) == EOF)
            goto done;
    }
    rc = 0;
done:
    cell_close(&c);
    pa_free(L.width);
    pa_free(L.show);
    return rc;
}

/* -------------------------------------------------------------------- csv */

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
    if (pa_type_is_float(col->type.id)) {
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

int cli_print_result(const ex_result *r, const cli_print_opts *o, FILE *f)
{
    switch (o->mode) {
    case CLI_PRINT_ANSWERS:
        return ex_result_write_csv(r, f, o->sep ? o->sep : '|', true) < 0 ? -1 : 0;
    case CLI_PRINT_CSV:
        return ex_result_write_csv_full(r, f, o->sep ? o->sep : ',', true) < 0 ? -1 : 0;
    case CLI_PRINT_JSON:
        return print_json(r, f);
    case CLI_PRINT_TABLE:
    case CLI_PRINT_MARKDOWN:
        break;
    }
    return print_table(r, o, f);
}

static const char *const mode_names[] = {[CLI_PRINT_TABLE] = "table", [CLI_PRINT_CSV] = "csv",
                                         [CLI_PRINT_JSON] = "json", [CLI_PRINT_ANSWERS] = "answers",
                                         [CLI_PRINT_MARKDOWN] = "markdown"};

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

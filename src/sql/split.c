/*
 * split.c - statement boundaries for scripts and the shell, from
 * libpg_query's scanner (so quotes, comments and dollar quotes are
 * PostgreSQL's).
 */
#include "sql/sql.h"

#include <pg_query.h>
#include <string.h>

/* The scanner reports cursor positions 1-based; -1 when it has none. */
static int scanner_offset(const PgQueryError *e)
{
    return e->cursorpos > 0 ? e->cursorpos - 1 : -1;
}

static bool only_space(const char *s, int n)
{
    for (int i = 0; i < n; i++)
        if (!strchr(" \t\r\n\f\v", s[i]))
            return false;
    return true;
}

int sql_split(const char *text, sql_span **spans, int *n, int *err_offset, pa_err *err)
{
    *spans = NULL;
    *n = 0;
    if (err_offset)
        *err_offset = -1;
    PgQuerySplitResult r = pg_query_split_with_scanner(text);
    if (r.error) {
        if (err_offset)
            *err_offset = scanner_offset(r.error);
        int rc = pa_error(err, PA_ESYNTAX, "%s", r.error->message);
        pg_query_free_split_result(r);
        return rc;
    }
    sql_span *out = pa_calloc(r.n_stmts > 0 ? (size_t)r.n_stmts : 1, sizeof *out);
    if (!out) {
        pg_query_free_split_result(r);
        return pa_error(err, PA_ENOMEM, "splitting statements");
    }
    int k = 0;
    for (int i = 0; i < r.n_stmts; i++) {
        int start = r.stmts[i]->stmt_location, len = r.stmts[i]->stmt_len;
        if (len == 0) /* the last statement without a ';' runs to the end */
            len = (int)strlen(text) - start;
        /* The scanner keeps the text between statements (spaces, comments)
         * with the next one; trim leading spaces so offsets point at text. */
        while (len > 0 && strchr(" \t\r\n\f\v", text[start])) {
            start++;
            len--;
        }
        if (len == 0 || only_space(text + start, len))
            continue;
        out[k++] = (sql_span){start, len};
    }
    pg_query_free_split_result(r);
    *spans = out;
    *n = k;
    return PA_OK;
}

bool sql_statement_complete(const char *text)
{
    /* Complete when the text, scanned as PostgreSQL would, ends with ';'
     * after a statement: the last non-space character outside comments is
     * a ';' and the scanner finds no open quote or comment. */
    PgQueryScanResult r = pg_query_scan(text);
    bool open = r.error != NULL;
    pg_query_free_scan_result(r);
    if (open)
        return false;
    sql_span *spans;
    int n;
    if (sql_split(text, &spans, &n, NULL, NULL) != PA_OK)
        return false;
    bool complete = false;
    if (n > 0) {
        /* After the last statement there must be a ';'. */
        const char *p = text + spans[n - 1].start + spans[n - 1].len;
        complete = strchr(p, ';') != NULL;
    }
    pa_free(spans);
    return complete;
}

/*
 * split.c - statement boundaries for scripts and the shell, from
 * libpg_query's scanner tokens (so quotes, comments and dollar quotes are
 * PostgreSQL's): a statement is the tokens between top-level ';' tokens,
 * comments left out. Misspelt statements are kept (the parser reports
 * them), unlike pg_query_split_with_scanner, which drops a statement
 * without a keyword.
 */
#include "sql/sql.h"

#include <pg_query.h>
#include <pg_query/pg_query.pb-c.h>
#include <string.h>

static bool is_comment(const PgQuery__ScanToken *t)
{
    return t->token == PG_QUERY__TOKEN__SQL_COMMENT || t->token == PG_QUERY__TOKEN__C_COMMENT;
}

/* Tokens of text; NULL with *err_offset set on a scanner error. */
static PgQuery__ScanResult *scan(const char *text, int *err_offset, pa_err *err)
{
    PgQueryScanResult r = pg_query_scan(text);
    if (r.error) {
        if (err_offset)
            *err_offset = r.error->cursorpos > 0 ? r.error->cursorpos - 1 : -1;
        pa_error(err, PA_ESYNTAX, "%s", r.error->message);
        pg_query_free_scan_result(r);
        return NULL;
    }
    PgQuery__ScanResult *s = pg_query__scan_result__unpack(NULL, r.pbuf.len, (const uint8_t *)r.pbuf.data);
    pg_query_free_scan_result(r);
    if (!s)
        pa_error(err, PA_EINTERNAL, "could not read the scanner's tokens");
    return s;
}

int sql_split(const char *text, sql_span **spans, int *n, int *err_offset, pa_err *err)
{
    *spans = NULL;
    *n = 0;
    if (err_offset)
        *err_offset = -1;
    PgQuery__ScanResult *s = scan(text, err_offset, err);
    if (!s)
        return err ? err->code : PA_ESYNTAX;
    sql_span *out = pa_calloc(s->n_tokens / 2 + 2, sizeof *out);
    if (!out) {
        pg_query__scan_result__free_unpacked(s, NULL);
        return pa_error(err, PA_ENOMEM, "splitting statements");
    }
    int k = 0, start = -1, end = -1;
    for (size_t i = 0; i <= s->n_tokens; i++) {
        const PgQuery__ScanToken *t = i < s->n_tokens ? s->tokens[i] : NULL;
        if (t && is_comment(t))
            continue;
        if (!t || t->token == PG_QUERY__TOKEN__ASCII_59) {
            if (start >= 0)
                out[k++] = (sql_span){start, end - start};
            start = -1;
            continue;
        }
        if (start < 0)
            start = t->start;
        end = t->end;
    }
    pg_query__scan_result__free_unpacked(s, NULL);
    *spans = out;
    *n = k;
    return PA_OK;
}

bool sql_statement_complete(const char *text)
{
    PgQuery__ScanResult *s = scan(text, NULL, NULL);
    if (!s)
        return false; /* an open quote or comment: read on */
    bool any = false, complete = false;
    for (size_t i = 0; i < s->n_tokens; i++) {
        const PgQuery__ScanToken *t = s->tokens[i];
        if (is_comment(t))
            continue;
        if (t->token == PG_QUERY__TOKEN__ASCII_59) {
            complete |= any;
            any = false;
        } else {
            any = true;
            complete = false;
        }
    }
    pg_query__scan_result__free_unpacked(s, NULL);
    return complete;
}

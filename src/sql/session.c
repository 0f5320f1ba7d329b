/*
 * session.c - TEMPORARY scaffold so the shell and benchmarks link while the
 * front end is written; replaced by the lead's implementation.
 */
#include "sql/sql.h"

#include <stdatomic.h>

struct sql_session {
    sql_options opt;
    int err_offset;
    atomic_int cancel;
};

int sql_session_create(const sql_options *opt, sql_session **out, pa_err *err)
{
    sql_session *s = pa_calloc(1, sizeof *s);
    if (!s)
        return pa_error(err, PA_ENOMEM, "sql session");
    s->opt = *opt;
    s->err_offset = -1;
    *out = s;
    return PA_OK;
}

void sql_session_destroy(sql_session *s) { pa_free(s); }
dv_device *sql_session_device(const sql_session *s) { return s->opt.dev; }
void sql_session_set_threads(sql_session *s, int threads) { s->opt.threads = threads; }
void sql_session_set_mode(sql_session *s, ex_mode mode) { s->opt.mode = mode; }

int sql_register_dir(sql_session *s, const char *dir, pa_err *err)
{
    return pa_error(err, PA_EUNSUPPORTED, "sql front end not built yet");
}
int sql_register_table(sql_session *s, const char *name, const char *path, pa_err *err)
{
    return pa_error(err, PA_EUNSUPPORTED, "sql front end not built yet");
}
int sql_table_count(const sql_session *s) { return 0; }
int sql_table_get(sql_session *s, int i, sql_table_info *out, pa_err *err)
{
    return pa_error(err, PA_ENOTFOUND, "no table %d", i);
}
int sql_table_find(sql_session *s, const char *name, sql_table_info *out, pa_err *err)
{
    return pa_error(err, PA_ENOTFOUND, "no table %s", name);
}
int sql_execute(sql_session *s, const char *text, sql_result **out, pa_err *err)
{
    *out = NULL;
    return pa_error(err, PA_EUNSUPPORTED, "sql front end not built yet");
}
void sql_result_destroy(sql_result *r)
{
    if (!r)
        return;
    ex_result_destroy(r->rows);
    pa_free(r->text);
    pa_free(r);
}
int sql_error_offset(const sql_session *s) { return s->err_offset; }
void sql_session_cancel(sql_session *s) { atomic_store(&s->cancel, 1); }
void sql_progress(const sql_session *s, int64_t *rows_scanned, int64_t *rows_total)
{
    *rows_scanned = 0;
    *rows_total = 0;
}

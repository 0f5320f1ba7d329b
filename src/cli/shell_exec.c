/*
 * shell_exec.c - what the shell does with input: statements (split, run,
 * print the result or the error with a caret under its position, the
 * timer line) and the dot commands.
 */
#include "cli/shell.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* "Error: <message>", then the line of text holding byte offset `at` and a
 * caret under that byte (at < 0: no position). Tabs before the position
 * are repeated so the caret lines up on a terminal. */
static void show_error(shell *sh, const char *text, int at, const pa_err *err)
{
    fflush(sh->out);
    fprintf(stderr, "Error: %s\n", err->msg[0] ? err->msg : pa_status_message(err->code));
    size_t len = strlen(text);
    if (at < 0 || (size_t)at > len)
        return;
    size_t b = (size_t)at, e = (size_t)at;
    while (b > 0 && text[b - 1] != '\n')
        b--;
    while (e < len && text[e] != '\n')
        e++;
    fprintf(stderr, "%.*s\n", (int)(e - b), text + b);
    for (size_t i = b; i < (size_t)at; i++) {
        unsigned char ch = (unsigned char)text[i];
        if ((ch & 0xc0) != 0x80)
            fputc(ch == '\t' ? '\t' : ' ', stderr);
    }
    fputs("^\n", stderr);
}

/* The terminal's width in columns: the ioctl, else $COLUMNS, else 80. */
static int terminal_width(FILE *f)
{
    struct winsize ws;
    if (ioctl(fileno(f), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    const char *c = getenv("COLUMNS");
    int v = c ? atoi(c) : 0;
    return v > 0 ? v : 80;
}

static int print_result(shell *sh, const sql_result *r)
{
    if (r->kind == SQL_RESULT_ROWS && r->rows) {
        /* Limits by default only where a person reads the table: a terminal. */
        bool tty = isatty(fileno(sh->out));
        cli_print_opts o = {.mode = sh->mode, .sep = sh->sep,
                            .max_width = sh->max_width >= 0 ? sh->max_width : tty ? terminal_width(sh->out) : 0,
                            .max_rows = sh->max_rows >= 0 ? sh->max_rows : tty ? 40 : 0};
        return cli_print_result(r->rows, &o, sh->out);
    }
    if (r->text) {
        size_t n = strlen(r->text);
        if (fputs(r->text, sh->out) == EOF || (n && r->text[n - 1] != '\n' && fputc('\n', sh->out) == EOF))
            return -1;
    }
    return 0;
}

/* The timer line; over several ranks also each rank's most bytes read and
 * received and, with --tmin's ceilings, the least time the statement could
 * take: Tmin = max(most read / disk, most received / network), as the
 * PystachIO paper reports it. */
static void print_timer(shell *sh, const sql_result *r, double secs)
{
    fprintf(sh->out, "Run Time: %.3f s (plan %.3f s)", secs, (double)r->ns_plan * 1e-9);
    if (r->n_ranks > 1) {
        fprintf(sh->out, "; %d ranks: most read %.1f MB (rank %d), most received %.1f MB (rank %d)", r->n_ranks,
                (double)r->max_read / 1e6, r->max_read_rank, (double)r->max_received / 1e6, r->max_received_rank);
        if (sh->disk_gbps > 0 && sh->net_gbps > 0) {
            double td = (double)r->max_read / (sh->disk_gbps * 1e9), tn = (double)r->max_received / (sh->net_gbps * 1e9);
            double tmin = td > tn ? td : tn;
            fprintf(sh->out, "; Tmin %.3f s (%s bound)", tmin, td > tn ? "storage" : "network");
            if (tmin > 0)
                fprintf(sh->out, ", runtime/Tmin %.1f", secs / tmin);
        }
    }
    fputc('\n', sh->out);
}

/* One statement (NUL-terminated). */
static int run_statement(shell *sh, const char *stmt)
{
    pa_err err;
    pa_err_init(&err);
    sql_result *r = NULL;
    uint64_t t0 = pa_now_ns();
    int rc = shell_execute(sh, stmt, &r, &err);
    double secs = (double)(pa_now_ns() - t0) * 1e-9;
    int status = SHELL_OK;
    if (rc != PA_OK) {
        if (rc == PA_ECANCELED) {
            fflush(sh->out);
            fputs("canceled\n", stderr);
        } else {
            show_error(sh, stmt, sql_error_offset(sh->s), &err);
        }
        status = SHELL_ERROR;
    } else {
        if (print_result(sh, r) != 0) {
            fflush(sh->out);
            fputs("Error: writing the result failed\n", stderr);
            status = SHELL_ERROR;
        }
        if (sh->timer)
            print_timer(sh, r, secs);
        fflush(sh->out);
    }
    sql_result_destroy(r);
    pa_err_close(&err);
    return status;
}

int shell_run_text(shell *sh, const char *text)
{
    pa_err err;
    pa_err_init(&err);
    sql_span *spans = NULL;
    int n = 0, at = -1, status = SHELL_OK;
    if (sql_split(text, &spans, &n, &at, &err) != PA_OK) {
        show_error(sh, text, at, &err);
        pa_err_close(&err);
        return SHELL_ERROR;
    }
    for (int i = 0; i < n && status == SHELL_OK; i++) {
        /* Leading blanks and line breaks go: the error line then starts
         * with the statement. */
        while (spans[i].len > 0 && isspace((unsigned char)text[spans[i].start])) {
            spans[i].start++;
            spans[i].len--;
        }
        char *stmt = pa_malloc((size_t)spans[i].len + 1);
        if (!stmt) {
            fputs("Error: out of memory\n", stderr);
            status = SHELL_ERROR;
            break;
        }
        memcpy(stmt, text + spans[i].start, (size_t)spans[i].len);
        stmt[spans[i].len] = '\0';
        status = run_statement(sh, stmt);
        pa_free(stmt);
    }
    pa_free(spans);
    pa_err_close(&err);
    return status;
}

/* ------------------------------------------------------------ dot commands */

static const char help_text[] =
    "Statements end with ';' and may span lines. Dot commands:\n"
    "  .help                    this text\n"
    "  .tables                  list tables and views\n"
    "  .schema [NAME]           columns of every table (or of NAME) as CREATE statements\n"
    "  .mode table|csv|json|answers|markdown  result format (answers: the TPC-H answers format)\n"
    "  .maxrows N               table rows shown (first and last halves); 0 all (default:\n"
    "                           40 on a terminal, all elsewhere)\n"
    "  .maxwidth N              table width in columns (values cut, middle columns left out);\n"
    "                           0 no limit (default: the terminal's, none elsewhere)\n"
    "  .output [FILE]           results into FILE (created or emptied); no FILE: back to stdout\n"
    "  .separator C             field separator of csv (default ,) and answers (|) modes\n"
    "  .timer on|off            print run and planning time after each statement\n"
    "  .device                  the device, execution mode and threads in use\n"
    "  .quit, .exit             leave (\\q, exit, quit and Ctrl-D too)\n"
    "Ctrl-C cancels the running statement, or clears the line at the prompt.\n";

static int dot_error(shell *sh, const char *fmt, const char *arg)
{
    fflush(sh->out);
    fputs("Error: ", stderr);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    return SHELL_ERROR;
}

static void print_schema(shell *sh, const sql_table_info *t)
{
    if (t->is_view) {
        /* The source is the SELECT; a catalog that keeps the whole CREATE
         * statement is shown as it is. */
        size_t n = strlen(t->source);
        while (n && (isspace((unsigned char)t->source[n - 1]) || t->source[n - 1] == ';'))
            n--;
        if (!strncasecmp(t->source, "create", 6))
            fprintf(sh->out, "%.*s;\n", (int)n, t->source);
        else
            fprintf(sh->out, "CREATE VIEW %s AS %.*s;\n", t->name, (int)n, t->source);
        return;
    }
    fprintf(sh->out, "CREATE TABLE %s (\n", t->name);
    for (int i = 0; i < t->n_columns; i++) {
        char ty[48];
        fprintf(sh->out, "    %s %s%s\n", t->column_names[i], pa_type_format(t->column_types[i], ty, sizeof ty),
                i + 1 < t->n_columns ? "," : "");
    }
    fprintf(sh->out, ");  -- %lld rows, %s\n", (long long)t->rows, t->source);
}

static int dot_tables(shell *sh, const char *name, bool schema)
{
    pa_err err;
    pa_err_init(&err);
    sql_table_info t;
    int status = SHELL_OK;
    if (name) {
        if (sql_table_find(sh->s, name, &t, &err) != PA_OK)
            status = dot_error(sh, "no table or view '%s'", name);
        else
            print_schema(sh, &t);
    } else {
        int n = sql_table_count(sh->s);
        for (int i = 0; i < n && status == SHELL_OK; i++) {
            if (sql_table_get(sh->s, i, &t, &err) != PA_OK)
                status = dot_error(sh, "%s", err.msg);
            else if (schema)
                print_schema(sh, &t);
            else
                fprintf(sh->out, "%s\n", t.name);
        }
    }
    pa_err_close(&err);
    fflush(sh->out);
    return status;
}

/* Split line into at most 4 words (a word may be quoted with ' or ").
 * Returns the count; the words point into line, which is modified. */
static int split_words(char *line, char **w, int cap)
{
    int n = 0;
    char *p = line;
    while (*p) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        char q = (*p == '\'' || *p == '"') ? *p++ : 0;
        char *start = p;
        while (*p && (q ? *p != q : !isspace((unsigned char)*p)))
            p++;
        if (n < cap)
            w[n] = start;
        n++;
        if (*p)
            *p++ = '\0';
    }
    return n;
}

int shell_dot(shell *sh, const char *line)
{
    char *copy = pa_strdup(line);
    if (!copy)
        return dot_error(sh, "%s", "out of memory");
    char *w[4] = {0};
    int n = split_words(copy, w, 4), status = SHELL_OK;
    const char *cmd = w[0] ? w[0] : ".";
    if (!strcmp(cmd, ".quit") || !strcmp(cmd, ".exit")) {
        status = SHELL_QUIT;
    } else if (!strcmp(cmd, ".help")) {
        fputs(help_text, sh->out);
    } else if (!strcmp(cmd, ".tables") && n == 1) {
        status = dot_tables(sh, NULL, false);
    } else if (!strcmp(cmd, ".schema") && n <= 2) {
        status = dot_tables(sh, n == 2 ? w[1] : NULL, true);
    } else if (!strcmp(cmd, ".timer") && n == 2 && (!strcmp(w[1], "on") || !strcmp(w[1], "off"))) {
        sh->timer = !strcmp(w[1], "on");
    } else if (!strcmp(cmd, ".mode") && n == 2) {
        if (cli_print_mode_parse(w[1], &sh->mode) != 0)
            status = dot_error(sh, "unknown mode '%s' (table, csv, json, answers or markdown)", w[1]);
    } else if ((!strcmp(cmd, ".maxrows") || !strcmp(cmd, ".maxwidth")) && n == 2) {
        char *end;
        long long v = strtoll(w[1], &end, 10);
        if (*end || end == w[1] || v < 0 || v > (cmd[4] == 'r' ? INT64_MAX : 100000))
            status = dot_error(sh, "'%s' is not a count (0 for no limit)", w[1]);
        else if (cmd[4] == 'r')
            sh->max_rows = v;
        else
            sh->max_width = v == 0 ? 0 : v < 20 ? 20 : (int)v;
    } else if (!strcmp(cmd, ".output") && n <= 2) {
        FILE *f = stdout;
        if (n == 2 && !(f = fopen(w[1], "w")))
            status = dot_error(sh, "cannot open '%s' for writing", w[1]);
        if (status == SHELL_OK) {
            if (sh->out != stdout && fclose(sh->out) != 0)
                status = dot_error(sh, "%s", "writing the previous .output file failed");
            sh->out = f;
        }
    } else if (!strcmp(cmd, ".mode") && n == 1) {
        fprintf(sh->out, "%s\n", cli_print_mode_name(sh->mode));
    } else if (!strcmp(cmd, ".separator") && n == 2) {
        if (strlen(w[1]) == 1)
            sh->sep = w[1][0];
        else if (!strcmp(w[1], "\\t"))
            sh->sep = '\t';
        else
            status = dot_error(sh, "the separator '%s' is not one character", w[1]);
    } else if (!strcmp(cmd, ".device") && n == 1) {
        fprintf(sh->out, "device:  %s (%s)\nmode:    %s\nthreads: ", dv_describe(sh->dev), dv_selection(sh->dev),
                ex_mode_name(sh->exmode));
        if (sh->threads)
            fprintf(sh->out, "%d\n", sh->threads);
        else
            fprintf(sh->out, "device default\n");
    } else if (!strcmp(cmd, ".timer") || !strcmp(cmd, ".tables") || !strcmp(cmd, ".schema") ||
               !strcmp(cmd, ".separator") || !strcmp(cmd, ".device") || !strcmp(cmd, ".maxrows") ||
               !strcmp(cmd, ".maxwidth") || !strcmp(cmd, ".output")) {
        status = dot_error(sh, "wrong arguments for %s (.help shows the usage)", cmd);
    } else {
        status = dot_error(sh, "unknown command '%s' (.help lists the commands)", cmd);
    }
    fflush(sh->out);
    pa_free(copy);
    return status;
}

/*
 * cmd_shell.c - `pista [options]`: the SQL shell. With -c SQL or -f FILE
 * it runs scripts (statements in turn, each result printed, stop at the
 * first error, exit 1); otherwise it reads standard input: interactively
 * with prompts, editing and history on a terminal, or as a script when
 * input is piped. See shell.h for how the pieces fit.
 */
#include "cli/shell.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fputs("usage: pista [options] [PATH]... [-c SQL | -f FILE]...\n"
          "  PATH                a Parquet file, a folder of parts or a glob, opened as a\n"
          "                      table named after it (data/sales.parquet: sales); a folder\n"
          "                      of different tables is registered as --data would\n"
          "  -c SQL              run the statements in SQL (or one dot command) and exit\n"
          "  -f FILE             run the statements and dot commands in FILE and exit\n"
          "  --data DIR          register DIR/<name>.parquet and DIR/<name>/ as tables\n"
          "  --csv               print results as CSV (RFC 4180, a header line, every digit)\n"
          "  --answers           print results in the TPC-H answers format ('|' separated)\n"
          "  --separator C       field separator for --csv (default ,) and --answers (|)\n"
          "  --json              print one JSON object per result row\n"
          "  --table             print aligned tables (the default)\n"
          "  --markdown          print tables in Markdown's pipe syntax\n"
          "  --timer             print the run time after each statement\n"
          "  --mode M            execution mode: overlapped (default), chunked, blocking\n"
          "  --replicate-rows N  under mpirun: tables of fewer rows are read whole by every\n"
          "                      rank, bigger ones split over the ranks (default 1000000;\n"
          "                      also PISTA_REPLICATE_ROWS)\n"
          "  --tmin DISK,NET      with --timer under mpirun: the storage and network ceilings\n"
          "                      in GB/s (pista bench io, pista bench net) for each\n"
          "                      statement's least possible time (Tmin) and runtime/Tmin\n"
          "  --device X, --threads N, --memory-limit SIZE   as for every command\n"
          "Without -c or -f, statements are read from standard input (.help lists the dot\n"
          "commands). Scripts stop at the first error with exit status 1.\n",
          f);
}

/* A growable text buffer (pa_ memory). */
typedef struct text_buf {
    char *s;
    size_t len, cap;
} text_buf;

static int buf_append(text_buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *ns = pa_realloc(b->s, cap);
        if (!ns)
            return -1;
        b->s = ns;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
    return 0;
}

/* The statement as one history line: line breaks become spaces. */
static void remember_statement(shell_input *in, text_buf *b)
{
    char *flat = pa_strdup(b->s);
    if (!flat)
        return;
    size_t n = strlen(flat);
    for (size_t i = 0; i < n; i++)
        if (flat[i] == '\n' || flat[i] == '\r')
            flat[i] = ' ';
    while (n && flat[n - 1] == ' ')
        flat[--n] = '\0';
    shell_input_remember(in, flat);
    pa_free(flat);
}

/* A line that leaves the shell where no statement is pending, as psql's:
 * \q, or exit or quit alone (any case, an optional ';'): 1. Another
 * backslash command: -1 (we have none). Anything else: 0. */
static int quit_word(const char *p)
{
    size_t n = strlen(p);
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\n' || p[n - 1] == '\r'))
        n--;
    if (p[0] == '\\')
        return n == 2 && p[1] == 'q' ? 1 : -1;
    if (n && p[n - 1] == ';')
        n--;
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
    return (n == 4 && (!strncasecmp(p, "exit", 4) || !strncasecmp(p, "quit", 4))) ? 1 : 0;
}

/* Read f line by line: dot commands where no statement is pending, else
 * lines gather until they end a statement. Interactive: errors are shown
 * and reading goes on; a statement left unfinished at Ctrl-D is not run
 * (and the user is told so).
 * Otherwise: stop at the first error; an unfinished last statement runs. */
static int run_lines(shell *sh, FILE *f, bool interactive)
{
    shell_input *in = shell_input_open(sh, f, interactive);
    if (!in) {
        fputs("Error: out of memory\n", stderr);
        return SHELL_ERROR;
    }
    text_buf b = {0};
    int status = SHELL_OK;
    for (;;) {
        const char *line;
        int k = shell_input_read(in, b.len > 0, &line);
        if (k < 0) {
            b.len = 0;
            continue;
        }
        if (k == 0) {
            if (interactive) {
                fputc('\n', stdout);
                if (b.len > 0)
                    fputs("The unfinished statement was not run (end a statement with ';').\n", stderr);
                b.len = 0;
            }
            break;
        }
        if (b.len == 0) {
            const char *p = line;
            while (*p == ' ' || *p == '\t')
                p++;
            if (!*p)
                continue;
            int quit = quit_word(p);
            if (quit > 0)
                break;
            if (quit < 0) {
                fprintf(stderr, "Error: unknown command %s (\\q leaves; .help lists the dot commands)\n", p);
                status = SHELL_ERROR;
                if (!interactive)
                    break;
                status = SHELL_OK;
                continue;
            }
            if (*p == '.') {
                shell_input_remember(in, p);
                status = shell_dot(sh, p);
                if (status == SHELL_QUIT || (status != SHELL_OK && !interactive))
                    break;
                continue;
            }
        }
        if (buf_append(&b, line, strlen(line)) || buf_append(&b, "\n", 1)) {
            fputs("Error: out of memory\n", stderr);
            status = SHELL_ERROR;
            break;
        }
        if (sql_statement_complete(b.s)) {
            remember_statement(in, &b);
            status = shell_run_text(sh, b.s);
            b.len = 0;
            if (status != SHELL_OK && !interactive)
                break;
        }
    }
    if (b.len > 0 && status == SHELL_OK)
        status = shell_run_text(sh, b.s);
    pa_free(b.s);
    shell_input_close(in);
    if (status == SHELL_QUIT || interactive)
        status = SHELL_OK;
    return status;
}

static int run_file(shell *sh, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "Error: cannot open %s: %s\n", path, strerror(errno));
        return SHELL_ERROR;
    }
    int status = run_lines(sh, f, false);
    fclose(f);
    return status;
}

typedef struct script {
    char kind;                /* 'c' or 'f' */
    const char *arg;
} script;

typedef struct shell_args {
    cli_global g;
    const char *data;
    script *scripts;
    int n_scripts;
    const char **paths;   /* PATH arguments: tables */
    int n_paths;
    int64_t replicate_rows;   /* --replicate-rows (0: the default) */
} shell_args;

static int parse_args(shell *sh, shell_args *a, int argc, char **argv)
{
    pa_err err;
    pa_err_init(&err);
    for (int i = 0; i < argc;) {
        int r = cli_global_option(&a->g, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r > 0)
            continue;
        const char *o = argv[i];
        if (o[0] != '-') {   /* a Parquet file, folder or glob */
            a->paths[a->n_paths++] = o;
            i++;
            continue;
        }
        bool has_value = i + 1 < argc;
        const char *v = has_value ? argv[i + 1] : NULL;
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            usage(stdout);
            return -1;
        } else if (!strcmp(o, "--csv") || !strcmp(o, "--json") || !strcmp(o, "--table") || !strcmp(o, "--answers") ||
                   !strcmp(o, "--markdown")) {
            sh->mode = o[2] == 'c'   ? CLI_PRINT_CSV
                       : o[2] == 'j' ? CLI_PRINT_JSON
                       : o[2] == 'a' ? CLI_PRINT_ANSWERS
                       : o[2] == 'm' ? CLI_PRINT_MARKDOWN
                                     : CLI_PRINT_TABLE;
            i++;
            continue;
        } else if (!strcmp(o, "--timer")) {
            sh->timer = true;
            i++;
            continue;
        } else if (strcmp(o, "-c") && strcmp(o, "-f") && strcmp(o, "--data") && strcmp(o, "--mode") &&
                   strcmp(o, "--separator") && strcmp(o, "--replicate-rows") &&
                   strcmp(o, "--tmin")) {
            return cli_usage("unknown option '%s' (pista --help lists them)", o);
        }
        if (!has_value)
            return cli_usage("%s needs a value", o);
        if (!strcmp(o, "-c") || !strcmp(o, "-f")) {
            a->scripts[a->n_scripts++] = (script){o[1], v};
        } else if (!strcmp(o, "--data")) {
            a->data = v;
        } else if (!strcmp(o, "--tmin")) {
            char *end;
            sh->disk_gbps = strtod(v, &end);
            sh->net_gbps = *end == ',' ? strtod(end + 1, &end) : 0;
            if (*end || !(sh->disk_gbps > 0) || !(sh->net_gbps > 0))
                return cli_usage("--tmin: '%s' is not DISK,NET in GB/s (two positive numbers)", v);
        } else if (!strcmp(o, "--replicate-rows")) {
            char *end;
            long long n = strtoll(v, &end, 10);
            if (*v == '\0' || *end || n < 1)
                return cli_usage("--replicate-rows: '%s' is not a positive row count", v);
            a->replicate_rows = n;
        } else if (!strcmp(o, "--mode")) {
            if (ex_mode_parse(v, &sh->exmode, &err) != PA_OK) {
                int rc = cli_usage("--mode: %s", err.msg);
                pa_err_close(&err);
                return rc;
            }
        } else {
            if (!strcmp(v, "\\t"))
                sh->sep = '\t';
            else if (strlen(v) == 1)
                sh->sep = v[0];
            else
                return cli_usage("--separator: '%s' is not one character", v);
        }
        i += 2;
    }
    pa_err_close(&err);
    return 0;
}

/* The table name for a PATH argument: its last component without glob
 * characters (the folder's name for a glob of its files), without .parquet,
 * folded to lower case as SQL folds unquoted names, characters other than
 * letters, digits and _ made _, and a leading digit prefixed with t. */
static void table_name_of(const char *path, char *out, size_t cap)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (;;) {
        size_t n = strlen(buf);
        while (n > 1 && buf[n - 1] == '/')
            buf[--n] = 0;
        char *slash = strrchr(buf, '/');
        char *base = slash ? slash + 1 : buf;
        if (!strpbrk(base, "*?[") || !slash)
            break;
        *slash = 0;   /* a glob: name it after its folder */
    }
    char *slash = strrchr(buf, '/');
    const char *base = slash ? slash + 1 : buf;
    size_t n = strlen(base);
    if (n > 8 && !strcasecmp(base + n - 8, ".parquet"))
        n -= 8;
    size_t k = 0;
    if (n == 0 || (base[0] >= '0' && base[0] <= '9'))
        out[k++] = 't';
    for (size_t i = 0; i < n && k + 1 < cap; i++) {
        char c = base[i];
        out[k++] = c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a')
                   : (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ? c
                                                                                   : '_';
    }
    out[k] = 0;
}

static bool shell_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The tables a folder's registration skipped, one warning each. */
static void print_warnings(shell *sh)
{
    const char *const *w;
    int n = sql_session_warnings(sh->s, &w);
    for (int i = 0; i < n; i++)
        fprintf(stderr, "pista: warning: %s\n", w[i]);
    sql_session_clear_warnings(sh->s);
}

/* A PATH argument: one table (a file, a folder of parts, a glob); a folder
 * that is no one table (its files differ, or it holds tables of its own)
 * is registered as --data registers a folder. */
static int register_path(shell *sh, const char *path, pa_err *err)
{
    char name[256];
    table_name_of(path, name, sizeof name);
    pa_err first;
    pa_err_init(&first);
    int rc = sql_register_table(sh->s, name, path, &first);
    if (rc == PA_OK) {
        if (sh->interactive)
            printf("table %s: %s\n", name, path);
    } else if (shell_is_dir(path) && sql_register_dir(sh->s, path, NULL) == PA_OK) {
        rc = PA_OK;
        print_warnings(sh);
        if (sh->interactive)
            printf("tables of %s registered (.tables lists them)\n", path);
    } else {
        pa_error(err, rc, "%s", first.msg);
    }
    pa_err_close(&first);
    return rc;
}

/* Device, session, tables. Returns 0 or the exit status of a failure. */
static int open_session(shell *sh, shell_args *a, pa_err *err)
{
    dv_options dopt = {.spec = a->g.device, .memory_limit = a->g.memory_limit, .cpu_threads = a->g.threads, .page_decode = a->g.page_decode};
    if (dv_open(&dopt, &sh->dev, err) != PA_OK)
        return cli_fail(err);
    sh->threads = a->g.threads;
    sql_options so = {.dev = sh->dev, .threads = a->g.threads, .mode = sh->exmode, .data_dir = a->data,
                      .world = sh->world, .replicate_rows = a->replicate_rows};
    if (sql_session_create(&so, &sh->s, err) != PA_OK)   /* registers the --data folder's tables */
        return cli_fail(err);
    print_warnings(sh);
    for (int i = 0; i < a->n_paths; i++)
        if (register_path(sh, a->paths[i], err) != PA_OK)
            return cli_fail(err);
    return 0;
}

/* A rank other than 0: run each statement rank 0 sends (its own -c and -f
 * are rank 0's too) until rank 0 sends none (an empty message). Errors are
 * rank 0's to print: each statement's round tells every rank. */
static int worker_loop(shell *sh)
{
    pa_err e;
    pa_err_init(&e);
    int status = SHELL_OK;
    for (;;) {
        nt_buf b = {0};
        if (nt_bcast(sh->world, 0, &b, &e) != PA_OK) {
            status = SHELL_ERROR;   /* rank 0 failed (it says why) or a rank is lost: */
            if (nt_broken(sh->world))   /* every rank that sees it says so, rank 0 may be the lost one */
                fprintf(stderr, "pista: rank %d: %s\n", nt_rank(sh->world), e.msg);
            break;
        }
        if (b.bytes == 0) {
            nt_buf_release(sh->world, b.data);
            break;
        }
        /* Not text: an empty statement, whose error round keeps step. */
        const char *text = ((const char *)b.data)[b.bytes - 1] == 0 ? b.data : "";
        sql_result *r = NULL;
        if (sql_execute(sh->s, text, &r, &e) != PA_OK)
            pa_err_clear(&e);
        sql_result_destroy(r);
        nt_buf_release(sh->world, b.data);
    }
    pa_err_close(&e);
    return status;
}

int cli_cmd_shell(int argc, char **argv)
{
    shell sh = {.mode = CLI_PRINT_TABLE, .sep = 0, .exmode = EX_MODE_OVERLAPPED, .sigfd = -1, .out = stdout,
                .max_rows = -1, .max_width = -1};
    shell_args a = {0};
    cli_global_defaults(&a.g);
    const char *rr = getenv("PISTA_REPLICATE_ROWS");
    if (rr && *rr)
        a.replicate_rows = atoll(rr) > 0 ? atoll(rr) : 0;
    a.scripts = pa_calloc(argc > 0 ? (size_t)argc : 1, sizeof *a.scripts);
    a.paths = pa_calloc(argc > 0 ? (size_t)argc : 1, sizeof *a.paths);
    if (!a.scripts || !a.paths) {
        pa_free(a.paths);
        fputs("pista: out of memory\n", stderr);
        return 1;
    }
    int status = parse_args(&sh, &a, argc, argv);
    if (status != 0) {
        pa_free(a.scripts);
        pa_free(a.paths);
        return status < 0 ? 0 : status;
    }
    sh.interactive = a.n_scripts == 0 && isatty(STDIN_FILENO);
    sh.progress = isatty(STDERR_FILENO);
    if (shell_signals_init(&sh) != 0)
        fputs("pista: warning: Ctrl-C will not cancel statements (no signalfd)\n", stderr);
    pa_err err;
    pa_err_init(&err);
    /* Under a launcher with several ranks: rank 0 reads the statements (-c,
     * -f or its input) and sends each to the workers before running it; every
     * rank runs it (src/sql/distribute.c) and rank 0 alone prints. */
    status = 0;
    if (nt_launched_size() > 1 && nt_world_open(NULL, &sh.world, &err) != PA_OK)
        status = cli_fail(&err);
    if (status == 0 && sh.world && nt_size(sh.world) > 1) {   /* rank 0's settings that shape plans */
        nt_buf b = {&a.replicate_rows, sizeof a.replicate_rows};
        if (nt_bcast(sh.world, 0, &b, &err) != PA_OK)
            status = cli_fail(&err);
        else if (nt_rank(sh.world) > 0) {
            if (b.bytes == sizeof a.replicate_rows)
                memcpy(&a.replicate_rows, b.data, sizeof a.replicate_rows);
            nt_buf_release(sh.world, b.data);
        }
    }
    if (status == 0) {
        status = open_session(&sh, &a, &err);
        if (status != 0 && sh.world)   /* the others learn why in their first statement's round */
            nt_fail(sh.world, &err, NULL);
    }
    if (status == 0 && sh.world && nt_rank(sh.world) > 0) {   /* rank 0 prints results and errors */
        sh.interactive = sh.progress = false;
        if (!freopen("/dev/null", "w", stdout))
            status = 1;
    }
    if (status == 0 && sh.world && nt_rank(sh.world) > 0) {
        status = worker_loop(&sh);
    } else if (status == 0) {
        shell_signals_ready(&sh);
        if (sh.interactive)
            printf("pista %s on %s. Statements end with ';'; .help for help, .quit or Ctrl-D to leave.\n",
                   PISTA_VERSION, dv_describe(sh.dev));
        for (int i = 0; i < a.n_scripts && status == SHELL_OK; i++) {
            const script *sc = &a.scripts[i];
            if (sc->kind == 'f')
                status = run_file(&sh, sc->arg);
            else if (sc->arg[strspn(sc->arg, " \t\n")] == '.')
                status = shell_dot(&sh, sc->arg + strspn(sc->arg, " \t\n"));
            else
                status = shell_run_text(&sh, sc->arg);
        }
        if (a.n_scripts == 0)
            status = run_lines(&sh, stdin, sh.interactive);
        if (status == SHELL_QUIT)
            status = SHELL_OK;
        if (fflush(stdout) != 0)
            status = SHELL_ERROR;
        if (sh.world && nt_size(sh.world) > 1 && !nt_broken(sh.world)) {   /* the workers may stop */
            nt_buf quit = {NULL, 0};
            if (nt_bcast(sh.world, 0, &quit, &err) != PA_OK && status == SHELL_OK)
                status = SHELL_ERROR;
        }
    }
    if (sh.out != stdout && fclose(sh.out) != 0) {
        fputs("pista: writing the .output file failed\n", stderr);
        status = SHELL_ERROR;
    }
    if (sh.s)
        sql_session_destroy(sh.s);
    if (sh.dev)
        dv_close(sh.dev);
    if (sh.world) {
        if (nt_broken(sh.world) && status == 0)
            status = SHELL_ERROR;
        nt_world_close(sh.world);
    }
    shell_signals_close(&sh);
    pa_err_close(&err);
    pa_free(a.scripts);
    pa_free(a.paths);
    return status;
}

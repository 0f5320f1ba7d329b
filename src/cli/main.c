/*
 * main.c - `pista`: dispatch to a command by its first argument, and the
 * helpers every command shares (error printing, global options). Library
 * code never prints; this program is where messages reach the user.
 */
#include "cli/cli.h"
#include "net/net.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

static const cli_command commands[] = {
    {"bench", cli_cmd_bench, "measure hardware ceilings (bench device)"},
    {"devices", cli_cmd_devices, "list the devices this build can use"},
    {"gen", cli_cmd_gen, "generate data (gen tpch --sf X --out DIR --format tbl)"},
    {"parquet", cli_cmd_parquet, "inspect and read Parquet files (parquet meta|cat FILE)"},
    {"shell", cli_cmd_shell, "the SQL shell; also `pista [options]` (pista shell --help)"},
    {"tpch", cli_cmd_tpch, "TPC-H helpers (tpch query N [--seed S])"},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fprintf(f, "usage: pista [options] [PATH...] [-c SQL | -f FILE]   (the SQL shell; PATH: Parquet tables)\n       pista <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nglobal options: --device auto|cpu|sim|cuda[:N]  --memory-limit SIZE  --threads N\n"
               "                --page-decode auto|host|device\n"
               "environment: PISTA_DEVICE, PISTA_MEMORY_LIMIT, PISTA_PAGE_DECODE\n");
}

int cli_fail(const pa_err *err)
{
    fprintf(stderr, "pista: %s: %s\n", pa_status_message(err->code), err->msg);
    return 1;
}

int cli_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("pista: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 2;
}

void cli_global_defaults(cli_global *g)
{
    memset(g, 0, sizeof *g);
    const char *d = getenv("PISTA_DEVICE");
    g->device = d && *d ? d : "auto";
}

int cli_global_option(cli_global *g, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    const char *names[] = {"--device", "--memory-limit", "--threads", "--page-decode"};
    for (int k = 0; k < 4; k++) {
        size_t n = strlen(names[k]);
        if (strncmp(a, names[k], n) != 0 || (a[n] != '\0' && a[n] != '='))
            continue;
        const char *v = a[n] == '=' ? a + n + 1 : (*i + 1 < argc ? argv[*i + 1] : NULL);
        if (!v) {
            cli_usage("%s needs a value", names[k]);
            return -1;
        }
        if (a[n] != '=')
            (*i)++;
        (*i)++;
        if (k == 0) {
            g->device = v;
        } else if (k == 3) {
            g->page_decode = v;   /* checked by dv_open */
        } else if (k == 1) {
            pa_err e;
            pa_err_init(&e);
            if (pa_parse_size(v, &g->memory_limit, &e) != PA_OK ||
                pa_memory_limit_check(g->memory_limit, &e) != PA_OK) {
                cli_usage("--memory-limit: %s", e.msg);
                pa_err_close(&e);
                return -1;
            }
            pa_err_close(&e);
        } else {
            char *end;
            long t = strtol(v, &end, 10);
            if (*end || t < 0 || t > 4096) {
                cli_usage("--threads: '%s' is not a thread count", v);
                return -1;
            }
            g->threads = (int)t;
        }
        return 1;
    }
    return 0;
}

/* Under a launcher with several ranks only what runs across ranks may run
 * (the SQL shell's -c and -f, `bench net`, `bench join`): N copies of a one-process
 * command would each do all of it. */
static int refuse_ranks(int argc, char **argv)
{
    int n = nt_launched_size();
    if (n <= 1 || argc < 2 || argv[1][0] == '-' || !strcmp(argv[1], "shell") ||
        (argc >= 3 && !strcmp(argv[1], "bench") && (!strcmp(argv[2], "net") || !strcmp(argv[2], "join"))))
        return 0;
    bool command = false;
    for (size_t i = 0; i < N_COMMANDS; i++)
        command |= !strcmp(argv[1], commands[i].name);
    if (!command)
        return 0;   /* PATH...: the shell */
    if (nt_launched_rank() > 0)
        return 2;   /* rank 0 says why */
    fprintf(stderr, "pista: started by an MPI launcher with %d ranks: `pista %s` runs in one process (across "
                    "ranks: the SQL shell with -c or -f, `pista bench net` and `pista bench join`)\n", n, argv[1]);
    return 2;
}

int main(int argc, char **argv)
{
    int refused = refuse_ranks(argc, argv);
    if (refused)
        return refused;
    if (argc < 2)   /* no command: the SQL shell */
        return cli_cmd_shell(0, argv + 1);
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
        printf("pista %s\n", PISTA_VERSION);
        return 0;
    }
    /* Options first (pista --data DIR -c SQL): the shell too. */
    if (argv[1][0] == '-')
        return cli_cmd_shell(argc - 1, argv + 1);
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 2, argv + 2);
    /* A Parquet file, folder or glob: the shell with it as a table. */
    size_t n = strlen(argv[1]);
    struct stat st;
    if (strchr(argv[1], '/') || strpbrk(argv[1], "*?[") || (n > 8 && !strcasecmp(argv[1] + n - 8, ".parquet")) ||
        stat(argv[1], &st) == 0)
        return cli_cmd_shell(argc - 1, argv + 1);
    fprintf(stderr, "pista: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}

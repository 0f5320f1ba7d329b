/*
 * duckdb.c - DuckDB, our rival, measured from the benchmarks: runs
 * bench/scan_vs_duckdb.mjs (Node.js with @duckdb/node-api, installed by
 * tests/oracle/setup.sh) on one SQL query with `SET threads = N`, and reads
 * back its best time of R runs (timed inside node, after a warm-up run).
 * Optional setup statements (views over the benchmark's files) run once
 * before the warm-up, untimed.
 */
#include "cli/cli.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* bench/scan_vs_duckdb.mjs: under $PISTA_SOURCE_DIR, next to the source
 * tree holding this binary's build folder, or under the working directory. */
static int find_script(char *out, size_t cap)
{
    const char *rel = "bench/scan_vs_duckdb.mjs";
    const char *src = getenv("PISTA_SOURCE_DIR");
    if (src && *src) {
        snprintf(out, cap, "%s/%s", src, rel);
        if (access(out, R_OK) == 0)
            return 0;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *dir = dirname(exe);   /* .../build or .../build/normal */
        for (int up = 1; up <= 2; up++) {
            snprintf(out, cap, "%s/%s%s", dir, up == 1 ? "../" : "../../", rel);
            if (access(out, R_OK) == 0)
                return 0;
        }
    }
    snprintf(out, cap, "%s", rel);
    return access(out, R_OK) == 0 ? 0 : -1;
}

bool cli_duckdb_available(void)
{
    char script[PATH_MAX];
    return find_script(script, sizeof script) == 0;
}

int cli_duckdb_time(const char *sql, int threads, int runs, cli_duckdb_result *r, char *why, size_t why_cap)
{
    return cli_duckdb_time_setup(NULL, sql, threads, runs, r, why, why_cap);
}

int cli_duckdb_time_setup(const char *setup, const char *sql, int threads, int runs, cli_duckdb_result *r,
                          char *why, size_t why_cap)
{
    char script[PATH_MAX];
    if (find_script(script, sizeof script) != 0) {
        snprintf(why, why_cap, "bench/scan_vs_duckdb.mjs not found (set PISTA_SOURCE_DIR)");
        return -1;
    }
    char th[16], rs[16];
    snprintf(th, sizeof th, "%d", threads);
    snprintf(rs, sizeof rs, "%d", runs);
    char *argv[] = {"node", script, "--threads", th, "--runs", rs, "--sql", (char *)sql, NULL, NULL, NULL};
    if (setup) {
        argv[8] = "--setup";
        argv[9] = (char *)setup;
    }
    int pipefd[2];
    if (pipe(pipefd) != 0) {
        snprintf(why, why_cap, "pipe: %s", strerror(errno));
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
    posix_spawn_file_actions_addclose(&fa, pipefd[0]);
    pid_t pid;
    int sr = posix_spawnp(&pid, "node", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pipefd[1]);
    if (sr != 0) {
        close(pipefd[0]);
        snprintf(why, why_cap, "cannot run node: %s", strerror(sr));
        return -1;
    }
    char line[4096];
    size_t len = 0;
    ssize_t k;
    while (len < sizeof line - 1 && (k = read(pipefd[0], line + len, sizeof line - 1 - len)) > 0)
        len += (size_t)k;
    line[len] = '\0';
    close(pipefd[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        snprintf(why, why_cap, "%s", code == 127 ? "node is not installed"
                                     : code == 3 ? "@duckdb/node-api is missing (run tests/oracle/setup.sh)"
                                                 : "the DuckDB script failed (its message is above)");
        return -1;
    }
    const char *b = strstr(line, "best_s="), *c = strstr(line, "cpu_s="), *v = strstr(line, "version="),
               *res = strstr(line, "result="), *nr = strstr(line, " rows=");
    if (!b || !c || !v || !res) {
        snprintf(why, why_cap, "unexpected output from %s: %.200s", script, line);
        return -1;
    }
    memset(r, 0, sizeof *r);
    r->seconds = strtod(b + 7, NULL);
    r->cpu_seconds = strtod(c + 6, NULL);
    r->rows = strtoll(res + 7, NULL, 10);
    r->n_rows = nr && nr < res ? strtoll(nr + 6, NULL, 10) : -1;
    sscanf(v + 8, "%31s", r->version);
    snprintf(r->first_row, sizeof r->first_row, "%s", res + 7);
    r->first_row[strcspn(r->first_row, "\n")] = '\0';
    return 0;
}

/*
 * cmd_tpch.c - `pista tpch query N [--seed S] [--sf X]`: print TPC-H query N
 * with the specification's validation parameters, or with parameters drawn
 * from the query's substitution domains for seed S (see src/tpch/queries.c).
 */
#include "cli/cli.h"
#include "tpch/tpch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage_text(FILE *f)
{
    fprintf(f, "usage: pista tpch query N [--seed S] [--sf X]\n"
               "  N          query number 1..22\n"
               "  --seed S   draw the substitution parameters from seed S (1..2^64-1)\n"
               "             instead of using the validation parameters\n"
               "  --sf X     scale factor for Q11's FRACTION = 0.0001 / X (with --seed)\n");
}

static int query(int argc, char **argv)
{
    if (argc < 1)
        return cli_usage("tpch query needs a query number 1..22");
    char *end;
    long n = strtol(argv[0], &end, 10);
    if (!*argv[0] || *end || n < 1 || n > 22)
        return cli_usage("tpch query: '%s' is not a query number 1..22", argv[0]);
    uint64_t seed = 0;
    double sf = 1.0;
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 >= argc)
            return cli_usage("%s needs a value", argv[i]);
        const char *v = argv[i + 1];
        if (!strcmp(argv[i], "--seed")) {
            unsigned long long s = strtoull(v, &end, 10);
            if (!*v || *end || *v == '-' || s == 0)
                return cli_usage("--seed: '%s' is not a seed 1..2^64-1", v);
            seed = s;
        } else if (!strcmp(argv[i], "--sf")) {
            sf = strtod(v, &end);
            if (!*v || *end || !(sf > 0))
                return cli_usage("--sf: '%s' is not a positive scale factor", v);
        } else {
            return cli_usage("tpch query: unknown option '%s'", argv[i]);
        }
    }
    pa_err err;
    pa_err_init(&err);
    char *text = NULL;
    int rc = tp_query_text((int)n, seed, sf, &text, &err);
    if (rc != PA_OK) {
        cli_fail(&err);
        pa_err_close(&err);
        return 1;
    }
    pa_err_close(&err);
    fputs(text, stdout);
    pa_free(text);
    return 0;
}

int cli_cmd_tpch(int argc, char **argv)
{
    if (argc < 1 || !strcmp(argv[0], "-h") || !strcmp(argv[0], "--help")) {
        usage_text(argc < 1 ? stderr : stdout);
        return argc < 1 ? 2 : 0;
    }
    if (!strcmp(argv[0], "query"))
        return query(argc - 1, argv + 1);
    return cli_usage("tpch: unknown subcommand '%s' (known: query)", argv[0]);
}

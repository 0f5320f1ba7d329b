/*
 * cmd_devices.c - `pista devices`: what this build and machine offer, and
 * what `--device auto` would pick and why.
 */
#include "cli/cli.h"
#include "device/device.h"

#include <stdio.h>
#include <string.h>

int cli_cmd_devices(int argc, char **argv)
{
    cli_global g;
    cli_global_defaults(&g);
    for (int i = 0; i < argc;) {
        int r = cli_global_option(&g, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r == 0)
            return cli_usage("devices: unknown option '%s'", argv[i]);
    }
    dv_info infos[16];
    int n = 0;
    char note[256];
    dv_enumerate(infos, 16, &n, note, sizeof note);
    for (int i = 0; i < n && i < 16; i++) {
        char mem[32];
        printf("%-8s %-48s %s\n", infos[i].name, infos[i].model, pa_format_size(infos[i].memory, mem, sizeof mem));
    }
    if (note[0])
        printf("cuda: %s\n", note);

    pa_err err;
    pa_err_init(&err);
    dv_device *d;
    dv_options opt = {.spec = g.device, .memory_limit = g.memory_limit, .cpu_threads = g.threads, .page_decode = g.page_decode};
    if (dv_open(&opt, &d, &err) != PA_OK) {
        int rc = cli_fail(&err);
        pa_err_close(&err);
        return rc;
    }
    pa_mempool_stats st;
    dv_memory_stats(d, &st, NULL);
    char lim[32];
    printf("--device %s -> %s\n%s\nmemory limit: %s\n", g.device, dv_describe(d), dv_selection(d),
           pa_format_size(st.limit, lim, sizeof lim));
    dv_close(d);
    pa_err_close(&err);
    return 0;
}

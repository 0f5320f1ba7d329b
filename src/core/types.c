/*
 * types.c - names and widths of the engine column types (PA_TYPE_LIST).
 */
#include "core/core.h"

#include <stdio.h>

static const char *const type_names[] = {
#define X(name, sql, width) sql,
    PA_TYPE_LIST(X)
#undef X
};
static const int type_widths[] = {
#define X(name, sql, width) width,
    PA_TYPE_LIST(X)
#undef X
};

const char *pa_type_name(pa_type_id id)
{
    return (unsigned)id < PA_TYPE__COUNT ? type_names[id] : "UNKNOWN";
}

int pa_type_width(pa_type_id id)
{
    return (unsigned)id < PA_TYPE__COUNT ? type_widths[id] : 0;
}

const char *pa_type_format(pa_type t, char *buf, size_t cap)
{
    if (t.id == PA_TYPE_DECIMAL)
        snprintf(buf, cap, "DECIMAL(%u,%u)", t.precision, t.scale);
    else
        snprintf(buf, cap, "%s", pa_type_name(t.id));
    return buf;
}

int pa_type_bytes(pa_type t)
{
    if (t.id == PA_TYPE_DECIMAL && t.precision > PA_DECIMAL64_MAX_PRECISION)
        return 16;
    return pa_type_width(t.id);
}

/*
 * tmp_testutil.h - what the tests of the Parquet writer's temporary files
 * (test_writer, test_tpch_parquet) share: whether one is left.
 */
#ifndef TMP_TESTUTIL_H
#define TMP_TESTUTIL_H

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* The writer's temporary file for path exists: <dir>/.<name>.tmp.<pid>.XXXXXX */
static inline bool tmp_exists(const char *path)
{
    char dir[600], pre[600];
    const char *sl = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", sl ? (int)(sl - path) : 1, sl ? path : ".");
    snprintf(pre, sizeof pre, ".%s.tmp.", sl ? sl + 1 : path);
    DIR *d = opendir(dir);
    bool found = false;
    struct dirent *de;
    while (d && (de = readdir(d)))
        found |= !strncmp(de->d_name, pre, strlen(pre));
    if (d)
        closedir(d);
    return found;
}

#endif /* TMP_TESTUTIL_H */

/*
 * suggest.c - "did you mean ...?" for unknown tables, columns and functions:
 * the closest known name by edit distance (insertions, deletions,
 * substitutions and swaps of neighbours, each 1; case ignored), offered
 * only when it is close for the name's length, as PostgreSQL's hints are.
 */
#include "sql/sql_int.h"

#include <ctype.h>
#include <string.h>

enum { SUGGEST_MAX = 64 };   /* longer names are not compared */

/* Optimal-string-alignment distance of a and b, both at most SUGGEST_MAX bytes. */
static int distance(const char *a, const char *b)
{
    int la = (int)strlen(a), lb = (int)strlen(b);
    int d[SUGGEST_MAX + 1][SUGGEST_MAX + 1];
    for (int i = 0; i <= la; i++)
        d[i][0] = i;
    for (int j = 0; j <= lb; j++)
        d[0][j] = j;
    for (int i = 1; i <= la; i++)
        for (int j = 1; j <= lb; j++) {
            int cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            int v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < v)
                v = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[la][lb];
}

void sq_suggest_init(sq_suggest *s, const char *name)
{
    s->name = name;
    s->best = NULL;
    s->best_d = 0;
}

void sq_suggest_offer(sq_suggest *s, const char *cand)
{
    if (!cand || !s->name || strlen(cand) > SUGGEST_MAX || strlen(s->name) > SUGGEST_MAX ||
        !strcmp(cand, s->name))
        return;
    int n = (int)strlen(s->name), limit = n <= 4 ? 1 : n <= 8 ? 2 : 3;
    int d = distance(s->name, cand);
    if (d <= limit && (!s->best || d < s->best_d)) {
        s->best = cand;
        s->best_d = d;
    }
}

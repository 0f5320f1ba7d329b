/*
 * kn_regex.c - compiles a regular expression into the program kn_regex.h
 * runs (its layout is documented there) and checks such programs. Host
 * only: a recursive-descent parser builds a small tree in a fixed array,
 * then code generation walks it. Patterns are short and the tree is capped
 * at MAX_NODES nodes and MAX_DEPTH nested groups, so the recursion is
 * bounded; whatever does not fit the program's limits is refused as too
 * complex rather than truncated.
 */
#include "kernels/kn_expr_int.h"
#include "kernels/kn_regex.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* MAX_REPEAT is RE2's bound on a counted repetition; a program of
 * KN_RE_MAX_INSNS instructions cannot use more anyway. */
enum { MAX_NODES = 512, MAX_DEPTH = 64, MAX_REPEAT = 1000, MAX_RANGES = 255 };

typedef enum nkind { N_EMPTY, N_CHAR, N_ANY, N_CLASS, N_BOL, N_EOL, N_CAT, N_ALT, N_REP, N_GROUP } nkind;

typedef struct node {
    uint8_t kind;        /* nkind */
    uint8_t greedy;      /* REP */
    int16_t l, r;        /* CAT, ALT: both children; REP, GROUP: l */
    int32_t v;           /* CHAR: code point; CLASS: offset in cls | negated << 16; GROUP: number */
    int16_t min, max;    /* REP: max -1 is unbounded */
} node;

typedef struct rx {
    const char *pat;
    int64_t len, i;
    int flags;
    pa_err *err;
    node nodes[MAX_NODES];
    int n_nodes, n_groups, depth;
    uint8_t insns[4 * KN_RE_MAX_INSNS];
    int n_insns;
    uint8_t cls[KN_RE_MAX_BYTES];   /* the classes' ranges, placed after the instructions at the end */
    int n_cls;
} rx;

/* 1-based character position of byte at, for messages. */
static int64_t char_pos(const rx *x, int64_t at) { return kn__s_count_chars(x->pat, at) + 1; }

/* PA_EINVAL "invalid regular expression 'pat': what at position p" (at < 0:
 * no position). */
static int fail(rx *x, int64_t at, const char *fmt, ...) PA_PRINTF(3, 4);
static int fail(rx *x, int64_t at, const char *fmt, ...)
{
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    int shown = x->len > 200 ? 200 : (int)x->len;
    if (at < 0)
        return pa_error(x->err, PA_EINVAL, "invalid regular expression '%.*s%s': %s", shown, x->pat,
                        shown < x->len ? "..." : "", what);
    return pa_error(x->err, PA_EINVAL, "invalid regular expression '%.*s%s': %s at position %lld", shown, x->pat,
                    shown < x->len ? "..." : "", what, (long long)char_pos(x, at));
}

static int too_complex(rx *x, const char *why)
{
    int shown = x->len > 200 ? 200 : (int)x->len;
    return pa_error(x->err, PA_EINVAL,
                    "regular expression '%.*s%s' is too complex: %s (at most %d instructions; counted "
                    "repetitions such as a{1,100} expand)", shown, x->pat, shown < x->len ? "..." : "", why,
                    KN_RE_MAX_INSNS);
}

static int new_node(rx *x, nkind k, int l, int r, int32_t v, int *out)
{
    if (x->n_nodes == MAX_NODES)
        return too_complex(x, "too many parts");
    node *n = &x->nodes[x->n_nodes];
    memset(n, 0, sizeof *n);
    n->kind = (uint8_t)k, n->l = (int16_t)l, n->r = (int16_t)r, n->v = v;
    *out = x->n_nodes++;
    return PA_OK;
}

/* ------------------------------------------------------------- classes */

typedef struct ranges {
    int n;
    uint32_t lo[MAX_RANGES], hi[MAX_RANGES];
} ranges;

static int add_range(rx *x, ranges *r, uint32_t lo, uint32_t hi)
{
    if (r->n == MAX_RANGES)
        return too_complex(x, "a bracket expression of more than 255 ranges");
    r->lo[r->n] = lo, r->hi[r->n] = hi;
    r->n++;
    return PA_OK;
}

/* The ASCII ranges of a named class (RE2's POSIX classes; \d \w \s as
 * "d", "w", "s"). False for an unknown name. */
static bool named_ranges(rx *x, const char *name, size_t len, ranges *r, int *rc)
{
    static const struct { const char *name, *spans; } classes[] = {
        {"alpha", "AZaz"}, {"digit", "09"}, {"alnum", "09AZaz"}, {"upper", "AZ"}, {"lower", "az"},
        {"space", "\t\r  "}, {"punct", "!/:@[`{~"}, {"xdigit", "09AFaf"}, {"blank", "\t\t  "},
        {"cntrl", "\x01\x1f\x7f\x7f"}, {"print", " ~"}, {"graph", "!~"},
        {"d", "09"}, {"w", "09AZ__az"}, {"s", "\t\n\f\r  "},
    };
    for (size_t k = 0; k < sizeof classes / sizeof classes[0]; k++) {
        if (strlen(classes[k].name) != len || memcmp(classes[k].name, name, len) != 0)
            continue;
        const char *s = classes[k].spans;
        if (!strcmp(classes[k].name, "cntrl") && (*rc = add_range(x, r, 0, 0)) != PA_OK)
            return true;   /* NUL, which the spans string cannot hold */
        for (size_t j = 0; s[j]; j += 2)
            if ((*rc = add_range(x, r, (unsigned char)s[j], (unsigned char)s[j + 1])) != PA_OK)
                return true;
        *rc = PA_OK;
        return true;
    }
    return false;
}

/* Stores ranges r in the class data; *v gets the CLASS node value. */
static int store_class(rx *x, const ranges *r, bool negated, int32_t *v)
{
    if (x->n_cls + 1 + 6 * r->n > (int)sizeof x->cls)
        return too_complex(x, "bracket expressions too large");
    *v = x->n_cls | (negated ? 1 << 16 : 0);
    x->cls[x->n_cls++] = (uint8_t)r->n;
    for (int k = 0; k < r->n; k++) {
        uint32_t b[2] = {r->lo[k], r->hi[k]};
        for (int j = 0; j < 2; j++)
            for (int s = 0; s < 3; s++)
                x->cls[x->n_cls++] = (uint8_t)(b[j] >> (8 * s));
    }
    return PA_OK;
}

/* ------------------------------------------------------------- parsing */

static int parse_alt(rx *x, int *out);

/* The character at x->i, x->i moved past it; malformed UTF-8 is an error. */
static int next_char(rx *x, uint32_t *cp)
{
    int64_t at = x->i;
    bool bad;
    *cp = kn__s_u8next(x->pat, x->len, &x->i, &bad);
    return bad ? fail(x, at, "malformed UTF-8") : PA_OK;
}

/* The escape after a backslash at x->i - 1: a character to *cp, or for
 * \d \w \s (\D \W \S) the class letter to *cls (upper case: negated). */
static int parse_escape(rx *x, bool in_class, uint32_t *cp, char *cls)
{
    int64_t at = x->i - 1;
    *cls = 0;
    if (x->i >= x->len)
        return fail(x, at, "trailing \\");
    unsigned char c = (unsigned char)x->pat[x->i];
    static const char ctl[] = "t\tn\nr\rf\fv\v";
    for (int k = 0; ctl[k]; k += 2)
        if (c == (unsigned char)ctl[k]) {
            x->i++;
            *cp = (unsigned char)ctl[k + 1];
            return PA_OK;
        }
    if (c && strchr("dwsDWS", c)) {
        if (in_class && c < 'a')
            return fail(x, at, "\\%c inside [ ] is not supported", c);
        x->i++;
        *cls = (char)c;
        return PA_OK;
    }
    if (c < 0x80 && !(c >= '0' && c <= '9') && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z')) {
        x->i++;
        *cp = c;   /* escaped punctuation (or a space): itself */
        return PA_OK;
    }
    if (c >= '1' && c <= '9')
        return fail(x, at, "\\%c (a backreference) is not supported", c);
    if (c >= 0x80)
        return fail(x, at, "\\ before a non-ASCII character is not supported");
    return fail(x, at, "\\%c is not supported", c);
}

/* A bracket expression; x->i is past the '['. */
static int parse_class(rx *x, int *out)
{
    int64_t open = x->i - 1;
    bool negated = x->i < x->len && x->pat[x->i] == '^';
    ranges r = {0};
    int rc = PA_OK;
    x->i += negated;
    for (bool first = true;; first = false) {
        if (x->i >= x->len)
            return fail(x, open, "missing ] for the [");
        int64_t at = x->i;
        char ch = x->pat[x->i];
        if (ch == ']' && !first) {
            x->i++;
            break;
        }
        uint32_t lo;
        if (ch == '[' && x->i + 1 < x->len && x->pat[x->i + 1] && strchr(":.=", x->pat[x->i + 1])) {
            char kind = x->pat[x->i + 1];
            if (kind != ':')
                return fail(x, at, "[%c %c] is not supported", kind, kind);
            const char *name = x->pat + x->i + 2;
            const char *end = NULL;
            for (int64_t j = x->i + 2; j + 1 < x->len && !end; j++)
                if (x->pat[j] == ':' && x->pat[j + 1] == ']')
                    end = x->pat + j;
            if (!end)
                return fail(x, at, "missing :] for the [:");
            if (!named_ranges(x, name, (size_t)(end - name), &r, &rc))
                return fail(x, at, "unknown class [:%.*s:]", (int)(end - name), name);
            if (rc != PA_OK)
                return rc;
            x->i = end - x->pat + 2;
            continue;
        }
        if (ch == '\\') {
            char cls;
            x->i++;
            if ((rc = parse_escape(x, true, &lo, &cls)) != PA_OK)
                return rc;
            if (cls) {
                if (!named_ranges(x, &cls, 1, &r, &rc) || rc != PA_OK)
                    return rc;
                continue;
            }
        } else if ((rc = next_char(x, &lo)) != PA_OK) {
            return rc;
        }
        uint32_t hi = lo;
        if (x->i + 1 < x->len && x->pat[x->i] == '-' && x->pat[x->i + 1] != ']') {
            x->i++;
            char cls = 0;
            if (x->pat[x->i] == '\\') {
                x->i++;
                rc = parse_escape(x, true, &hi, &cls);
            } else {
                rc = next_char(x, &hi);
            }
            if (rc != PA_OK)
                return rc;
            if (cls)
                return fail(x, at, "a range ending in \\%c", cls);
            if (hi < lo)
                return fail(x, at, "invalid range (its end comes before its start)");
        }
        if ((rc = add_range(x, &r, lo, hi)) != PA_OK)
            return rc;
    }
    int32_t v;
    if ((rc = store_class(x, &r, negated, &v)) != PA_OK)
        return rc;
    return new_node(x, N_CLASS, -1, -1, v, out);
}

/* A group after its '(' at x->i - 1. */
static int parse_group(rx *x, int *out)
{
    int64_t open = x->i - 1;
    int g = 0, inner, rc;
    if (x->i < x->len && x->pat[x->i] == '?') {
        if (x->i + 1 < x->len && x->pat[x->i + 1] == ':') {
            x->i += 2;
        } else {
            char c = x->i + 1 < x->len ? x->pat[x->i + 1] : ' ';
            const char *what = c == '=' || c == '!' ? "lookahead" : c == '<' ? "lookbehind or a named group"
                             : c == 'P' ? "a named group" : "an embedded option";
            return fail(x, open, "(?%c (%s) is not supported", c, what);
        }
    } else {
        g = ++x->n_groups;
    }
    if (++x->depth > MAX_DEPTH)
        return too_complex(x, "groups nested more than 64 deep");
    if ((rc = parse_alt(x, &inner)) != PA_OK)
        return rc;
    x->depth--;
    if (x->i >= x->len || x->pat[x->i] != ')')
        return fail(x, open, "missing ) for the (");
    x->i++;
    if (!g) {
        *out = inner;
        return PA_OK;
    }
    return new_node(x, N_GROUP, inner, -1, g, out);
}

static int parse_atom(rx *x, int *out)
{
    int64_t at = x->i;
    char ch = x->pat[x->i];
    uint32_t cp;
    int rc;
    switch (ch) {
    case '(': x->i++; return parse_group(x, out);
    case '[': x->i++; return parse_class(x, out);
    case '.': x->i++; return new_node(x, N_ANY, -1, -1, 0, out);
    case '^': x->i++; return new_node(x, N_BOL, -1, -1, 0, out);
    case '$': x->i++; return new_node(x, N_EOL, -1, -1, 0, out);
    case '*':
    case '+':
    case '?': return fail(x, at, "%c has nothing to repeat", ch);
    case '{': return fail(x, at, "{ has nothing to repeat (write \\{ for the character)");
    case '\\': {
        char cls;
        x->i++;
        if ((rc = parse_escape(x, false, &cp, &cls)) != PA_OK)
            return rc;
        if (!cls)
            break;
        ranges r = {0};
        char lower = (char)(cls | 0x20);
        int32_t v;
        if (!named_ranges(x, &lower, 1, &r, &rc) || rc != PA_OK || (rc = store_class(x, &r, cls != lower, &v)) != PA_OK)
            return rc;
        return new_node(x, N_CLASS, -1, -1, v, out);
    }
    default:
        if ((rc = next_char(x, &cp)) != PA_OK)
            return rc;
        break;
    }
    if (x->flags & KN_RE_ICASE)
        cp = kn__re_fold(cp);
    return new_node(x, N_CHAR, -1, -1, (int32_t)cp, out);
}

/* A decimal count at x->i (at most MAX_REPEAT); false when there is none. */
static bool parse_count(rx *x, int *n)
{
    int64_t start = x->i;
    long v = 0;
    for (; x->i < x->len && x->pat[x->i] >= '0' && x->pat[x->i] <= '9'; x->i++)
        if (v <= MAX_REPEAT)   /* more is refused: stop growing */
            v = v * 10 + (x->pat[x->i] - '0');
    *n = (int)v;
    return x->i > start;
}

/* {n}, {n,} or {n,m} at x->i; false (x->i unchanged) when it is not one. */
static int parse_braces(rx *x, int *min, int *max, bool *is)
{
    int64_t at = x->i;
    *is = false;
    x->i++;
    if (!parse_count(x, min)) {
        x->i = at;
        return PA_OK;
    }
    *max = *min;
    if (x->i < x->len && x->pat[x->i] == ',') {
        x->i++;
        *max = -1;
        if (x->i < x->len && x->pat[x->i] != '}' && !parse_count(x, max)) {
            x->i = at;
            return PA_OK;
        }
    }
    if (x->i >= x->len || x->pat[x->i] != '}') {
        x->i = at;
        return PA_OK;
    }
    x->i++;
    *is = true;
    if (*min > MAX_REPEAT || *max > MAX_REPEAT)
        return fail(x, at, "a repetition count above %d", MAX_REPEAT);
    if (*max >= 0 && *max < *min)
        return fail(x, at, "invalid repetition count (its maximum is below its minimum)");
    return PA_OK;
}

/* An atom and its quantifier, if any. */
static int parse_rep(rx *x, int *out)
{
    int a, rc;
    if ((rc = parse_atom(x, &a)) != PA_OK)
        return rc;
    if (x->i >= x->len)
        return *out = a, PA_OK;
    int64_t at = x->i;
    char ch = x->pat[x->i];
    int min = 0, max = -1;
    if (ch == '*' || ch == '+' || ch == '?') {
        x->i++;
        min = ch == '+', max = ch == '?' ? 1 : -1;
    } else {
        bool is = false;
        if (ch != '{' || (rc = parse_braces(x, &min, &max, &is)) != PA_OK || !is) {
            if (ch == '{' && rc == PA_OK)
                return fail(x, at, "{ is not a valid repetition (write \\{ for the character)");
            *out = a;
            return rc;
        }
    }
    bool greedy = !(x->i < x->len && x->pat[x->i] == '?');
    x->i += !greedy;
    if (x->i < x->len && x->pat[x->i] && strchr("*+?{", x->pat[x->i]))
        return fail(x, x->i, "%c follows another quantifier", x->pat[x->i]);
    if ((rc = new_node(x, N_REP, a, -1, 0, out)) != PA_OK)
        return rc;
    node *n = &x->nodes[*out];
    n->min = (int16_t)min, n->max = (int16_t)max, n->greedy = greedy;
    return PA_OK;
}

/* A sequence, up to '|', ')' or the end. */
static int parse_seq(rx *x, int *out)
{
    int rc, l = -1;
    while (x->i < x->len && x->pat[x->i] != '|' && x->pat[x->i] != ')') {
        int a = -1;
        if ((rc = parse_rep(x, &a)) != PA_OK)
            return rc;
        if (l >= 0 && (rc = new_node(x, N_CAT, l, a, 0, &a)) != PA_OK)
            return rc;
        l = a;
    }
    return l >= 0 ? (*out = l, PA_OK) : new_node(x, N_EMPTY, -1, -1, 0, out);
}

static int parse_alt(rx *x, int *out)
{
    int rc, l, r;
    if ((rc = parse_seq(x, &l)) != PA_OK)
        return rc;
    while (x->i < x->len && x->pat[x->i] == '|') {
        x->i++;
        if ((rc = parse_seq(x, &r)) != PA_OK || (rc = new_node(x, N_ALT, l, r, 0, &l)) != PA_OK)
            return rc;
    }
    *out = l;
    return PA_OK;
}

/* ------------------------------------------------------ code generation */

static int emit(rx *x, int op, uint32_t arg, int *at)
{
    if (x->n_insns == KN_RE_MAX_INSNS)
        return too_complex(x, "more instructions than the limit");
    uint8_t *in = &x->insns[4 * x->n_insns];
    in[0] = (uint8_t)op, in[1] = (uint8_t)arg, in[2] = (uint8_t)(arg >> 8), in[3] = (uint8_t)(arg >> 16);
    if (at)
        *at = x->n_insns;
    x->n_insns++;
    return PA_OK;
}

/* Points SPLIT at s: first to prefer, then to the other. */
static void set_split(rx *x, int s, int prefer, int other)
{
    x->insns[4 * s + 1] = (uint8_t)prefer;
    x->insns[4 * s + 2] = (uint8_t)other;
}

static int gen(rx *x, int k);

/* x{min,max}: min copies, then a loop (max unbounded) or max - min nested
 * optional copies, each SPLIT preferring to go on (greedy) or to stop. */
static int gen_rep(rx *x, const node *n)
{
    int rc, s = 0;
    int copies = n->max < 0 && n->min > 0 ? n->min - 1 : n->min;
    for (int k = 0; k < copies; k++)
        if ((rc = gen(x, n->l)) != PA_OK)
            return rc;
    if (n->max < 0 && n->min > 0) {   /* L: x; SPLIT L, out */
        int body = x->n_insns;
        if ((rc = gen(x, n->l)) != PA_OK || (rc = emit(x, KN_RE_SPLIT, 0, &s)) != PA_OK)
            return rc;
        set_split(x, s, n->greedy ? body : s + 1, n->greedy ? s + 1 : body);
        return PA_OK;
    }
    if (n->max < 0) {   /* L: SPLIT body, out; body: x; JMP L */
        if ((rc = emit(x, KN_RE_SPLIT, 0, &s)) != PA_OK || (rc = gen(x, n->l)) != PA_OK ||
            (rc = emit(x, KN_RE_JMP, (uint32_t)s, NULL)) != PA_OK)
            return rc;
        set_split(x, s, n->greedy ? s + 1 : x->n_insns, n->greedy ? x->n_insns : s + 1);
        return PA_OK;
    }
    int splits[KN_RE_MAX_INSNS], n_splits = 0;
    for (int k = n->min; k < n->max; k++) {
        if ((rc = emit(x, KN_RE_SPLIT, 0, &s)) != PA_OK || (rc = gen(x, n->l)) != PA_OK)
            return rc;
        splits[n_splits++] = s;
    }
    for (int k = 0; k < n_splits; k++)
        set_split(x, splits[k], n->greedy ? splits[k] + 1 : x->n_insns, n->greedy ? x->n_insns : splits[k] + 1);
    return PA_OK;
}

static int gen(rx *x, int k)
{
    const node *n = &x->nodes[k];
    int rc, s = 0, j = 0;
    switch ((nkind)n->kind) {
    case N_EMPTY: return PA_OK;
    case N_CHAR: return emit(x, KN_RE_CHAR, (uint32_t)n->v, NULL);
    case N_ANY: return emit(x, KN_RE_ANY, 0, NULL);
    case N_CLASS: return emit(x, KN_RE_CLASS, (uint32_t)n->v, NULL);   /* offset fixed up in finish */
    case N_BOL: return emit(x, KN_RE_BOL, 0, NULL);
    case N_EOL: return emit(x, KN_RE_EOL, 0, NULL);
    case N_CAT: return (rc = gen(x, n->l)) != PA_OK ? rc : gen(x, n->r);
    case N_ALT:   /* SPLIT l, r; l; JMP out; r */
        if ((rc = emit(x, KN_RE_SPLIT, 0, &s)) != PA_OK || (rc = gen(x, n->l)) != PA_OK ||
            (rc = emit(x, KN_RE_JMP, 0, &j)) != PA_OK)
            return rc;
        set_split(x, s, s + 1, x->n_insns);
        if ((rc = gen(x, n->r)) != PA_OK)
            return rc;
        x->insns[4 * j + 1] = (uint8_t)x->n_insns;
        return PA_OK;
    case N_REP: return gen_rep(x, n);
    case N_GROUP:
        if ((rc = emit(x, KN_RE_SAVE, (uint32_t)(2 * n->v), NULL)) != PA_OK || (rc = gen(x, n->l)) != PA_OK)
            return rc;
        return emit(x, KN_RE_SAVE, (uint32_t)(2 * n->v + 1), NULL);
    }
    return PA_OK;
}

/* Header, instructions, then the classes' ranges, with each CLASS pointed
 * at its own. */
static int finish(rx *x, uint8_t *out, int64_t *out_len)
{
    int64_t base = KN_RE_HDR + 4 * x->n_insns;
    if (base + x->n_cls > KN_RE_MAX_BYTES)
        return too_complex(x, "bracket expressions too large");
    out[0] = KN_RE_MAGIC;
    out[1] = (uint8_t)x->flags;
    out[2] = (uint8_t)x->n_insns;
    out[3] = (uint8_t)x->n_groups;
    for (int k = 0; k < x->n_insns; k++) {
        uint8_t *in = &x->insns[4 * k];
        if (in[0] == KN_RE_CLASS) {
            int64_t off = base + (in[1] | in[2] << 8);
            in[1] = (uint8_t)off, in[2] = (uint8_t)(off >> 8);
        }
    }
    memcpy(out + KN_RE_HDR, x->insns, (size_t)(4 * x->n_insns));
    memcpy(out + base, x->cls, (size_t)x->n_cls);
    *out_len = base + x->n_cls;
    return PA_OK;
}

int kn_regex_compile(const char *pat, int64_t len, int flags, uint8_t *out, int64_t *out_len, pa_err *err)
{
    rx *x = pa_calloc(1, sizeof *x);
    if (!x)
        return pa_error(err, PA_ENOMEM, "out of memory compiling a regular expression");
    x->pat = pat, x->len = len, x->flags = flags & (KN_RE_ICASE | KN_RE_GLOBAL), x->err = err;
    int root, rc = parse_alt(x, &root);
    if (rc == PA_OK && x->i < x->len)   /* parse_alt stops only at the end or an unmatched ')' */
        rc = fail(x, x->i, "unmatched )");
    if (rc == PA_OK && (rc = emit(x, KN_RE_SAVE, 0, NULL)) == PA_OK && (rc = gen(x, root)) == PA_OK &&
        (rc = emit(x, KN_RE_SAVE, 1, NULL)) == PA_OK && (rc = emit(x, KN_RE_MATCH, 0, NULL)) == PA_OK)
        rc = finish(x, out, out_len);
    pa_free(x);
    return rc;
}

/* ------------------------------------------------------------ checking */

bool kn__re_check(const uint8_t *prog, int64_t len)
{
    if (len < KN_RE_HDR || prog[0] != KN_RE_MAGIC || (prog[1] & ~(KN_RE_ICASE | KN_RE_GLOBAL)) || prog[2] == 0 ||
        prog[2] > KN_RE_MAX_INSNS || len < KN_RE_HDR + 4 * prog[2])
        return false;
    const int n = prog[2], slots = 2 * (prog[3] + 1);
    for (int pc = 0; pc < n; pc++) {
        const uint8_t *in = kn__re_insn(prog, pc);
        bool ok;
        switch (in[0]) {
        case KN_RE_CHAR: ok = kn__re_u24(in + 1) <= 0x10FFFF && pc + 1 < n; break;
        case KN_RE_ANY:
        case KN_RE_BOL:
        case KN_RE_EOL: ok = pc + 1 < n; break;
        case KN_RE_CLASS: {
            int64_t off = in[1] | in[2] << 8;
            ok = pc + 1 < n && off >= KN_RE_HDR + 4 * n && off < len && off + 1 + 6 * prog[off] <= len;
            break;
        }
        case KN_RE_SPLIT: ok = in[1] < n && in[2] < n; break;
        case KN_RE_JMP: ok = in[1] < n; break;
        case KN_RE_SAVE: ok = in[1] < slots && pc + 1 < n; break;
        case KN_RE_MATCH: ok = true; break;
        default: ok = false; break;
        }
        if (!ok)
            return false;
    }
    return true;
}

/*
 * sql_int.h - internals of the SQL front end.
 *
 * Design notes
 * - One statement is compiled in one sq_ctx: an arena for everything the
 *   binder and optimiser make, and the ex_plan the statement will run as.
 *   Expressions are typed as they are bound by building their twin with the
 *   engine's own ex_expr_* builders in that plan (sq_expr.tx): the engine's
 *   type rules and constant folding are the only ones, and a constant's tx
 *   is reused as is when the plan is lowered.
 * - Column ids: every column a logical operator outputs has an id unique in
 *   the statement (ctx->cols). Expressions refer to ids, never to
 *   positions, so predicates and joins can move without renumbering;
 *   lowering maps ids to the positions of each physical operator's output.
 * - Subqueries are bound as placeholders (SQ_E_SUBQ) naming the column id
 *   their value will have. Planning a WHERE/HAVING conjunct that holds one
 *   joins the subquery's plan in (semi, anti, mark or left join, keyed on
 *   its correlation equalities, grouped on them when it aggregates) and
 *   the placeholder then reads that column.
 * - Logical nodes list their output ids; lowering (lower.c) asks each node
 *   only for the ids its parent needs (projection pushdown) and turns
 *   `column op constant` conjuncts on scans into pq_pred (row-group and
 *   page pruning in the storage engine).
 */
#ifndef PISTA_SQL_INT_H
#define PISTA_SQL_INT_H

#include "sql/sql.h"

#include <pg_query.h>
#include <signal.h>
#include <stdatomic.h>
#include <pg_query/pg_query.pb-c.h>

typedef PgQuery__Node pgn;

/* ----------------------------------------------------------------- limits
 * Every walk over a parse tree, a bound expression or a plan recurses, so
 * depths are capped where a statement comes in (parse.c) and where the
 * binder builds trees (expr.c, bind_*.c), with errors that say so; the caps
 * leave the walks well inside an 8 MiB stack, sanitizers included. */
#define SQ_MAX_EXPR_DEPTH 1000       /* levels of one expression ("expression too deep") */
#define SQ_MAX_SUBQUERY_DEPTH 64     /* SELECTs nested in a SELECT ("subqueries nested too deep") */
#define SQ_MAX_PARSE_DEPTH 3000      /* protobuf messages nested in the parse tree */

/* Parse text (one or more statements) into the unpacked tree: on a thread
 * with a stack sized for the text, refusing trees deeper than the limits
 * above before they are unpacked (parse.c). */
int sq_parse(const char *text, PgQuery__ParseResult **tree, int *err_offset, pa_err *err);

/* ------------------------------------------------------------------ arena */
typedef struct sq_arena_block sq_arena_block;
typedef struct sq_arena {
    sq_arena_block *head;
} sq_arena;
void *sq_alloc(sq_arena *a, size_t n);   /* zeroed; NULL when out of memory */
char *sq_strdup(sq_arena *a, const char *s);
char *sq_strndup(sq_arena *a, const char *s, size_t n);
char *sq_printf(sq_arena *a, const char *fmt, ...) PA_PRINTF(2, 3);
void sq_arena_free(sq_arena *a);

/* ---------------------------------------------------------------- catalog */
typedef struct sq_colstat {
    bool seen;                /* some row group was folded in */
    bool has_range;
    double lo, hi;            /* numbers and dates (days) */
    double ndv;               /* estimate; 0 = unknown */
    double dict_ndv;          /* strings: estimate from dictionary page sizes (max over
                                 row groups); 0 = none seen, -1 = some chunk has none */
} sq_colstat;

typedef struct sq_table {
    char *name;
    bool is_view;
    char *source;             /* path/glob, or the view's SELECT text */
    char **paths;             /* the files (tables) */
    int n_paths;
    int n_cols;
    char **col_names;
    pa_type *col_types;
    bool *col_nullable;       /* OPTIONAL in the first file (a NOT NULL column is REQUIRED) */
    char **col_unsupported;   /* why a column cannot be read (NULL: it can); NULL for views */
    sq_colstat *stats;
    int64_t rows;
    int hive;                 /* PQ_HIVE_*: partition columns come last */
    bool union_by_name;
    bool *col_mixed;          /* the column's type differs between files (widened) */
} sq_table;

/* How read_parquet(...) or a folder reads its files. */
typedef struct sq_layout {
    int hive;                 /* PQ_HIVE_AUTO, PQ_HIVE_ON, PQ_HIVE_OFF */
    bool union_by_name;
} sq_layout;

struct sql_session {
    sql_options opt;
    sq_table **tables;        /* sorted by name */
    int n_tables;
    sq_table **adhoc;         /* read_parquet() tables, cached by path */
    int n_adhoc;
    char *data_dir;           /* CREATE TABLE writes here; NULL: none */
    char **warnings;          /* tables of a folder that were skipped, and why */
    int n_warnings;
    int err_offset;
    volatile sig_atomic_t cancel;
    ex_progress progress;
    bool running;
};

/* Load a table's schema and statistics from its files (catalog.c). */
int sq_table_load(const char *name, const char *path, sq_table **out, pa_err *err);
/* The same over several paths (files, folders, globs), in order; source is
 * what the table remembers as its origin. */
int sq_table_load_paths(const char *name, const char *const *paths, int n, const char *source, sq_table **out,
                        pa_err *err);
/* The same with a layout (NULL: hive partitions detected, no union by name). */
int sq_table_load_layout(const char *name, const char *const *paths, int n, const char *source,
                         const sq_layout *lay, sq_table **out, pa_err *err);
void sq_table_free(sq_table *t);
sq_table *sq_catalog_find(sql_session *s, const char *name);
int sq_catalog_put(sql_session *s, sq_table *t, pa_err *err);
/* The table of read_parquet('path') or read_parquet(ARRAY['p1', 'p2']),
 * loaded once per session. */
int sq_catalog_adhoc(sql_session *s, const char *const *paths, int n, const sq_layout *lay, sq_table **out,
                     pa_err *err);

/* ------------------------------------------------------------ expressions */
typedef enum sq_ekind {
    SQ_E_COL, SQ_E_CONST, SQ_E_ARITH, SQ_E_NEG, SQ_E_CMP, SQ_E_AND, SQ_E_OR, SQ_E_NOT, SQ_E_ISNULL,
    SQ_E_CASE, SQ_E_IN, SQ_E_LIKE, SQ_E_SUBSTR, SQ_E_EXTRACT, SQ_E_DATE_ADD, SQ_E_CAST,
    SQ_E_MATH,                /* sub ex_math; n digits and flag has-digits (ROUND) */
    SQ_E_DATE_TRUNC,          /* sub ex_field */
    SQ_E_MAKE_DATE,
    SQ_E_AGE,                 /* age(args[0], args[1]) */
    SQ_E_STRFN,               /* sub ex_strfn */
    SQ_E_TEXT,                /* sub ex_textfn */
    SQ_E_CONCAT,              /* sub 0: concat(args); 1: concat_ws(sep, args) */
    SQ_E_REGEX,               /* sub 0: regexp_like(s, pattern[, flags]); 1: its NOT (!~);
                                 2: regexp_replace(s, pattern, replacement[, flags]) */
    SQ_E_AGG,                 /* during binding only */
    SQ_E_GROUPING,            /* GROUPING(args): during binding only */
    SQ_E_SUBQ,                /* subquery placeholder: reads column `col` once planned */
    SQ_E_WINDOW,              /* a window function (win): during binding only */
    SQ_E_OSAGG,               /* ordered-set aggregate of args[0]: sub 0 percentile_cont, 1 percentile_disc,
                                 2 mode; flag DESC; n the fraction's double bits; during binding only */
} sq_ekind;

/* A window function call: args of its sq_expr are the argument (n_arg 0
 * or 1), the lag/lead default (n_dflt 0 or 1), the PARTITION BY
 * expressions, then the ORDER BY ones. */
typedef struct sq_win {
    ex_window_fn fn;          /* column unused until planned */
    int n_arg, n_dflt, n_part, n_order;
    ex_sort_key *order;       /* n_order directions (column unused) */
} sq_win;

typedef struct sq_subq sq_subq;

typedef struct sq_expr {
    sq_ekind kind;
    int sub;                  /* ex_arith, ex_cmp, ex_field, ex_unit, negate, ex_agg_kind */
    bool flag;                /* AGG: DISTINCT; CASE: has an ELSE; CONST: untyped NULL literal */
    pa_type type;
    int loc;                  /* byte offset in the statement, -1 unknown */
    int depth;                /* levels of the tree under it, itself included (<= SQ_MAX_EXPR_DEPTH) */
    int n_args;
    struct sq_expr **args;    /* CASE: when0, then0, ..., [else]: flag = has else */
    int col;                  /* COL, SUBQ: column id */
    int64_t n;                /* DATE_ADD amount */
    const char *text;         /* LIKE pattern */
    ex_expr *tx;              /* typed twin in ctx->plan */
    sq_subq *subq;            /* SUBQ */
    sq_win *win;              /* WINDOW */
    struct sq_expr *dx;       /* AGG with flag (DISTINCT): the value whose distinct values it reads when that is
                                 not its argument (x for the square of x in var(DISTINCT x)); else NULL */
} sq_expr;

/* --------------------------------------------------------------- columns */
typedef struct sq_col {
    const char *name;
    pa_type type;
    const char *unsupported;  /* base columns the scan cannot read: why (an error where referenced) */
    sq_colstat stat;          /* base columns: from the footers */
} sq_col;

/* ------------------------------------------------------------ plan nodes */
typedef enum sq_lkind {
    SQ_L_SCAN, SQ_L_FILTER, SQ_L_PROJECT, SQ_L_JOIN, SQ_L_AGG, SQ_L_DISTINCT, SQ_L_SORT, SQ_L_LIMIT,
    SQ_L_UNION, SQ_L_VALUES,
    SQ_L_ROWS,                /* a materialized WITH query's result (rows) */
    SQ_L_SERIES,              /* generate_series / range: n_rows values from series_start by series_step */
    SQ_L_WINDOW,              /* window functions: out = the input's columns, then one per function */
    SQ_L_EXCHANGE,            /* rows moved between ranks while produced (distribute.c): out = in[0]'s
                                 first n_out columns, keyed by its columns xkeys */
} sq_lkind;

typedef enum sq_jkind {
    SQ_J_INNER, SQ_J_LEFT, SQ_J_SEMI, SQ_J_ANTI, SQ_J_MARK,
    SQ_J_FULL,                /* lowered as LEFT join UNION ALL padded ANTI join (lower.c) */
} sq_jkind;

typedef struct sq_aggdef {
    ex_agg_kind kind;
    int arg;                  /* input column id (-1 for COUNT(*)) */
    int out;                  /* output column id */
} sq_aggdef;

typedef struct sq_node {
    sq_lkind kind;
    int n_out;
    int *out;                 /* output column ids, in order */
    struct sq_node *in[2];
    double est;               /* estimated rows */
    /* SCAN */
    sq_table *table;
    int *src;                 /* per output: the table's column index */
    sq_expr **conj;           /* SCAN and FILTER: conjuncts (ANDed) */
    int n_conj;
    /* PROJECT: out[i] = exprs[i]; VALUES: n_rows rows of n_out constants
     * (none: the one row without columns of SELECT without FROM) */
    sq_expr **exprs;
    int64_t n_rows;
    /* SERIES (n_rows values) */
    int64_t series_start, series_step;
    /* JOIN: in[0] is the left/outer side */
    sq_jkind jkind;
    bool single;              /* a scalar subquery's join: one build row per key */
    int mark;                 /* MARK: the output id of the mark column */
    /* AGG: out = groups then aggs */
    int n_groups;
    int *groups;              /* input ids */
    int n_aggs;
    sq_aggdef *aggs;
    int n_sets;               /* grouping sets (0: plain GROUP BY): masks over groups */
    uint64_t *sets;
    /* SORT */
    ex_sort_key *keys;        /* column = column id */
    int n_keys;
    /* LIMIT (also SORT + limit = top-N) */
    int64_t limit, offset;    /* limit -1 = none */
    /* UNION: inputs and, per input, the ids in output order */
    struct sq_node **ins;
    int **in_cols;
    int n_ins;
    /* ROWS */
    const ex_result *rows;
    const char *label;        /* EXPLAIN's name for it (NULL: ROWS' own) */
    /* WINDOW: PARTITION BY column ids, ORDER BY in keys/n_keys (column ids),
     * the functions (argument column = a column id) */
    int *wpart;
    int n_wpart;
    ex_window_fn *wfns;
    int n_wfns;
    /* SCAN: read only rank share_part's share of share_parts (distribute.c) */
    int share_part, share_parts;
    /* EXCHANGE: ex_xmode, and the key columns (positions in in[0]'s output) */
    int xmode;
    int *xkeys;
    int n_xkeys;
} sq_node;

/* ------------------------------------------------------------- subqueries */
typedef enum sq_skind {
    SQ_S_SCALAR, SQ_S_EXISTS, SQ_S_IN,
    SQ_S_LATERAL,             /* a LATERAL derived table (bind_from.c) */
} sq_skind;

struct sq_subq {
    sq_skind kind;
    sq_expr *test;            /* IN: the left operand */
    sq_node *plan;            /* the subquery block, planned */
    int value_col;            /* SCALAR / IN: its (first) output column */
    sq_expr **corr;           /* correlated conjuncts (outer and inner columns) */
    int n_corr;
    bool grouped;             /* scalar aggregate: grouped on the inner correlation sides */
    bool having;              /* grouped, and the block has a HAVING */
    /* Grouped: an outer row no inner row matches gets no row from the LEFT
     * join, but the aggregate over no rows still has a value (COUNT 0: the
     * COUNT bug). empty: the subquery's value over no rows (a constant;
     * NULL when it is NULL); match_col: an output that is not NULL in every
     * row the join matches (an inner correlation key). */
    sq_expr *empty;
    int match_col;
    int loc;
    /* The domain (dependent join, Neumann & Kemper 2015), where correlation
     * the join above cannot take (a nested subquery reading this one's outer
     * query, an outer column outside WHERE, GROUP BY, LIMIT) or a LATERAL
     * derived table: D, the distinct values of the outer columns the
     * subquery reads, is a relation of its FROM (dnode) and those columns
     * resolve to D's (dom_inner). The subquery is then correlated only
     * through `D's column IS NOT DISTINCT FROM the outer one` (the first
     * n_dcorr of corr), which the one-level joins take; D's input is set
     * once the outer rows are planned (sq_fill_domain). */
    bool domain;
    int n_dom;
    int *dom_outer, *dom_inner;
    bool *dom_used;
    struct sq_subq *dom_up;   /* the outer level's own domain (its columns among dom_outer), or NULL */
    sq_node *dnode;
    int n_dcorr;
    /* LATERAL over an aggregate without GROUP BY: each visible column's
     * value over no rows (NULL: NULL), over D's columns. */
    sq_expr **empties;
    int n_vis;
};

/* ---------------------------------------------------------------- scopes */
typedef struct sq_binding {
    const char *qual;         /* table name or alias */
    const char *name;
    int col;
    bool hidden;              /* USING duplicates: not in `*` (but in `qual.*`) */
    int merged;               /* USING under RIGHT/FULL: the column an unqualified
                                 name (and `*`) reads, e.g. COALESCE(a.k, b.k);
                                 -1: col */
} sq_binding;

typedef struct sq_scope {
    sq_binding *b;
    int n, cap;
    struct sq_scope *outer;   /* enclosing query's FROM scope (correlation) */
    bool used_outer;          /* set when a name resolved in an outer scope */
    sq_subq *domain;          /* a domain scope: the outer level's names, reading D's columns
                                 (the subquery's own, so no outer reference for it) */
} sq_scope;

typedef struct sq_cte {
    const char *name;
    PgQuery__CommonTableExpr *def;
    struct sq_cte *next;
    /* Evaluated once, before the statement, when it is read several times
     * and aggregates (so its result is small): see sq_cte_materialize. */
    bool materialize;
    ex_result *rows;          /* once run; freed with the statement (ctx->mats) */
    const char **names;
    /* WITH RECURSIVE whose UNION's second term reads the query itself:
     * evaluated by iterating (cte.c); while its second term is bound,
     * references read the last iteration's rows (work). */
    bool recursive;
    const ex_result *work;
} sq_cte;

/* --------------------------------------------------------------- context */
typedef struct sq_ctx {
    sql_session *s;
    const char *text;
    sq_arena A;
    ex_plan *plan;
    pa_err *err;
    int err_loc;              /* first error's offset */
    sq_col *cols;
    int n_cols, cap_cols;
    sq_cte *ctes;
    int depth;                /* binder recursion: expressions, SELECTs, joins */
    int expr_depth;           /* of which sq_bind_expr */
    int select_depth;         /* SELECT blocks nested (set operations not counted) */
    bool no_run;              /* EXPLAIN without ANALYZE: run nothing while planning */
    bool dist_round;          /* several ranks: this statement's round was made (distribute.c) */
    bool passive;             /* several ranks: this rank's part is done; rank 0 has the result */
    int64_t dist_read;        /* several ranks: bytes read by the parts run for exchanges */
    const char *dist_note;    /* EXPLAIN: how the statement was spread (arena) */
    PgQuery__Node **windows;  /* the SELECT block's WINDOW clause (named windows) */
    size_t n_windows;
    ex_result **mats;         /* materialized WITH results, freed after the statement */
    const char **mat_names;   /* their names (arena) */
    int n_mats, cap_mats;
    bool want_domain;         /* the error being returned is a correlation the domain method takes */
    const sq_scope *off_limits; /* binding a LATERAL under JOIN: the FROM items before the join,
                                 which it may not read (named in the error) */
    const void **dom_hint;    /* subqueries (SelectStmt) once bound with a domain: so again, at once */
    int n_dom_hint, cap_dom_hint;
} sq_ctx;

/* Several ranks (distribute.c): run the part of *root that one rank's share
 * of the biggest table can compute on every rank, gather it to rank 0, and
 * there put its rows in its place; the statement's one round. Elsewhere
 * *root is left and c->passive set. */
int sq_distribute(sq_ctx *c, sq_node **root);
/* The same for a WITH query evaluated once: every rank computes its part
 * and every rank gets the whole result (a broadcast at the top). */
int sq_distribute_whole(sq_ctx *c, sq_node **root);
/* The statement's round where sq_distribute made none: an error goes to
 * every rank; otherwise an empty gather. */
int sq_statement_round(sq_ctx *c, int rc);
/* The equality conjuncts of join n between its sides as key pairs, cast to
 * a common type (pk[i] over in[0] = bk[i] over in[1]); the others in resid
 * (NULL: only counted in *nres). The arrays hold n->n_conj entries. */
int sq_join_keys(sq_ctx *c, const sq_node *n, sq_expr **pk, sq_expr **bk, int *nk, sq_expr **resid, int *nres);
/* A result freed with the statement (c->mats); name NULL: not a WITH query. */
int sq_keep_result(sq_ctx *c, const char *name, ex_result *r);

/* Record an error at loc (byte offset) and return its code. */
int sq_fail(sq_ctx *c, int loc, int code, const char *fmt, ...) PA_PRINTF(4, 5);
/* The same for a correlation that binding the subquery again with a domain
 * (sq_subq.domain) can take: sets want_domain when it is the first error. */
int sq_fail_corr(sq_ctx *c, int loc, const char *fmt, ...) PA_PRINTF(3, 4);
int sq_new_col(sq_ctx *c, const char *name, pa_type t);

/* Expressions (expr.c): made typed; NULL on error (c->err set). */
sq_expr *sq_col_ref(sq_ctx *c, int col, int loc);
sq_expr *sq_make(sq_ctx *c, sq_ekind k, int sub, sq_expr **args, int n, int loc);
sq_expr *sq_const(sq_ctx *c, ex_expr *tx, int loc);
sq_expr *sq_like(sq_ctx *c, sq_expr *a, const char *pattern, bool negate, int loc);
sq_expr *sq_date_add(sq_ctx *c, sq_expr *a, int64_t n, ex_unit u, int loc);
sq_expr *sq_math(sq_ctx *c, ex_math fn, sq_expr *a, sq_expr *b, int digits, bool has_digits, int loc);
sq_expr *sq_cast(sq_ctx *c, sq_expr *a, pa_type t, int loc);
/* A copy of e with children replaced (same kind), retyped. */
sq_expr *sq_rebuild(sq_ctx *c, const sq_expr *e, sq_expr **args);
/* The engine expression of e with operands ax (COL/SUBQ/AGG: a column of
 * e's id; CONST: e->tx). */
ex_expr *sq_build_tx(sq_ctx *c, const sq_expr *e, ex_expr **ax);
bool sq_expr_equal(const sq_expr *a, const sq_expr *b);
/* Column ids e reads, added to the set (an array of n_cols flags). */
void sq_expr_cols(const sq_expr *e, uint8_t *set);
bool sq_expr_has(const sq_expr *e, sq_ekind k);
/* AND or OR (k) of v[0..n), as a balanced tree: thousands of terms stay
 * a few levels deep. NULL for n == 0. */
sq_expr *sq_bool_all(sq_ctx *c, sq_ekind k, sq_expr **v, int n, int loc);
/* Split an AND tree into conjuncts (appended to *v, *n, *cap). */
int sq_conjuncts(sq_ctx *c, sq_expr *e, sq_expr ***v, int *n, int *cap);
sq_expr *sq_and_all(sq_ctx *c, sq_expr **v, int n);
/* Split an OR tree into disjuncts (appended to *v, *n, *cap). */
int sq_disjuncts(sq_ctx *c, sq_expr *e, sq_expr ***v, int *n, int *cap);
/* Conjuncts of e, with (A AND B) OR (A AND C) factored into A and
 * (B OR C), so a join condition repeated in every branch becomes a key. */
int sq_factor_or(sq_ctx *c, sq_expr *e, sq_expr ***v, int *n, int *cap);
/* Common type of two types (the engine's CASE rule); false if none. */
bool sq_common_type(sq_ctx *c, pa_type a, pa_type b, pa_type *out);

/* Binding (bind_expr.c, bind_select.c). */
typedef struct sq_aggctx {
    bool allow;               /* aggregates may appear here */
    bool inside;              /* binding an aggregate's argument */
    const char *clause;       /* for the error: "WHERE", "GROUP BY"... */
    bool window;              /* window functions may appear here (select list, ORDER BY) */
    bool in_window;           /* binding a window function's arguments */
} sq_aggctx;
typedef struct sq_lateral {  /* a LATERAL joined after the other FROM items */
    sq_subq *q;
    sq_node *rel;
    sq_expr **cond;           /* its join conditions */
    int n_cond;
} sq_lateral;
typedef struct sq_from {
    sq_node **rels;
    int n_rels, cap_rels;
    sq_expr **conj;
    int n_conj, cap_conj;
    /* LEFT JOIN LATERAL: the left side (the lateral's rows come from it
     * alone), its names sc->b[lat_vis0, lat_vis1), and the correlation
     * conditions, which the caller makes join conditions */
    sq_node *lat_left;
    int lat_vis0, lat_vis1;
    sq_expr **lat_conj;
    int n_lat_conj;
    /* A SELECT block's own FROM list (not a side of an outer join): a
     * LATERAL reading several of its items is joined after the others
     * (later), its D from their join */
    bool top;
    sq_lateral *later;
    int n_later, cap_later;
} sq_from;
int sq_bind_from(sq_ctx *c, pgn *item, sq_scope *sc, sq_from *f);
sq_expr *sq_bind_expr(sq_ctx *c, pgn *n, sq_scope *sc, sq_aggctx *ag);
/* The engine type of a type name (CAST, CREATE TABLE). */
int sq_type_of(sq_ctx *c, PgQuery__TypeName *tn, pa_type *t);
int sq_bind_select(sq_ctx *c, pgn *n, sq_scope *outer, sq_node **out, const char ***names,
                   sq_subq *corr_for);
int sq_scope_add(sq_ctx *c, sq_scope *sc, const char *qual, const char *name, int col);
/* A window function (arg NULL: none) over the default frame, PARTITION BY
 * part, ORDER BY order in the directions of dirs (their columns unused):
 * DISTINCT ON, INTERSECT / EXCEPT ALL, ordered-set aggregates. */
sq_expr *sq_window_call(sq_ctx *c, ex_window_kind kind, sq_expr *arg, sq_expr **part, int np, sq_expr **order,
                        const ex_sort_key *dirs, int no, int loc);
/* An aggregate node of kind k over arg (NULL for COUNT(*)). */
sq_expr *sq_agg(sq_ctx *c, ex_agg_kind k, sq_expr *arg, int loc);
const char *sq_node_name(pgn *n);

/* suggest.c: the closest of the names offered to an unknown one (NULL when
 * none is close enough), for "did you mean" in error messages. */
typedef struct sq_suggest {
    const char *name, *best;
    int best_d;
} sq_suggest;
void sq_suggest_init(sq_suggest *s, const char *name);
void sq_suggest_offer(sq_suggest *s, const char *cand);
bool sq_is_aggregate_name(const char *fn);

/* WITH queries (cte.c): decide whether q is materialized (read >= 2
 * times in the statement text, aggregating or limiting); and
 * the relation for one reference to q: its plan inlined, or a ROWS node
 * over its result, run on first use. */
void sq_cte_decide(sq_ctx *c, sq_cte *q);
int sq_cte_ref(sq_ctx *c, sq_cte *q, sq_node **out, const char ***names);
/* A WITH RECURSIVE query that reads itself (in the second term of its
 * UNION): marks q recursive (cte.c). */
void sq_cte_recursive(sq_ctx *c, sq_cte *q);
/* l's distinct rows that are (intersect) or are not in r, NULLs equal
 * (bind_select.c). */
sq_node *sq_set_difference(sq_ctx *c, sq_node *l, sq_node *r, bool intersect);
/* Run a lowered root in the statement's session (session.c); sq_run_ex
 * may keep the result in device memory (for ROWS only: a WITH result). */
int sq_run(sq_ctx *c, ex_plan *plan, ex_op *root, ex_result **out);
int sq_run_ex(sq_ctx *c, ex_plan *plan, ex_op *root, bool keep_on_device, ex_result **out);

/* Plans (plan.c). */
sq_node *sq_node_new(sq_ctx *c, sq_lkind k, int n_out);
sq_node *sq_filter(sq_ctx *c, sq_node *in, sq_expr **conj, int n);
/* Apply WHERE/HAVING conjuncts (with subqueries) on top of in. */
int sq_apply_conjuncts(sq_ctx *c, sq_node *in, sq_expr **conj, int n, sq_node **out);
/* Uncorrelated `x IN (subquery)` WHERE conjuncts whose x comes from one
 * FROM relation are SEMI-joined into that relation, before join ordering
 * (a selective IN filters its table before the big joins, TPC-H Q18). The
 * others stay in conj (*n updated). */
int sq_push_subqueries(sq_ctx *c, sq_node **rels, int n_rels, sq_expr **conj, int *n);
/* Give q's domain its rows: the distinct values of the outer columns it
 * reads, from srcs (each column from the first source holding it; several
 * sources cross-joined). */
int sq_fill_domain(sq_ctx *c, sq_subq *q, sq_node **srcs, int n_srcs);
/* e with column ids from[i] read as to[i]. */
sq_expr *sq_subst_cols(sq_ctx *c, sq_expr *e, const int *from, const int *to, int n);
/* a IS NOT DISTINCT FROM b as two equalities a hash join takes as keys:
 * CASE WHEN a IS NULL THEN stand-in ELSE a END = (the same of b), and
 * (a IS NULL) = (b IS NULL) (bind_select.c). */
int sq_not_distinct(sq_ctx *c, sq_expr *a, sq_expr *b, sq_expr **out2);
/* Join every subquery of e into *node; returns e reading their columns. */
sq_expr *sq_join_subqueries(sq_ctx *c, sq_expr *e, sq_node **node);
/* Join the relations with the conjuncts: pushdown, ordering (optimize.c). */
int sq_join_graph(sq_ctx *c, sq_node **rels, int n_rels, sq_expr **conj, int n_conj, sq_node **out);
/* The same, also joining the WHERE subqueries in subq that sq_push_subqueries
 * can place on one relation (after its filters); the rest stay (*n_subq). */
int sq_join_graph_sub(sq_ctx *c, sq_node **rels, int n_rels, sq_expr **conj, int n_conj, sq_expr **subq,
                      int *n_subq, sq_node **out);
double sq_estimate(sq_ctx *c, sq_node *n);
double sq_selectivity(sq_ctx *c, const sq_expr *e, double rows);
bool sq_node_has_col(const sq_node *n, int col);
/* n or a node under it is a LIMIT (or top-N): its rows may differ from one
 * evaluation to the next (parallel order; with ORDER BY only among ties).
 * unordered_only: count only a LIMIT without ORDER BY. */
bool sq_node_has_limit(const sq_node *n, bool unordered_only);
bool sq_node_covers(sq_ctx *c, const sq_node *n, const sq_expr *e);

/* Lowering (lower.c): the physical operator for n with its output ids in
 * *ids (n_ids); `need` is the set of ids the parent reads. */
int sq_lower(sq_ctx *c, sq_node *n, const uint8_t *need, ex_op **op, int **ids, int *n_ids);
int sq_lower_root(sq_ctx *c, sq_node *n, const char *const *names, ex_op **out);
/* Physical expression of e over an operator whose output ids are ids. */
ex_expr *sq_lower_expr(sq_ctx *c, const sq_expr *e, const int *ids, int n_ids);

/* Plan text for EXPLAIN (explain.c). */
int sq_explain(sq_ctx *c, ex_op *root, const ex_result *analyzed, char **text);

#endif /* PISTA_SQL_INT_H */

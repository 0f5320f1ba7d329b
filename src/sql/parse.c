/*
 * parse.c - SQL text to the unpacked libpg_query parse tree, without
 * overflowing the stack.
 *
 * libpg_query converts its parse tree to protobuf recursively, and
 * protobuf-c unpacks it recursively, neither with a depth check. Left-deep
 * chains (`1+1+...+1`, `a || b || ...`) do not grow the grammar's stack, so
 * a statement of n bytes can make a tree about n/2 levels deep: 10,000
 * terms overflowed an 8 MiB stack in the unpacking, 30,000 in libpg_query.
 * So the parse runs on a thread of its own whose stack grows with the text
 * (reserved, only touched by deep trees), the depth of the protobuf is
 * measured without recursion (from the message descriptors), and the tree
 * is unpacked only when it is within the limits that the binder, the
 * planner and the engine's recursive walks are sized for (sql_int.h).
 */
#include "sql/sql_int.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

/* Stack bytes per byte of text: libpg_query's recursion takes under 300
 * bytes a level and a level takes at least 2 bytes of text. */
#define PARSE_STACK_BASE (8u << 20)
#define PARSE_STACK_PER_BYTE 192u
#define PARSE_STACK_MAX ((size_t)1 << 30)

typedef struct parse_job {
    const char *text;
    PgQuery__ParseResult *tree;
    int code;                 /* PA_OK, or the error's code */
    int offset;               /* the error's byte offset, -1 none */
    char msg[400];
} parse_job;

static const ProtobufCFieldDescriptor *field_of(const ProtobufCMessageDescriptor *d, uint32_t id)
{
    unsigned lo = 0, hi = d->n_fields;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (d->fields[mid].id == id)
            return &d->fields[mid];
        if (d->fields[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static bool varint(const uint8_t *p, size_t end, size_t *pos, uint64_t *v)
{
    uint64_t r = 0;
    for (int shift = 0; shift < 64 && *pos < end; shift += 7) {
        uint8_t b = p[(*pos)++];
        r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            return true;
        }
    }
    return false;
}

/* Walk the encoded ParseResult with an explicit stack. Returns PA_OK, or
 * an error in job when the tree passes a limit. Bytes it cannot follow
 * are left to protobuf-c's unpacking to refuse. */
static void check_depth(parse_job *job, const uint8_t *p, size_t len)
{
    enum { MAX = SQ_MAX_PARSE_DEPTH };
    typedef struct frame {
        size_t end;
        const ProtobufCMessageDescriptor *d;
        int selects, setops, joins;
    } frame;
    frame *st = pa_malloc((MAX + 2) * sizeof *st);
    if (!st) {
        job->code = PA_ENOMEM;
        snprintf(job->msg, sizeof job->msg, "parsing: out of memory");
        return;
    }
    int top = 0;
    st[0] = (frame){len, &pg_query__parse_result__descriptor, 0, 0, 0};
    size_t pos = 0;
    while (top >= 0) {
        frame *f = &st[top];
        if (pos >= f->end) {
            top--;
            continue;
        }
        uint64_t tag, n;
        if (!varint(p, f->end, &pos, &tag))
            break;
        switch (tag & 7) {
        case 0:
            if (!varint(p, f->end, &pos, &n))
                goto out;
            continue;
        case 1: pos += 8; continue;
        case 5: pos += 4; continue;
        case 2: break;
        default: goto out;
        }
        if (!varint(p, f->end, &pos, &n) || n > f->end - pos)
            goto out;
        const ProtobufCFieldDescriptor *fd = field_of(f->d, (uint32_t)(tag >> 3));
        if (!fd || fd->type != PROTOBUF_C_TYPE_MESSAGE || !fd->descriptor) {
            pos += n;
            continue;
        }
        const ProtobufCMessageDescriptor *sub = fd->descriptor;
        frame nf = {pos + n, sub, f->selects, f->setops, f->joins};
        if (sub == &pg_query__select_stmt__descriptor) {
            if (f->d == &pg_query__select_stmt__descriptor)
                nf.setops++; /* larg / rarg of a set operation */
            else
                nf.selects++;
        } else if (sub == &pg_query__join_expr__descriptor)
            nf.joins++;
        if (nf.selects > SQ_MAX_SUBQUERY_DEPTH + 1) {
            job->code = PA_EUNSUPPORTED;
            snprintf(job->msg, sizeof job->msg, "subqueries nested too deep (more than %d levels)", SQ_MAX_SUBQUERY_DEPTH);
            break;
        }
        if (top + 1 > MAX) {
            job->code = PA_EUNSUPPORTED;
            if (nf.setops * 4 > MAX)
                snprintf(job->msg, sizeof job->msg,
                         "too many set operations in a row (UNION, INTERSECT, EXCEPT): the statement is nested more than "
                         "%d levels deep",
                         MAX);
            else if (nf.joins * 4 > MAX)
                snprintf(job->msg, sizeof job->msg, "too many nested joins: the statement is nested more than %d levels deep",
                         MAX);
            else
                snprintf(job->msg, sizeof job->msg, "expression too deep: the statement is nested more than %d levels deep",
                         MAX);
            break;
        }
        st[++top] = nf;
    }
out:
    pa_free(st);
}

static void *parse_main(void *arg)
{
    parse_job *job = arg;
    PgQueryProtobufParseResult pr = pg_query_parse_protobuf(job->text);
    if (pr.error) {
        job->code = PA_ESYNTAX;
        job->offset = pr.error->cursorpos > 0 ? pr.error->cursorpos - 1 : -1;
        const char *m = pr.error->message ? pr.error->message : "syntax error";
        /* The grammar's own stack (10,000 entries) runs out on deep nesting. */
        if (!strcmp(m, "memory exhausted") || !strncmp(m, "memory exhausted ", 17))
            snprintf(job->msg, sizeof job->msg, "statement nested too deep for the parser (%s)", m);
        else if (strstr(m, "stack depth limit exceeded"))
            snprintf(job->msg, sizeof job->msg, "statement nested too deep for the parser (%s)", m);
        else
            snprintf(job->msg, sizeof job->msg, "%s", m);
    } else {
        check_depth(job, (const uint8_t *)pr.parse_tree.data, pr.parse_tree.len);
        if (job->code == PA_OK) {
            job->tree = pg_query__parse_result__unpack(NULL, pr.parse_tree.len, (const uint8_t *)pr.parse_tree.data);
            if (!job->tree) {
                job->code = PA_EINTERNAL;
                snprintf(job->msg, sizeof job->msg, "could not read the parse tree");
            }
        }
    }
    pg_query_free_protobuf_parse_result(pr);
    /* libpg_query frees the thread's memory contexts when it exits */
    return NULL;
}

int sq_parse(const char *text, PgQuery__ParseResult **tree, int *err_offset, pa_err *err)
{
    *tree = NULL;
    *err_offset = -1;
    parse_job job = {.text = text, .code = PA_OK, .offset = -1};
    size_t len = strlen(text);
    size_t stack = PARSE_STACK_BASE;
    if (len > (PARSE_STACK_MAX - stack) / PARSE_STACK_PER_BYTE)
        return pa_error(err, PA_EUNSUPPORTED, "statement too long: %zu bytes (at most %zu)", len,
                        (size_t)((PARSE_STACK_MAX - stack) / PARSE_STACK_PER_BYTE));
    stack += len * PARSE_STACK_PER_BYTE;
    pthread_attr_t attr;
    pthread_t th;
    int e = pthread_attr_init(&attr);
    if (!e)
        e = pthread_attr_setstacksize(&attr, stack);
    if (!e)
        e = pthread_create(&th, &attr, parse_main, &job);
    pthread_attr_destroy(&attr);
    if (e)
        return pa_error(err, e == EAGAIN || e == ENOMEM ? PA_ENOMEM : PA_EINTERNAL,
                        "parsing: could not start the parser's thread (%zu MiB of stack): %s", stack >> 20, strerror(e));
    pthread_join(th, NULL);
    if (job.code != PA_OK) {
        *err_offset = job.offset;
        return pa_error(err, job.code, "%s", job.msg);
    }
    *tree = job.tree;
    return PA_OK;
}

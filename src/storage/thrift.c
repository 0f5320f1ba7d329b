/*
 * thrift.c - Thrift compact protocol: a bounded reader, skipping of unknown
 * values, and an appending writer. Wire format and invariants: thrift_int.h.
 */
#include "storage/thrift_int.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ reader */

void th_reader_init(th_reader *r, const uint8_t *buf, size_t len, const char *what,
                    uint64_t base, pa_err *err)
{
    memset(r, 0, sizeof *r);
    r->buf = buf;
    r->len = len;
    r->base = base;
    r->what = what ? what : "thrift data";
    r->err = err;
}

int th_fail(th_reader *r, const char *fmt, ...)
{
    if (r->rc)
        return r->rc;
    char msg[200], path[280];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t n = 0;
    path[0] = '\0';
    for (int i = 0; i < r->depth && n < sizeof path; i++)
        n += (size_t)snprintf(path + n, sizeof path - n, "%s%s.%d", i ? " > " : "", r->names[i],
                              r->ids[i]);
    r->rc = PA_ECORRUPT;
    if (r->depth)
        pa_error(r->err, PA_ECORRUPT, "%s: %s at byte %llu (%s)", r->what, msg,
                 (unsigned long long)(r->base + r->pos), path);
    else
        pa_error(r->err, PA_ECORRUPT, "%s: %s at byte %llu", r->what, msg,
                 (unsigned long long)(r->base + r->pos));
    return r->rc;
}

static size_t left(const th_reader *r) { return r->len - r->pos; }

int th_struct_begin(th_reader *r, const char *name)
{
    if (r->rc)
        return r->rc;
    if (r->depth >= TH_MAX_DEPTH)
        return th_fail(r, "structs nested deeper than %d", TH_MAX_DEPTH);
    r->names[r->depth] = name;
    r->ids[r->depth] = 0;
    r->depth++;
    return PA_OK;
}

void th_struct_end(th_reader *r)
{
    if (r->depth > 0 && !r->rc)   /* keep the path of a failure for messages */
        r->depth--;
}

int th_read_varint(th_reader *r, uint64_t *out)
{
    if (r->rc)
        return r->rc;
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (r->pos >= r->len)
            return th_fail(r, "truncated varint");
        uint8_t b = r->buf[r->pos++];
        if (shift == 63 && (b & 0x7e))
            return th_fail(r, "varint longer than 64 bits");
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return PA_OK;
        }
    }
    return th_fail(r, "varint longer than 10 bytes");
}

int th_read_i8(th_reader *r, int8_t *out)
{
    if (r->rc)
        return r->rc;
    if (r->pos >= r->len)
        return th_fail(r, "truncated i8");
    *out = (int8_t)r->buf[r->pos++];
    return PA_OK;
}

/* Reads a zigzag varint that must fit `bits` bits. */
static int read_zigzag(th_reader *r, int bits, int64_t *out)
{
    uint64_t u = 0;
    int rc = th_read_varint(r, &u);
    if (rc)
        return rc;
    if (bits < 64 && (u >> bits) != 0)
        return th_fail(r, "varint %llu does not fit i%d", (unsigned long long)u, bits);
    *out = th_unzigzag64(u);
    return PA_OK;
}

int th_read_i16(th_reader *r, int16_t *out)
{
    int64_t v = 0;
    int rc = read_zigzag(r, 16, &v);
    if (!rc)
        *out = (int16_t)v;
    return rc;
}

int th_read_i32(th_reader *r, int32_t *out)
{
    int64_t v = 0;
    int rc = read_zigzag(r, 32, &v);
    if (!rc)
        *out = (int32_t)v;
    return rc;
}

int th_read_i64(th_reader *r, int64_t *out) { return read_zigzag(r, 64, out); }

int th_read_double(th_reader *r, double *out)
{
    if (r->rc)
        return r->rc;
    if (left(r) < 8)
        return th_fail(r, "truncated double (%zu bytes left)", left(r));
    uint64_t bits = 0;
    for (int i = 7; i >= 0; i--)   /* little-endian */
        bits = bits << 8 | r->buf[r->pos + (size_t)i];
    memcpy(out, &bits, sizeof *out);
    r->pos += 8;
    return PA_OK;
}

int th_read_binary(th_reader *r, const uint8_t **ptr, uint32_t *len)
{
    uint64_t n = 0;
    int rc = th_read_varint(r, &n);
    if (rc)
        return rc;
    if (n > left(r) || n > UINT32_MAX)
        return th_fail(r, "binary length %llu but %zu bytes left", (unsigned long long)n,
                       left(r));
    *ptr = r->buf + r->pos;
    *len = (uint32_t)n;
    r->pos += (size_t)n;
    return PA_OK;
}

/* Fewest bytes one element of this type can take. */
static size_t min_elem_size(uint8_t t)
{
    return t == TH_DOUBLE ? 8 : t == TH_UUID ? 16 : 1;
}

static bool valid_type(uint8_t t) { return t >= TH_BOOL_TRUE && t <= TH_UUID; }

int th_read_list_begin(th_reader *r, uint8_t *elem_type, uint32_t *count)
{
    if (r->rc)
        return r->rc;
    if (r->pos >= r->len)
        return th_fail(r, "truncated list header");
    uint8_t h = r->buf[r->pos++];
    uint8_t t = h & 0x0f;
    uint64_t n = h >> 4;
    if (n == 15) {
        int rc = th_read_varint(r, &n);
        if (rc)
            return rc;
    }
    if (t == TH_BOOL_FALSE)
        t = TH_BOOL_TRUE;
    if (n == 0) {
        *elem_type = t;
        *count = 0;
        return PA_OK;
    }
    if (!valid_type(t))
        return th_fail(r, "bad list element type %u", t);
    if (n > left(r) / min_elem_size(t))
        return th_fail(r, "list of %llu elements but %zu bytes left", (unsigned long long)n,
                       left(r));
    *elem_type = t;
    *count = (uint32_t)n;
    return PA_OK;
}

int th_read_bool_elem(th_reader *r, bool *out)
{
    if (r->rc)
        return r->rc;
    if (r->pos >= r->len)
        return th_fail(r, "truncated bool");
    uint8_t b = r->buf[r->pos++];
    if (b > 2)
        return th_fail(r, "bad bool byte %u", b);
    *out = b == 1;
    return PA_OK;
}

int th_field_next(th_reader *r, int16_t *last, th_field *f)
{
    if (r->rc)
        return r->rc;
    if (r->pos >= r->len)
        return th_fail(r, "truncated struct (no stop byte)");
    uint8_t h = r->buf[r->pos++];
    memset(f, 0, sizeof *f);
    if (h == 0) {
        f->type = TH_STOP;
        return PA_OK;
    }
    uint8_t t = h & 0x0f;
    int delta = h >> 4;
    if (!valid_type(t))
        return th_fail(r, "bad field type %u", t);
    int32_t id;
    if (delta) {
        id = *last + delta;
        if (id > INT16_MAX)
            return th_fail(r, "field id %d out of range", id);
    } else {
        int16_t v;
        int rc = th_read_i16(r, &v);
        if (rc)
            return rc;
        id = v;
    }
    f->type = t;
    f->id = (int16_t)id;
    f->bval = t == TH_BOOL_TRUE;
    *last = f->id;
    if (r->depth > 0)
        r->ids[r->depth - 1] = f->id;
    return PA_OK;
}

static const char *type_name(uint8_t t)
{
    static const char *names[] = {"stop", "bool", "bool", "i8", "i16", "i32", "i64",
                                  "double", "binary", "list", "set", "map", "struct", "uuid"};
    return t < sizeof names / sizeof names[0] ? names[t] : "?";
}

int th_expect(th_reader *r, const th_field *f, uint8_t type)
{
    if (r->rc)
        return r->rc;
    bool ok = f->type == type || (type == TH_BOOL_TRUE && f->type == TH_BOOL_FALSE);
    if (!ok)
        return th_fail(r, "field %d has type %s, expected %s", f->id, type_name(f->type),
                       type_name(type));
    return PA_OK;
}

int th_field_i8(th_reader *r, const th_field *f, int8_t *out)
{
    return th_expect(r, f, TH_I8) ? r->rc : th_read_i8(r, out);
}

int th_field_i16(th_reader *r, const th_field *f, int16_t *out)
{
    return th_expect(r, f, TH_I16) ? r->rc : th_read_i16(r, out);
}

int th_field_i32(th_reader *r, const th_field *f, int32_t *out)
{
    return th_expect(r, f, TH_I32) ? r->rc : th_read_i32(r, out);
}

int th_field_i64(th_reader *r, const th_field *f, int64_t *out)
{
    return th_expect(r, f, TH_I64) ? r->rc : th_read_i64(r, out);
}

int th_field_bool(th_reader *r, const th_field *f, bool *out)
{
    if (th_expect(r, f, TH_BOOL_TRUE))
        return r->rc;
    *out = f->bval;
    return PA_OK;
}

int th_field_binary(th_reader *r, const th_field *f, const uint8_t **ptr, uint32_t *len)
{
    return th_expect(r, f, TH_BINARY) ? r->rc : th_read_binary(r, ptr, len);
}

int th_field_list(th_reader *r, const th_field *f, uint8_t elem_type, uint32_t *count)
{
    if (th_expect(r, f, TH_LIST))
        return r->rc;
    uint8_t t = 0;
    int rc = th_read_list_begin(r, &t, count);
    if (rc)
        return rc;
    if (*count > 0 && t != elem_type)
        return th_fail(r, "field %d is a list of %s, expected %s", f->id, type_name(t),
                       type_name(elem_type));
    return PA_OK;
}

/* Skips one value; `elem` is true inside a container (a bool is then one
 * byte), `depth` counts the containers and structs entered so far. */
static int skip_value(th_reader *r, uint8_t type, bool elem, int depth)
{
    if (r->rc)
        return r->rc;
    if (depth >= TH_MAX_DEPTH)
        return th_fail(r, "values nested deeper than %d", TH_MAX_DEPTH);
    uint64_t u;
    switch (type) {
    case TH_BOOL_TRUE:
    case TH_BOOL_FALSE:
        if (elem) {
            bool b;
            return th_read_bool_elem(r, &b);
        }
        return PA_OK;
    case TH_I8:
        if (r->pos >= r->len)
            return th_fail(r, "truncated i8");
        r->pos++;
        return PA_OK;
    case TH_I16:
    case TH_I32:
    case TH_I64:
        return th_read_varint(r, &u);
    case TH_DOUBLE:
    case TH_UUID: {
        size_t n = type == TH_DOUBLE ? 8 : 16;
        if (left(r) < n)
            return th_fail(r, "truncated %s", type_name(type));
        r->pos += n;
        return PA_OK;
    }
    case TH_BINARY: {
        const uint8_t *p;
        uint32_t n;
        return th_read_binary(r, &p, &n);
    }
    case TH_LIST:
    case TH_SET: {
        uint8_t t = 0;
        uint32_t n = 0;
        int rc = th_read_list_begin(r, &t, &n);
        for (uint32_t i = 0; !rc && i < n; i++)
            rc = skip_value(r, t, true, depth + 1);
        return rc;
    }
    case TH_MAP: {
        int rc = th_read_varint(r, &u);
        if (rc || u == 0)
            return rc;
        if (r->pos >= r->len)
            return th_fail(r, "truncated map header");
        uint8_t kv = r->buf[r->pos++];
        uint8_t kt = kv >> 4, vt = kv & 0x0f;
        if (!valid_type(kt) || !valid_type(vt))
            return th_fail(r, "bad map types %u/%u", kt, vt);
        if (u > left(r) / 2)
            return th_fail(r, "map of %llu entries but %zu bytes left", (unsigned long long)u,
                           left(r));
        for (uint64_t i = 0; !rc && i < u; i++) {
            rc = skip_value(r, kt, true, depth + 1);
            if (!rc)
                rc = skip_value(r, vt, true, depth + 1);
        }
        return rc;
    }
    case TH_STRUCT: {
        int16_t last = 0;
        th_field f;
        for (;;) {
            int rc = th_field_next(r, &last, &f);
            if (rc || f.type == TH_STOP)
                return rc;
            rc = skip_value(r, f.type, false, depth + 1);
            if (rc)
                return rc;
        }
    }
    default:
        return th_fail(r, "cannot skip a value of type %u", type);
    }
}

int th_skip(th_reader *r, uint8_t type) { return skip_value(r, type, false, r->depth); }

/* ------------------------------------------------------------------ writer */

void pq_buf_free(pq_buf *b)
{
    if (!b)
        return;
    pa_free(b->data);
    memset(b, 0, sizeof *b);
}

void th_writer_init(th_writer *w, pq_buf *out, pa_err *err)
{
    memset(w, 0, sizeof *w);
    w->out = out;
    w->start_len = out->len;
    w->err = err;
}

int th_writer_finish(th_writer *w)
{
    if (w->rc)
        w->out->len = w->start_len;
    else if (w->depth != 0)
        th_wfail(w, PA_EINTERNAL, "thrift writer: %d structs left open", w->depth);
    return w->rc;
}

void th_wfail(th_writer *w, int code, const char *fmt, ...)
{
    if (w->rc)
        return;
    va_list ap;
    va_start(ap, fmt);
    w->rc = pa_verror_at(w->err, code, __FILE__, __LINE__, fmt, ap);
    va_end(ap);
    w->out->len = w->start_len;
}

static void put(th_writer *w, const void *p, size_t n)
{
    if (w->rc)
        return;
    pq_buf *b = w->out;
    if (b->cap - b->len < n) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->len < n)
            cap *= 2;
        uint8_t *d = pa_realloc(b->data, cap);
        if (!d) {
            th_wfail(w, PA_ENOMEM, "thrift writer: cannot grow buffer to %zu bytes", cap);
            return;
        }
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

void th_write_byte(th_writer *w, uint8_t b) { put(w, &b, 1); }

void th_write_varint(th_writer *w, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    do {
        tmp[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            tmp[n] |= 0x80;
        n++;
    } while (v);
    put(w, tmp, n);
}

void th_write_i16(th_writer *w, int16_t v) { th_write_varint(w, th_zigzag64(v)); }
void th_write_i32(th_writer *w, int32_t v) { th_write_varint(w, th_zigzag64(v)); }
void th_write_i64(th_writer *w, int64_t v) { th_write_varint(w, th_zigzag64(v)); }

void th_write_double(th_writer *w, double v)
{
    uint64_t bits;
    uint8_t tmp[8];
    memcpy(&bits, &v, sizeof bits);
    for (int i = 0; i < 8; i++)
        tmp[i] = (uint8_t)(bits >> (8 * i));
    put(w, tmp, 8);
}

void th_write_binary(th_writer *w, const void *p, size_t len)
{
    th_write_varint(w, len);
    if (len)
        put(w, p, len);
}

void th_write_struct_begin(th_writer *w)
{
    if (w->rc)
        return;
    if (w->depth >= TH_MAX_DEPTH) {
        th_wfail(w, PA_EINVAL, "thrift writer: structs nested deeper than %d", TH_MAX_DEPTH);
        return;
    }
    w->last[++w->depth] = 0;
}

void th_write_struct_end(th_writer *w)
{
    th_write_byte(w, TH_STOP);
    if (!w->rc && w->depth > 0)
        w->depth--;
}

void th_write_field(th_writer *w, uint8_t type, int16_t id)
{
    if (w->rc)
        return;
    int delta = id - w->last[w->depth];
    if (delta > 0 && delta <= 15) {
        th_write_byte(w, (uint8_t)(delta << 4 | type));
    } else {
        th_write_byte(w, type);
        th_write_i16(w, id);
    }
    w->last[w->depth] = id;
}

void th_write_field_bool(th_writer *w, int16_t id, bool v)
{
    th_write_field(w, v ? TH_BOOL_TRUE : TH_BOOL_FALSE, id);
}

void th_write_field_i8(th_writer *w, int16_t id, int8_t v)
{
    th_write_field(w, TH_I8, id);
    th_write_byte(w, (uint8_t)v);
}

void th_write_field_i16(th_writer *w, int16_t id, int16_t v)
{
    th_write_field(w, TH_I16, id);
    th_write_i16(w, v);
}

void th_write_field_i32(th_writer *w, int16_t id, int32_t v)
{
    th_write_field(w, TH_I32, id);
    th_write_i32(w, v);
}

void th_write_field_i64(th_writer *w, int16_t id, int64_t v)
{
    th_write_field(w, TH_I64, id);
    th_write_i64(w, v);
}

void th_write_field_binary(th_writer *w, int16_t id, const void *p, size_t len)
{
    th_write_field(w, TH_BINARY, id);
    th_write_binary(w, p, len);
}

void th_write_field_string(th_writer *w, int16_t id, const char *s)
{
    th_write_field_binary(w, id, s, strlen(s));
}

void th_write_list_begin(th_writer *w, uint8_t elem_type, uint32_t count)
{
    if (count < 15) {
        th_write_byte(w, (uint8_t)(count << 4 | elem_type));
    } else {
        th_write_byte(w, (uint8_t)(0xf0 | elem_type));
        th_write_varint(w, count);
    }
}

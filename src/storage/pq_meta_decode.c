/*
 * pq_meta_decode.c - Thrift compact decoders of the parquet.thrift structs:
 * FileMetaData and everything under it, PageHeader, ColumnIndex, OffsetIndex.
 *
 * Every decoder has the same shape: enter the struct, loop over field
 * headers, switch on the field id (unknown ids are skipped), then check that
 * the required fields were seen. The switch statements are long because the
 * structs are; each case is one line. With an arena, strings and binaries are
 * copied into it; without one (page headers) binaries stay views of the input.
 */
#include "storage/pq_meta_int.h"

#include <string.h>

/* Bit of field id `id` in a `seen` mask (all required ids are below 32). */
#define BIT(id) (1u << (id))

static int oom(th_reader *r)
{
    if (!r->rc)
        r->rc = pa_error(r->err, PA_ENOMEM, "%s: out of memory decoding metadata", r->what);
    return r->rc;
}

/* Fails naming the lowest required field id in `need` that is not in `seen`. */
static int require(th_reader *r, uint32_t seen, uint32_t need, const char *name)
{
    if (r->rc)
        return r->rc;
    uint32_t missing = need & ~seen;
    if (!missing)
        return PA_OK;
    return th_fail(r, "%s: missing required field %d", name, __builtin_ctz(missing));
}

static void *alloc_array(th_reader *r, pq__arena *a, uint32_t n, size_t size)
{
    void *p = pq__arena_alloc(a, (size_t)n * size);
    if (!p)
        oom(r);
    return p;
}

static int dec_string(th_reader *r, pq__arena *a, const th_field *f, const char **out)
{
    const uint8_t *p;
    uint32_t n;
    int rc = th_field_binary(r, f, &p, &n);
    if (rc)
        return rc;
    if (!(*out = pq__arena_strndup(a, p, n)))
        return oom(r);
    return PA_OK;
}

/* Binary: copied into a when given, else a view of the input. */
static int dec_bin(th_reader *r, pq__arena *a, const th_field *f, pq_bin *out)
{
    const uint8_t *p;
    uint32_t n;
    int rc = th_field_binary(r, f, &p, &n);
    if (rc)
        return rc;
    if (a) {
        uint8_t *c = pq__arena_alloc(a, n);
        if (!c)
            return oom(r);
        if (n)
            memcpy(c, p, n);
        p = c;
    }
    out->ptr = p;
    out->len = n;
    return PA_OK;
}

static int dec_list_i32(th_reader *r, pq__arena *a, const th_field *f, int32_t **out, uint32_t *n)
{
    int rc = th_field_list(r, f, TH_I32, n);
    if (rc)
        return rc;
    if (!(*out = alloc_array(r, a, *n, sizeof **out)))
        return r->rc;
    for (uint32_t i = 0; !rc && i < *n; i++)
        rc = th_read_i32(r, &(*out)[i]);
    return rc;
}

static int dec_list_i64(th_reader *r, pq__arena *a, const th_field *f, int64_t **out, uint32_t *n)
{
    int rc = th_field_list(r, f, TH_I64, n);
    if (rc)
        return rc;
    if (!(*out = alloc_array(r, a, *n, sizeof **out)))
        return r->rc;
    for (uint32_t i = 0; !rc && i < *n; i++)
        rc = th_read_i64(r, &(*out)[i]);
    return rc;
}

static int dec_list_string(th_reader *r, pq__arena *a, const th_field *f, const char ***out,
                           uint32_t *n)
{
    int rc = th_field_list(r, f, TH_BINARY, n);
    if (rc)
        return rc;
    if (!(*out = alloc_array(r, a, *n, sizeof **out)))
        return r->rc;
    for (uint32_t i = 0; !rc && i < *n; i++) {
        const uint8_t *p;
        uint32_t len;
        rc = th_read_binary(r, &p, &len);
        if (!rc && !((*out)[i] = pq__arena_strndup(a, p, len)))
            rc = oom(r);
    }
    return rc;
}

static int dec_list_bin(th_reader *r, pq__arena *a, const th_field *f, pq_bin **out, uint32_t *n)
{
    int rc = th_field_list(r, f, TH_BINARY, n);
    if (rc)
        return rc;
    if (!(*out = alloc_array(r, a, *n, sizeof **out)))
        return r->rc;
    for (uint32_t i = 0; !rc && i < *n; i++) {
        const uint8_t *p;
        uint32_t len;
        rc = th_read_binary(r, &p, &len);
        uint8_t *c = rc ? NULL : pq__arena_alloc(a, len);
        if (!rc && !c)
            rc = oom(r);
        if (!rc) {
            if (len)
                memcpy(c, p, len);
            (*out)[i].ptr = c;
            (*out)[i].len = len;
        }
    }
    return rc;
}

/* Decodes a list<struct> field with `fn` decoding one element. */
#define DEC_STRUCT_LIST(r, a, f, arr, n, fn)                                   \
    do {                                                                       \
        rc = th_field_list((r), (f), TH_STRUCT, &(n));                         \
        if (!rc && !((arr) = alloc_array((r), (a), (n), sizeof *(arr))))       \
            rc = (r)->rc;                                                      \
        for (uint32_t i_ = 0; !rc && i_ < (n); i_++)                           \
            rc = fn((r), (a), &(arr)[i_]);                                     \
    } while (0)

/* ------------------------------------------------------------------ small structs */

static int dec_statistics(th_reader *r, pq__arena *a, pq_statistics *s)
{
    int16_t last = 0;
    th_field f;
    int rc = th_struct_begin(r, "Statistics");
    memset(s, 0, sizeof *s);
    while (!rc && !(rc = th_field_next(r, &last, &f)) && f.type != TH_STOP) {
        switch (f.id) {
        case 1: rc = dec_bin(r, a, &f, &s->max); break;
        case 2: rc = dec_bin(r, a, &f, &s->min); break;
        case 3: rc = th_field_i64(r, &f, &s->null_count); s->has_null_count = true; break;
        case 4: rc = th_field_i64(r, &f, &s->distinct_count); s->has_distinct_count = true; break;
        case 5: rc = dec_bin(r, a, &f, &s->max_value); break;
        case 6: rc = dec_bin(r, a, &f, &s->min_value); break;
        case 7: rc = th_field_bool(r, &f, &s->is_max_value_exact); s->has_is_max_value_exact = true; break;
        case 8: rc = th_field_bool(r, &f, &s->is_min_value_exact); s->has_is_min_value_exact = true; break;
        case 9: rc = th_field_i64(r, &f, &s->nan_count); s->has_nan_count = true; break;
        default: rc = th_skip(r, f.type);
        }
    }
    th_struct_end(r);
    return rc;
}

/* Empty-struct union (TimeUnit, ColumnOrder): the id of the member that is set. */
static int dec_union_id(th_reader *r, const char *name, int32_t *out)
{
    int16_t last = 0;
    th_field f;
    int rc = th_struct_begin(r, name);
    *out = 0;
    while (!rc && !(rc = th_field_next(r, &last, &f)) && f.type != TH_STOP) {
        *out = f.id;
        rc = th_skip(r, f.type);
    }
    th_struct_end(r);
    return rc;
}

/* DecimalType, TimeType/TimestampType, IntType: the payload of a LogicalType. */
static int dec_logical_payload(th_reader *r, int32_t kind, pq_logical_type *lt)
{
    int16_t last = 0;
    th_field f;
    uint32_t seen = 0;
    int8_t i8;
    int rc = PA_OK;
    while (!rc && !(rc = th_field_next(r, &last, &f)) && f.type != TH_STOP) {
        if (f.id > 0 && f.id < 32)
            seen |= BIT(f.id);
        if (kind == PQ_LT_DECIMAL && f.id == 1) {
            rc = th_field_i32(r, &f, &lt->scale);
        } else if (kind == PQ_LT_DECIMAL && f.id == 2) {
            rc = th_field_i32(r, &f, &lt->precision);
        } else if ((kind == PQ_LT_TIME || kind == PQ_LT_TIMESTAMP) && f.id == 1) {
            rc = th_field_bool(r, &f, &lt->is_adjusted_to_utc);
        } else if ((kind == PQ_LT_TIME || kind == PQ_LT_TIMESTAMP) && f.id == 2) {
            rc = th_expect(r, &f, TH_STRUCT);
            if (!rc)
                rc = dec_union_id(r, "TimeUnit", &lt->unit);
        } else if (kind == PQ_LT_INTEGER && f.id == 1) {
            rc = th_field_i8(r, &f, &i8);
            lt->bit_width = i8;
        } else if (kind == PQ_LT_INTEGER && f.id == 2) {
            rc = th_field_bool(r, &f, &lt->is_signed);
        } else {
            rc = th_skip(r, f.type);
        }
    }
    bool needs_two = kind == PQ_LT_DECIMAL || kind == PQ_LT_TIME || kind == PQ_LT_TIMESTAMP ||
                     kind == PQ_LT_INTEGER;
    return needs_two ? require(r, seen, BIT(1) | BIT(2), pq_logical_kind_name(kind)) : rc;
}

static int dec_logical_type(th_reader *r, pq_logical_type *lt)
{
    int16_t last = 0;
    th_field f;
    int rc = th_struct_begin(r, "LogicalType");
    memset(lt, 0, sizeof *lt);
    while (!rc && !(rc = th_field_next(r, &last, &f)) && f.type != TH_STOP) {
        if (f.type != TH_STRUCT) {   /* every member is a struct */
            rc = th_skip(r, f.type);
            continue;
        }
        lt->kind = f.id;
        rc = th_struct_begin(r, pq_logical_kind_name(f.id) ? pq_logical_kind_name(f.id) : "?");
        if (!rc)
            rc = dec_logical_payload(r, f.id, lt);
        th_struct_end(r);
    }
    th_struct_end(r);
    return rc;
}

static int dec_key_value(th_reader *r, pq__arena *a, pq_key_value *kv)
{
    int16_t last = 0;
    th_field f;
    uint32_t seen = 0;
    int rc = th_struct_begin(r, "KeyValue");
    while (!rc && !(rc = th_field_next(r, &last, &f)) && f.type != TH_STOP) {
        switch (f.id) {
        case 1: rc = dec_string(r, a, &f, &kv->key); seen |= BIT(1); break;
        case 2: rc = dec_string(r, a, &f, &kv->value); break;
        default: rc = th_skip(r, f.type);
        }
    }
    rc = require(r, seen, BIT(1), "KeyValue");
    th_struct_end(r);
    return rc;
}

static int dec_schema_element(th_reader *r, pq__arena *a, pq_schema_element *e)
{
    int16_t last = 0;
    th_field f;
    uint32_t seen = 0;
    int rc = th_struct_begin(r, "SchemaElement");
    while (!rc && !(rc = th_field_next(r, &last, &f)) && f.type != TH_STOP) {
        switch (f.id) {
        case 1: rc = th_field_i32(r, &f, &e->type); e->has_type = true; break;
        case 2: rc = th_field_i32(r, &f, &e->type_length); e->has_type_length = true; break;
        case 3: rc = th_field_i32(r, &f, &e->repetition); e->has_repetition = true; break;
        case 4: rc = dec_string(r, a, &f, &e->name); seen |= BIT(4); break;
        case 5: rc = th_field_i32(r, &f, &e->num_children); e->has_num_children = true; break;
        case 6: rc = th_field_i32(r, &f, &e->converted_type); e->has_converted_type = true; break;
        case 7: rc = th_field_i32(r, &f, &e->scale); e->has_scale = true; break;
        case 8: rc = th_field_i32(r, &f, &e->precision); e->has_precision = true; break;
        case 9: rc = th_field_i32(r, &f, &e->field_id); e->has_field_id = true; break;
        case 10: rc = th_expect(r, &f, TH_STRUCT); if (!rc) rc = dec_logical_type(r, &e->logical); break;
        default: rc = th_skip(r, f.type);
        }
    }
    rc = require(r, seen, BIT(4), "SchemaElement");
    th_struct_end(r);
    return rc;
}

static int dec_page_encoding_stats(th_reader *r, pq__arena *a, pq_page_encoding_stats *s)
{
    int16_t last = 0;
    th_field f;
    uint32_t seen = 0;
    int rc = th_struct_begin(r, "PageEncodingStats");
    while (!rc && !(rc = th_field_next(r, &last, &f)) && f.type != TH_STOP) {
        switch (f.id) {
        case 1: rc = th_field_i32(r, &f, &s->page_type); seen |= BIT(1); break;
        case 2: rc = th_field_i32(r, &f, &s->encoding); seen |= BIT(2); break;
        case 3: rc = th_field_i32(r, &f, &s->count); seen |= BIT(3); break;
        default: rc = th_skip(r, f.type);
        }
    }
    rc = require(r, seen, BIT(1) | BIT(2) | BIT(3), "PageEncodingStats");
    th_struct_end(r);
    return rc;
}

static int dec_sorting_column(th_reader *r, pq__arena *a, pq_sorting_column *s)
{
    int16_t last = 0;
    th_field f;
    uint32_t seen = 0;
    int rc = th_struct_begin(r, "SortingColumn");
    while (!rc && !(rc = th_field_next(r, &last, &f)) && f.type != TH_STOP) {
        switch (f.id) {
        case 1: rc = th_field_i32(r, &f, &s->column_idx); seen |= BIT(1); break;
        case 2: rc = th_field_bool(r, &f, &s->descending); seen |= BIT(2); break;
        case 3: rc = th_field_bool(r, &f, &s->nulls_first); seen |= BIT(3); break;
        default: rc = th_skip(r, f.type);
        }
    }
    rc = require(r, seen, BIT(1) | BIT(2) | BIT(3), "SortingColumn");
    th_struct_end(r);
    return rc;
}

/* ------------------------------------------------------------------ column chunks */

static int dec_column_meta(th_reader *r, pq__arena *a, pq_column_meta *m)
{
    int16_t last = 0;
    th_field f;
    uint32_t seen = 0;
    int rc = th_struct_begin(r, "ColumnMetaData");
    while (!rc && !(rc = th_field_next(r, &last, &f)) && f.type != TH_STOP) {
        if (f.id > 0 && f.id < 32)
            seen |= BIT(f.id);
        switch (f.id) {
        case 1: rc = th_field_i32(r, &f, &m->type); break;
        case 2: rc = dec_list_i32(r, a, &f, &m->encodings, &m->n_encodings); break;
        case 3: rc = dec_list_string(r, a, &f, &m->path_in_schema, &m->n_path_in_schema); break;
        case 4: rc = th_field_i32(r, &f, &m->codec); break;
        case 5: rc = th_field_i64(r, &f, &m->num_values); break;
        case 6: rc = th_field_i64(r, &f, &m->total_uncompressed_size); break;
        case 7: rc = th_field_i64(r, &f, &m->total_compressed_size); break;
        case 8: DEC_STRUCT_LIST(r, a, &f, m->key_value_metadata, m->n_key_value_metadata, dec_key_value); break;
        case 9: rc = th_field_i64(r, &f, &m->data_page_offset); break;
        case 10: rc = th_field_i64(r, &f, &m->index_page_offset); m->has_index_page_offset = true; break;
        case 11: rc = th_field_i64(r, &f, &m->dictionary_page_offset); m->has_dictionary_page_offset = true; break;
        case 12:
            rc = th_expect(r, &f, TH_STRUCT);
            if (!rc)
                rc = dec_statistics(r, a, &m->statistics);
            m->has_statistics = true;
            break;
        case 13: DEC_STRUCT_LIST(r, a, &f, m->encoding_stats, m->n_encoding_stats, dec_page_encoding_stats); break;
        case 14: rc = th_field_i64(r, &f, &m->bloom_filter_offset); m->has_bloom_filter_offset = true; break;
        case 15: rc = th_field_i32(r, &f, &m->bloom_filter_length); m->has_bloom_filter_length = true; break;
        default: rc = th_skip(r, f.type);
        }
    }
    rc = require(r, seen, BIT(1) | BIT(2) | BIT(3) | BIT(4) | BIT(5) | BIT(6) | BIT(7) | BIT(9),
                 "ColumnMetaData");
    th_struct_end(r);
    return rc;
}

static int dec_column_chunk(th_reader *r, pq__arena *a, pq_column_chunk *c)
{
    int16_t last = 0;
    th_field f;
    int rc = th_struct_begin(r, "ColumnChunk");
    while (!rc && !(rc = th_field_next(r, &last, &f)) && f.type != TH_STOP) {
        switch (f.id) {
        case 1: rc = dec_string(r, a, &f, &c->file_path); break;
        case 2: rc = th_field_i64(r, &f, &c->file_offset); break;
        case 3:
            rc = th_expect(r, &f, TH_STRUCT);
            if (!rc)
                rc = dec_column_meta(r, a, &c->meta_data);
            c->has_meta_data = true;
            break;
        case 4: rc = th_field_i64(r, &f, &c->offset_index_offset); c->has_offset_index_offset = true; break;
        case 5: rc = th_field_i32(r, &f, &c->offset_index_length); c->has_offset_index_length = true; break;
        case 6: rc = th_field_i64(r, &f, &c->column_index_offset); c->has_column_index_offset = true; break;
        case 7: rc = th_field_i32(r, &f, &c->column_index_length); c->has_column_index_length = true; break;
        case 8:
        case 9: c->has_crypto_metadata = true; rc = th_skip(r, f.type); break;
        default: rc = th_skip(r, f.type);
        }
    }
    th_struct_end(r);
    return rc;
}

static int dec_row_group(th_reader *r, pq__arena *a, pq_row_group *g)
{
    int16_t last = 0;
    th_field f;
    uint32_t seen = 0;
    int rc = th_struct_begin(r, "RowGroup");
    while (!rc && !(rc = th_field_next(r, &last, &f)) && f.type != TH_STOP) {
        if (f.id > 0 && f.id < 32)
            seen |= BIT(f.id);
        switch (f.id) {
        case 1: DEC_STRUCT_LIST(r, a, &f, g->columns, g->n_columns, dec_column_chunk); break;
        case 2: rc = th_field_i64(r, &f, &g->total_byte_size); break;
        case 3: rc = th_field_i64(r, &f, &g->num_rows); break;
        case 4: DEC_STRUCT_LIST(r, a, &f, g->sorting_columns, g->n_sorting_columns, dec_sorting_column); break;
        case 5: rc = th_field_i64(r, &f, &g->file_offset); g->has_file_offset = true; break;
        case 6: rc = th_field_i64(r, &f, &g->total_compressed_size); g->has_total_compressed_size = true; break;
        case 7: rc = th_field_i16(r, &f, &g->ordinal); g->has_ordinal = true; break;
        default: rc = th_skip(r, f.type);
        }
    }
    rc = require(r, seen, BIT(1) | BIT(2) | BIT(3), "RowGroup");
    th_struct_end(r);
    return rc;
}

static int dec_column_order(th_reader *r, pq__arena *a, int32_t *out)
{
    return dec_union_id(r, "ColumnOrder", out);
}

int pq__decode_file_meta(th_reader *r, pq__arena *a, pq_file_meta *m)
{
    int16_t last = 0;
    th_field f;
    uint32_t seen = 0;
    int rc = th_struct_begin(r, "FileMetaData");
    while (!rc && !(rc = th_field_next(r, &last, &f)) && f.type != TH_STOP) {
        if (f.id > 0 && f.id < 32)
            seen |= BIT(f.id);
        switch (f.id) {
        case 1: rc = th_field_i32(r, &f, &m->version); break;
        case 2: DEC_STRUCT_LIST(r, a, &f, m->schema, m->n_schema, dec_schema_element); break;
        case 3: rc = th_field_i64(r, &f, &m->num_rows); break;
        case 4: DEC_STRUCT_LIST(r, a, &f, m->row_groups, m->n_row_groups, dec_row_group); break;
        case 5: DEC_STRUCT_LIST(r, a, &f, m->key_value_metadata, m->n_key_value_metadata, dec_key_value); break;
        case 6: rc = dec_string(r, a, &f, &m->created_by); break;
        case 7: DEC_STRUCT_LIST(r, a, &f, m->column_orders, m->n_column_orders, dec_column_order); break;
        case 8: m->has_encryption_algorithm = true; rc = th_skip(r, f.type); break;
        default: rc = th_skip(r, f.type);
        }
    }
    rc = require(r, seen, BIT(1) | BIT(2) | BIT(3) | BIT(4), "FileMetaData");
    th_struct_end(r);
    return rc;
}

/* Fails unless the reader consumed the whole buffer. */
static int at_end(th_reader *r, const char *name)
{
    if (r->rc || r->pos == r->len)
        return r->rc;
    return th_fail(r, "%zu bytes left after %s", r->len - r->pos, name);
}

int pq_file_meta_decode(const uint8_t *buf, size_t len, const char *what, uint64_t base,
                        pq_file_meta **out, pa_err *err)
{
    pq__arena *a = pq__arena_create();
    pq_file_meta *m = a ? pq__arena_alloc(a, sizeof *m) : NULL;
    if (!m) {
        pq__arena_destroy(a);
        return pa_error(err, PA_ENOMEM, "%s: out of memory decoding metadata", what);
    }
    m->arena_ = a;
    m->refs_ = 1;
    th_reader r;
    th_reader_init(&r, buf, len, what, base, err);
    int rc = pq__decode_file_meta(&r, a, m);
    if (!rc)
        rc = at_end(&r, "FileMetaData");
    if (rc) {
        pq__arena_destroy(a);
        return rc;
    }
    *out = m;
    return PA_OK;
}

/* ------------------------------------------------------------------ page headers */

static int dec_data_page_header(th_reader *r, pq_data_page_header *h)
{
    int16_t last = 0;
    th_field f;
    uint32_t seen = 0;
    int rc = th_struct_begin(r, "DataPageHeader");
    while (!rc && !(rc = th_field_next(r, &last, &f)) && f.type != TH_STOP) {
        if (f.id > 0 && f.id < 32)
            seen |= BIT(f.id);
        switch (f.id) {
        case 1: rc = th_field_i32(r, &f, &h->num_values); break;
        case 2: rc = th_field_i32(r, &f, &h->encoding); break;
        case 3: rc = th_field_i32(r, &f, &h->definition_level_encoding); break;
        case 4: rc = th_field_i32(r, &f, &h->repetition_level_encoding); break;
        case 5:
            rc = th_expect(r, &f, TH_STRUCT);
            if (!rc)
                rc = dec_statistics(r, NULL, &h->statistics);
            h->has_statistics = true;
            break;
        default: rc = th_skip(r, f.type);
        }
    }
    rc = require(r, seen, BIT(1) | BIT(2) | BIT(3) | BIT(4), "DataPageHeader");
    th_struct_end(r);
    return rc;
}

static int dec_data_page_header_v2(th_reader *r, pq_data_page_header_v2 *h)
{
    int16_t last = 0;
    th_field f;
    uint32_t seen = 0;
    int rc = th_struct_begin(r, "DataPageHeaderV2");
    h->is_compressed = true;   /* the Thrift default */
    while (!rc && !(rc = th_field_next(r, &last, &f)) && f.type != TH_STOP) {
        if (f.id > 0 && f.id < 32)
            seen |= BIT(f.id);
        switch (f.id) {
        case 1: rc = th_field_i32(r, &f, &h->num_values); break;
        case 2: rc = th_field_i32(r, &f, &h->num_nulls); break;
        case 3: rc = th_field_i32(r, &f, &h->num_rows); break;
        case 4: rc = th_field_i32(r, &f, &h->encoding); break;
        case 5: rc = th_field_i32(r, &f, &h->definition_levels_byte_length); break;
        case 6: rc = th_field_i32(r, &f, &h->repetition_levels_byte_length); break;
        case 7: rc = th_field_bool(r, &f, &h->is_compressed); h->has_is_compressed = true; break;
        case 8:
            rc = th_expect(r, &f, TH_STRUCT);
            if (!rc)
                rc = dec_statistics(r, NULL, &h->statistics);
            h->has_statistics = true;
            break;
        default: rc = th_skip(r, f.type);
        }
    }
    rc = require(r, seen, BIT(1) | BIT(2) | BIT(3) | BIT(4) | BIT(5) | BIT(6), "DataPageHeaderV2");
    th_struct_end(r);
    return rc;
}

static int dec_dictionary_page_header(th_reader *r, pq_dictionary_page_header *h)
{
    int16_t last = 0;
    th_field f;
    uint32_t seen = 0;
    int rc = th_struct_begin(r, "DictionaryPageHeader");
    while (!rc && !(rc = th_field_next(r, &last, &f)) && f.type != TH_STOP) {
        switch (f.id) {
        case 1: rc = th_field_i32(r, &f, &h->num_values); seen |= BIT(1); break;
        case 2: rc = th_field_i32(r, &f, &h->encoding); seen |= BIT(2); break;
        case 3: rc = th_field_bool(r, &f, &h->is_sorted); h->has_is_sorted = true; break;
        default: rc = th_skip(r, f.type);
        }
    }
    rc = require(r, seen, BIT(1) | BIT(2), "DictionaryPageHeader");
    th_struct_end(r);
    return rc;
}

int pq_page_header_decode(const uint8_t *buf, size_t len, const char *what, uint64_t base,
                          pq_page_header *out, size_t *header_len, pa_err *err)
{
    th_reader r;
    th_reader_init(&r, buf, len, what, base, err);
    pq_page_header h;
    memset(&h, 0, sizeof h);
    int16_t last = 0;
    th_field f;
    uint32_t seen = 0;
    int rc = th_struct_begin(&r, "PageHeader");
    while (!rc && !(rc = th_field_next(&r, &last, &f)) && f.type != TH_STOP) {
        if (f.id > 0 && f.id < 32)
            seen |= BIT(f.id);
        switch (f.id) {
        case 1: rc = th_field_i32(&r, &f, &h.type); break;
        case 2: rc = th_field_i32(&r, &f, &h.uncompressed_page_size); break;
        case 3: rc = th_field_i32(&r, &f, &h.compressed_page_size); break;
        case 4: rc = th_field_i32(&r, &f, &h.crc); h.has_crc = true; break;
        case 5:
            rc = th_expect(&r, &f, TH_STRUCT);
            if (!rc)
                rc = dec_data_page_header(&r, &h.data_page);
            h.has_data_page = true;
            break;
        case 6: rc = th_expect(&r, &f, TH_STRUCT); if (!rc) rc = th_skip(&r, f.type); h.has_index_page = true; break;
        case 7:
            rc = th_expect(&r, &f, TH_STRUCT);
            if (!rc)
                rc = dec_dictionary_page_header(&r, &h.dictionary_page);
            h.has_dictionary_page = true;
            break;
        case 8:
            rc = th_expect(&r, &f, TH_STRUCT);
            if (!rc)
                rc = dec_data_page_header_v2(&r, &h.data_page_v2);
            h.has_data_page_v2 = true;
            break;
        default: rc = th_skip(&r, f.type);
        }
    }
    rc = require(&r, seen, BIT(1) | BIT(2) | BIT(3), "PageHeader");
    if (!rc && (h.compressed_page_size < 0 || h.uncompressed_page_size < 0))
        rc = th_fail(&r, "negative page size (%d compressed, %d uncompressed)",
                     h.compressed_page_size, h.uncompressed_page_size);
    th_struct_end(&r);
    if (rc)
        return rc;
    *out = h;
    *header_len = r.pos;
    return PA_OK;
}

/* ------------------------------------------------------------------ page index */

static int dec_page_location(th_reader *r, pq__arena *a, pq_page_location *p)
{
    int16_t last = 0;
    th_field f;
    uint32_t seen = 0;
    int rc = th_struct_begin(r, "PageLocation");
    while (!rc && !(rc = th_field_next(r, &last, &f)) && f.type != TH_STOP) {
        switch (f.id) {
        case 1: rc = th_field_i64(r, &f, &p->offset); seen |= BIT(1); break;
        case 2: rc = th_field_i32(r, &f, &p->compressed_page_size); seen |= BIT(2); break;
        case 3: rc = th_field_i64(r, &f, &p->first_row_index); seen |= BIT(3); break;
        default: rc = th_skip(r, f.type);
        }
    }
    rc = require(r, seen, BIT(1) | BIT(2) | BIT(3), "PageLocation");
    th_struct_end(r);
    return rc;
}

int pq_offset_index_decode(const uint8_t *buf, size_t len, const char *what, uint64_t base,
                           pq_offset_index **out, pa_err *err)
{
    pq__arena *a = pq__arena_create();
    pq_offset_index *oi = a ? pq__arena_alloc(a, sizeof *oi) : NULL;
    if (!oi) {
        pq__arena_destroy(a);
        return pa_error(err, PA_ENOMEM, "%s: out of memory decoding metadata", what);
    }
    oi->arena_ = a;
    th_reader r;
    th_reader_init(&r, buf, len, what, base, err);
    int16_t last = 0;
    th_field f;
    uint32_t seen = 0;
    int rc = th_struct_begin(&r, "OffsetIndex");
    while (!rc && !(rc = th_field_next(&r, &last, &f)) && f.type != TH_STOP) {
        switch (f.id) {
        case 1:
            seen |= BIT(1);
            DEC_STRUCT_LIST(&r, a, &f, oi->page_locations, oi->n_page_locations, dec_page_location);
            break;
        case 2:
            rc = dec_list_i64(&r, a, &f, &oi->unencoded_byte_array_data_bytes,
                              &oi->n_unencoded_byte_array_data_bytes);
            break;
        default: rc = th_skip(&r, f.type);
        }
    }
    rc = require(&r, seen, BIT(1), "OffsetIndex");
    th_struct_end(&r);
    if (!rc)
        rc = at_end(&r, "OffsetIndex");
    if (rc) {
        pq__arena_destroy(a);
        return rc;
    }
    *out = oi;
    return PA_OK;
}

int pq_column_index_decode(const uint8_t *buf, size_t len, const char *what, uint64_t base,
                           pq_column_index **out, pa_err *err)
{
    pq__arena *a = pq__arena_create();
    pq_column_index *ci = a ? pq__arena_alloc(a, sizeof *ci) : NULL;
    if (!ci) {
        pq__arena_destroy(a);
        return pa_error(err, PA_ENOMEM, "%s: out of memory decoding metadata", what);
    }
    ci->arena_ = a;
    th_reader r;
    th_reader_init(&r, buf, len, what, base, err);
    int16_t last = 0;
    th_field f;
    uint32_t seen = 0;
    int rc = th_struct_begin(&r, "ColumnIndex");
    while (!rc && !(rc = th_field_next(&r, &last, &f)) && f.type != TH_STOP) {
        if (f.id > 0 && f.id < 32)
            seen |= BIT(f.id);
        switch (f.id) {
        case 1:
            rc = th_field_list(&r, &f, TH_BOOL_TRUE, &ci->n_pages);
            if (!rc && !(ci->null_pages = alloc_array(&r, a, ci->n_pages, sizeof(bool))))
                rc = r.rc;
            for (uint32_t i = 0; !rc && i < ci->n_pages; i++)
                rc = th_read_bool_elem(&r, &ci->null_pages[i]);
            break;
        case 2: rc = dec_list_bin(&r, a, &f, &ci->min_values, &ci->n_min_values); break;
        case 3: rc = dec_list_bin(&r, a, &f, &ci->max_values, &ci->n_max_values); break;
        case 4: rc = th_field_i32(&r, &f, &ci->boundary_order); break;
        case 5: rc = dec_list_i64(&r, a, &f, &ci->null_counts, &ci->n_null_counts); break;
        case 6: rc = dec_list_i64(&r, a, &f, &ci->repetition_level_histograms, &ci->n_repetition_level_histograms); break;
        case 7: rc = dec_list_i64(&r, a, &f, &ci->definition_level_histograms, &ci->n_definition_level_histograms); break;
        case 8: rc = dec_list_i64(&r, a, &f, &ci->nan_counts, &ci->n_nan_counts); break;
        default: rc = th_skip(&r, f.type);
        }
    }
    rc = require(&r, seen, BIT(1) | BIT(2) | BIT(3) | BIT(4), "ColumnIndex");
    th_struct_end(&r);
    if (!rc)
        rc = at_end(&r, "ColumnIndex");
    if (!rc && (ci->n_min_values != ci->n_pages || ci->n_max_values != ci->n_pages))
        rc = th_fail(&r, "ColumnIndex has %u null_pages but %u min and %u max values",
                     ci->n_pages, ci->n_min_values, ci->n_max_values);
    if (rc) {
        pq__arena_destroy(a);
        return rc;
    }
    *out = ci;
    return PA_OK;
}

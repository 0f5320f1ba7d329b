/*
 * pq_meta_encode.c - Thrift compact encoders of the parquet.thrift structs,
 * the mirror of pq_meta_decode.c (the Parquet writer emits FileMetaData,
 * PageHeader, ColumnIndex and OffsetIndex with these). Fields are written in
 * increasing id order, optional ones only when their has_ flag is set, their
 * pointer is non-NULL or (lists) their count is non-zero.
 */
#include "storage/pq_meta_int.h"

#include <string.h>

/* A required string: fails the writer with PA_EINVAL when NULL. */
static void req_string(th_writer *w, int16_t id, const char *s, const char *what)
{
    if (!s)
        th_wfail(w, PA_EINVAL, "cannot encode %s: required string is NULL", what);
    else
        th_write_field_string(w, id, s);
}

static void opt_bin(th_writer *w, int16_t id, pq_bin b)
{
    if (b.ptr)
        th_write_field_binary(w, id, b.ptr, b.len);
}

static void enc_statistics(th_writer *w, int16_t id, const pq_statistics *s)
{
    th_write_field(w, TH_STRUCT, id);
    th_write_struct_begin(w);
    opt_bin(w, 1, s->max);
    opt_bin(w, 2, s->min);
    if (s->has_null_count)
        th_write_field_i64(w, 3, s->null_count);
    if (s->has_distinct_count)
        th_write_field_i64(w, 4, s->distinct_count);
    opt_bin(w, 5, s->max_value);
    opt_bin(w, 6, s->min_value);
    if (s->has_is_max_value_exact)
        th_write_field_bool(w, 7, s->is_max_value_exact);
    if (s->has_is_min_value_exact)
        th_write_field_bool(w, 8, s->is_min_value_exact);
    if (s->has_nan_count)
        th_write_field_i64(w, 9, s->nan_count);
    th_write_struct_end(w);
}

/* An empty struct as the member `member` of a union field `id`. */
static void enc_union_empty(th_writer *w, int16_t id, int32_t member)
{
    th_write_field(w, TH_STRUCT, id);
    th_write_struct_begin(w);
    th_write_field(w, TH_STRUCT, (int16_t)member);
    th_write_struct_begin(w);
    th_write_struct_end(w);
    th_write_struct_end(w);
}

static void enc_logical_type(th_writer *w, int16_t id, const pq_logical_type *lt)
{
    th_write_field(w, TH_STRUCT, id);
    th_write_struct_begin(w);
    th_write_field(w, TH_STRUCT, (int16_t)lt->kind);
    th_write_struct_begin(w);
    switch (lt->kind) {
    case PQ_LT_DECIMAL:
        th_write_field_i32(w, 1, lt->scale);
        th_write_field_i32(w, 2, lt->precision);
        break;
    case PQ_LT_TIME:
    case PQ_LT_TIMESTAMP:
        th_write_field_bool(w, 1, lt->is_adjusted_to_utc);
        enc_union_empty(w, 2, lt->unit);
        break;
    case PQ_LT_INTEGER:
        th_write_field_i8(w, 1, lt->bit_width);
        th_write_field_bool(w, 2, lt->is_signed);
        break;
    default:
        break;   /* the other members are empty structs */
    }
    th_write_struct_end(w);
    th_write_struct_end(w);
}

static void enc_key_values(th_writer *w, int16_t id, const pq_key_value *kv, uint32_t n)
{
    if (!n)
        return;
    th_write_field(w, TH_LIST, id);
    th_write_list_begin(w, TH_STRUCT, n);
    for (uint32_t i = 0; i < n; i++) {
        th_write_struct_begin(w);
        req_string(w, 1, kv[i].key, "KeyValue.key");
        if (kv[i].value)
            th_write_field_string(w, 2, kv[i].value);
        th_write_struct_end(w);
    }
}

static void enc_schema_element(th_writer *w, const pq_schema_element *e)
{
    th_write_struct_begin(w);
    if (e->has_type)
        th_write_field_i32(w, 1, e->type);
    if (e->has_type_length)
        th_write_field_i32(w, 2, e->type_length);
    if (e->has_repetition)
        th_write_field_i32(w, 3, e->repetition);
    req_string(w, 4, e->name, "SchemaElement.name");
    if (e->has_num_children)
        th_write_field_i32(w, 5, e->num_children);
    if (e->has_converted_type)
        th_write_field_i32(w, 6, e->converted_type);
    if (e->has_scale)
        th_write_field_i32(w, 7, e->scale);
    if (e->has_precision)
        th_write_field_i32(w, 8, e->precision);
    if (e->has_field_id)
        th_write_field_i32(w, 9, e->field_id);
    if (e->logical.kind != PQ_LT_NONE)
        enc_logical_type(w, 10, &e->logical);
    th_write_struct_end(w);
}

static void enc_column_meta(th_writer *w, int16_t id, const pq_column_meta *m)
{
    th_write_field(w, TH_STRUCT, id);
    th_write_struct_begin(w);
    th_write_field_i32(w, 1, m->type);
    th_write_field(w, TH_LIST, 2);
    th_write_list_begin(w, TH_I32, m->n_encodings);
    for (uint32_t i = 0; i < m->n_encodings; i++)
        th_write_i32(w, m->encodings[i]);
    th_write_field(w, TH_LIST, 3);
    th_write_list_begin(w, TH_BINARY, m->n_path_in_schema);
    for (uint32_t i = 0; i < m->n_path_in_schema; i++) {
        if (!m->path_in_schema[i])
            th_wfail(w, PA_EINVAL, "cannot encode ColumnMetaData.path_in_schema: NULL element");
        else
            th_write_binary(w, m->path_in_schema[i], strlen(m->path_in_schema[i]));
    }
    th_write_field_i32(w, 4, m->codec);
    th_write_field_i64(w, 5, m->num_values);
    th_write_field_i64(w, 6, m->total_uncompressed_size);
    th_write_field_i64(w, 7, m->total_compressed_size);
    enc_key_values(w, 8, m->key_value_metadata, m->n_key_value_metadata);
    th_write_field_i64(w, 9, m->data_page_offset);
    if (m->has_index_page_offset)
        th_write_field_i64(w, 10, m->index_page_offset);
    if (m->has_dictionary_page_offset)
        th_write_field_i64(w, 11, m->dictionary_page_offset);
    if (m->has_statistics)
        enc_statistics(w, 12, &m->statistics);
    if (m->n_encoding_stats) {
        th_write_field(w, TH_LIST, 13);
        th_write_list_begin(w, TH_STRUCT, m->n_encoding_stats);
        for (uint32_t i = 0; i < m->n_encoding_stats; i++) {
            th_write_struct_begin(w);
            th_write_field_i32(w, 1, m->encoding_stats[i].page_type);
            th_write_field_i32(w, 2, m->encoding_stats[i].encoding);
            th_write_field_i32(w, 3, m->encoding_stats[i].count);
            th_write_struct_end(w);
        }
    }
    if (m->has_bloom_filter_offset)
        th_write_field_i64(w, 14, m->bloom_filter_offset);
    if (m->has_bloom_filter_length)
        th_write_field_i32(w, 15, m->bloom_filter_length);
    th_write_struct_end(w);
}

static void enc_column_chunk(th_writer *w, const pq_column_chunk *c)
{
    th_write_struct_begin(w);
    if (c->file_path)
        th_write_field_string(w, 1, c->file_path);
    th_write_field_i64(w, 2, c->file_offset);
    if (c->has_meta_data)
        enc_column_meta(w, 3, &c->meta_data);
    if (c->has_offset_index_offset)
        th_write_field_i64(w, 4, c->offset_index_offset);
    if (c->has_offset_index_length)
        th_write_field_i32(w, 5, c->offset_index_length);
    if (c->has_column_index_offset)
        th_write_field_i64(w, 6, c->column_index_offset);
    if (c->has_column_index_length)
        th_write_field_i32(w, 7, c->column_index_length);
    th_write_struct_end(w);
}

static void enc_row_group(th_writer *w, const pq_row_group *g)
{
    th_write_struct_begin(w);
    th_write_field(w, TH_LIST, 1);
    th_write_list_begin(w, TH_STRUCT, g->n_columns);
    for (uint32_t i = 0; i < g->n_columns; i++)
        enc_column_chunk(w, &g->columns[i]);
    th_write_field_i64(w, 2, g->total_byte_size);
    th_write_field_i64(w, 3, g->num_rows);
    if (g->n_sorting_columns) {
        th_write_field(w, TH_LIST, 4);
        th_write_list_begin(w, TH_STRUCT, g->n_sorting_columns);
        for (uint32_t i = 0; i < g->n_sorting_columns; i++) {
            th_write_struct_begin(w);
            th_write_field_i32(w, 1, g->sorting_columns[i].column_idx);
            th_write_field_bool(w, 2, g->sorting_columns[i].descending);
            th_write_field_bool(w, 3, g->sorting_columns[i].nulls_first);
            th_write_struct_end(w);
        }
    }
    if (g->has_file_offset)
        th_write_field_i64(w, 5, g->file_offset);
    if (g->has_total_compressed_size)
        th_write_field_i64(w, 6, g->total_compressed_size);
    if (g->has_ordinal)
        th_write_field_i16(w, 7, g->ordinal);
    th_write_struct_end(w);
}

int pq_file_meta_encode(const pq_file_meta *m, pq_buf *out, pa_err *err)
{
    th_writer w;
    th_writer_init(&w, out, err);
    th_write_struct_begin(&w);
    th_write_field_i32(&w, 1, m->version);
    th_write_field(&w, TH_LIST, 2);
    th_write_list_begin(&w, TH_STRUCT, m->n_schema);
    for (uint32_t i = 0; i < m->n_schema; i++)
        enc_schema_element(&w, &m->schema[i]);
    th_write_field_i64(&w, 3, m->num_rows);
    th_write_field(&w, TH_LIST, 4);
    th_write_list_begin(&w, TH_STRUCT, m->n_row_groups);
    for (uint32_t i = 0; i < m->n_row_groups; i++)
        enc_row_group(&w, &m->row_groups[i]);
    enc_key_values(&w, 5, m->key_value_metadata, m->n_key_value_metadata);
    if (m->created_by)
        th_write_field_string(&w, 6, m->created_by);
    if (m->n_column_orders) {
        th_write_field(&w, TH_LIST, 7);
        th_write_list_begin(&w, TH_STRUCT, m->n_column_orders);
        for (uint32_t i = 0; i < m->n_column_orders; i++) {
            /* ColumnOrder is a union of empty structs: write member id i. */
            th_write_struct_begin(&w);
            th_write_field(&w, TH_STRUCT, (int16_t)m->column_orders[i]);
            th_write_struct_begin(&w);
            th_write_struct_end(&w);
            th_write_struct_end(&w);
        }
    }
    th_write_struct_end(&w);
    return th_writer_finish(&w);
}

int pq_page_header_encode(const pq_page_header *h, pq_buf *out, pa_err *err)
{
    th_writer w;
    th_writer_init(&w, out, err);
    th_write_struct_begin(&w);
    th_write_field_i32(&w, 1, h->type);
    th_write_field_i32(&w, 2, h->uncompressed_page_size);
    th_write_field_i32(&w, 3, h->compressed_page_size);
    if (h->has_crc)
        th_write_field_i32(&w, 4, h->crc);
    if (h->has_data_page) {
        const pq_data_page_header *d = &h->data_page;
        th_write_field(&w, TH_STRUCT, 5);
        th_write_struct_begin(&w);
        th_write_field_i32(&w, 1, d->num_values);
        th_write_field_i32(&w, 2, d->encoding);
        th_write_field_i32(&w, 3, d->definition_level_encoding);
        th_write_field_i32(&w, 4, d->repetition_level_encoding);
        if (d->has_statistics)
            enc_statistics(&w, 5, &d->statistics);
        th_write_struct_end(&w);
    }
    if (h->has_index_page) {
        th_write_field(&w, TH_STRUCT, 6);
        th_write_struct_begin(&w);
        th_write_struct_end(&w);
    }
    if (h->has_dictionary_page) {
        const pq_dictionary_page_header *d = &h->dictionary_page;
        th_write_field(&w, TH_STRUCT, 7);
        th_write_struct_begin(&w);
        th_write_field_i32(&w, 1, d->num_values);
        th_write_field_i32(&w, 2, d->encoding);
        if (d->has_is_sorted)
            th_write_field_bool(&w, 3, d->is_sorted);
        th_write_struct_end(&w);
    }
    if (h->has_data_page_v2) {
        const pq_data_page_header_v2 *d = &h->data_page_v2;
        th_write_field(&w, TH_STRUCT, 8);
        th_write_struct_begin(&w);
        th_write_field_i32(&w, 1, d->num_values);
        th_write_field_i32(&w, 2, d->num_nulls);
        th_write_field_i32(&w, 3, d->num_rows);
        th_write_field_i32(&w, 4, d->encoding);
        th_write_field_i32(&w, 5, d->definition_levels_byte_length);
        th_write_field_i32(&w, 6, d->repetition_levels_byte_length);
        if (d->has_is_compressed)
            th_write_field_bool(&w, 7, d->is_compressed);
        if (d->has_statistics)
            enc_statistics(&w, 8, &d->statistics);
        th_write_struct_end(&w);
    }
    th_write_struct_end(&w);
    return th_writer_finish(&w);
}

static void enc_list_i64(th_writer *w, int16_t id, const int64_t *v, uint32_t n)
{
    if (!v)
        return;
    th_write_field(w, TH_LIST, id);
    th_write_list_begin(w, TH_I64, n);
    for (uint32_t i = 0; i < n; i++)
        th_write_i64(w, v[i]);
}

static void enc_list_bin(th_writer *w, int16_t id, const pq_bin *v, uint32_t n)
{
    th_write_field(w, TH_LIST, id);
    th_write_list_begin(w, TH_BINARY, n);
    for (uint32_t i = 0; i < n; i++)
        th_write_binary(w, v[i].ptr, v[i].ptr ? v[i].len : 0);
}

int pq_column_index_encode(const pq_column_index *ci, pq_buf *out, pa_err *err)
{
    th_writer w;
    th_writer_init(&w, out, err);
    if (ci->n_min_values != ci->n_pages || ci->n_max_values != ci->n_pages)
        th_wfail(&w, PA_EINVAL, "cannot encode ColumnIndex: %u pages but %u min and %u max values",
                 ci->n_pages, ci->n_min_values, ci->n_max_values);
    th_write_struct_begin(&w);
    th_write_field(&w, TH_LIST, 1);
    th_write_list_begin(&w, TH_BOOL_TRUE, ci->n_pages);
    for (uint32_t i = 0; i < ci->n_pages; i++)
        th_write_byte(&w, ci->null_pages[i] ? 1 : 0);
    enc_list_bin(&w, 2, ci->min_values, ci->n_min_values);
    enc_list_bin(&w, 3, ci->max_values, ci->n_max_values);
    th_write_field_i32(&w, 4, ci->boundary_order);
    enc_list_i64(&w, 5, ci->null_counts, ci->n_null_counts);
    enc_list_i64(&w, 6, ci->repetition_level_histograms, ci->n_repetition_level_histograms);
    enc_list_i64(&w, 7, ci->definition_level_histograms, ci->n_definition_level_histograms);
    enc_list_i64(&w, 8, ci->nan_counts, ci->n_nan_counts);
    th_write_struct_end(&w);
    return th_writer_finish(&w);
}

int pq_offset_index_encode(const pq_offset_index *oi, pq_buf *out, pa_err *err)
{
    th_writer w;
    th_writer_init(&w, out, err);
    th_write_struct_begin(&w);
    th_write_field(&w, TH_LIST, 1);
    th_write_list_begin(&w, TH_STRUCT, oi->n_page_locations);
    for (uint32_t i = 0; i < oi->n_page_locations; i++) {
        const pq_page_location *p = &oi->page_locations[i];
        th_write_struct_begin(&w);
        th_write_field_i64(&w, 1, p->offset);
        th_write_field_i32(&w, 2, p->compressed_page_size);
        th_write_field_i64(&w, 3, p->first_row_index);
        th_write_struct_end(&w);
    }
    enc_list_i64(&w, 2, oi->unencoded_byte_array_data_bytes, oi->n_unencoded_byte_array_data_bytes);
    th_write_struct_end(&w);
    return th_writer_finish(&w);
}

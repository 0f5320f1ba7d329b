/*
 * pq_meta_names.c - names of the Parquet enum values, generated from the
 * X-macro lists in storage.h.
 */
#include "storage/storage.h"

#define NAME_CASE(name, v) \
    case v:                \
        return #name;

#define NAME_FN(fn, LIST)              \
    const char *fn(int32_t v)          \
    {                                  \
        switch (v) {                   \
            LIST(NAME_CASE)            \
        default:                       \
            return NULL;               \
        }                              \
    }

NAME_FN(pq_physical_type_name, PQ_PHYSICAL_TYPE_LIST)
NAME_FN(pq_converted_type_name, PQ_CONVERTED_TYPE_LIST)
NAME_FN(pq_repetition_name, PQ_REPETITION_LIST)
NAME_FN(pq_encoding_name, PQ_ENCODING_LIST)
NAME_FN(pq_codec_name, PQ_CODEC_LIST)
NAME_FN(pq_page_type_name, PQ_PAGE_TYPE_LIST)
NAME_FN(pq_boundary_order_name, PQ_BOUNDARY_ORDER_LIST)
NAME_FN(pq_logical_kind_name, PQ_LOGICAL_TYPE_LIST)
NAME_FN(pq_time_unit_name, PQ_TIME_UNIT_LIST)

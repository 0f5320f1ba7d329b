/*
 * storage.h - Pista's storage layer: the whole public surface of src/storage.
 *
 * Sections, in the order data flows (DESIGN.md, "Storage path"):
 *   1. Parquet enums and their names       (pq_meta_names.c)
 *   2. Parquet metadata structs            (decoded Thrift, pq_meta_decode.c / _encode.c)
 *   3. Footer reading and validation       (pq_meta_footer.c)
 *   4. Schema mapping to engine types      (pq_schema.c)
 *   5. Process-wide metadata cache         (pq_meta_cache.c)
 *   6. Page headers of a column chunk      (pq_meta_pages.c)
 *   7. I/O engine: io_uring or pread threads into pinned buffers (io*.c)
 *   8. Scan: files -> pruned, coalesced reads -> decoded chunks (scan*.c)
 *   9. Writer: engine columns -> Parquet files (writer*.c)
 *
 * Parquet names use the prefix pq_. Enumerated Thrift values (physical type,
 * encoding, codec, ...) are kept as the raw int32 of the file so that values
 * this build does not know survive a decode/encode round trip; the *_name()
 * functions turn them into text.
 */
#ifndef PISTA_STORAGE_H
#define PISTA_STORAGE_H

#include "core/core.h"
#include "device/device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* =============================================== 1. Parquet enums (parquet.thrift) */

#define PQ_PHYSICAL_TYPE_LIST(X)                                              \
    X(BOOLEAN, 0) X(INT32, 1) X(INT64, 2) X(INT96, 3) X(FLOAT, 4) X(DOUBLE, 5) \
    X(BYTE_ARRAY, 6) X(FIXED_LEN_BYTE_ARRAY, 7)
#define PQ_CONVERTED_TYPE_LIST(X)                                             \
    X(UTF8, 0) X(MAP, 1) X(MAP_KEY_VALUE, 2) X(LIST, 3) X(ENUM, 4)            \
    X(DECIMAL, 5) X(DATE, 6) X(TIME_MILLIS, 7) X(TIME_MICROS, 8)              \
    X(TIMESTAMP_MILLIS, 9) X(TIMESTAMP_MICROS, 10) X(UINT_8, 11)              \
    X(UINT_16, 12) X(UINT_32, 13) X(UINT_64, 14) X(INT_8, 15) X(INT_16, 16)   \
    X(INT_32, 17) X(INT_64, 18) X(JSON, 19) X(BSON, 20) X(INTERVAL, 21)
#define PQ_REPETITION_LIST(X) X(REQUIRED, 0) X(OPTIONAL, 1) X(REPEATED, 2) X(VECTOR, 3)
#define PQ_ENCODING_LIST(X)                                                   \
    X(PLAIN, 0) X(PLAIN_DICTIONARY, 2) X(RLE, 3) X(BIT_PACKED, 4)             \
    X(DELTA_BINARY_PACKED, 5) X(DELTA_LENGTH_BYTE_ARRAY, 6)                   \
    X(DELTA_BYTE_ARRAY, 7) X(RLE_DICTIONARY, 8) X(BYTE_STREAM_SPLIT, 9)
#define PQ_CODEC_LIST(X)                                                      \
    X(UNCOMPRESSED, 0) X(SNAPPY, 1) X(GZIP, 2) X(LZO, 3) X(BROTLI, 4)         \
    X(LZ4, 5) X(ZSTD, 6) X(LZ4_RAW, 7)
#define PQ_PAGE_TYPE_LIST(X)                                                  \
    X(DATA_PAGE, 0) X(INDEX_PAGE, 1) X(DICTIONARY_PAGE, 2) X(DATA_PAGE_V2, 3)
#define PQ_BOUNDARY_ORDER_LIST(X) X(UNORDERED, 0) X(ASCENDING, 1) X(DESCENDING, 2)
/* LogicalType is a Thrift union: the value is the id of the field that is set. */
#define PQ_LOGICAL_TYPE_LIST(X)                                               \
    X(STRING, 1) X(MAP, 2) X(LIST, 3) X(ENUM, 4) X(DECIMAL, 5) X(DATE, 6)     \
    X(TIME, 7) X(TIMESTAMP, 8) X(INTEGER, 10) X(UNKNOWN, 11) X(JSON, 12)      \
    X(BSON, 13) X(UUID, 14) X(FLOAT16, 15) X(VARIANT, 16) X(GEOMETRY, 17)     \
    X(GEOGRAPHY, 18) X(VECTOR, 19)
/* TimeUnit union (TIME and TIMESTAMP). */
#define PQ_TIME_UNIT_LIST(X) X(MILLIS, 1) X(MICROS, 2) X(NANOS, 3)

#define PQ__ENUM(prefix, name, v) prefix##name = v,
#define PQ__E_T(n, v) PQ__ENUM(PQ_T_, n, v)
#define PQ__E_CT(n, v) PQ__ENUM(PQ_CT_, n, v)
#define PQ__E_REP(n, v) PQ__ENUM(PQ_REP_, n, v)
#define PQ__E_ENC(n, v) PQ__ENUM(PQ_ENC_, n, v)
#define PQ__E_CODEC(n, v) PQ__ENUM(PQ_CODEC_, n, v)
#define PQ__E_PAGE(n, v) PQ__ENUM(PQ_PAGE_, n, v)
#define PQ__E_BO(n, v) PQ__ENUM(PQ_BO_, n, v)
#define PQ__E_LT(n, v) PQ__ENUM(PQ_LT_, n, v)
#define PQ__E_TU(n, v) PQ__ENUM(PQ_TU_, n, v)
enum pq_physical_type { PQ_PHYSICAL_TYPE_LIST(PQ__E_T) };
enum pq_converted_type { PQ_CONVERTED_TYPE_LIST(PQ__E_CT) };
enum pq_repetition { PQ_REPETITION_LIST(PQ__E_REP) };
enum pq_encoding { PQ_ENCODING_LIST(PQ__E_ENC) };
enum pq_codec { PQ_CODEC_LIST(PQ__E_CODEC) };
enum pq_page_type { PQ_PAGE_TYPE_LIST(PQ__E_PAGE) };
enum pq_boundary_order { PQ_BOUNDARY_ORDER_LIST(PQ__E_BO) };
enum pq_logical_kind { PQ_LT_NONE = 0, PQ_LOGICAL_TYPE_LIST(PQ__E_LT) };
enum pq_time_unit { PQ_TU_NONE = 0, PQ_TIME_UNIT_LIST(PQ__E_TU) };

/* "INT32", "SNAPPY", ... or NULL for a value this build does not know. */
const char *pq_physical_type_name(int32_t v);
const char *pq_converted_type_name(int32_t v);
const char *pq_repetition_name(int32_t v);
const char *pq_encoding_name(int32_t v);
const char *pq_codec_name(int32_t v);
const char *pq_page_type_name(int32_t v);
const char *pq_boundary_order_name(int32_t v);
const char *pq_logical_kind_name(int32_t v);
const char *pq_time_unit_name(int32_t v);

/* ================================================= 2. Parquet metadata structs
 *
 * Plain C images of the parquet.thrift structs. Optional scalar fields carry a
 * has_<field> flag; optional binary fields are a pq_bin whose ptr is NULL when
 * absent; strings are NUL-terminated, NULL when absent. Lists are a pointer
 * and a count. Field ids are in the comments.
 *
 * Ownership: a decoded pq_file_meta, pq_column_index or pq_offset_index owns
 * all its memory (one arena), freed by its release/destroy function. A decoded
 * pq_page_header allocates nothing: its binaries point into the input buffer.
 * Encoders only read the structs, so a writer may fill them from its own memory.
 */

typedef struct pq_bin {
    const uint8_t *ptr;   /* NULL = absent; non-NULL (maybe len 0) = present */
    uint32_t len;
} pq_bin;

typedef struct pq_statistics {
    pq_bin max, min;               /* 1, 2: deprecated, signed order */
    int64_t null_count;            /* 3 */
    int64_t distinct_count;        /* 4 */
    pq_bin max_value, min_value;   /* 5, 6: order given by column_orders */
    bool is_max_value_exact;       /* 7 */
    bool is_min_value_exact;       /* 8 */
    int64_t nan_count;             /* 9 */
    bool has_null_count, has_distinct_count, has_is_max_value_exact,
         has_is_min_value_exact, has_nan_count;
} pq_statistics;

typedef struct pq_logical_type {
    int32_t kind;          /* enum pq_logical_kind; PQ_LT_NONE = absent */
    int32_t scale;         /* DECIMAL: DecimalType 1 */
    int32_t precision;     /* DECIMAL: DecimalType 2 */
    bool is_adjusted_to_utc; /* TIME, TIMESTAMP: field 1 */
    int32_t unit;          /* TIME, TIMESTAMP: enum pq_time_unit (field 2) */
    int8_t bit_width;      /* INTEGER: IntType 1 */
    bool is_signed;        /* INTEGER: IntType 2 */
} pq_logical_type;

typedef struct pq_schema_element {
    int32_t type;            /* 1: enum pq_physical_type (leaves only) */
    int32_t type_length;     /* 2 */
    int32_t repetition;      /* 3: enum pq_repetition */
    const char *name;        /* 4: required */
    int32_t num_children;    /* 5: groups only */
    int32_t converted_type;  /* 6: enum pq_converted_type */
    int32_t scale;           /* 7 */
    int32_t precision;       /* 8 */
    int32_t field_id;        /* 9 */
    pq_logical_type logical; /* 10 */
    bool has_type, has_type_length, has_repetition, has_num_children,
         has_converted_type, has_scale, has_precision, has_field_id;
} pq_schema_element;

typedef struct pq_key_value {
    const char *key;         /* 1: required */
    const char *value;       /* 2: NULL = absent */
} pq_key_value;

typedef struct pq_page_encoding_stats {
    int32_t page_type;       /* 1 */
    int32_t encoding;        /* 2 */
    int32_t count;           /* 3 */
} pq_page_encoding_stats;

typedef struct pq_column_meta {
    int32_t type;                      /* 1 */
    int32_t *encodings;                /* 2 */
    uint32_t n_encodings;
    const char **path_in_schema;       /* 3 */
    uint32_t n_path_in_schema;
    int32_t codec;                     /* 4 */
    int64_t num_values;                /* 5 */
    int64_t total_uncompressed_size;   /* 6 */
    int64_t total_compressed_size;     /* 7 */
    pq_key_value *key_value_metadata;  /* 8 */
    uint32_t n_key_value_metadata;
    int64_t data_page_offset;          /* 9 */
    int64_t index_page_offset;         /* 10 */
    int64_t dictionary_page_offset;    /* 11 */
    pq_statistics statistics;          /* 12 */
    pq_page_encoding_stats *encoding_stats; /* 13 */
    uint32_t n_encoding_stats;
    int64_t bloom_filter_offset;       /* 14 */
    int32_t bloom_filter_length;       /* 15 */
    bool has_index_page_offset, has_dictionary_page_offset, has_statistics,
         has_bloom_filter_offset, has_bloom_filter_length;
} pq_column_meta;

typedef struct pq_column_chunk {
    const char *file_path;             /* 1: NULL = this file */
    int64_t file_offset;               /* 2: deprecated */
    pq_column_meta meta_data;          /* 3 */
    int64_t offset_index_offset;       /* 4 */
    int32_t offset_index_length;       /* 5 */
    int64_t column_index_offset;       /* 6 */
    int32_t column_index_length;       /* 7 */
    bool has_meta_data, has_offset_index_offset, has_offset_index_length,
         has_column_index_offset, has_column_index_length;
    bool has_crypto_metadata;          /* 8/9 seen (encrypted column; not decoded) */
} pq_column_chunk;

typedef struct pq_sorting_column {
    int32_t column_idx;                /* 1 */
    bool descending;                   /* 2 */
    bool nulls_first;                  /* 3 */
} pq_sorting_column;

typedef struct pq_row_group {
    pq_column_chunk *columns;          /* 1 */
    uint32_t n_columns;
    int64_t total_byte_size;           /* 2 */
    int64_t num_rows;                  /* 3 */
    pq_sorting_column *sorting_columns; /* 4 */
    uint32_t n_sorting_columns;
    int64_t file_offset;               /* 5 */
    int64_t total_compressed_size;     /* 6 */
    int16_t ordinal;                   /* 7 */
    bool has_file_offset, has_total_compressed_size, has_ordinal;
} pq_row_group;

/* A leaf column of the schema tree, computed by validation (pq_footer_*). */
typedef struct pq_leaf {
    uint32_t schema_index;     /* into schema[] */
    const char *path;          /* dotted path, "a.b.c"; the name for flat schemas */
    int16_t max_def_level;
    int16_t max_rep_level;
} pq_leaf;

typedef struct pq_file_meta {
    int32_t version;                   /* 1 */
    pq_schema_element *schema;         /* 2: depth-first, schema[0] is the root */
    uint32_t n_schema;
    int64_t num_rows;                  /* 3 */
    pq_row_group *row_groups;          /* 4 */
    uint32_t n_row_groups;
    pq_key_value *key_value_metadata;  /* 5 */
    uint32_t n_key_value_metadata;
    const char *created_by;            /* 6 */
    int32_t *column_orders;            /* 7: union field id per leaf (1 = TYPE_ORDER) */
    uint32_t n_column_orders;
    bool has_encryption_algorithm;     /* 8 seen (not decoded) */

    /* Filled by the footer reader (zero when decoded from a buffer alone). */
    const char *path;                  /* the file, as given */
    uint64_t file_size;
    int64_t mtime_ns;
    uint32_t footer_len;               /* bytes of the Thrift FileMetaData */
    pq_leaf *leaves;                   /* validated leaf columns */
    uint32_t n_leaves;

    struct pq__arena *arena_;          /* internal: owns everything above */
    int refs_;                         /* internal: reference count */
} pq_file_meta;

typedef struct pq_data_page_header {
    int32_t num_values;                /* 1: including nulls */
    int32_t encoding;                  /* 2 */
    int32_t definition_level_encoding; /* 3 */
    int32_t repetition_level_encoding; /* 4 */
    pq_statistics statistics;          /* 5 */
    bool has_statistics;
} pq_data_page_header;

typedef struct pq_data_page_header_v2 {
    int32_t num_values;                /* 1 */
    int32_t num_nulls;                 /* 2 */
    int32_t num_rows;                  /* 3 */
    int32_t encoding;                  /* 4 */
    int32_t definition_levels_byte_length; /* 5 */
    int32_t repetition_levels_byte_length; /* 6 */
    bool is_compressed;                /* 7: true when absent */
    pq_statistics statistics;          /* 8 */
    bool has_is_compressed, has_statistics;
} pq_data_page_header_v2;

typedef struct pq_dictionary_page_header {
    int32_t num_values;                /* 1 */
    int32_t encoding;                  /* 2 */
    bool is_sorted;                    /* 3 */
    bool has_is_sorted;
} pq_dictionary_page_header;

typedef struct pq_page_header {
    int32_t type;                      /* 1: enum pq_page_type */
    int32_t uncompressed_page_size;    /* 2 */
    int32_t compressed_page_size;      /* 3 */
    int32_t crc;                       /* 4 */
    pq_data_page_header data_page;     /* 5 */
    pq_dictionary_page_header dictionary_page; /* 7 */
    pq_data_page_header_v2 data_page_v2; /* 8 */
    bool has_crc, has_data_page, has_index_page /* 6, empty */,
         has_dictionary_page, has_data_page_v2;
} pq_page_header;

typedef struct pq_page_location {
    int64_t offset;                    /* 1: file offset of the page header */
    int32_t compressed_page_size;      /* 2: header included */
    int64_t first_row_index;           /* 3 */
} pq_page_location;

typedef struct pq_offset_index {
    pq_page_location *page_locations;  /* 1 */
    uint32_t n_page_locations;
    int64_t *unencoded_byte_array_data_bytes; /* 2: NULL = absent */
    uint32_t n_unencoded_byte_array_data_bytes;
    struct pq__arena *arena_;
} pq_offset_index;

typedef struct pq_column_index {
    bool *null_pages;                  /* 1 */
    uint32_t n_pages;                  /* length of null_pages */
    pq_bin *min_values;                /* 2 */
    uint32_t n_min_values;
    pq_bin *max_values;                /* 3 */
    uint32_t n_max_values;
    int32_t boundary_order;            /* 4 */
    int64_t *null_counts;              /* 5: NULL = absent */
    uint32_t n_null_counts;
    int64_t *repetition_level_histograms; /* 6 */
    uint32_t n_repetition_level_histograms;
    int64_t *definition_level_histograms; /* 7 */
    uint32_t n_definition_level_histograms;
    int64_t *nan_counts;               /* 8 */
    uint32_t n_nan_counts;
    struct pq__arena *arena_;
} pq_column_index;

/* A growable byte buffer the encoders append to. Free with pq_buf_free. */
typedef struct pq_buf {
    uint8_t *data;
    size_t len, cap;
} pq_buf;
void pq_buf_free(pq_buf *b);

/* Decoders. `what` names the source in error messages ("footer of x.parquet"),
 * `base` is the file offset of buf[0] so messages give file byte offsets.
 * Corrupt or truncated input gives PA_ECORRUPT naming what, where (byte offset)
 * and the struct path; a missing required field is corrupt too. Unknown fields
 * are skipped. On error *out is left unchanged and nothing is leaked. */

/* Decodes the whole of buf as a FileMetaData (trailing bytes are corrupt).
 * The result has reference count 1; free with pq_file_meta_release. No
 * validation beyond the Thrift level (see pq_footer_validate). */
int pq_file_meta_decode(const uint8_t *buf, size_t len, const char *what, uint64_t base,
                        pq_file_meta **out, pa_err *err);
/* Take / drop a reference (thread-safe); the last release frees everything. */
void pq_file_meta_retain(const pq_file_meta *m);
void pq_file_meta_release(const pq_file_meta *m);

/* Decodes one PageHeader from the start of buf; *header_len = its bytes.
 * Binaries in statistics point into buf. Allocates nothing. */
int pq_page_header_decode(const uint8_t *buf, size_t len, const char *what, uint64_t base,
                          pq_page_header *out, size_t *header_len, pa_err *err);
/* Decode the whole of buf; free with the matching _destroy (NULL is ignored). */
int pq_column_index_decode(const uint8_t *buf, size_t len, const char *what, uint64_t base,
                           pq_column_index **out, pa_err *err);
void pq_column_index_destroy(pq_column_index *ci);
int pq_offset_index_decode(const uint8_t *buf, size_t len, const char *what, uint64_t base,
                           pq_offset_index **out, pa_err *err);
void pq_offset_index_destroy(pq_offset_index *oi);

/* Encoders: append the Thrift compact encoding to *out. On error (PA_ENOMEM,
 * or PA_EINVAL for a struct that cannot be encoded, e.g. a required string
 * that is NULL) out->len is restored to its value on entry. Fields whose has_
 * flag is false, NULL strings and absent binaries are not written. */
int pq_file_meta_encode(const pq_file_meta *m, pq_buf *out, pa_err *err);
int pq_page_header_encode(const pq_page_header *h, pq_buf *out, pa_err *err);
int pq_column_index_encode(const pq_column_index *ci, pq_buf *out, pa_err *err);
int pq_offset_index_encode(const pq_offset_index *oi, pq_buf *out, pa_err *err);

/* ========================================== 3. Footer reading and validation
 *
 * File layout: "PAR1" <column chunks> [page index] <FileMetaData>
 * <footer length: u32 LE> "PAR1". An encrypted footer ends in "PARE".
 */

/* Opens path, checks both magics, reads and decodes the footer and validates
 * it. Errors name the file: PA_EIO (cannot open/read), PA_ECORRUPT (not a
 * Parquet file, truncated, footer length bigger than the file, bad Thrift,
 * inconsistent metadata), PA_EUNSUPPORTED (encrypted footer or columns). The
 * result has reference count 1 (free with pq_file_meta_release). */
int pq_footer_read(const char *path, pq_file_meta **out, pa_err *err);

/* Same from the last `tail_len` bytes of a file of `file_size` bytes (tail may
 * be the whole file). Returns PA_EBUSY, with *need set to the number of tail
 * bytes required, when the tail is too short to hold the footer: the caller
 * reads that many and calls again. `name` is used in messages. */
int pq_footer_parse(const uint8_t *tail, size_t tail_len, uint64_t file_size, const char *name,
                    pq_file_meta **out, size_t *need, pa_err *err);

/* Checks a decoded FileMetaData against itself and the file size: schema tree
 * well formed (num_children), names present, one column chunk per leaf in
 * every row group with matching type and path, row counts that add up, every
 * chunk and page-index range inside [4, file_size - 8 - footer_len). Fills
 * m->leaves. PA_ECORRUPT / PA_EUNSUPPORTED with a message naming `name`. */
int pq_footer_validate(pq_file_meta *m, uint64_t file_size, const char *name, pa_err *err);

/* ====================================== 4. Schema mapping to engine types
 *
 * INT32 -> INTEGER, DATE (DATE), DECIMAL(p,s) (DECIMAL), TIME(MILLIS) ->
 * TIME; INT64 -> BIGINT, DECIMAL(p,s), TIMESTAMP(MILLIS or MICROS) ->
 * TIMESTAMP (isAdjustedToUTC false, and the legacy ConvertedType
 * TIMESTAMP_MILLIS/_MICROS alone, as DuckDB reads them) or TIMESTAMPTZ, in
 * microseconds (the scan scales MILLIS; a value past int64 is
 * PA_EOVERFLOW), TIMESTAMP(NANOS) -> TIMESTAMP_NS, TIME(MICROS) -> TIME;
 * INT96 (Impala timestamps) -> TIMESTAMP_NS, exact (its statistics are
 * never used); BOOLEAN; FLOAT, DOUBLE -> DOUBLE; BYTE_ARRAY
 * (STRING/UTF8/ENUM/JSON/none) -> VARCHAR; FIXED_LEN_BYTE_ARRAY or
 * BYTE_ARRAY DECIMAL -> DECIMAL; FIXED_LEN_BYTE_ARRAY(12) INTERVAL ->
 * INTERVAL (milliseconds to microseconds). TIME(NANOS), decimals wider than
 * 38 digits, nested and repeated columns: PA_EUNSUPPORTED naming the column.
 */
typedef struct pq_column_desc {
    const char *name;           /* leaf path (points into the pq_file_meta) */
    uint32_t leaf_index;        /* index into row_group.columns[] */
    uint32_t schema_index;      /* index into schema[] */
    int32_t physical_type;      /* enum pq_physical_type */
    int32_t type_length;        /* FIXED_LEN_BYTE_ARRAY width, else 0 */
    bool nullable;              /* OPTIONAL: definition levels present */
    pa_type type;               /* engine type */
    int32_t time_unit;          /* TIMESTAMP and TIME columns: stored unit (pq_time_unit), else
                                 * 0; MILLIS values are scaled to microseconds by the scan */
    bool uint64;                /* INT64 annotated UINT_64: DECIMAL(20,0) in the engine (the scan
                                 * decodes the 8 bytes and widens them, unsigned) */
    /* pq_schema_map: why the column cannot be read ("" when it can): a
     * nested group (leaf_index its first leaf) or a leaf of a type the
     * engine lacks (type then VARCHAR, a placeholder). */
    char unsupported[192];
} pq_column_desc;

/* Engine type of one schema element (a leaf). PA_EUNSUPPORTED with a message
 * naming the column (`name`) when it has none. */
int pq_element_type(const pq_schema_element *e, const char *name, pq_column_desc *out,
                    pa_err *err);
/* Maps the top-level columns of a validated meta (the root's children, in
 * order): *out is an array of *n entries the caller frees with pa_free;
 * names point into m. A column that cannot be read (nested, repeated, or
 * of an unsupported type) is mapped with `unsupported` saying why, so the
 * file's other columns stay readable; only a corrupt schema is an error. */
int pq_schema_map(const pq_file_meta *m, pq_column_desc **out, uint32_t *n, pa_err *err);

/* Text of a PLAIN-encoded statistics value (no length prefix for byte
 * arrays) of column c: integers, DATE as YYYY-MM-DD, DECIMAL with its scale
 * ("904.00"), FLOAT/DOUBLE as the shortest text that reads back exactly
 * ("0.0", "148.5"), TIMESTAMP as "2020-10-01 12:00:00.123" (TIMESTAMPTZ with
 * "+00", TIMESTAMP_NS and INT96 to the nanosecond), TIME as "12:00:00.5", BOOLEAN true/false, VARCHAR as is (bytes
 * outside printable ASCII become \xNN). Returns buf; "?" when the value's
 * size does not fit the type. */
const char *pq_stat_format(const pq_column_desc *c, pq_bin v, char *buf, size_t cap);

/* ============================================ 5. Process-wide metadata cache
 *
 * Every file's footer is read and parsed once per (path, size, mtime) and
 * shared by every scan: pq_meta_get returns a reference the caller drops with
 * pq_file_meta_release. Concurrent first requests for one file wait for a
 * single parse. A file whose size or mtime changed is parsed again. Errors
 * are not cached. Thread-safe.
 */
int pq_meta_get(const char *path, const pq_file_meta **out, pa_err *err);
/* Drops the cache's references (holders keep theirs). */
void pq_meta_cache_clear(void);
typedef struct pq_meta_cache_stats {
    uint64_t hits, misses, entries, parses;
} pq_meta_cache_stats;
void pq_meta_cache_stats_get(pq_meta_cache_stats *out);

/* ======================================= 6. Page headers of a column chunk */

/* First byte of a column chunk: the dictionary page when there is one, else
 * the first data page. */
int64_t pq_chunk_start(const pq_column_meta *cm);

typedef struct pq_page_info {
    pq_page_header header;      /* binaries point into the chunk buffer */
    uint64_t offset;            /* file offset of the page header */
    uint32_t header_len;        /* bytes of the Thrift PageHeader */
} pq_page_info;

/* Walks the pages of a column chunk whose bytes [pq_chunk_start(cm),
 * + total_compressed_size) are in `chunk`, decoding every PageHeader. Checks
 * that pages tile the chunk exactly, that a dictionary page comes first and
 * only once, and that the data pages hold cm->num_values values. *pages (an
 * array of *n_pages entries) is freed by the caller with pa_free. */
int pq_chunk_pages(const pq_column_meta *cm, const uint8_t *chunk, size_t chunk_len,
                   const char *what, pq_page_info **pages, uint32_t *n_pages, pa_err *err);
/* Reads the chunk of row group rg, leaf column col of m->path and walks it.
 * *chunk_out (freed with pa_free by the caller) holds the bytes the headers'
 * binaries point into. */
int pq_chunk_pages_read(const pq_file_meta *m, uint32_t rg, uint32_t col, uint8_t **chunk_out,
                        pq_page_info **pages, uint32_t *n_pages, pa_err *err);

/* ================================================ 7. I/O engine
 *
 * the I/O engine: the storage module's read path (DESIGN.md, "Storage
 * path" and rule 5, "reader combining").
 *
 * One engine per process, shared by every scan of a query: scans submit reads
 * (file, offset, length, a caller-owned destination, normally pinned memory
 * from dv_host_alloc) from any thread; the engine runs at most `queue_depth`
 * of them at once on one of two backends, io_uring (one ring, one completion
 * thread) or a pool of pread threads, and hands each finished request to its
 * completion target: a callback, a bounded pa_queue (a full queue stalls the
 * engine: back-pressure, DESIGN.md rule 4), or a blocking batch wait.
 *
 * Large requests are cut into pieces of at most `max_io_size` bytes that run
 * in parallel; a request completes when all its pieces did. Short reads are
 * retried; end of file inside a request is PA_EIO. Every completed request
 * adds to PA_CTR_BYTES_READ and PA_CTR_READ_REQUESTS.
 */

typedef struct io_engine io_engine;
typedef struct io_file io_file;
typedef struct io_request io_request;

/* Alignment of O_DIRECT reads (offsets, lengths and buffers). 4096 serves
 * both 512-byte and 4 KiB logical-sector devices. */
#define IO_DIRECT_ALIGN 4096u

/* ---------------------------------------------------------------- engine */

typedef struct io_options {
    const char *backend;   /* "auto" (NULL too), "uring" or "pread" */
    int queue_depth;       /* pieces in flight at once; 0 = 64 */
    int threads;           /* pread backend threads; 0 = 8 (ignored by uring) */
    size_t max_io_size;    /* largest single read; a multiple of 4096, 0 = 1 MiB */
    bool direct;           /* files opened with IO_OPEN_DEFAULT use O_DIRECT */
} io_options;

/* Create an engine. "auto" takes io_uring when the kernel allows it (the
 * syscall may fail with ENOSYS or EPERM in containers) and the pread pool
 * otherwise, saying why in io_engine_note(). An explicit "uring" that cannot
 * start is PA_EUNSUPPORTED, never a silent fallback. opt may be NULL
 * (defaults). The caller frees the engine with io_engine_destroy. */
int io_engine_create(const io_options *opt, io_engine **out, pa_err *err);

/* Stop the engine. Requests not yet started complete with PA_ECANCELED
 * through their targets; reads in flight finish and complete normally; then
 * the threads exit and every file still open is closed (io_file handles
 * become invalid). Blocks until all of that happened: a completion pushed
 * onto a full pa_queue nobody pops would wait forever, so close such queues
 * first (a push onto a closed queue fails at once and the request is dropped). */
void io_engine_destroy(io_engine *e);

/* The process-wide engine every scan shares, created on first use from the
 * environment: PISTA_IO_BACKEND (auto|uring|pread), PISTA_IO_DEPTH,
 * PISTA_IO_THREADS, PISTA_IO_DIRECT (1 = O_DIRECT). Thread-safe; the engine
 * lives until io_engine_shared_shutdown. */
int io_engine_shared(io_engine **out, pa_err *err);
/* Destroy the shared engine (if created); a later io_engine_shared makes a
 * new one. Call when no scan uses it (program exit, end of a test). */
void io_engine_shared_shutdown(void);

/* "uring" or "pread". */
const char *io_engine_backend(const io_engine *e);
/* How the backend was chosen, e.g. "auto: io_uring unavailable
 * (io_uring_queue_init: Operation not permitted); using pread". */
const char *io_engine_note(const io_engine *e);
void io_engine_get_options(const io_engine *e, io_options *out);

typedef struct io_stats {
    uint64_t requests;       /* completed requests (any status) */
    uint64_t bytes;          /* bytes delivered by successful requests */
    uint64_t errors;         /* requests completed with an error (not canceled) */
    uint64_t canceled;       /* requests completed with PA_ECANCELED */
    uint64_t reads;          /* read system calls / io_uring reads issued */
    uint64_t short_reads;    /* reads that returned fewer bytes than asked */
    uint64_t bounce_bytes;   /* bytes copied out of O_DIRECT bounce buffers */
    uint64_t busy_ns;        /* wall time with at least one read in flight */
    uint64_t latency_ns;     /* sum over completed requests of submit-to-completion time */
    uint64_t max_in_flight;  /* most pieces in flight at once */
} io_stats;
void io_engine_stats(io_engine *e, io_stats *out);

/* ----------------------------------------------------------------- files */

typedef enum io_open_flags {
    IO_OPEN_DEFAULT = 0,    /* O_DIRECT if the engine's options say so */
    IO_OPEN_DIRECT = 1,     /* try O_DIRECT (falls back to buffered, see below) */
    IO_OPEN_BUFFERED = 2,   /* page-cache I/O */
} io_open_flags;

/* Open a regular file for reading through e. The engine keeps a registry:
 * opening a path already open in the same mode returns the same handle with
 * one more reference. A missing file is PA_ENOTFOUND, other failures PA_EIO,
 * a directory or device PA_EINVAL, each naming the path.
 *
 * O_DIRECT: when the filesystem refuses it (open or a probe read fails with
 * EINVAL), the file is opened buffered instead and io_file_note() says so.
 * Requests on a direct file may have any offset, length and buffer: when all
 * three are multiples of IO_DIRECT_ALIGN the bytes land straight in the
 * caller's buffer; otherwise the engine reads the covering aligned range into
 * an aligned bounce buffer of its own and copies the requested bytes out.
 * Each io_file_open is paired with one io_file_close. */
int io_file_open(io_engine *e, const char *path, int flags, io_file **out, pa_err *err);
void io_file_close(io_file *f);

uint64_t io_file_size(const io_file *f);   /* at open time */
const char *io_file_path(const io_file *f);
bool io_file_direct(const io_file *f);     /* O_DIRECT actually in use */
/* Why O_DIRECT is not in use although asked for; "" otherwise. */
const char *io_file_note(const io_file *f);

/* -------------------------------------------------------------- requests */

typedef void (*io_done_fn)(io_request *req);

/* A read. The caller owns the struct and the destination buffer and keeps
 * both alive and untouched from io_submit until the request is delivered.
 * Fill the input fields (zero the rest, e.g. with io_request_init), submit. */
struct io_request {
    /* inputs */
    io_file *file;
    uint64_t offset;
    size_t length;
    void *buf;               /* length bytes; any alignment */
    io_done_fn done;         /* optional: runs on an engine thread */
    pa_queue *queue;         /* optional: the request is pushed here */
    pa_err *err;             /* optional: receives the error message */
    void *tag;               /* the submitter's identity, for io_cancel_tag */
    void *user;              /* free for the caller */
    /* outputs, valid once delivered */
    int status;              /* PA_OK, PA_EIO, PA_ENOMEM, PA_ECANCELED */

    /* engine-private; do not touch */
    struct {
        io_request *next;
        void *batch;
        uint32_t n_pieces, dispatched, finished;
        uint64_t t_submit;
    } priv_;
};

/* Zero r and set the main inputs. */
void io_request_init(io_request *r, io_file *f, uint64_t offset, size_t length, void *buf);

/* Queue a read. Never blocks and never allocates: requests beyond the queue
 * depth wait inside the engine (in FIFO order across all submitters).
 * Delivery, once, on an engine thread (or in io_cancel_tag / destroy):
 * first `done` (which must not free the request when a queue is also set),
 * then a push onto `queue` (blocking while it is full; after the push the
 * engine never touches the request again). PA_EINVAL for a request without
 * a file or buffer, PA_ECLOSED after io_engine_destroy began; the request is
 * then not delivered. */
int io_submit(io_engine *e, io_request *r);

/* Cancel every request with this tag that has not started: each is delivered
 * with PA_ECANCELED; a request whose pieces partly started stops issuing the
 * rest and is delivered PA_ECANCELED when the started ones end. Requests
 * already fully issued complete normally. Returns how many were canceled. */
size_t io_cancel_tag(io_engine *e, void *tag);

/* Submit n requests and wait for all of them (their `done` callbacks run;
 * `queue` must be NULL). Requests with err == NULL report into err.
 * Returns PA_OK or the status of the first failed request (in array order). */
int io_read_all(io_engine *e, io_request *reqs, size_t n, pa_err *err);

/* Read length bytes at offset into buf and wait. */
int io_read(io_engine *e, io_file *f, uint64_t offset, size_t length, void *buf, pa_err *err);

/* ------------------------------------------------------- range planning
 *
 * Turn many byte ranges of one file (column chunks, pages) into few large
 * reads: ranges are sorted by offset, and a range joins the current read when
 * the hole between them is at most max_gap bytes and the read would not grow
 * beyond max_read bytes (a single range larger than max_read is one read of
 * its own; the engine splits it). Overlapping ranges share bytes. */
typedef struct io_range {
    uint64_t offset, length;
} io_range;

typedef struct io_plan_options {
    uint64_t max_gap;    /* largest hole read through; 0 = only touching ranges */
    uint64_t max_read;   /* 0 = no limit */
} io_plan_options;

typedef struct io_plan {
    io_range *reads;     /* the coalesced reads, sorted by offset */
    size_t n_reads;
    size_t *range_read;  /* per input range: index of the read holding it */
    uint64_t *range_pos; /* per input range: its first byte's position inside that read */
    uint64_t bytes_wanted;  /* sum of range lengths */
    uint64_t bytes_read;    /* sum of read lengths (wanted + holes - overlaps) */
} io_plan;

/* Plan n ranges. On success the caller frees *out with io_plan_free; on
 * error (PA_ENOMEM, PA_EINVAL for a range whose end overflows) *out is empty. */
int io_plan_ranges(const io_range *ranges, size_t n, const io_plan_options *opt,
                   io_plan *out, pa_err *err);
void io_plan_free(io_plan *p);

/* ------------------------------------------------------------- benchmark */

typedef struct io_bench_result {
    double seconds;
    double mb_per_s;         /* 1 MB = 1e6 bytes */
    uint64_t bytes;
} io_bench_result;

/* Read the whole file at path sequentially in blocks of block_size, either
 * with one thread calling pread in a loop (engine == NULL: the `dd` way) or
 * through engine e with up to `depth` blocks outstanding. The file's page
 * cache is dropped first (posix_fadvise) unless keep_cache, so buffered runs
 * measure the storage device. */
int io_bench_sequential(io_engine *e, const char *path, size_t block_size, int depth,
                        bool direct, bool keep_cache, io_bench_result *out, pa_err *err);


/* ================================================================ 8. Scan
 *
 * A scan reads a set of Parquet files (paths, directories, globs), the
 * columns wanted and an AND of predicates, and hands out chunks of decoded
 * columns in engine types (DESIGN.md, "Storage path"). Row groups are pruned
 * by their statistics and pages by the page index (when the files have one);
 * the byte ranges of the needed column chunks (or of their surviving pages)
 * are coalesced and read through the shared I/O engine into pinned buffers,
 * several row groups ahead of decoding; pages are decompressed and decoded as
 * batches of independent page jobs on a thread pool; the predicates are then
 * applied to the decoded rows exactly, so callers get exactly the matching
 * rows. A column that is neither projected nor (with filter_rows) filtered on
 * is never read.
 *
 * One chunk = the surviving rows of one row group, in file order then row
 * group order (deterministic). Row groups with no surviving row give no chunk.
 * Chunks wait in a bounded queue (max_chunks): a consumer that stops popping
 * stalls the scan's reading and decoding (back-pressure).
 */

/* X(NAME, text): comparison operators of a predicate. */
#define PQ_OP_LIST(X)                                                         \
    X(EQ, "=") X(NE, "<>") X(LT, "<") X(LE, "<=") X(GT, ">") X(GE, ">=")        \
    X(IS_NULL, "IS NULL") X(IS_NOT_NULL, "IS NOT NULL")
typedef enum pq_op {
#define PQ__OP(name, text) PQ_OP_##name,
    PQ_OP_LIST(PQ__OP)
#undef PQ__OP
    PQ_OP__COUNT
} pq_op;
/* "=", "IS NULL", ...; NULL for a bad value. */
const char *pq_op_name(pq_op op);

/* `column op value`. The constant is text, read by the column's engine type
 * when the scan opens: INTEGER, BIGINT and DECIMAL take an exact decimal
 * number ("42", "-0.055": compared exactly, whatever the column's scale),
 * DATE "YYYY-MM-DD", TIMESTAMP, TIMESTAMPTZ, TIMESTAMP_NS and TIME what
 * pq_time_parse reads, DOUBLE anything strtod reads, BOOLEAN true/false,
 * VARCHAR the bytes as given (compared bytewise, unsigned); INTERVAL takes
 * IS [NOT] NULL only (else PA_EUNSUPPORTED). value is ignored by IS
 * NULL / IS NOT NULL. SQL semantics: NULL never satisfies a comparison.
 * DOUBLE follows DuckDB's total order: NaN is above every number and equal
 * to itself. */
typedef struct pq_pred {
    const char *column;
    pq_op op;
    const char *value;
} pq_pred;

/* Parses "col op value", "col IS NULL" or "col IS NOT NULL" (op one of = ==
 * <> != < <= > >=; a value in single quotes loses them). The result points
 * into `text` (which is modified: NULs are written into it) and lives as
 * long as it. PA_ESYNTAX with a message on a bad text. */
int pq_pred_parse(char *text, pq_pred *out, pa_err *err);

/* A constant of TIMESTAMP, TIMESTAMPTZ, TIMESTAMP_NS or TIME (type id) as
 * the engine's int64 (microseconds; nanoseconds for TIMESTAMP_NS): the
 * integer itself ("-5"), or text: "2020-10-01 12:00:00.123456",
 * "2020-10-01T12:00:00Z", "2020-10-01 14:00:00+02" (an offset or Z or UTC
 * gives the instant: the session is UTC), "2020-10-01" (midnight), TIME
 * "12:00[:00[.5]]" up to "24:00:00". *out is the floor in the unit, *exact
 * false when digits past it are not 0 (or the value saturated). PA_OK or
 * PA_ESYNTAX (no message). */
int pq_time_parse(const char *text, pa_type_id id, int64_t *out, bool *exact);

typedef struct pq_scan_options {
    const char *const *paths;   /* files, directories (their *.parquet, sorted), globs */
    size_t n_paths;
    const char *const *columns; /* names to return, in this order; NULL = every column */
    size_t n_columns;           /* with columns != NULL, 0 gives chunks without columns */
    const pq_pred *preds;       /* ANDed */
    size_t n_preds;
    dv_device *device;          /* where chunks live (required) */
    io_engine *io;              /* NULL = io_engine_shared() */
    pa_threadpool *threads;     /* decode threads; NULL = dv_cpu_threads(device), else a pool of our own */
    int decode_threads;         /* size of that own pool; 0 = online CPUs */
    int max_chunks;             /* output queue capacity; 0 = 4 */
    int read_ahead;             /* row groups whose reads may be in flight; 0 = 3 (plus one
                                 * per unit decoder beyond the first) */
    int unit_workers;           /* row groups decoded at once, each by one thread; 0 = the
                                 * decode pool's size when the scan has two row groups or
                                 * more and the device is host-visible; 1 = one at a time,
                                 * its pages spread over the pool */
    uint64_t max_gap;           /* io_plan max_gap between needed ranges; 0 = only touching */
    uint64_t max_read;          /* io_plan max_read; 0 = 16 MiB */
    bool filter_rows;           /* apply the predicates to the rows (default true); when
                                 * false only pruning happens: whole surviving row groups
                                 * (or page row ranges) come out */
    bool use_page_index;        /* prune pages with ColumnIndex/OffsetIndex (default true) */
    bool read_first;            /* read every row group before decoding any: no overlap of
                                 * I/O and decoding, the blocking baseline the execution
                                 * engine's BLOCKING mode measures (default false; when
                                 * the pinned pool fills up, decoding starts with what
                                 * was read) */
    int share_parts;            /* > 1: read only the row groups whose index over every
                                 * file in scan order (before pruning) is share_part
                                 * modulo share_parts: one rank's share of a table split
                                 * over share_parts ranks (0 or 1: every row group) */
    int share_part;
    bool device_decode;         /* hand pages to the device's kernels even where
                                 * dv_decodes_pages says no (not on host-visible devices) */
    /* Layouts (section 8b). hive_partitioning: PQ_HIVE_AUTO (0: when the
     * first file's folders are key=value ones), PQ_HIVE_ON or PQ_HIVE_OFF;
     * partition columns come after the files' columns, named and typed as
     * pq_hive_detect says, one value per file; predicates on them prune
     * whole files before their footers are read. union_by_name: a file may
     * lack a column (it reads as NULL). types: NULL, or per output column
     * the type the caller expects (a widening, pq_type_widen, of every
     * file's type): without it a column's type is the widening of its
     * type in the files not pruned. A file whose type differs from the
     * column's has its values converted on the host. A predicate on a
     * file column whose type differs between files is PA_EUNSUPPORTED
     * (filter above the scan instead). */
    int hive_partitioning;
    bool union_by_name;
    const pa_type *types;
    uint64_t memory_high;       /* memory regulation: a row group starts decoding only while
                                 * the device pool's use plus what the row groups being
                                 * decoded may take (estimated from the footer) stays under
                                 * this, unless nothing the scan made is still alive (or,
                                 * for the next row group in order, nothing it handed out);
                                 * so a scan of more data than the device holds completes,
                                 * with fewer chunks in flight as memory runs short
                                 * (0 = 3/4 of the pool's limit; no limit: no regulation) */
    bool host_decode;           /* decode every page on the host, also on a device that
                                 * decodes pages itself (sim, cuda): the baseline to
                                 * measure against (default false: columns whose pages
                                 * kn_decode_pages takes, fixed-width PLAIN and dictionary
                                 * pages of output columns no predicate reads, are
                                 * decompressed and decoded on the device) */
} pq_scan_options;

/* Defaults: everything zero/NULL, filter_rows and use_page_index true. */
void pq_scan_options_init(pq_scan_options *opt);

typedef struct pq_scan pq_scan;

/* Opens a scan: resolves the paths, reads their hive partitions and drops
 * the files predicates on partition columns rule out, gets every other
 * footer from the metadata cache, maps the columns (every file must have
 * each requested column, unless union_by_name, of a type that widens into
 * the column's; otherwise PA_EINVAL naming both files), binds the
 * predicates, prunes row groups by statistics, and starts reading. Errors:
 * PA_ENOTFOUND (a path, a glob or directory without Parquet files, a column),
 * PA_EUNSUPPORTED (a requested column that is nested or of a type without
 * an engine type, naming it and the file), PA_ESYNTAX (a constant), the
 * footer errors of section 3. The caller closes the scan with pq_scan_close. */
/* The files a scan of `paths` reads, in scan order: a file as given, a
 * directory's *.parquet (sorted, not recursive), a glob's matches (sorted;
 * a `**` component matches zero or more directories: the components data,
 * ** and *.parquet give every Parquet file under data).
 * *files is pa_malloc'd, freed with pq_paths_free. PA_ENOTFOUND naming a
 * path that matches nothing (a missing file, an empty directory or glob). */
int pq_paths_expand(const char *const *paths, size_t n_paths, char ***files, uint32_t *n_files, pa_err *err);
/* What a file that is not a regular one is, for errors: "a directory",
 * "a FIFO", "a character device"... (st_mode's type bits). Files are
 * opened with O_NONBLOCK and refused unless regular, so a FIFO given as
 * Parquet never waits for a writer. */
const char *pq_file_kind(unsigned mode);
void pq_paths_free(char **files, uint32_t n);

int pq_scan_open(const pq_scan_options *opt, pq_scan **out, pa_err *err);

/* Output columns: count, names (owned by the scan) and engine types. */
int pq_scan_n_columns(const pq_scan *s);
const char *pq_scan_column_name(const pq_scan *s, int i);
pa_type pq_scan_column_type(const pq_scan *s, int i);

/* The next chunk, blocking until it is decoded: PA_OK with *out set (the
 * caller frees it with dv_chunk_destroy, on any thread), or PA_OK with *out
 * NULL at the end. A failure of the scan's reading or decoding (corrupt page,
 * PA_ENOMEM at the device's memory limit, ...) is returned once the chunks
 * before it were handed out, with a message naming the file, row group,
 * column and page; every later call returns the same status. */
int pq_scan_next(pq_scan *s, dv_chunk **out, pa_err *err);

typedef struct pq_scan_stats {
    uint64_t files;               /* files scanned (not pruned) */
    uint64_t files_pruned;        /* by predicates on partition columns (footers never read) */
    uint64_t row_groups;          /* in all files */
    uint64_t row_groups_pruned;   /* by statistics, or by the page index to nothing */
    uint64_t pages;               /* data pages of the columns read, in row groups not pruned */
    uint64_t pages_pruned;        /* of those, skipped thanks to the page index */
    uint64_t rows_decoded;        /* rows decoded (per row group, not per column) */
    uint64_t rows_out;            /* rows handed out in chunks */
    uint64_t chunks_out;
    uint64_t bytes_read;          /* data and page-index bytes read by this scan */
    uint64_t read_requests;
    uint64_t ns_read;             /* per row group, submit to last read done, summed */
    uint64_t ns_read_wait;        /* time the scan thread waited for reads */
    uint64_t ns_decompress;       /* wall time of the decompression batches */
    uint64_t ns_decode;           /* wall time of measuring and decoding pages */
    uint64_t ns_filter;           /* wall time of filtering and compacting rows */
    uint64_t mem_waits;           /* row groups held back because device memory was short */
    uint64_t ns_mem_wait;         /* time the next row group in order waited for memory */
} pq_scan_stats;

/* A snapshot (consistent once the scan ended; approximate while it runs). */
void pq_scan_get_stats(pq_scan *s, pq_scan_stats *out);

/* Stops the scan wherever it is (reads not started are canceled, chunks not
 * handed out are freed), waits for its threads and frees everything. Safe at
 * any time, also before the end; NULL is ignored. Chunks already handed out
 * stay valid. */
void pq_scan_close(pq_scan *s);

/* ================================= 8b. Layouts of several files (layout.c)
 *
 * Hive partitioning (DuckDB's rules): folders named key=value in a file's
 * path (the directories only; %XX escapes decoded) give the file a value
 * per key; a value NULL or __HIVE_DEFAULT_PARTITION__ is NULL. A key's
 * type is DATE when every non-NULL value reads as a date (YYYY-MM-DD),
 * else BIGINT when every one is an integer written as BIGINT writes it
 * ("7", "-5"; not "07" or "+7"), else VARCHAR. Keys are sorted by name.
 */
enum { PQ_HIVE_AUTO = 0, PQ_HIVE_ON = 1, PQ_HIVE_OFF = 2 };

typedef struct pq_hive {
    int n_keys;
    char **keys;               /* sorted by name */
    pa_type *types;            /* BIGINT, DATE, TIMESTAMP ("2020-01-01 12:00:00") or VARCHAR */
    uint32_t n_files;
    char **values;             /* [file * n_keys + key]: the text, NULL for NULL */
} pq_hive;

/* The partitions of files (in scan order). mode PQ_HIVE_OFF, or AUTO when
 * the first file has no key=value folder: *out = NULL (no partitioning).
 * AUTO with files whose keys differ: NULL too (DuckDB's detection); ON:
 * PA_EINVAL naming the two files; ON without any key=value folder:
 * PA_EINVAL. Free *out with pq_hive_free. */
int pq_hive_detect(const char *const *files, uint32_t n, int mode, pq_hive **out, pa_err *err);
void pq_hive_free(pq_hive *h);
/* Index of key in h (-1 when absent or h is NULL). */
int pq_hive_key(const pq_hive *h, const char *key);

/* The type holding values of both a and b (DuckDB's union of types, kept
 * within 18 decimal digits): INTEGER, BIGINT -> BIGINT; an integer or a
 * DECIMAL with DOUBLE -> DOUBLE; DECIMALs (INTEGER as DECIMAL(10,0)) -> the
 * scale of the larger and the integer digits of the larger. False when
 * there is none (then *why says so, e.g. "DECIMAL(38,2) needs more than
 * 18 digits", or "" for types that do not mix). */
bool pq_type_widen(pa_type a, pa_type b, pa_type *out, char *why, size_t why_cap);

/* ================================================ 9. Writer (writer*.c)
 *
 * Writes flat Parquet files of engine columns, one row group at a time:
 * pq_writer_write copies rows into a row-group buffer (host memory bounded
 * by one row group: row_group_rows rows or row_group_bytes bytes, whichever
 * comes first); when it is full every column chunk is encoded page by page
 * (PLAIN, or RLE_DICTIONARY falling back to PLAIN when the dictionary
 * outgrows its cap), compressed and appended to "<path>.tmp". Close adds the
 * page index (ColumnIndex + OffsetIndex of every chunk), the footer and
 * "PAR1", then renames the file to <path>, so a failed write never leaves a
 * truncated file under the final name.
 *
 * Types: BOOLEAN -> BOOLEAN; INTEGER -> INT32 (INTEGER(32,true), INT_32);
 * BIGINT -> INT64; DOUBLE -> DOUBLE; DECIMAL(p,s) -> INT32 (p <= 9) or
 * INT64 (p <= 18) with DECIMAL logical and converted types; DATE -> INT32
 * DATE; VARCHAR -> BYTE_ARRAY STRING (UTF8); TIMESTAMP -> INT64
 * TIMESTAMP(isAdjustedToUTC=false, MICROS) (no ConvertedType: the legacy
 * TIMESTAMP_MICROS means UTC-adjusted); TIMESTAMPTZ -> INT64
 * TIMESTAMP(true, MICROS) and TIMESTAMP_MICROS; TIMESTAMP_NS -> INT64
 * TIMESTAMP(false, NANOS); TIME -> INT64 TIME(false, MICROS); INTERVAL ->
 * FIXED_LEN_BYTE_ARRAY(12) INTERVAL (months, days, milliseconds; a value
 * with a negative field or a fraction of a millisecond is PA_EUNSUPPORTED
 * naming the column and row; no statistics, its order being undefined;
 * PLAIN only). A column is OPTIONAL when
 * nullable, REQUIRED otherwise. Statistics are min_value/max_value (type
 * order: signed for numbers and dates, unsigned bytes for strings; NaN is
 * never a bound; long strings are cut to stats_truncate bytes at a UTF-8
 * character boundary, the max then rounded up, and flagged inexact) plus
 * null_count, per column chunk and per page (the ColumnIndex).
 */

typedef struct pq_write_column {
    const char *name;          /* copied by pq_writer_create */
    pa_type type;              /* DECIMAL precision 1..18 */
    bool nullable;             /* OPTIONAL; else REQUIRED (NULLs are PA_EINVAL) */
} pq_write_column;

typedef struct pq_writer_options {
    /* enum pq_codec: UNCOMPRESSED, SNAPPY, GZIP, BROTLI, ZSTD or LZ4_RAW. Default
     * LZ4_RAW: the fastest to decode on a CPU (and supported by GPU codec
     * libraries), at a ratio close to SNAPPY's; scans are decode bound on
     * fast storage. UNCOMPRESSED when this build lacks liblz4. */
    int32_t codec;
    int level;                 /* codec level; 0 = the codec's default */
    /* Rows per row group; default 1048576 (2^20): a GPU chunk is millions
     * of rows, a 4-byte column chunk is then ~4 MB (reads large enough for
     * NVMe), and the page index still prunes inside a row group. */
    int64_t row_group_rows;
    /* Also end a row group when the buffered column bytes reach this
     * (strings make rows wide); default 512 MiB, at most 2^31-1. */
    uint64_t row_group_bytes;
    uint64_t page_bytes;       /* target PLAIN bytes per data page; default 1 MiB */
    int64_t page_rows;         /* most rows per data page; 0 = no limit */
    int data_page_version;     /* 1 (DATA_PAGE, default) or 2 (DATA_PAGE_V2) */
    bool dictionary;           /* try RLE_DICTIONARY (not for BOOLEAN); default on */
    uint64_t dictionary_bytes; /* PLAIN size cap of a dictionary; default 1 MiB */
    bool statistics;           /* chunk statistics; default on */
    bool page_index;           /* ColumnIndex + OffsetIndex; default on */
    bool page_crc;             /* PageHeader.crc on every page; default off
                                * (readers check it only when asked, most never) */
    uint32_t stats_truncate;   /* longest string min/max kept; default 64 */
    const char *created_by;    /* default "pista version <version>"; copied */
    const pq_key_value *key_value;  /* file key-value metadata; copied */
    uint32_t n_key_value;
    /* pq_writer_close fails (PA_EINVAL, naming the file) instead of
     * replacing a file that exists at path by then, e.g. one another
     * process made; default off (replace). */
    bool no_replace;
} pq_writer_options;

/* Fill o with the defaults above. */
void pq_writer_options_init(pq_writer_options *o);

/* A writer is used by one thread at a time. */
typedef struct pq_writer pq_writer;

/* Create a temporary file next to path, ".<name>.tmp.<pid>.XXXXXX" (unique,
 * hidden; pq_writer_clean_stale removes those of dead processes), for n columns (1..32767, distinct non-empty names).
 * opt may be NULL (defaults). PA_EINVAL for bad columns or options,
 * PA_EUNSUPPORTED for a codec this build cannot write, PA_EIO (naming the
 * file) when it cannot be created. On success the caller ends the writer
 * with pq_writer_close or pq_writer_abort, which free it. */
int pq_writer_create(const char *path, const pq_write_column *cols, uint32_t n,
                     const pq_writer_options *opt, pq_writer **out, pa_err *err);
/* Remove the writers' temporary files in dir left by processes that no
 * longer run (killed while writing); returns how many went. */
int pq_writer_clean_stale(const char *dir);

/* Append `rows` rows: columns[i] is a host-visible view (core.h layout) of
 * column i with length >= rows; its type must equal the declared one.
 * Flushes every row group that fills. On error (PA_EINVAL for bad input,
 * PA_EOVERFLOW for a DECIMAL that does not fit its precision's physical
 * type, PA_EIO, PA_ENOMEM) the writer is failed: later calls return
 * PA_EINVAL, and close or abort only clean up. */
int pq_writer_write(pq_writer *w, const pa_column *columns, int64_t rows, pa_err *err);

/* Write the last row group, the page index and the footer, then rename the
 * file to its final name. Frees w in every case; on error the temporary
 * file is removed and nothing exists under the final name. */
int pq_writer_close(pq_writer *w, pa_err *err);

/* Remove the temporary file and free w (NULL is ignored). */
void pq_writer_abort(pq_writer *w);

/* Rows written so far (buffered ones included) and row groups flushed. */
int64_t pq_writer_rows(const pq_writer *w);
uint32_t pq_writer_row_groups(const pq_writer *w);


#ifdef __cplusplus
}
#endif
#endif /* PISTA_STORAGE_H */

/*
 * kernels.h - Pista's kernels: the whole public surface of src/kernels.
 *
 * Kernels are the hot loops of the engine. They size first, never allocate,
 * read only inside the input they are given and write only inside the output
 * capacity they are given. Bad input is an int status (PA_ECORRUPT naming the
 * encoding and the problem), never a crash. This file has one section per
 * family: the Parquet codecs (host code), then the relational kernels
 * (aggregation, sort, expressions, hashing, join, concatenation), which run
 * on a device through its table of kernels (kn_ops_int.h).
 */
#ifndef PISTA_KERNELS_H
#define PISTA_KERNELS_H

#include "core/core.h"
#include "device/device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* =====================================================================
 * Parquet page codecs and decoding
 * =====================================================================
 *
 * Enum values are the Thrift values of parquet.thrift, so storage can cast
 * the numbers it reads from a footer or page header directly.
 *
 * Output layout (what a decoded column chunk looks like in memory):
 *  - one slot per ROW, values spread to their row positions: row i of the
 *    page lands at out.values[row_offset + i]; a NULL row gets a zeroed slot
 *    (fixed width) or an empty string, and bit (row_offset + i) of the
 *    validity bitmap is 0 (LSB first: bit j is byte j/8, mask 1 << (j%8));
 *  - engine representation per pa_type_id: BOOLEAN uint8 (0/1), INTEGER and
 *    DATE int32, BIGINT and DECIMAL int64 (the scale stays with the caller),
 *    DOUBLE double, VARCHAR int32 offsets (rows+1 of them) plus bytes;
 *  - strings: out.offsets[row_offset] must hold, before the call, the byte
 *    position where this page's bytes start (0 for the first page); the call
 *    writes offsets[row_offset+1 .. row_offset+rows] and the bytes. Offsets
 *    are int32, so one output buffer (one column chunk) holds at most
 *    INT32_MAX bytes of strings: more is refused with PA_EUNSUPPORTED.
 * Page row counts are limited to INT32_MAX.
 */

/* X(NAME, value) - parquet.thrift `Type`. */
#define KN_PTYPE_LIST(X)                                                      \
    X(BOOLEAN, 0) X(INT32, 1) X(INT64, 2) X(INT96, 3) X(FLOAT, 4)             \
    X(DOUBLE, 5) X(BYTE_ARRAY, 6) X(FIXED_LEN_BYTE_ARRAY, 7)

typedef enum kn_ptype {
#define KN__PT(name, v) KN_PT_##name = v,
    KN_PTYPE_LIST(KN__PT)
#undef KN__PT
} kn_ptype;

/* X(NAME, value) - parquet.thrift `Encoding` (1 is unused by the spec). */
#define KN_ENCODING_LIST(X)                                                   \
    X(PLAIN, 0) X(PLAIN_DICTIONARY, 2) X(RLE, 3) X(BIT_PACKED, 4)             \
    X(DELTA_BINARY_PACKED, 5) X(DELTA_LENGTH_BYTE_ARRAY, 6)                   \
    X(DELTA_BYTE_ARRAY, 7) X(RLE_DICTIONARY, 8) X(BYTE_STREAM_SPLIT, 9)

typedef enum kn_encoding {
#define KN__ENC(name, v) KN_ENC_##name = v,
    KN_ENCODING_LIST(KN__ENC)
#undef KN__ENC
} kn_encoding;

/* X(NAME, value) - parquet.thrift `CompressionCodec`. */
#define KN_CODEC_LIST(X)                                                      \
    X(UNCOMPRESSED, 0) X(SNAPPY, 1) X(GZIP, 2) X(LZO, 3) X(BROTLI, 4)         \
    X(LZ4, 5) X(ZSTD, 6) X(LZ4_RAW, 7)

typedef enum kn_codec {
#define KN__CODEC(name, v) KN_CODEC_##name = v,
    KN_CODEC_LIST(KN__CODEC)
#undef KN__CODEC
} kn_codec;

/* "PLAIN", "SNAPPY", "INT32"; "UNKNOWN" for values outside the lists. */
const char *kn_ptype_name(int ptype);
const char *kn_encoding_name(int encoding);
const char *kn_codec_name(int codec);

/* ------------------------------------------------------------- codecs
 *
 * Compressed page bytes are the raw codec output, except LZ4 (codec 5): the
 * Hadoop framing (big-endian u32 uncompressed size, then big-endian u32
 * compressed size + LZ4 block, repeated), with a fallback to one raw LZ4
 * block when the framing does not fit the data. GZIP is RFC 1952 framing
 * (zlib framing is accepted too on decompression). BROTLI is one RFC 7932
 * stream. LZO, and any codec whose library this build lacks, give
 * PA_EUNSUPPORTED.
 */

/* True when this build can (de)compress codec. */
bool kn_codec_supported(int codec);

/* CRC-32 of p[0, n) as zlib's crc32 computes it (polynomial 0x04C11DB7,
 * reflected, the gzip one): the checksum of PageHeader.crc. */
uint32_t kn_crc32(const void *p, size_t n);

/* Decompress src into exactly dst_size bytes (the uncompressed size from the
 * page header). PA_ECORRUPT if the data is bad or decompresses to any other
 * size; dst is never written past dst_size (its content is unspecified on
 * error). */
int kn_decompress(int codec, const void *src, size_t src_size, void *dst, size_t dst_size,
                  pa_err *err);

/* Largest compressed size of n input bytes, or 0 if the codec is unsupported. */
size_t kn_compress_bound(int codec, size_t n);

/* Compress n bytes into dst (capacity cap, at least kn_compress_bound to be
 * sure to fit); *out_size gets the compressed size. level 0 = the codec's
 * default (ignored by codecs without levels). PA_EINVAL if cap is too small. */
int kn_compress(int codec, int level, const void *src, size_t n, void *dst, size_t cap,
                size_t *out_size, pa_err *err);

/* One independent decompression; `status` is written by the batch. */
typedef struct kn_codec_job {
    const void *src;
    uint64_t src_size;
    void *dst;
    uint64_t dst_size;   /* the expected uncompressed size */
    int32_t codec;
    int32_t status;      /* out: PA_OK or the error */
    const char *where;   /* kn_decompress_pages: NULL, or what the page is ("FILE: row group 3
                          * column x page 0"), in memory the device reads (pinned): a
                          * refusal's message starts with it instead of "page K of the batch" */
} kn_codec_job;

/* Run every job, on tp's threads plus the calling thread when tp is non-NULL
 * (the call returns when all jobs are done). Returns PA_OK if every job
 * succeeded, else the first failing job's status; err keeps the first
 * message. Jobs must not share output buffers. */
int kn_decompress_batch(kn_codec_job *jobs, size_t n, pa_threadpool *tp, pa_err *err);

/* ----------------------------------------------- column and value views */

/* What a column chunk is: its Parquet physical type and the engine type it
 * decodes to. Supported pairs (anything else is PA_EUNSUPPORTED):
 *   BOOLEAN -> BOOLEAN;  INT32 -> INTEGER, DATE, BIGINT, DECIMAL (p <= 9);
 *   INT64 -> BIGINT, DECIMAL (p <= 18);  FLOAT, DOUBLE -> DOUBLE;
 *   BYTE_ARRAY -> VARCHAR, or DECIMAL (big-endian two's complement, <= 8
 *   significant bytes; <= 16 for p > 18);  FIXED_LEN_BYTE_ARRAY -> VARCHAR, or
 *   DECIMAL (big-endian two's complement in type_length <= 16 bytes). DECIMAL
 *   of p <= 18 decodes to int64, of p 19..38 to __int128 (16-byte slots). */
typedef struct kn_column {
    int32_t ptype;          /* kn_ptype */
    int32_t type_length;    /* FIXED_LEN_BYTE_ARRAY width, else ignored */
    pa_type type;           /* engine type (DECIMAL precision/scale kept) */
    int16_t max_def_level;  /* 0 = REQUIRED; 1 = flat OPTIONAL (any value accepted: valid iff level == max) */
    int16_t max_rep_level;  /* must be 0: repeated columns are PA_EUNSUPPORTED */
} kn_column;

/* Read-only column values in engine representation (as in the output layout
 * above): `values` for fixed width, `offsets` (n+1) and `bytes` for VARCHAR. */
typedef struct kn_values {
    const void *values;
    const int32_t *offsets;
    const uint8_t *bytes;
    uint64_t n;
} kn_values;

/* Where decoded values go. `capacity` counts rows (value slots; offsets has
 * capacity+1 entries), `bytes_capacity` bytes. `validity` is required when
 * the column is OPTIONAL (max_def_level > 0) and optional otherwise (then
 * the page's bits are set to 1). */
typedef struct kn_out {
    void *values;           /* fixed width: capacity * width bytes */
    int32_t *offsets;       /* VARCHAR */
    uint8_t *bytes;         /* VARCHAR */
    uint8_t *validity;      /* bitmap of capacity bits, or NULL */
    uint64_t capacity;
    uint64_t bytes_capacity;
} kn_out;

/* A decoded dictionary: n values in engine representation. It is a kn_values
 * (n = number of entries); build it with kn_decode_values(KN_ENC_PLAIN, ...). */
typedef kn_values kn_dict;

/* --------------------------------------------- RLE / bit-packed hybrid */

/* Decode n values of bit_width (0..32) from the hybrid stream p[0..size)
 * (no length prefix) into out. *consumed (may be NULL) gets the bytes used;
 * a final bit-packed run may be cut short if it still holds the values
 * asked for. PA_ECORRUPT if the stream ends early or is malformed. */
int kn_rle_decode(const uint8_t *p, size_t size, int bit_width, uint32_t *out, size_t n,
                  size_t *consumed, pa_err *err);

/* Unpack n bit_width-wide (0..32) LSB-first values from p (which must hold
 * ceil(n*bit_width/8) bytes; PA_ECORRUPT otherwise). */
int kn_bitunpack32(const uint8_t *p, size_t size, int bit_width, uint32_t *out, size_t n,
                   pa_err *err);

/* Bound on the encoded size of n values (no length prefix). */
size_t kn_rle_encode_bound(size_t n, int bit_width);
/* Encode values (each < 2^bit_width, else PA_EINVAL) choosing RLE runs for
 * repeats of 8 or more and bit-packed groups otherwise. The last group is
 * padded with zeros. PA_EINVAL if cap is too small. */
int kn_rle_encode(const uint32_t *values, size_t n, int bit_width, uint8_t *dst, size_t cap,
                  size_t *out_size, pa_err *err);

/* -------------------------------------------------------- value streams */

/* Count the bytes of string output that n encoded values need (VARCHAR
 * columns; 0 for others). dict is needed for the dictionary encodings. */
int kn_measure_values(int encoding, const kn_column *col, const kn_dict *dict, const uint8_t *p,
                      size_t size, uint64_t n, uint64_t *string_bytes, pa_err *err);

/* Decode n values (no NULLs among them) of an encoding into out at slots
 * [at, at+n). Encodings: PLAIN, RLE (BOOLEAN, with its 4-byte length),
 * PLAIN_DICTIONARY / RLE_DICTIONARY (dict required), DELTA_BINARY_PACKED,
 * DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY (VARCHAR outputs),
 * BYTE_STREAM_SPLIT. *consumed (may be NULL) gets the bytes read. Strings:
 * out->offsets[at] must hold the start byte position. */
int kn_decode_values(int encoding, const kn_column *col, const kn_dict *dict, const uint8_t *p,
                     size_t size, uint64_t n, kn_out *out, uint64_t at, size_t *consumed,
                     pa_err *err);

/* ------------------------------------------------------------------ pages */

/* One data page, decompressed. */
typedef struct kn_page {
    int32_t version;          /* 1 (DATA_PAGE) or 2 (DATA_PAGE_V2) */
    int32_t encoding;         /* values encoding */
    int32_t def_level_encoding; /* v1: RLE or BIT_PACKED (ignored for v2) */
    int32_t num_values;       /* rows in the page, NULLs included */
    int32_t num_nulls;        /* v2: from the header; v1: ignored */
    /* v1: data = the whole body [rep levels][def levels][values].
     * v2: data = the values section only; levels = [rep levels][def levels]
     * (never compressed) with their byte lengths. */
    const uint8_t *data;
    uint64_t size;
    const uint8_t *levels;
    uint32_t rep_levels_size;
    uint32_t def_levels_size;
} kn_page;

/* What a page needs from the output. */
typedef struct kn_page_info {
    uint64_t rows;           /* slots it fills */
    uint64_t non_null;       /* values actually encoded */
    uint64_t string_bytes;   /* VARCHAR bytes it appends */
} kn_page_info;

/* Size first: decode levels (and string lengths) to say what the page needs. */
int kn_page_measure(const kn_page *pg, const kn_column *col, const kn_dict *dict,
                    kn_page_info *info, pa_err *err);

/* Decode the page into out at rows [row_offset, row_offset + num_values).
 * Leaves out unspecified on error. */
int kn_page_decode(const kn_page *pg, const kn_column *col, const kn_dict *dict, kn_out *out,
                   uint64_t row_offset, pa_err *err);

/* One independent page: decompress (when codec != UNCOMPRESSED) into
 * scratch, then decode. Only plain buffers and sizes, so the same struct can
 * be copied to a GPU. `page.data`/`page.levels` are filled in by the job from
 * src (v1: whole body compressed; v2: levels then compressed values when
 * v2_is_compressed). `col`, `dict` and `out` are by value / plain pointers. */
typedef struct kn_page_job {
    const uint8_t *src;           /* page bytes as stored after the header */
    uint64_t src_size;
    uint64_t uncompressed_size;   /* from the page header (v2: levels included) */
    int32_t codec;
    int32_t v2_is_compressed;     /* v2 only: the header's is_compressed */
    uint8_t *scratch;             /* >= uncompressed_size bytes when compressed */
    uint64_t scratch_size;
    kn_page page;                 /* encoding, counts, version, level sizes */
    kn_column col;
    kn_dict dict;                 /* n == 0 and values == NULL when none */
    kn_out out;
    uint64_t row_offset;
    int32_t status;               /* out */
    const char *where;            /* kn_decode_pages: as kn_codec_job's */
    /* kn_decode_pages' own (a string page's valid values, bytes and first
     * byte in out.bytes, -1 until placed): set by the call, read by nobody else. */
    int64_t str_values, str_bytes, str_start, str_data;
} kn_page_job;

/* Run one job (sets job->status and returns it). */
int kn_page_job_run(kn_page_job *job, pa_err *err);
/* Run many (see kn_decompress_batch for threads and the result). Jobs that
 * write strings into the same output must be run in page order, so give a
 * batch at most one string page per output buffer, or pre-set each page's
 * offsets[row_offset] from kn_page_measure. Jobs of a nullable column run at
 * once must not share a byte of the validity bitmap: each row_offset a
 * multiple of 8, or such pages in separate batches. */
int kn_page_decode_batch(kn_page_job *jobs, size_t n, pa_threadpool *tp, pa_err *err);

/* --------------------------------------------------------------- encoders
 *
 * For the Parquet writer. Input is a kn_values in engine representation plus
 * an optional selection `sel` (row numbers to take, in order; NULL = rows
 * 0..n-1), so a writer passes the non-NULL rows of a column. Encoders never
 * allocate: call the _bound function, then encode into that much space.
 */

/* Bound on kn_encode_values' output. 0 if the encoding/column pair is unsupported. */
size_t kn_encode_bound(int encoding, const kn_column *col, const kn_values *in,
                       const uint32_t *sel, size_t n);
/* Encodings: PLAIN (all supported types; DOUBLE -> FLOAT narrows; DECIMAL
 * to INT32/INT64/FLBA big-endian), RLE (BOOLEAN, with the 4-byte length),
 * DELTA_BINARY_PACKED (INT32, INT64), DELTA_LENGTH_BYTE_ARRAY and
 * DELTA_BYTE_ARRAY (BYTE_ARRAY VARCHAR), BYTE_STREAM_SPLIT (INT32, INT64,
 * FLOAT, DOUBLE, FLBA). PA_EOVERFLOW if a DECIMAL does not fit the physical
 * type, PA_EINVAL if cap is too small. */
int kn_encode_values(int encoding, const kn_column *col, const kn_values *in, const uint32_t *sel,
                     size_t n, uint8_t *dst, size_t cap, size_t *out_size, pa_err *err);

/* Definition levels for a flat OPTIONAL column from a validity bitmap
 * (bit i of validity for rows first..first+n-1), RLE/bit-packed with bit
 * width 1; `prefix` adds v1's 4-byte length. Bound: kn_rle_encode_bound(n,1)+4. */
int kn_encode_def_levels(const uint8_t *validity, uint64_t first, size_t n, bool prefix,
                         uint8_t *dst, size_t cap, size_t *out_size, pa_err *err);

/* Dictionary building: values -> dictionary entries + one index per value. */
typedef struct kn_dict_limits {
    uint32_t max_entries;     /* 0 = no limit beyond n */
    uint64_t max_bytes;       /* PLAIN size of the dictionary page; 0 = no limit */
} kn_dict_limits;

typedef struct kn_dict_result {
    uint32_t n_entries;       /* entries found (valid unless too_large) */
    uint64_t plain_bytes;     /* PLAIN-encoded size of the dictionary */
    bool too_large;           /* a limit was hit: fall back to PLAIN */
} kn_dict_result;

/* Scratch bytes kn_dict_build needs for n input values. */
size_t kn_dict_build_scratch(size_t n);
/* Build a dictionary of the n selected values: entry_rows[k] = the input row
 * of entry k's first occurrence (capacity n), indices[i] = entry of value i
 * (capacity n). Encode the dictionary page with kn_encode_values(PLAIN, col,
 * in, entry_rows, n_entries) and the data page with kn_encode_dict_indices.
 * Too large is not an error: PA_OK with res->too_large set. */
int kn_dict_build(const kn_column *col, const kn_values *in, const uint32_t *sel, size_t n,
                  const kn_dict_limits *lim, void *scratch, size_t scratch_size,
                  uint32_t *entry_rows, uint32_t *indices, kn_dict_result *res, pa_err *err);

/* Bit width for indices of a dictionary of n_entries (0 when <= 1 entry). */
int kn_dict_index_width(uint32_t n_entries);
/* RLE_DICTIONARY data page values: 1 byte bit width, then the hybrid stream.
 * Bound: 1 + kn_rle_encode_bound(n, width). */
int kn_encode_dict_indices(const uint32_t *indices, size_t n, uint32_t n_entries, uint8_t *dst,
                           size_t cap, size_t *out_size, pa_err *err);

/* ======================================================================
 * Relational kernels
 *
 * Conventions for every kernel below (DESIGN.md rules 2 and 3):
 * - A kernel takes a kn_ctx (device + stream) and whole columns (pa_column
 *   views of chunk buffers) with their row count; never host copies of
 *   device data. Each call goes through the device's table of kernels
 *   (kn_ops_int.h). On the cpu device it runs on the calling thread before
 *   returning (also with a NULL ctx or ctx->dev: host evaluation). On sim
 *   it is enqueued on ctx->stream (required) and runs later: the arguments
 *   are copied by the call (column descriptors, arrays of descriptors, the
 *   sort layout, the kn_agg_table and kn_join_table structs, an expression
 *   program), so the caller may change or free them at once, while the
 *   memory they point to must stay until the stream reached the kernel. A
 *   device whose table lacks a kernel answers PA_EUNSUPPORTED ("kernel
 *   kn_join_probe is not implemented on device cuda:0").
 * - Kernels never allocate. One whose scratch depends on the input has a
 *   *_scratch_size() function the caller uses first; outputs are caller
 *   buffers sized from the input (a filter's output can hold all input rows).
 * - A data-dependent output size (rows that passed, groups found, strings
 *   bytes) is written to an int64_t in pinned memory (dv_host_alloc) and
 *   read by the caller once the stream reached it, never by blocking. On
 *   sim such outputs hold DV_POISON_BYTE bytes until then.
 * - NULLs follow SQL: validity bitmaps as in core.h (NULL = all valid).
 * - Errors (overflow in DECIMAL arithmetic, a bad cast, a bad argument) are
 *   reported through the pa_err like everywhere else: by the call on cpu;
 *   on an asynchronous device by the stream (dv_stream_sync, or
 *   dv_event_query of an event recorded after the kernel), the call itself
 *   only failing when it cannot enqueue.
 * Each family of kernels has its own subsection, added by its module.
 * ====================================================================== */

typedef struct kn_ctx {
    dv_device *dev;
    dv_stream *stream;
} kn_ctx;

/* ----------------------------------------------------------------------
 * Aggregation (kn_agg*.c): group-by tables for GROUP BY, DISTINCT and
 * COUNT(DISTINCT)
 *
 * A table is flat arrays in one caller-allocated block of device memory:
 * group keys normalised to a fixed-width row (null flags, fixed-width
 * values, strings as length + 4-byte prefix, with their bytes in an arena),
 * one hash per group, an open-addressing index of (hash tag, group id)
 * words, one state array per aggregate slot (indexed by group id), and a
 * direct-indexed map for small dense key domains. Group ids are dense
 * 0..groups-1 in order of first appearance.
 *
 * Capacity contract (kernels never allocate): before kn_agg_update the
 * caller ensures cap_groups >= groups + n and cap_arena >= arena used +
 * kn_agg_input_bytes(); before kn_agg_merge, room for the source's groups
 * and arena bytes. Growing = a larger block, kn_agg_table_init on it, then
 * kn_agg_table_move. The sizes (groups, arena bytes used) live in pinned
 * memory the caller gives at init (DESIGN.md rule 2).
 * ---------------------------------------------------------------------- */

#define KN_AGG_MAX_KEYS 64
#define KN_AGG_MAX_SLOTS 64
/* Codes of the dense map: 2^16 uint32 entries = 256 KiB, a size that stays
 * in L2 and covers e.g. two 1-character flags or a few small integers. */
#define KN_AGG_DENSE_CODES (1 << 16)

typedef enum kn_agg_op {
    KN_AGG_COUNT_STAR,   /* rows; the argument is not read */
    KN_AGG_COUNT,        /* non-NULL arguments */
    KN_AGG_SUM,          /* INTEGER, BIGINT, DECIMAL -> __int128 state; DOUBLE -> double */
    KN_AGG_MIN,          /* any type; VARCHAR bytes are copied to the arena; INTERVAL by
                            pa_interval_norm (a tie keeps the value seen first) */
    KN_AGG_MAX,
    KN_AGG_EXTERN,       /* int64 count not updated by kn_agg_update (kn_agg_count_distinct) */
} kn_agg_op;

typedef struct kn_agg_slot {
    kn_agg_op op;
    pa_type type;        /* argument type (ignored by COUNT_STAR, COUNT, EXTERN) */
} kn_agg_slot;

/* Derived once per table shape by kn_agg_layout_init; copied into tables. */
typedef struct kn_agg_layout {
    int n_keys, n_str, n_slots;
    int stride;                          /* bytes of a normalised key, multiple of 8 */
    pa_type key_types[KN_AGG_MAX_KEYS];
    int key_off[KN_AGG_MAX_KEYS];        /* byte offset of each key's field */
    int key_str[KN_AGG_MAX_KEYS];        /* index among string keys, -1 if fixed */
    int null_off;                        /* null flag of key k at null_off + k */
    bool dense_ok;                       /* every key type can use the dense map */
    kn_agg_slot slots[KN_AGG_MAX_SLOTS];
    int slot_width[KN_AGG_MAX_SLOTS];    /* bytes of state per group */
} kn_agg_layout;

/* What the kernels change as a table fills, kept at the start of its device
 * block so that the host struct below stays constant after init (a kernel
 * receives that struct by value). The host never reads it: the sizes are
 * mirrored to the pinned `sizes` by every kernel that changes them. */
typedef struct kn_agg_hdr {
    int64_t groups, arena_used;
    int32_t dense;                       /* 0 off, 1 not yet decided, 2 on */
    int32_t pad_;
    int64_t dense_base[KN_AGG_MAX_KEYS], dense_span[KN_AGG_MAX_KEYS];
} kn_agg_hdr;

typedef struct kn_agg_table {
    kn_agg_layout L;
    int64_t cap_groups, cap_arena;
    uint64_t index_mask;                 /* index has index_mask + 1 words */
    kn_agg_hdr *hdr;                     /* device: the mutable sizes and dense ranges */
    uint8_t *keys;                       /* cap_groups * stride */
    int64_t *str_off;                    /* cap_groups * n_str arena offsets */
    uint64_t *ghash;                     /* cap_groups */
    uint64_t *index;                     /* (tag << 32) | (gid + 1); 0 = empty */
    void *state[KN_AGG_MAX_SLOTS];
    uint8_t *arena;
    uint32_t *dense_map;                 /* KN_AGG_DENSE_CODES gid+1 words, or NULL */
    int64_t *sizes;                      /* pinned: [0] groups, [1] arena bytes used */
} kn_agg_table;

/* Check the key and slot types (SUM of VARCHAR/BOOLEAN/DATE, too many keys
 * or slots: PA_EINVAL) and compute the layout. */
int kn_agg_layout_init(kn_agg_layout *L, const pa_type *key_types, int n_keys, const kn_agg_slot *slots,
                       int n_slots, pa_err *err);
/* Bytes of one block holding a table with these capacities. */
size_t kn_agg_table_bytes(const kn_agg_layout *L, int64_t cap_groups, int64_t cap_arena);
/* Lay an empty table out in mem (kn_agg_table_bytes bytes, 16-aligned,
 * device memory) and initialise its header, index and states (a kernel:
 * the host struct *t is filled by the call, the device block when the
 * stream gets there); sizes points to 2 int64 of pinned memory. A table
 * without keys starts with its single group (global aggregation). */
int kn_agg_table_init(const kn_ctx *ctx, kn_agg_table *t, const kn_agg_layout *L, void *mem, int64_t cap_groups,
                      int64_t cap_arena, int64_t *sizes, pa_err *err);
/* Copy src's groups, states and arena into dst (freshly initialised, same
 * layout, capacities at least src's use) keeping group ids; src unchanged.
 * Every kernel that adds groups or arena bytes (table init, move, update,
 * merge, merge_range) writes the new sizes to the table's pinned `sizes`:
 * read them with kn_agg_groups / kn_agg_arena_used once the stream got
 * there. */
int kn_agg_table_move(const kn_ctx *ctx, kn_agg_table *dst, const kn_agg_table *src, pa_err *err);
static inline int64_t kn_agg_groups(const kn_agg_table *t) { return t->sizes[0]; }
static inline int64_t kn_agg_arena_used(const kn_agg_table *t) { return t->sizes[1]; }

/* Most arena bytes kn_agg_update can add for these inputs (string keys and
 * VARCHAR MIN/MAX arguments), written to *out (pinned). */
int kn_agg_input_bytes(const kn_ctx *ctx, const kn_agg_table *t, const pa_column *keys, const pa_column *args,
                       int64_t n, int64_t *out, pa_err *err);
/* Scratch kn_agg_update needs for n rows. */
size_t kn_agg_update_scratch(const kn_agg_layout *L, int64_t n);
/* Find or insert the group of each of n rows (keys: n_keys columns) and fold
 * args[s] (one column per slot; ignored for COUNT_STAR/EXTERN) into the
 * slots. gids (optional, n entries) receives each row's group id. */
int kn_agg_update(const kn_ctx *ctx, kn_agg_table *t, const pa_column *keys, const pa_column *args, int64_t n,
                  void *scratch, size_t scratch_bytes, uint32_t *gids, pa_err *err);
/* Fold every group of src into dst (same layout), combining states.
 * key0_map (optional) rewrites src's key 0 (an INTEGER group id of another
 * table) through key0_map[] first: COUNT(DISTINCT) pair tables use it; it
 * must map src's ids one to one (the cpu loops would fold two source groups
 * that then share a key into one, the GPU kernels report a data fault).
 * gid_map (optional, src groups entries) receives dst's id of each group. */
int kn_agg_merge(const kn_ctx *ctx, kn_agg_table *dst, const kn_agg_table *src, const uint32_t *key0_map,
                 uint32_t *gid_map, pa_err *err);
/* Partitioning for a parallel merge. The top KN_AGG_PART_BITS bits of a
 * group's hash are its bucket. kn_agg_partition reorders t's groups (keys,
 * hashes, states; the arena stays) bucket by bucket, keeping their order
 * within a bucket, and writes where each bucket starts
 * (start[2^KN_AGG_PART_BITS + 1], pinned: bucket b is groups [start[b],
 * start[b + 1])) and, when arena is not NULL, the arena bytes each bucket
 * holds (pinned; string keys, VARCHAR MIN/MAX states). Afterwards t's index and
 * dense map no longer match its groups: t may only be merged from
 * (kn_agg_merge_range) or emitted. Equal keys have equal hashes, so merging
 * a range of buckets from several partitioned tables makes that range's
 * final groups independently of every other range. */
#define KN_AGG_PART_BITS 8
size_t kn_agg_partition_scratch(const kn_agg_layout *L, int64_t groups);
int kn_agg_partition(const kn_ctx *ctx, kn_agg_table *t, void *scratch, size_t scratch_bytes, int64_t *start,
                     int64_t *arena, pa_err *err);
/* Fold src's groups [first, first + n) into dst (same layout, room for n
 * groups and their arena bytes), combining states. */
int kn_agg_merge_range(const kn_ctx *ctx, kn_agg_table *dst, const kn_agg_table *src, int64_t first, int64_t n,
                       pa_err *err);
/* pairs has keys (INTEGER group id of t, x): add to t's EXTERN slot, per
 * group, the number of pairs whose x is not NULL (= COUNT(DISTINCT x)). */
int kn_agg_count_distinct(const kn_ctx *ctx, kn_agg_table *t, int slot, const kn_agg_table *pairs, pa_err *err);

/* How a result column is made from slots. */
typedef enum kn_agg_fin_kind {
    KN_AGG_FIN_COUNT,    /* value slot (an int64 count) -> BIGINT */
    KN_AGG_FIN_SUM,      /* value slot; NULL when count slot is 0; out BIGINT (checked),
                          * DECIMAL(38,s) or DOUBLE */
    KN_AGG_FIN_AVG,      /* sum / count / 10^scale -> DOUBLE; NULL when count is 0 */
    KN_AGG_FIN_MINMAX,   /* value slot as its type; NULL when count is 0 */
} kn_agg_fin_kind;

typedef struct kn_agg_fin {
    kn_agg_fin_kind kind;
    int value_slot, count_slot;
    pa_type out_type;
} kn_agg_fin;

/* Bytes of string data that emitting groups [first, first+count) of key
 * `key` (kn_agg_emit_key) or of VARCHAR MIN/MAX f (kn_agg_emit, key < 0)
 * produce, written to *out (pinned). */
int kn_agg_emit_bytes(const kn_ctx *ctx, const kn_agg_table *t, int key, const kn_agg_fin *f, int64_t first,
                      int64_t count, int64_t *out, pa_err *err);
/* Write key `key` of groups [first, first+count) to out: out->data (count
 * values, or the bytes for VARCHAR with out->offsets[count+1]) and
 * out->validity ((count+7)/8 bytes, always written) are caller buffers. */
int kn_agg_emit_key(const kn_ctx *ctx, const kn_agg_table *t, int key, int64_t first, int64_t count, pa_column *out,
                    pa_err *err);
/* Write the result column f of groups [first, first+count), as above.
 * A SUM that does not fit its output type is PA_EOVERFLOW. */
int kn_agg_emit(const kn_ctx *ctx, const kn_agg_table *t, const kn_agg_fin *f, int64_t first, int64_t count,
                pa_column *out, pa_err *err);

/* ---------------------------------------------------------------------
 * Sort and top-N (kn_sort*.c)
 *
 * Rows are ordered through normalized keys: the sort keys of a row are
 * encoded into a fixed-width byte string whose unsigned byte order (memcmp)
 * is the SQL order, followed by an 8-byte reference saying where the row
 * lives. An array of such records is radix sorted, merged with another
 * sorted array, or filtered against a threshold record; then the rows are
 * gathered from their sources (the column sets the references point into).
 *
 * Record layout (kn_sort_layout): per key, one flag byte (NULLS FIRST: NULL
 * 0, value 1; NULLS LAST: value 0, NULL 1) then the value: BOOLEAN 1 byte;
 * INTEGER/DATE 4, BIGINT/DECIMAL(<=18) and the int64 time types 8,
 * DECIMAL(>18) 16 bytes big-endian with the sign bit flipped, INTERVAL its
 * pa_interval_norm as that 16-byte form ('1 mon' and '30 days' tie); DOUBLE 8 bytes in total order (-0 = +0, every
 * NaN equal and greater than +Inf, as in PostgreSQL and DuckDB); VARCHAR its
 * first KN_SORT_STR_PREFIX bytes, zero-padded. DESC complements the value
 * bytes; a NULL's value bytes are zero. Then zero padding to a multiple of 8
 * and the reference: uint32 tag (which source), uint32 row.
 * When two rows tie on a VARCHAR key's prefix, its full strings decide
 * before any later key's bytes (has_strings); that needs the sources.
 * Sorts are not stable; rows equal on every key come out in any order.
 */
#define KN_SORT_MAX_KEYS 32
#define KN_SORT_STR_PREFIX 16

typedef struct kn_sort_key {
    int column;           /* index into a source's columns */
    pa_type type;
    bool descending;
    bool nulls_first;
} kn_sort_key;

typedef struct kn_sort_layout {
    int n_keys;
    kn_sort_key keys[KN_SORT_MAX_KEYS];
    uint32_t offset[KN_SORT_MAX_KEYS];   /* of each key's flag byte */
    uint32_t key_bytes;                  /* normalized key width */
    uint32_t stride;                     /* record bytes, a multiple of 8 */
    bool has_strings;
} kn_sort_layout;

/* A source: the columns of one chunk (host descriptors of device buffers),
 * indexed by kn_sort_key.column and by the gather's column argument.
 * Kernels take sources[0 .. n_sources), indexed by the records' tags;
 * sources may be NULL (n_sources 0) where a kernel does not need them. */
typedef const pa_column *kn_sort_source;

/* Fill l from keys (types BOOLEAN..VARCHAR). PA_EINVAL for 0 or more than
 * KN_SORT_MAX_KEYS keys or a bad type. */
int kn_sort_layout_init(kn_sort_layout *l, const kn_sort_key *keys, int n_keys, pa_err *err);

/* Encode rows [0, n) of the source `cols` into n records at recs (n *
 * stride bytes, device memory), references (tag, row). */
int kn_sort_encode(const kn_ctx *ctx, const kn_sort_layout *l, kn_sort_source cols, int64_t n, uint32_t tag,
                   uint8_t *recs, pa_err *err);

/* Scratch bytes kn_sort_records needs for n records. */
size_t kn_sort_scratch_size(const kn_sort_layout *l, int64_t n);
/* Sort n records in place (MSD radix on the key bytes, then the full
 * strings for ties). sources[tag] is read only when l->has_strings. */
int kn_sort_records(const kn_ctx *ctx, const kn_sort_layout *l, uint8_t *recs, int64_t n, void *scratch,
                    size_t scratch_size, const kn_sort_source *sources, int n_sources, pa_err *err);

/* Merge sorted a[na] and b[nb] into out[na + nb] (out overlaps neither). */
int kn_sort_merge(const kn_ctx *ctx, const kn_sort_layout *l, const uint8_t *a, int64_t na, const uint8_t *b,
                  int64_t nb, uint8_t *out, const kn_sort_source *sources, int n_sources, pa_err *err);

/* Merge step over n_runs sorted runs (runs[i] holds counts[i] records, the
 * first pos[i] of them already taken): write the next m records in order to
 * out (fewer if the runs run out: min(m, records left)) and advance pos
 * (device memory; runs and counts are host arrays, copied by the call).
 * Meant for a few runs (a linear scan of the heads). */
int kn_sort_merge_next(const kn_ctx *ctx, const kn_sort_layout *l, const uint8_t *const *runs, const int64_t *counts,
                       int64_t *pos, int n_runs, int64_t m, uint8_t *out, const kn_sort_source *sources,
                       int n_sources, pa_err *err);

/* Keep the records of in[n] that do not sort after the record at
 * threshold, compacted in order into out (out == in allowed, not a partial
 * overlap); the count goes to *count (pinned memory). With sources (which
 * must cover the threshold's tag) the full order decides; without, a tie
 * on a string prefix is kept. Rows dropped certainly sort after the
 * threshold, so a top-N whose N-th best is `threshold` loses nothing. */
int kn_sort_filter(const kn_ctx *ctx, const kn_sort_layout *l, const uint8_t *in, int64_t n,
                   const uint8_t *threshold, uint8_t *out, int64_t *count, const kn_sort_source *sources,
                   int n_sources, pa_err *err);

/* Copy n records from src to dst adding tag_add to every tag (dst == src
 * allowed: re-tag in place). */
int kn_sort_copy(const kn_ctx *ctx, const kn_sort_layout *l, const uint8_t *src, int64_t n, uint32_t tag_add,
                 uint8_t *dst, pa_err *err);

/* Gather column `column` of the rows the n records reference into out.
 * Fixed width: out->data holds n values. VARCHAR: first kn_sort_gather_bytes
 * writes the bytes needed to *bytes (pinned memory); the caller sizes
 * out->data, out->offsets has n + 1 slots. out->validity (n bits) must be
 * set when any source's column has one; it is written for every row.
 * out->length is set to n by the call. PA_EUNSUPPORTED when the strings
 * exceed INT32_MAX bytes; PA_EINVAL for a tag outside the sources. */
int kn_sort_gather_bytes(const kn_ctx *ctx, const kn_sort_layout *l, const kn_sort_source *sources, int n_sources,
                         int column, const uint8_t *recs, int64_t n, int64_t *bytes, pa_err *err);
int kn_sort_gather(const kn_ctx *ctx, const kn_sort_layout *l, const kn_sort_source *sources, int n_sources,
                   int column, const uint8_t *recs, int64_t n, pa_column *out, pa_err *err);

/* The first of kernels[0 .. n) (names without the kn_ prefix, e.g.
 * "agg_update") that device d has no implementation of, or NULL when it has
 * them all: what an operator needs is known before a query runs. */
const char *kn_device_lacks(const dv_device *d, const char *const *kernels, int n);

/* ----------------------------------------------------------------------
 * Expression programs (kn_expr*.c) and selection (kn_select.c)
 *
 * An expression (or several: a PROJECT's list) is compiled once per query
 * (src/exec/expr_compile.c) into a kn_program: ONE contiguous,
 * position-independent block (header, then arrays located by byte offsets
 * from the header; no pointers), so it can be copied to a device as is.
 * Instructions work on registers: column-sized temporaries of one batch of
 * KN_EVAL_BATCH rows (values + validity), held in the caller's scratch
 * (kn_eval_scratch_size). kn_eval runs every instruction over a whole batch
 * in a tight typed loop, batch after batch, so temporaries stay in cache and
 * nothing is interpreted per row. Operand types are uniform per instruction
 * (the compiler inserts casts), so each loop is monomorphic.
 *
 * Register value layout by kind of pa_type: BOOLEAN uint8, INTEGER/DATE
 * int32, BIGINT/DOUBLE/DECIMAL(<=18) and the int64 time types
 * (TIMESTAMP, TIMESTAMPTZ, TIME, TIMESTAMP_NS) 8 bytes,
 * DECIMAL(19..38) __int128, INTERVAL a pa_interval in a 16-byte slot,
 * VARCHAR a string view {pointer, length} into an input column, the
 * program's byte pool or a register's byte area (CAST to VARCHAR).
 * ---------------------------------------------------------------------- */

#define KN_EVAL_BATCH 1024        /* rows per register; multiple of 64 */
#define KN_EVAL_MAX_REGS 200      /* registers one program may use */
#define KN_EVAL_STR_ROW_BYTES 80  /* text bytes per row of a CAST to VARCHAR: any value's
                                     text with its NUL (PA_DT_TEXT_MAX's interval is the longest) */

/* X(NAME): instruction codes. Operands: a, b, c are registers unless the
 * matching KN_F_*_CONST flag says they index the constant table. */
#define KN_OPCODE_LIST(X)                                                     \
    X(LOAD)       /* dst = input column imm */                                \
    X(CONST)      /* dst = constant a, broadcast (prologue only) */           \
    X(ADD) X(SUB) X(MUL) /* dst = a op b; overflow is PA_EOVERFLOW */         \
    X(DIV)        /* a / b: DOUBLE, or INTEGER/BIGINT truncated; 0 divisor errs */ \
    X(MOD)        /* a % b, sign of a (fmod for DOUBLE); b = 0 is an error */ \
    X(NEG)        /* dst = -a */                                              \
    X(CMP)        /* dst = a sub b, sub a kn_cmp; any kind incl. VARCHAR;  \
                     INTERVAL by pa_interval_norm (also in IN lists) */      \
    X(AND) X(OR)  /* BOOLEAN, SQL three-valued logic */                       \
    X(NOT)                                                                    \
    X(IS_NULL)    /* sub 1: IS NOT NULL */                                    \
    X(SELECT)     /* dst = (a is TRUE) ? b : c (CASE) */                      \
    X(IN)         /* dst = a IN constants [imm, imm+imm2); sub 1: list had NULL */ \
    X(LIKE)       /* dst = a LIKE constant b; sub bit 0: NOT; bit 1: b is a  \
                     regular-expression program (kn_regex_compile), a ~ b */ \
    X(SUBSTR)     /* dst = SUBSTRING(a FROM b FOR c); imm 0: no FOR */        \
    X(EXTRACT)    /* dst = field sub (kn_date_field) of a (atype): BIGINT,  \
                     DOUBLE for EPOCH of a TIMESTAMP(TZ), TIME or INTERVAL */ \
    X(ADD_MONTHS) /* dst = DATE a + imm months, day clamped to month end */   \
    X(CAST)       /* dst (type) = CAST(a (atype)) */                         \
    X(MATH)       /* dst = function sub (kn_math) of a (and b); see kn_math */ \
    X(DATE_TRUNC) /* dst = DATE or TIMESTAMP(TZ) a truncated to field sub */ \
    X(MAKE_DATE)  /* dst = DATE of BIGINT year a, month b, day c (checked) */ \
    X(STRFN)      /* dst = string function sub (kn_strfn) of VARCHAR a, b, c */ \
    X(TEXT)       /* dst = new text: function sub (kn_textfn) of a, b, c */ \
    X(DTARITH)    /* dst = date/time arithmetic sub (kn_dtarith) of a, b */

typedef enum kn_opcode {
#define KN__OPC(name) KN_OP_##name,
    KN_OPCODE_LIST(KN__OPC)
#undef KN__OPC
    KN_OP__COUNT
} kn_opcode;
const char *kn_opcode_name(int op);

typedef enum kn_cmp { KN_CMP_EQ, KN_CMP_NE, KN_CMP_LT, KN_CMP_LE, KN_CMP_GT, KN_CMP_GE } kn_cmp;
/* Fields of a DATE (PostgreSQL's): DOW 0 = Sunday, ISODOW 7 = Sunday, WEEK
 * and ISOYEAR ISO 8601's, EPOCH seconds since 1970-01-01. DATE_TRUNC takes
 * YEAR, MONTH, DAY, QUARTER, WEEK (to Monday), DECADE, CENTURY, MILLENNIUM. */
typedef enum kn_date_field {
    KN_FIELD_YEAR, KN_FIELD_MONTH, KN_FIELD_DAY, KN_FIELD_QUARTER, KN_FIELD_DOW, KN_FIELD_ISODOW, KN_FIELD_DOY,
    KN_FIELD_WEEK, KN_FIELD_ISOYEAR, KN_FIELD_EPOCH, KN_FIELD_DECADE, KN_FIELD_CENTURY, KN_FIELD_MILLENNIUM,
    KN_FIELD_HOUR, KN_FIELD_MINUTE, KN_FIELD_SECOND, KN_FIELD_MILLISECONDS, KN_FIELD_MICROSECONDS,
    KN_FIELD__COUNT
} kn_date_field;
/* EXTRACT and DATE_TRUNC on time types (DuckDB's result types, PostgreSQL's
 * values): a (atype) DATE, TIMESTAMP, TIMESTAMPTZ (in UTC), TIME (only
 * HOUR .. MICROSECONDS and EPOCH) or INTERVAL (YEAR = months / 12, MONTH =
 * months % 12, DAY = days, HOUR .. MICROSECONDS of the micros, QUARTER =
 * MONTH / 3 + 1, DECADE / CENTURY / MILLENNIUM of YEAR, EPOCH the seconds
 * of the normalised length with a year as 365.25 days and a month as 30,
 * as PostgreSQL). SECOND is whole seconds (0..59), MILLISECONDS and
 * MICROSECONDS the seconds field with its fraction (12.5 s: 12500 and
 * 12500000; BIGINT, so a fraction of a millisecond is dropped). EPOCH is
 * DOUBLE seconds with the fraction for TIMESTAMP(TZ), TIME and INTERVAL;
 * the other fields BIGINT. Any field DATE lacks (HOUR .. MICROSECONDS) is
 * 0 for a DATE. An INTERVAL's HOUR .. MICROSECONDS keep the micros' sign.
 * DATE_TRUNC of a TIMESTAMP(TZ) keeps its type; fields YEAR .. MILLENNIUM
 * as for DATE (WEEK to Monday, CENTURY and MILLENNIUM PostgreSQL's: 2001-01-01
 * for 2020) plus HOUR, MINUTE, SECOND, MILLISECONDS, MICROSECONDS; a start
 * before the int64 range is PA_EOVERFLOW "timestamp out of range".
 * kn_program_check refuses any other shape (a field the type lacks, a
 * TIMESTAMP_NS operand, a dst type other than the above) with PA_EINVAL.
 *
 * CAST where a time type takes part (the same check refuses the others):
 * VARCHAR to and from each (core/datetime.h's PostgreSQL formats; bad text
 * is PA_EINVAL "invalid input syntax for type timestamp: \"<text>\"" with
 * PostgreSQL's type names: timestamp, timestamp with time zone, time,
 * interval, and timestamp_ns), DATE <-> TIMESTAMP(TZ) (midnight; back the
 * day, floored), TIMESTAMP <-> TIMESTAMPTZ (the same UTC value),
 * TIMESTAMP(TZ) -> TIME (the time of day, floored), TIMESTAMP_NS ->
 * TIMESTAMP (floor-divided by 1000) and -> DATE, TIMESTAMP -> TIMESTAMP_NS
 * (times 1000; past int64 is PA_EOVERFLOW). Text results are at most
 * KN_EVAL_STR_ROW_BYTES - 1 bytes. */

/* DTARITH: date and time arithmetic, PostgreSQL's rules (core/datetime.h's
 * pa_dt_* functions). TS is a TIMESTAMP or TIMESTAMPTZ (atype; dst has the
 * same type), IV an INTERVAL; a and b may be registers or constants.
 *   TS_ADD_IV / TS_SUB_IV: a TS +/- b IV: months first (the day of month
 *     clamped to the month's end), then days, then micros. DATE a is
 *     allowed too (atype DATE, dst TIMESTAMP: the date at midnight).
 *   TS_SUB_TS: dst IV = a - b (b a TS of a's type), as days and micros
 *     (micros within one day, with the difference's sign: PostgreSQL's
 *     timestamp_mi then interval_justify_hours); atype the TS.
 *   IV_ADD / IV_SUB: field by field.
 *   IV_MUL: a IV times DOUBLE b, the fractional months carried to days and
 *     fractional days to micros (PostgreSQL's interval_mul); IV_DIV: by b
 *     (b = 0 is "division by zero").
 *   IV_NEG: -a (b is -1).
 *   AGE: dst IV = age(a, b) of two TS: the field-wise difference in years,
 *     months, days and time of day, a negative field borrowing from the
 *     next larger one, a day borrowing the length of the month of the
 *     earlier of a and b (PostgreSQL's timestamp_age: age('2020-03-01',
 *     '2019-01-31 10:00') = 1 year 1 mon 14:00:00).
 *   TIME_ADD_IV / TIME_SUB_IV: a TIME +/- b IV's micros, wrapped to a day
 *     (dst TIME).
 *   IV_KEY: dst DECIMAL(38,0) = pa_interval_norm(a IV) (b is -1): the key
 *     the planner groups INTERVALs by ('1 mon' and '30 days' are one group).
 * Out-of-range results are PA_EOVERFLOW: "timestamp out of range",
 * "interval out of range"; IV_DIV by 0 is PA_EINVAL "division by zero". A
 * NULL row never errs. kn_program_check refuses other operand types. */
typedef enum kn_dtarith {
    KN_DT_TS_ADD_IV, KN_DT_TS_SUB_IV, KN_DT_TS_SUB_TS, KN_DT_IV_ADD, KN_DT_IV_SUB, KN_DT_IV_MUL, KN_DT_IV_DIV,
    KN_DT_IV_NEG, KN_DT_AGE, KN_DT_TIME_ADD_IV, KN_DT_TIME_SUB_IV, KN_DT_IV_KEY, KN_DT__COUNT
} kn_dtarith;

/* MATH functions. SQRT .. POWER: DOUBLE a (and b) to DOUBLE, with
 * PostgreSQL's errors (a negative square root, the logarithm of zero or of
 * a negative number, zero to a negative power, a negative number to a
 * non-integer power, a result out of range). LOG is log base a of b.
 * FLOOR, CEIL, TRUNC, ROUND of a DOUBLE: DOUBLE (ROUND: rint, half to even,
 * as PostgreSQL; with imm2 = 1, half away from zero at imm digits). Of a
 * DECIMAL: a / 10^imm rounded by the function (ROUND half away from zero),
 * times 10^imm2, as the dst DECIMAL (an overflow error when it does not
 * fit). SIGN: -1, 0 or 1 as dst (INTEGER, or DOUBLE for a DOUBLE).
 * AVG: DOUBLE of DECIMAL(38,s) a (an exact sum) over DECIMAL(38,0) b (its
 * count) as the aggregation's AVG divides, bit for bit:
 * (double)((long double)a / ((long double)b * 10^s)); b = 0 gives 0 (a is
 * NULL then). It merges AVG's partial sums and counts across ranks. */
typedef enum kn_math {
    KN_MATH_SQRT, KN_MATH_CBRT, KN_MATH_EXP, KN_MATH_LN, KN_MATH_LOG10, KN_MATH_LOG, KN_MATH_POWER,
    KN_MATH_FLOOR, KN_MATH_CEIL, KN_MATH_TRUNC, KN_MATH_ROUND, KN_MATH_SIGN, KN_MATH_AVG
} kn_math;

/* STRFN functions (PostgreSQL's), on VARCHAR a; results that are parts of
 * a are views into it. LENGTH (characters) and OCTET_LENGTH: BIGINT.
 * STRPOS: BIGINT, the character position of VARCHAR b in a, 0 when absent.
 * STARTS_WITH: BOOLEAN. LEFT/RIGHT: the first/last BIGINT b characters
 * (b < 0: all but the last/first -b). BTRIM/LTRIM/RTRIM: a without the
 * characters of VARCHAR b at both ends/the start/the end. SPLIT_PART: field
 * BIGINT c of a split at VARCHAR b (c < 0 counts from the end; 0 is an
 * error). */
typedef enum kn_strfn {
    KN_STR_LENGTH, KN_STR_OCTET_LENGTH, KN_STR_STRPOS, KN_STR_STARTS_WITH, KN_STR_LEFT, KN_STR_RIGHT,
    KN_STR_BTRIM, KN_STR_LTRIM, KN_STR_RTRIM, KN_STR_SPLIT_PART
} kn_strfn;

/* TEXT functions (PostgreSQL's) make new text of VARCHAR a, written into
 * the register's slot of the call's text area (kn_text_reg). UPPER, LOWER:
 * Unicode's simple case mappings (kn_case.h); INITCAP: the first letter of
 * each run of letters and digits in title case, the rest lower case.
 * CONCAT: a || b, NULL when either is. CONCAT_WS: a (so far), b separator,
 * c (the next value): a when c is NULL, c when a is NULL, else a || b || c
 * (a NULL b as empty); NULL only when a and c are. REPLACE: a with each
 * occurrence of constant b, left to right, replaced by constant c (an empty
 * b leaves a). LPAD/RPAD: a filled on the left/right with the characters of
 * constant c, repeated, to BIGINT constant b characters, or cut to its first
 * b (b <= 0 or an empty c and a shorter: a cut, possibly ''). REPEAT: a
 * BIGINT constant b times (b <= 0: ''). REVERSE: a's characters backwards.
 * TRANSLATE: each character of a found in constant b (its first place
 * there) replaced by the character of constant c at that place, or dropped
 * when c is shorter. MD5: the MD5 digest of a's bytes, 32 lowercase hex
 * digits. REGEXP_REPLACE: a with the first match (every match under
 * KN_RE_GLOBAL) of regular-expression program b, a constant from
 * kn_regex_compile, replaced by constant c, in which \1..\9 are groups,
 * \0 and \& the match, \\ a backslash (kn_regex.h). */
typedef enum kn_textfn {
    KN_TEXT_UPPER, KN_TEXT_LOWER, KN_TEXT_INITCAP, KN_TEXT_CONCAT, KN_TEXT_CONCAT_WS, KN_TEXT_REPLACE,
    KN_TEXT_LPAD, KN_TEXT_RPAD, KN_TEXT_REPEAT, KN_TEXT_REVERSE, KN_TEXT_TRANSLATE, KN_TEXT_MD5,
    KN_TEXT_REGEXP_REPLACE,
    /* CASTs with the byte types (core/binary.h's texts): BYTEA_IN text a to
     * BYTEA (hex or escape format), BYTEA_OUT BYTEA a to its "\x" hex text,
     * UUID_IN text a to UUID, UUID_OUT UUID a to its text. Text that is no
     * such value is an error naming it. The instruction's type is the
     * result's. */
    KN_TEXT_BYTEA_IN, KN_TEXT_BYTEA_OUT, KN_TEXT_UUID_IN, KN_TEXT_UUID_OUT
} kn_textfn;

/* Regular-expression programs (kn_regex.h runs them, per row, on every
 * device). The syntax is the common part of PostgreSQL's AREs and RE2's:
 * literal characters (UTF-8 code points), '.', bracket expressions with
 * ranges, negation and [:alpha:] digit alnum upper lower space punct xdigit
 * (ASCII, as RE2's), \d \D \w \W \s \S (ASCII), \t \n \r \f \v,
 * escaped punctuation, ^ and $ (the string's start and end), ( ) and (?: ),
 * |, * + ? {n} {n,} {n,m} and their lazy forms with ?. Flags: KN_RE_ICASE
 * matches under simple case folding, KN_RE_GLOBAL makes REGEXP_REPLACE
 * replace every match. A program has at most KN_RE_MAX_INSNS instructions
 * (a{2,5} counts a's five times) in at most KN_RE_MAX_BYTES bytes. */
enum {
    KN_RE_MAGIC = 0x52, KN_RE_HDR = 4, KN_RE_MAX_INSNS = 128, KN_RE_MAX_BYTES = 4096,
    KN_RE_ICASE = 1, KN_RE_GLOBAL = 2
};
/* Compiles pattern pat[0, len) with flags into out (KN_RE_MAX_BYTES),
 * its length to *out_len. An invalid pattern, a construct outside the
 * syntax above (backreferences, lookaround, \b, embedded options, ...) or
 * one too complex is PA_EINVAL with a message naming the pattern, what is
 * wrong and where (a 1-based character position); out is then undefined. */
int kn_regex_compile(const char *pat, int64_t len, int flags, uint8_t *out, int64_t *out_len, pa_err *err);

enum { KN_F_A_CONST = 1, KN_F_B_CONST = 2, KN_F_C_CONST = 4 };

typedef struct kn_insn {
    uint8_t op;          /* kn_opcode */
    uint8_t sub;         /* kn_cmp, kn_date_field, negation flag, ... */
    uint8_t flags;       /* KN_F_*_CONST */
    uint8_t pad_;
    int16_t dst, a, b, c;
    int32_t imm, imm2;
    pa_type type;        /* of dst */
    pa_type atype;       /* of a (and b, c where they have a's type) */
} kn_insn;

/* A constant: VARCHAR bytes live in the program's pool. */
typedef struct kn_value {
    pa_type type;
    uint8_t is_null;
    uint32_t str_off, str_len;
    union {
        int64_t i;       /* BOOLEAN, INTEGER, DATE, BIGINT, DECIMAL(<=18),
                            TIMESTAMP, TIMESTAMPTZ, TIME, TIMESTAMP_NS */
        double f;
        __int128 w;      /* DECIMAL(19..38); INTERVAL: a pa_interval's bytes */
    } v;
} kn_value;

typedef struct kn_output {
    int16_t reg;
    uint8_t may_null;    /* can be NULL even when no input column has NULLs */
    pa_type type;
} kn_output;

/* Where a TEXT instruction's results go. Every call gets a text area
 * (kn_eval_str_bound with KN_EVAL_TEXT_AREA gives its size); in it the
 * register of each kn_text_reg, in program order, has pos(rows) bytes
 * (rounded up to 8), and row i of it the slot [pos(i), pos(i + 1)), where
 * pos(i) = per_row * i + sum over t < n of k[t] * (offsets[i] - offsets[0])
 * of input column col[t]: the most bytes the function can make from its
 * operands, as kn__text_rule bounds them. So each row finds its slot
 * without a scan, on the cpu's batches as in one GPU thread per row. */
#define KN_TEXT_TERMS 8
typedef struct kn_text_reg {
    int64_t per_row;
    int64_t k[KN_TEXT_TERMS];
    int16_t col[KN_TEXT_TERMS];
    int16_t reg;                      /* the register written by the TEXT instruction */
    uint8_t n;                        /* terms used */
} kn_text_reg;

/* The program header; the arrays follow at the byte offsets given. */
typedef struct kn_program {
    uint32_t bytes;                   /* whole block, header included */
    uint16_t n_insns, n_prologue;     /* the first n_prologue run once */
    uint16_t n_consts, n_regs, n_inputs, n_outputs;
    uint32_t insns_at, consts_at, reg_bytes_at, inputs_at, outputs_at, pool_at, pool_bytes;
    uint16_t n_text;                  /* TEXT instructions: kn_text_reg entries at text_at */
    uint32_t text_at;
} kn_program;

static inline PA_HD const kn_insn *kn_program_insns(const kn_program *p)
{ return (const kn_insn *)((const char *)p + p->insns_at); }
static inline PA_HD const kn_value *kn_program_consts(const kn_program *p)
{ return (const kn_value *)((const char *)p + p->consts_at); }
/* Per register: bytes per row of its own text area (0 = none). */
static inline PA_HD const uint32_t *kn_program_reg_bytes(const kn_program *p)
{ return (const uint32_t *)((const char *)p + p->reg_bytes_at); }
/* Per input column index: its expected type (id PA_TYPE__COUNT = unused). */
static inline PA_HD const pa_type *kn_program_inputs(const kn_program *p)
{ return (const pa_type *)((const char *)p + p->inputs_at); }
static inline PA_HD const kn_output *kn_program_outputs(const kn_program *p)
{ return (const kn_output *)((const char *)p + p->outputs_at); }
static inline PA_HD const char *kn_program_pool(const kn_program *p)
{ return (const char *)p + p->pool_at; }
static inline PA_HD const kn_text_reg *kn_program_text(const kn_program *p)
{ return (const kn_text_reg *)((const char *)p + p->text_at); }

/* Fill p's kn_text_reg entries (p->n_text of them at p->text_at, the rest
 * of the block already written) from its instructions: the compiler calls
 * it last. PA_EUNSUPPORTED when a TEXT result depends on more than
 * KN_TEXT_TERMS input columns or its bound overflows. */
int kn_program_fill_text(kn_program *p, pa_err *err);

/* Check a program's structure (offsets inside the block, register and
 * constant indexes in range, opcodes known). PA_EINVAL naming the problem. */
int kn_program_check(const kn_program *p, pa_err *err);

/* Scratch kn_eval / kn_filter need for this program (any row count). */
size_t kn_eval_scratch_size(const kn_program *p);
/* Whether output `out` may have NULLs given which inputs have validity
 * (metadata only): the caller gives that output a validity buffer iff so. */
bool kn_eval_may_null(const kn_program *p, int out, const pa_column *inputs, int n_inputs);
/* Upper bound of the text bytes of VARCHAR output `out` over `rows` rows
 * (from the inputs' offsets): the caller sizes the output's bytes with it.
 * With out = KN_EVAL_TEXT_AREA: the size of the text area kn_eval and
 * kn_filter need (0 when the program has no TEXT instruction).
 * Reads the offsets on the calling thread, so the inputs must be host
 * memory (host columns, or the cpu device's); for columns in device memory
 * use kn_eval_str_bytes. */
#define KN_EVAL_TEXT_AREA (-1)
int64_t kn_eval_str_bound(const kn_program *p, int out, const pa_column *inputs, int n_inputs, int64_t rows);
/* KN_EVAL_TEXT_AREA's size from what the host knows of the inputs
 * (pa_column_bytes): true with *bytes when it knows enough. */
bool kn_eval_text_area_known(const kn_program *p, const pa_column *inputs, int n_inputs, int64_t rows,
                             int64_t *bytes);
/* kn_eval_str_bound as a kernel: the bound to *bytes (pinned). */
int kn_eval_str_bytes(const kn_ctx *ctx, const kn_program *p, int out, const pa_column *inputs, int n_inputs,
                      int64_t rows, int64_t *bytes, pa_err *err);

/* Evaluate every output of p over rows [0, rows) of inputs (a chunk's
 * columns; each column the program reads must have the type it expects).
 * outs[i] has data for `rows` values of its type (VARCHAR: offsets[rows+1]
 * whose offsets[0] holds the byte where the text starts, normally 0 (on a
 * device whose memory the host cannot touch, set it with
 * dv_fill_u32_async), and bytes of kn_eval_str_bound capacity) and
 * validity iff kn_eval_may_null; types are set by the caller to
 * kn_program_outputs. p is host memory (the whole block is copied by an
 * asynchronous device's call).
 * ctx->dev may be NULL: evaluate on the host (constant folding).
 * text: the text area, device memory of text_bytes >= kn_eval_str_bound(p,
 * KN_EVAL_TEXT_AREA, ...) (NULL and 0 when that is 0); the outputs may view
 * into it, so it must live until they have been copied out (kn_eval's
 * VARCHAR outputs are copies: only until the call completes).
 * Errors: PA_EOVERFLOW / PA_EINVAL naming the operation and the value (a
 * row whose inputs are NULL never errs); outs are then unspecified. */
int kn_eval(const kn_ctx *ctx, const kn_program *p, const pa_column *inputs, int n_inputs, int64_t rows,
            pa_column *outs, void *scratch, void *text, int64_t text_bytes, pa_err *err);

/* Fused filter: p has one BOOLEAN output; writes the ascending indexes of
 * the rows where it is TRUE to sel (capacity rows) and their number to
 * *count (pinned memory). */
int kn_filter(const kn_ctx *ctx, const kn_program *p, const pa_column *inputs, int n_inputs, int64_t rows,
              int32_t *sel, int64_t *count, void *scratch, void *text, int64_t text_bytes, pa_err *err);

/* Selection from a BOOLEAN column: indexes of rows that are TRUE (not NULL,
 * not 0) to sel (capacity rows), their number to *count (pinned). */
int kn_select(const kn_ctx *ctx, const pa_column *pred, int64_t rows, int32_t *sel, int64_t *count,
              pa_err *err);

/* Gather: output row out_at + k = input row (sel ? sel[k] : in_at + k), for
 * k in [0, n). Fixed width: out->data holds out_at + n values. Validity:
 * when in has a bitmap, out->validity must have one (its bits written);
 * when in has none and out has one, the bits are set. VARCHAR: as the page
 * decoders, out->offsets[out_at] must hold where these bytes start; the
 * call writes offsets[out_at+1 .. out_at+n] and the bytes, whose size
 * kn_gather_str_bytes gives first. Rows may repeat and be in any order. */
int kn_gather(const kn_ctx *ctx, const pa_column *in, const int32_t *sel, int64_t in_at, int64_t n,
              pa_column *out, int64_t out_at, pa_err *err);
/* Bytes of the strings kn_gather would copy, to *bytes (pinned). */
int kn_gather_str_bytes(const kn_ctx *ctx, const pa_column *in, const int32_t *sel, int64_t in_at, int64_t n,
                        int64_t *bytes, pa_err *err);

/* ---------------------------------------------------------------------
 * Hashing, hash partitioning and hash join (kn_hash.c, kn_join*.c)
 * ---------------------------------------------------------------------
 *
 * Key columns may be BOOLEAN, INTEGER, DATE, BIGINT, DECIMAL (64 or 128
 * bits), DOUBLE or VARCHAR. The hash is a pure function of the key values
 * (stable across processes and ranks): integer-like keys hash their value as
 * int64, so INTEGER 7, BIGINT 7 and DECIMAL(p,s) 7 hash alike; a NULL value
 * hashes to a constant. Row ids are int32 (a chunk, and a hash join's build
 * side, hold at most INT32_MAX rows).
 */

/* True if t may be a key column: any type (the time types stored as int64
 * hash and compare as BIGINT, an INTERVAL as its pa_interval_norm, so '1 mon'
 * and '30 days' are one key). */
bool kn_hash_key_type_ok(pa_type t);
/* True if build type a and probe type b may be joined: the same type id
 * (DECIMAL: the same scale, 64 or 128 bits on either side), or INTEGER with
 * BIGINT (compared as BIGINT). */
bool kn_join_key_types_ok(pa_type a, pa_type b);

/* hashes[i] = hash of row i's keys (n_keys >= 1 columns of rows rows). */
int kn_hash_keys(const kn_ctx *ctx, const pa_column *keys, int n_keys, int64_t rows, uint64_t *hashes,
                 pa_err *err);

/* The partition (0 .. n_parts-1) of a hash: exact and the same everywhere. */
static inline PA_HD uint32_t kn_partition_of(uint64_t hash, uint32_t n_parts)
{
    return (uint32_t)(((hash >> 32) * (uint64_t)n_parts) >> 32);
}
/* out[i] = start + i * step for i in [0, n), BIGINT (wrapping: the caller
 * keeps the values in range), for generate_series and range. */
int kn_sequence(const kn_ctx *ctx, int64_t start, int64_t step, int64_t n, int64_t *out, pa_err *err);
/* part[i] = kn_partition_of(hashes[i], n_parts); n_parts >= 1. */
int kn_partition_ids(const kn_ctx *ctx, const uint64_t *hashes, int64_t rows, uint32_t n_parts,
                     uint32_t *part, pa_err *err);
/* offsets[p] = first position of partition p in the partitioned order,
 * offsets[n_parts] = rows (n_parts + 1 entries: pinned memory, the sizes of
 * the partitions are data dependent). */
int kn_partition_offsets(const kn_ctx *ctx, const uint32_t *part, int64_t rows, uint32_t n_parts,
                         int64_t *offsets, pa_err *err);
size_t kn_partition_order_scratch_size(uint32_t n_parts);
/* row_order[offsets[p] .. offsets[p+1]) = the rows of partition p in their
 * input order (a stable counting sort). Gather columns with kn_take. */
int kn_partition_order(const kn_ctx *ctx, const uint32_t *part, int64_t rows, uint32_t n_parts,
                       const int64_t *offsets, void *scratch, size_t scratch_size, int32_t *row_order,
                       pa_err *err);

/* ------------------------------------------------ take (gather with NULLs)
 *
 * dst row i = src row idx[i], or NULL where idx[i] < 0 (the build side of a
 * LEFT join's unmatched rows). dst is caller memory: `type` as src, `data`
 * for n values (VARCHAR: the bytes kn_take_string_bytes counted), `offsets`
 * n+1 entries (VARCHAR), `validity` (n bits) required when src has NULLs or
 * idx holds a negative entry (PA_EINVAL otherwise); dst->length is set. */
int kn_take_string_bytes(const kn_ctx *ctx, const pa_column *src, const int32_t *idx, int64_t n,
                         int64_t *bytes, pa_err *err);
int kn_take(const kn_ctx *ctx, const pa_column *src, const int32_t *idx, int64_t n, pa_column *dst,
            pa_err *err);
/* Append all of src (src->length rows) at row `at` of dst, which has room:
 * fixed width values copied; VARCHAR bytes appended at byte dst->offsets[at]
 * (written by the previous append; at == 0 starts at byte 0) and offsets
 * rebased;
 * dst->validity (if not NULL) gets src's bits, or ones. Used to concatenate
 * chunks into one columnar buffer. */
int kn_append_column(const kn_ctx *ctx, const pa_column *src, pa_column *dst, int64_t at, pa_err *err);
/* Validity bits from any bit position (kn_bits.c): dst bits [0, n) = src
 * bits [src_at, src_at + n), the unused high bits of dst's last byte
 * cleared; dst ((n + 7) / 8 bytes) overlaps no source byte. A slice of a
 * column that starts at a row not a multiple of 8 (LIMIT/OFFSET) needs it. */
int kn_copy_bits(const kn_ctx *ctx, const uint8_t *src, int64_t src_at, int64_t n, uint8_t *dst, pa_err *err);

/* ------------------------------------------------- page decompression
 *
 * Parquet pages decompressed where they are (kn_gpu_codec.cu on sim and
 * cuda, one warp per page; the cpu device runs kn_decompress per page):
 * jobs is an array of n kn_codec_job in the device's memory, whose src and
 * dst are device memory too (dst exactly dst_size bytes, never written
 * past). Codecs on the device: UNCOMPRESSED, SNAPPY, LZ4 (Hadoop framing,
 * else one raw block, as kn_decompress) and LZ4_RAW; any other codec is
 * refused at once (PA_EUNSUPPORTED; GZIP, ZSTD and BROTLI pages are
 * decompressed by host threads before the upload). Each job's status
 * becomes PA_OK or PA_ECORRUPT; a corrupt page is also a data fault of the
 * stream ("SNAPPY page 3 of the batch: ..."), reported by the next sync,
 * and on the cpu device by the call itself (every page is still tried).
 * The host's codes decide what is corrupt: a page gives the same bytes or
 * the same refusal on every device. */
bool kn_decompress_pages_supported(int codec);
int kn_decompress_pages(const kn_ctx *ctx, kn_codec_job *jobs, int64_t n, pa_err *err);

/* ------------------------------------------------------- page decoding
 *
 * Parquet data pages decoded where they are (kn_gpu_decode.cu on sim and
 * cuda, one warp per page; the cpu device runs kn_page_job_run per page):
 * jobs is an array of n kn_page_job in the device's memory, whose src,
 * scratch, dict.values, out.values and out.validity are device memory too.
 * What the device decodes (kn_decode_pages_supported says it of a job on
 * the host): already uncompressed pages (codec KN_CODEC_UNCOMPRESSED; run
 * kn_decompress_pages first) of flat fixed-width columns, v1 pages with RLE
 * definition levels and v2 pages, values PLAIN (BOOLEAN, INT32, INT64,
 * FLOAT, DOUBLE to their engine types), DELTA_BINARY_PACKED (INT32, INT64),
 * BYTE_STREAM_SPLIT (INT32, INT64, FLOAT, DOUBLE), RLE (BOOLEAN) or
 * PLAIN_DICTIONARY / RLE_DICTIONARY (any fixed-width engine type but
 * BOOLEAN: dict.values holds the dictionary decoded to the engine's width,
 * 4 or 8 bytes), and VARCHAR columns: BYTE_ARRAY values PLAIN or
 * DELTA_LENGTH_BYTE_ARRAY, or any string column's dictionary pages
 * (dict.offsets and dict.bytes hold the dictionary's strings). The scratch
 * holds, per value of the page (num_values), 4 bytes for a dictionary
 * page's indices or an RLE page's booleans and 8 for a DELTA page's values;
 * a string page 4 bytes per value and 4 more (PLAIN), 8 per value and 4
 * more (dictionary), 12 per value and 4 more (DELTA_LENGTH_BYTE_ARRAY).
 * String pages write out.offsets (capacity + 1 entries) and out.bytes
 * (bytes_capacity): the string pages of one output (one out.offsets) come
 * one after the other in the batch, in row order, each at the row where the
 * one before ended (PA_EINVAL otherwise); the first one's strings start at
 * the byte its caller put in out.offsets[row_offset], each later one's
 * where the one before ended, so the host needs no page's size; a string
 * page after a refused page of its output is refused too (PA_EINVAL), and
 * string bytes past bytes_capacity are PA_EINVAL, past 2^31-1 bytes
 * PA_EUNSUPPORTED (int32 offsets). out.validity,
 * when there is one, is 4-byte aligned and has whole 32-bit words for every
 * row of out (capacity rounded up to 32 bits): pages whose rows share a word
 * may be decoded at once, each writing only its own rows' bits. Each job's
 * status becomes PA_OK, PA_ECORRUPT (exactly what kn_page_decode refuses),
 * PA_EUNSUPPORTED or PA_EINVAL (a job the contract does not allow); a
 * refused page is also a data fault of the stream ("page 3 of the batch:
 * ..."), reported by the next sync, and on the cpu device by the call
 * itself (every page is still tried). */
bool kn_decode_pages_supported(const kn_page_job *job);
int kn_decode_pages(const kn_ctx *ctx, kn_page_job *jobs, int64_t n, pa_err *err);

/* ------------------------------------------------------------ hash join
 *
 * The table is flat, in device memory, built once over the whole build side
 * (columnar, rows 0..build_rows-1): a power-of-two array of slots, one per
 * distinct key, holding the first build row of that key; `next` chains the
 * other build rows with an equal key. When the build keys are integer-like
 * and fit in 64 bits (one key, or two 32-bit keys) the slot also holds the
 * packed key, so a probe compares one word per slot it visits. When no key
 * repeats (reported by the build) the probe never follows a chain: the
 * unique-key fast path. Build rows with a NULL key are not inserted (they
 * never match) but are listed for MARK's SQL semantics.
 */
typedef enum kn_join_kind {
    KN_JOIN_INNER,   /* every (probe, build) pair with equal keys */
    KN_JOIN_LEFT,    /* INNER, plus (probe, -1) for each probe row without a match */
    KN_JOIN_SEMI,    /* each probe row with a match, once */
    KN_JOIN_ANTI,    /* each probe row without a match (NOT EXISTS: NULL keys included) */
    KN_JOIN_MARK,    /* each probe row, with mark = its IN (build keys) value: TRUE if a
                      * match; else NULL when the build side is not empty and the
                      * comparison is unknown (a NULL in the probe key, or a build key
                      * equal up to its NULL components); else FALSE */
} kn_join_kind;

/* Results of the build, data dependent (put the struct in pinned memory). */
typedef struct kn_join_build_info {
    int64_t distinct_keys;    /* slots used */
    int64_t null_key_rows;    /* build rows with a NULL in any key column */
    int32_t unique;           /* 1 if no key occurs twice */
    int32_t pad_;
} kn_join_build_info;

#define KN_JOIN_MAX_KEYS 32

typedef struct kn_join_table {
    int64_t build_rows;
    uint64_t n_slots;         /* power of two, >= 2 * build_rows */
    int32_t packed;           /* 1 = slots hold packed 64-bit keys */
    int32_t n_keys;
    pa_column keys[KN_JOIN_MAX_KEYS]; /* the build key columns' descriptors (copies; their
                                 buffers must outlive the table) */
    void *slots;              /* n_slots * kn_join_slot_bytes */
    int32_t *next;            /* build_rows: next row with an equal key, or -1 */
    int32_t *null_rows;       /* build_rows: rows with a NULL key, first null_key_rows used */
    uint64_t *filter;         /* small tables: one bit per (remixed) hash, set for every
                                 build key, so most probe misses skip the slots; or NULL */
    int32_t filter_shift;     /* bit index = (hash * K) >> filter_shift */
    kn_join_build_info *info; /* pinned: written by kn_join_build */
    uint64_t *counters;       /* device: the build's counters on a GPU (distinct keys, NULL-key
                                 rows, a duplicate seen), where atomics on pinned memory are
                                 not available; info gets copies */
} kn_join_table;

/* Device bytes a table of build_rows rows needs (one allocation). */
size_t kn_join_table_bytes(int64_t build_rows, const pa_type *build_types, const pa_type *probe_types,
                           int n_keys);
/* Lay out a table in mem (kn_join_table_bytes of it) for the given build key
 * columns (1..KN_JOIN_MAX_KEYS, their descriptors copied into *t) and probe
 * key types; info points to pinned memory. No work is done and no device
 * memory touched; PA_EINVAL for incompatible key types
 * (kn_join_key_types_ok). */
int kn_join_table_init(kn_join_table *t, void *mem, size_t bytes, int64_t build_rows, const pa_column *build_keys,
                       const pa_type *probe_types, int n_keys, kn_join_build_info *info, pa_err *err);
/* Insert every build row; hashes = kn_hash_keys of the build keys. The
 * table's info is an output of kn_join_build and of kn_join_build_begin
 * with slot_lo 0 (kn_join_build_rows adds to it). */
int kn_join_build(const kn_ctx *ctx, kn_join_table *t, const uint64_t *hashes, pa_err *err);
/* The same in steps (a caller that wants to stop in between, e.g. on a
 * canceled query, or several threads or streams sharing the work):
 * kn_join_build_begin empties slots [slot_lo, slot_hi) (and resets the info
 * when slot_lo is 0), called over ranges covering [0, n_slots); then, once
 * every one of those ran, kn_join_build_rows inserts rows [lo, hi), over
 * disjoint ranges covering [0, build_rows) in any order, concurrently if
 * the caller likes (the inserts are atomic); the info is complete after all
 * of them ran. */
int kn_join_build_begin(const kn_ctx *ctx, kn_join_table *t, uint64_t slot_lo, uint64_t slot_hi, pa_err *err);
int kn_join_build_rows(const kn_ctx *ctx, kn_join_table *t, const uint64_t *hashes, int64_t lo, int64_t hi,
                       pa_err *err);

/* Probe progress over one probe chunk: zero it (all fields) before the first
 * call for a chunk; it lives in pinned memory. The call writes up to
 * `capacity` output rows; when `done` is 0, call again (same chunk, same
 * cursor) for the rest: a key matching many build rows fans out over calls. */
typedef struct kn_join_cursor {
    int64_t row;          /* next probe row to start */
    int32_t chain;        /* build row to continue row `row` with, or -1 */
    int32_t started;      /* internal: the scratch holds this chunk's keys */
    int32_t done;         /* out: the chunk is finished */
    int32_t pad_;
    int64_t n_out;        /* out: rows written by the last call */
    int64_t n_null;       /* out: LEFT rows with build -1; MARK rows with a NULL mark */
} kn_join_cursor;

/* Scratch bytes a probe of `rows` rows needs; keep it unchanged between
 * the calls for one chunk. */
size_t kn_join_probe_scratch_size(const kn_join_table *t, int64_t rows);
/* Probe rows of probe_keys (hashes = kn_hash_keys of them). Outputs:
 *  INNER, LEFT: pairs probe_idx[i], build_idx[i] (build -1 = no match, LEFT);
 *  SEMI, ANTI:  probe_idx only (build_idx may be NULL), in probe order;
 *  MARK:        one row per probe row in order: probe_idx[i] = i, mark[i]
 *               (uint8 0/1) and mark_valid (bitmap, all rows; may be NULL
 *               only if no mark is NULL -> PA_EINVAL otherwise).
 * capacity >= 1; for SEMI, ANTI and MARK a capacity >= rows finishes in one
 * call. */
int kn_join_probe(const kn_ctx *ctx, const kn_join_table *t, kn_join_kind kind, const pa_column *probe_keys,
                  const uint64_t *hashes, int64_t rows, void *scratch, size_t scratch_size,
                  kn_join_cursor *cur, int64_t capacity, int32_t *probe_idx, int32_t *build_idx,
                  uint8_t *mark, uint8_t *mark_valid, pa_err *err);

/* unknown[i] = 1 when probe row i's keys IN (the build keys) would be NULL
 * if no build key equaled them (KN_JOIN_MARK's rule: the build side is not
 * empty, and the probe key has a NULL or a build key with NULLs equals it in
 * its other components), else 0; whether a build key equals it is not
 * looked at. rows bytes of unknown. */
int kn_join_in_unknown(const kn_ctx *ctx, const kn_join_table *t, const pa_column *probe_keys, int64_t rows,
                       uint8_t *unknown, pa_err *err);

/* ------------------------------------ joins on candidate pairs (kn_join_pairs.c)
 *
 * A join with a residual predicate, or without keys, works on candidate
 * (probe row, build row) pairs: the key-equal pairs of kn_join_probe
 * (KN_JOIN_INNER) or, without keys, every pair (kn_join_cross). The caller
 * evaluates the residual over the pairs (kn_eval on the gathered columns);
 * kn_join_pairs_filter keeps the pairs where it is TRUE and records per
 * probe row whether some pair was TRUE or NULL; once every pair of a probe
 * chunk went through, kn_join_finish turns those per-row states into the
 * rows of LEFT (the rows to pad), SEMI, ANTI and MARK.
 */
enum { KN_JOIN_ROW_TRUE = 1, KN_JOIN_ROW_NULL = 2 };

/* Every pair (i, r), i < rows, r < build_rows, in probe-major order from
 * the cursor on (cur->row, cur->chain = the next build row; zero the cursor
 * for a new chunk): up to capacity >= 1 pairs to probe_idx / build_idx,
 * cur->n_out = their number, cur->done once the last one was written. */
int kn_join_cross(const kn_ctx *ctx, int64_t rows, int64_t build_rows, kn_join_cursor *cur, int64_t capacity,
                  int32_t *probe_idx, int32_t *build_idx, pa_err *err);
/* pred: a BOOLEAN column over n pairs (validity NULL: no NULLs). Keeps the
 * pairs where pred is TRUE, in order, compacted in place in probe_idx and
 * build_idx (may be NULL); their number to *count (pinned). row_state (may
 * be NULL) gets KN_JOIN_ROW_TRUE or KN_JOIN_ROW_NULL or-ed in at the probe
 * row of each pair whose pred is TRUE or NULL. */
int kn_join_pairs_filter(const kn_ctx *ctx, const pa_column *pred, int64_t n, int32_t *probe_idx,
                         int32_t *build_idx, uint8_t *row_state, int64_t *count, pa_err *err);
/* The rows of a probe chunk of `rows` rows from its row_state:
 *  LEFT: (probe_idx, build_idx) = (i, -1) for each row without a TRUE pair;
 *  SEMI: probe_idx = the rows with a TRUE pair; ANTI: the rows without;
 *  MARK: probe_idx[i] = i for every row, mark[i] = 1 if it has a TRUE pair,
 *        else 0 and NULL (bit cleared in mark_valid, rows bits, required) when
 *        it has a NULL pair or unknown[i] (unknown may be NULL: none);
 * in probe order; *count (pinned) = rows written, *n_null = NULL marks. */
int kn_join_finish(const kn_ctx *ctx, kn_join_kind kind, const uint8_t *row_state, const uint8_t *unknown,
                   int64_t rows, int32_t *probe_idx, int32_t *build_idx, uint8_t *mark, uint8_t *mark_valid,
                   int64_t *count, int64_t *n_null, pa_err *err);

/* ---------------------------------------------------------------------
 * Concatenation (kn_concat.c): RECHUNK gathers small chunks into one.
 *
 * srcs are n views of the same column in several chunks (each from its
 * row 0). The caller sizes the output: values for the sum of the lengths
 * (VARCHAR: offsets for rows + 1 and kn_concat_bytes of string bytes) and a
 * validity bitmap of (rows + 7) / 8 bytes when any source has one (dst
 * validity NULL = the caller knows every row is valid).
 */

/* String bytes of the VARCHAR sources together, written to *bytes (pinned
 * memory; read once the stream reached it). */
int kn_concat_bytes(const kn_ctx *ctx, const pa_column *srcs, int n, int64_t *bytes, pa_err *err);
/* Copy the sources one after the other into dst (dst->length = the sum of
 * their lengths; same type): values, offsets rebased to dst's bytes,
 * validity bits shifted into place. PA_EOVERFLOW past 2 GiB of strings. */
int kn_concat(const kn_ctx *ctx, const pa_column *srcs, int n, pa_column *dst, pa_err *err);

/* ----------------------------------------------------------------------
 * Window functions (kn_window.c; kn_gpu_window.cu on sim and cuda)
 *
 * Over rows sorted by (partition keys, order keys), in one buffer per
 * column (at most INT32_MAX - 1 rows: positions are int32), the value of a
 * window function at every row, computed in three steps:
 * - kn_window_bounds: where each row's partition and peer group (rows equal
 *   on every key) begin and end;
 * - kn_window_frames: each row's frame [start, end) (empty when start >=
 *   end) by the frame clause;
 * - kn_window_tree (aggregates over frames): a segment tree over the
 *   argument, so any frame is O(log rows);
 * - kn_window_eval: the values of rows [first, first + n), into a chunk.
 * Keys are equal as GROUP BY keys are (NULL = NULL, NaN = NaN, -0.0 = 0.0).
 * ---------------------------------------------------------------------- */

#define KN_WINDOW_MAX_KEYS 32

/* The arrays of kn_window_bounds, rows int32 each, one after another. */
enum {
    KN_WB_PART_START, KN_WB_PART_END,   /* the row's partition [start, end) */
    KN_WB_PEER_START, KN_WB_PEER_END,   /* its peer group [start, end) */
    KN_WB_PEER_GROUP,                   /* the peer groups before its own, over all rows */
    KN_WB__COUNT
};

/* Frame bounds; ROWS counts rows, RANGE compares the ORDER BY key. */
typedef enum kn_frame_bound {
    KN_FB_UNBOUNDED_PRECEDING, KN_FB_PRECEDING, KN_FB_CURRENT_ROW, KN_FB_FOLLOWING, KN_FB_UNBOUNDED_FOLLOWING,
} kn_frame_bound;

typedef struct kn_window_frame {
    int32_t rows;            /* 1: ROWS, 0: RANGE */
    int32_t start, end;      /* kn_frame_bound */
    int32_t descending;      /* RANGE with an offset: the ORDER BY key's direction */
    int64_t start_n, end_n;  /* offsets >= 0: ROWS rows; RANGE over an integer-like key (INTEGER,
                                BIGINT, DECIMAL: unscaled) in its representation */
    double start_d, end_d;   /* RANGE over a DOUBLE key */
} kn_window_frame;

typedef enum kn_window_kind {
    KN_WIN_ROW_NUMBER, KN_WIN_RANK, KN_WIN_DENSE_RANK, KN_WIN_NTILE,   /* BIGINT */
    KN_WIN_PERCENT_RANK, KN_WIN_CUME_DIST,                             /* DOUBLE */
    KN_WIN_SHIFT,          /* lag (n > 0) / lead (n < 0): the row n before, inside the partition */
    KN_WIN_FIRST_VALUE, KN_WIN_LAST_VALUE, KN_WIN_NTH_VALUE,           /* of the frame */
    KN_WIN_COUNT_STAR, KN_WIN_COUNT,                                   /* BIGINT, of the frame */
    KN_WIN_SUM, KN_WIN_AVG, KN_WIN_MIN, KN_WIN_MAX,                    /* of the frame's non-NULL values */
    /* VARCHAR: at a partition's first row, its non-NULL values in order
     * joined by the separator (NULL when it has none); NULL at its other
     * rows. The aggregate string_agg reads it (one value per group). */
    KN_WIN_STRING_AGG,
} kn_window_kind;

#define KN_WINDOW_SEP_MAX 64   /* bytes of a STRING_AGG separator */

typedef struct kn_window_fn {
    int32_t kind;            /* kn_window_kind */
    int64_t n;               /* NTILE buckets (>= 1), SHIFT offset, NTH_VALUE n (>= 1) */
    int32_t sep_len;         /* STRING_AGG: the separator */
    char sep[KN_WINDOW_SEP_MAX];
} kn_window_fn;

/* The functions whose value is a row of the argument: kn_window_eval gives
 * the row's position (-1: NULL), and the caller takes (kn_take) it. */
bool kn_window_takes(int kind);
/* The functions that read the frames (and need kn_window_frames). */
bool kn_window_framed(int kind);
/* Result type of a function that does not take (ex_agg_type's rules for
 * the aggregates); PA_EINVAL for a SUM/AVG of a non-number. */
int kn_window_type(int kind, pa_type arg, pa_type *out, pa_err *err);

size_t kn_window_bounds_scratch(int64_t rows);
/* keys[0 .. n_part): partition keys; keys[n_part .. n_keys): order keys. */
int kn_window_bounds(const kn_ctx *ctx, const pa_column *keys, int n_part, int n_keys, int64_t rows, int32_t *bounds,
                     void *scratch, size_t scratch_bytes, pa_err *err);
/* frames: 2 arrays of rows int32 (starts, then ends). order_key: the one
 * ORDER BY key (INTEGER, BIGINT, DECIMAL, DOUBLE), read
 * only by RANGE with an offset (NULL otherwise); its NULLs are together at
 * one end of each partition and a NULL row's offset bounds are its peers. */
int kn_window_frames(const kn_ctx *ctx, const kn_window_frame *f, const int32_t *bounds, int64_t rows,
                     const pa_column *order_key, int32_t *frames, pa_err *err);
/* Bytes of the segment tree of an aggregate (COUNT, SUM, AVG, MIN, MAX)
 * over rows values, or of STRING_AGG's prefix sums (of the value bytes,
 * of the non-NULL values and of the partitions holding one, rows + 1
 * int64 each); 0 for the other functions. bounds: read by STRING_AGG. */
size_t kn_window_tree_bytes(int kind, int64_t rows);
int kn_window_tree(const kn_ctx *ctx, const kn_window_fn *fn, const pa_column *arg, const int32_t *bounds,
                   int64_t rows, void *tree, size_t tree_bytes, pa_err *err);
/* STRING_AGG: the text bytes of rows [first, first + n) of the function
 * into *bytes (pinned), which kn_window_eval's output then needs. */
int kn_window_text_bytes(const kn_ctx *ctx, const kn_window_fn *fn, const int32_t *bounds, const void *tree,
                         int64_t rows, int64_t first, int64_t n, int64_t *bytes, pa_err *err);
/* Rows [first, first + n) of the function: into out (rows 0 .. n, of
 * kn_window_type's type; validity required for SUM, AVG and STRING_AGG,
 * which can be NULL; STRING_AGG's offsets from 0 and bytes as
 * kn_window_text_bytes counts them) or, for kn_window_takes functions,
 * into idx.
 * frames: NULL unless kn_window_framed; tree: NULL unless an aggregate
 * other than COUNT_STAR; arg: the argument column (NULL for those without).
 * PA_EOVERFLOW: a SUM that leaves its type. */
int kn_window_eval(const kn_ctx *ctx, const kn_window_fn *fn, const pa_column *arg, const int32_t *bounds,
                   const int32_t *frames, const void *tree, int64_t rows, int64_t first, int64_t n, pa_column *out,
                   int32_t *idx, pa_err *err);

#ifdef __cplusplus
}
#endif
#endif /* PISTA_KERNELS_H */

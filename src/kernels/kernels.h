/*
 * kernels.h - Pista's kernels: the whole public surface of src/kernels.
 *
 * Kernels are the hot loops of the engine. They size first, never allocate,
 * read only inside the input they are given and write only inside the output
 * capacity they are given. Bad input is an int status (PA_ECORRUPT naming the
 * encoding and the problem), never a crash. This file has one section per
 * family; the relational kernels (filter, gather, hash, sort, ...) will get
 * sections of their own below the Parquet one.
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
 * (zlib framing is accepted too on decompression). LZO and BROTLI, and any
 * codec whose library this build lacks, give PA_EUNSUPPORTED.
 */

/* True when this build can (de)compress codec. */
bool kn_codec_supported(int codec);

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
 *   significant bytes);  FIXED_LEN_BYTE_ARRAY -> VARCHAR, or DECIMAL (p <= 18,
 *   big-endian two's complement in type_length <= 16 bytes). */
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
} kn_page_job;

/* Run one job (sets job->status and returns it). */
int kn_page_job_run(kn_page_job *job, pa_err *err);
/* Run many (see kn_decompress_batch for threads and the result). Jobs that
 * write strings into the same output must be run in page order, so give a
 * batch at most one string page per output buffer, or pre-set each page's
 * offsets[row_offset] from kn_page_measure. */
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

#ifdef __cplusplus
}
#endif
#endif /* PISTA_KERNELS_H */

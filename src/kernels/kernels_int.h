/*
 * kernels_int.h - internals shared by the Parquet page kernels.
 *
 * Design notes
 * - Bounds: every reader carries (p, end) and checks before it reads; every
 *   writer checks the caller's capacity before it writes. Corrupt input is
 *   PA_ECORRUPT with a message naming the encoding; a too-small output is
 *   PA_EINVAL (the caller did not size with the measure/bound functions).
 * - Pages are decoded in two steps that both work without scratch memory:
 *   (1) definition levels go straight into the validity bitmap and give the
 *   non-NULL count m; (2) the m values are decoded densely into slots
 *   [at, at+m) and then moved, from the last one backwards, to their row
 *   slots (row >= dense index, so the move never overwrites a value not yet
 *   moved). Strings are spread the same way through their offsets.
 * - Bit unpacking works on groups of 8 values (8*w bits = w bytes): with at
 *   least 8 spare input bytes a group is read with unaligned 64-bit loads and
 *   constant shifts (the width is a compile-time constant in each case of a
 *   switch); the last groups are copied to a zero-padded local buffer first.
 * - Arithmetic on decoded deltas is done on unsigned types, so overflow wraps
 *   as the spec requires, without undefined behaviour.
 * - The column's (physical type, engine type) pair is reduced once to a
 *   conversion kind (kn__conv) that the value decoders switch on.
 */
#ifndef PISTA_KERNELS_INT_H
#define PISTA_KERNELS_INT_H

#include "kernels/kernels.h"

#include <string.h>

/* Conversion from a physical type to the engine representation. */
typedef enum kn__conv {
    KN__CV_BOOL,       /* BOOLEAN -> uint8 */
    KN__CV_I32,        /* INT32 -> int32 */
    KN__CV_I32_I64,    /* INT32 -> int64 (sign-extended) */
    KN__CV_I64,        /* INT64 -> int64 */
    KN__CV_F32_F64,    /* FLOAT -> double */
    KN__CV_F64,        /* DOUBLE -> double */
    KN__CV_BA_STR,     /* BYTE_ARRAY -> VARCHAR */
    KN__CV_FLBA_STR,   /* FIXED_LEN_BYTE_ARRAY -> VARCHAR */
    KN__CV_BA_DEC,     /* BYTE_ARRAY big-endian -> int64 */
    KN__CV_FLBA_DEC,   /* FIXED_LEN_BYTE_ARRAY big-endian -> int64 */
    KN__CV_I96_NS,     /* INT96 (Impala timestamp) -> int64 nanoseconds (TIMESTAMP_NS) */
    KN__CV_FLBA_IV,    /* FIXED_LEN_BYTE_ARRAY(12) INTERVAL -> pa_interval (16 bytes) */
} kn__conv;

/* Julian day number of 1970-01-01 (INT96 timestamps). */
#define KN__JULIAN_EPOCH INT64_C(2440588)
#define KN__NS_PER_DAY INT64_C(86400000000000)

/* An INT96 timestamp (8 bytes little-endian nanoseconds of the day, then 4
 * bytes little-endian Julian day number) as nanoseconds since 1970-01-01;
 * false when that does not fit an int64 (years before 1677 or after 2262). */
static inline bool kn__int96_ns(const uint8_t *p, int64_t *out)
{
    uint64_t nod = 0;
    uint32_t jd = 0;
    for (int b = 7; b >= 0; b--)
        nod = nod << 8 | p[b];
    for (int b = 11; b >= 8; b--)
        jd = jd << 8 | p[b];
    __int128 ns = (__int128)((int64_t)jd - KN__JULIAN_EPOCH) * KN__NS_PER_DAY + (__int128)nod;
    if (ns < INT64_MIN || ns > INT64_MAX)
        return false;
    *out = (int64_t)ns;
    return true;
}

/* A Parquet INTERVAL (three little-endian uint32: months, days,
 * milliseconds) as a pa_interval. The months and days are taken as int32
 * (DuckDB's reading); milliseconds become microseconds. */
static inline void kn__interval_load(const uint8_t *p, pa_interval *out)
{
    uint32_t f[3];
    for (int k = 0; k < 3; k++)
        f[k] = (uint32_t)p[4 * k] | (uint32_t)p[4 * k + 1] << 8 | (uint32_t)p[4 * k + 2] << 16 |
               (uint32_t)p[4 * k + 3] << 24;
    out->months = (int32_t)f[0];
    out->days = (int32_t)f[1];
    out->micros = (int64_t)f[2] * 1000;
}

typedef struct kn__colinfo {
    kn__conv conv;
    int out_width;     /* bytes per output slot; 0 for VARCHAR */
    int phys_width;    /* bytes per PLAIN value; 0 for BYTE_ARRAY, 1/8 marks BOOLEAN as 0 */
    bool is_string;
} kn__colinfo;

/* Classify a column. PA_EUNSUPPORTED for pairs the kernels do not decode. */
int kn__colinfo_get(const kn_column *col, kn__colinfo *ci, pa_err *err);

/* A page batch's failure (kn_decompress_pages, kn_decode_pages on the cpu
 * device), worded as the device kernels word it: the job's `where`, or
 * "page K of the batch", then the message. */
static inline int kn__batch_error(pa_err *err, int rc, const char *where, int64_t k, const char *msg)
{
    return where ? pa_error(err, rc, "%s: %s", where, msg)
                 : pa_error(err, rc, "page %lld of the batch: %s", (long long)k, msg);
}

#define KN__CORRUPT(err, enc, ...) kn__corrupt((err), (enc), __FILE__, __LINE__, __VA_ARGS__)
int kn__corrupt(pa_err *err, const char *enc, const char *file, int line, const char *fmt, ...)
    PA_PRINTF(5, 6);

/* ------------------------------------------------------------ byte helpers */

static inline uint32_t kn__ld32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;   /* little-endian hosts only (x86-64, aarch64) */
}
static inline uint64_t kn__ld64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}
static inline void kn__st32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void kn__st64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

/* ULEB128 of at most 10 bytes. Returns false at the end of input or on an
 * over-long varint. */
static inline bool kn__uleb(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
    const uint8_t *p = *pp;
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (p >= end)
            return false;
        uint8_t b = *p++;
        if (shift == 63 && (b & 0x7e))
            return false;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *pp = p;
            *out = v;
            return true;
        }
    }
    return false;
}

static inline size_t kn__uleb_put(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

static inline uint64_t kn__zigzag_enc(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t kn__zigzag_dec(uint64_t v) { return (int64_t)((v >> 1) ^ (~(v & 1) + 1)); }

/* Bits needed for v (0 for 0). */
static inline int kn__bits64(uint64_t v) { return v ? 64 - __builtin_clzll(v) : 0; }

/* Validity bitmap helpers (bit i: byte i/8, mask 1 << (i%8)). */
static inline bool kn__bit_get(const uint8_t *bm, uint64_t i) { return (bm[i >> 3] >> (i & 7)) & 1; }
void kn__bits_fill(uint8_t *bm, uint64_t first, uint64_t n, bool value);

/* ------------------------------------------------------------ bit packing */

/* Unpack n values of width w (0..32) starting at bit 0 of in; the caller has
 * checked that in holds ceil(n*w/8) bytes (in_size). */
void kn__unpack32(const uint8_t *in, size_t in_size, int w, uint32_t *out, size_t n);
/* Same for w in 0..64 into uint64 (slower; DELTA_BINARY_PACKED of INT64). */
void kn__unpack64(const uint8_t *in, size_t in_size, int w, uint64_t *out, size_t n);
/* Pack n values (each < 2^w, w <= 64) LSB-first at bit 0 of out, which has
 * ceil(n*w/8) bytes; returns that byte count. */
size_t kn__pack64(const uint64_t *in, size_t n, int w, uint8_t *out);
size_t kn__pack32(const uint32_t *in, size_t n, int w, uint8_t *out);

/* ------------------------------------------------------- RLE hybrid runs */

typedef struct kn__rle {
    const uint8_t *p, *end;
    int w;                 /* bit width 0..32 */
    const char *what;      /* for messages: "RLE definition levels", ... */
    /* current run */
    uint64_t left;         /* values left in it */
    bool packed;
    uint32_t value;        /* RLE run value */
    const uint8_t *data;   /* bit-packed run: next unread group */
    const uint8_t *data_end;
    uint32_t buf[8];       /* bit-packed run: the group being consumed */
    int buf_pos, buf_len;
} kn__rle;

void kn__rle_init(kn__rle *r, const uint8_t *p, size_t size, int w, const char *what);
/* Fill out[0..n) (fast path through whole groups and runs). PA_ECORRUPT at
 * the end of the stream. */
int kn__rle_get(kn__rle *r, uint32_t *out, size_t n, pa_err *err);
/* Start the next run if the current is used up: on PA_OK, r->left > 0 and
 * either r->packed (values via kn__rle_get) or r->value repeats r->left times. */
int kn__rle_next_run(kn__rle *r, pa_err *err);

/* RLE-encoded BOOLEAN values with their 4-byte length prefix. */
int kn__rle_encode_bools(const uint8_t *values, const uint32_t *sel, size_t n, uint8_t *dst,
                         size_t cap, size_t *out_size, pa_err *err);

/* ------------------------------------------------- DELTA_BINARY_PACKED */

typedef struct kn__dbp {
    const uint8_t *p, *end;     /* p: after the last miniblock started */
    const char *what;
    int bits;                   /* 32 or 64: arithmetic width */
    uint64_t mask;              /* 2^bits - 1 */
    uint64_t block_size, n_mb, mb_size;
    uint64_t total, produced;   /* values in the stream / decoded into buf so far */
    uint64_t first, last;       /* first value; last decoded value (wraps at `bits`) */
    uint64_t min_delta;
    const uint8_t *widths;      /* bit widths of the current block */
    uint64_t mb;                /* next miniblock index in the block */
    uint64_t blk_left;          /* deltas left in the current block */
    uint64_t mb_left;           /* deltas left in the current miniblock */
    int mb_w;                   /* its bit width */
    const uint8_t *mb_data, *mb_end;  /* its unread bytes */
    uint64_t buf[32];           /* decoded values not handed out yet */
    int buf_pos, buf_len;
} kn__dbp;

/* Parse the header. bits = 32 (INT32 and lengths) or 64. */
int kn__dbp_init(kn__dbp *d, const uint8_t *p, size_t size, int bits, const char *what,
                 pa_err *err);
/* Next n values (as uint64; for bits == 32 the low 32 bits hold the int32). */
int kn__dbp_get(kn__dbp *d, uint64_t *out, size_t n, pa_err *err);
/* After all `total` values were read: the first byte after the stream. */
const uint8_t *kn__dbp_stream_end(const kn__dbp *d);
/* Read every remaining value (discarding it) so kn__dbp_stream_end is known. */
int kn__dbp_skip_rest(kn__dbp *d, pa_err *err);

/* Encoder: block 128, 4 miniblocks of 32. get(ctx, i) gives value i (an
 * int32 sign-extended when bits == 32). */
typedef int64_t (*kn__getter)(const void *ctx, size_t i);
size_t kn__dbp_bound(size_t n, int bits);
int kn__dbp_encode(kn__getter get, const void *ctx, size_t n, int bits, uint8_t *dst, size_t cap,
                   size_t *out_size, pa_err *err);

/* ----------------------------------------------------------- value output */

/* Append one string to out at slot i (offsets[i] already set): copies len
 * bytes and sets offsets[i+1]. PA_EINVAL / PA_EUNSUPPORTED on overflow. */
int kn__put_string(kn_out *out, uint64_t i, const uint8_t *s, uint64_t len, pa_err *err);
/* Big-endian two's complement of len bytes to int64; false if it does not fit. */
bool kn__be_to_i64(const uint8_t *p, size_t len, int64_t *out);
/* The same into an int64 (width 8) or __int128 (width 16, DECIMAL(19..38)) at out. */
bool kn__be_to_dec(const uint8_t *p, size_t len, void *out, int width);
/* Store v big-endian two's complement in len bytes; false if it does not fit. */
bool kn__i64_to_be(int64_t v, uint8_t *p, size_t len);

/* Check out's capacity for slots [at, at+n) (and offsets for strings). */
int kn__check_out(const kn__colinfo *ci, const kn_out *out, uint64_t at, uint64_t n,
                  const char *enc, pa_err *err);

/* Per-encoding value decoders (dense, see kn_decode_values). */
int kn__plain_decode(const kn__colinfo *ci, const kn_column *col, const uint8_t *p, size_t size,
                     uint64_t n, kn_out *out, uint64_t at, size_t *consumed, pa_err *err);
int kn__plain_measure(const kn__colinfo *ci, const kn_column *col, const uint8_t *p, size_t size,
                      uint64_t n, uint64_t *bytes, pa_err *err);
int kn__bss_decode(const kn__colinfo *ci, const kn_column *col, const uint8_t *p, size_t size,
                   uint64_t n, kn_out *out, uint64_t at, size_t *consumed, pa_err *err);
int kn__dict_decode(const kn__colinfo *ci, const kn_dict *dict, const uint8_t *p, size_t size,
                    uint64_t n, kn_out *out, uint64_t at, size_t *consumed, pa_err *err);
int kn__dict_measure(const kn__colinfo *ci, const kn_dict *dict, const uint8_t *p, size_t size,
                     uint64_t n, uint64_t *bytes, pa_err *err);
int kn__bool_rle_decode(const uint8_t *p, size_t size, uint64_t n, kn_out *out, uint64_t at,
                        size_t *consumed, pa_err *err);
int kn__delta_decode(const kn__colinfo *ci, const uint8_t *p, size_t size, uint64_t n,
                     kn_out *out, uint64_t at, size_t *consumed, pa_err *err);
int kn__dlba_decode(const kn__colinfo *ci, const uint8_t *p, size_t size, uint64_t n,
                    kn_out *out, uint64_t at, size_t *consumed, pa_err *err);
int kn__dba_decode(const kn__colinfo *ci, const uint8_t *p, size_t size, uint64_t n,
                   kn_out *out, uint64_t at, size_t *consumed, pa_err *err);
int kn__dlba_measure(const uint8_t *p, size_t size, uint64_t n, uint64_t *bytes, pa_err *err);
int kn__dba_measure(const uint8_t *p, size_t size, uint64_t n, uint64_t *bytes, pa_err *err);

/* Engine value of row r of in as int64 (fixed-width integer types). */
int64_t kn__load_int(const kn__colinfo *ci, const kn_values *in, uint64_t r);

/* Copy len bytes from s to d. Short strings are copied as one or two
 * 16-byte blocks when both sides have room for the whole block: the bytes
 * written past d + len are overwritten by the strings that follow (callers
 * copy in increasing order and pass dlim = the end of what this batch writes),
 * and nothing past slim is read. One fixed-size move instead of a libc call
 * per string; short strings without that room (a small dictionary's last
 * entries) take two overlapping fixed-size moves. */
static inline void kn__copy_str(uint8_t *d, const uint8_t *dlim, const uint8_t *s, const uint8_t *slim, size_t len)
{
    if (len <= 16 && dlim - d >= 16 && slim - s >= 16) {
        memcpy(d, s, 16);
    } else if (len <= 32 && dlim - d >= 32 && slim - s >= 32) {
        memcpy(d, s, 32);
    } else if (len >= 8 && len <= 16) {   /* two overlapping fixed moves */
        memcpy(d, s, 8);
        memcpy(d + len - 8, s + len - 8, 8);
    } else if (len >= 4 && len < 8) {
        memcpy(d, s, 4);
        memcpy(d + len - 4, s + len - 4, 4);
    } else if (len >= 2 && len < 4) {
        memcpy(d, s, 2);
        memcpy(d + len - 2, s + len - 2, 2);
    } else if (len == 1) {
        *d = *s;
    } else if (len) {
        memcpy(d, s, len);
    }
}

#endif /* PISTA_KERNELS_INT_H */

/*
 * kn_gpu_decode.cu - kn_decode_pages on the device: Parquet data pages of
 * fixed-width and string columns (the encodings kernels.h lists; definition
 * levels in the RLE/bit-packed hybrid, v1 and v2 pages) decoded into their
 * rows, one warp per page. See kernels.h for the contract and kn_gpu.h for
 * entries and faults.
 *
 * Design notes
 * - A hybrid stream (levels, dictionary indices) is read run by run: lane 0
 *   parses a run's header (kn__rle_next_run's checks, in its order) and
 *   shuffles (kind, count, value, where its bits are) to the warp; the 32
 *   lanes then take 32 values of the run at a time, each unpacking its own
 *   value from the run's bytes. Runs of a page are sequential; pages are
 *   independent, so many pages keep the device busy.
 * - Three passes over a page. (1) Definition levels, only counted: the
 *   non-NULL count m and every check of the levels. (2) Dictionary pages
 *   only: m indices into the job's scratch (4 bytes each), each checked
 *   against the dictionary's size. (3) The levels again: lane k of a group
 *   of 32 rows gets its value's index as the count of valid rows before
 *   it (a ballot), reads the value (PLAIN: from the page at that index;
 *   dictionary: dict[scratch[index]]) and stores it in its row, or 0 for a
 *   NULL; lane 0 writes the group's validity bits as at most two masked
 *   atomic updates of 32-bit words (a page's first and last rows may share
 *   a word with the neighbouring pages, which other warps decode at once).
 * - String pages stop after pass 2 with their values' offsets C[0..m] in
 *   scratch and their byte count in the job. start_k (one warp) then places
 *   the string pages of each output one after the other, from the byte the
 *   caller set, and strings_k writes each page's offsets (row r ends at
 *   start + C[valid rows through r]), validity and bytes. The host never
 *   needs a page's size.
 * - What is corrupt is what kn_page_decode refuses (kn_page.c, kn_rle.c,
 *   kn_dict.c, kn_plain.c): the same checks, so a page decodes to the same
 *   values or is refused on every device. A refused page gets its status
 *   (PA_ECORRUPT; PA_EUNSUPPORTED for what the device does not decode;
 *   PA_EINVAL for a job that breaks the contract) and the first of the call
 *   writes the stream's fault message, "page K of the batch: ...".
 */
#include "kernels/kn_gpu.h"

using namespace kn_gpu;

namespace {

constexpr unsigned PAGES_PER_BLOCK = THREADS / 32;

/* Why a page failed (fail_text words it). */
enum why : int {
    W_OK, W_UNSUPPORTED, W_NO_SCRATCH, W_OUT, W_NEG, W_V2_LEVELS, W_SIZE, W_DEF_PREFIX, W_DEF_LEN,
    W_V2_REQUIRED, W_V2_OPTIONAL, W_LV_END, W_LV_RUN, W_LV_VALUE_SHORT, W_LV_VALUE_WIDE, W_LV_TRUNC,
    W_LEVEL, W_LEVELS_LEFT, W_NULLS, W_PLAIN_SHORT, W_PLAIN_LEFT, W_BW_MISSING, W_BW, W_EMPTY_DICT,
    W_IX_END, W_IX_RUN, W_IX_VALUE_SHORT, W_IX_VALUE_WIDE, W_IX_TRUNC, W_INDEX, W_D_HEADER, W_D_BLOCK,
    W_D_MINIBLOCKS, W_D_FEWER, W_D_BLOCK_HEADER, W_D_WIDTHS, W_D_WIDTH, W_D_TRUNC, W_BSS_SHORT, W_BSS_LEFT,
    W_RB_PREFIX, W_RB_LEN, W_RB_END, W_RB_RUN, W_RB_VALUE_SHORT, W_RB_VALUE_WIDE, W_RB_TRUNC, W_S_TRUNC,
    W_S_PAST, W_S_2G, W_S_CAP, W_S_ORDER, W_S_AFTER, W_DL_NEG, W_DL_PAST, W_I96_RANGE
};

/* A stream's problems, offset by the base of its kind (levels or indices). */
enum run_why : int { R_OK, R_END, R_RUN, R_VALUE_SHORT, R_VALUE_WIDE, R_TRUNC };

struct decode_args {
    kn_page_job *jobs;
    int64_t n;
    int *claim;      /* 0 until a page claims the fault message */
    int64_t *fault;  /* the stream's fault block */
};

/* What a column's values become (kn__colinfo_get's pairs that decode here). */
enum conv : int { C_BAD, C_I32, C_I32_I64, C_I64, C_F32_F64, C_F64, C_DEC, C_BOOL, C_STR, C_I96 };

__device__ inline int conv_of(const kn_column &c)
{
    int t = c.type.id;
    switch (c.ptype) {
    case KN_PT_BOOLEAN: return t == PA_TYPE_BOOLEAN ? C_BOOL : C_BAD;
    case KN_PT_INT32:
        return t == PA_TYPE_INTEGER || t == PA_TYPE_DATE ? C_I32
               : t == PA_TYPE_BIGINT || t == PA_TYPE_DECIMAL || t == PA_TYPE_TIME ? C_I32_I64 : C_BAD;
    case KN_PT_INT64: return t == PA_TYPE_BIGINT || t == PA_TYPE_DECIMAL || pa_type_is_time64((pa_type_id)t) ? C_I64 : C_BAD;
    case KN_PT_INT96: return t == PA_TYPE_TIMESTAMP_NS ? C_I96 : C_BAD;
    case KN_PT_FLOAT: return pa_type_is_float((pa_type_id)t) ? C_F32_F64 : C_BAD;
    case KN_PT_DOUBLE: return pa_type_is_float((pa_type_id)t) ? C_F64 : C_BAD;
    /* (DECIMAL(19..38), 16-byte values, is decoded on the host) */
    case KN_PT_BYTE_ARRAY:
        return t == PA_TYPE_DECIMAL && c.type.precision <= 18 ? C_DEC : pa_type_is_varlen((pa_type_id)t) ? C_STR : C_BAD;
    case KN_PT_FIXED_LEN_BYTE_ARRAY:
        return t == PA_TYPE_DECIMAL && c.type.precision <= 18 && c.type_length > 0 ? C_DEC
               : pa_type_is_varlen((pa_type_id)t)                                               ? C_STR
                                                                                    : C_BAD;
    default: return C_BAD;
    }
}

__device__ inline int out_width(int cv) { return cv == C_BOOL ? 1 : cv == C_I32 ? 4 : 8; }
__device__ inline int phys_width(int cv)
{
    return cv == C_I32 || cv == C_I32_I64 || cv == C_F32_F64 ? 4 : cv == C_I96 ? 12 : 8;
}

/* An INT96 timestamp (8 bytes nanoseconds of the day, 4 bytes Julian day,
 * little-endian) as nanoseconds since 1970-01-01: kn__int96_ns's
 * arithmetic; false when it does not fit an int64. */
__device__ inline bool int96_ns(const uint8_t *p, int64_t *out)
{
    uint64_t nod = 0;
    uint32_t jd = 0;
    for (int b = 7; b >= 0; b--)
        nod = nod << 8 | p[b];
    for (int b = 11; b >= 8; b--)
        jd = jd << 8 | p[b];
    __int128 ns = (__int128)((int64_t)jd - (int64_t)2440588) * (int64_t)86400000000000ll + (__int128)nod;
    if (ns < INT64_MIN || ns > INT64_MAX)
        return false;
    *out = (int64_t)ns;
    return true;
}

__device__ inline int bits_for(uint32_t v)
{
    int b = 0;
    while (v) {
        b++;
        v >>= 1;
    }
    return b;
}

/* One run of a hybrid stream, as lane 0 parsed it. */
struct run {
    int packed;
    uint64_t count;   /* values in the run (a bit-packed run: 8 per group) */
    uint32_t value;   /* an RLE run's value */
    uint64_t at;      /* a bit-packed run: where its bits start in the stream */
    uint64_t avail;   /* its bytes present (the last run may be cut short) */
};

/* Lane 0: parse the run at *pos of p[0..size), kn__rle_next_run's checks. */
__device__ inline int next_run(const uint8_t *p, uint64_t size, uint64_t *pos, int w, run *r)
{
    uint64_t i = *pos, h = 0;
    bool got = false;
    for (int shift = 0; shift < 70; shift += 7) {
        if (i >= size)
            return R_END;
        uint8_t b = p[i++];
        if (shift == 63 && (b & 0x7e))
            return R_END;
        h |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            got = true;
            break;
        }
    }
    if (!got)
        return R_END;
    uint64_t count = h >> 1;
    if (count == 0 || count > 0x7FFFFFFF)
        return R_RUN;
    uint64_t avail = size - i;
    if (h & 1) {
        uint64_t bytes = count * (uint64_t)w;
        r->packed = 1;
        r->count = count * 8;
        r->value = 0;
        r->at = i;
        r->avail = bytes <= avail ? bytes : avail;
        *pos = i + r->avail;
        return R_OK;
    }
    uint64_t nbytes = (uint64_t)(w + 7) / 8;
    if (nbytes > avail)
        return R_VALUE_SHORT;
    uint32_t v = 0;
    for (uint64_t b = 0; b < nbytes; b++)
        v |= (uint32_t)p[i + b] << (8 * b);
    if (w < 32 && (v >> w) != 0)
        return R_VALUE_WIDE;
    r->packed = 0;
    r->count = count;
    r->value = v;
    r->at = 0;
    r->avail = 0;
    *pos = i + nbytes;
    return R_OK;
}

/* ULEB128 of at most 10 bytes at *pos of p[0..size) (kn__uleb). */
__device__ inline bool uleb(const uint8_t *p, uint64_t size, uint64_t *pos, uint64_t *out)
{
    uint64_t i = *pos, v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (i >= size)
            return false;
        uint8_t b = p[i++];
        if (shift == 63 && (b & 0x7e))
            return false;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *pos = i;
            *out = v;
            return true;
        }
    }
    return false;
}

__device__ inline int64_t zigzag(uint64_t v) { return (int64_t)((v >> 1) ^ (~(v & 1) + 1)); }

/* Bits [bit, bit + w) of d (w <= 64), bytes at or past avail read as 0. */
__device__ inline uint64_t bits64(const uint8_t *d, uint64_t avail, uint64_t bit, int w)
{
    if (w == 0)
        return 0;
    uint64_t v = 0, byte = bit >> 3;
    int got = 0, shift = (int)(bit & 7);
    while (got < w && byte < avail) {
        uint64_t b = (uint64_t)(d[byte] >> shift);
        v |= got < 64 ? b << got : 0;
        got += 8 - shift;
        shift = 0;
        byte++;
    }
    return w == 64 ? v : v & ((1ull << w) - 1);
}

/* Value k of a bit-packed run of width w whose avail bytes start at d;
 * false when its bits are not all there (a cut-short last run). */
__device__ inline bool unpack(const uint8_t *d, uint64_t avail, int w, uint64_t k, uint32_t *v)
{
    if (w == 0) {
        *v = 0;
        return true;
    }
    uint64_t bit = k * (uint64_t)w;
    if (bit + (uint64_t)w > avail * 8)
        return false;
    uint64_t b0 = bit >> 3, b1 = (bit + (uint64_t)w - 1) >> 3, x = 0;
    for (uint64_t b = b0; b <= b1; b++)
        x |= (uint64_t)d[b] << (8 * (b - b0));
    *v = (uint32_t)((x >> (bit & 7)) & ((1ull << w) - 1));
    return true;
}

/* Lane 0 parses the next run and the warp gets it; returns the run_why. */
__device__ inline int warp_run(const uint8_t *p, uint64_t size, uint64_t *pos, int w, run *r, unsigned lane)
{
    int st = R_OK;
    if (lane == 0)
        st = next_run(p, size, pos, w, r);
    st = __shfl_sync(FULL, st, 0);
    r->packed = __shfl_sync(FULL, r->packed, 0);
    r->count = __shfl_sync(FULL, r->count, 0);
    r->value = __shfl_sync(FULL, r->value, 0);
    r->at = __shfl_sync(FULL, r->at, 0);
    r->avail = __shfl_sync(FULL, r->avail, 0);
    return st;
}

/* Walk n values of the hybrid stream p[0..size) of width w. An RLE run is
 * handed to f whole, f.run(first, count, value), called by every lane with
 * the same arguments; a bit-packed run 32 values at a time, f(first, c, v)
 * for lane's value first + lane when lane < c (v is 0 for the others).
 * Returns a run_why, or f's nonzero result. On return *pos (lane 0's) is
 * where lane 0 stopped parsing, and *left the values left in the last run
 * when it was an RLE run. Warp-wide operations happen only where a value
 * may be cut short (the last bytes of a stream). */
template <class F>
__device__ int walk(const uint8_t *p, uint64_t size, int w, uint64_t n, unsigned lane, uint64_t *pos, uint64_t *left,
                    F &f)
{
    uint64_t i = 0;
    *left = 0;
    while (i < n) {
        run r = {0, 0, 0, 0, 0};
        int st = warp_run(p, size, pos, w, &r, lane);
        if (st != R_OK)
            return st;
        uint64_t c = r.count < n - i ? r.count : n - i;
        if (!r.packed) {
            int fr = f.run(i, c, r.value);
            if (fr)
                return fr;
            if (c < r.count)
                *left = r.count - c;
            i += c;
            continue;
        }
        for (uint64_t k0 = 0; k0 < c; k0 += 32) {
            uint64_t k = k0 + lane, m = c - k0 < 32 ? c - k0 : 32;
            uint32_t v = 0;
            bool bad = false;
            if (k < c)
                bad = !unpack(p + r.at, r.avail, w, k, &v);
            if ((k0 + m) * (uint64_t)w > r.avail * 8 && __any_sync(FULL, bad))   /* uniform test first */
                return R_TRUNC;
            int fr = f(i + k0, (unsigned)m, v);
            if (fr)
                return fr;
        }
        i += c;
    }
    return R_OK;
}

/* The low m bits set (m <= 32). */
__device__ inline unsigned low_bits(unsigned m) { return m >= 32 ? FULL : (1u << m) - 1; }

/* Validity bits [b, b + 32) of the page's rows: bit j of `set` (lane j's row
 * is valid) and of `have` (lane j has a row). Lane 0 updates the (at most
 * two) 32-bit words, leaving the other bits to the pages that own them. */
__device__ inline void put_bits(uint8_t *validity, uint64_t b, unsigned set, unsigned have)
{
    unsigned *w = (unsigned *)validity + (b >> 5);
    unsigned s = (unsigned)(b & 31);
    unsigned clr = have & ~set;
    if (set << s)
        atomicOr(w, set << s);
    if (clr << s)
        atomicAnd(w, ~(clr << s));
    if (s) {
        if (set >> (32 - s))
            atomicOr(w + 1, set >> (32 - s));
        if (clr >> (32 - s))
            atomicAnd(w + 1, ~(clr >> (32 - s)));
    }
}

/* Pass 1: count valid rows and check the levels (a level above maxd
 * exists only when maxd is not all ones in its width). */
struct count_f {
    uint32_t maxd;
    bool check;
    uint64_t valid;
    __device__ int run(uint64_t, uint64_t c, uint32_t v)
    {
        if (v > maxd)
            return 100 + W_LEVEL;
        valid += v == maxd ? c : 0;
        return 0;
    }
    __device__ int operator()(uint64_t, unsigned m, uint32_t v)
    {
        bool have = (threadIdx.x & 31) < m;
        if (check && __any_sync(FULL, have && v > maxd))
            return 100 + W_LEVEL;
        valid += (uint64_t)__popc(__ballot_sync(FULL, have && v == maxd));
        return 0;
    }
};

/* Pass 2: dictionary indices into scratch (checked against the dictionary's
 * size unless every index of the width fits). */
struct index_f {
    uint32_t *scratch;
    uint64_t dn;
    bool check;
    __device__ int run(uint64_t first, uint64_t c, uint32_t v)
    {
        if ((uint64_t)v >= dn)
            return 100 + W_INDEX;
        for (uint64_t k = threadIdx.x & 31; k < c; k += 32)
            scratch[first + k] = v;
        return 0;
    }
    __device__ int operator()(uint64_t first, unsigned m, uint32_t v)
    {
        unsigned lane = threadIdx.x & 31;
        if (check && __any_sync(FULL, lane < m && (uint64_t)v >= dn))
            return 100 + W_INDEX;
        if (lane < m)
            scratch[first + lane] = v;
        return 0;
    }
};

/* Pass 2 of an RLE BOOLEAN page: the values (bit width 1) into scratch,
 * 4 bytes each. */
struct bool_f {
    uint32_t *scratch;
    __device__ int run(uint64_t first, uint64_t c, uint32_t v)
    {
        for (uint64_t k = threadIdx.x & 31; k < c; k += 32)
            scratch[first + k] = v;
        return 0;
    }
    __device__ int operator()(uint64_t first, unsigned m, uint32_t v)
    {
        if ((threadIdx.x & 31) < m)
            scratch[first + (threadIdx.x & 31)] = v;
        return 0;
    }
};

/* DELTA_LENGTH_BYTE_ARRAY's lengths: where the stream ends, and over all
 * its values (the host checks those past the page's too) their sum and
 * whether one is negative as an int32. */
struct len_stats {
    uint64_t end, sum;
    bool neg;
};

/* Pass 2 of a DELTA_BINARY_PACKED page: every value of the stream decoded
 * (kn__delta_decode decodes past the page's m to check the whole stream),
 * the first m into scratch (8 bytes each), sums taken modulo 2^bits. Lane 0
 * reads the headers; a miniblock's values go 32 at a time, one per lane,
 * their running sum a warp scan. */
__device__ int delta_values(const uint8_t *p, uint64_t size, int bits, uint64_t m, uint64_t *scratch, unsigned lane,
                            len_stats *ls = NULL)
{
    uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
    int st = W_OK;
    uint64_t pos = 0, block = 0, n_mb = 0, total = 0, first = 0, mb_size = 0;
    if (lane == 0) {
        if (!uleb(p, size, &pos, &block) || !uleb(p, size, &pos, &n_mb) || !uleb(p, size, &pos, &total) ||
            !uleb(p, size, &pos, &first))
            st = W_D_HEADER;
        else if (block == 0 || block % 128 || block > (1u << 20))
            st = W_D_BLOCK;
        else if (n_mb == 0 || block % n_mb || (block / n_mb) % 32)
            st = W_D_MINIBLOCKS;
        else if (total < m)
            st = W_D_FEWER;
        mb_size = st == W_OK ? block / n_mb : 0;
    }
    st = __shfl_sync(FULL, st, 0);
    if (st != W_OK)
        return st;
    total = __shfl_sync(FULL, total, 0);
    uint64_t last = (uint64_t)zigzag(__shfl_sync(FULL, first, 0)) & mask;
    uint64_t my_sum = 0;
    bool my_neg = false;
    if (total == 0) {
        if (ls)
            *ls = len_stats{__shfl_sync(FULL, pos, 0), 0, false};
        return W_OK;
    }
    if (lane == 0 && m > 0)
        scratch[0] = last;
    if (lane == 0) {
        my_sum = last;
        my_neg = (int32_t)(uint32_t)last < 0;
    }
    /* lane 0's miniblock state */
    uint64_t produced = 1, blk_left = 0, mb_left = 0, md = 0, mb_data = 0, mb_end = 0, widths = 0, mb = 0;
    int w = 0, max_w = bits == 32 ? 33 : 64;
    while (produced < total) {
        st = W_OK;
        if (lane == 0 && mb_left == 0) {
            if (blk_left == 0) {
                uint64_t z;
                if (!uleb(p, size, &pos, &z))
                    st = W_D_BLOCK_HEADER;
                else if (size - pos < n_mb)
                    st = W_D_WIDTHS;
                else {
                    md = (uint64_t)zigzag(z) & mask;
                    widths = pos;
                    pos += n_mb;
                    mb = 0;
                    uint64_t remaining = total - produced;
                    blk_left = remaining < block ? remaining : block;
                }
            }
            if (st == W_OK) {
                w = p[widths + mb++];
                if (w > max_w) {
                    st = W_D_WIDTH;
                } else {
                    mb_left = blk_left < mb_size ? blk_left : mb_size;
                    uint64_t full = mb_size * (uint64_t)w / 8, needed = (mb_left * (uint64_t)w + 7) / 8;
                    uint64_t avail = size - pos;
                    if (avail < needed) {
                        st = W_D_TRUNC;
                    } else {
                        mb_data = pos;
                        pos += full < avail ? full : avail;
                        mb_end = pos;
                    }
                }
            }
        }
        st = __shfl_sync(FULL, st, 0);
        if (st != W_OK)
            return st;
        uint64_t c = mb_left < 32 ? mb_left : 32, at = mb_data, end = mb_end, mdl = md;
        c = __shfl_sync(FULL, c, 0);
        at = __shfl_sync(FULL, at, 0);
        end = __shfl_sync(FULL, end, 0);
        mdl = __shfl_sync(FULL, mdl, 0);
        int wl = __shfl_sync(FULL, w, 0);
        uint64_t x = lane < c ? mdl + bits64(p + at, end - at, (uint64_t)lane * (uint64_t)wl, wl) : 0;
        for (int o = 1; o < 32; o <<= 1) {   /* inclusive scan, modulo 2^64 */
            uint64_t y = __shfl_up_sync(FULL, x, o);
            if ((int)lane >= o)
                x += y;
        }
        uint64_t v = (last + x) & mask;
        if (lane < c && produced + lane < m)
            scratch[produced + lane] = v;
        if (lane < c) {
            my_sum += v;
            my_neg = my_neg || (int32_t)(uint32_t)v < 0;
        }
        last = __shfl_sync(FULL, v, (int)c - 1);
        if (lane == 0) {
            uint64_t adv = 4 * (uint64_t)w;
            mb_data = mb_end - mb_data < adv ? mb_end : mb_data + adv;
            mb_left -= c;
            blk_left -= c;
        }
        produced += c;
    }
    if (ls) {
        for (int o = 16; o > 0; o >>= 1)
            my_sum += __shfl_xor_sync(FULL, my_sum, o);
        *ls = len_stats{__shfl_sync(FULL, pos, 0), my_sum, __any_sync(FULL, my_neg) != 0};
    }
    return W_OK;
}

/* The value of dense index vi, converted. */
struct values_t {
    int cv;            /* conv */
    bool dict;
    bool delta;        /* from scratch as 8-byte values (DELTA_BINARY_PACKED) */
    bool boolean;      /* PLAIN BOOLEAN: bit vi of plain */
    const uint8_t *plain;
    const uint32_t *scratch;
    const void *dv;    /* dictionary values, engine width */
    bool rle_bool;     /* RLE BOOLEAN: from scratch, 4 bytes each */
    uint64_t bss;      /* BYTE_STREAM_SPLIT: the page's value count (byte b of value vi at b * bss + vi); 0 */
    __device__ uint64_t get(uint64_t vi) const
    {
        if (delta) {
            uint64_t x = ((const uint64_t *)scratch)[vi];
            return cv == C_I64 ? x : cv == C_I32 ? (uint64_t)(uint32_t)x : (uint64_t)(int64_t)(int32_t)(uint32_t)x;
        }
        if (rle_bool)
            return scratch[vi] & 1;
        if (boolean)
            return (plain[vi >> 3] >> (vi & 7)) & 1;
        if (dict) {
            uint32_t ix = scratch[vi];
            return out_width(cv) == 4 ? (uint64_t)((const uint32_t *)dv)[ix] : ((const uint64_t *)dv)[ix];
        }
        int pw = phys_width(cv);
        if (cv == C_I96) {   /* PLAIN only; pass 2 checked the range */
            int64_t ns = 0;
            int96_ns(plain + vi * 12, &ns);
            return (uint64_t)ns;
        }
        uint64_t x = 0;
        if (bss) {
            for (int b = 0; b < pw; b++)
                x |= (uint64_t)plain[(uint64_t)b * bss + vi] << (8 * b);
        } else {
            const uint8_t *s = plain + vi * (uint64_t)pw;
            for (int b = 0; b < pw; b++)
                x |= (uint64_t)s[b] << (8 * b);
        }
        switch (cv) {
        case C_I32_I64: return (uint64_t)(int64_t)(int32_t)(uint32_t)x;
        case C_F32_F64: {
            uint32_t u = (uint32_t)x;
            float f;
            memcpy(&f, &u, 4);
            double d = (double)f;
            uint64_t o;
            memcpy(&o, &d, 8);
            return o;
        }
        default: return x;
        }
    }
};

__device__ inline void store(void *out, int ow, uint64_t row, uint64_t v)
{
    if (ow == 1)
        ((uint8_t *)out)[row] = (uint8_t)v;
    else if (ow == 4)
        ((uint32_t *)out)[row] = (uint32_t)v;
    else
        ((uint64_t *)out)[row] = v;
}

/* Pass 3: the rows, through the levels. */
struct rows_f {
    uint32_t maxd;
    uint64_t vbase;
    values_t vals;
    void *out;
    int ow;
    uint8_t *validity;
    uint64_t at;
    __device__ int run(uint64_t first, uint64_t c, uint32_t v)
    {
        unsigned lane = threadIdx.x & 31;
        bool ok = v == maxd;
        for (uint64_t k0 = 0; k0 < c; k0 += 32) {
            uint64_t k = k0 + lane;
            unsigned h = low_bits((unsigned)(c - k0 < 32 ? c - k0 : 32));
            if (k < c)
                store(out, ow, at + first + k, ok ? vals.get(vbase + k) : 0);
            if (lane == 0 && validity)
                put_bits(validity, at + first + k0, ok ? h : 0, h);
        }
        vbase += ok ? c : 0;
        return 0;
    }
    __device__ int operator()(uint64_t first, unsigned m, uint32_t v)
    {
        unsigned lane = threadIdx.x & 31;
        bool have = lane < m, ok = have && v == maxd;
        unsigned bits = __ballot_sync(FULL, ok);
        uint64_t vi = vbase + (uint64_t)__popc(bits & ((1u << lane) - 1));
        if (have)
            store(out, ow, at + first + lane, ok ? vals.get(vi) : 0);
        if (lane == 0 && validity)
            put_bits(validity, at + first, bits, low_bits(m));
        vbase += (uint64_t)__popc(bits);
        return 0;
    }
};

/* A job's page split into its levels and values (split_page's checks, in
 * its order, after the job's: kn_page_job_run). */
struct parts_t {
    const uint8_t *def;
    uint64_t def_size;
    const uint8_t *vals;
    uint64_t vals_size;
};

__device__ int split(const kn_page_job &j, parts_t *pt)
{
    const kn_page &pg = j.page;
    int32_t maxd = j.col.max_def_level;
    const uint8_t *src = (const uint8_t *)j.src;
    uint64_t src_size = j.src_size, raw = j.uncompressed_size;
    pt->def = NULL;
    pt->def_size = 0;
    if (pg.version == 2) {
        uint64_t lv = (uint64_t)pg.rep_levels_size + pg.def_levels_size;
        if (lv > src_size || lv > raw)
            return W_V2_LEVELS;
        src_size -= lv;
        raw -= lv;
        if (src_size != raw)
            return W_SIZE;
        if (maxd == 0 && (pg.def_levels_size > 0 || pg.num_nulls > 0))
            return W_V2_REQUIRED;
        if (maxd > 0 && pg.def_levels_size == 0 && pg.num_values > 0)
            return W_V2_OPTIONAL;
        pt->def = src + pg.rep_levels_size;
        pt->def_size = pg.def_levels_size;
        pt->vals = src + lv;
        pt->vals_size = src_size;
        return W_OK;
    }
    if (src_size != raw)
        return W_SIZE;
    pt->vals = src;
    pt->vals_size = src_size;
    if (maxd > 0) {
        if (src_size < 4)
            return W_DEF_PREFIX;
        uint32_t len = (uint32_t)src[0] | (uint32_t)src[1] << 8 | (uint32_t)src[2] << 16 | (uint32_t)src[3] << 24;
        if (len > src_size - 4)
            return W_DEF_LEN;
        pt->def = src + 4;
        pt->def_size = len;
        pt->vals = src + 4 + len;
        pt->vals_size = src_size - 4 - (uint64_t)len;
    }
    return W_OK;
}

__device__ inline bool is_dict(int enc) { return enc == KN_ENC_PLAIN_DICTIONARY || enc == KN_ENC_RLE_DICTIONARY; }

/* Scratch a string page needs: its values' offsets C[0..m] (4 bytes each,
 * and one more), after their dictionary indices (4 bytes each) or their
 * DELTA_LENGTH_BYTE_ARRAY lengths (8 bytes each). */
__device__ inline uint64_t str_scratch(const kn_page_job &j, uint64_t n)
{
    bool dlba = j.page.encoding == KN_ENC_DELTA_LENGTH_BYTE_ARRAY;
    return (n + 1) * 4 + (is_dict(j.page.encoding) ? n * 4 : dlba ? n * 8 : 0);
}

/* Where a string page's value offsets C start in its scratch (in 4-byte words). */
__device__ inline uint64_t str_c_at(const kn_page_job &j, uint64_t m)
{
    return is_dict(j.page.encoding) ? m : j.page.encoding == KN_ENC_DELTA_LENGTH_BYTE_ARRAY ? 2 * m : 0;
}

/* String pages, pass 2: the values' start offsets within the page's
 * strings, C[0..m] (C[m] = their bytes), into scratch (str_c_at). PLAIN:
 * lane 0 walks the length prefixes (kn__plain_decode's checks, in its
 * order); dictionary and DELTA_LENGTH_BYTE_ARRAY: a warp scan of the
 * entries' or the decoded lengths. */
__device__ int str_values(const kn_page_job &j, const parts_t &pt, uint64_t m, unsigned lane, uint64_t *bytes)
{
    uint32_t *c = (uint32_t *)j.scratch + str_c_at(j, m);
    bool dlba = j.page.encoding == KN_ENC_DELTA_LENGTH_BYTE_ARRAY;
    int st = W_OK;
    uint64_t tot = 0;
    if (!is_dict(j.page.encoding) && !dlba) {
        if (lane == 0) {
            const uint8_t *p = pt.vals;
            uint64_t size = pt.vals_size, pos = 0;
            for (uint64_t v = 0; v < m; v++) {
                if (size - pos < 4) {
                    st = W_S_TRUNC;
                    break;
                }
                uint32_t len = (uint32_t)p[pos] | (uint32_t)p[pos + 1] << 8 | (uint32_t)p[pos + 2] << 16 |
                               (uint32_t)p[pos + 3] << 24;
                pos += 4;
                if (len > size - pos) {
                    st = W_S_PAST;
                    break;
                }
                c[v] = (uint32_t)tot;
                tot += len;
                pos += len;
                if (tot > 0x7FFFFFFFull) {
                    st = W_S_2G;
                    break;
                }
            }
            if (st == W_OK) {
                c[m] = (uint32_t)tot;
                if (pos != size)
                    st = W_PLAIN_LEFT;
            }
        }
        st = __shfl_sync(FULL, st, 0);
        tot = __shfl_sync(FULL, tot, 0);
    } else {
        const uint32_t *ix = (const uint32_t *)j.scratch;
        const uint64_t *lens = (const uint64_t *)j.scratch;   /* DELTA_LENGTH_BYTE_ARRAY */
        const int32_t *doff = j.dict.offsets;
        for (uint64_t v0 = 0; v0 < m; v0 += 32) {
            uint64_t v = v0 + lane;
            uint64_t x = v >= m ? 0 : dlba ? lens[v] : (uint64_t)(uint32_t)(doff[ix[v] + 1] - doff[ix[v]]);
            for (int o = 1; o < 32; o <<= 1) {   /* inclusive scan */
                uint64_t y = __shfl_up_sync(FULL, x, o);
                if ((int)lane >= o)
                    x += y;
            }
            if (v < m)
                c[v + 1] = (uint32_t)(tot + x);
            tot += __shfl_sync(FULL, x, 31);
        }
        if (lane == 0)
            c[0] = 0;
        if (tot > 0x7FFFFFFFull)
            st = W_S_2G;
    }
    *bytes = tot;
    return st;
}

/* Decode job j; every lane of the warp calls it. A string page stops after
 * pass 2 with its valid count and bytes in *sm and *sb: strings_k writes
 * its rows once start_k placed it. */
__device__ int page(const kn_page_job &j, unsigned lane, uint64_t *sm, uint64_t *sb, uint64_t *sd)
{
    const kn_page &pg = j.page;
    int cv = conv_of(j.col);
    bool dict = is_dict(pg.encoding);
    bool delta = pg.encoding == KN_ENC_DELTA_BINARY_PACKED;
    bool plain = pg.encoding == KN_ENC_PLAIN;
    bool bss = pg.encoding == KN_ENC_BYTE_STREAM_SPLIT;
    bool rle_bool = pg.encoding == KN_ENC_RLE && cv == C_BOOL;
    bool str = cv == C_STR;
    int32_t maxd = j.col.max_def_level;
    bool dlba = pg.encoding == KN_ENC_DELTA_LENGTH_BYTE_ARRAY;
    bool fits = str    ? dict || ((plain || dlba) && j.col.ptype == KN_PT_BYTE_ARRAY)
                : dict  ? cv != C_BOOL
                : delta ? cv == C_I32 || cv == C_I32_I64 || cv == C_I64
                : bss   ? cv != C_BOOL && cv != C_DEC && cv != C_I96
                        : rle_bool || (plain && cv != C_DEC);
    if (cv == C_BAD || !fits || j.col.max_rep_level != 0 ||
        maxd < 0 || j.codec != KN_CODEC_UNCOMPRESSED || (pg.version != 1 && pg.version != 2) ||
        (pg.version == 1 && maxd > 0 && pg.def_level_encoding != KN_ENC_RLE))
        return W_UNSUPPORTED;
    if (dict && (!j.scratch || (str ? !j.dict.offsets || (!j.dict.bytes && j.dict.n > 0) : !j.dict.values)))
        return W_NO_SCRATCH;
    if ((delta || rle_bool || str) && !j.scratch)
        return W_NO_SCRATCH;
    if (pg.num_values < 0)
        return W_NEG;
    uint64_t n = (uint64_t)pg.num_values;
    if (j.row_offset > j.out.capacity || n > j.out.capacity - j.row_offset ||
        (str ? !j.out.offsets || (!j.out.bytes && j.out.bytes_capacity > 0) : !j.out.values) ||
        (maxd > 0 && !j.out.validity))
        return W_OUT;
    if (str && j.scratch_size < str_scratch(j, n))
        return W_NO_SCRATCH;
    parts_t pt;
    int sw = split(j, &pt);
    if (sw != W_OK)
        return sw;
    const uint8_t *def = pt.def, *vals = pt.vals;
    uint64_t def_size = pt.def_size, vals_size = pt.vals_size;
    /* (1) levels: the valid count */
    uint64_t m = n;
    int dw = bits_for((uint32_t)maxd);
    if (maxd > 0) {
        count_f cf = {(uint32_t)maxd, (uint32_t)maxd != (1u << dw) - 1, 0};
        uint64_t pos = 0, left = 0;
        int st = walk(def, def_size, dw, n, lane, &pos, &left, cf);
        if (st >= 100)
            return st - 100;
        if (st != R_OK)
            return W_LV_END + st - R_END;
        bool ends = __shfl_sync(FULL, (int)(pos == def_size), 0);
        if (left > 0 || !ends)
            return W_LEVELS_LEFT;
        m = cf.valid;
        if (pg.version == 2 && (uint64_t)(int64_t)pg.num_nulls != n - m)
            return W_NULLS;
    }
    /* (2) values: PLAIN sizes, or the dictionary indices */
    values_t vt = {cv, dict, delta, cv == C_BOOL, vals, (const uint32_t *)j.scratch, j.dict.values, rle_bool,
                   bss ? m : 0};
    if (rle_bool) {   /* kn__bool_rle_decode: a 4-byte length, then the values at bit width 1 */
        if (vals_size < 4)
            return W_RB_PREFIX;
        uint32_t len = (uint32_t)vals[0] | (uint32_t)vals[1] << 8 | (uint32_t)vals[2] << 16 | (uint32_t)vals[3] << 24;
        if (len > vals_size - 4)
            return W_RB_LEN;
        if (j.scratch_size / 4 < m)
            return W_NO_SCRATCH;
        bool_f bf = {(uint32_t *)j.scratch};
        uint64_t pos = 0, left = 0;
        int st = walk(vals + 4, len, 1, m, lane, &pos, &left, bf);
        if (st >= 100)
            return st - 100;
        if (st != R_OK)
            return W_RB_END + st - R_END;
        __syncwarp();
    } else if (bss) {
        uint64_t need = m * (uint64_t)phys_width(cv);
        if (need > vals_size)
            return W_BSS_SHORT;
        if (need != vals_size)
            return W_BSS_LEFT;
    } else if (delta) {
        if (j.scratch_size / 8 < m)
            return W_NO_SCRATCH;
        int st = delta_values(vals, vals_size, cv == C_I64 ? 64 : 32, m, (uint64_t *)j.scratch, lane);
        if (st != W_OK)
            return st;
        __syncwarp();
    } else if (dict) {
        if (vals_size < 1)
            return W_BW_MISSING;
        int bw = vals[0];
        if (bw > 32)
            return W_BW;
        if (m > 0 && j.dict.n == 0)
            return W_EMPTY_DICT;
        if (j.scratch_size / 4 < m)
            return W_NO_SCRATCH;
        uint64_t dn = j.dict.n > 0xFFFFFFFFull ? 0xFFFFFFFFull : j.dict.n;
        index_f xf = {(uint32_t *)j.scratch, dn, !(bw < 32 && (1ull << bw) <= dn)};
        uint64_t pos = 0, left = 0;
        int st = walk(vals + 1, vals_size - 1, bw, m, lane, &pos, &left, xf);
        if (st >= 100)
            return st - 100;
        if (st != R_OK)
            return W_IX_END + st - R_END;
        __syncwarp();
    } else if (dlba) {   /* kn__dlba_decode: the lengths, then the bytes */
        len_stats ls = {0, 0, false};
        int st = delta_values(vals, vals_size, 32, m, (uint64_t *)j.scratch, lane, &ls);
        if (st != W_OK)
            return st;
        __syncwarp();
        if (ls.neg)
            return W_DL_NEG;
        if (ls.sum > vals_size - ls.end)
            return W_DL_PAST;
        *sd = ls.end;
    } else if (!str) {
        uint64_t need = cv == C_BOOL ? (m + 7) / 8 : m * (uint64_t)phys_width(cv);
        if (need > vals_size)
            return W_PLAIN_SHORT;
        if (need != vals_size)
            return W_PLAIN_LEFT;
        if (cv == C_I96) {   /* kn__plain_decode refuses a value outside the int64 nanoseconds */
            bool bad = false;
            for (uint64_t v = lane; v < m; v += 32) {
                int64_t ns;
                bad = bad || !int96_ns(vals + v * 12, &ns);
            }
            if (__any_sync(FULL, bad))
                return W_I96_RANGE;
        }
    }
    if (str) {
        int st = str_values(j, pt, m, lane, sb);
        *sm = m;
        __syncwarp();
        return st;
    }
    /* (3) rows */
    int ow = out_width(cv);
    if (maxd == 0) {
        for (uint64_t r = lane; r < n; r += 32)
            store(j.out.values, ow, j.row_offset + r, vt.get(r));
        if (j.out.validity)
            for (uint64_t r0 = 0; r0 < n; r0 += 32) {
                unsigned h = low_bits((unsigned)(n - r0 < 32 ? n - r0 : 32));
                if (lane == 0)
                    put_bits(j.out.validity, j.row_offset + r0, h, h);
            }
        return W_OK;
    }
    rows_f rf = {(uint32_t)maxd, 0, vt, j.out.values, ow, j.out.validity, j.row_offset};
    uint64_t pos = 0, left = 0;
    int st = walk(def, def_size, dw, n, lane, &pos, &left, rf);
    return st == R_OK ? W_OK : W_LV_END + st - R_END;   /* pass 1 saw the same stream */
}

/* String pages, pass 3: row r's end offset is start + C[valid rows
 * through r]; NULL rows are empty. */
struct str_rows_f {
    uint32_t maxd;
    uint64_t vbase;
    const uint32_t *c;
    uint64_t start;
    int32_t *offsets;
    uint8_t *validity;
    uint64_t at;
    __device__ int run(uint64_t first, uint64_t cnt, uint32_t v)
    {
        unsigned lane = threadIdx.x & 31;
        bool ok = v == maxd;
        for (uint64_t k0 = 0; k0 < cnt; k0 += 32) {
            uint64_t k = k0 + lane;
            unsigned h = low_bits((unsigned)(cnt - k0 < 32 ? cnt - k0 : 32));
            if (k < cnt)
                offsets[at + first + k + 1] = (int32_t)(start + c[ok ? vbase + k + 1 : vbase]);
            if (lane == 0 && validity)
                put_bits(validity, at + first + k0, ok ? h : 0, h);
        }
        vbase += ok ? cnt : 0;
        return 0;
    }
    __device__ int operator()(uint64_t first, unsigned m, uint32_t v)
    {
        unsigned lane = threadIdx.x & 31;
        bool have = lane < m, ok = have && v == maxd;
        unsigned bits = __ballot_sync(FULL, ok);
        uint64_t through = vbase + (uint64_t)__popc(bits & (lane == 31 ? FULL : (2u << lane) - 1));
        if (have)
            offsets[at + first + lane + 1] = (int32_t)(start + c[through]);
        if (lane == 0 && validity)
            put_bits(validity, at + first, bits, low_bits(m));
        vbase += (uint64_t)__popc(bits);
        return 0;
    }
};

/* Pass 3 of string page j (placed at j.str_start): offsets, validity, bytes. */
__device__ void str_rows(const kn_page_job &j, unsigned lane)
{
    parts_t pt;
    split(j, &pt);   /* checked by page() */
    bool dict = is_dict(j.page.encoding);
    uint64_t n = (uint64_t)j.page.num_values, m = (uint64_t)j.str_values, start = (uint64_t)j.str_start;
    const uint32_t *ix = (const uint32_t *)j.scratch, *c = ix + str_c_at(j, m);
    /* PLAIN: value v's bytes follow its 4-byte length; DELTA_LENGTH_BYTE_ARRAY: all of them after the lengths */
    uint64_t skip = j.page.encoding == KN_ENC_PLAIN ? 4 : 0, base = (uint64_t)j.str_data;
    int32_t maxd = j.col.max_def_level;
    if (maxd == 0) {
        for (uint64_t r = lane; r < n; r += 32)
            j.out.offsets[j.row_offset + r + 1] = (int32_t)(start + c[r + 1]);
        if (j.out.validity)
            for (uint64_t r0 = 0; r0 < n; r0 += 32) {
                unsigned h = low_bits((unsigned)(n - r0 < 32 ? n - r0 : 32));
                if (lane == 0)
                    put_bits(j.out.validity, j.row_offset + r0, h, h);
            }
    } else {
        str_rows_f rf = {(uint32_t)maxd, 0, c, start, j.out.offsets, j.out.validity, j.row_offset};
        uint64_t pos = 0, left = 0;
        walk(pt.def, pt.def_size, bits_for((uint32_t)maxd), n, lane, &pos, &left, rf);
    }
    uint8_t *ob = j.out.bytes + start;
    for (uint64_t v = lane; v < m; v += 32) {
        uint32_t at = c[v], len = c[v + 1] - at;
        const uint8_t *src = dict ? j.dict.bytes + j.dict.offsets[ix[v]] : pt.vals + base + at + skip * (v + 1);
        for (uint32_t b = 0; b < len; b++)
            ob[at + b] = src[b];
    }
}

__device__ const char *why_text(int w)
{
    switch (w) {
    case W_UNSUPPORTED: return "the page's encoding, levels or column type are not decoded on the device";
    case W_NO_SCRATCH: return "a job without its dictionary or scratch (4 bytes per index, 8 per DELTA value)";
    case W_OUT: return "the page's rows lie outside the output";
    case W_NEG: return "negative value count";
    case W_V2_LEVELS: return "data page v2: level sizes exceed the page";
    case W_SIZE: return "data page: stored bytes differ from the header's uncompressed size";
    case W_DEF_PREFIX: return "RLE definition levels: 4-byte length prefix missing";
    case W_DEF_LEN: return "RLE definition levels: length runs past the page end";
    case W_V2_REQUIRED: return "data page v2: definition levels, but the schema says the column is REQUIRED";
    case W_V2_OPTIONAL: return "data page v2: no definition levels, but the schema says the column is OPTIONAL";
    case W_LV_END: return "RLE definition levels: stream ends before the values it should hold";
    case W_LV_RUN: return "RLE definition levels: run length outside [1, 2^31-1]";
    case W_LV_VALUE_SHORT: return "RLE definition levels: RLE run value truncated";
    case W_LV_VALUE_WIDE: return "RLE definition levels: RLE run value wider than its bit width";
    case W_LV_TRUNC: return "RLE definition levels: bit-packed run truncated";
    case W_LEVEL: return "RLE definition levels: level above the maximum";
    case W_LEVELS_LEFT: return "RLE definition levels: the levels hold more than the page's values";
    case W_NULLS: return "data page v2: the header's NULL count differs from the levels'";
    case W_PLAIN_SHORT: return "PLAIN: fewer bytes than the page's values need";
    case W_PLAIN_LEFT: return "PLAIN: bytes after the page's values: the page does not match the schema";
    case W_BW_MISSING: return "RLE_DICTIONARY: index bit width byte missing";
    case W_BW: return "RLE_DICTIONARY: index bit width exceeds 32";
    case W_EMPTY_DICT: return "RLE_DICTIONARY: indices into an empty dictionary";
    case W_IX_END: return "RLE_DICTIONARY: stream ends before the values it should hold";
    case W_IX_RUN: return "RLE_DICTIONARY: run length outside [1, 2^31-1]";
    case W_IX_VALUE_SHORT: return "RLE_DICTIONARY: RLE run value truncated";
    case W_IX_VALUE_WIDE: return "RLE_DICTIONARY: RLE run value wider than its bit width";
    case W_IX_TRUNC: return "RLE_DICTIONARY: bit-packed run truncated";
    case W_INDEX: return "RLE_DICTIONARY: index outside the dictionary";
    case W_D_HEADER: return "DELTA_BINARY_PACKED: header truncated";
    case W_D_BLOCK: return "DELTA_BINARY_PACKED: block size is not a multiple of 128";
    case W_D_MINIBLOCKS: return "DELTA_BINARY_PACKED: miniblocks do not split a block into multiples of 32";
    case W_D_FEWER: return "DELTA_BINARY_PACKED: the stream holds fewer values than the page needs";
    case W_D_BLOCK_HEADER: return "DELTA_BINARY_PACKED: block header truncated";
    case W_D_WIDTHS: return "DELTA_BINARY_PACKED: miniblock bit widths truncated";
    case W_D_WIDTH: return "DELTA_BINARY_PACKED: miniblock bit width too large";
    case W_D_TRUNC: return "DELTA_BINARY_PACKED: miniblock truncated";
    case W_BSS_SHORT: return "BYTE_STREAM_SPLIT: fewer bytes than the page's values need";
    case W_BSS_LEFT: return "BYTE_STREAM_SPLIT: bytes after the page's values";
    case W_RB_PREFIX: return "RLE (BOOLEAN): 4-byte length prefix missing";
    case W_RB_LEN: return "RLE (BOOLEAN): length runs past the page end";
    case W_RB_END: return "RLE (BOOLEAN): stream ends before the values it should hold";
    case W_RB_RUN: return "RLE (BOOLEAN): run length outside [1, 2^31-1]";
    case W_RB_VALUE_SHORT: return "RLE (BOOLEAN): RLE run value truncated";
    case W_RB_VALUE_WIDE: return "RLE (BOOLEAN): RLE run value wider than its bit width";
    case W_RB_TRUNC: return "RLE (BOOLEAN): bit-packed run truncated";
    case W_S_TRUNC: return "PLAIN: BYTE_ARRAY length truncated";
    case W_S_PAST: return "PLAIN: BYTE_ARRAY length runs past the page end";
    case W_S_2G: return "string data of one column chunk exceeds 2 GiB (int32 offsets)";
    case W_S_CAP: return "string output capacity too small";
    case W_S_ORDER: return "a string page that does not follow the page before it in its output";
    case W_S_AFTER: return "a string page after a refused page of its output";
    case W_DL_NEG: return "DELTA_LENGTH_BYTE_ARRAY: negative length";
    case W_DL_PAST: return "DELTA_LENGTH_BYTE_ARRAY: values run past the page end";
    case W_I96_RANGE: return "PLAIN: an INT96 timestamp lies outside the TIMESTAMP_NS range (years 1677 to 2262)";
    default: return "corrupt page";
    }
}

__device__ void fail(const decode_args &a, int64_t p, int w)
{
    int status = w == W_UNSUPPORTED || w == W_S_2G || w == W_I96_RANGE                    ? PA_EUNSUPPORTED
                 : w == W_NO_SCRATCH || w == W_OUT || w == W_S_CAP || w == W_S_ORDER || w == W_S_AFTER ? PA_EINVAL
                                                                                         : PA_ECORRUPT;
    a.jobs[p].status = status;
    fault_text t;
    if (!batch_fault(a.fault, a.claim, a.jobs[p].where, p, &t))
        return;
    t.put(why_text(w));
    raise_text(a.fault, t, status);
}

__global__ void decode_k(decode_args a)
{
    unsigned lane = threadIdx.x & 31;
    for (int64_t p = (int64_t)blockIdx.x * PAGES_PER_BLOCK + (threadIdx.x >> 5); p < a.n;
         p += (int64_t)gridDim.x * PAGES_PER_BLOCK) {
        kn_page_job j = a.jobs[p];
        uint64_t sm = 0, sb = 0, sd = 0;
        int w = page(j, lane, &sm, &sb, &sd);
        if (lane == 0) {
            a.jobs[p].str_values = (int64_t)sm;
            a.jobs[p].str_bytes = (int64_t)sb;
            a.jobs[p].str_data = (int64_t)sd;
            a.jobs[p].str_start = -1;
            if (w == W_OK)
                a.jobs[p].status = PA_OK;
            else
                fail(a, p, w);
        }
        __syncwarp();
    }
}

/* The string pages' places: in batch order, a page continues its output
 * where the page before ended, the first at the byte its caller set in
 * out.offsets[row_offset]. One warp finds the string pages 32 at a time;
 * lane 0 places them (pages are few). */
__global__ void start_k(decode_args a)
{
    unsigned lane = threadIdx.x & 31;
    const int32_t *prev = NULL;
    uint64_t next_row = 0;
    int64_t next_at = -1;
    for (int64_t p0 = 0; p0 < a.n; p0 += 32) {
        bool s = p0 + lane < a.n && conv_of(a.jobs[p0 + lane].col) == C_STR;
        unsigned strs = __ballot_sync(FULL, s);
        while (lane == 0 && strs) {
            int64_t p = p0 + __ffs((int)strs) - 1;
            strs &= strs - 1;
            kn_page_job j = a.jobs[p];
            bool cont = j.out.offsets && j.out.offsets == prev;
            int w = W_OK;
            int64_t at = -1;
            if (cont && j.row_offset != next_row)
                w = W_S_ORDER;
            else if (cont && next_at < 0)
                w = W_S_AFTER;
            if (w == W_OK && j.status == PA_OK) {
                at = cont ? next_at : (int64_t)j.out.offsets[j.row_offset];
                if (at < 0 || (uint64_t)at > j.out.bytes_capacity ||
                    (uint64_t)j.str_bytes > j.out.bytes_capacity - (uint64_t)at)
                    w = at >= 0 && (uint64_t)at + (uint64_t)j.str_bytes > 0x7FFFFFFFull ? W_S_2G : W_S_CAP;
            }
            if (j.status == PA_OK && w != W_OK)
                fail(a, p, w);
            else if (w != W_OK)   /* out of order, or after a refused page: refused as such (the cpu's order) */
                a.jobs[p].status = PA_EINVAL;
            bool ok = j.status == PA_OK && w == W_OK;
            a.jobs[p].str_start = ok ? at : -1;
            prev = j.out.offsets;
            next_row = j.row_offset + (uint64_t)(j.page.num_values < 0 ? 0 : j.page.num_values);
            next_at = ok ? at + j.str_bytes : -1;
        }
        __syncwarp();
    }
}

__global__ void strings_k(decode_args a)
{
    unsigned lane = threadIdx.x & 31;
    for (int64_t p = (int64_t)blockIdx.x * PAGES_PER_BLOCK + (threadIdx.x >> 5); p < a.n;
         p += (int64_t)gridDim.x * PAGES_PER_BLOCK) {
        kn_page_job j = a.jobs[p];
        if (conv_of(j.col) == C_STR && j.status == PA_OK && j.str_start >= 0)
            str_rows(j, lane);
        __syncwarp();
    }
}

} /* namespace */

extern "C" int SIMT_NAME(kn__gpu_decode_pages)(const kn_ctx *ctx, kn_page_job *jobs, int64_t n, pa_err *err)
{
    if (n < 0)
        return pa_error(err, PA_EINVAL, "kn_decode_pages: %lld pages", (long long)n);
    if (n == 0)
        return PA_OK;
    int *claim = NULL;
    int rc = dv_alloc(ctx->dev, sizeof *claim, (void **)&claim, err);
    if (rc != PA_OK)
        return rc;
    rc = SIMT_LAUNCH(store_k<int>, 1, 1, 0, ctx->stream, err, claim, 0);
    if (rc == PA_OK) {
        decode_args a = {jobs, n, claim, dv_stream_fault_words(ctx->stream)};
        int64_t blocks = (n + PAGES_PER_BLOCK - 1) / PAGES_PER_BLOCK;
        unsigned grid = (unsigned)(blocks > MAX_BLOCKS ? MAX_BLOCKS : blocks);
        rc = SIMT_LAUNCH(decode_k, grid, THREADS, 0, ctx->stream, err, a);
        if (rc == PA_OK)   /* string pages, if any: placed, then written */
            rc = SIMT_LAUNCH(start_k, 1, 32, 0, ctx->stream, err, a);
        if (rc == PA_OK)
            rc = SIMT_LAUNCH(strings_k, grid, THREADS, 0, ctx->stream, err, a);
    }
    return free_after(ctx, claim, rc, err);
}

/*
 * kn_gpu_codec.cu - kn_decompress_pages on the device: UNCOMPRESSED,
 * SNAPPY, LZ4 (Hadoop framing, else one raw block) and LZ4_RAW pages, one
 * warp per page. See kernels.h for the contract and kn_gpu.h for entries
 * and faults.
 *
 * Design notes
 * - A warp owns a page. Lane 0 parses the compressed stream one element
 *   at a time (a run of literals, or a copy of earlier output), checks it,
 *   and hands the warp (kind, length, source) in three shuffles; the 32
 *   lanes then move the element's bytes together. A copy whose offset is
 *   shorter than its length (a repeating pattern) has lane j read byte
 *   out - offset + j % offset, which lies before the element's start, so
 *   no lane waits for another within an element; __syncwarp between
 *   elements makes the bytes just written visible to the next element's
 *   reads. Elements shorter than SERIAL bytes (most of them in text and
 *   small integers) lane 0 moves itself while it parses, so the warp meets
 *   only at long elements: three shuffles and a barrier cost more than a
 *   few bytes' loop (on a GPU, and far more under the emulation). Many
 *   pages of a batch keep the device busy.
 * - What is corrupt. SNAPPY: exactly what kn_codec.c's snappy_decode
 *   refuses (the same checks in the same order), so a page gives the same
 *   bytes or the same refusal on every device. LZ4: kn_lz4.h's parse (the
 *   format's rules as liblz4's careful path checks them), which the cpu
 *   codec also runs over a block liblz4 decoded, so a malformed block that
 *   liblz4's fast path lets through (an offset of 0) is refused on every
 *   device.
 * - LZ4 (codec 5) first tries the Hadoop framing as kn_codec.c does
 *   (blocks of [BE u32 raw size] then [BE u32 size][LZ4 block] until that
 *   many bytes came out, each block a separate LZ4 block whose copies stay
 *   inside it), and when that fails decodes the page as one raw block.
 * - A corrupt page gets PA_ECORRUPT (an unknown codec or a page over
 *   2 GiB PA_EUNSUPPORTED) in its status; the first of the call (a claim
 *   word decides) also writes the stream's fault message, with the page's
 *   index, as the cpu device words it.
 */
#include "kernels/kn_gpu.h"
#include "kernels/kn_lz4.h"

using namespace kn_gpu;

namespace {

constexpr unsigned PAGES_PER_BLOCK = THREADS / 32;

/* Why a page failed (the message's text, in fail_text). */
enum why : int { W_OK, W_DATA, W_PREAMBLE, W_SNAPPY_SIZE, W_RAW_SIZE, W_LZ4_SIZE, W_EMPTY, W_LARGE, W_CODEC };

/* What lane 0 hands the warp. */
enum elem : int { E_END, E_LIT, E_COPY, E_BAD };

struct codec_args {
    kn_codec_job *jobs;
    int64_t n;
    int *claim;      /* 0 until a page claims the fault message */
    int64_t *fault;  /* the stream's fault block */
};

/* Move one element's bytes: len literals from src + from, or a copy of the
 * output `from` bytes back. Every lane of the warp calls it. */
__device__ inline void move(uint8_t *dst, uint32_t op, const uint8_t *src, int kind, uint32_t len, uint32_t from,
                            unsigned lane)
{
    if (kind == E_LIT) {
        for (uint32_t j = lane; j < len; j += 32)
            dst[op + j] = src[from + j];
    } else if (from >= len) {
        const uint8_t *m = dst + op - from;
        for (uint32_t j = lane; j < len; j += 32)
            dst[op + j] = m[j];
    } else {   /* a repeating pattern of `from` bytes */
        const uint8_t *m = dst + op - from;
        for (uint32_t j = lane; j < len; j += 32)
            dst[op + j] = m[j % from];
    }
    __syncwarp();
}

/* Elements shorter than this lane 0 moves itself, as it parses: a warp-wide
 * move costs three shuffles and a barrier, more than a few bytes' loop. */
constexpr uint32_t SERIAL = 32;

/* Lane 0's move of a short element (a copy byte by byte, front to back, so
 * an overlapping copy repeats its pattern). */
__device__ inline void serial_move(uint8_t *dst, uint32_t op, const uint8_t *src, int kind, uint32_t len,
                                   uint32_t from)
{
    if (kind == E_LIT) {
        for (uint32_t j = 0; j < len; j++)
            dst[op + j] = src[from + j];
    } else {
        const uint8_t *m = dst + op - from;
        for (uint32_t j = 0; j < len; j++)
            dst[op + j] = m[j];
    }
}

/* ----------------------------------------------------------- SNAPPY */

/* Lane 0's parse of the next element of a SNAPPY stream (snappy_decode's
 * checks); op is the output written so far. */
__device__ inline int snappy_next(const uint8_t *src, uint32_t n, uint32_t *ip, uint32_t op, uint32_t cap,
                                  uint32_t *len, uint32_t *from)
{
    uint32_t i = *ip;
    if (i >= n)
        return E_END;
    unsigned tag = src[i++];
    uint32_t room = cap - op;
    if ((tag & 3) == 0) {
        uint64_t ll = (tag >> 2) + 1;
        if (ll > 60) {
            uint32_t nb = (uint32_t)ll - 60;
            if (n - i < nb)
                return E_BAD;
            ll = 0;
            for (uint32_t b = 0; b < nb; b++)
                ll |= (uint64_t)src[i + b] << (8 * b);
            ll += 1;
            i += nb;
        }
        if (ll > n - i || ll > room)
            return E_BAD;
        *len = (uint32_t)ll;
        *from = i;
        *ip = i + (uint32_t)ll;
        return E_LIT;
    }
    uint32_t cl, off;
    if ((tag & 3) == 1) {
        if (i >= n)
            return E_BAD;
        cl = ((tag >> 2) & 7) + 4;
        off = (tag >> 5) << 8 | src[i++];
    } else if ((tag & 3) == 2) {
        if (n - i < 2)
            return E_BAD;
        cl = (tag >> 2) + 1;
        off = (uint32_t)src[i] | (uint32_t)src[i + 1] << 8;
        i += 2;
    } else {
        if (n - i < 4)
            return E_BAD;
        cl = (tag >> 2) + 1;
        off = (uint32_t)src[i] | (uint32_t)src[i + 1] << 8 | (uint32_t)src[i + 2] << 16 | (uint32_t)src[i + 3] << 24;
        i += 4;
    }
    if (off == 0 || off > op || cl > room)
        return E_BAD;
    *len = cl;
    *from = off;
    *ip = i;
    return E_COPY;
}

__device__ int snappy_page(const uint8_t *src, uint32_t n, uint8_t *dst, uint32_t cap, unsigned lane)
{
    uint32_t ip = 0;
    int w = W_OK;
    if (lane == 0) {   /* the preamble: a varint of the uncompressed length (kn__uleb) */
        uint64_t v = 0;
        w = W_PREAMBLE;
        for (int shift = 0; shift < 70; shift += 7) {
            if (ip >= n)
                break;
            uint8_t b = src[ip++];
            if (shift == 63 && (b & 0x7e))
                break;
            v |= (uint64_t)(b & 0x7f) << shift;
            if (!(b & 0x80)) {
                w = v > 0xFFFFFFFFull ? W_PREAMBLE : v != cap ? W_SNAPPY_SIZE : W_OK;
                break;
            }
        }
    }
    w = __shfl_sync(FULL, w, 0);
    if (w != W_OK)
        return w;
    uint32_t op = 0;
    for (;;) {
        int kind = E_END;
        uint32_t len = 0, from = 0;
        if (lane == 0)
            for (;;) {   /* short elements at once, up to a long one */
                kind = snappy_next(src, n, &ip, op, cap, &len, &from);
                if ((kind != E_LIT && kind != E_COPY) || len >= SERIAL)
                    break;
                serial_move(dst, op, src, kind, len, from);
                op += len;
            }
        kind = __shfl_sync(FULL, kind, 0);
        op = __shfl_sync(FULL, op, 0);
        if (kind == E_END)
            break;
        if (kind == E_BAD)
            return W_DATA;
        len = __shfl_sync(FULL, len, 0);
        from = __shfl_sync(FULL, from, 0);
        __syncwarp();   /* lane 0's bytes, visible to the warp */
        move(dst, op, src, kind, len, from, lane);
        op += len;
    }
    return op == cap ? W_OK : W_DATA;
}

/* -------------------------------------------------------------- LZ4 */

/* kn_lz4.h's element kinds are this file's. */
static_assert((int)E_END == (int)KN__LZ4_END && (int)E_LIT == (int)KN__LZ4_LIT && (int)E_COPY == (int)KN__LZ4_COPY &&
                  (int)E_BAD == (int)KN__LZ4_BAD,
              "kn_lz4.h's elements");

/* Decode one raw LZ4 block (n bytes at src) into at most cap bytes at dst:
 * the bytes produced, or -1 when the block is corrupt. Warp-wide. */
__device__ int64_t lz4_block(const uint8_t *src, int64_t n, uint8_t *dst, int64_t cap, unsigned lane)
{
    if (cap == 0)
        return n == 1 && src[0] == 0 ? 0 : -1;
    if (n == 0)
        return -1;
    kn__lz4_state s = {0, false, false, 0, 0};
    uint32_t op = 0;
    for (;;) {
        int kind = E_END;
        uint32_t len = 0, from = 0;
        if (lane == 0)
            for (;;) {   /* short elements at once, up to a long one */
                kind = kn__lz4_next(src, n, &s, op, cap, &len, &from);
                if ((kind != E_LIT && kind != E_COPY) || len >= SERIAL)
                    break;
                serial_move(dst, op, src, kind, len, from);
                op += len;
            }
        kind = __shfl_sync(FULL, kind, 0);
        op = __shfl_sync(FULL, op, 0);
        if (kind == E_END)
            return op;
        if (kind == E_BAD)
            return -1;
        len = __shfl_sync(FULL, len, 0);
        from = __shfl_sync(FULL, from, 0);
        __syncwarp();   /* lane 0's bytes, visible to the warp */
        move(dst, op, src, kind, len, from, lane);
        op += len;
    }
}

__device__ inline uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The Hadoop framing (kn_codec.c's lz4_hadoop); false when it does not fit.
 * Every lane reads the frame headers itself. */
__device__ bool lz4_hadoop(const uint8_t *src, int64_t n, uint8_t *dst, int64_t cap, unsigned lane)
{
    int64_t in = 0, out = 0;
    if (n < 8)
        return false;
    while (in < n) {
        if (n - in < 4)
            return false;
        int64_t raw = be32(src + in);
        in += 4;
        if (raw > cap - out)
            return false;
        int64_t block_end = out + raw;
        do {
            if (n - in < 4)
                return false;
            int64_t clen = be32(src + in);
            in += 4;
            if (clen > n - in)
                return false;
            int64_t got = lz4_block(src + in, clen, dst + out, block_end - out, lane);
            if (got < 0 || (got == 0 && out < block_end))
                return false;
            in += clen;
            out += got;
        } while (out < block_end);
    }
    return out == cap;
}

/* ----------------------------------------------------------- pages */

__device__ const char *codec_text(int codec)
{
    switch (codec) {
    case KN_CODEC_UNCOMPRESSED: return "UNCOMPRESSED";
    case KN_CODEC_SNAPPY: return "SNAPPY";
    case KN_CODEC_LZ4: return "LZ4";
    case KN_CODEC_LZ4_RAW: return "LZ4_RAW";
    default: return "codec";
    }
}

__device__ void fail(const codec_args &a, int64_t page, const kn_codec_job &j, int w)
{
    int status = w == W_LARGE || w == W_CODEC ? PA_EUNSUPPORTED : PA_ECORRUPT;
    a.jobs[page].status = status;
    fault_text t;
    if (!batch_fault(a.fault, a.claim, a.jobs[page].where, page, &t))
        return;
    switch (w) {
    case W_CODEC:
        t.put("compression codec ");
        t.num((uint64_t)(uint32_t)j.codec);
        t.put(" is not decompressed on the device");
        break;
    case W_LARGE:
        t.put(codec_text(j.codec));
        t.put(": pages above 2 GiB are not supported");
        break;
    case W_RAW_SIZE:
        t.put("UNCOMPRESSED: page has ");
        t.num(j.src_size);
        t.put(" bytes, header says ");
        t.num(j.dst_size);
        break;
    case W_PREAMBLE: t.put("SNAPPY: bad length preamble"); break;
    case W_SNAPPY_SIZE:
        t.put("SNAPPY: data holds a different size than the expected ");
        t.num(j.dst_size);
        t.put(" bytes");
        break;
    case W_EMPTY:
        t.put(codec_text(j.codec));
        t.put(": non-empty data for an empty page");
        break;
    case W_LZ4_SIZE:
        t.put(codec_text(j.codec));
        t.put(": data holds fewer bytes than the expected ");
        t.num(j.dst_size);
        break;
    default:
        t.put(codec_text(j.codec));
        t.put(": invalid compressed data");
        break;
    }
    raise_text(a.fault, t, status);
}

__device__ int page(const kn_codec_job &j, unsigned lane)
{
    const uint8_t *src = (const uint8_t *)j.src;
    uint8_t *dst = (uint8_t *)j.dst;
    if (j.codec != KN_CODEC_UNCOMPRESSED && j.codec != KN_CODEC_SNAPPY && j.codec != KN_CODEC_LZ4 &&
        j.codec != KN_CODEC_LZ4_RAW)
        return W_CODEC;
    if (j.codec == KN_CODEC_UNCOMPRESSED) {
        if (j.src_size != j.dst_size)
            return W_RAW_SIZE;
        for (uint64_t k = lane; k < j.dst_size; k += 32)
            dst[k] = src[k];
        return W_OK;
    }
    if (j.src_size > 0x7FFFFFFF || j.dst_size > 0x7FFFFFFF)
        return W_LARGE;
    uint32_t n = (uint32_t)j.src_size, cap = (uint32_t)j.dst_size;
    if (j.codec == KN_CODEC_SNAPPY)
        return snappy_page(src, n, dst, cap, lane);
    if (j.codec == KN_CODEC_LZ4 && lz4_hadoop(src, n, dst, cap, lane))
        return W_OK;
    if (cap == 0)
        return n == 0 || (n == 1 && src[0] == 0) ? W_OK : W_EMPTY;
    int64_t got = lz4_block(src, n, dst, cap, lane);
    return got < 0 ? W_DATA : got != cap ? W_LZ4_SIZE : W_OK;
}

__global__ void pages_k(codec_args a)
{
    unsigned lane = threadIdx.x & 31;
    for (int64_t p = (int64_t)blockIdx.x * PAGES_PER_BLOCK + (threadIdx.x >> 5); p < a.n;
         p += (int64_t)gridDim.x * PAGES_PER_BLOCK) {
        kn_codec_job j = a.jobs[p];
        int w = page(j, lane);
        if (lane == 0) {
            if (w == W_OK)
                a.jobs[p].status = PA_OK;
            else
                fail(a, p, j, w);
        }
        __syncwarp();
    }
}

} /* namespace */

extern "C" int SIMT_NAME(kn__gpu_decompress_pages)(const kn_ctx *ctx, kn_codec_job *jobs, int64_t n, pa_err *err)
{
    if (n < 0)
        return pa_error(err, PA_EINVAL, "kn_decompress_pages: %lld pages", (long long)n);
    if (n == 0)
        return PA_OK;
    int *claim = NULL;
    int rc = dv_alloc(ctx->dev, sizeof *claim, (void **)&claim, err);
    if (rc != PA_OK)
        return rc;
    rc = SIMT_LAUNCH(store_k<int>, 1, 1, 0, ctx->stream, err, claim, 0);
    if (rc == PA_OK) {
        codec_args a = {jobs, n, claim, dv_stream_fault_words(ctx->stream)};
        int64_t blocks = (n + PAGES_PER_BLOCK - 1) / PAGES_PER_BLOCK;
        rc = SIMT_LAUNCH(pages_k, (unsigned)(blocks > MAX_BLOCKS ? MAX_BLOCKS : blocks), THREADS, 0, ctx->stream,
                         err, a);
    }
    return free_after(ctx, claim, rc, err);
}

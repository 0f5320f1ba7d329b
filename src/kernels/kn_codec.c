/*
 * kn_codec.c - page (de)compression: UNCOMPRESSED, SNAPPY, GZIP, BROTLI, LZ4
 * (Hadoop framing, raw-block fallback), ZSTD and LZ4_RAW on the CPU libraries, plus
 * the batch entry point. Every decompressor is told the exact output size
 * and fails with PA_ECORRUPT, never writing past it, when the data disagrees.
 */
#include "kernels/kernels_int.h"
#include "kernels/kn_lz4.h"

#include <limits.h>

#ifdef PISTA_HAVE_SNAPPY
#include <snappy-c.h>
#endif
#ifdef PISTA_HAVE_LIBZSTD
#include <zstd.h>
#endif
#ifdef PISTA_HAVE_LIBLZ4
#include <lz4.h>
#include <lz4hc.h>
#endif
#ifdef PISTA_HAVE_ZLIB
#include <zlib.h>
#endif
#ifdef PISTA_HAVE_BROTLI
#include <brotli/decode.h>
#include <brotli/encode.h>
#endif

bool kn_codec_supported(int codec)
{
    switch (codec) {
    case KN_CODEC_UNCOMPRESSED: return true;
#ifdef PISTA_HAVE_SNAPPY
    case KN_CODEC_SNAPPY: return true;
#endif
#ifdef PISTA_HAVE_ZLIB
    case KN_CODEC_GZIP: return true;
#endif
#ifdef PISTA_HAVE_BROTLI
    case KN_CODEC_BROTLI: return true;
#endif
#ifdef PISTA_HAVE_LIBLZ4
    case KN_CODEC_LZ4:
    case KN_CODEC_LZ4_RAW: return true;
#endif
#ifdef PISTA_HAVE_LIBZSTD
    case KN_CODEC_ZSTD: return true;
#endif
    default: return false;
    }
}

#ifdef PISTA_HAVE_ZLIB
uint32_t kn_crc32(const void *p_, size_t n)
{
    const uint8_t *p = p_;
    uLong c = crc32(0L, Z_NULL, 0);
    while (n > 0) {   /* zlib's length is a uInt */
        uInt k = n > UINT_MAX ? UINT_MAX : (uInt)n;
        c = crc32(c, p, k);
        p += k;
        n -= k;
    }
    return (uint32_t)c;
}
#else
/* Without zlib: the same CRC a bit at a time (slow; zlib is in every
 * build that matters). */
uint32_t kn_crc32(const void *p_, size_t n)
{
    const uint8_t *p = p_;
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    return c ^ 0xFFFFFFFFu;
}
#endif

static int unsupported(int codec, pa_err *err)
{
    return pa_error(err, PA_EUNSUPPORTED, "compression codec %s (%d) is not supported by this build",
                    kn_codec_name(codec), codec);
}

#ifdef PISTA_HAVE_LIBLZ4
static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Hadoop framing: blocks of [BE u32 raw size] then ([BE u32 size][LZ4 block])
 * until that many raw bytes came out. Returns false when it does not fit. */
static bool lz4_hadoop(const uint8_t *src, size_t n, uint8_t *dst, size_t cap)
{
    size_t in = 0, out = 0;
    if (n < 8)
        return false;
    while (in < n) {
        if (n - in < 4)
            return false;
        uint32_t raw = be32(src + in);
        in += 4;
        if (raw > cap - out)
            return false;
        size_t block_end = out + raw;
        do {   /* every block holds at least one compressed chunk */
            if (n - in < 4)
                return false;
            uint32_t clen = be32(src + in);
            in += 4;
            if (clen > n - in || clen > INT_MAX)
                return false;
            int got = LZ4_decompress_safe((const char *)src + in, (char *)dst + out, (int)clen,
                                          (int)(block_end - out > INT_MAX ? INT_MAX : block_end - out));
            if (got < 0 || (got == 0 && out < block_end) ||
                !kn__lz4_valid(src + in, (int64_t)clen, (int64_t)(block_end - out), got))
                return false;
            in += clen;
            out += (size_t)got;
        } while (out < block_end);
    }
    return out == cap;
}
#endif

#ifdef PISTA_HAVE_ZLIB
static int gunzip(const uint8_t *src, size_t n, uint8_t *dst, size_t cap, pa_err *err)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, 15 + 32) != Z_OK)   /* 32: accept gzip or zlib headers */
        return pa_error(err, PA_ENOMEM, "GZIP: inflateInit2 failed");
    int rc = PA_OK;
    size_t in = 0, out = 0;
    for (;;) {
        /* Feed in pieces so sizes above 4 GiB work with zlib's uInt fields. */
        zs.next_in = (Bytef *)(uintptr_t)(src + in);
        zs.avail_in = (uInt)(n - in > UINT_MAX ? UINT_MAX : n - in);
        zs.next_out = dst + out;
        zs.avail_out = (uInt)(cap - out > UINT_MAX ? UINT_MAX : cap - out);
        uInt ai = zs.avail_in, ao = zs.avail_out;
        int z = inflate(&zs, Z_NO_FLUSH);
        in += ai - zs.avail_in;
        out += ao - zs.avail_out;
        if (z == Z_STREAM_END) {
            if (in == n)
                break;
            /* Concatenated gzip members. */
            if (inflateReset(&zs) != Z_OK) {
                rc = KN__CORRUPT(err, "GZIP", "cannot restart after a member");
                break;
            }
            continue;
        }
        if (z == Z_OK)
            continue;
        if (z == Z_BUF_ERROR && out == cap) {
            rc = KN__CORRUPT(err, "GZIP", "data inflates past the expected %zu bytes", cap);
            break;
        }
        if (z == Z_BUF_ERROR && in == n) {
            rc = KN__CORRUPT(err, "GZIP", "stream truncated after %zu of %zu bytes", out, cap);
            break;
        }
        rc = KN__CORRUPT(err, "GZIP", "inflate failed: %s", zs.msg ? zs.msg : "bad data");
        break;
    }
    inflateEnd(&zs);
    if (rc == PA_OK && out != cap)
        rc = KN__CORRUPT(err, "GZIP", "inflated to %zu bytes, expected %zu", out, cap);
    return rc;
}
#endif

#ifdef PISTA_HAVE_BROTLI
/* One BROTLI stream (RFC 7932) into exactly cap bytes. The streaming
 * decoder is given cap bytes of room, so it cannot write past dst; a stream
 * that wants more room, ends early or is followed by other bytes is corrupt. */
static int brotli_decode(const uint8_t *src, size_t n, uint8_t *dst, size_t cap, pa_err *err)
{
    BrotliDecoderState *st = BrotliDecoderCreateInstance(NULL, NULL, NULL);
    if (!st)
        return pa_error(err, PA_ENOMEM, "BROTLI: cannot create a decoder");
    size_t avail_in = n, avail_out = cap;
    const uint8_t *next_in = src;
    uint8_t *next_out = dst;
    BrotliDecoderResult r = BrotliDecoderDecompressStream(st, &avail_in, &next_in, &avail_out, &next_out, NULL);
    int rc = PA_OK;
    if (r == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT)
        rc = KN__CORRUPT(err, "BROTLI", "data decompresses past the expected %zu bytes", cap);
    else if (r == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT)
        rc = KN__CORRUPT(err, "BROTLI", "stream truncated after %zu of %zu bytes", cap - avail_out, cap);
    else if (r != BROTLI_DECODER_RESULT_SUCCESS)
        rc = KN__CORRUPT(err, "BROTLI", "%s",
                         BrotliDecoderErrorString(BrotliDecoderGetErrorCode(st)));
    else if (avail_out != 0)
        rc = KN__CORRUPT(err, "BROTLI", "data holds %zu bytes, expected %zu", cap - avail_out, cap);
    else if (avail_in != 0)
        rc = KN__CORRUPT(err, "BROTLI", "%zu bytes after the end of the stream", avail_in);
    BrotliDecoderDestroyInstance(st);
    return rc;
}
#endif

#ifdef PISTA_HAVE_SNAPPY
/* Snappy decompression (format_description.txt of the snappy project: a
 * varint length, then literal and copy elements) into exactly cap bytes.
 * Our own decoder instead of snappy_uncompress: it moves short literals and
 * copies as whole 16-byte blocks when input and output have room (bytes
 * written past an element are overwritten by the next ones; a block copy
 * reads only bytes already written when the offset is at least 16), which
 * makes the text and integer pages of DuckDB-written files decode about
 * twice as fast as the library does. Every length and offset is checked
 * before it is used: corrupt input is PA_ECORRUPT, never a read or write
 * out of bounds. */
static int snappy_decode(const uint8_t *ip, size_t n, uint8_t *dst, size_t cap, pa_err *err)
{
    const uint8_t *ie = ip + n;
    uint64_t len = 0;
    if (!kn__uleb(&ip, ie, &len) || len > UINT32_MAX)
        return KN__CORRUPT(err, "SNAPPY", "bad length preamble");
    if (len != cap)
        return KN__CORRUPT(err, "SNAPPY", "data holds %llu bytes, expected %zu", (unsigned long long)len, cap);
    uint8_t *op = dst, *oe = dst + cap;
    while (ip < ie) {
        unsigned tag = *ip++;
        size_t room = (size_t)(oe - op);
        if ((tag & 3) == 0) {   /* literal */
            size_t ll = (tag >> 2) + 1;
            if (ll > 60) {
                size_t nb = ll - 60;
                if ((size_t)(ie - ip) < nb)
                    goto bad;
                ll = 0;
                for (size_t b = 0; b < nb; b++)
                    ll |= (size_t)ip[b] << (8 * b);
                ll += 1;
                ip += nb;
            }
            size_t avail = (size_t)(ie - ip);
            if (ll > avail || ll > room)
                goto bad;
            if (ll <= 16 && avail >= 16 && room >= 16)
                memcpy(op, ip, 16);
            else
                memcpy(op, ip, ll);
            op += ll;
            ip += ll;
            continue;
        }
        size_t cl, off;
        if ((tag & 3) == 1) {
            if (ip >= ie)
                goto bad;
            cl = ((tag >> 2) & 7) + 4;
            off = ((size_t)(tag >> 5) << 8) | *ip++;
        } else if ((tag & 3) == 2) {
            if (ie - ip < 2)
                goto bad;
            cl = (tag >> 2) + 1;
            off = (size_t)ip[0] | (size_t)ip[1] << 8;
            ip += 2;
        } else {
            if (ie - ip < 4)
                goto bad;
            cl = (tag >> 2) + 1;
            off = kn__ld32(ip);
            ip += 4;
        }
        if (off == 0 || off > (size_t)(op - dst) || cl > room)
            goto bad;
        const uint8_t *from = op - off;
        if (off >= 16 && room >= cl + 15) {
            for (size_t b = 0; b < cl; b += 16)
                memcpy(op + b, from + b, 16);
        } else if (off >= 8 && room >= cl + 7) {
            for (size_t b = 0; b < cl; b += 8)
                memcpy(op + b, from + b, 8);
        } else {
            for (size_t b = 0; b < cl; b++)   /* overlapping: a repeating pattern */
                op[b] = from[b];
        }
        op += cl;
    }
    if (op != oe)
        goto bad;
    return PA_OK;
bad:
    return KN__CORRUPT(err, "SNAPPY", "invalid compressed data");
}
#endif

int kn_decompress(int codec, const void *src_, size_t n, void *dst_, size_t cap, pa_err *err)
{
    const uint8_t *src = src_;
    uint8_t *dst = dst_;
    switch (codec) {
    case KN_CODEC_UNCOMPRESSED:
        if (n != cap)
            return KN__CORRUPT(err, "UNCOMPRESSED", "page has %zu bytes, header says %zu", n, cap);
        if (n)
            memcpy(dst, src, n);
        return PA_OK;
#ifdef PISTA_HAVE_SNAPPY
    case KN_CODEC_SNAPPY:
        return snappy_decode(src, n, dst, cap, err);
#endif
#ifdef PISTA_HAVE_ZLIB
    case KN_CODEC_GZIP:
        return gunzip(src, n, dst, cap, err);
#endif
#ifdef PISTA_HAVE_BROTLI
    case KN_CODEC_BROTLI:
        return brotli_decode(src, n, dst, cap, err);
#endif
#ifdef PISTA_HAVE_LIBZSTD
    case KN_CODEC_ZSTD: {
        size_t r = ZSTD_decompress(dst, cap, src, n);
        if (ZSTD_isError(r))
            return KN__CORRUPT(err, "ZSTD", "%s", ZSTD_getErrorName(r));
        if (r != cap)
            return KN__CORRUPT(err, "ZSTD", "data holds %zu bytes, expected %zu", r, cap);
        return PA_OK;
    }
#endif
#ifdef PISTA_HAVE_LIBLZ4
    case KN_CODEC_LZ4:
        if (lz4_hadoop(src, n, dst, cap))
            return PA_OK;
        /* Old writers stored one raw LZ4 block under codec 5. */
        __attribute__((fallthrough));
    case KN_CODEC_LZ4_RAW: {
        const char *name = codec == KN_CODEC_LZ4 ? "LZ4" : "LZ4_RAW";
        if (n > INT_MAX || cap > INT_MAX)
            return pa_error(err, PA_EUNSUPPORTED, "%s: pages above 2 GiB are not supported", name);
        if (cap == 0)
            return n == 0 || (n == 1 && src[0] == 0) ? PA_OK
                                         : KN__CORRUPT(err, name, "non-empty data for an empty page");
        int got = LZ4_decompress_safe((const char *)src, (char *)dst, (int)n, (int)cap);
        if (got < 0 || !kn__lz4_valid(src, (int64_t)n, (int64_t)cap, got))   /* (liblz4's fast path: kn_lz4.h) */
            return KN__CORRUPT(err, name, "invalid compressed data");
        if ((size_t)got != cap)
            return KN__CORRUPT(err, name, "data holds %d bytes, expected %zu", got, cap);
        return PA_OK;
    }
#endif
    default:
        return unsupported(codec, err);
    }
}

size_t kn_compress_bound(int codec, size_t n)
{
    switch (codec) {
    case KN_CODEC_UNCOMPRESSED: return n;
#ifdef PISTA_HAVE_SNAPPY
    case KN_CODEC_SNAPPY: return snappy_max_compressed_length(n);
#endif
#ifdef PISTA_HAVE_ZLIB
    /* compressBound is for zlib framing (6 bytes); gzip adds 12 more. */
    case KN_CODEC_GZIP: return n > UINT32_MAX ? 0 : (size_t)compressBound((uLong)n) + 32;
#endif
#ifdef PISTA_HAVE_BROTLI
    case KN_CODEC_BROTLI: return BrotliEncoderMaxCompressedSize(n);   /* 0 when n is too large */
#endif
#ifdef PISTA_HAVE_LIBZSTD
    case KN_CODEC_ZSTD: return ZSTD_compressBound(n);
#endif
#ifdef PISTA_HAVE_LIBLZ4
    case KN_CODEC_LZ4_RAW:
        return n > LZ4_MAX_INPUT_SIZE ? 0 : (size_t)LZ4_compressBound((int)n);
    case KN_CODEC_LZ4:
        return n > LZ4_MAX_INPUT_SIZE ? 0 : (size_t)LZ4_compressBound((int)n) + 8;
#endif
    default: return 0;
    }
}

#ifdef PISTA_HAVE_ZLIB
static int gzip(int level, const uint8_t *src, size_t n, uint8_t *dst, size_t cap, size_t *out,
                pa_err *err)
{
    if (n > UINT_MAX || cap > UINT_MAX)
        return pa_error(err, PA_EUNSUPPORTED, "GZIP: pages above 4 GiB are not supported");
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, level ? level : Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
        return pa_error(err, PA_EINVAL, "GZIP: bad compression level %d", level);
    zs.next_in = (Bytef *)(uintptr_t)src;
    zs.avail_in = (uInt)n;
    zs.next_out = dst;
    zs.avail_out = (uInt)cap;
    int z = deflate(&zs, Z_FINISH);
    size_t total = zs.total_out;
    deflateEnd(&zs);
    if (z != Z_STREAM_END)
        return pa_error(err, PA_EINVAL, "GZIP: output capacity %zu too small", cap);
    *out = total;
    return PA_OK;
}
#endif

int kn_compress(int codec, int level, const void *src_, size_t n, void *dst_, size_t cap,
                size_t *out_size, pa_err *err)
{
    const uint8_t *src = src_;
    uint8_t *dst = dst_;
    switch (codec) {
    case KN_CODEC_UNCOMPRESSED:
        if (cap < n)
            return pa_error(err, PA_EINVAL, "UNCOMPRESSED: output capacity %zu < %zu", cap, n);
        if (n)
            memcpy(dst, src, n);
        *out_size = n;
        return PA_OK;
#ifdef PISTA_HAVE_SNAPPY
    case KN_CODEC_SNAPPY: {
        size_t len = cap;
        if (cap < snappy_max_compressed_length(n))
            return pa_error(err, PA_EINVAL, "SNAPPY: output capacity %zu below the bound", cap);
        if (snappy_compress((const char *)src, n, (char *)dst, &len) != SNAPPY_OK)
            return pa_error(err, PA_EINVAL, "SNAPPY: compression failed");
        *out_size = len;
        return PA_OK;
    }
#endif
#ifdef PISTA_HAVE_ZLIB
    case KN_CODEC_GZIP:
        return gzip(level, src, n, dst, cap, out_size, err);
#endif
#ifdef PISTA_HAVE_BROTLI
    case KN_CODEC_BROTLI: {
        /* Quality 5 unless asked: the library's default, 11, is meant for
         * static web content and compresses tens of times slower. Window 22,
         * the library's default. */
        int q = level ? level : 5;
        if (q < BROTLI_MIN_QUALITY || q > BROTLI_MAX_QUALITY)
            return pa_error(err, PA_EINVAL, "BROTLI: bad compression level %d (%d..%d)", level,
                            BROTLI_MIN_QUALITY, BROTLI_MAX_QUALITY);
        size_t len = cap;
        if (!BrotliEncoderCompress(q, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_GENERIC, n, src, &len, dst))
            return pa_error(err, PA_EINVAL, "BROTLI: output capacity %zu too small", cap);
        *out_size = len;
        return PA_OK;
    }
#endif
#ifdef PISTA_HAVE_LIBZSTD
    case KN_CODEC_ZSTD: {
        size_t r = ZSTD_compress(dst, cap, src, n, level ? level : 3);
        if (ZSTD_isError(r))
            return pa_error(err, PA_EINVAL, "ZSTD: %s", ZSTD_getErrorName(r));
        *out_size = r;
        return PA_OK;
    }
#endif
#ifdef PISTA_HAVE_LIBLZ4
    case KN_CODEC_LZ4_RAW:
    case KN_CODEC_LZ4: {
        size_t hdr = codec == KN_CODEC_LZ4 ? 8 : 0;
        if (n > LZ4_MAX_INPUT_SIZE)
            return pa_error(err, PA_EUNSUPPORTED, "LZ4: pages above %d bytes are not supported",
                            LZ4_MAX_INPUT_SIZE);
        if (cap < hdr)
            return pa_error(err, PA_EINVAL, "LZ4: output capacity %zu too small", cap);
        size_t room = cap - hdr > INT_MAX ? INT_MAX : cap - hdr;
        int r = level > 0 ? LZ4_compress_HC((const char *)src, (char *)dst + hdr, (int)n, (int)room, level)
                          : LZ4_compress_default((const char *)src, (char *)dst + hdr, (int)n, (int)room);
        if (r <= 0)
            return pa_error(err, PA_EINVAL, "LZ4: output capacity %zu too small", cap);
        if (hdr) {
            /* One Hadoop block: raw size, compressed size, both big-endian. */
            uint32_t v[2] = {(uint32_t)n, (uint32_t)r};
            for (int k = 0; k < 2; k++)
                for (int b = 0; b < 4; b++)
                    dst[4 * k + b] = (uint8_t)(v[k] >> (24 - 8 * b));
        }
        *out_size = (size_t)r + hdr;
        return PA_OK;
    }
#endif
    default:
        return unsupported(codec, err);
    }
}

/* ------------------------------------------------------------------ batch */

typedef struct codec_batch {
    kn_codec_job *jobs;
    pa_err *err;
} codec_batch;

static void run_codec_job(void *ctx, size_t i)
{
    codec_batch *b = ctx;
    kn_codec_job *j = &b->jobs[i];
    j->status = kn_decompress(j->codec, j->src, (size_t)j->src_size, j->dst, (size_t)j->dst_size,
                              b->err);
}

int kn_decompress_batch(kn_codec_job *jobs, size_t n, pa_threadpool *tp, pa_err *err)
{
    codec_batch b = {jobs, err};
    pa_parallel_for(tp, n, run_codec_job, &b);
    for (size_t i = 0; i < n; i++)
        if (jobs[i].status != PA_OK)
            return jobs[i].status;
    return PA_OK;
}

/* ------------------------------------------------- kn_decompress_pages */

bool kn_decompress_pages_supported(int codec)
{
    return codec == KN_CODEC_UNCOMPRESSED || codec == KN_CODEC_SNAPPY || codec == KN_CODEC_LZ4 ||
           codec == KN_CODEC_LZ4_RAW;
}

/* The cpu device's loop: the device codecs only, every page tried, the
 * first failure reported with its page as the GPU kernels word it. */
int kn__cpu_decompress_pages(const kn_ctx *ctx, kn_codec_job *jobs, int64_t n, pa_err *err)
{
    (void)ctx;
    if (n < 0)
        return pa_error(err, PA_EINVAL, "kn_decompress_pages: %lld pages", (long long)n);
    int first = PA_OK;
    for (int64_t i = 0; i < n; i++) {
        kn_codec_job *j = &jobs[i];
        pa_err e;
        pa_err_init(&e);
        int rc;
        if (!kn_decompress_pages_supported(j->codec))
            rc = pa_error(&e, PA_EUNSUPPORTED, "compression codec %d is not decompressed on the device",
                          (int)j->codec);
        else if (j->codec != KN_CODEC_UNCOMPRESSED && (j->src_size > INT32_MAX || j->dst_size > INT32_MAX))
            rc = pa_error(&e, PA_EUNSUPPORTED, "%s: pages above 2 GiB are not supported", kn_codec_name(j->codec));
        else
            rc = kn_decompress(j->codec, j->src, j->src_size, j->dst, j->dst_size, &e);
        j->status = rc;
        if (rc != PA_OK && first == PA_OK) {
            first = rc;
            kn__batch_error(err, rc, j->where, i, e.msg);
        }
        pa_err_close(&e);
    }
    return first;
}

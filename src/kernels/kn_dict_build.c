/*
 * kn_dict_build.c - the writer's dictionary builder: an open-addressing hash
 * table of entry numbers in caller-provided scratch, entries in order of
 * first occurrence.
 *
 * Scratch layout for n values: room for the table (table_slots(n) uint32
 * slots, entry + 1, 0 = empty), then one uint64 per possible entry: the
 * entry's value (fixed-width columns, zero-extended) or its hash (strings).
 * The table starts small and grows 4 times (re-inserting the entries from
 * that array) whenever it would be more than half full, so a column of a few
 * thousand distinct values probes a table that stays in cache instead of
 * one sized for every value. Probes compare against the dense array, not
 * the input row of the entry. Fixed-width values equal to the previous
 * value take its entry without hashing (sorted keys, runs). Values are
 * compared bitwise (a DOUBLE NaN equals the same NaN bits). The result does
 * not depend on the table size: entries are numbered in order of first
 * occurrence.
 */
#include "kernels/kernels_int.h"

#define FIRST_SLOTS 4096   /* 16 KB: the initial table, in L1 */

static size_t table_slots(size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    return cap;
}

size_t kn_dict_build_scratch(size_t n)
{
    return table_slots(n) * sizeof(uint32_t) + (n ? n : 1) * sizeof(uint64_t);
}

/* A hash of len bytes; equal byte strings hash equally. Reads only s[0..len). */
static inline uint64_t hash_bytes(const uint8_t *s, size_t len)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ len;
    size_t i = 0;
    for (; i + 8 <= len; i += 8)
        h = (h ^ kn__ld64(s + i)) * 0x100000001b3ull + (h >> 29);
    size_t rest = len - i;
    uint64_t t = 0;
    if (rest >= 4)   /* two overlapping 4-byte loads cover 4..7 bytes */
        t = kn__ld32(s + i) | (uint64_t)kn__ld32(s + len - 4) << 32;
    else if (rest > 0)
        t = s[i] | (uint64_t)s[i + rest / 2] << 8 | (uint64_t)s[len - 1] << 16;
    return pa_mix64(h ^ t);
}

/* PLAIN bytes one dictionary entry costs (BYTE_ARRAY decimals: an upper bound). */
static inline uint64_t plain_cost(const kn__colinfo *ci, size_t keylen)
{
    switch (ci->conv) {
    case KN__CV_BA_STR: return 4 + keylen;
    case KN__CV_BA_DEC: return 4 + 8;
    case KN__CV_BOOL: return 1;
    default: return (uint64_t)ci->phys_width;
    }
}

typedef struct build {
    uint32_t *table;
    uint64_t *ekey;           /* per entry: value or hash */
    size_t mask;              /* slots in use - 1 */
    size_t max_slots;         /* room for table_slots(n) */
    bool fixed;               /* ekey holds values (hash them), not hashes */
    uint64_t max_entries, max_bytes;
    uint32_t *entry_rows, *indices;
    uint32_t ne;
    uint64_t bytes;
} build;

/* Grow the table 4 times (at most to max_slots) and re-insert every entry. */
static void grow(build *b)
{
    size_t slots = (b->mask + 1) * 4;
    if (slots > b->max_slots)
        slots = b->max_slots;
    b->mask = slots - 1;
    memset(b->table, 0, slots * sizeof *b->table);
    for (uint32_t e = 0; e < b->ne; e++) {
        size_t h = (size_t)(b->fixed ? pa_mix64(b->ekey[e]) : b->ekey[e]) & b->mask;
        while (b->table[h])
            h = (h + 1) & b->mask;
        b->table[h] = e + 1;
    }
}

/* Room for one more entry (table at most half full); false when the entry
 * would break a limit. May move the probe position: returns it anew. */
static inline bool room(build *b, uint64_t cost, uint64_t hash, size_t *h)
{
    if (b->ne + 1ull > b->max_entries || b->bytes + cost > b->max_bytes)
        return false;
    if (2 * ((size_t)b->ne + 1) > b->mask + 1 && b->mask + 1 < b->max_slots) {
        grow(b);
        *h = (size_t)hash & b->mask;
        while (b->table[*h])
            *h = (*h + 1) & b->mask;
    }
    return true;
}

static inline uint64_t load_fixed(const uint8_t *v, uint64_t r, int width)
{
    switch (width) {
    case 8: return kn__ld64(v + r * 8);
    case 4: return kn__ld32(v + r * 4);
    default: return v[r];
    }
}

/* Fixed-width values (width 1, 4 or 8). Returns false when a limit is hit. */
static inline bool build_fixed(build *b, const kn__colinfo *ci, const kn_values *in,
                               const uint32_t *sel, size_t n, int width)
{
    const uint8_t *v = in->values;
    uint64_t cost = plain_cost(ci, (size_t)width);
    uint64_t prev = 0;
    uint32_t prev_idx = UINT32_MAX;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = sel ? sel[i] : i;
        uint64_t k = load_fixed(v, r, width);
        if (k == prev && prev_idx != UINT32_MAX) {
            b->indices[i] = prev_idx;
            continue;
        }
        uint64_t hk = pa_mix64(k);
        size_t h = (size_t)hk & b->mask;
        uint32_t idx;
        for (;;) {
            uint32_t e = b->table[h];
            if (e == 0) {
                if (!room(b, cost, hk, &h))
                    return false;
                b->ekey[b->ne] = k;
                b->entry_rows[b->ne] = (uint32_t)r;
                idx = b->ne++;
                b->table[h] = b->ne;
                b->bytes += cost;
                break;
            }
            if (b->ekey[e - 1] == k) {
                idx = e - 1;
                break;
            }
            h = (h + 1) & b->mask;
        }
        b->indices[i] = idx;
        prev = k;
        prev_idx = idx;
    }
    return true;
}

/* a[0..n) == b[0..n), inline: dictionary strings are short. */
static inline bool bytes_eq(const uint8_t *a, const uint8_t *b, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        if (kn__ld64(a + i) != kn__ld64(b + i))
            return false;
    if (n - i >= 4)
        return kn__ld32(a + i) == kn__ld32(b + i) && kn__ld32(a + n - 4) == kn__ld32(b + n - 4);
    for (; i < n; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

static bool build_strings(build *b, const kn__colinfo *ci, const kn_values *in,
                          const uint32_t *sel, size_t n)
{
    const int32_t *off = in->offsets;
    const uint8_t *bytes = in->bytes;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = sel ? sel[i] : i;
        size_t len = (size_t)(off[r + 1] - off[r]);
        const uint8_t *key = bytes + off[r];
        uint64_t hk = hash_bytes(key, len);
        size_t h = (size_t)hk & b->mask;
        for (;;) {
            uint32_t e = b->table[h];
            if (e == 0) {
                uint64_t cost = plain_cost(ci, len);
                if (!room(b, cost, hk, &h))
                    return false;
                b->ekey[b->ne] = hk;
                b->entry_rows[b->ne] = (uint32_t)r;
                b->indices[i] = b->ne++;
                b->table[h] = b->ne;
                b->bytes += cost;
                break;
            }
            if (b->ekey[e - 1] == hk) {
                uint32_t er = b->entry_rows[e - 1];
                size_t elen = (size_t)(off[er + 1] - off[er]);
                if (elen == len && bytes_eq(bytes + off[er], key, len)) {
                    b->indices[i] = e - 1;
                    break;
                }
            }
            h = (h + 1) & b->mask;
        }
    }
    return true;
}

int kn_dict_build(const kn_column *col, const kn_values *in, const uint32_t *sel, size_t n,
                  const kn_dict_limits *lim, void *scratch, size_t scratch_size,
                  uint32_t *entry_rows, uint32_t *indices, kn_dict_result *res, pa_err *err)
{
    kn__colinfo ci;
    int rc = kn__colinfo_get(col, &ci, err);
    if (rc != PA_OK)
        return rc;
    memset(res, 0, sizeof *res);
    if (n > UINT32_MAX - 1)
        return pa_error(err, PA_EINVAL, "dictionary build: too many values (%zu)", n);
    size_t slots = table_slots(n);
    if (scratch_size < kn_dict_build_scratch(n))
        return pa_error(err, PA_EINVAL, "dictionary build: scratch of %zu bytes, need %zu",
                        scratch_size, kn_dict_build_scratch(n));
    build b = {
        .table = scratch,
        .ekey = (uint64_t *)((uint8_t *)scratch + slots * sizeof(uint32_t)),
        .mask = (slots < FIRST_SLOTS ? slots : FIRST_SLOTS) - 1,
        .max_slots = slots,
        .fixed = !ci.is_string,
        .max_entries = lim && lim->max_entries ? lim->max_entries : UINT32_MAX,
        .max_bytes = lim && lim->max_bytes ? lim->max_bytes : UINT64_MAX,
        .entry_rows = entry_rows,
        .indices = indices,
    };
    memset(b.table, 0, (b.mask + 1) * sizeof *b.table);
    bool ok;
    if (ci.is_string)
        ok = build_strings(&b, &ci, in, sel, n);
    else if (ci.out_width == 8)
        ok = build_fixed(&b, &ci, in, sel, n, 8);
    else if (ci.out_width == 4)
        ok = build_fixed(&b, &ci, in, sel, n, 4);
    else if (ci.out_width == 1)
        ok = build_fixed(&b, &ci, in, sel, n, 1);
    else
        return pa_error(err, PA_EUNSUPPORTED, "dictionary build: %d-byte values", ci.out_width);
    res->too_large = !ok;
    if (ok && ci.conv == KN__CV_BOOL)
        b.bytes = (b.ne + 7) / 8;
    res->n_entries = b.ne;
    res->plain_bytes = b.bytes;
    return PA_OK;
}

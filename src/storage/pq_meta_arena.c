/*
 * pq_meta_arena.c - the bump allocator that owns a decoded Parquet metadata
 * object (see pq_meta_int.h), and the reference counting of pq_file_meta.
 */
#include "storage/pq_meta_int.h"

#include <string.h>

/* Blocks grow from 4 KiB (small footers, page indexes) up to 1 MiB. */
#define ARENA_FIRST_BLOCK 4096
#define ARENA_MAX_BLOCK (1u << 20)

typedef struct arena_block {
    struct arena_block *next;
    size_t size, used;
    max_align_t data[];
} arena_block;

struct pq__arena {
    arena_block *head;     /* current block, the rest chained behind it */
    size_t next_size;
};

static arena_block *block_new(size_t size)
{
    arena_block *b = pa_malloc(sizeof *b + size);
    if (!b)
        return NULL;
    b->next = NULL;
    b->size = size;
    b->used = 0;
    return b;
}

pq__arena *pq__arena_create(void)
{
    arena_block *b = block_new(ARENA_FIRST_BLOCK);
    if (!b)
        return NULL;
    pq__arena *a = (pq__arena *)b->data;
    b->used = (sizeof *a + 7) & ~(size_t)7;
    a->head = b;
    a->next_size = ARENA_FIRST_BLOCK * 2;
    return a;
}

void pq__arena_destroy(pq__arena *a)
{
    if (!a)
        return;
    arena_block *b = a->head;   /* `a` lives in the last block of the chain */
    while (b) {
        arena_block *next = b->next;
        pa_free(b);
        b = next;
    }
}

void *pq__arena_alloc(pq__arena *a, size_t n)
{
    n = (n + 7) & ~(size_t)7;
    if (n == 0)
        n = 8;
    arena_block *b = a->head;
    if (b->size - b->used < n) {
        if (n > SIZE_MAX / 4)
            return NULL;
        size_t size = a->next_size;
        while (size < n)
            size *= 2;
        arena_block *nb = block_new(size);
        if (!nb)
            return NULL;
        nb->next = b;
        a->head = nb;
        if (a->next_size < ARENA_MAX_BLOCK)
            a->next_size *= 2;
        b = nb;
    }
    void *p = (char *)b->data + b->used;
    b->used += n;
    memset(p, 0, n);
    return p;
}

char *pq__arena_strndup(pq__arena *a, const void *p, size_t len)
{
    char *s = pq__arena_alloc(a, len + 1);
    if (s) {
        if (len)
            memcpy(s, p, len);
        s[len] = '\0';
    }
    return s;
}

void pq_file_meta_retain(const pq_file_meta *m)
{
    if (m)
        __atomic_add_fetch(&((pq_file_meta *)m)->refs_, 1, __ATOMIC_RELAXED);
}

void pq_file_meta_release(const pq_file_meta *m)
{
    if (!m)
        return;
    pq_file_meta *mm = (pq_file_meta *)m;
    if (__atomic_sub_fetch(&mm->refs_, 1, __ATOMIC_ACQ_REL) == 0)
        pq__arena_destroy(mm->arena_);   /* mm itself lives in the arena */
}

void pq_column_index_destroy(pq_column_index *ci)
{
    if (ci)
        pq__arena_destroy(ci->arena_);
}

void pq_offset_index_destroy(pq_offset_index *oi)
{
    if (oi)
        pq__arena_destroy(oi->arena_);
}

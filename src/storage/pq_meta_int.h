/*
 * pq_meta_int.h - internals shared by the Parquet metadata files
 * (pq_meta_*.c, pq_schema.c).
 *
 * Design notes
 * - A decoded pq_file_meta, pq_column_index or pq_offset_index owns one arena:
 *   a chain of blocks from pa_malloc, freed together. Decoders copy every
 *   string and binary out of the input buffer into the arena, so the result
 *   outlives the buffer. The arena struct itself is the first allocation of
 *   its first block, so one free walks everything.
 * - pq_file_meta is reference counted (refs_, atomic builtins) because the
 *   metadata cache hands one parsed footer to many scans at once; the struct
 *   lives inside its own arena.
 */
#ifndef PISTA_STORAGE_PQ_META_INT_H
#define PISTA_STORAGE_PQ_META_INT_H

#include "storage/storage.h"
#include "storage/thrift_int.h"

typedef struct pq__arena pq__arena;

/* Creates an arena; NULL when out of memory. */
pq__arena *pq__arena_create(void);
void pq__arena_destroy(pq__arena *a);
/* n bytes, 8-byte aligned, zeroed; NULL when out of memory. */
void *pq__arena_alloc(pq__arena *a, size_t n);
/* A NUL-terminated copy of len bytes at p. */
char *pq__arena_strndup(pq__arena *a, const void *p, size_t len);

/* Decodes one FileMetaData struct from r into m, allocating from a (used by
 * pq_file_meta_decode and by tests of partial buffers). */
int pq__decode_file_meta(th_reader *r, pq__arena *a, pq_file_meta *m);

#endif /* PISTA_STORAGE_PQ_META_INT_H */

/*
 * pq_meta_pages.c - walking the page headers of a column chunk, so that every
 * page boundary is known before decoding starts (DESIGN.md: a GPU takes one
 * page per thread block). The scan calls pq_chunk_pages on a chunk it has
 * read; `pista parquet meta --pages` uses pq_chunk_pages_read.
 */
#include "storage/pq_meta_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int pq_chunk_pages(const pq_column_meta *cm, const uint8_t *chunk, size_t chunk_len,
                   const char *what, pq_page_info **pages, uint32_t *n_pages, pa_err *err)
{
    int64_t start = pq_chunk_start(cm);
    if (cm->total_compressed_size < 0 || (uint64_t)cm->total_compressed_size != chunk_len)
        return pa_error(err, PA_EINVAL, "%s: chunk buffer of %zu bytes, metadata says %lld", what,
                        chunk_len, (long long)cm->total_compressed_size);
    pq_page_info *arr = NULL;
    uint32_t n = 0, cap = 0;
    int64_t values = 0;
    size_t pos = 0;
    int rc = PA_OK;
    while (pos < chunk_len) {
        if (n == cap) {
            uint32_t ncap = cap ? cap * 2 : 16;
            pq_page_info *na = pa_realloc(arr, ncap * sizeof *na);
            if (!na) {
                rc = pa_error(err, PA_ENOMEM, "%s: out of memory listing pages", what);
                goto fail;
            }
            arr = na;
            cap = ncap;
        }
        pq_page_info *pi = &arr[n];
        uint64_t off = (uint64_t)start + pos;
        size_t hlen;
        if ((rc = pq_page_header_decode(chunk + pos, chunk_len - pos, what, off, &pi->header, &hlen, err)))
            goto fail;
        const pq_page_header *h = &pi->header;
        pi->offset = off;
        pi->header_len = (uint32_t)hlen;
        if ((uint64_t)h->compressed_page_size > chunk_len - pos - hlen) {
            rc = pa_error(err, PA_ECORRUPT, "%s: page at byte %llu has %d bytes but the chunk ends %zu bytes after its header",
                          what, (unsigned long long)off, h->compressed_page_size, chunk_len - pos - hlen);
            goto fail;
        }
        if (h->type == PQ_PAGE_DICTIONARY_PAGE) {
            if (n != 0 || !h->has_dictionary_page) {
                rc = pa_error(err, PA_ECORRUPT, "%s: dictionary page at byte %llu is %s", what,
                              (unsigned long long)off, n ? "not the first page" : "missing its header");
                goto fail;
            }
        } else if (h->type == PQ_PAGE_DATA_PAGE) {
            if (!h->has_data_page || h->data_page.num_values < 0) {
                rc = pa_error(err, PA_ECORRUPT, "%s: data page at byte %llu has no valid DataPageHeader",
                              what, (unsigned long long)off);
                goto fail;
            }
            values += h->data_page.num_values;
        } else if (h->type == PQ_PAGE_DATA_PAGE_V2) {
            const pq_data_page_header_v2 *v2 = &h->data_page_v2;
            if (!h->has_data_page_v2 || v2->num_values < 0 || v2->definition_levels_byte_length < 0 ||
                v2->repetition_levels_byte_length < 0 ||
                (int64_t)v2->definition_levels_byte_length + v2->repetition_levels_byte_length >
                    h->compressed_page_size) {
                rc = pa_error(err, PA_ECORRUPT, "%s: data page v2 at byte %llu has no valid DataPageHeaderV2",
                              what, (unsigned long long)off);
                goto fail;
            }
            values += v2->num_values;
        }   /* index pages and unknown page types are skipped */
        pos += hlen + (size_t)h->compressed_page_size;
        n++;
    }
    if (values != cm->num_values) {
        rc = pa_error(err, PA_ECORRUPT, "%s: data pages hold %lld values, the column chunk says %lld",
                      what, (long long)values, (long long)cm->num_values);
        goto fail;
    }
    *pages = arr;
    *n_pages = n;
    return PA_OK;
fail:
    pa_free(arr);
    return rc;
}

int pq_chunk_pages_read(const pq_file_meta *m, uint32_t rg, uint32_t col, uint8_t **chunk_out,
                        pq_page_info **pages, uint32_t *n_pages, pa_err *err)
{
    if (rg >= m->n_row_groups || col >= m->row_groups[rg].n_columns || !m->path)
        return pa_error(err, PA_EINVAL, "no column %u in row group %u of %s", col, rg,
                        m->path ? m->path : "(unnamed metadata)");
    const pq_column_meta *cm = &m->row_groups[rg].columns[col].meta_data;
    int64_t start = pq_chunk_start(cm);
    size_t len = (size_t)cm->total_compressed_size;   /* validated: inside the file */
    char what[400];
    snprintf(what, sizeof what, "%s: row group %u column %s", m->path, rg,
             col < m->n_leaves ? m->leaves[col].path : "?");
    uint8_t *buf = pa_malloc(len ? len : 1);
    if (!buf)
        return pa_error(err, PA_ENOMEM, "%s: out of memory for a %zu-byte chunk", what, len);
    int rc = PA_OK;
    int fd = open(m->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO put there since: no wait */
    struct stat st;
    if (fd < 0) {
        rc = pa_error(err, PA_EIO, "%s: cannot open: %s", m->path, strerror(errno));
        goto fail;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        rc = pa_error(err, PA_EINVAL, "%s: not a regular file", m->path);
        goto fail;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    size_t done = 0;
    while (done < len) {
        ssize_t k = pread(fd, buf + done, len - done, (off_t)start + (off_t)done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            rc = pa_error(err, k < 0 ? PA_EIO : PA_ECORRUPT, "%s: reading the chunk: %s", what,
                          k < 0 ? strerror(errno) : "file truncated");
            break;
        }
        done += (size_t)k;
    }
    close(fd);
    if (rc)
        goto fail;
    pa_counter_add(PA_CTR_BYTES_READ, (int64_t)len);
    pa_counter_add(PA_CTR_READ_REQUESTS, 1);
    if ((rc = pq_chunk_pages(cm, buf, len, what, pages, n_pages, err)))
        goto fail;
    *chunk_out = buf;
    return PA_OK;
fail:
    pa_free(buf);
    return rc;
}

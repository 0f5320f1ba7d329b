/*
 * pq_meta_footer.c - reading a Parquet file's footer: magics, footer length,
 * FileMetaData, and validation of the metadata against itself and the file
 * size (so that later stages can trust offsets, sizes and counts).
 */
#include "storage/pq_meta_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* First read of a file's tail: most footers fit (TPC-H: ~2 KiB per table). */
#define TAIL_GUESS (64 * 1024)
/* "PAR1" + footer + u32 length + "PAR1". */
#define MIN_FILE_SIZE 12

/* ------------------------------------------------------------------ validation */

/* Builds m->leaves from the depth-first schema list. */
static int schema_leaves(pq_file_meta *m, const char *name, pa_err *err)
{
    pq__arena *a = m->arena_;
    if (m->n_schema == 0)
        return pa_error(err, PA_ECORRUPT, "%s: empty schema", name);
    /* One frame per open group: remaining children, levels, path length. */
    typedef struct frame { int64_t left; int16_t def, rep; size_t path_len; } frame;
    frame *stack = pa_malloc(sizeof(frame) * (m->n_schema + 1));
    char *path = pa_malloc(1);
    size_t path_cap = 1;
    int rc = PA_OK;
    uint32_t n_leaves = 0, depth = 0;
    if (!stack || !path) {
        rc = pa_error(err, PA_ENOMEM, "%s: out of memory checking the schema", name);
        goto done;
    }
    m->leaves = pq__arena_alloc(a, sizeof(pq_leaf) * m->n_schema);
    if (!m->leaves) {
        rc = pa_error(err, PA_ENOMEM, "%s: out of memory checking the schema", name);
        goto done;
    }
    const pq_schema_element *root = &m->schema[0];
    if (!root->has_num_children || root->num_children < 0) {
        rc = pa_error(err, PA_ECORRUPT, "%s: schema root '%s' is not a group", name, root->name);
        goto done;
    }
    stack[0] = (frame){root->num_children, 0, 0, 0};
    path[0] = '\0';
    uint32_t i = 1;
    for (; i < m->n_schema; i++) {
        while (depth > 0 && stack[depth].left == 0)
            depth--;
        if (stack[depth].left == 0)
            break;   /* root complete: element i is extra */
        stack[depth].left--;
        const pq_schema_element *e = &m->schema[i];
        int16_t def = stack[depth].def, rep = stack[depth].rep;
        if (e->has_repetition && e->repetition != PQ_REP_REQUIRED)
            def++;
        if (e->has_repetition && e->repetition == PQ_REP_REPEATED)
            rep++;
        size_t plen = stack[depth].path_len, nlen = strlen(e->name);
        if (plen + nlen + 2 > path_cap) {
            path_cap = (plen + nlen + 2) * 2;
            char *np = pa_realloc(path, path_cap);
            if (!np) {
                rc = pa_error(err, PA_ENOMEM, "%s: out of memory checking the schema", name);
                goto done;
            }
            path = np;
        }
        if (plen)
            path[plen++] = '.';
        memcpy(path + plen, e->name, nlen + 1);
        bool group = e->has_num_children && (!e->has_type || e->num_children > 0);
        if (group) {
            if (e->num_children < 0) {
                rc = pa_error(err, PA_ECORRUPT, "%s: schema element '%s' has %d children", name,
                              path, e->num_children);
                goto done;
            }
            stack[++depth] = (frame){e->num_children, def, rep, plen + nlen};
        } else {
            if (!e->has_type) {
                rc = pa_error(err, PA_ECORRUPT, "%s: schema element '%s' has neither a type nor children",
                              name, path);
                goto done;
            }
            pq_leaf *l = &m->leaves[n_leaves++];
            l->schema_index = i;
            l->max_def_level = def;
            l->max_rep_level = rep;
            if (!(l->path = pq__arena_strndup(a, path, plen + nlen))) {
                rc = pa_error(err, PA_ENOMEM, "%s: out of memory checking the schema", name);
                goto done;
            }
        }
    }
    while (depth > 0 && stack[depth].left == 0)
        depth--;
    if (i < m->n_schema)
        rc = pa_error(err, PA_ECORRUPT, "%s: schema has %u elements but its tree ends after %u",
                      name, m->n_schema, i);
    else if (stack[depth].left != 0)
        rc = pa_error(err, PA_ECORRUPT, "%s: schema tree needs more elements than the %u listed",
                      name, m->n_schema);
    m->n_leaves = n_leaves;
done:
    pa_free(stack);
    pa_free(path);
    return rc;
}

int64_t pq_chunk_start(const pq_column_meta *cm)
{
    /* Some writers store dictionary_page_offset 0 to mean "none". */
    if (cm->has_dictionary_page_offset && cm->dictionary_page_offset > 0 &&
        cm->dictionary_page_offset < cm->data_page_offset)
        return cm->dictionary_page_offset;
    return cm->data_page_offset;
}

/* True if [off, off+len) lies inside [lo, hi) (overflow-safe). */
static bool range_inside(int64_t off, int64_t len, int64_t lo, int64_t hi)
{
    return off >= lo && len >= 0 && off <= hi && len <= hi - off;
}

static int check_chunk(const pq_file_meta *m, uint32_t g, uint32_t c, int64_t data_end,
                       const char *name, pa_err *err)
{
    const pq_row_group *rg = &m->row_groups[g];
    const pq_column_chunk *cc = &rg->columns[c];
    const pq_leaf *leaf = &m->leaves[c];
    const pq_schema_element *e = &m->schema[leaf->schema_index];
    const pq_column_meta *cm = &cc->meta_data;
    const char *col = leaf->path;
    if (cc->has_crypto_metadata)
        return pa_error(err, PA_EUNSUPPORTED, "%s: column %s is encrypted (unsupported)", name, col);
    if (cc->file_path)
        return pa_error(err, PA_EUNSUPPORTED, "%s: column %s of row group %u is in another file (%s)",
                        name, col, g, cc->file_path);
    if (!cc->has_meta_data)
        return pa_error(err, PA_ECORRUPT, "%s: column %s of row group %u has no metadata", name,
                        col, g);
    if (cm->type != e->type)
        return pa_error(err, PA_ECORRUPT, "%s: column %s of row group %u has type %d, schema says %d",
                        name, col, g, cm->type, e->type);
    /* path_in_schema must spell leaf->path. */
    size_t off = 0, plen = strlen(col);
    bool same = cm->n_path_in_schema > 0;
    for (uint32_t k = 0; same && k < cm->n_path_in_schema; k++) {
        size_t n = strlen(cm->path_in_schema[k]);
        same = off + n <= plen && !memcmp(col + off, cm->path_in_schema[k], n) &&
               (off + n == plen ? k + 1 == cm->n_path_in_schema : col[off + n] == '.');
        off += n + 1;
    }
    if (!same)
        return pa_error(err, PA_ECORRUPT, "%s: column chunk %u of row group %u has path '%s...', schema says '%s'",
                        name, c, g, cm->n_path_in_schema ? cm->path_in_schema[0] : "", col);
    /* total_uncompressed_size is not checked: some writers get it wrong, and
     * readers take the sizes from the page headers (scan_decode.c). */
    if (cm->num_values < 0 || cm->total_compressed_size < 0)
        return pa_error(err, PA_ECORRUPT, "%s: column %s of row group %u has negative sizes or counts",
                        name, col, g);
    if (leaf->max_rep_level == 0 && cm->num_values != rg->num_rows)
        return pa_error(err, PA_ECORRUPT, "%s: column %s of row group %u has %lld values for %lld rows",
                        name, col, g, (long long)cm->num_values, (long long)rg->num_rows);
    int64_t start = pq_chunk_start(cm);
    if (!range_inside(start, cm->total_compressed_size, 4, data_end))
        return pa_error(err, PA_ECORRUPT,
                        "%s: column %s of row group %u: chunk at byte %lld, %lld bytes, lies outside the column data [4, %lld)",
                        name, col, g, (long long)start, (long long)cm->total_compressed_size,
                        (long long)data_end);
    if (cm->data_page_offset < start ||
        (cm->total_compressed_size > 0 && cm->data_page_offset - start >= cm->total_compressed_size))
        return pa_error(err, PA_ECORRUPT, "%s: column %s of row group %u: data page offset %lld outside its chunk",
                        name, col, g, (long long)cm->data_page_offset);
    if (cc->has_offset_index_offset && cc->has_offset_index_length &&
        !range_inside(cc->offset_index_offset, cc->offset_index_length, 4, data_end))
        return pa_error(err, PA_ECORRUPT, "%s: column %s of row group %u: offset index outside the file",
                        name, col, g);
    if (cc->has_column_index_offset && cc->has_column_index_length &&
        !range_inside(cc->column_index_offset, cc->column_index_length, 4, data_end))
        return pa_error(err, PA_ECORRUPT, "%s: column %s of row group %u: column index outside the file",
                        name, col, g);
    return PA_OK;
}

int pq_footer_validate(pq_file_meta *m, uint64_t file_size, const char *name, pa_err *err)
{
    if (m->has_encryption_algorithm)
        return pa_error(err, PA_EUNSUPPORTED, "%s: encrypted file (unsupported)", name);
    int rc = schema_leaves(m, name, err);
    if (rc)
        return rc;
    if (m->num_rows < 0)
        return pa_error(err, PA_ECORRUPT, "%s: negative row count %lld", name, (long long)m->num_rows);
    uint64_t tail = (uint64_t)m->footer_len + 8;
    int64_t data_end = file_size >= tail + 4 && file_size <= INT64_MAX ? (int64_t)(file_size - tail) : 4;
    int64_t rows = 0;
    for (uint32_t g = 0; g < m->n_row_groups; g++) {
        const pq_row_group *rg = &m->row_groups[g];
        if (rg->n_columns != m->n_leaves)
            return pa_error(err, PA_ECORRUPT, "%s: row group %u has %u columns, the schema %u", name,
                            g, rg->n_columns, m->n_leaves);
        if (rg->num_rows < 0 || rg->num_rows > INT64_MAX - rows)
            return pa_error(err, PA_ECORRUPT, "%s: row group %u has a bad row count %lld", name, g,
                            (long long)rg->num_rows);
        rows += rg->num_rows;
        for (uint32_t c = 0; c < rg->n_columns; c++)
            if ((rc = check_chunk(m, g, c, data_end, name, err)))
                return rc;
    }
    if (rows != m->num_rows)
        return pa_error(err, PA_ECORRUPT, "%s: row groups hold %lld rows, the footer says %lld", name,
                        (long long)rows, (long long)m->num_rows);
    return PA_OK;
}

/* ------------------------------------------------------------------ parsing */

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int pq_footer_parse(const uint8_t *tail, size_t tail_len, uint64_t file_size, const char *name,
                    pq_file_meta **out, size_t *need, pa_err *err)
{
    if (file_size < MIN_FILE_SIZE)
        return pa_error(err, PA_ECORRUPT, "%s: not a Parquet file (only %llu bytes)", name,
                        (unsigned long long)file_size);
    if (tail_len > file_size)
        return pa_error(err, PA_EINVAL, "%s: tail of %zu bytes is longer than the file", name, tail_len);
    if (tail_len < 8) {
        *need = 8;
        return PA_EBUSY;
    }
    const uint8_t *end = tail + tail_len;
    if (!memcmp(end - 4, "PARE", 4))
        return pa_error(err, PA_EUNSUPPORTED, "%s: encrypted footer (PARE) is not supported", name);
    if (memcmp(end - 4, "PAR1", 4))
        return pa_error(err, PA_ECORRUPT, "%s: not a Parquet file (no PAR1 magic at the end)", name);
    if (tail_len == file_size && memcmp(tail, "PAR1", 4))
        return pa_error(err, PA_ECORRUPT, "%s: not a Parquet file (no PAR1 magic at the start)", name);
    uint32_t flen = le32(end - 8);
    if ((uint64_t)flen + MIN_FILE_SIZE > file_size)
        return pa_error(err, PA_ECORRUPT,
                        "%s: footer length %u is bigger than the file (%llu bytes): truncated or not Parquet",
                        name, flen, (unsigned long long)file_size);
    if (tail_len < (size_t)flen + 8) {
        *need = (size_t)flen + 8;
        return PA_EBUSY;
    }
    char what[320];
    snprintf(what, sizeof what, "footer of %s", name);
    uint64_t base = file_size - 8 - flen;
    pq_file_meta *m;
    int rc = pq_file_meta_decode(end - 8 - flen, flen, what, base, &m, err);
    if (rc)
        return rc;
    m->file_size = file_size;
    m->footer_len = flen;
    if (!(m->path = pq__arena_strndup(m->arena_, name, strlen(name))))
        rc = pa_error(err, PA_ENOMEM, "%s: out of memory", name);
    if (!rc)
        rc = pq_footer_validate(m, file_size, name, err);
    if (rc) {
        pq_file_meta_release(m);
        return rc;
    }
    *out = m;
    return PA_OK;
}

/* Reads exactly n bytes at off, or fails naming the file. */
static int read_at(int fd, void *buf, size_t n, uint64_t off, const char *path, pa_err *err)
{
    size_t done = 0;
    while (done < n) {
        ssize_t k = pread(fd, (char *)buf + done, n - done, (off_t)(off + done));
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return pa_error(err, PA_EIO, "%s: read failed at byte %llu: %s", path,
                            (unsigned long long)(off + done), strerror(errno));
        if (k == 0)
            return pa_error(err, PA_ECORRUPT, "%s: truncated while reading (file shrank?) at byte %llu",
                            path, (unsigned long long)(off + done));
        done += (size_t)k;
    }
    pa_counter_add(PA_CTR_BYTES_READ, (int64_t)n);
    pa_counter_add(PA_CTR_READ_REQUESTS, 1);
    return PA_OK;
}

int pq_footer_read(const char *path, pq_file_meta **out, pa_err *err)
{
    /* O_NONBLOCK: a FIFO is refused at once below instead of waiting for a writer. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return pa_error(err, PA_EIO, "%s: cannot open: %s", path, strerror(errno));
    uint8_t *tail = NULL;
    pq_file_meta *m = NULL;
    int rc;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        rc = pa_error(err, PA_EIO, "%s: cannot stat: %s", path, strerror(errno));
        goto done;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = pa_error(err, PA_EINVAL, "%s: not a regular file (%s)", path, pq_file_kind(st.st_mode));
        goto done;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    uint64_t size = (uint64_t)st.st_size;
    size_t want = size < TAIL_GUESS ? (size_t)size : TAIL_GUESS;
    for (int attempt = 0; attempt < 2; attempt++) {
        pa_free(tail);
        if (!(tail = pa_malloc(want ? want : 1))) {
            rc = pa_error(err, PA_ENOMEM, "%s: out of memory for a %zu-byte footer", path, want);
            goto done;
        }
        if ((rc = read_at(fd, tail, want, size - want, path, err)))
            goto done;
        size_t need = 0;
        rc = pq_footer_parse(tail, want, size, path, &m, &need, err);
        if (rc != PA_EBUSY)
            break;
        want = need;   /* a footer bigger than the first guess */
    }
    if (rc == PA_EBUSY)
        rc = pa_error(err, PA_EINTERNAL, "%s: footer still incomplete after a second read", path);
    if (rc == PA_OK && want < size) {
        uint8_t head[4];
        rc = read_at(fd, head, 4, 0, path, err);
        if (!rc && memcmp(head, "PAR1", 4))
            rc = pa_error(err, PA_ECORRUPT, "%s: not a Parquet file (no PAR1 magic at the start)", path);
        if (rc)
            pq_file_meta_release(m);
    }
    if (rc == PA_OK) {
        m->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
        *out = m;
    }
done:
    pa_free(tail);
    close(fd);
    return rc;
}

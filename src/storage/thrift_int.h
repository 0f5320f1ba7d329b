/*
 * thrift_int.h - the Thrift compact protocol codec inside src/storage
 * (internal: the Parquet metadata decoders/encoders and the writer use it).
 *
 * Design notes
 * - Wire format (thrift-compact-protocol.md): integers are zigzag ULEB128
 *   varints (i16/i32/i64; i8 is one raw byte), doubles 8 bytes little-endian,
 *   binary = varint length + bytes. A struct is a run of field headers ended
 *   by a 0x00 stop byte; a header is `dddd tttt` (delta 1..15 from the
 *   previous field id, type) or `0000 tttt` + zigzag i16 id. A bool field has
 *   no value bytes (type 1 = true, 2 = false); a bool list element is one byte.
 *   A list header is `ssss tttt` (size <= 14) or `1111 tttt` + varint size.
 * - Reader: a cursor over one buffer, never reads past len. Every length and
 *   element count is checked against the bytes left (each element takes at
 *   least one byte, a double eight), so a corrupt count cannot make us
 *   allocate more than ~len elements. Structs, lists, sets and maps nest at
 *   most TH_MAX_DEPTH deep. Unknown fields of any type are skipped.
 * - Errors are PA_ECORRUPT with "<what>: <problem> at byte N (<struct path>)":
 *   N is a file offset (base + position) and the path lists the structs and
 *   field ids being decoded, e.g. "FileMetaData.4 > RowGroup.1 > ColumnChunk.3".
 *   The first error is sticky: later calls fail at once with the same code.
 * - Writer: appends to a pq_buf. Errors (out of memory) are sticky too, so an
 *   encoder writes everything and checks w->rc once at the end.
 */
#ifndef PISTA_STORAGE_THRIFT_INT_H
#define PISTA_STORAGE_THRIFT_INT_H

#include "storage/storage.h"

/* Compact protocol type codes. */
enum th_type {
    TH_STOP = 0,
    TH_BOOL_TRUE = 1,
    TH_BOOL_FALSE = 2,
    TH_I8 = 3,
    TH_I16 = 4,
    TH_I32 = 5,
    TH_I64 = 6,
    TH_DOUBLE = 7,
    TH_BINARY = 8,
    TH_LIST = 9,
    TH_SET = 10,
    TH_MAP = 11,
    TH_STRUCT = 12,
    TH_UUID = 13,
};

#define TH_MAX_DEPTH 64

/* ------------------------------------------------------------------ reader */

typedef struct th_reader {
    const uint8_t *buf;
    size_t len, pos;
    uint64_t base;          /* file offset of buf[0], for messages */
    const char *what;       /* source name, for messages */
    pa_err *err;
    int rc;                 /* sticky first error */
    int depth;
    const char *names[TH_MAX_DEPTH]; /* struct path, for messages */
    int16_t ids[TH_MAX_DEPTH];
} th_reader;

/* A field header: type TH_STOP ends the struct. For bool fields `bval` holds
 * the value (no value bytes follow). */
typedef struct th_field {
    uint8_t type;
    int16_t id;
    bool bval;
} th_field;

void th_reader_init(th_reader *r, const uint8_t *buf, size_t len, const char *what,
                    uint64_t base, pa_err *err);
/* Records PA_ECORRUPT "<what>: <msg> at byte N (<path>)" and returns it. */
int th_fail(th_reader *r, const char *fmt, ...) PA_PRINTF(2, 3);

/* Enter/leave a struct called `name` (for messages and the depth limit). */
int th_struct_begin(th_reader *r, const char *name);
void th_struct_end(th_reader *r);
/* Next field header of the current struct; *last is the previous field id
 * (start at 0). Ids must be positive. */
int th_field_next(th_reader *r, int16_t *last, th_field *f);

/* Values. The *_field variants first check that f has the expected type
 * and fail with a message naming the field otherwise. */
int th_read_varint(th_reader *r, uint64_t *out);
int th_read_i8(th_reader *r, int8_t *out);
int th_read_i16(th_reader *r, int16_t *out);
int th_read_i32(th_reader *r, int32_t *out);
int th_read_i64(th_reader *r, int64_t *out);
int th_read_double(th_reader *r, double *out);
/* A view into the buffer (no copy). */
int th_read_binary(th_reader *r, const uint8_t **ptr, uint32_t *len);
/* List/set header: element type and count, count checked against the bytes
 * left. A bool element type may be written as 1 or 2; both give TH_BOOL_TRUE.
 * An empty list may carry any element type. */
int th_read_list_begin(th_reader *r, uint8_t *elem_type, uint32_t *count);
/* A bool list element (one byte, 0 or 1; 2 is accepted as false). */
int th_read_bool_elem(th_reader *r, bool *out);

int th_expect(th_reader *r, const th_field *f, uint8_t type);
int th_field_i8(th_reader *r, const th_field *f, int8_t *out);
int th_field_i16(th_reader *r, const th_field *f, int16_t *out);
int th_field_i32(th_reader *r, const th_field *f, int32_t *out);
int th_field_i64(th_reader *r, const th_field *f, int64_t *out);
int th_field_bool(th_reader *r, const th_field *f, bool *out);
int th_field_binary(th_reader *r, const th_field *f, const uint8_t **ptr, uint32_t *len);
/* A list field: checks the field is a list of elem_type (bool lists: pass
 * TH_BOOL_TRUE) and returns the count; the caller then reads the elements. */
int th_field_list(th_reader *r, const th_field *f, uint8_t elem_type, uint32_t *count);

/* Skip one value of the given type, recursing into containers. */
int th_skip(th_reader *r, uint8_t type);

/* ------------------------------------------------------------------ writer */

typedef struct th_writer {
    pq_buf *out;
    size_t start_len;       /* out->len at init, restored by th_writer_finish on error */
    pa_err *err;
    int rc;                 /* sticky first error */
    int depth;
    int16_t last[TH_MAX_DEPTH + 1]; /* previous field id per open struct */
} th_writer;

void th_writer_init(th_writer *w, pq_buf *out, pa_err *err);
/* Returns w->rc; on error truncates out back to its length at init. */
int th_writer_finish(th_writer *w);
/* Sticky failure with a message (e.g. PA_EINVAL for a missing required string). */
void th_wfail(th_writer *w, int code, const char *fmt, ...) PA_PRINTF(3, 4);

void th_write_struct_begin(th_writer *w);
void th_write_struct_end(th_writer *w);   /* writes the stop byte */
/* Field header; for bool fields use th_write_field_bool instead. */
void th_write_field(th_writer *w, uint8_t type, int16_t id);
void th_write_field_bool(th_writer *w, int16_t id, bool v);
void th_write_field_i8(th_writer *w, int16_t id, int8_t v);
void th_write_field_i16(th_writer *w, int16_t id, int16_t v);
void th_write_field_i32(th_writer *w, int16_t id, int32_t v);
void th_write_field_i64(th_writer *w, int16_t id, int64_t v);
void th_write_field_binary(th_writer *w, int16_t id, const void *p, size_t len);
void th_write_field_string(th_writer *w, int16_t id, const char *s);

void th_write_varint(th_writer *w, uint64_t v);
void th_write_byte(th_writer *w, uint8_t b);
void th_write_i16(th_writer *w, int16_t v);
void th_write_i32(th_writer *w, int32_t v);
void th_write_i64(th_writer *w, int64_t v);
void th_write_double(th_writer *w, double v);
void th_write_binary(th_writer *w, const void *p, size_t len);
/* List header; bool lists pass TH_BOOL_TRUE and write elements with th_write_byte. */
void th_write_list_begin(th_writer *w, uint8_t elem_type, uint32_t count);

static inline uint64_t th_zigzag64(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t th_unzigzag64(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

#endif /* PISTA_STORAGE_THRIFT_INT_H */

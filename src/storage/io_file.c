/*
 * io_file.c - the engine's registry of open files. One descriptor per
 * (path, O_DIRECT wanted) pair, reference counted, so every scan of a query
 * reading the same Parquet file shares it. O_DIRECT is verified with a probe
 * read, and refused O_DIRECT falls back to buffered I/O with a note.
 */
#define _GNU_SOURCE 1   /* O_DIRECT */
#include "storage/io_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* True if O_DIRECT reads work on fd: one aligned block at offset 0. Some
 * filesystems accept the open flag and refuse the read with EINVAL. */
static bool direct_probe(int fd, uint64_t size)
{
    if (size == 0)
        return true;
    void *raw = pa_malloc(2 * IO_DIRECT_ALIGN);
    if (!raw)
        return true;   /* cannot tell; the reads will report it */
    void *buf = (void *)(((uintptr_t)raw + IO_DIRECT_ALIGN - 1) & ~(uintptr_t)(IO_DIRECT_ALIGN - 1));
    ssize_t n;
    do
        n = pread(fd, buf, IO_DIRECT_ALIGN, 0);
    while (n < 0 && errno == EINTR);
    bool ok = !(n < 0 && errno == EINVAL);
    pa_free(raw);
    return ok;
}

const char *pq_file_kind(unsigned mode)
{
    switch (mode & S_IFMT) {
    case S_IFDIR: return "a directory";
    case S_IFIFO: return "a FIFO";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    case S_IFREG: return "a regular file";
    default: return "not a file";
    }
}

/* Open path (O_DIRECT when asked and possible) into f. */
static int open_fd(io_file *f, pa_err *err)
{
    int fd = -1;
    if (f->asked_direct) {
        if (io__test_direct_refused) {
            errno = EINVAL;
        } else {
            do
                fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_DIRECT);
            while (fd < 0 && errno == EINTR);
        }
        if (fd < 0 && errno != EINVAL && errno != EOPNOTSUPP)
            goto open_failed;
        if (fd < 0)
            snprintf(f->note, sizeof f->note, "O_DIRECT refused by the filesystem (%s); using buffered I/O",
                     strerror(errno));
    }
    if (fd < 0) {
        do
            fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        while (fd < 0 && errno == EINTR);
        if (fd < 0)
            goto open_failed;
    }
    /* O_NONBLOCK: opening a FIFO would wait for a writer; it is refused
     * below, and a regular file ignores the flag (cleared anyway). */
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return pa_error(err, PA_EIO, "stat of %s: %s", f->path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return pa_error(err, PA_EINVAL, "%s: not a regular file (%s)", f->path, pq_file_kind(st.st_mode));
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    f->fd = fd;
    f->size = (uint64_t)st.st_size;
    f->direct = f->asked_direct && !f->note[0];
    if (f->direct && !direct_probe(fd, f->size)) {
        close(fd);
        f->fd = -1;
        snprintf(f->note, sizeof f->note,
                 "O_DIRECT reads refused by the filesystem (EINVAL); using buffered I/O");
        f->direct = false;
        do
            fd = open(f->path, O_RDONLY | O_CLOEXEC);
        while (fd < 0 && errno == EINTR);
        if (fd < 0)
            goto open_failed;
        f->fd = fd;
    }
    return PA_OK;
open_failed:
    if (errno == ENOENT || errno == ENOTDIR)
        return pa_error(err, PA_ENOTFOUND, "opening %s: %s", f->path, strerror(errno));
    return pa_error(err, PA_EIO, "opening %s: %s", f->path, strerror(errno));
}

int io_file_open(io_engine *e, const char *path, int flags, io_file **out, pa_err *err)
{
    if (!path || !*path)
        return pa_error(err, PA_EINVAL, "io_file_open: empty path");
    bool direct = (flags & IO_OPEN_DIRECT) ? true : (flags & IO_OPEN_BUFFERED) ? false : e->opt.direct;
    pthread_mutex_lock(&e->files_mu);
    for (io_file *f = e->files; f; f = f->next) {
        if (f->asked_direct == direct && strcmp(f->path, path) == 0) {
            f->refs++;
            *out = f;
            pthread_mutex_unlock(&e->files_mu);
            return PA_OK;
        }
    }
    int rc = PA_ENOMEM;
    io_file *f = pa_calloc(1, sizeof *f);
    if (!f || !(f->path = pa_strdup(path))) {
        rc = pa_error(err, PA_ENOMEM, "out of memory opening %s", path);
        goto fail;
    }
    f->engine = e;
    f->asked_direct = direct;
    f->fd = -1;
    if ((rc = open_fd(f, err)) != PA_OK)
        goto fail;
    f->refs = 1;
    f->next = e->files;
    e->files = f;
    pthread_mutex_unlock(&e->files_mu);
    *out = f;
    return PA_OK;
fail:
    pthread_mutex_unlock(&e->files_mu);
    if (f)
        pa_free(f->path);
    pa_free(f);
    return rc;
}

static void file_free(io_file *f)
{
    if (f->fd >= 0)
        close(f->fd);
    pa_free(f->path);
    pa_free(f);
}

void io_file_close(io_file *f)
{
    if (!f)
        return;
    io_engine *e = f->engine;
    pthread_mutex_lock(&e->files_mu);
    bool last = --f->refs == 0;
    if (last) {
        io_file **p = &e->files;
        while (*p != f)
            p = &(*p)->next;
        *p = f->next;
    }
    pthread_mutex_unlock(&e->files_mu);
    if (last)
        file_free(f);
}

void io__files_close_all(io_engine *e)
{
    pthread_mutex_lock(&e->files_mu);
    io_file *f = e->files;
    e->files = NULL;
    pthread_mutex_unlock(&e->files_mu);
    while (f) {
        io_file *next = f->next;
        file_free(f);
        f = next;
    }
}

uint64_t io_file_size(const io_file *f) { return f->size; }
const char *io_file_path(const io_file *f) { return f->path; }
bool io_file_direct(const io_file *f) { return f->direct; }
const char *io_file_note(const io_file *f) { return f->note; }

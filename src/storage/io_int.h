/*
 * io_int.h - internals of the I/O engine (io.c, io_file.c, io_pread.c,
 * io_uring.c), shared by its files only.
 *
 * Design notes
 *
 * - Requests and pieces. A request of L bytes is cut into ceil(L / max_io)
 *   pieces (one piece for L = 0). Submitted requests wait in one FIFO list
 *   (e->head/tail, linked through priv_.next: no allocation on submit); the
 *   head request hands out its pieces in order, and leaves the list when all
 *   are dispatched. At most queue_depth pieces run at once (e->in_flight).
 *
 * - Slots. A running piece lives in an io__slot: the pread backend has one
 *   per thread, the io_uring backend one per queue-depth entry (the SQE's
 *   user_data points at it). A slot owns its O_DIRECT bounce buffer
 *   (allocated on first need, max_io + 2 * IO_DIRECT_ALIGN bytes, freed with
 *   the slot), so a steady stream of unaligned direct reads allocates nothing.
 *
 * - Completion. The thread that finishes a request's last piece delivers it
 *   (io__deliver: done callback, then queue push, then batch signal) WITHOUT
 *   holding the engine lock, and only then gives back the piece's in-flight
 *   slot. So a full completion queue keeps slots busy and stops new reads:
 *   back-pressure reaches the disk. Each request is delivered exactly once:
 *   the decision "finished == n_pieces == dispatched" is taken under e->mu.
 *
 * - Cancellation and shutdown. io_cancel_tag and io_engine_destroy truncate
 *   n_pieces to the pieces already dispatched; the request is delivered with
 *   PA_ECANCELED by the canceller when none is running, else by the thread
 *   finishing the last running piece. Destroy then waits for in_flight == 0
 *   and delivering == 0 before stopping the backend.
 *
 * - Locks: e->mu guards the list, counters, slots and stats; e->files_mu the
 *   file registry. Never held during a delivery.
 *
 * - Which thread talks to the kernel. Pieces run on engine-owned threads
 *   only, never on a submitter's: io_uring ties a request to the task that
 *   submitted it, and a buffered read that misses the page cache finishes
 *   by task work of that task, failing with EFAULT if the task has exited
 *   (a scan thread that ended, having dispatched other scans' pieces from
 *   the shared FIFO). So the io_uring backend's completion thread is the
 *   ring's only user (fills SQEs, submits, reaps); a submit from another
 *   thread just wakes it through an eventfd. The pread backend's reads run
 *   on its own threads anyway.
 */
#ifndef PISTA_STORAGE_IO_INT_H
#define PISTA_STORAGE_IO_INT_H

#include "storage/storage.h"

#include <pthread.h>
#include <sys/types.h>

typedef struct io__slot {
    io_request *req;       /* NULL when free */
    uint64_t pos;          /* piece start within the request */
    size_t len;            /* piece length */
    int status;            /* PA_OK or the piece's error */
    /* the read in progress: bytes land at dst[0..want) from file offset rd_off */
    int fd;
    uint8_t *dst;
    uint64_t rd_off;
    size_t rd_want;        /* bytes asked for (aligned up for a bounce read) */
    size_t rd_need;        /* bytes that must arrive, <= rd_want */
    size_t rd_got;
    bool bounced;          /* dst is the bounce buffer */
    uint32_t n_reads, n_short;   /* this piece's system calls, for the stats */
    uint32_t armed;        /* io_uring: bumped (release) before each SQE, read
                            * (acquire) at its CQE, so the hand-over through the
                            * kernel is visible to thread sanitizers too */
    uint8_t *bounce;       /* aligned view into bounce_raw */
    void *bounce_raw;
    struct io__slot *next_free;
} io__slot;

/* A backend: started once by io_engine_create, stopped by destroy after all
 * reads ended. kick_locked runs with e->mu held whenever pieces may have
 * become dispatchable (a submit, a slot given back), on any thread; flush
 * (may be NULL) runs right after the caller released e->mu, to issue what
 * kick_locked prepared (or wake the thread that will) without holding the
 * engine lock through a system call. */
typedef struct io__backend {
    const char *name;
    int (*start)(io_engine *e, pa_err *err);
    void (*stop)(io_engine *e);
    void (*kick_locked)(io_engine *e);
    void (*slot_done_locked)(io_engine *e, io__slot *s);
    void (*flush)(io_engine *e);
} io__backend;

extern const io__backend io__pread_backend;
extern const io__backend io__uring_backend;

struct io_file {
    io_engine *engine;
    char *path;
    int fd;
    bool direct;           /* O_DIRECT in use */
    bool asked_direct;     /* the registry key, with path */
    int refs;              /* under engine->files_mu */
    uint64_t size;
    char note[200];
    io_file *next;
};

struct io_engine {
    io_options opt;            /* resolved: no zeros; backend points at a literal */
    const io__backend *ops;
    void *bstate;              /* the backend's own state */
    char note[256];

    pthread_mutex_t mu;
    pthread_cond_t work;       /* pread threads: pieces available or stopping */
    pthread_cond_t idle;       /* in_flight and delivering reached 0 */
    io_request *head, *tail;   /* requests with pieces not yet dispatched */
    int in_flight;             /* pieces running (slots in use) */
    int delivering;            /* deliveries done outside a slot (cancel) */
    bool stopping;
    uint64_t busy_since;
    io_stats stats;

    pthread_mutex_t files_mu;
    io_file *files;            /* the registry: open files, each with refs > 0 */
};

/* Take the next piece into s if one is waiting and in_flight < depth.
 * Call with e->mu held. Counts it in flight. */
bool io__take_piece(io_engine *e, io__slot *s);

/* Set up s's read (bounce buffer for an unaligned direct piece). On failure
 * s->status holds the error (the message went to the request's err). Runs
 * with or without e->mu held. */
void io__slot_prepare(io_engine *e, io__slot *s);

/* Account the result of one read of s (bytes, or -errno). Returns true when
 * another read is needed (short read, EINTR, EAGAIN); false when the piece
 * ended (s->status says how). */
bool io__slot_advance(io_engine *e, io__slot *s, ssize_t res);

/* True while s still needs a read issued. */
static inline bool io__slot_wants_read(const io__slot *s)
{
    return s->status == PA_OK && s->rd_got < s->rd_need;
}

/* The piece in s ended: copy out of the bounce buffer, deliver the request if
 * this was its last piece, then give the slot back (ops->slot_done_locked).
 * Call without e->mu held. */
void io__slot_finish(io_engine *e, io__slot *s);

/* Free a slot's bounce buffer. */
void io__slot_release(io__slot *s);

/* Cancel the requests with this tag (every request when all) that have
 * pieces not yet dispatched; see io_cancel_tag. */
size_t io__cancel(io_engine *e, void *tag, bool all);

/* Close every file still registered (engine destroy). */
void io__files_close_all(io_engine *e);

/* Test hooks: when nonzero, the io_uring backend fails to start as if
 * io_uring_queue_init returned -io__test_uring_errno, and O_DIRECT opens fail
 * as if the filesystem refused them with EINVAL. Not thread-safe; tests only. */
extern int io__test_uring_errno;
extern bool io__test_direct_refused;

#endif /* PISTA_STORAGE_IO_INT_H */

/*
 * net.h - communication between the processes (ranks) of one Pista job: the
 * whole public surface of src/net.
 *
 * A world is every rank of the job. Under an MPI launcher (mpirun, srun)
 * and in a build with MPI, nt_world_open joins the job's MPI world;
 * otherwise the world is this process alone (rank 0 of 1), with the same
 * calls and results, so one code path serves both.
 *
 * Collectives are the only communication. Each is one exchange round among
 * all ranks: every rank sends each rank some bytes (maybe none) and receives
 * what each rank sent it. Sizes go first, in fixed headers that also carry a
 * status, then the data. One network thread per process issues every
 * round, in the order the calls were made on that rank; every rank must
 * make the same collective calls in the same order (DESIGN.md, rule 6: the
 * plan, identical on every rank, decides them). A call may start a round
 * and return at once (nt_*_start); its buffers belong to the round until
 * nt_wait.
 *
 * Failures are everyone's:
 * - A rank that hits an error while the others go on tells them with
 *   nt_fail: its round carries the error, and every rank's call of that
 *   round (whatever collective it made) returns it, as "rank R: message".
 *   The world stays usable for the next statement.
 * - A rank that dies or stops answering: each network thread sends a
 *   heartbeat to every peer (nt_options.heartbeat_ms) even while its
 *   process computes, and a round that waits for a peer not heard from in
 *   nt_options.timeout_ms fails with an error naming that rank. The world
 *   is then broken: every later call fails the same way, and nt_world_close
 *   leaves without the MPI shutdown handshake (the caller should end the
 *   process with an error status, which makes the launcher end the job).
 * A launcher that sees a rank die usually ends the job first (OpenMPI's
 * mpirun names the rank); the heartbeat covers a rank that stops (a hung
 * node, SIGSTOP) and launchers that do not.
 */
#ifndef PISTA_NET_H
#define PISTA_NET_H

#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"
#include "device/device.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nt_world nt_world;
typedef struct nt_req nt_req;

typedef struct nt_options {
    int heartbeat_ms;   /* 0: 500 (PISTA_NET_HEARTBEAT_MS overrides) */
    int timeout_ms;     /* 0: 10000 (PISTA_NET_TIMEOUT_MS overrides) */
} nt_options;

/* Whether this process was started by an MPI launcher (from its environment). */
bool nt_launched(void);
/* The number of ranks the launcher started, from its environment (0: not
 * known, or no launcher). */
int nt_launched_size(void);
/* This process's rank from the launcher's environment (-1: not known). */
int nt_launched_rank(void);
/* Join the job's world (MPI when launched by one and built with MPI; this
 * process alone otherwise). At most one world per process, and after it is
 * closed none again (MPI cannot be initialised twice). */
int nt_world_open(const nt_options *opt, nt_world **out, pa_err *err);
/* Leave: a closing round with every rank, then the MPI shutdown. Every rank
 * must call it; a broken world is left without the handshake. */
void nt_world_close(nt_world *w);

int nt_rank(const nt_world *w);
int nt_size(const nt_world *w);
/* "mpi" or "local". */
const char *nt_backend(const nt_world *w);
/* Whether a peer was lost (see above): nothing more can be exchanged. */
bool nt_broken(const nt_world *w);

/* A buffer of host memory. Received buffers come from the world's cache
 * (non-NULL even when empty) and belong to the caller, who gives them back
 * with nt_buf_release: reused, their pages are not faulted in again. */
typedef struct nt_buf {
    void *data;
    int64_t bytes;
} nt_buf;

/* All-to-all: send[p] goes to rank p; recv[p] is what rank p sent here.
 * Both arrays have nt_size entries. */
int nt_alltoallv_start(nt_world *w, const nt_buf *send, nt_buf *recv, nt_req **out, pa_err *err);
/* All-gather: every rank's bytes to every rank (recv[p] from rank p). */
int nt_allgather_start(nt_world *w, const void *data, int64_t bytes, nt_buf *recv, nt_req **out, pa_err *err);
/* Broadcast from root: root's buf is sent; elsewhere *buf is filled in. */
int nt_bcast_start(nt_world *w, int root, nt_buf *buf, nt_req **out, pa_err *err);
/* Gather to root: recv (nt_size entries, root only; NULL elsewhere) gets
 * every rank's bytes. */
int nt_gather_start(nt_world *w, int root, const void *data, int64_t bytes, nt_buf *recv, nt_req **out,
                    pa_err *err);
/* Wait for a started collective and free the request: PA_OK, or the
 * round's error (a rank's nt_fail, a lost peer, MPI's own), in which case
 * nothing was received (the receive buffers are left NULL). */
int nt_wait(nt_req *r, pa_err *err);
/* Whether it completed (nt_wait then returns at once). */
bool nt_test(nt_req *r);

/* The same, waited for. */
int nt_alltoallv(nt_world *w, const nt_buf *send, nt_buf *recv, pa_err *err);
int nt_allgather(nt_world *w, const void *data, int64_t bytes, nt_buf *recv, pa_err *err);
int nt_bcast(nt_world *w, int root, nt_buf *buf, pa_err *err);
int nt_gather(nt_world *w, int root, const void *data, int64_t bytes, nt_buf *recv, pa_err *err);
/* A round that carries this rank's error `why` to every rank: returns it
 * (as "rank R: message", with its code) here and in the others' call of
 * that round. */
int nt_fail(nt_world *w, const pa_err *why, pa_err *err);

/* For `pista bench net`: the backend library's own all-to-all (MPI_Alltoall)
 * of `bytes` to every other rank, with buffers allocated once, best of
 * `runs`: the slowest rank's seconds in *secs, the same on every rank.
 * PA_EUNSUPPORTED on the local world. A collective (run in call order). */
int nt_bench_raw_alltoall(nt_world *w, int64_t bytes, int runs, double *secs, pa_err *err);

/* ------------------------------------------------------- GPUs (NCCL)
 *
 * Device memory moved between the ranks' GPUs by NCCL, without staging it
 * through the host. NCCL is loaded at run time (libnccl.so.2: the CUDA
 * toolkit's or Debian's libnccl2); the build needs only the CUDA backend.
 * Every rank calls nt_gpu_open with its CUDA device (one GPU per rank:
 * NCCL runs no two ranks on one GPU): a collective, which agrees first, so
 * a rank that cannot (no CUDA device, no NCCL) fails the call on every rank
 * with its error as "rank R: message" instead of leaving the others waiting
 * in NCCL's set-up; then rank 0's NCCL id goes to every rank (a broadcast
 * round) and the communicator is made. */
typedef struct nt_gpu nt_gpu;
int nt_gpu_open(nt_world *w, dv_device *dev, nt_gpu **out, pa_err *err);
/* All-to-all of device memory, enqueued on stream s (of the device given
 * to nt_gpu_open) without a host sync: send[p] (send_bytes[p] bytes) to
 * rank p, recv[p] (recv_bytes[p] bytes, which the caller learned first,
 * from a host round of the sizes) from rank p. Every rank calls it in the
 * same order. An error here is this rank's (NCCL's launch); a lost peer
 * shows in a later host round. */
int nt_gpu_alltoallv(nt_gpu *g, dv_stream *s, const void *const *send, const int64_t *send_bytes, void *const *recv,
                     const int64_t *recv_bytes, pa_err *err);
/* "NCCL 2.28.3" or the like. */
const char *nt_gpu_describe(const nt_gpu *g);
/* Free the communicator (after the work enqueued with it finished). */
void nt_gpu_close(nt_gpu *g);

/* Give back a received buffer (NULL: nothing). Any thread, any time before
 * nt_world_close. */
void nt_buf_release(nt_world *w, void *data);

/* What this process exchanged since the world opened. */
typedef struct nt_stats {
    int64_t rounds;
    int64_t bytes_sent;       /* to other ranks (not to itself) */
    int64_t bytes_received;   /* from other ranks */
} nt_stats;
void nt_stats_get(const nt_world *w, nt_stats *out);

#ifdef __cplusplus
}
#endif
#endif /* PISTA_NET_H */

/*
 * shell_line.c - the shell's terminal side: Ctrl-C (see the signal notes
 * in shell.h), the watcher thread that cancels and draws progress while a
 * statement runs, and line input with editing and ~/.pista_history
 * (libedit) or plain reads.
 */
#define _GNU_SOURCE
#include "cli/shell.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#ifdef PISTA_HAVE_LIBEDIT
#include <histedit.h>
#endif

/* ---------------------------------------------------------------- signals */

static volatile sig_atomic_t prompt_interrupted;

static void on_sigint_at_prompt(int sig) { prompt_interrupted = 1; }

static void sigint_set(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
}

/* Let the main thread take SIGINT (the prompt, or a script between
 * statements) or not (a statement runs: the watcher takes it). */
static void sigint_unblock(bool on)
{
    sigset_t set;
    sigint_set(&set);
    pthread_sigmask(on ? SIG_UNBLOCK : SIG_BLOCK, &set, NULL);
}

int shell_signals_init(shell *sh)
{
    sigset_t set;
    sigint_set(&set);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    sh->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    /* Set even when SIGINT came in ignored (a background job of a script):
     * an ignored signal would never reach the signalfd, and Ctrl-C must
     * cancel. Interactive: no SA_RESTART, so the read at the prompt
     * returns EINTR. Scripts: the default action between statements. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = sh->interactive ? on_sigint_at_prompt : SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    return sh->sigfd >= 0 ? 0 : -1;
}

void shell_signals_ready(shell *sh)
{
    if (!sh->interactive)
        sigint_unblock(true);
}

void shell_signals_close(shell *sh)
{
    if (sh->sigfd >= 0)
        close(sh->sigfd);
    sh->sigfd = -1;
}

/* ---------------------------------------------------------------- watcher */

typedef struct watcher {
    shell *sh;
    int stop[2];              /* pipe: main writes a byte when the statement is done */
    uint64_t t0;
} watcher;

/* 1234567 -> "1,234,567". */
static void group_digits(int64_t v, char *buf, size_t cap)
{
    char raw[32];
    int n = snprintf(raw, sizeof raw, "%lld", (long long)v), o = 0;
    for (int i = 0; i < n && o + 2 < (int)cap; i++) {
        if (i && raw[i - 1] != '-' && (n - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = raw[i];
    }
    buf[o] = '\0';
}

static void draw_progress(watcher *w)
{
    int64_t done = 0, total = 0;
    sql_progress(w->sh->s, &done, &total);
    char line[160], a[32], b[32];
    double secs = (double)(pa_now_ns() - w->t0) * 1e-9;
    int n;
    if (total > 0) {
        group_digits(done, a, sizeof a);
        group_digits(total, b, sizeof b);
        n = snprintf(line, sizeof line, "\r%.1f s  %s of %s rows scanned (%d%%)\x1b[K", secs, a, b,
                     (int)(done >= total ? 100 : 100 * done / total));
    } else {
        n = snprintf(line, sizeof line, "\r%.1f s\x1b[K", secs);
    }
    ssize_t unused = write(STDERR_FILENO, line, (size_t)n);
    (void)unused;
}

/* Progress appears after 0.5 s and is redrawn 4 times a second. */
#define PROGRESS_DELAY_MS 500
#define PROGRESS_EVERY_MS 250

static void *watch(void *arg)
{
    watcher *w = arg;
    int interrupts = 0;
    bool drawn = false;
    for (;;) {
        struct pollfd pf[2] = {{.fd = w->stop[0], .events = POLLIN}, {.fd = w->sh->sigfd, .events = POLLIN}};
        int timeout = -1;
        if (w->sh->progress)
            timeout = drawn ? PROGRESS_EVERY_MS : PROGRESS_DELAY_MS;
        int k = poll(pf, w->sh->sigfd >= 0 ? 2 : 1, timeout);
        if (k < 0 && errno != EINTR)
            break;
        if (k > 0 && (pf[0].revents & POLLIN))
            break;
        if (k > 0 && (pf[1].revents & POLLIN)) {
            struct signalfd_siginfo si;
            while (read(w->sh->sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
                sql_session_cancel(w->sh->s);
                if (++interrupts >= 3) {   /* the statement does not stop: give up */
                    static const char msg[] = "\npista: interrupted\n";
                    ssize_t unused = write(STDERR_FILENO, msg, sizeof msg - 1);
                    (void)unused;
                    _exit(130);
                }
            }
        }
        if (w->sh->progress && pa_now_ns() - w->t0 >= PROGRESS_DELAY_MS * 1000000ull) {
            draw_progress(w);
            drawn = true;
        }
    }
    if (drawn) {   /* erase the progress line */
        ssize_t unused = write(STDERR_FILENO, "\r\x1b[K", 4);
        (void)unused;
    }
    return NULL;
}

int shell_execute(shell *sh, const char *text, sql_result **out, pa_err *err)
{
    *out = NULL;
    if (sh->world && nt_size(sh->world) > 1) {   /* rank 0: the workers run it too */
        nt_buf b = {(void *)text, (int64_t)strlen(text) + 1};
        int rc = nt_bcast(sh->world, 0, &b, err);
        if (rc != PA_OK)
            return rc;
    }
    watcher w = {.sh = sh, .t0 = pa_now_ns()};
    pthread_t th;
    bool started = false;
    sigint_unblock(false);
    if (pipe2(w.stop, O_CLOEXEC) == 0) {
        started = pthread_create(&th, NULL, watch, &w) == 0;
        if (!started) {
            close(w.stop[0]);
            close(w.stop[1]);
        }
    }
    int rc = sql_execute(sh->s, text, out, err);
    if (started) {
        if (write(w.stop[1], "x", 1) < 0)
            pthread_cancel(th);
        pthread_join(th, NULL);
        close(w.stop[0]);
        close(w.stop[1]);
    }
    if (!sh->interactive) {
        /* Scripts: Ctrl-C between statements ends the process as usual. */
        sigint_unblock(true);
    }
    return rc;
}

/* ------------------------------------------------------------------ input */

struct shell_input {
    shell *sh;
    FILE *in;
    bool interactive;
    char *line;               /* getline's buffer (libc-owned) */
    size_t cap;
    bool continuation;
    char history_path[1024];
#ifdef PISTA_HAVE_LIBEDIT
    EditLine *el;
    History *hist;
#endif
};

#ifdef PISTA_HAVE_LIBEDIT
static char *prompt_of(EditLine *el)
{
    shell_input *in = NULL;
    el_get(el, EL_CLIENTDATA, &in);
    return in && in->continuation ? "   ...> " : "pista> ";
}
#endif

shell_input *shell_input_open(shell *sh, FILE *in, bool interactive)
{
    shell_input *r = pa_calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->sh = sh;
    r->in = in;
    r->interactive = interactive;
    const char *home = getenv("HOME");
    if (interactive && home && *home)
        snprintf(r->history_path, sizeof r->history_path, "%s/.pista_history", home);
#ifdef PISTA_HAVE_LIBEDIT
    if (interactive) {
        /* Prompts go to stdout, or stderr when stdout is redirected. */
        FILE *o = isatty(STDOUT_FILENO) ? stdout : stderr;
        r->el = el_init("pista", in, o, stderr);
        r->hist = history_init();
        if (r->el && r->hist) {
            HistEvent ev;
            history(r->hist, &ev, H_SETSIZE, 2000);
            history(r->hist, &ev, H_SETUNIQUE, 1);
            if (r->history_path[0])
                history(r->hist, &ev, H_LOAD, r->history_path);
            el_set(r->el, EL_CLIENTDATA, r);
            el_set(r->el, EL_PROMPT, prompt_of);
            el_set(r->el, EL_EDITOR, "emacs");
            el_set(r->el, EL_HIST, history, r->hist);
            el_source(r->el, NULL);   /* the user's ~/.editrc, if any */
        } else {
            if (r->el)
                el_end(r->el);
            if (r->hist)
                history_end(r->hist);
            r->el = NULL;
            r->hist = NULL;
        }
    }
#endif
    return r;
}

void shell_input_close(shell_input *in)
{
    if (!in)
        return;
#ifdef PISTA_HAVE_LIBEDIT
    if (in->el)
        el_end(in->el);
    if (in->hist)
        history_end(in->hist);
#endif
    free(in->line);
    pa_free(in);
}

void shell_input_remember(shell_input *in, const char *entry)
{
#ifdef PISTA_HAVE_LIBEDIT
    if (in->hist && entry[0]) {
        HistEvent ev;
        history(in->hist, &ev, H_ENTER, entry);
        if (in->history_path[0])
            history(in->hist, &ev, H_SAVE, in->history_path);
    }
#else
    (void)in;
    (void)entry;
#endif
}

/* Strip the trailing "\n" (and "\r\n"). */
static void chomp(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = '\0';
}

int shell_input_read(shell_input *in, bool continuation, const char **line)
{
    in->continuation = continuation;
    if (!in->interactive) {
        if (getline(&in->line, &in->cap, in->in) < 0)
            return 0;
        chomp(in->line);
        *line = in->line;
        return 1;
    }
    int rc;
    prompt_interrupted = 0;
    sigint_unblock(true);
    if (prompt_interrupted) {   /* a Ctrl-C that came while a result printed */
        rc = -1;
        goto out;
    }
#ifdef PISTA_HAVE_LIBEDIT
    if (in->el) {
        int n = 0;
        const char *s = el_gets(in->el, &n);
        if (!s) {
            rc = n < 0 && (errno == EINTR || prompt_interrupted) ? -1 : 0;
            if (rc < 0)
                el_reset(in->el);
            goto out;
        }
        free(in->line);
        in->line = strdup(s);
        rc = in->line ? 1 : 0;
        if (rc)
            chomp(in->line);
        goto out;
    }
#endif
    FILE *o = isatty(STDOUT_FILENO) ? stdout : stderr;
    fputs(continuation ? "   ...> " : "pista> ", o);
    fflush(o);
    errno = 0;
    if (getline(&in->line, &in->cap, in->in) < 0) {
        rc = errno == EINTR || prompt_interrupted ? -1 : 0;
        clearerr(in->in);
        goto out;
    }
    chomp(in->line);
    rc = 1;
out:
    sigint_unblock(false);
    if (rc < 0)
        fputc('\n', stdout);
    *line = in->line;
    return rc;
}

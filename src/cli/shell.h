/*
 * shell.h - internals of the SQL shell (`pista` with no command): shared by
 * cmd_shell.c (options, input loop), shell_exec.c (statements, dot
 * commands, error display) and shell_line.c (line input, history, Ctrl-C,
 * the progress line).
 *
 * Signals. SIGINT is blocked in every thread from the shell's start, so
 * the threads the device and the engine create never see it. While a
 * statement runs, a watcher thread reads SIGINT from a signalfd and calls
 * sql_session_cancel (a third Ctrl-C in one statement ends the process);
 * it also draws the progress line. Outside statements the main thread
 * takes SIGINT itself: at the interactive prompt it interrupts the read
 * and clears the line; in scripts it has its default effect (the process
 * ends).
 */
#ifndef PISTA_CLI_SHELL_H
#define PISTA_CLI_SHELL_H

#include "cli/cli.h"
#include "sql/sql.h"

typedef struct shell {
    sql_session *s;
    dv_device *dev;
    cli_print_mode mode;
    char sep;                 /* between CSV or answers fields; 0: the mode's (',' or '|') */
    bool timer;               /* .timer on: "Run Time: ..." after each statement */
    double disk_gbps, net_gbps;   /* --tmin: the ceilings Tmin is computed from (0: not given) */
    bool interactive;         /* a terminal: prompts, errors do not stop the shell */
    bool progress;            /* stderr is a terminal: draw the progress line */
    int threads;
    ex_mode exmode;
    int sigfd;                /* signalfd for SIGINT, -1 if none */
    FILE *out;                /* results (stdout, or the file of .output) */
    int64_t max_rows;         /* .maxrows: rows shown in table mode; -1: 40 on a terminal, else all */
    int max_width;            /* .maxwidth: columns of a table; -1: the terminal's, else no limit */
    nt_world *world;          /* under a launcher with several ranks; else NULL */
} shell;

/* What running some text or a dot command came to. */
enum { SHELL_OK = 0, SHELL_ERROR = 1, SHELL_QUIT = 2 };

/* shell_exec.c: run every statement of text in turn, printing each result;
 * stops at the first error (printed with its position). */
int shell_run_text(shell *sh, const char *text);
/* A line starting with '.'. */
int shell_dot(shell *sh, const char *line);

/* shell_line.c: signal set-up. _init first, before any thread starts
 * (-1 when no signalfd could be made: Ctrl-C will not cancel); _ready once
 * the device and session exist. */
int shell_signals_init(shell *sh);
void shell_signals_ready(shell *sh);
void shell_signals_close(shell *sh);

/* Runs sql_execute with the watcher thread (cancel on Ctrl-C, progress). */
int shell_execute(shell *sh, const char *text, sql_result **out, pa_err *err);

/* Line input: from a terminal with editing and history (libedit when
 * built with it), or plain lines from any FILE. */
typedef struct shell_input shell_input;
shell_input *shell_input_open(shell *sh, FILE *in, bool interactive);
void shell_input_close(shell_input *in);
/* The next line without its '\n' into *line (owned by the reader, valid
 * until the next call). Returns 1 for a line, 0 at end of input, -1 when
 * Ctrl-C interrupted the read (the partial line is dropped). */
int shell_input_read(shell_input *in, bool continuation, const char **line);
/* Remember an entry (a whole statement or a dot command) in the history. */
void shell_input_remember(shell_input *in, const char *entry);

#endif

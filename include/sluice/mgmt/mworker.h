/* Master-worker mode: the master process (src/mgmt/master.c), the worker's
 * side of the control channel (src/mgmt/mworker.c) and the master CLI's
 * pure parsers (src/mgmt/mcli_parse.c). doc/architecture.md, "Master and
 * reload", tells how the pieces fit. */
#ifndef SLUICE_MGMT_MWORKER_H
#define SLUICE_MGMT_MWORKER_H

#include <stddef.h>
#include <stdint.h>

/* The environment variable that tells a worker which descriptor is its end
 * of the control channel (set by the master before exec). */
#define MWORKER_ENV_FD "SLUICE_MWORKER_FD"

/* Control messages (SOCK_SEQPACKET, one per datagram, text then an
 * optional descriptor):
 *   master -> worker  "L <key>" + fd   a listening socket to reuse
 *                     "E"              end of the listening sockets
 *                     "C" + fd         a master CLI connection to serve
 *   worker -> master  "L <key>" + fd   a listening socket it holds
 *                     "READY"          it is about to accept */
#define MWORKER_MSG_MAX 600

/* ---- master CLI parsers (pure: unit tests and fuzz/fuzz_mcli.c) ---- */

/* -S <address>[,<option>,<value>]... */
struct mcli_bind {
	char addr[256];     /* the address, as addr_parse() reads it */
	int mode;           /* mode (octal) of a unix socket, -1: unset */
	long uid, gid;      /* -1: unset */
	char user[64];      /* user / group names, "" if unset */
	char group[64];
	int level;          /* CLI_LEVEL_*: admin unless `level` says */
};

/* Parses the argument of -S. Returns 0, or -1 with a message in <err>. */
int mcli_bind_parse(const char *arg, struct mcli_bind *b, char *err, size_t errlen);

/* Splits <line> in place at unescaped ';' into at most <max> commands,
 * each trimmed of blanks (empty ones are kept, so that "@1;" means
 * something). Returns the number of commands. */
int mcli_split_line(char *line, char **cmds, int max);

enum mcli_target {
	MCLI_T_NONE = 0,    /* no prefix: the session's current target */
	MCLI_T_MASTER,      /* "@" or "@master" */
	MCLI_T_RELATIVE,    /* "@<n>": n-th current worker (1 is the first) */
	MCLI_T_PID,         /* "@!<pid>" */
};

struct mcli_cmd {
	enum mcli_target target;
	long num;           /* relative number or pid */
	char *prefix;       /* the prefix word as written (for messages) */
	char *cmd;          /* what follows the prefix, trimmed; may be "" */
};

/* Splits one command (from mcli_split_line()) into its optional @prefix
 * and the rest, in place. Returns 0, or -1 if the prefix is malformed
 * (c->prefix then names it). */
int mcli_parse_cmd(char *s, struct mcli_cmd *c);

/* The text of a _getsocks answer (-x): one key per line, empty lines
 * skipped (the CLI ends its answers with one). Splits <text> in place into
 * at most <max> keys. Returns their number. */
int mcli_socks_split(char *text, char **keys, int max);

/* "0d00h00m01s" */
void mcli_fmt_uptime(char *buf, size_t len, uint64_t secs);

/* One `show proc` line as HAProxy 2.6 prints it (columns of 15, one blank
 * between), with a newline. <first> is "#<PID>" or a pid as text.
 * Returns the length written (snprintf's). */
int mcli_fmt_proc_line(char *buf, size_t len, const char *first, const char *type,
                       const char *reloads, const char *uptime, const char *version);

/* ---- programs (src/mgmt/program.c) ---- */

/* program <name>: an external command the master starts and supervises. */
struct program {
	struct program *next;
	char *name;
	char **argv;            /* `command`, NULL-terminated; NULL if missing */
	int start_on_reload;    /* `option start-on-reload` (the default) */
	char *file;
	int line;
};

extern struct program *programs;   /* in the order of the configuration */

/* ---- master (src/mgmt/master.c) ---- */

struct master_opts {
	const char *mcli[16];   /* -S arguments */
	int nmcli;
	const char *pidfile;
	int daemon;
};

/* Becomes the master: binds the master CLI sockets, forks and supervises
 * workers (each one an exec of this binary with <argv>), reloads on
 * SIGUSR2 or `reload`. Never returns. */
void master_run(char **argv, const struct master_opts *o) __attribute__((noreturn));

/* ---- worker (src/mgmt/mworker.c) ---- */

/* Reads MWORKER_ENV_FD: returns 1 (and sets global.mworker_child) if this
 * process is a worker, 0 otherwise. */
int  mworker_child_detect(void);
/* Receives the listening sockets the master holds. Returns 0 or -1. */
int  mworker_child_recv_listeners(void);
/* The inherited socket bound to <key> (listener_key()), taken by the
 * caller, or -1. */
int  mworker_take_listener(const char *key);
/* Closes the inherited sockets that no listener took, sends the master
 * the sockets this worker listens on, then READY. Returns 0 or -1. */
int  mworker_child_ready(void);

/* ---- stand-alone handover: -x and `expose-fd listeners` ---- */

/* The old process's side of _getsocks: sends every listening socket on
 * <fd> (the CLI connection), in batches of text lines "<key>\n" with the
 * descriptors attached in the same order. Returns 0 or -1. */
int  mworker_send_sockets(int fd);
/* The new process's side (-x <path>): connects to the old process's stats
 * socket, asks for its sockets and keeps them for listener_create(), as a
 * worker keeps the master's. Returns 0, or -1 with a message in <err>. */
int  mworker_fetch_sockets(const char *path, char *err, size_t errlen);
/* Closes what no listener took (after binding). */
void mworker_close_untaken(void);

#endif

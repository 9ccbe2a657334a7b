/* The stats socket command-line interface. */
#ifndef SLUICE_MGMT_CLI_H
#define SLUICE_MGMT_CLI_H

#include <stddef.h>
#include <sys/socket.h>
#include <sluice/core/list.h>

struct listener;

#define CLI_LEVEL_USER     0
#define CLI_LEVEL_OPERATOR 1
#define CLI_LEVEL_ADMIN    2
#define CLI_LEVEL_EXPERT   3   /* admin session after `expert-mode on` */

/* Handler return codes that change the session, besides 0 and -1. */
#define CLI_RET_PROMPT      2
#define CLI_RET_QUIT        3
#define CLI_RET_EXPERT_ON   4
#define CLI_RET_EXPERT_OFF  5

/* Severity of a command's answer, for `set severity-output`: an answer of a
 * handler that returned -1 is an error (3); a handler that answers with a
 * message rather than data calls cli_info() (6). Other answers are data and
 * never get a prefix, as in HAProxy. */
#define CLI_SEV_NONE  0
#define CLI_SEV_ERR   3
#define CLI_SEV_INFO  6

extern struct list cli_binds;   /* struct bind_conf of `stats socket` lines */

int cli_accept(struct listener *l, int fd, const struct sockaddr_storage *from);

/* "none", "number", "string": the CLI_SEVFMT_* of `severity-output`, -1. */
int cli_sevfmt_parse(const char *w);

/* Output of a command: a growable text buffer. */
struct cli_out {
	char *buf;
	size_t len;
	size_t cap;
	int failed;   /* allocation failed: output truncated */
	int msg_sev;  /* CLI_SEV_INFO after cli_info(), reset per command */
};

void cli_printf(struct cli_out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The same, marking the answer as an informational message (HAProxy's
 * cli_msg()): it gets the "[6]: " / "[info]: " prefix under
 * `set severity-output`. */
void cli_info(struct cli_out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A CLI command: words matched against args[0..], a minimum level, and a
 * handler that writes into <out>. Returns 0, or -1 after printing an
 * error message into <out>.
 *
 * A command that takes a payload (HAProxy's "<command> <<" followed by
 * lines up to an empty one) sets fn_payload instead of fn: it gets the
 * payload's lines joined by '\n' without the last one, or NULL when the
 * command came without one. Other commands ignore a payload, as HAProxy's
 * do. */
struct cli_kw {
	const char *words[4];
	int level;
	int (*fn)(char **args, int nargs, struct cli_out *out, int level);
	const char *usage;    /* help text, NULL to hide */
	int (*fn_payload)(char **args, int nargs, const char *payload, struct cli_out *out,
	                  int level);
	int flags;            /* CLI_KW_* */
};

/* The command works only in experimental mode (`experimental-mode on`):
 * hidden from help otherwise, and refused with HAProxy's message. */
#define CLI_KW_EXPERIMENTAL 0x01

struct cli_kw_table {
	struct cli_kw_table *next;
	const struct cli_kw *kws;
};

void cli_register(struct cli_kw_table *t);

#define CLI_REGISTER(table) \
	static struct cli_kw_table table##_reg = { NULL, table }; \
	__attribute__((constructor)) static void table##_register(void) \
	{ cli_register(&table##_reg); }

#endif

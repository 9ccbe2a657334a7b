/* The stats socket CLI: `stats socket` keyword, sessions, command dispatch.
 *
 * A CLI session is a task with one connection, owned by the thread that
 * accepted it. Input is read into a buffer; each complete line is split into
 * commands at unescaped ';' and each command into words; output is gathered
 * in a growable text buffer and written out. Without `prompt`, the session
 * ends after the first line has been answered (HAProxy's one-shot mode);
 * with it, a "> " prompt follows each answer until `quit` or EOF.
 *
 * Payloads (HAProxy's syntax): a line that ends with " <<" is held back,
 * and the lines that follow, up to an empty one, are its payload; the line
 * then runs, its last command getting the payload (a "+ " prompt follows
 * each line meanwhile in prompt mode). The command line and its payload
 * together are bounded by tune.bufsize, like a line; a session that ends
 * before the empty line runs nothing.
 *
 * Commands read shared state through atomics, or under the locks named in
 * each module; none of them holds a lock for work that grows with traffic
 * beyond a bounded output (see `show sess`).
 *
 * A session has its own settings, changed by the commands of this file
 * only (owner thread, through cli_cur while one runs): its level (lowered
 * by `operator`/`user`, raised to expert by `expert-mode`), the
 * experimental mode, its timeout (`set timeout cli`) and the severity
 * prefix of its answers (`set severity-output`: an error answer, -1 from
 * its handler, or one marked by cli_info(), gets "[3]: " / "[err]: ",
 * "[6]: " / "[info]: " in front).
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stdint.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/clock.h>
#include <sluice/core/sched.h>
#include <sluice/mgmt/cli.h>
#include <sluice/mgmt/mworker.h>
#include <sluice/net/addr.h>
#include <sluice/net/conn.h>
#include <sluice/net/listener.h>
#include <sluice/proxy/proxy.h>

#define CLI_MAX_ARGS  64
/* Commands are taken while less output than this waits to be sent */
#define CLI_OUT_MAX   16384
/* How long a session that ends with input left waits for the client's FIN */
#define CLI_LINGER_MS 1000

#define CLI_SEVFMT_NONE   0
#define CLI_SEVFMT_NUMBER 1
#define CLI_SEVFMT_STRING 2

struct list cli_binds = LIST_HEAD_INIT(cli_binds);
static struct cli_kw_table *cli_tables;

struct cli_sess {
	struct task *task;
	struct listener *lst;
	struct conn c;
	struct buffer in;
	struct cli_out out;
	size_t out_sent;
	int level;             /* CLI_LEVEL_*: lowered by `operator`/`user` */
	int experimental;      /* `experimental-mode on` */
	int severity_fmt;      /* `set severity-output`: CLI_SEVFMT_* */
	int timeout_ms;        /* `set timeout cli`, else stats timeout */
	int prompt;
	int closing;           /* close once output is sent */
	int lingering;         /* output sent, FIN sent: discarding input */
	uint64_t exp;
	char *pl_cmd;          /* line waiting for its payload, NULL if none */
	struct cli_out pl;     /* the payload gathered so far */
};

/* The session whose command runs on this thread (commands of this file
 * change the session itself: level, modes, timeout, severity output). */
static __thread struct cli_sess *cli_cur;

void cli_register(struct cli_kw_table *t)
{
	t->next = cli_tables;
	cli_tables = t;
}

static void cli_vprintf(struct cli_out *o, const char *fmt, va_list ap0)
{
	va_list ap;
	int n;

	if (o->failed)
		return;
	for (;;) {
		size_t room = o->cap - o->len;

		va_copy(ap, ap0);
		n = vsnprintf(o->buf ? o->buf + o->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			o->failed = 1;
			return;
		}
		if ((size_t)n < room) {
			o->len += (size_t)n;
			return;
		}
		size_t ncap = o->cap ? o->cap * 2 : 4096;
		while (ncap - o->len <= (size_t)n)
			ncap *= 2;
		char *nb = realloc(o->buf, ncap);
		if (!nb) {
			o->failed = 1;
			return;
		}
		o->buf = nb;
		o->cap = ncap;
	}
}

void cli_printf(struct cli_out *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_vprintf(o, fmt, ap);
	va_end(ap);
}

void cli_info(struct cli_out *o, const char *fmt, ...)
{
	va_list ap;

	o->msg_sev = CLI_SEV_INFO;
	va_start(ap, fmt);
	cli_vprintf(o, fmt, ap);
	va_end(ap);
}

/* Inserts <text> at offset <pos> of <o> (a prefix of one answer). */
static void cli_out_insert(struct cli_out *o, size_t pos, const char *text)
{
	size_t n = strlen(text), tail = o->len - pos;

	cli_printf(o, "%s", text);   /* makes the room */
	if (o->failed)
		return;
	memmove(o->buf + pos + n, o->buf + pos, tail);
	memcpy(o->buf + pos, text, n);
}

/* ---- commands of this module ---- */

static int cli_help(char **args, int nargs, struct cli_out *out, int level);
static int cli_prompt(char **args, int nargs, struct cli_out *out, int level);
static int cli_quit(char **args, int nargs, struct cli_out *out, int level);
static int cli_expert_mode(char **args, int nargs, struct cli_out *out, int level);
static int cli_experimental_mode(char **args, int nargs, struct cli_out *out, int level);
static int cli_lower_level(char **args, int nargs, struct cli_out *out, int level);
static int cli_show_cli_level(char **args, int nargs, struct cli_out *out, int level);
static int cli_show_cli_sockets(char **args, int nargs, struct cli_out *out, int level);
static int cli_set_timeout(char **args, int nargs, struct cli_out *out, int level);
static int cli_set_severity_output(char **args, int nargs, struct cli_out *out, int level);
static int cli_getsocks(char **args, int nargs, struct cli_out *out, int level);

static const struct cli_kw cli_base_kws[] = {
	{ { "help" }, CLI_LEVEL_USER, cli_help, "help [<command>]                        : list matching or all commands" },
	{ { "prompt" }, CLI_LEVEL_USER, cli_prompt, "prompt                                  : toggle interactive mode with prompt" },
	{ { "quit" }, CLI_LEVEL_USER, cli_quit, "quit                                    : disconnect" },
	{ { "expert-mode" }, CLI_LEVEL_ADMIN, cli_expert_mode, "expert-mode [on|off]                    : allow the expert commands (debug dev ...)" },
	{ { "experimental-mode" }, CLI_LEVEL_ADMIN, cli_experimental_mode, "experimental-mode [on|off]              : allow the experimental commands (set var)" },
	{ { "operator" }, CLI_LEVEL_USER, cli_lower_level, "operator                                : lower the level of the current CLI session to operator" },
	{ { "user" }, CLI_LEVEL_USER, cli_lower_level, "user                                    : lower the level of the current CLI session to user" },
	{ { "show", "cli", "level" }, CLI_LEVEL_USER, cli_show_cli_level, "show cli level                          : display the level of the current CLI session" },
	{ { "show", "cli", "sockets" }, CLI_LEVEL_USER, cli_show_cli_sockets, "show cli sockets                        : dump list of cli sockets" },
	{ { "set", "timeout" }, CLI_LEVEL_USER, cli_set_timeout, "set timeout [cli] <delay>               : change a timeout setting" },
	{ { "_getsocks" }, CLI_LEVEL_ADMIN, cli_getsocks, NULL },
	{ { "set", "severity-output" }, CLI_LEVEL_USER, cli_set_severity_output, "set severity-output [none|number|string]: set presence of severity level in feedback information" },
	{ { NULL } }
};
CLI_REGISTER(cli_base_kws)

static const char *const cli_level_names[] = { "user", "operator", "admin", "admin" };

static int cli_help(char **args, int nargs, struct cli_out *out, int level)
{
	cli_printf(out, "The following commands are valid at this level:\n");
	for (struct cli_kw_table *t = cli_tables; t; t = t->next)
		for (const struct cli_kw *k = t->kws; k->words[0]; k++)
			if (k->usage && k->level <= level &&
			    (!(k->flags & CLI_KW_EXPERIMENTAL) || (cli_cur && cli_cur->experimental)) &&
			    (nargs < 2 || strcmp(k->words[0], args[1]) == 0))
				cli_printf(out, "  %s\n", k->usage);
	return 0;
}

static int cli_prompt(char **args, int nargs, struct cli_out *out, int level)
{
	return CLI_RET_PROMPT;
}

static int cli_quit(char **args, int nargs, struct cli_out *out, int level)
{
	return CLI_RET_QUIT;
}

/* expert-mode and experimental-mode: without argument, they tell the
 * mode; any argument other than "on" turns it off, as in HAProxy 2.6. */
static int cli_expert_mode(char **args, int nargs, struct cli_out *out, int level)
{
	if (nargs < 2) {
		cli_info(out, "expert-mode is %s\n", level >= CLI_LEVEL_EXPERT ? "ON" : "OFF");
		return 0;
	}
	return strcmp(args[1], "on") == 0 ? CLI_RET_EXPERT_ON : CLI_RET_EXPERT_OFF;
}

static int cli_experimental_mode(char **args, int nargs, struct cli_out *out, int level)
{
	if (nargs < 2)
		cli_info(out, "experimental-mode is %s\n", cli_cur->experimental ? "ON" : "OFF");
	else
		cli_cur->experimental = strcmp(args[1], "on") == 0;
	return 0;
}

/* `operator` and `user`: the level only goes down; expert and
 * experimental modes end with it. */
static int cli_lower_level(char **args, int nargs, struct cli_out *out, int level)
{
	int to = strcmp(args[0], "operator") == 0 ? CLI_LEVEL_OPERATOR : CLI_LEVEL_USER;

	if (level < to) {
		cli_printf(out, "Permission denied\n");
		return -1;
	}
	cli_cur->level = to;
	cli_cur->experimental = 0;
	return 0;
}

static int cli_show_cli_level(char **args, int nargs, struct cli_out *out, int level)
{
	cli_info(out, "%s\n", cli_level_names[level]);
	return 0;
}

/* One line per stats socket: its address as HAProxy prints it
 * ("unix@<path>", "ipv4@<ip>:<port>", "ipv6@[<ip>]:<port>"; an fd@N socket
 * shows the address it is bound to), its level, and "all": the column of
 * processes, which HAProxy 2.6 fills so whatever threads a socket is
 * bound to. */
static int cli_show_cli_sockets(char **args, int nargs, struct cli_out *out, int level)
{
	struct list *pos, *nxt;

	cli_printf(out, "# socket lvl processes\n");
	list_for_each_safe(pos, nxt, &cli_binds) {
		struct bind_conf *bc = list_elem(pos, struct bind_conf, list);
		struct sockaddr_storage ss = bc->addr.ss;
		socklen_t sl = sizeof(ss);
		char host[INET6_ADDRSTRLEN + 8];

		if (bc->addr.kind == ADDR_FD &&
		    getsockname(bc->addr.fd, (struct sockaddr *)&ss, &sl) < 0)
			continue;
		if (ss.ss_family == AF_UNIX) {
			const struct sockaddr_un *un = (const struct sockaddr_un *)&ss;

			if (un->sun_path[0])
				cli_printf(out, "unix@%s", un->sun_path);
			else
				cli_printf(out, "abns@%s", un->sun_path + 1);
		} else if (ss.ss_family == AF_INET) {
			cli_printf(out, "ipv4@%s:%d", addr_host_str(&ss, host, sizeof(host)),
			           addr_port(&ss));
		} else if (ss.ss_family == AF_INET6) {
			cli_printf(out, "ipv6@[%s]:%d", addr_host_str(&ss, host, sizeof(host)),
			           addr_port(&ss));
		} else {
			continue;
		}
		cli_printf(out, " %s all\n", cli_level_names[bc->cli_level]);
	}
	return 0;
}

/* `set timeout cli <delay>`: <delay> in seconds unless it has a unit
 * (us, ms, s, m, h, d), as HAProxy reads it; 0 and overflows are invalid. */
static int cli_set_timeout(char **args, int nargs, struct cli_out *out, int level)
{
	static const struct { const char *unit; uint64_t us; } units[] = {
		{ "", 1000000 }, { "us", 1 }, { "ms", 1000 }, { "s", 1000000 },
		{ "m", 60000000ull }, { "h", 3600000000ull }, { "d", 86400000000ull },
	};
	uint64_t v = 0, ms;
	const char *p;
	size_t i;

	if (nargs < 3 || strcmp(args[2], "cli") != 0) {
		cli_printf(out, "'set timeout' only supports 'cli'.\n");
		return -1;
	}
	if (nargs < 4) {
		cli_printf(out, "Expects an integer value.\n");
		return -1;
	}
	for (p = args[3]; *p >= '0' && *p <= '9' && v < 1000000000000ull; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(p, units[i].unit) == 0)
			break;
	if (p == args[3] || i == sizeof(units) / sizeof(units[0]) || v >= 1000000000000ull) {
		cli_printf(out, "Invalid timeout value.\n");
		return -1;
	}
	ms = (v * units[i].us + 999) / 1000;
	if (!ms || ms > INT32_MAX) {
		cli_printf(out, "Invalid timeout value.\n");
		return -1;
	}
	cli_cur->timeout_ms = (int)ms;
	return 0;
}

int cli_sevfmt_parse(const char *w)
{
	static const char *const fmts[] = { "none", "number", "string" };

	for (int i = 0; i < 3; i++)
		if (strcmp(w, fmts[i]) == 0)
			return i;
	return -1;
}

static int cli_set_severity_output(char **args, int nargs, struct cli_out *out, int level)
{
	int f = nargs >= 3 ? cli_sevfmt_parse(args[2]) : -1;

	if (f >= 0) {
		cli_cur->severity_fmt = f;
		return 0;
	}
	cli_printf(out, "one of 'none', 'number', 'string' is a required argument\n");
	return -1;
}

/* The prefix of an answer of severity <sev> under the session's
 * `set severity-output`, as HAProxy writes it ("[3]: ", "[err]: "). */
/* _getsocks: a new process started with -x takes this one's listening
 * sockets (src/mgmt/mworker.c), on a stats socket with `expose-fd
 * listeners` only. The descriptors go on the connection itself, before
 * any text; the answer is nothing else. */
static int cli_getsocks(char **args, int nargs, struct cli_out *out, int level)
{
	if (!cli_cur->lst->bc->expose_fd) {
		cli_printf(out, "Permission denied: this socket does not expose its listeners "
		           "('expose-fd listeners').\n");
		return -1;
	}
	if (mworker_send_sockets(cli_cur->c.ph.fd) < 0) {
		cli_printf(out, "Cannot send the listening sockets.\n");
		return -1;
	}
	listeners_mark_exposed();
	return 0;
}

static void cli_prefix_severity(struct cli_sess *cs, size_t start, int sev)
{
	static const char *const names[] = { "emerg", "alert", "crit", "err", "warning",
	                                     "notice", "info", "debug" };
	char prefix[16];

	if (cs->severity_fmt == CLI_SEVFMT_NONE || sev == CLI_SEV_NONE || start >= cs->out.len)
		return;
	if (cs->severity_fmt == CLI_SEVFMT_NUMBER)
		snprintf(prefix, sizeof(prefix), "[%d]: ", sev);
	else
		snprintf(prefix, sizeof(prefix), "[%s]: ", names[sev]);
	cli_out_insert(&cs->out, start, prefix);
}

/* ---- dispatch ---- */

static const struct cli_kw *cli_find(char **args, int nargs, int *partial)
{
	const struct cli_kw *best = NULL;
	int best_words = 0;

	*partial = 0;
	for (struct cli_kw_table *t = cli_tables; t; t = t->next) {
		for (const struct cli_kw *k = t->kws; k->words[0]; k++) {
			int w = 0;

			while (w < 4 && k->words[w] && w < nargs && strcmp(k->words[w], args[w]) == 0)
				w++;
			if (w == 0)
				continue;
			if (w < 4 && k->words[w]) {
				*partial = 1;   /* first words match: suggest it */
				continue;
			}
			if (w > best_words) {
				best = k;
				best_words = w;
			}
		}
	}
	return best;
}

/* Splits <cmd> into words (spaces separate, backslash escapes the next
 * character). Returns the number of words. */
static int cli_split(char *cmd, char **args)
{
	int n = 0;
	char *r = cmd, *w = cmd;

	while (*r) {
		while (*r == ' ' || *r == '\t')
			r++;
		if (!*r || n == CLI_MAX_ARGS)
			break;
		args[n++] = w;
		while (*r && *r != ' ' && *r != '\t') {
			if (*r == '\\' && r[1])
				r++;
			*w++ = *r++;
		}
		if (*r)
			r++;
		*w++ = '\0';
	}
	args[n] = NULL;
	return n;
}

static int cli_run_one(struct cli_sess *cs, char *cmd, const char *payload)
{
	char *args[CLI_MAX_ARGS + 1];
	int nargs = cli_split(cmd, args), partial;
	const struct cli_kw *k;
	size_t start = cs->out.len;
	int ret;

	if (!nargs)
		return 0;
	k = cli_find(args, nargs, &partial);
	if (!k) {
		cli_printf(&cs->out, "Unknown command: '%s'. Type 'help' for the list of "
		           "commands.\n", args[0]);
		if (partial) {
			cli_printf(&cs->out, "Maybe one of these:\n");
			for (struct cli_kw_table *t = cli_tables; t; t = t->next)
				for (const struct cli_kw *kk = t->kws; kk->words[0]; kk++)
					if (kk->usage && strcmp(kk->words[0], args[0]) == 0 &&
					    (!(kk->flags & CLI_KW_EXPERIMENTAL) || cs->experimental))
						cli_printf(&cs->out, "  %s\n", kk->usage);
		}
		cli_prefix_severity(cs, start, CLI_SEV_INFO);
		return -1;
	}
	if (k->level > cs->level) {
		cli_printf(&cs->out, "Permission denied\n");
		cli_prefix_severity(cs, start, CLI_SEV_ERR);
		return -1;
	}
	if ((k->flags & CLI_KW_EXPERIMENTAL) && !cs->experimental) {
		cli_printf(&cs->out, "This command is restricted to experimental mode only.\n");
		cli_prefix_severity(cs, start, CLI_SEV_ERR);
		return -1;
	}
	cli_cur = cs;
	cs->out.msg_sev = CLI_SEV_NONE;
	ret = k->fn_payload ? k->fn_payload(args, nargs, payload, &cs->out, cs->level) :
	                      k->fn(args, nargs, &cs->out, cs->level);
	cli_cur = NULL;
	cli_prefix_severity(cs, start, ret == -1 ? CLI_SEV_ERR : cs->out.msg_sev);
	if (ret == CLI_RET_PROMPT) {
		cs->prompt = !cs->prompt;
		return 0;
	}
	if (ret == CLI_RET_QUIT) {
		cs->closing = 1;
		return 0;
	}
	if (ret == CLI_RET_EXPERT_ON) {
		cs->level = CLI_LEVEL_EXPERT;
		return 0;
	}
	if (ret == CLI_RET_EXPERT_OFF) {
		if (cs->level > CLI_LEVEL_ADMIN)
			cs->level = CLI_LEVEL_ADMIN;
		return 0;
	}
	return ret;
}

/* Runs the ';'-separated commands of one line; each answer ends with an
 * empty line, as HAProxy's CLI does. The last command gets <payload>. */
static void cli_run_line(struct cli_sess *cs, char *line, const char *payload)
{
	char *p = line, *start = line, *w = line;

	for (;;) {
		if (*p == '\\' && p[1] == ';') {
			*w++ = ';';
			p += 2;
			continue;
		}
		if (*p == '\\' && p[1]) {
			*w++ = *p++;
			*w++ = *p++;
			continue;
		}
		if (*p == ';' || !*p) {
			int end = !*p;

			*w = '\0';
			cli_run_one(cs, start, end ? payload : NULL);
			if (!cs->prompt || *start)
				cli_printf(&cs->out, "\n");
			if (end || cs->closing)
				break;
			start = w = ++p;
			continue;
		}
		*w++ = *p++;
	}
}

static void cli_free(struct cli_sess *cs)
{
	conn_close(&cs->c);
	buf_release(&cs->in);
	free(cs->out.buf);
	free(cs->pl_cmd);
	free(cs->pl.buf);
	listener_conn_closed(cs->lst);
	task_destroy(cs->task);
	free(cs);
}

static size_t cli_out_pending(const struct cli_sess *cs)
{
	return cs->out.len - cs->out_sent;
}

/* If <line> ends with the payload pattern " <<" (not glued to the last
 * word; "<<" alone is no pattern), cuts it off and returns 1. */
static int cli_cut_payload_pattern(char *line, size_t len)
{
	if (len < 3 || strcmp(line + len - 2, "<<") ||
	    (line[len - 3] != ' ' && line[len - 3] != '\t'))
		return 0;
	len -= 2;
	while (len && (line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	line[len] = '\0';
	return 1;
}

/* Takes one input line (without its LF or CR) in payload mode: an empty
 * line runs the held command with the payload, another one is added to
 * it. Returns 0, or -1 if the command and its payload grew past the
 * limit of a line (the session then closes, as for a long line). */
static int cli_payload_line(struct cli_sess *cs, char *line, size_t len)
{
	if (len) {
		if (strlen(cs->pl_cmd) + cs->pl.len + len + 1 >= (size_t)global.bufsize)
			return -1;
		cli_printf(&cs->pl, "%s\n", line);
		return cs->pl.failed ? -1 : 0;
	}
	if (cs->pl.len)
		cs->pl.buf[--cs->pl.len] = '\0';   /* no LF after the last line */
	/* an empty payload is empty, not the previous command's (the buffer
	 * keeps its last text once used) */
	cli_run_line(cs, cs->pl_cmd, cs->pl.len ? cs->pl.buf : "");
	free(cs->pl_cmd);
	cs->pl_cmd = NULL;
	cs->pl.len = 0;
	cs->pl.failed = 0;
	if (cs->pl.buf)
		cs->pl.buf[0] = '\0';
	return 0;
}

/* Processes the complete lines in the input, as long as less than
 * CLI_OUT_MAX of output waits to be sent. */
static void cli_handle_input(struct cli_sess *cs)
{
	while (cli_out_pending(cs) < CLI_OUT_MAX) {
		char *nl = memchr(buf_head(&cs->in), '\n', cs->in.data);
		size_t len;
		char *line;

		if (!nl) {
			if (!(cs->c.flags & CONN_F_RD_SHUT) || !cs->in.data)
				return;
			if (cs->pl_cmd) {
				cs->closing = 1;   /* ended inside a payload: run nothing */
				return;
			}
			nl = buf_head(&cs->in) + cs->in.data;   /* last line without LF */
		}
		len = (size_t)(nl - buf_head(&cs->in));
		line = malloc(len + 1);
		if (!line) {
			cs->closing = 1;
			return;
		}
		memcpy(line, buf_head(&cs->in), len);
		line[len] = '\0';
		if (len && line[len - 1] == '\r')
			line[len - 1] = '\0';
		buf_consume(&cs->in, len < cs->in.data ? len + 1 : len);
		len = strlen(line);
		if (cs->pl_cmd) {
			int rc = cli_payload_line(cs, line, len);

			free(line);
			if (rc < 0) {
				cs->closing = 1;
				return;
			}
			if (cs->pl_cmd) {
				if (cs->prompt)
					cli_printf(&cs->out, "+ ");
				continue;
			}
		} else if (cli_cut_payload_pattern(line, len)) {
			cs->pl_cmd = line;
			if (cs->prompt)
				cli_printf(&cs->out, "+ ");
			continue;
		} else {
			cli_run_line(cs, line, NULL);
			free(line);
		}
		if (cs->closing)
			return;
		if (cs->prompt) {
			cli_printf(&cs->out, "> ");
			continue;
		}
		/* one-shot mode: answer every line that came with the first
		 * one (as HAProxy does), then close */
		if (!memchr(buf_head(&cs->in), '\n', cs->in.data) &&
		    !((cs->c.flags & CONN_F_RD_SHUT) && cs->in.data)) {
			cs->closing = 1;
			return;
		}
	}
}

/* A line is too long when it fills the whole buffer without its LF. A
 * partial line at the end of a full buffer whose head was consumed is not:
 * the next read realigns the buffer and completes it. */
static int cli_line_too_long(struct cli_sess *cs)
{
	return cs->in.data == cs->in.size && !memchr(buf_head(&cs->in), '\n', cs->in.data);
}

/* Reads what the buffer can take and runs the complete lines. Returns -1 if
 * the connection failed. */
static int cli_receive(struct cli_sess *cs, uint64_t now)
{
	while ((cs->c.flags & CONN_F_RD_READY) && !(cs->c.flags & CONN_F_RD_SHUT)) {
		ssize_t n = conn_recv(&cs->c, &cs->in);

		if (n <= 0)
			break;
		cs->exp = tick_add_ifset(now, cs->timeout_ms);
	}
	if (cs->c.flags & CONN_F_ERROR)
		return -1;
	cli_handle_input(cs);
	/* HAProxy 2.6 ends the session on such a line, unanswered */
	if (!cs->closing && cli_line_too_long(cs))
		cs->closing = 1;
	if ((cs->c.flags & CONN_F_RD_SHUT) && !cs->in.data)
		cs->closing = 1;
	return 0;
}

/* Sends pending output. Returns -1 if the connection failed. The part
 * already sent is dropped once it outweighs the rest, so that a client
 * that never lets the output drain completely does not make it grow. */
static int cli_send(struct cli_sess *cs, uint64_t now)
{
	while (cli_out_pending(cs) && (cs->c.flags & CONN_F_WR_READY)) {
		ssize_t n = send(cs->c.ph.fd, cs->out.buf + cs->out_sent, cli_out_pending(cs),
		                 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0) {
			cs->out_sent += (size_t)n;
			cs->exp = tick_add_ifset(now, cs->timeout_ms);
		} else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			cs->c.flags &= ~CONN_F_WR_READY;
		} else {
			return -1;
		}
	}
	if (cs->out_sent && cs->out_sent >= cli_out_pending(cs)) {
		memmove(cs->out.buf, cs->out.buf + cs->out_sent, cli_out_pending(cs));
		cs->out.len -= cs->out_sent;
		cs->out_sent = 0;
	}
	return 0;
}

/* Whether the session can take more commands now, without waiting for an
 * I/O event: complete lines wait in the buffer, or the socket has input
 * the buffer has room for. */
static int cli_more_input(struct cli_sess *cs)
{
	if (cs->closing || cli_out_pending(cs) >= CLI_OUT_MAX)
		return 0;   /* the output drain wakes the task */
	if (memchr(buf_head(&cs->in), '\n', cs->in.data))
		return 1;
	return (cs->c.flags & CONN_F_RD_READY) && !(cs->c.flags & CONN_F_RD_SHUT) &&
	       cs->in.data < cs->in.size;
}

/* Closing a socket with input unread makes the kernel send a reset, which
 * can destroy answers the client has not read yet. A session that ends
 * with input left (a line too long, commands after `quit`) therefore sends
 * its FIN and discards input until the client's, for CLI_LINGER_MS at
 * most, a few buffers per run. Returns 1 when the session may be freed. */
static int cli_linger(struct cli_sess *cs, uint64_t now)
{
	if (!cs->lingering) {
		if (!cs->in.data && !((cs->c.flags & CONN_F_RD_READY) &&
		                      !(cs->c.flags & CONN_F_RD_SHUT)))
			return 1;
		conn_shutw(&cs->c);
		cs->lingering = 1;
		cs->exp = now + CLI_LINGER_MS;
	}
	for (int reads = 0; (cs->c.flags & CONN_F_RD_READY) && !(cs->c.flags & CONN_F_RD_SHUT); reads++) {
		if (reads == 8) {
			task_wakeup(cs->task, TASK_WOKEN_OTHER);   /* a flood: yield */
			break;
		}
		cs->in.head = cs->in.data = 0;
		if (conn_recv(&cs->c, &cs->in) < 0)
			break;
	}
	return (cs->c.flags & (CONN_F_RD_SHUT | CONN_F_HUP | CONN_F_ERROR)) || now >= cs->exp;
}

/* One run takes at most a buffer of input and stops taking commands while
 * CLI_OUT_MAX of output waits: thousands of pipelined commands are
 * answered over several runs, in order, without holding the thread or
 * memory; the task wakes itself while there is more to do. */
static struct task *cli_process(struct task *t, void *ctx, unsigned int state)
{
	struct cli_sess *cs = ctx;
	uint64_t now = th_ctx->now_ms;

	if (!cs->lingering) {
		if ((!cs->closing && cli_receive(cs, now) < 0) || cli_send(cs, now) < 0) {
			cli_free(cs);
			return NULL;
		}
	}
	if (cs->closing && !cli_out_pending(cs) && cli_linger(cs, now)) {
		cli_free(cs);
		return NULL;
	}
	if (cs->exp && now >= cs->exp) {
		cli_free(cs);
		return NULL;
	}
	if (cli_more_input(cs))
		task_wakeup(t, TASK_WOKEN_OTHER);
	task_set_expire(t, cs->exp);
	return t;
}

int cli_accept(struct listener *l, int fd, const struct sockaddr_storage *from)
{
	struct cli_sess *cs = calloc(1, sizeof(*cs));

	if (!cs) {
		conn_fd_close(fd);
		return -1;
	}
	cs->task = task_new(cli_process, cs, th_ctx->tid, TC_NORMAL, "cli");
	if (!cs->task || buf_alloc(&cs->in) < 0) {
		conn_fd_close(fd);
		task_destroy(cs->task);
		buf_release(&cs->in);
		free(cs);
		return -1;
	}
	cs->lst = l;
	cs->level = l->bc->cli_level;
	if (l->bc->sevfmt >= 0)
		cs->severity_fmt = l->bc->sevfmt;
	conn_init(&cs->c, cs->task);
	cs->c.src = *from;
	if (conn_attach(&cs->c, fd) < 0) {
		conn_fd_close(fd);
		task_destroy(cs->task);
		buf_release(&cs->in);
		free(cs);
		return -1;
	}
	cs->timeout_ms = global.stats_timeout_ms;
	cs->exp = tick_add_ifset(th_ctx->now_ms, cs->timeout_ms);
	task_set_expire(cs->task, cs->exp);
	return 0;
}

/* ---- configuration: stats socket / stats timeout ---- */

static int kw_stats_socket(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	struct list tmp = LIST_HEAD_INIT(tmp);
	struct list *pos, *nxt;

	if (nargs < 3) {
		snprintf(err, errlen, "expects an address (unix path, ip:port or fd@N).");
		return -1;
	}
	if (bind_conf_create(NULL, args[2], ctx->file, ctx->line, 1, &tmp, err, errlen) < 0)
		return -1;
	list_for_each_safe(pos, nxt, &tmp) {
		struct bind_conf *bc = list_elem(pos, struct bind_conf, list);

		bc->cli_level = CLI_LEVEL_OPERATOR;   /* HAProxy's documented default */
		if (bind_parse_options(bc, args, nargs, 3, err, errlen) < 0) {
			bind_conf_list_free(&tmp);
			return -1;
		}
		if (bc->accept_proxy) {
			snprintf(err, errlen, "'accept-proxy' is not supported on a stats socket.");
			bind_conf_list_free(&tmp);
			return -1;
		}
	}
	list_splice_tail(&cli_binds, &tmp);
	return 0;
}

static int kw_stats_timeout(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	int ms;

	if (nargs != 3) {
		snprintf(err, errlen, "expects one time value.");
		return -1;
	}
	if (cfg_parse_time_ms(args[2], &ms, err, errlen) < 0)
		return -1;
	global.stats_timeout_ms = ms;
	return 0;
}

/* stats maxconn: CLI connections at once (all stats sockets); more wait
 * in the listening sockets' backlog. They count in maxsock. */
static int kw_stats_maxconn(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	long v;

	if (nargs != 3 || cfg_parse_uint(args[2], 1000000, &v, err, errlen) < 0 || v < 1) {
		snprintf(err, errlen, "expects a positive value.");
		return -1;
	}
	global.stats_maxconn = (int)v;
	return 0;
}

static const struct cfg_kw cli_cfg_kws[] = {
	{ "stats", "socket",  CFG_SEC_GLOBAL, kw_stats_socket },
	{ "stats", "timeout", CFG_SEC_GLOBAL, kw_stats_timeout },
	{ "stats", "maxconn", CFG_SEC_GLOBAL, kw_stats_maxconn },
	{ NULL }
};
CFG_REGISTER(cli_cfg_kws)

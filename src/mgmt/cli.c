/* The stats socket CLI: `stats socket` keyword, sessions, command dispatch.
 *
 * A CLI session is a task with one connection, owned by the thread that
 * accepted it. Input is read into a buffer; each complete line is split into
 * commands at unescaped ';' and each command into words; output is gathered
 * in a growable text buffer and written out. Without `prompt`, the session
 * ends after the first line has been answered (HAProxy's one-shot mode);
 * with it, a "> " prompt follows each answer until `quit` or EOF.
 *
 * Commands read shared state through atomics, or under the locks named in
 * each module; none of them holds a lock for work that grows with traffic
 * beyond a bounded output (see `show sess`).
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/clock.h>
#include <sluice/core/sched.h>
#include <sluice/mgmt/cli.h>
#include <sluice/net/conn.h>
#include <sluice/net/listener.h>
#include <sluice/proxy/proxy.h>

#define CLI_MAX_LINE  16384
#define CLI_MAX_ARGS  64

struct list cli_binds = LIST_HEAD_INIT(cli_binds);
static struct cli_kw_table *cli_tables;

struct cli_sess {
	struct task *task;
	struct listener *lst;
	struct conn c;
	struct buffer in;
	struct cli_out out;
	size_t out_sent;
	int level;
	int prompt;
	int closing;           /* close once output is sent */
	uint64_t exp;
};

void cli_register(struct cli_kw_table *t)
{
	t->next = cli_tables;
	cli_tables = t;
}

void cli_printf(struct cli_out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->failed)
		return;
	for (;;) {
		size_t room = o->cap - o->len;

		va_start(ap, fmt);
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

/* ---- commands of this module ---- */

static int cli_help(char **args, int nargs, struct cli_out *out, int level);
static int cli_prompt(char **args, int nargs, struct cli_out *out, int level);
static int cli_quit(char **args, int nargs, struct cli_out *out, int level);
static int cli_expert_mode(char **args, int nargs, struct cli_out *out, int level);

static const struct cli_kw cli_base_kws[] = {
	{ { "help" }, CLI_LEVEL_USER, cli_help, "help [<command>]                        : list matching or all commands" },
	{ { "prompt" }, CLI_LEVEL_USER, cli_prompt, "prompt                                  : toggle interactive mode with prompt" },
	{ { "quit" }, CLI_LEVEL_USER, cli_quit, "quit                                    : disconnect" },
	{ { "expert-mode" }, CLI_LEVEL_ADMIN, cli_expert_mode, "expert-mode [on|off]                    : allow the expert commands (debug dev ...)" },
	{ { NULL } }
};
CLI_REGISTER(cli_base_kws)

static int cli_help(char **args, int nargs, struct cli_out *out, int level)
{
	cli_printf(out, "The following commands are valid at this level:\n");
	for (struct cli_kw_table *t = cli_tables; t; t = t->next)
		for (const struct cli_kw *k = t->kws; k->words[0]; k++)
			if (k->usage && k->level <= level &&
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

static int cli_expert_mode(char **args, int nargs, struct cli_out *out, int level)
{
	if (nargs < 2)
		return level >= CLI_LEVEL_EXPERT ? CLI_RET_EXPERT_ON : CLI_RET_EXPERT_OFF;
	if (strcmp(args[1], "on") == 0)
		return CLI_RET_EXPERT_ON;
	if (strcmp(args[1], "off") == 0)
		return CLI_RET_EXPERT_OFF;
	cli_printf(out, "'expert-mode' only accepts 'on' and 'off'.\n");
	return -1;
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

static int cli_run_one(struct cli_sess *cs, char *cmd)
{
	char *args[CLI_MAX_ARGS + 1];
	int nargs = cli_split(cmd, args), partial;
	const struct cli_kw *k;
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
					if (kk->usage && strcmp(kk->words[0], args[0]) == 0)
						cli_printf(&cs->out, "  %s\n", kk->usage);
		}
		return -1;
	}
	if (k->level > cs->level) {
		cli_printf(&cs->out, "Permission denied\n");
		return -1;
	}
	ret = k->fn(args, nargs, &cs->out, cs->level);
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
 * empty line, as HAProxy's CLI does. */
static void cli_run_line(struct cli_sess *cs, char *line)
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
			cli_run_one(cs, start);
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
	listener_conn_closed(cs->lst);
	task_destroy(cs->task);
	free(cs);
}

/* Processes every complete line in the input. */
static void cli_handle_input(struct cli_sess *cs)
{
	for (;;) {
		char *nl = memchr(buf_head(&cs->in), '\n', cs->in.data);
		size_t len;
		char *line;

		if (!nl) {
			if (!(cs->c.flags & CONN_F_RD_SHUT) || !cs->in.data)
				return;
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
		cli_run_line(cs, line);
		free(line);
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

static struct task *cli_process(struct task *t, void *ctx, unsigned int state)
{
	struct cli_sess *cs = ctx;
	uint64_t now = th_ctx->now_ms;

	if (!cs->closing) {
		while ((cs->c.flags & CONN_F_RD_READY) && !(cs->c.flags & CONN_F_RD_SHUT)) {
			ssize_t n = conn_recv(&cs->c, &cs->in);

			if (n <= 0)
				break;
			cs->exp = tick_add_ifset(now, global.stats_timeout_ms);
		}
		if (cs->c.flags & CONN_F_ERROR) {
			cli_free(cs);
			return NULL;
		}
		cli_handle_input(cs);
		if (!cs->closing && !buf_room(&cs->in) && !memchr(buf_head(&cs->in), '\n', cs->in.data))
			cs->closing = 1;   /* line too long */
		if ((cs->c.flags & CONN_F_RD_SHUT) && !cs->in.data)
			cs->closing = 1;
	}
	while (cs->out_sent < cs->out.len && (cs->c.flags & CONN_F_WR_READY)) {
		ssize_t n = send(cs->c.ph.fd, cs->out.buf + cs->out_sent, cs->out.len - cs->out_sent,
		                 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0) {
			cs->out_sent += (size_t)n;
			cs->exp = tick_add_ifset(now, global.stats_timeout_ms);
		} else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			cs->c.flags &= ~CONN_F_WR_READY;
		} else {
			cli_free(cs);
			return NULL;
		}
	}
	if (cs->out_sent == cs->out.len) {
		cs->out_sent = cs->out.len = 0;
		if (cs->closing) {
			cli_free(cs);
			return NULL;
		}
	}
	if (cs->exp && now >= cs->exp) {
		cli_free(cs);
		return NULL;
	}
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
	conn_init(&cs->c, cs->task);
	cs->c.src = *from;
	if (conn_attach(&cs->c, fd) < 0) {
		conn_fd_close(fd);
		task_destroy(cs->task);
		buf_release(&cs->in);
		free(cs);
		return -1;
	}
	cs->exp = tick_add_ifset(th_ctx->now_ms, global.stats_timeout_ms);
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

/* Local answers of HTTP streams: the log line of a transaction, and the
 * responses sluice makes itself (error pages, deny, monitor-uri, the
 * answer to a stream aborted before any response). A local reply is put
 * in the response buffer and parsed back like a server's, so the response
 * path (http-after-response rules, counters, log) treats both alike; this
 * file only prepares it. Services (use-service) work the same way for their
 * head; their body, which may be far larger than the buffer, waits in a
 * heap block and is moved into the buffer as the client drains it, framed
 * by Content-Length. Split from stream_http.c; owner thread only, like the
 * stream.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sluice/core/global.h>
#include <sluice/core/log.h>
#include <sluice/core/sched.h>
#include <sluice/expr/sample.h>
#include <sluice/expr/vars.h>
#include <sluice/http/act.h>
#include <sluice/http/cache_txn.h>
#include <sluice/http/comp.h>
#include <sluice/http/errors.h>
#include <sluice/http/msg.h>
#include <sluice/http/txn.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/server.h>
#include <sluice/proxy/stream_int.h>

static uint64_t now_ms(void)
{
	return th_ctx->now_ms;
}

/* ---- logging ---- */

/* stream_lf_render() with the service's name as server, as HAProxy logs
 * an applet ("fe/<PROMEX>"). */
static size_t log_render_service(struct stream *s, char *out, size_t room)
{
	struct log_fields f;
	struct smp_ctx c;

	stream_smp_ctx_init(s, &c, SMP_DIR_REQ);
	stream_log_fields(s, &f);
	f.srv_name = s->svc_log_name;
	f.smp = &c;
	return lf_render(&s->fe->logfmt, &f, out, room);
}

void http_log(struct stream *s)
{
	struct http_txn *t = s->txn;
	struct proxy *fe = s->fe;
	int lg = fe->options & PX_O_LOG_GLOBAL;
	int err = t->status >= 500 || s->term[0] != '-';
	int level = 6;
	char line[4096];
	size_t len;

	if (t->flags & (TX_F_LOGGED | TX_F_MONITOR))
		return;
	if (t->log_level == ACT_LOG_LEVEL_SILENT) {
		t->flags |= TX_F_LOGGED;
		return;
	}
	t->flags |= TX_F_LOGGED;
	if (!fe->logfmt.count)
		return;
	if (list_empty(&fe->logs) && !(lg && !list_empty(&global.logs)))
		return;
	/* "null": the client sent nothing (an error page sluice sent to a
	 * connection that never spoke does not make it a request) */
	if ((fe->options & PX_O_DONTLOGNULL) && !s->bytes_in)
		return;
	if ((fe->options & PX_O_DONTLOG_NORMAL) && !err)
		return;
	/* request processing is over: "req" variables are gone, even when
	 * no response came (HAProxy 2.6 logs them empty after a deny too) */
	vars_prune(&t->vars_req);
	if (t->log_level >= 0)
		level = t->log_level;
	else if ((fe->options & PX_O_LOG_SEP_ERRORS) && err)
		level = 3;
	len = s->svc_log_name ? log_render_service(s, line, sizeof(line)) :
	      stream_lf_render(s, &fe->logfmt, line, sizeof(line));
	if (!list_empty(&fe->logs))
		log_send(&fe->logs, level, NULL, global.pid, line, len);
	if (lg)
		log_send(&global.logs, level, NULL, global.pid, line, len);
}

/* ---- local replies ---- */

void http_count_status(struct stream *s, int status)
{
	int k = status >= 100 && status < 600 ? status / 100 - 1 : 5;

	CNT_INC(s->fe->fe_cnt.hrsp[k]);
	if (s->be && s->be != s->fe)
		CNT_INC(s->be->be_cnt.hrsp[k]);
	if (s->srv && !(s->txn->flags & TX_F_REPLIED))
		CNT_INC(s->srv->cnt.hrsp[k]);
}

/* Puts the reply for <status> (<r> if given, else the configured or built-in
 * page) in the response buffer, to go through the response path like a
 * server's response (http-after-response rules included). Returns 0, or
 * -1 when nothing can be sent (empty errorfile, no room): close. */
int http_reply_prepare(struct stream *s, int status, const struct http_reply *r)
{
	struct http_txn *t = s->txn;
	ssize_t n;

	if (!r)
		r = http_errors_find(s->be ? s->be->errors : NULL, s->fe->errors, status);
	if (!r)
		r = http_reply_builtin(500);
	http_service_release(s);   /* this reply replaces a service's */
	if (!s->res.area && buf_alloc(&s->res) < 0)
		return -1;
	s->res.head = s->res.data = 0;
	t->flags |= TX_F_REPLIED;
	t->flags &= ~TX_F_RES_GONE;
	t->res.head_len = 0;
	if (r->flags & HTTP_REPLY_F_EMPTY)
		return -1;
	n = http_reply_render(r, s, s->res.area, s->res.size);
	if (n <= 0)
		return -1;
	s->res.data = (size_t)n;
	/* whether the connection lives on is read from the reply's head when
	 * it goes out (Connection: close, a body ended by the close), as for a
	 * server's: an HTTP/1.0 errorfile is sent with keep-alive, as HAProxy */
	return 0;
}

/* The request is answered by sluice: the server side is not used for this
 * transaction; the request's remaining bytes are read and dropped. The
 * caller counts the interception. */
static void reply_start_uncounted(struct stream *s, int status, const struct http_reply *r,
                                  char a, char b)
{
	struct http_txn *t = s->txn;

	if (s->term[0] == '-') {
		s->term[0] = a;
		s->term[1] = b;
	}
	http_txn_take_id(s);
	if (t->Ti < 0) {
		/* no complete request: the idle time is what passed before its
		 * first byte (or before the error), never -1, as HAProxy logs */
		t->Ti = (int)((t->req_first_ms ? t->req_first_ms : now_ms()) - t->idle_start_ms);
	}
	if (http_reply_prepare(s, status, r) < 0) {
		s->st = SST_CLOSED;
		return;
	}
	task_wakeup(s->task, TASK_WOKEN_OTHER);   /* send it now, whatever state called */
	if (!t->req.head_len && !(t->flags & TX_F_REQ_GONE)) {
		/* no request head to skip: nothing more will be read */
		t->req_body.done = 1;
		t->flags |= TX_F_CLI_CLOSE;
	}
	s->st = SST_HTTP_XFER;
}

void http_reply_start(struct stream *s, int status, const struct http_reply *r, char a, char b)
{
	reply_start_uncounted(s, status, r, a, b);
	if (s->st != SST_CLOSED)
		CNT_INC(s->fe->fe_cnt.intercepted);
}

/* Drops every "<name>:" header line of the HTTP/1 head at the start of
 * <b>, and adds "<line>\r\n" at its end. Returns 0, or -1 without room. */
static int head_replace_header(struct buffer *b, const char *name, const char *line)
{
	size_t nlen = strlen(name), llen = strlen(line);
	char *p = b->area, *end = b->area + b->data, *eol;

	p = memchr(p, '\n', (size_t)(end - p));   /* past the status line */
	if (!p)
		return -1;
	for (p++; p < end && *p != '\r' && *p != '\n'; p = eol + 1) {
		eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			return -1;
		if ((size_t)(eol - p) > nlen && p[nlen] == ':' && strncasecmp(p, name, nlen) == 0) {
			size_t cut = (size_t)(eol + 1 - p);

			memmove(p, eol + 1, (size_t)(end - eol - 1));
			b->data -= cut;
			end -= cut;
			eol = p - 1;
		}
	}
	if (p >= end || b->data + llen + 2 > b->size)
		return -1;
	memmove(p + llen + 2, p, (size_t)(end - p));
	memcpy(p, line, llen);
	memcpy(p + llen, "\r\n", 2);
	b->data += llen + 2;
	return 0;
}

void http_reply_auth(struct stream *s, const char *realm)
{
	char line[512];

	http_reply_start(s, 401, NULL, 'L', 'R');
	if (s->st == SST_CLOSED)
		return;
	snprintf(line, sizeof(line), "www-authenticate: Basic realm=\"%s\"", realm);
	if (head_replace_header(&s->res, "www-authenticate", line) < 0)
		s->st = SST_CLOSED;   /* no room in an oversized errorfile: close */
}

int http_stream_abort(struct stream *s, char a, char b)
{
	struct http_txn *t = s->txn;
	int status;

	if (a == 'C' || a == 'c' || (t->flags & (TX_F_RES_STARTED | TX_F_REPLIED)) ||
	    s->st == SST_HTTP_XFER || s->st == SST_ESTABLISHED)
		return 0;
	if (b == 'Q' || b == 'C')
		status = 503;
	else if (a == 's')
		status = 504;
	else if (a == 'P' && b == 'R')
		status = 503;   /* no backend */
	else
		status = 502;
	http_reply_start(s, status, NULL, a, b);
	return s->st != SST_CLOSED;
}

/* ---- services (use-service) ---- */

void http_service_register(struct http_service *svc)
{
	act_service_register(&svc->as);
}

void http_service_release(struct stream *s)
{
	free(s->svc_body);
	s->svc_body = NULL;
	if (s->svc_cache) {
		cache_hit_release(s->svc_cache, s->svc_cache_cfg);
		s->svc_cache = NULL;
	}
	s->svc_len = s->svc_off = 0;
}

int http_service_pending(const struct stream *s)
{
	return s->svc_body || s->svc_cache;
}

/* The response head of <rep> in the empty response buffer. Returns 0, or
 * -1 if it does not fit (it always does: a few short lines). */
static int service_put_head(struct stream *s, const struct svc_reply *rep)
{
	int n;

	if (!s->res.area && buf_alloc(&s->res) < 0)
		return -1;
	s->res.head = s->res.data = 0;
	n = snprintf(s->res.area, s->res.size,
	             "HTTP/1.1 %d %s\r\ncache-control: no-cache\r\ncontent-type: %s\r\n"
	             "content-length: %zu\r\n%s\r\n", rep->status, http_status_reason(rep->status),
	             rep->content_type, rep->len, rep->extra_hdrs);
	if (n < 0 || (size_t)n >= s->res.size)
		return -1;
	s->res.data = (size_t)n;
	return 0;
}

void http_service_start(struct stream *s, const char *name)
{
	const struct act_service *as = act_service_find(name);

	if (!as) {
		http_reply_start(s, 503, NULL, 'P', 'R');
		return;
	}
	/* every service is registered through http_service_register() */
	http_service_run(s, list_elem(as, struct http_service, as));
}

void http_service_run(struct stream *s, const struct http_service *svc)
{
	struct http_txn *t = s->txn;
	struct svc_reply rep = { 0 };
	int rc;

	http_service_release(s);
	/* HAProxy compresses what its services answer: the request's side of
	 * the negotiation happens here, the rules having stopped */
	if (s->fe->comp || (s->be && s->be->comp))
		t->comp_algo = comp_request(s->fe->comp, s->be && s->be != s->fe ? s->be->comp : NULL,
		                            &t->req, &t->req_edit);
	/* counted before the service runs, as HAProxy: a scrape sees itself */
	CNT_INC(s->fe->fe_cnt.intercepted);
	rc = svc->produce(s, &rep);
	if (rc) {
		free(rep.body);
		reply_start_uncounted(s, rc > 0 ? rc : 500, NULL, 'P', 'R');
		return;
	}
	s->svc_body = rep.body;
	s->svc_len = rep.len;
	s->svc_off = 0;
	if (service_put_head(s, &rep) < 0) {
		http_service_release(s);
		reply_start_uncounted(s, 500, NULL, 'P', 'R');
		return;
	}
	if (s->term[0] == '-') {
		s->term[0] = 'L';
		s->term[1] = 'R';
	}
	/* an applet is "connected" at once: HAProxy logs 0 for Tw, Tc, Tr */
	s->Tw = s->Tc = 0;
	t->Tr = 0;
	s->svc_log_name = svc->log_name;
	t->flags |= TX_F_REPLIED;
	t->flags &= ~TX_F_RES_GONE;
	t->res.head_len = 0;
	s->st = SST_HTTP_XFER;
	task_wakeup(s->task, TASK_WOKEN_OTHER);
}

int http_service_feed(struct stream *s, struct buffer *dst)
{
	size_t n;

	if (!http_service_pending(s) || s->svc_off >= s->svc_len)
		return 0;
	buf_realign(dst);
	n = buf_room(dst);
	if (n > s->svc_len - s->svc_off)
		n = s->svc_len - s->svc_off;
	if (!n)
		return 0;
	if (s->svc_cache)
		cache_hit_read(s->svc_cache, &s->svc_cache_chunk, &s->svc_cache_chunk_off,
		               s->svc_off, buf_tail(dst), n);
	else
		memcpy(buf_tail(dst), s->svc_body + s->svc_off, n);
	dst->data += n;
	s->svc_off += n;
	if (s->svc_off == s->svc_len)
		http_service_release(s);   /* all of it is in the buffer */
	return 1;
}

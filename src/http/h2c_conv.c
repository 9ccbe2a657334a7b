/* HTTP/2 heads to and from the message model (msg.h), for the connection
 * engine of h2c.c. The rules, and the HAProxy 2.6 behaviour they follow,
 * are listed in include/sluice/http/h2c.h.
 *
 * nghttp2's HTTP messaging checks have run on every incoming head before
 * it gets here (RFC 9113 section 8.2.2 connection-specific fields, 8.3
 * pseudo-header presence, order and uniqueness, lower-case names, no
 * leading or trailing whitespace, content-length syntax, TE only
 * "trailers"). What they leave is checked here: the form of :path, one Host
 * at most, agreeing Content-Length values.
 *
 * Concurrency: nothing shared; the scratch memory belongs to one connection.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <sluice/http/h1.h>
#include <sluice/http/msgedit.h>
#include "h2c_int.h"

#define LOWER(c) ((unsigned char)((c) >= 'A' && (c) <= 'Z' ? (c) + 0x20 : (c)))

/* RFC 6455 section 1.3 */
static const char ws_guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

static inline struct ist mk_ist(const char *p, size_t len)
{
	return (struct ist){ p, len };
}

/* <s> equals <lower> (a NUL-terminated lower-case literal), ignoring case */
/* <lit> is a literal: its length is known, most names differ by it */
#define IEQ(s, lit) ((s).len == sizeof(lit) - 1 && h1_name_eq((s), (lit)))
/* A name received in an HTTP/2 head: lower case already (nghttp2 refuses
 * upper case, RFC 9113 section 8.2.1), compared as bytes. */
#define LCEQ(s, lit) ((s).len == sizeof(lit) - 1 && memcmp((s).ptr, (lit), sizeof(lit) - 1) == 0)

/* Whether comma-separated list <v> holds token <lower> (RFC 9110 5.6.1). */
static int list_has_token(struct ist v, const char *lower)
{
	const char *p = v.ptr, *end = v.ptr + v.len;

	for (; p < end; p++)
		if (h1_name_eq(h1_list_elem(&p, end), lower))
			return 1;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Websocket keys (RFC 6455 section 4.2.2), for RFC 8441 conversions         */
/* ------------------------------------------------------------------------ */

static int ws_make_key(char out[H2C_WS_KEY_LEN + 1])
{
	unsigned char raw[16];

	if (RAND_bytes(raw, sizeof(raw)) != 1)
		return -1;
	EVP_EncodeBlock((unsigned char *)out, raw, sizeof(raw));
	return 0;
}

static int ws_accept_of(const char *key, char out[H2C_WS_ACCEPT_LEN + 1])
{
	unsigned char in[H2C_WS_KEY_LEN + sizeof(ws_guid)], md[EVP_MAX_MD_SIZE];
	size_t klen = strlen(key);
	unsigned int mdlen = 0;

	if (klen > H2C_WS_KEY_LEN)
		return -1;
	memcpy(in, key, klen);
	memcpy(in + klen, ws_guid, sizeof(ws_guid) - 1);
	if (!EVP_Digest(in, klen + sizeof(ws_guid) - 1, md, &mdlen, EVP_sha1(), NULL) ||
	    mdlen != 20)
		return -1;
	EVP_EncodeBlock((unsigned char *)out, md, 20);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Authorities                                                               */
/* ------------------------------------------------------------------------ */

/* The authority without an empty port, nor the default port of <scheme>
 * (HAProxy 2.6 does so for HTTP/2 requests; RFC 3986 section 6.2.3). */
static struct ist authority_normalize(struct ist auth, struct ist scheme)
{
	const char *p = auth.ptr + auth.len;
	size_t port_len;

	while (p > auth.ptr && p[-1] >= '0' && p[-1] <= '9')
		p--;
	if (p == auth.ptr || p[-1] != ':')
		return auth;
	/* an IPv6 literal ends with ']' before its port; other colons are
	 * inside it */
	if (p - 1 > auth.ptr && memchr(auth.ptr, ':', (size_t)(p - 1 - auth.ptr)) &&
	    p[-2] != ']')
		return auth;
	port_len = (size_t)(auth.ptr + auth.len - p);
	if (port_len == 0 ||
	    (IEQ(scheme, "http") && port_len == 2 && memcmp(p, "80", 2) == 0) ||
	    (IEQ(scheme, "https") && port_len == 3 && memcmp(p, "443", 3) == 0))
		auth.len = (size_t)(p - 1 - auth.ptr);
	return auth;
}

/* ------------------------------------------------------------------------ */
/* Incoming heads                                                            */
/* ------------------------------------------------------------------------ */

int h2c_head_init(struct h2c_head *hd, const struct h2c_settings *set)
{
	memset(hd, 0, sizeof(*hd));
	hd->max_fields = (int)set->max_hdrs;
	hd->arena_size = 2 * (size_t)set->max_header_list + H2C_HEAD_EXTRA_BYTES;
	return 0;
}

/* The memory of one head (arena and field array), kept by each thread for
 * its next head: every request would otherwise malloc and free tens of KB.
 * Freed with the thread (pthread key destructor). */
struct head_mem {
	char *arena;
	struct http_hdr *fields;
	size_t arena_size;
	int max_fields;
};

static pthread_key_t head_key;
static pthread_once_t head_key_once = PTHREAD_ONCE_INIT;

static void head_mem_free(void *p)
{
	struct head_mem *m = p;

	free(m->arena);
	free(m->fields);
	free(m);
}

static void head_key_init(void)
{
	pthread_key_create(&head_key, head_mem_free);
}

void h2c_head_release(struct h2c_head *hd)
{
	struct head_mem *m;

	if (!hd->arena && !hd->fields)
		return;
	pthread_once(&head_key_once, head_key_init);
	m = pthread_getspecific(head_key);
	if (!m && (m = calloc(1, sizeof(*m))) && pthread_setspecific(head_key, m) != 0) {
		free(m);
		m = NULL;
	}
	if (m && !m->arena && hd->arena && hd->fields) {
		m->arena = hd->arena;
		m->fields = hd->fields;
		m->arena_size = hd->arena_size;
		m->max_fields = hd->max_fields;
	} else {
		free(hd->fields);
		free(hd->arena);
	}
	hd->fields = NULL;
	hd->arena = NULL;
}

void h2c_head_begin(struct h2c_head *hd, int32_t sid)
{
	hd->sid = sid;
	hd->active = 1;
	hd->discard = 0;
	hd->list_size = 0;
	memset(hd->pseudo, 0, sizeof(hd->pseudo));
	hd->nfields = 0;
	hd->ncookies = 0;
	hd->arena_used = 0;
}

static char *arena_put(struct h2c_head *hd, const void *p, size_t len)
{
	char *dst;

	if (hd->arena_size - hd->arena_used < len)
		return NULL;
	dst = hd->arena + hd->arena_used;
	if (len)
		memcpy(dst, p, len);
	hd->arena_used += len;
	return dst;
}

static int head_alloc(struct h2c_head *hd)
{
	struct head_mem *m;

	if (hd->arena)
		return 0;
	pthread_once(&head_key_once, head_key_init);
	m = pthread_getspecific(head_key);
	if (m && m->arena && m->arena_size == hd->arena_size && m->max_fields == hd->max_fields) {
		/* the thread's spare */
		hd->arena = m->arena;
		hd->fields = m->fields;
		m->arena = NULL;
		m->fields = NULL;
		return 0;
	}
	hd->arena = malloc(hd->arena_size);
	hd->fields = malloc(sizeof(*hd->fields) *
	                    (size_t)(hd->max_fields + H2C_HEAD_EXTRA_FIELDS));
	if (!hd->arena || !hd->fields) {
		h2c_head_release(hd);
		return -1;
	}
	return 0;
}

static int pseudo_slot(const uint8_t *name, size_t nlen)
{
	struct ist n = mk_ist((const char *)name, nlen);

	if (LCEQ(n, ":method"))
		return H2P_METHOD;
	if (LCEQ(n, ":scheme"))
		return H2P_SCHEME;
	if (LCEQ(n, ":authority"))
		return H2P_AUTHORITY;
	if (LCEQ(n, ":path"))
		return H2P_PATH;
	if (LCEQ(n, ":protocol"))
		return H2P_PROTOCOL;
	if (LCEQ(n, ":status"))
		return H2P_STATUS;
	return -1;
}

int h2c_head_add(struct h2c_head *hd, const uint8_t *name, size_t nlen,
                 const uint8_t *value, size_t vlen)
{
	struct http_hdr *h;
	char *n, *v;
	int slot;

	if (hd->discard)
		return 0;
	/* RFC 9113 section 6.5.2: name + value + 32 per field */
	hd->list_size += nlen + vlen + 32;
	if (hd->list_size > hd->arena_size / 2)
		return 1;
	if (head_alloc(hd) < 0)
		return -1;
	n = arena_put(hd, name, nlen);
	v = arena_put(hd, value, vlen);
	if (!n || !v)
		return 1;
	if (nlen && name[0] == ':') {
		slot = pseudo_slot(name, nlen);
		if (slot >= 0)
			hd->pseudo[slot] = mk_ist(v, vlen);
		return 0;
	}
	if (hd->nfields >= hd->max_fields)
		return 2;
	h = &hd->fields[hd->nfields++];
	h->name = mk_ist(n, nlen);
	h->value = mk_ist(v, vlen);
	if (LCEQ(h->name, "cookie"))
		hd->ncookies++;
	return 0;
}

/* RFC 9110 section 8.6, with RFC 9113 8.1.1: every Content-Length value the
 * same number. nghttp2 also checks them against the DATA received. */
static int head_content_length(struct http_msg *msg, struct ist v)
{
	uint64_t n = 0;
	size_t i;

	if (!v.len)
		return H2C_HEAD_MALFORMED;
	for (i = 0; i < v.len; i++) {
		unsigned int d = (unsigned int)(uint8_t)v.ptr[i] - '0';

		if (d > 9 || n > ((uint64_t)INT64_MAX - d) / 10)
			return H2C_HEAD_MALFORMED;
		n = n * 10 + d;
	}
	if ((msg->flags & HTTP_F_HAS_CL) && n != msg->content_length)
		return H2C_HEAD_MALFORMED;
	msg->flags |= HTTP_F_HAS_CL;
	msg->content_length = n;
	return H2C_HEAD_OK;
}

/* The fields as the message keeps them: Host maybe replaced (<host> set),
 * cookie crumbs taken out for merging, the framing flags. In place: the
 * output never holds more fields than the input before the additions. */
static int head_fields(struct h2c_head *hd, struct http_msg *msg, int drop_host,
                       int *nhost)
{
	int i, out = 0, rc;

	*nhost = 0;
	for (i = 0; i < hd->nfields; i++) {
		struct http_hdr h = hd->fields[i];

		switch (h.name.len) {
		case 4:
			if (LCEQ(h.name, "host")) {
				if (drop_host)
					continue;
				++*nhost;
			}
			break;
		case 6:
			if (LCEQ(h.name, "cookie") && hd->ncookies > 1)
				continue;
			if (msg->is_request && LCEQ(h.name, "expect") &&
			    IEQ(h.value, "100-continue"))
				msg->flags |= HTTP_F_EXPECT_100;
			break;
		case 14:
			if (LCEQ(h.name, "content-length")) {
				rc = head_content_length(msg, h.value);
				if (rc)
					return rc;
			}
			break;
		}
		hd->fields[out++] = h;
	}
	msg->nhdrs = out;
	return H2C_HEAD_OK;
}

/* Appends a field whose strings live as long as the head. */
static void head_append(struct http_msg *msg, struct ist name, struct ist value)
{
	msg->hdrs[msg->nhdrs].name = name;
	msg->hdrs[msg->nhdrs].value = value;
	msg->nhdrs++;
}

/* RFC 9113 section 8.2.3: the crumbs become one field, "; " between them,
 * in <out> (ptr NULL when there is nothing to merge). Before head_fields()
 * packs the fields over them. */
static int head_merge_cookies(struct h2c_head *hd, struct ist *out)
{
	char *start = hd->arena + hd->arena_used;
	int i, first = 1;

	*out = mk_ist(NULL, 0);
	if (hd->ncookies < 2)
		return H2C_HEAD_OK;
	for (i = 0; i < hd->nfields; i++) {
		struct http_hdr *h = &hd->fields[i];

		if (!LCEQ(h->name, "cookie"))
			continue;
		if ((!first && !arena_put(hd, "; ", 2)) || !arena_put(hd, h->value.ptr, h->value.len))
			return H2C_HEAD_NOMEM;
		first = 0;
	}
	*out = mk_ist(start, (size_t)(hd->arena + hd->arena_used - start));
	return H2C_HEAD_OK;
}

/* :path of a request other than CONNECT: origin form, or "*" for OPTIONS
 * (RFC 9113 section 8.3.1); no fragment, no CTL, SP or DEL. */
static int head_path_ok(struct ist path, enum http_meth meth)
{
	size_t i;

	if (!path.len)
		return 0;
	if (path.len == 1 && path.ptr[0] == '*')
		return meth == HTTP_METH_OPTIONS;
	if (path.ptr[0] != '/')
		return 0;
	for (i = 0; i < path.len; i++) {
		unsigned char ch = (unsigned char)path.ptr[i];

		if (ch <= 0x20 || ch == 0x7f || ch == '#')
			return 0;
	}
	return 1;
}

/* The request line: method, uri, and the authority that becomes Host. */
static int head_request_line(struct h2c_head *hd, struct http_msg *msg, struct ist *host)
{
	struct ist *ps = hd->pseudo, scheme = ps[H2P_SCHEME], path = ps[H2P_PATH];
	struct ist auth = ps[H2P_AUTHORITY];
	char *uri;

	*host = mk_ist(NULL, 0);
	msg->method = ps[H2P_METHOD];
	if (ps[H2P_PROTOCOL].ptr)
		msg->method = IST("GET");   /* RFC 8441 as an HTTP/1 upgrade */
	msg->meth = h1_meth_from_token(msg->method.ptr, msg->method.len);
	if (msg->meth == HTTP_METH_CONNECT) {
		if (!auth.len)
			return H2C_HEAD_MALFORMED;
		msg->uri = auth;
		*host = auth;
		return H2C_HEAD_OK;
	}
	if (!head_path_ok(path, msg->meth) || !scheme.len)
		return H2C_HEAD_MALFORMED;
	if (!auth.ptr) {
		msg->uri = path;
		return H2C_HEAD_OK;
	}
	auth = authority_normalize(auth, scheme);
	if (path.len == 1 && path.ptr[0] == '*') {
		msg->uri = path;
		*host = auth;
		return H2C_HEAD_OK;
	}
	uri = hd->arena + hd->arena_used;
	if (!arena_put(hd, scheme.ptr, scheme.len) || !arena_put(hd, "://", 3) ||
	    !arena_put(hd, auth.ptr, auth.len) || !arena_put(hd, path.ptr, path.len))
		return H2C_HEAD_NOMEM;
	msg->uri = mk_ist(uri, (size_t)(hd->arena + hd->arena_used - uri));
	msg->flags |= HTTP_F_ABS_URI;
	/* Host is the authority part of the uri just built */
	*host = mk_ist(uri + scheme.len + 3, auth.len);
	return H2C_HEAD_OK;
}

/* RFC 8441 request seen by an HTTP/1 server as HAProxy 2.6 gives it:
 * Upgrade and Connection appended, and a websocket key if none came. */
static int head_ext_connect(struct h2c_head *hd, struct http_msg *msg, struct h2c_stream *s)
{
	struct ist proto = hd->pseudo[H2P_PROTOCOL];
	int i;

	head_append(msg, IST("upgrade"), proto);
	head_append(msg, IST("connection"), IST("upgrade"));
	msg->flags |= HTTP_F_UPGRADE | HTTP_F_CONN_UPGRADE;
	s->flags |= H2S_F_EXT_CONNECT;
	if (!IEQ(proto, "websocket"))
		return H2C_HEAD_OK;
	i = http_hdr_find(msg, IST("sec-websocket-key"), 0);
	if (i >= 0) {
		struct ist k = msg->hdrs[i].value;

		if (k.len <= H2C_WS_KEY_LEN) {
			memcpy(s->ws_key, k.ptr, k.len);
			s->ws_key[k.len] = '\0';
			s->flags |= H2S_F_WS_KEY;
		}
		return H2C_HEAD_OK;
	}
	if (ws_make_key(s->ws_key) < 0)
		return H2C_HEAD_NOMEM;
	s->flags |= H2S_F_WS_KEY;
	head_append(msg, IST("sec-websocket-key"), mk_ist(s->ws_key, H2C_WS_KEY_LEN));
	return H2C_HEAD_OK;
}

static int head_request(struct h2c_head *hd, struct h2c_stream *s, int end_stream,
                        struct http_msg *msg)
{
	struct ist host, cookie;
	int rc, nhost, i;

	rc = head_request_line(hd, msg, &host);
	if (rc)
		return rc;
	rc = head_merge_cookies(hd, &cookie);
	if (rc)
		return rc;
	rc = head_fields(hd, msg, host.ptr != NULL, &nhost);
	if (rc)
		return rc;
	if (nhost > 1)
		return H2C_HEAD_MALFORMED;   /* RFC 9112 section 3.2, for the HTTP/1 side */
	if (host.ptr) {
		/* HAProxy 2.6: the authority wins, its Host comes first */
		for (i = msg->nhdrs; i > 0; i--)
			msg->hdrs[i] = msg->hdrs[i - 1];
		msg->hdrs[0].name = IST("host");
		msg->hdrs[0].value = host;
		msg->nhdrs++;
	}
	s->meth = msg->meth;
	if (msg->meth == HTTP_METH_CONNECT)
		s->flags |= H2S_F_CONNECT;
	if (hd->pseudo[H2P_PROTOCOL].ptr) {
		rc = head_ext_connect(hd, msg, s);
		if (rc)
			return rc;
	}
	if (cookie.ptr)
		head_append(msg, IST("cookie"), cookie);
	/* what follows a CONNECT or an extended CONNECT is tunnel payload */
	if (end_stream || msg->meth == HTTP_METH_CONNECT || (s->flags & H2S_F_EXT_CONNECT)) {
		if (end_stream && (msg->flags & HTTP_F_HAS_CL) && msg->content_length)
			return H2C_HEAD_MALFORMED;
		if (!(msg->flags & HTTP_F_HAS_CL))
			msg->flags |= HTTP_F_BODYLESS;
	}
	msg->flags |= HTTP_F_XFER_LEN;
	return H2C_HEAD_OK;
}

/* Whether <msg> has a field named <name> (lower case). */
static int head_has(const struct http_msg *msg, const char *name)
{
	size_t l = strlen(name);

	for (int i = 0; i < msg->nhdrs; i++)
		if (msg->hdrs[i].name.len == l && !strncasecmp(msg->hdrs[i].name.ptr, name, l))
			return 1;
	return 0;
}

/* The 200 to an extended CONNECT sent for an HTTP/1 websocket request: the
 * 101 its client waits for, with the Sec-WebSocket-Accept of its key (the
 * server's own when it sent one: a proxy that passed the key on). */
static int head_ws_switch(struct h2c_head *hd, struct http_msg *msg, struct h2c_stream *s)
{
	char *acc = hd->arena + hd->arena_used;
	int i, out = 0;

	/* no body framing in a 101 */
	for (i = 0; i < msg->nhdrs; i++)
		if (!IEQ(msg->hdrs[i].name, "content-length"))
			msg->hdrs[out++] = msg->hdrs[i];
	msg->nhdrs = out;
	msg->flags &= ~HTTP_F_HAS_CL;
	msg->content_length = 0;
	msg->status = 101;
	head_append(msg, IST("connection"), IST("upgrade"));
	head_append(msg, IST("upgrade"), IST("websocket"));
	if ((s->flags & H2S_F_WS_KEY) && !head_has(msg, "sec-websocket-accept")) {
		if (hd->arena_size - hd->arena_used < H2C_WS_ACCEPT_LEN + 1 ||
		    ws_accept_of(s->ws_key, acc) < 0)
			return H2C_HEAD_NOMEM;
		hd->arena_used += H2C_WS_ACCEPT_LEN;
		head_append(msg, IST("sec-websocket-accept"), mk_ist(acc, H2C_WS_ACCEPT_LEN));
	}
	msg->flags |= HTTP_F_UPGRADE | HTTP_F_CONN_UPGRADE;
	return H2C_HEAD_OK;
}

static int head_response(struct h2c_head *hd, struct h2c_stream *s, int end_stream,
                         struct http_msg *msg)
{
	struct ist st = hd->pseudo[H2P_STATUS], cookie;
	int rc, nhost;

	if (st.len != 3 || st.ptr[0] < '1' || st.ptr[0] > '9' || st.ptr[1] < '0' ||
	    st.ptr[1] > '9' || st.ptr[2] < '0' || st.ptr[2] > '9')
		return H2C_HEAD_MALFORMED;
	msg->status = (st.ptr[0] - '0') * 100 + (st.ptr[1] - '0') * 10 + (st.ptr[2] - '0');
	msg->meth = s->meth;
	msg->reason = mk_ist("", 0);
	rc = head_merge_cookies(hd, &cookie);
	if (rc)
		return rc;
	rc = head_fields(hd, msg, 0, &nhost);
	if (rc)
		return rc;
	if (cookie.ptr)
		head_append(msg, IST("cookie"), cookie);
	if (msg->status < 200 || msg->status == 204 || msg->status == 304 ||
	    s->meth == HTTP_METH_HEAD) {
		msg->flags |= HTTP_F_BODYLESS;
	} else if (msg->status < 300 && (s->flags & (H2S_F_CONNECT | H2S_F_EXT_CONNECT))) {
		msg->flags |= HTTP_F_BODYLESS | HTTP_F_TUNNEL;
		if (s->flags & H2S_F_EXT_CONNECT) {
			rc = head_ws_switch(hd, msg, s);
			if (rc)
				return rc;
		}
	} else if (end_stream && (msg->flags & HTTP_F_HAS_CL) && msg->content_length) {
		return H2C_HEAD_MALFORMED;
	}
	msg->flags |= HTTP_F_XFER_LEN;
	return H2C_HEAD_OK;
}

int h2c_head_build(struct h2c_head *hd, enum h2c_head_kind kind, struct h2c_stream *s,
                   int end_stream, struct http_msg *msg)
{
	int nhost;

	memset(msg, 0, sizeof(*msg));
	msg->version = IST("HTTP/2.0");
	msg->flags = HTTP_F_VER_11;
	msg->hdrs = hd->fields;
	msg->maxhdrs = hd->max_fields + H2C_HEAD_EXTRA_FIELDS;
	msg->head_len = hd->list_size;
	if (head_alloc(hd) < 0)
		return H2C_HEAD_NOMEM;
	switch (kind) {
	case H2C_KIND_REQUEST:
		msg->is_request = 1;
		return head_request(hd, s, end_stream, msg);
	case H2C_KIND_RESPONSE:
		return head_response(hd, s, end_stream, msg);
	default:
		msg->is_request = (s->flags & H2S_F_FINAL_OUT) == 0;
		msg->meth = s->meth;
		msg->flags = 0;
		msg->nhdrs = hd->nfields;
		return head_fields(hd, msg, 0, &nhost) ? H2C_HEAD_MALFORMED : H2C_HEAD_OK;
	}
}

/* ------------------------------------------------------------------------ */
/* Outgoing heads                                                            */
/* ------------------------------------------------------------------------ */

void h2c_out_release(struct h2c_out *o)
{
	free(o->nv);
	free(o->buf);
	memset(o, 0, sizeof(*o));
}

/* Makes room for <nv> entries and <bytes> of strings; nothing built before
 * moves, since the strings are only referenced once the list is complete. */
static int out_reserve(struct h2c_out *o, int nv, size_t bytes)
{
	o->n = 0;
	o->used = 0;
	if (nv > o->cap) {
		nghttp2_nv *n = realloc(o->nv, sizeof(*n) * (size_t)nv);

		if (!n)
			return H2C_E_NOMEM;
		o->nv = n;
		o->cap = nv;
	}
	if (bytes > o->size) {
		char *b = realloc(o->buf, bytes);

		if (!b)
			return H2C_E_NOMEM;
		o->buf = b;
		o->size = bytes;
	}
	return 0;
}

static void out_nv(struct h2c_out *o, struct ist name, struct ist value)
{
	nghttp2_nv *nv = &o->nv[o->n++];

	nv->name = (uint8_t *)name.ptr;
	nv->namelen = name.len;
	nv->value = (uint8_t *)value.ptr;
	nv->valuelen = value.len;
	nv->flags = NGHTTP2_NV_FLAG_NONE;
}

/* Field names go lower-case (RFC 9113 section 8.2.1). */
static void out_field(struct h2c_out *o, struct ist name, struct ist value)
{
	char *lc = o->buf + o->used;
	size_t i;

	for (i = 0; i < name.len; i++)
		lc[i] = (char)LOWER(name.ptr[i]);
	o->used += name.len;
	out_nv(o, mk_ist(lc, name.len), value);
}

/* Room needed for the fields of <h>: entries and name bytes. */
static size_t out_fields_size(const struct http_hdr *h, int n)
{
	size_t bytes = 0;
	int i;

	for (i = 0; i < n; i++)
		bytes += h[i].name.len;
	return bytes;
}

/* What becomes of each field of an outgoing head. */
enum out_kind { OK_KEEP, OK_DROP, OK_TE, OK_CL, OK_HOST, OK_WS_KEY, OK_WS_ACCEPT };

static enum out_kind out_classify(struct ist name)
{
	switch (name.len) {
	case 2:
		if (IEQ(name, "te"))
			return OK_TE;
		break;
	case 4:
		if (IEQ(name, "host"))
			return OK_HOST;
		break;
	case 7:
		if (IEQ(name, "upgrade"))
			return OK_DROP;
		break;
	case 10:
		if (IEQ(name, "connection") || IEQ(name, "keep-alive"))
			return OK_DROP;
		break;
	case 14:
		if (IEQ(name, "content-length"))
			return OK_CL;
		break;
	case 16:
		if (IEQ(name, "proxy-connection"))
			return OK_DROP;
		break;
	case 17:
		if (IEQ(name, "transfer-encoding") || IEQ(name, "sec-websocket-key"))
			return IEQ(name, "transfer-encoding") ? OK_DROP : OK_WS_KEY;
		break;
	case 20:
		if (IEQ(name, "sec-websocket-accept"))
			return OK_WS_ACCEPT;
		break;
	}
	return OK_KEEP;
}

/* Flags of out_fields(). */
#define OF_DROP_HOST    0x01   /* Host went to :authority */
#define OF_DROP_CL      0x02   /* no Content-Length (tunnels, HTTP_F_CL_DROP) */
#define OF_DROP_WS      0x04   /* websocket key/accept: HTTP/1 only */

/* The live fields of <h> minus the connection-specific ones (RFC 9113
 * section 8.2.2). <msg> (may be NULL) gives the Content-Length rules;
 * <cl_buf> holds its merged value. */
static void out_fields(struct h2c_out *o, const struct http_hdr *h, int n,
                       const struct http_msg *msg, unsigned int of, struct ist cl)
{
	int i, cl_done = 0;

	for (i = 0; i < n; i++) {
		if (http_hdr_is_deleted(&h[i]))
			continue;
		switch (out_classify(h[i].name)) {
		case OK_DROP:
			continue;
		case OK_TE:
			if (list_has_token(h[i].value, "trailers"))
				out_nv(o, IST("te"), IST("trailers"));
			continue;
		case OK_HOST:
			if (of & OF_DROP_HOST)
				continue;
			break;
		case OK_CL:
			if ((of & OF_DROP_CL) || cl_done)
				continue;
			if (msg && (msg->flags & HTTP_F_CL_MERGED)) {
				cl_done = 1;
				out_nv(o, IST("content-length"), cl);
				continue;
			}
			break;
		case OK_WS_KEY:
		case OK_WS_ACCEPT:
			if (of & OF_DROP_WS)
				continue;
			break;
		case OK_KEEP:
			break;
		}
		out_field(o, h[i].name, h[i].value);
	}
}

/* The decimal Content-Length of <msg> in <o>'s buffer. */
static struct ist out_cl_value(struct h2c_out *o, const struct http_msg *msg)
{
	char tmp[24];
	int len = 0;
	uint64_t v = msg->content_length;
	char *dst = o->buf + o->used;

	do {
		tmp[len++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (int i = 0; i < len; i++)
		dst[i] = tmp[len - 1 - i];
	o->used += (size_t)len;
	return mk_ist(dst, (size_t)len);
}

/* A 101 to an extended CONNECT: its Sec-WebSocket-Accept must be the one
 * of the key the HTTP/1 server was given (HAProxy 2.6 answers 502 else). */
static int out_ws_accept_ok(const struct http_msg *msg, const struct h2c_stream *s)
{
	char want[H2C_WS_ACCEPT_LEN + 1];
	int i;

	if (!(s->flags & H2S_F_WS_KEY))
		return 1;
	if (ws_accept_of(s->ws_key, want) < 0)
		return 0;
	i = http_hdr_find(msg, IST("sec-websocket-accept"), 0);
	return i >= 0 && msg->hdrs[i].value.len == H2C_WS_ACCEPT_LEN &&
	       memcmp(msg->hdrs[i].value.ptr, want, H2C_WS_ACCEPT_LEN) == 0;
}

int h2c_out_response(struct h2c_out *o, const struct http_msg *msg, struct h2c_stream *s)
{
	unsigned int of = 0;
	int status = msg->status, rc;
	char *st;

	if (status < 100 || status > 999)
		return H2C_E_INVAL;
	if (status == 101) {
		if (!(s->flags & H2S_F_EXT_CONNECT))
			return H2C_E_UPGRADE;
		if (!out_ws_accept_ok(msg, s))
			return H2C_E_WS_ACCEPT;
		/* a 200; Sec-WebSocket-Accept is kept, as HAProxy 2.6 does */
		status = 200;
	}
	if (msg->flags & HTTP_F_CL_DROP)
		of |= OF_DROP_CL;
	/* RFC 9110 section 8.6: no Content-Length in a 2xx to CONNECT */
	if ((s->flags & (H2S_F_CONNECT | H2S_F_EXT_CONNECT)) && status >= 200 && status < 300)
		of |= OF_DROP_CL;
	rc = out_reserve(o, msg->nhdrs + 2, out_fields_size(msg->hdrs, msg->nhdrs) + 32);
	if (rc)
		return rc;
	st = o->buf;
	st[0] = (char)('0' + status / 100);
	st[1] = (char)('0' + status / 10 % 10);
	st[2] = (char)('0' + status % 10);
	o->used = 3;
	out_nv(o, IST(":status"), mk_ist(st, 3));
	out_fields(o, msg->hdrs, msg->nhdrs, msg, of,
	           (msg->flags & HTTP_F_CL_MERGED) ? out_cl_value(o, msg) : mk_ist(NULL, 0));
	return 0;
}

/* Scheme, authority and path of a request-target (RFC 9112 section 3.2). */
struct out_target {
	struct ist scheme;
	struct ist authority;   /* ptr NULL: none in the target */
	struct ist path;
};

static void out_split_target(struct ist uri, struct out_target *t)
{
	const char *p = uri.ptr, *end = uri.ptr + uri.len, *sep;
	const char *a;

	t->scheme = IST("https");   /* HAProxy 2.6 for an origin-form target */
	t->authority = mk_ist(NULL, 0);
	t->path = uri;
	if (!uri.len || uri.ptr[0] == '/' || (uri.len == 1 && uri.ptr[0] == '*'))
		return;
	sep = memchr(p, ':', uri.len);
	if (!sep || end - sep < 3 || sep[1] != '/' || sep[2] != '/')
		return;
	t->scheme = mk_ist(p, (size_t)(sep - p));
	a = sep + 3;
	for (p = a; p < end && *p != '/' && *p != '?'; p++)
		;
	t->authority = authority_normalize(mk_ist(a, (size_t)(p - a)), t->scheme);
	t->path = mk_ist(p, (size_t)(end - p));
}

/* Whether <msg> is an HTTP/1 websocket handshake (RFC 6455 section 4.1). */
static int out_is_websocket(const struct http_msg *msg)
{
	int i;

	if (msg->meth != HTTP_METH_GET || !(msg->flags & HTTP_F_CONN_UPGRADE))
		return 0;
	for (i = 0; i < msg->nhdrs; i++)
		if (!http_hdr_is_deleted(&msg->hdrs[i]) && IEQ(msg->hdrs[i].name, "upgrade") &&
		    list_has_token(msg->hdrs[i].value, "websocket"))
			return 1;
	return 0;
}

/* Extended CONNECT for a websocket handshake: the key stays with the
 * stream, to give the HTTP/1 client its accept. */
static void out_ws_keep_key(const struct http_msg *msg, struct h2c_stream *s)
{
	int i = http_hdr_find(msg, IST("sec-websocket-key"), 0);

	if (i < 0 || msg->hdrs[i].value.len > H2C_WS_KEY_LEN)
		return;
	memcpy(s->ws_key, msg->hdrs[i].value.ptr, msg->hdrs[i].value.len);
	s->ws_key[msg->hdrs[i].value.len] = '\0';
	s->flags |= H2S_F_WS_KEY;
}

int h2c_out_request(struct h2c_out *o, const struct http_msg *msg, struct h2c_stream *s,
                    int ext_ok)
{
	struct out_target t;
	unsigned int of;
	int rc, ws = out_is_websocket(msg), i;
	size_t bytes;
	struct ist path;

	if (!msg->method.len || !msg->uri.len)
		return H2C_E_INVAL;
	if (ws && ext_ok < 0)
		return H2C_E_AGAIN;
	if (ws && !ext_ok)
		return H2C_E_UPGRADE;
	out_split_target(msg->uri, &t);
	if (msg->meth == HTTP_METH_CONNECT)
		t.authority = msg->uri;
	if (ws && !t.authority.ptr) {
		/* RFC 8441 section 4: an extended CONNECT names its authority */
		i = http_hdr_find(msg, IST("host"), 0);
		if (i < 0)
			return H2C_E_INVAL;
		t.authority = msg->hdrs[i].value;
	}
	/* the client's Sec-WebSocket-Key goes along, as HAProxy 2.6 sends it:
	 * an RFC 8441 server ignores it, a proxy behind it passes it on */
	of = 0;
	if (t.authority.ptr)
		of |= OF_DROP_HOST;
	if (msg->flags & HTTP_F_CL_DROP)
		of |= OF_DROP_CL;
	bytes = out_fields_size(msg->hdrs, msg->nhdrs) + t.path.len + 32;
	rc = out_reserve(o, msg->nhdrs + 6, bytes);
	if (rc)
		return rc;
	/* RFC 9113 section 8.3.1: "/" when the target has no path */
	path = t.path;
	if (!path.len || path.ptr[0] == '?') {
		char *p = o->buf + o->used;

		p[0] = '/';
		memcpy(p + 1, t.path.ptr, t.path.len);
		o->used += t.path.len + 1;
		path = mk_ist(p, t.path.len + 1);
	}
	s->meth = msg->meth;
	if (ws) {
		out_nv(o, IST(":method"), IST("CONNECT"));
		out_nv(o, IST(":protocol"), IST("websocket"));
		s->flags |= H2S_F_EXT_CONNECT;
		out_ws_keep_key(msg, s);
	} else {
		out_nv(o, IST(":method"), msg->method);
	}
	if (msg->meth == HTTP_METH_CONNECT) {
		s->flags |= H2S_F_CONNECT;
		out_nv(o, IST(":authority"), t.authority);
	} else {
		out_nv(o, IST(":scheme"), t.scheme);
		if (t.authority.ptr)
			out_nv(o, IST(":authority"), t.authority);
		out_nv(o, IST(":path"), path);
	}
	out_fields(o, msg->hdrs, msg->nhdrs, msg, of,
	           (msg->flags & HTTP_F_CL_MERGED) ? out_cl_value(o, msg) : mk_ist(NULL, 0));
	return 0;
}

int h2c_out_trailers(struct h2c_out *o, const struct http_hdr *h, int n)
{
	int rc = out_reserve(o, n + 1, out_fields_size(h, n) + 1);

	if (rc)
		return rc;
	out_fields(o, h, n, NULL, OF_DROP_CL | OF_DROP_WS, mk_ist(NULL, 0));
	return 0;
}

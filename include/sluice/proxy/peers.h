/* `peers` sections and HAProxy's peers protocol 2.1 (HAProxy 2.6 manual,
 * section 3.5; the protocol: HAProxy's doc/peers.txt).
 *
 * A peers section names peers; the one whose name is the local peer name
 * (-L, `localpeer`, else the host name) is this process: it listens there.
 * Every other peer is remote: sluice connects to it, and accepts its
 * connections. Stick tables that name the section (`stick-table ...
 * peers <name>`, or `table` lines of the section) are kept in sync: local
 * updates are pushed to every remote peer, updates received are applied.
 *
 * Threads (see src/proxy/peers.c): a remote peer belongs to one thread
 * (its index modulo nbthread), whose task connects to it; a session
 * accepted on another thread stays there. <lock> of a peer protects
 * which session is its active one; nothing a request does takes it.
 */
#ifndef SLUICE_PROXY_PEERS_H
#define SLUICE_PROXY_PEERS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sluice/core/list.h>
#include <sluice/core/lock.h>
#include <sys/socket.h>
#include <sluice/net/addr.h>

#define PEERS_MAX_REMOTE 64   /* a bit each in a table entry's pending mask */

struct peer_sess;
struct peers;
struct task;

/* Status of the last handshake, as HAProxy's `show peers` names them. */
enum peer_status {
	PEER_ST_NONE = 0,
	PEER_ST_CONNECTED,   /* our hello answered 200 ("ESTA") */
	PEER_ST_ACCEPTED,    /* their hello accepted ("ESTA") */
	PEER_ST_CONNREFUSED, /* could not connect / closed ("CONN") */
	PEER_ST_BADVERSION,
	PEER_ST_BADPEER,     /* 503/504 */
	PEER_ST_PROTOERR,
	PEER_ST_TRYAGAIN,
};

struct peer {
	struct peer *next;
	char *name;
	char *file;
	int line;
	int local;                   /* this process */
	int has_addr;
	struct sl_addr addr;         /* where to connect (remote) */
	struct peers *section;
	int bit;                     /* remote peers: index in pending masks */
	int tid;                     /* thread of its connector task */
	/* run time */
	struct sl_lock lock;         /* protects <active> */
	struct peer_sess *active;    /* established session, or NULL */
	struct task *task;           /* connector (thread <tid>) */
	struct peer_sess *out;       /* outgoing session in progress (thread <tid>) */
	uint64_t next_try_ms;        /* thread <tid> */
	int backoff_ms;              /* thread <tid> */
	/* statistics and state for `show peers`, relaxed atomics */
	_Atomic int status;          /* enum peer_status */
	_Atomic uint64_t last_change_ms;
	_Atomic uint32_t new_conn, conn_ok, hello_rcvd, updates_sent, updates_rcvd;
	_Atomic int appstate;        /* 0 none, 1 connecting, 2 established */
};

struct peers {
	struct peers *next;
	char *name;
	char *file;
	int line;
	int disabled;
	int has_peer_line;           /* `peer` lines (no `bind` then) */
	int has_bind_line;
	struct peer *peers;          /* in configuration order */
	struct peer *local;          /* NULL: not part of this section */
	int nb_remote;
	struct list binds;           /* struct bind_conf of the local peer */
	char *bind_opts_file;        /* default-bind / default-server: accepted */
	uint64_t resync_deadline_ms; /* learning from a peer until then */
	/* where this process's local peer listens, found at start-up: an
	 * old worker connects there to teach the new one (reload) */
	struct sockaddr_storage local_ss;
	unsigned int local_sslen;
	_Atomic int resync_done;
};

/* The section called <name>, or NULL. */
struct peers *peers_find(const char *name);
struct peers *peers_first(void);
/* Frees every section (exit, the configuration fuzzer). No thread runs. */
void peers_free_all(void);

/* ---- protocol (src/proxy/peers_proto.c): pure, no allocation ---- */

#define PEERS_PROTO_ID   "HAProxyS"
#define PEERS_PROTO_VER  "2.1"

enum {
	PEERS_CLASS_CTRL = 0,
	PEERS_CLASS_ERROR = 1,
	PEERS_CLASS_STKT = 10,
	PEERS_CLASS_RESERVED = 255,
};
enum {
	PEERS_CTRL_RESYNCREQ = 0,
	PEERS_CTRL_RESYNCFINISHED = 1,
	PEERS_CTRL_RESYNCPARTIAL = 2,
	PEERS_CTRL_RESYNCCONFIRM = 3,
	PEERS_CTRL_HEARTBEAT = 4,
};
enum {
	PEERS_ERR_PROTO = 0,
	PEERS_ERR_SIZELIMIT = 1,
};
enum {
	PEERS_STKT_UPDATE = 0x80,
	PEERS_STKT_INCUPDATE = 0x81,
	PEERS_STKT_DEFINE = 0x82,
	PEERS_STKT_SWITCH = 0x83,
	PEERS_STKT_ACK = 0x84,
	PEERS_STKT_UPDATE_TIMED = 0x85,
	PEERS_STKT_INCUPDATE_TIMED = 0x86,
};
/* key types on the wire (HAProxy's sample types) */
enum {
	PEERS_KT_SINT = 2,
	PEERS_KT_IPV4 = 4,
	PEERS_KT_IPV6 = 5,
	PEERS_KT_STR = 6,
	PEERS_KT_BIN = 7,
};

#define PEERS_MAX_MSG    (1 << 20)   /* larger messages: size limit error */
#define PEERS_DICT_SIZE  128         /* server_key cache entries */
#define PEERS_NB_DT      25          /* data types known on the wire */

/* HAProxy's variable-length integers: 1 to 10 bytes. */
int peers_varint_put(uint8_t *p, size_t room, uint64_t v);
/* -1 when truncated or too long; else the bytes read. */
int peers_varint_get(const uint8_t *p, size_t len, uint64_t *v);

/* A message cut out of a stream of bytes. */
struct peers_msg {
	uint8_t cls;
	uint8_t type;
	const uint8_t *data;         /* variable-length messages: the payload */
	size_t len;
};
/* The next message of <p>: bytes it takes, 0 when more are needed, -1 on
 * a malformed header, -2 when it exceeds PEERS_MAX_MSG. */
long peers_msg_cut(const uint8_t *p, size_t len, struct peers_msg *m);

/* A table definition, as sent or received. */
struct peers_def {
	uint64_t id;                 /* the sender's id of the table */
	const uint8_t *name;         /* not NUL-terminated */
	size_t name_len;
	uint64_t key_type;           /* PEERS_KT_* */
	uint64_t key_len;
	uint64_t data_types;         /* bit i: data type i in updates */
	uint64_t expire;             /* ms */
	uint32_t nbelem[PEERS_NB_DT];  /* arrays (0: not given, 1 assumed) */
	uint32_t period[PEERS_NB_DT];  /* rates */
};
/* Encodes a definition message (header included). Bytes, or -1 (room). */
int peers_def_encode(uint8_t *p, size_t room, const struct peers_def *d);
/* Parses the payload of a definition message. 0, or -1. */
int peers_def_decode(const uint8_t *p, size_t len, struct peers_def *d);

/* One value of an update, handed to the receiver as it is decoded. */
enum peers_vkind { PEERS_V_INT, PEERS_V_FRQ, PEERS_V_DICT };
struct peers_val {
	int dt;                      /* data type */
	unsigned int idx;            /* element of an array */
	enum peers_vkind kind;
	uint64_t v[3];               /* INT: v[0]; FRQ: age (ms), curr, prev */
	const char *str;             /* DICT: the name (cache), or NULL */
	size_t str_len;
};
/* The kind of data type <dt> on the wire: 0 int, 1 rate, 2 dictionary,
 * -1 unknown. */
int peers_dt_wire_kind(int dt);

/* A decoded update: the key, then <cb> called for each value. The
 * server_key dictionary of the session, <dict> (PEERS_DICT_SIZE entries
 * of PEERS_DICT_STRMAX bytes + 1), is updated as entries come. */
#define PEERS_DICT_STRMAX 255
struct peers_upd {
	int has_id;
	uint32_t id;
	int timed;
	uint32_t expire;             /* ms left, timed updates */
	const uint8_t *key;
	size_t key_len;
};
/* <def>: the sender's definition. Returns 0, or -1 on malformed input.
 * <cb> may be NULL (the fuzzer); it returns non-zero to stop (an error). */
int peers_upd_decode(uint8_t type, const uint8_t *p, size_t len, const struct peers_def *def,
                     char (*dict)[PEERS_DICT_STRMAX + 1], struct peers_upd *u,
                     int (*cb)(void *arg, const struct peers_val *v), void *arg);

/* A little writer over a byte array: peers_wr_* set <err> when out of room. */
struct peers_wr {
	uint8_t *p;
	size_t len, room;
	int err;
};
void peers_wr_byte(struct peers_wr *w, uint8_t b);
void peers_wr_varint(struct peers_wr *w, uint64_t v);
void peers_wr_bytes(struct peers_wr *w, const void *b, size_t n);
void peers_wr_u32(struct peers_wr *w, uint32_t v);
/* Frames w->p[hdr .. w->len) as a variable-length message of <cls>/<type>
 * whose payload starts at <start> (room was left by peers_wr_msg_begin).
 * Returns 0 or -1. */
size_t peers_wr_msg_begin(struct peers_wr *w);
int peers_wr_msg_end(struct peers_wr *w, size_t start, uint8_t cls, uint8_t type);

/* ---- run time (src/proxy/peers.c) ---- */

struct listener;
struct sockaddr_storage;
/* Takes a connection accepted on a peers section's bind. */
int peers_accept(struct listener *l, int fd, const struct sockaddr_storage *from);

/* `show peers` (src/mgmt/cli_peers.c) reads these */
uint64_t peers_now_ms(void);
const char *peer_status_str(int st);

#endif

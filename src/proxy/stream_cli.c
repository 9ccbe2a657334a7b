/* The CLI's view of the streams (show sess, shutdown session, shutdown
 * sessions server), apart from the stream's own code in stream.c.
 *
 * Each thread's streams are in its list thr_streams[tid], whose lock the
 * owner takes only to link and unlink a stream (at creation and release:
 * a linked stream is alive). A walker takes it for one bounded batch at a
 * time and leaves a cursor node in the list to resume after it, so that no
 * lock hold grows with the number of streams; walkers run one at a time
 * (dump_lock), so that none takes another's cursor for a stream. Fields of
 * a stream the owner writes are read racily, for display. Nothing here
 * changes a stream: `shutdown session` sets its kill flag (atomic) and
 * wakes its task, and the owner ends it (stream.c).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/core/clock.h>
#include <sluice/core/global.h>
#include <sluice/core/sched.h>
#include <sluice/mgmt/cli.h>
#include <sluice/net/addr.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/server.h>
#include <sluice/proxy/stream.h>
#include <sluice/proxy/stream_int.h>

static const char *const state_names[] = {
	"PROXY_HDR", "ASSIGN", "QUEUED", "TURNAROUND", "CONNECT", "CONNECTING", "EST",
	"HTTP_REQ", "HTTP_BODY", "HTTP_XFER", "TARPIT", "LINGER", "CLOSED"
};

/* What `show sess` prints of a stream, copied under the list lock. Names
 * point to configuration strings, which live as long as the process. */
struct sess_line {
	uintptr_t addr;
	struct sockaddr_storage src;
	const char *fe, *be, *srv;
	char term[3];
	uint64_t accept_ms;
	int state;
	size_t rq, rp;
	int cfd, sfd;           /* client's and server's connections */
	int32_t csid, ssid;     /* their HTTP/2 stream ids, 0 for HTTP/1 */
};

#define SESS_DUMP_BATCH 64

/* Copies up to <max> streams following <cursor> into <out>, then moves the
 * cursor after them. Returns the number copied; *end tells whether the end
 * of the list was reached. Called with the list lock held: O(max). */
static int sess_copy_batch(struct list *head, struct list *cursor, struct sess_line *out,
                           int max, int *end)
{
	struct list *pos = cursor->next;
	int n = 0;

	while (pos != head && n < max) {
		struct stream *st = list_elem(pos, struct stream, list);
		struct sess_line *l = &out[n++];

		l->addr = (uintptr_t)st;
		l->src = st->cli.src;
		l->fe = st->fe->name;
		l->be = st->be ? st->be->name : "<NONE>";
		l->srv = st->srv ? st->srv->name : "<none>";
		memcpy(l->term, st->term, sizeof(l->term));
		l->accept_ms = st->accept_ms;
		l->state = st->st;
		l->rq = st->req.data;
		l->rp = st->res.data;
		l->cfd = st->h2s ? st->h2_cfd : st->cli.ph.fd;
		l->csid = st->h2s ? st->h2_csid : 0;
		l->sfd = st->h2bs ? st->h2_sfd : st->sc.ph.fd;
		l->ssid = st->h2bs ? st->h2_ssid : 0;
		pos = pos->next;
	}
	list_del_init(cursor);
	list_append(pos, cursor);   /* just before <pos>: where to resume */
	*end = pos == head;
	return n;
}

/* A connection as `show sess` names it: "fd12", "fd12/h2:3" for stream 3
 * of an HTTP/2 connection, "-" for none. */
static void sess_conn_str(char *out, size_t room, int fd, int32_t sid)
{
	if (fd < 0)
		snprintf(out, room, "-");
	else if (sid > 0)
		snprintf(out, room, "fd%d/h2:%d", fd, (int)sid);
	else
		snprintf(out, room, "fd%d", fd);
}

/* `show sess`. The per-thread list lock is never held for more than one
 * batch of SESS_DUMP_BATCH streams, however many sessions there are: a
 * cursor node left in the list marks where the next batch starts (the owner
 * thread appends and unlinks its streams around it). One dump at a time, so
 * that the only foreign node a dump can meet is its own cursor. */
/* Walkers of the stream lists that leave a cursor node in them (show sess,
 * shutdown session): one at a time, so that none takes another's cursor
 * for a stream. */
static pthread_mutex_t dump_lock = PTHREAD_MUTEX_INITIALIZER;

void stream_dump_all(struct cli_out *out, int max)
{
	struct sess_line batch[SESS_DUMP_BATCH];
	uint64_t now = th_ctx ? th_ctx->now_ms : clock_mono_ms();
	int shown = 0;

	pthread_mutex_lock(&dump_lock);
	for (int tid = 0; tid < global.nbthread && shown < max; tid++) {
		struct list cursor;
		int end = 0;

		lock_take(&thr_streams[tid].lock);
		list_insert(&thr_streams[tid].head, &cursor);
		lock_release(&thr_streams[tid].lock);
		while (!end && shown < max) {
			int want = max - shown < SESS_DUMP_BATCH ? max - shown : SESS_DUMP_BATCH, n;

			lock_take(&thr_streams[tid].lock);
			n = sess_copy_batch(&thr_streams[tid].head, &cursor, batch, want, &end);
			lock_release(&thr_streams[tid].lock);
			for (int i = 0; i < n; i++) {
				const struct sess_line *l = &batch[i];
				char src[64], cc[32], sc[32];

				addr_host_str(&l->src, src, sizeof(src));
				sess_conn_str(cc, sizeof(cc), l->cfd, l->csid);
				sess_conn_str(sc, sizeof(sc), l->sfd, l->ssid);
				cli_printf(out, "%#lx: proto=%s src=%s:%d fe=%s be=%s srv=%s ts=%s "
				           "age=%llus thread=%d state=%s rq=%zu rp=%zu cli=%s srvconn=%s\n",
				           (unsigned long)l->addr,
				           l->src.ss_family == AF_INET6 ? "tcpv6" :
				           l->src.ss_family == AF_UNIX ? "unix_stream" : "tcpv4",
				           src, addr_port(&l->src), l->fe, l->be, l->srv, l->term,
				           (unsigned long long)(now - l->accept_ms) / 1000, tid + 1,
				           state_names[l->state], l->rq, l->rp, cc, sc);
			}
			shown += n;
		}
		lock_take(&thr_streams[tid].lock);
		list_del_init(&cursor);
		lock_release(&thr_streams[tid].lock);
	}
	pthread_mutex_unlock(&dump_lock);
	if (shown >= max)
		cli_printf(out, "(output limited to %d streams)\n", max);
}

/* Sets the kill flag of the streams of <tid> that <match> selects and
 * wakes them, SESS_DUMP_BATCH streams per hold of the list lock (a cursor
 * node marks where to resume). The lock keeps a stream from being freed
 * while it is looked at: its owner unlinks it under the lock before
 * destroying its task. Returns how many were asked. */
static int stream_kill_walk(int tid, int (*match)(const struct stream *, const void *),
                            const void *arg, int stop_at_first, char why)
{
	struct list cursor, *head = &thr_streams[tid].head;
	int killed = 0, end = 0;

	lock_take(&thr_streams[tid].lock);
	list_insert(head, &cursor);
	lock_release(&thr_streams[tid].lock);
	while (!end && !(stop_at_first && killed)) {
		struct list *pos;
		int n = 0;

		lock_take(&thr_streams[tid].lock);
		for (pos = cursor.next; pos != head && n < SESS_DUMP_BATCH; pos = pos->next, n++) {
			struct stream *st = list_elem(pos, struct stream, list);

			if (!match(st, arg))
				continue;
			atomic_store(&st->kill_req, why);
			task_wakeup(st->task, TASK_WOKEN_OTHER);
			killed++;
			if (stop_at_first)
				break;
		}
		end = pos == head;
		list_del_init(&cursor);
		if (!end)
			list_append(pos, &cursor);   /* just before <pos> */
		lock_release(&thr_streams[tid].lock);
	}
	if (!end) {
		lock_take(&thr_streams[tid].lock);
		list_del_init(&cursor);
		lock_release(&thr_streams[tid].lock);
	}
	return killed;
}

static int match_id(const struct stream *st, const void *arg)
{
	return (uintptr_t)st == *(const uintptr_t *)arg;
}

/* st->srv is the owner's: read racily, as show sess does (a stream that
 * just left the server may be asked to end, one just assigned missed) */
static int match_server(const struct stream *st, const void *arg)
{
	return st->srv == arg;
}

int stream_shutdown_by_id(uintptr_t id)
{
	int found = 0;

	pthread_mutex_lock(&dump_lock);
	for (int tid = 0; tid < global.nbthread && !found; tid++)
		found = stream_kill_walk(tid, match_id, &id, 1, 'K');
	pthread_mutex_unlock(&dump_lock);
	return found ? 0 : -1;
}

int stream_shutdown_server(const struct server *srv, char why)
{
	int n = 0;

	pthread_mutex_lock(&dump_lock);
	for (int tid = 0; tid < global.nbthread; tid++)
		n += stream_kill_walk(tid, match_server, srv, 0, why);
	pthread_mutex_unlock(&dump_lock);
	return n;
}

int stream_count(void)
{
	int n = 0;

	for (int tid = 0; tid < global.nbthread; tid++)
		n += thr_streams[tid].count;   /* racy read, display only */
	return n;
}


/* Listeners: the sockets of `bind` lines and stats sockets. */
#ifndef SLUICE_NET_LISTENER_H
#define SLUICE_NET_LISTENER_H

#include <stdatomic.h>
#include <sys/socket.h>
#include <sluice/core/global.h>
#include <sluice/core/list.h>
#include <sluice/core/poller.h>

struct bind_conf;
struct proxy;
struct listener;

/* Called on the accepting thread with a new non-blocking socket. Returns 0,
 * or -1 after closing <fd> itself. */
typedef int (*accept_fn)(struct listener *l, int fd, const struct sockaddr_storage *from);

struct listener {
	struct list list;                /* all listeners */
	struct bind_conf *bc;
	struct proxy *fe;                /* NULL for the CLI */
	accept_fn on_accept;
	int shared_fd;                   /* inherited / unix: one socket, or -1 */
	int fds[MAX_THREADS];            /* per-thread SO_REUSEPORT sockets */
	struct poll_handle ph[MAX_THREADS];
	uint8_t active[MAX_THREADS];     /* registered in that thread's epoll (owner) */
	uint8_t paused[MAX_THREADS];     /* paused for a limit (owner) */
	uint8_t disabled[MAX_THREADS];   /* unregistered because its frontend is
	                                  * disabled or shut down (owner) */
	_Atomic int nbconn;              /* connections accepted and alive */
	int maxconn;                     /* bind maxconn, 0 = none */
	int closed;                      /* soft stop: set by its threads */
};

extern struct list listeners;

/* Creates the listeners of every bind line (frontends and CLI) and binds
 * their sockets. Reports errors itself ("[ALERT] file:line: ..."). Returns
 * the number of errors. Runs before the threads start. */
int  listeners_bind_all(void);

/* Bind lines of other modules (a peers section's local peer): their
 * bind_conf's on_accept takes the connections. Configuration time. */
void listener_register_binds(struct list *binds);
void listener_unregister_binds(struct list *binds);

/* The listening sockets listeners_bind_all() will hold, counted from the
 * configuration before they exist (they count in maxsock). */
int  listeners_count_sockets(void);

/* Must be called when a connection accepted by <l> ends (any thread):
 * lowers counters and resumes paused listeners. */
void listener_conn_closed(struct listener *l);

/* Called on each thread when the soft stop begins (SIGUSR1), from that
 * thread, before its listeners close: connections that can say goodbye
 * (HTTP/2 GOAWAY) start doing so. Register before the threads start. */
struct listener_stop_hook {
	void (*fn)(int tid);
	struct listener_stop_hook *next;
};
void listener_register_stop(struct listener_stop_hook *h);

/* Wakes the threads that paused a listener, so that they check limits again
 * (after a connection ended or a limit was raised). */
void listeners_resume_all(void);

/* Soft stop: every thread closes its listening sockets. */
void listeners_soft_stop(void);
/* Whether every thread has unregistered (and drained) its listening
 * sockets since listeners_soft_stop(): until then a thread may still
 * accept a connection, so the process must not end. */
int  listeners_soft_stop_done(void);

/* The CLI's `disable frontend`, `enable frontend` and `shutdown frontend`:
 * changes fe->fe_state to <state> (PX_FE_*) and applies it to the
 * frontend's listeners. The TCP sockets sluice bound itself stop listening
 * at once (connection attempts are refused, as with HAProxy, which
 * releases the port), or listen again; inherited (fd@) and UNIX sockets
 * are only unregistered. Each thread then unregisters or registers its own
 * sockets, and closes its per-thread ones on shutdown. Returns 0, or -1
 * with a message in <err> if a socket could not listen again. */
int listeners_fe_set_state(struct proxy *fe, int state, char *err, size_t errlen);

/* Master-worker handover (src/mgmt/mworker.c). The key names a socket
 * by what a new configuration must share with the old one to reuse it:
 * "fe|<address>|v6only=N|v4v6=N" (or "cli|..." for a stats socket). */
struct bind_conf;
void listener_key(const struct bind_conf *bc, char *buf, size_t len);
/* Calls <fn> for each listening socket this process bound (not the
 * inherited fd@ ones, which the master already holds). Stops at the
 * first -1, which it returns. */
int  listeners_for_each_socket(int (*fn)(const char *key, int fd, void *arg), void *arg);
/* A new process took this one's sockets (_getsocks, for -x): on soft stop
 * the stats sockets stop too, as they are the new process's now. */
void listeners_mark_exposed(void);

#endif

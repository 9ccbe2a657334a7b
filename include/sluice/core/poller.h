/* epoll wrapper. A pollable object embeds a struct poll_handle. Two ways to
 * register one:
 *  - poller_add/mod/del: the epoll event carries a pointer to the handle
 *    (listeners, which register one descriptor in every thread, and the
 *    threads' eventfds);
 *  - poller_fd_*: the event carries the descriptor, and a table indexed by
 *    descriptor names its current handle (connections). A connection then
 *    changes owner on its thread (stream -> idle pool -> stream, or from the
 *    stream that released a server slot to the one it served) by rewriting
 *    one table entry, without a syscall.
 * Rule that makes both safe: a poll callback never frees a handle; teardown
 * happens in tasks, which run after the whole batch of events has been
 * dispatched. A table entry is only written by the thread whose epoll holds
 * the descriptor (or, before that, by the thread about to register it). */
#ifndef SLUICE_CORE_POLLER_H
#define SLUICE_CORE_POLLER_H

#include <stdint.h>
#include <sys/epoll.h>

struct poll_handle;
typedef void (*poll_cb)(struct poll_handle *h, uint32_t events);

struct poll_handle {
	int fd;
	poll_cb cb;
	void *owner;   /* object the handle belongs to */
};

/* Registers <h> in the current thread's epoll. Returns 0 or -1 (errno). */
int poller_add(struct poll_handle *h, uint32_t events);
int poller_mod(struct poll_handle *h, uint32_t events);
/* Removes <h> from the current thread's epoll (before close()). */
void poller_del(struct poll_handle *h);

/* Allocates the descriptor table (sized by RLIMIT_NOFILE). Once, before
 * any thread registers a connection. Returns 0 or -1. */
int poller_init(void);

/* Registers <h>'s descriptor in the current thread's epoll, through the
 * table. Returns 0 or -1 (errno; EMFILE beyond the table). */
int poller_fd_add(struct poll_handle *h, uint32_t events);
/* The descriptor <fd>, registered by this thread, now belongs to <h>, with
 * the same events. <h> NULL parks it: its events are kept, and delivered to
 * the next handle set here. No syscall. */
void poller_fd_set_owner(int fd, struct poll_handle *h);
/* Whether the calling thread's epoll holds <fd> (registered through the
 * table and not removed since). */
int poller_fd_is_local(int fd);
/* Removes <fd> from the current thread's epoll; its table entry is left to
 * whoever registers it next (possibly another thread, already). */
void poller_fd_del(int fd);
/* Forgets <fd> before it is closed (close() removes it from the epoll). */
void poller_fd_forget(int fd);

/* One wait (at most <timeout_ms>) and dispatch on the calling thread's
 * epoll, without running tasks: for tests. Returns epoll_wait's count. */
int poller_poll_once(int timeout_ms);

/* Runs the calling thread's event loop until hard stop. */
void poller_loop(void);

#endif

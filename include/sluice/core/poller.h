/* epoll wrapper. A pollable object embeds a struct poll_handle; the epoll
 * event carries a pointer to it. Rule that makes this safe: a poll callback
 * never frees a handle; teardown happens in tasks, which run after the whole
 * batch of events has been dispatched. */
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

/* Runs the calling thread's event loop until hard stop. */
void poller_loop(void);

#endif

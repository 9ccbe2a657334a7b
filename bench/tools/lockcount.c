/* LD_PRELOAD shim for the TLS benchmarks: counts pthread read-write lock
 * acquisitions (what OpenSSL 3's CRYPTO_THREAD_*_lock come down to) and how
 * many of them had to wait, and writes the totals to $LOCKCOUNT_OUT when
 * the process receives SIGUSR2 (and at exit). Loaded into sluice or
 * HAProxy by bench/tls_locks.sh; not part of sluice.
 *
 *   cc -O2 -shared -fPIC -o lockcount.so lockcount.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int (*real_rd)(pthread_rwlock_t *);
static int (*real_wr)(pthread_rwlock_t *);
static int (*real_tryrd)(pthread_rwlock_t *);
static int (*real_trywr)(pthread_rwlock_t *);
static _Atomic unsigned long n_rd, n_wr, n_rd_wait, n_wr_wait;

static void dump(void)
{
	const char *path = getenv("LOCKCOUNT_OUT");
	char tmp[4096];
	FILE *f;

	/* written aside then renamed: a reader never sees half a file */
	if (!path || snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp) ||
	    !(f = fopen(tmp, "w")))
		return;
	fprintf(f, "rdlock %lu wrlock %lu rdlock_waited %lu wrlock_waited %lu\n",
	        atomic_load(&n_rd), atomic_load(&n_wr), atomic_load(&n_rd_wait),
	        atomic_load(&n_wr_wait));
	fclose(f);
	rename(tmp, path);
}

static void *dumper(void *arg)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	sigset_t all;

	(void)arg;
	sigfillset(&all);   /* the process's signals are for its own threads */
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		dump();
		nanosleep(&ts, NULL);
	}
	return NULL;
}

__attribute__((constructor)) static void init(void)
{
	pthread_t t;

	real_rd = dlsym(RTLD_NEXT, "pthread_rwlock_rdlock");
	real_wr = dlsym(RTLD_NEXT, "pthread_rwlock_wrlock");
	real_tryrd = dlsym(RTLD_NEXT, "pthread_rwlock_tryrdlock");
	real_trywr = dlsym(RTLD_NEXT, "pthread_rwlock_trywrlock");
	pthread_create(&t, NULL, dumper, NULL);
}

int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	atomic_fetch_add_explicit(&n_rd, 1, memory_order_relaxed);
	if (real_tryrd(l) == 0)
		return 0;
	atomic_fetch_add_explicit(&n_rd_wait, 1, memory_order_relaxed);
	return real_rd(l);
}

int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	atomic_fetch_add_explicit(&n_wr, 1, memory_order_relaxed);
	if (real_trywr(l) == 0)
		return 0;
	atomic_fetch_add_explicit(&n_wr_wait, 1, memory_order_relaxed);
	return real_wr(l);
}

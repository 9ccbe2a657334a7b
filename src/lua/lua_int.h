/* Lua binding, internal declarations shared by the files of src/lua/.
 *
 * States ("VMs"):
 * - the shared state: every `lua-load` script, one lua_State for the whole
 *   process, entered under vm->lock (an sl_lock of kind LK_LUA, visible in
 *   `show locks`). The lock is held only while Lua code runs: a coroutine
 *   that yields (forced yield, core.yield, core.msleep) releases it, and
 *   takes it again when its stream or task resumes it.
 * - per-thread states: every `lua-load-per-thread` script, loaded once in
 *   each thread's own lua_State, entered without any lock (only the owner
 *   thread ever runs it).
 *
 * Registered functions (actions, fetches, converters, services, tasks, CLI
 * commands) are known by name in one process-wide list built at start-up
 * (configuration time, one thread) and read-only afterwards; each keeps a
 * reference to its Lua function in the state that registered it (the
 * shared one, or one reference per thread state).
 *
 * A running piece of Lua is a `struct lua_run`: a coroutine of one state,
 * what it may touch (stream, rule environment, sample context) and its
 * limits (deadline, whether it may yield). The thread's current run is
 * `lua_cur`; a nested run (a Lua fetch called from a Lua action through
 * txn.f) saves and restores it.
 */
#ifndef SLUICE_LUA_INT_H
#define SLUICE_LUA_INT_H

#include <stdint.h>
#include <lua.h>
#include <lauxlib.h>
#include <sluice/core/global.h>
#include <sluice/core/lock.h>

struct stream;
struct act_env;
struct smp_ctx;
struct proxy;
struct task;
struct lua_sock;

struct lua_vm {
	lua_State *L;
	int tid;                 /* owner thread, -1 for the shared state */
	struct sl_lock lock;     /* shared state only */
	size_t mem;              /* bytes allocated (under lock / owner only) */
};

enum lua_fn_kind {
	LFN_ACTION = 0, LFN_FETCH, LFN_CONV, LFN_SERVICE, LFN_TASK, LFN_INIT, LFN_CLI,
};

/* A registered function. */
struct lua_fn {
	struct lua_fn *next;
	enum lua_fn_kind kind;
	char *name;                  /* as registered ("foo"; CLI: words joined by ' ') */
	int shared_ref;              /* in the shared state, or LUA_NOREF */
	int thread_ref[MAX_THREADS]; /* per-thread states (0: none) */
	int nargs;                   /* actions: arguments the rule takes */
	unsigned int sets;           /* actions: ACT_F_* */
	int svc_tcp;                 /* services: "tcp" mode */
	char *cli_usage;
	void *reg;                   /* what was registered with the engine */
};

/* A running (or suspended) piece of Lua code. */
struct lua_run {
	struct lua_vm *vm;
	lua_State *co;               /* the coroutine */
	int co_ref;                  /* its reference in vm's registry */
	const struct lua_fn *fn;
	const char *what;            /* "function", "sample-fetch", "converter"... */
	uint64_t start_ms;           /* first resume (clock_mono_ms) */
	uint64_t slice_ms;           /* this resume */
	uint64_t timeout_ms;         /* 0: none */
	uint64_t wake_ms;            /* suspended until (0: next loop) */
	int yieldable;
	int nargs;                   /* arguments waiting on the stack for the first resume */
	int started;
	int done;                    /* txn:done() / core.done() was called */
	int replied;                 /* txn:done(reply) wrote a reply */
	int timed_out;               /* ended by its time limit */
	int entered;                 /* holds its state (lock) until lua_run_free() */
	int io_wait;                 /* yielded for the client's I/O (TCP service) */
	/* context the API reaches */
	struct stream *s;
	struct act_env *env;
	struct smp_ctx *smp;
	struct proxy *px;
	const void *rule;            /* the rule that started it (actions) */
	int dir;                     /* SMP_DIR_* of the rule set */
	void *svc;                   /* services: struct lua_applet */
	void *cli;                   /* CLI: struct cli_out */
	struct task *task;           /* woken by its sockets' I/O (NULL: no sockets) */
	struct lua_sock *socks;      /* core.tcp() sockets it made (lua_sock.c) */
};

extern __thread struct lua_run *lua_cur;

/* settings (global section) */
struct lua_settings {
	int forced_yield;            /* instructions between hook calls */
	size_t maxmem;               /* bytes, 0: none */
	int session_timeout_ms;      /* actions, fetches, converters */
	int task_timeout_ms;         /* tasks (0: none) */
	int service_timeout_ms;      /* services */
	int loaded;                  /* some script was loaded */
};
extern struct lua_settings lua_cfg;

/* The shared state (NULL until a lua-load), and the per-thread ones. */
extern struct lua_vm *lua_shared;
extern struct lua_vm *lua_thread_vm[MAX_THREADS];
extern struct lua_fn *lua_fns;

/* The VM of state <L> (any coroutine of it). */
static inline struct lua_vm *lua_vm_of(lua_State *L)
{
	return *(struct lua_vm **)lua_getextraspace(L);
}

/* The registered function of <kind> named <name>, or NULL. */
struct lua_fn *lua_fn_find(enum lua_fn_kind kind, const char *name);
/* The state and reference to call <fn> with on the calling thread
 * (thread 0 at start-up). Returns the VM, or NULL. */
struct lua_vm *lua_fn_target(const struct lua_fn *fn, int *ref);

/* Runs: create (pushes the function; the caller pushes the arguments and
 * sets run->nargs), resume, free. lua_run_new() takes the VM's lock when
 * the state is shared and lua_run_resume() releases it at each return
 * (yield or end); lua_run_free() takes it again to drop the coroutine. */
struct lua_run *lua_run_new(const struct lua_fn *fn, const char *what, int yieldable,
                            uint64_t timeout_ms);
/* Returns LUA_OK (results on run->co's stack), LUA_YIELD, or an error
 * code with a message already reported through lua_report(). Once the
 * run ended (anything but LUA_YIELD) the state stays entered, so that the
 * caller reads the results under the lock, until lua_run_free(). */
int lua_run_resume(struct lua_run *run);
void lua_run_free(struct lua_run *run);
/* In the continuation of a yield: raises "execution timeout" once the
 * current run's time limit has passed (a sleeping or waiting script does
 * not run the count hook). */
void lua_deadline_check(lua_State *L);
/* Enter/leave the VM of a run (lock for the shared state). Nesting on
 * the same thread is counted. */
void lua_vm_enter(struct lua_vm *vm);
void lua_vm_leave(struct lua_vm *vm);

/* Runtime errors: an [ALERT] line on stderr (unless quiet) and a log line
 * at level err on <px>'s log targets (or the global ones). */
void lua_report(struct proxy *px, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The marker txn:done() / core.done() raise to stop the script. */
extern char lua_done_marker;
int lua_raise_done(lua_State *L);

/* API modules */
void lua_api_core(lua_State *L);      /* lua_core_api.c: core.*, act.* */
void lua_api_txn(lua_State *L);       /* lua_txn.c: TXN, Fetches, Converters, HTTP */
void lua_api_applet(lua_State *L);    /* lua_svc.c */
void lua_api_px(lua_State *L);        /* lua_px.c: Proxy, Server */
void lua_px_publish(lua_State *L);    /* core.proxies/frontends/backends */
void lua_api_sock(lua_State *L);      /* lua_sock.c: core.tcp(), Socket */
void lua_api_chn(lua_State *L);       /* lua_chn.c: Channel */
/* txn.req and txn.res on the TXN table at the top of the stack. */
void lua_push_channels(lua_State *L);
/* Closes the sockets of <run> (its state entered, its thread). */
void lua_socks_close(struct lua_run *run);
int lua_push_txn(lua_State *L, int http);
void lua_push_cli_applet(lua_State *L);

/* Sample <-> Lua */
struct sample;
void lua_push_sample(lua_State *L, const struct sample *smp, int as_string);
int lua_to_sample(lua_State *L, int idx, struct sample *smp, char *buf, size_t bufsz);

/* Registration glue (lua_reg.c) */
int lua_reg_action(struct lua_fn *fn, char *err, size_t errlen);
int lua_reg_fetch(struct lua_fn *fn, char *err, size_t errlen);
int lua_reg_conv(struct lua_fn *fn, char *err, size_t errlen);
int lua_reg_service(struct lua_fn *fn, char *err, size_t errlen);
int lua_reg_cli(struct lua_fn *fn, char *err, size_t errlen);
/* Starts the registered tasks (once the threads run). */
void lua_tasks_start(int tid);

#endif

/* libFuzzer target: whole configuration files through the real parser.
 *
 * The input is written to a memfd and parsed as a configuration file with
 * cfg_parse_path("/proc/self/fd/N"), then, when it has no error, checked
 * with cfg_postparse(), as main() does; everything built is then freed
 * (cfg_free.h) and the process-wide settings restored, so that each input
 * starts from the same state and memory does not grow.
 *
 * Nothing leaves the process: listeners and log sockets are only created
 * by main() after parsing, which this target never does. What the parser
 * itself would reach outside is fenced in while an input runs:
 *   - host names never reach DNS: getaddrinfo() is replaced by a resolver
 *     that answers numeric addresses, fails names ending in ".invalid",
 *     and maps every other name to the loopback address;
 *   - files (errorfile, acl -f, map(), lf-file...) open only inside
 *     FZ_DIR, which holds a few small files written at start-up, and the
 *     input itself: no /dev/zero, /dev/stdin or /proc/self/fd/0 to hang on.
 * The parser's messages go to /dev/null (FUZZ_CFG_VERBOSE=1 shows them);
 * sanitizer reports are written to the descriptor, not through stderr,
 * and still show.
 *
 * Two parts of the state are private to proxy.c: its list of defaults
 * sections and the last one seen. The list head is found once, from a
 * defaults section parsed at start-up (its neighbour is the head), which
 * lets each run free the defaults sections; the last one is reset by
 * parsing an empty "defaults" section after each input, so every input
 * starts as if preceded by one (which changes nothing: it holds the
 * built-in settings).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sluice/cfg/cfg.h>
#include <sluice/cfg/cfg_free.h>
#include <sluice/core/global.h>
#include <sluice/core/sched.h>
#include <sluice/core/wdt.h>
#include <sluice/proxy/proxy.h>

#define FZ_DIR "/tmp/sluice-fuzz-cfg"

/* Files the configurations may name (seeds use FZ_DIR/<name>). */
static const struct { const char *name, *text; } fz_files[] = {
	{ "map_acl.map", "# networks\n127.0.0.0/8 local\n10.0.0.0/8 ten\n" },
	{ "map_acl.lst", "192.168.0.0/16\n 172.16.0.1\n" },
	{ "map_acl_switch.map", "127.0.0.0/8 local\n" },
	{ "str.map", "/api api\n/static static\nexample.com web\n" },
	{ "hosts.lst", "www.example.com\nexample.org\n" },
	{ "502.http", "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\n"
	              "Content-Length: 4\r\n\r\nbad\n" },
	{ "503.http", "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n" },
	{ "body.txt", "hello\n" },
	{ "empty", "" },
};

static int cfg_fd = -1;
static char cfg_path[64];
static int sandbox_on;          /* an input is being parsed */
static FILE *devnull;
static struct global global_at_start;
static int shared_rq_at_start, wdt_period_at_start;
static struct list *defaults_head;   /* proxy.c's list of defaults sections */

/* ---- sandbox: files ---- */

static int path_allowed(const char *path)
{
	if (!sandbox_on)
		return 1;
	if (!path)
		return 0;
	if (strcmp(path, cfg_path) == 0)
		return 1;
	return strncmp(path, FZ_DIR "/", sizeof(FZ_DIR)) == 0 && !strstr(path, "/..");
}

FILE *fopen(const char *path, const char *mode)
{
	static FILE *(*real)(const char *, const char *);

	if (!real)
		real = (FILE *(*)(const char *, const char *))dlsym(RTLD_NEXT, "fopen");
	if (!path_allowed(path)) {
		errno = ENOENT;
		return NULL;
	}
	return real(path, mode);
}

int open(const char *path, int flags, ...)
{
	static int (*real)(const char *, int, ...);
	mode_t mode = 0;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;

		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	if (!real)
		real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	if (!path_allowed(path)) {
		errno = ENOENT;
		return -1;
	}
	return real(path, flags, mode);
}

/* ---- sandbox: names ---- */

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
                struct addrinfo **res)
{
	int family = hints ? hints->ai_family : AF_UNSPEC;
	size_t n = node ? strlen(node) : 0;
	struct {
		struct addrinfo ai;
		struct sockaddr_storage ss;
	} *r;
	struct sockaddr_in *sin;
	struct sockaddr_in6 *sin6;

	if (!n || n > 253 || (n >= 8 && strcmp(node + n - 8, ".invalid") == 0))
		return EAI_NONAME;
	r = calloc(1, sizeof(*r));
	if (!r)
		return EAI_MEMORY;
	sin = (struct sockaddr_in *)&r->ss;
	sin6 = (struct sockaddr_in6 *)&r->ss;
	if (family != AF_INET6 && inet_pton(AF_INET, node, &sin->sin_addr) == 1) {
		family = AF_INET;
	} else if (family != AF_INET && inet_pton(AF_INET6, node, &sin6->sin6_addr) == 1) {
		family = AF_INET6;
	} else if (family == AF_INET6) {
		sin6->sin6_addr = in6addr_loopback;
	} else {
		family = AF_INET;
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	}
	r->ss.ss_family = (sa_family_t)family;
	r->ai.ai_family = family;
	r->ai.ai_socktype = hints ? hints->ai_socktype : 0;
	r->ai.ai_addrlen = family == AF_INET ? sizeof(*sin) : sizeof(*sin6);
	r->ai.ai_addr = (struct sockaddr *)&r->ss;
	*res = &r->ai;
	return 0;
}

void freeaddrinfo(struct addrinfo *ai)
{
	free(ai);   /* one block, as getaddrinfo() above builds it */
}

/* ---- parsing ---- */

static int write_cfg(const uint8_t *data, size_t size)
{
	if (ftruncate(cfg_fd, 0) < 0)
		return -1;
	return size && pwrite(cfg_fd, data, size, 0) != (ssize_t)size ? -1 : 0;
}

/* Parses <size> bytes as a configuration file, then, without error and
 * if <postparse>, runs the checks after parsing. Returns the errors. */
static int parse_bytes(const uint8_t *data, size_t size, int postparse)
{
	int errors;

	if (write_cfg(data, size) < 0)
		abort();
	sandbox_on = 1;
	errors = cfg_parse_path(cfg_path);
	if (!errors && postparse)
		errors = cfg_postparse();
	sandbox_on = 0;
	return errors;
}

static int parse_text(const char *text)
{
	return parse_bytes((const uint8_t *)text, strlen(text), 0);
}

/* The last one first: "defaults B from A" may only name an earlier one,
 * and freeing B reads A. */
static void free_defaults(void)
{
	while (defaults_head->prev != defaults_head) {
		struct proxy *d = list_elem(defaults_head->prev, struct proxy, list);

		list_del_init(&d->list);
		cfg_free_proxy(d);
	}
}

/* Frees what an input built and puts the process-wide state back. */
static void reset_state(void)
{
	cfg_free_proxies();      /* before the defaults they inherited from */
	free_defaults();
	cfg_free_all();
	memcpy(&global, &global_at_start, sizeof(global));
	list_init(&global.logs);
	sched_shared_runqueue = shared_rq_at_start;
	wdt_period_ms = wdt_period_at_start;
	/* proxy.c's "last defaults section" pointed to a freed one */
	if (parse_text("defaults\n") != 0)
		abort();
}

/* Finds proxy.c's list of defaults sections: a defaults section parsed
 * first is alone in it, so both its neighbours are the list head. */
static void find_defaults_head(void)
{
	struct proxy *be, *def;

	if (parse_text("defaults\nbackend fz_bootstrap\n") != 0 || list_empty(&proxies))
		abort();
	be = list_elem(proxies.next, struct proxy, list);
	def = be->defaults;
	if (!def || def->list.next != def->list.prev || def->list.next->prev != &def->list)
		abort();
	defaults_head = def->list.next;
	reset_state();
}

static void write_fixtures(void)
{
	char path[256];

	mkdir(FZ_DIR, 0700);
	for (size_t i = 0; i < sizeof(fz_files) / sizeof(fz_files[0]); i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", FZ_DIR, fz_files[i].name);
		f = fopen(path, "w");
		if (!f)
			continue;   /* the inputs naming it will just fail to load it */
		fputs(fz_files[i].text, f);
		fclose(f);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	cfg_fd = memfd_create("fuzz_cfg", MFD_CLOEXEC);
	if (cfg_fd < 0)
		abort();
	snprintf(cfg_path, sizeof(cfg_path), "/proc/self/fd/%d", cfg_fd);
	write_fixtures();
	setenv("FZ", "value", 1);
	setenv("FZ_ADDR", "127.0.0.1:8080", 1);
	if (!getenv("FUZZ_CFG_VERBOSE")) {
		devnull = fopen("/dev/null", "w");
		if (devnull)
			stderr = devnull;
	}
	memcpy(&global_at_start, &global, sizeof(global));
	shared_rq_at_start = sched_shared_runqueue;
	wdt_period_at_start = wdt_period_ms;
	find_defaults_head();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	parse_bytes(data, size, 1);
	reset_state();
	return 0;
}

/* Leaks left out of the reports. The first: post-parse hooks that compile
 * process-wide formats each time they run, which only repeated parsing
 * shows (and, as every input then ends with more allocations than frees,
 * libFuzzer gives up checking inputs for leaks after 1000 of them: fix
 * stream_postparse() to compile once and the check goes on). The others are parser bugs, reported with their reproducers in
 * fuzz/artifacts/, left out so that the fuzzing run of `make test` does
 * not fail on them until they are fixed. TODO: drop each one with its fix. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "";
}

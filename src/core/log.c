/* Logging: `log` targets, syslog framing and sending (log-format strings
 * are in logformat.c).
 *
 * Concurrency and ownership:
 * - Targets are parsed and opened while the configuration is read (one
 *   thread) and are read-only afterwards; any thread may call log_send*() at
 *   any time. The only run-time writes are atomic: global.dropped_logs and a
 *   target's sample counter (struct log_sample.seen).
 * - A datagram target owns one socket, shared by every thread: a datagram is
 *   sent whole by one sendmsg() call, so threads cannot interleave. The
 *   socket is never connected, so a restarted syslogd (a new /dev/log) is
 *   found again by the next send.
 * - A descriptor target (stdout, stderr, fd@N) on a pipe or a terminal is
 *   written through a private re-open of the same file (/proc/self/fd/N)
 *   made non-blocking: the O_NONBLOCK flag lives in that private open file
 *   description and never leaks to the shared descriptor that the shell or
 *   other processes use. A socket descriptor is written with
 *   send(MSG_DONTWAIT). A regular file, a descriptor that already is
 *   non-blocking, or a system without /proc is written as it is.
 * - Nothing blocks and nothing is retried: when the kernel says EAGAIN (or
 *   anything else fails) the line is dropped and counted.
 * - Compiled log-format expressions are read-only once compiled. The date
 *   caches (one local and one GMT broken-down time per second) are per
 *   thread, so the time-zone must not change once logging has started.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <sluice/core/global.h>
#include <sluice/core/log.h>
#include <sluice/core/logtext.h>

#define SYSLOG_PORT       514
#define LOG_DEFAULT_LEN   1024
#define LOG_MIN_LEN       80     /* `len` bounds, as HAProxy's */
#define LOG_MAX_LEN       65535
#define LOG_HDR_MAX       640    /* syslog header: PRI, dates, host, tag, pid */
#define LOG_DEFAULT_TAG   "sluice"

static const char *const log_levels[8] = {
	"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
};

static const char *const log_facilities[24] = {
	"kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news",
	"uucp", "cron", "auth2", "ftp", "ntp", "audit", "alert", "cron2",
	"local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7",
};

static const char *const log_formats[] = {
	[LOG_FORMAT_LOCAL]    = "local",
	[LOG_FORMAT_RFC3164]  = "rfc3164",
	[LOG_FORMAT_RFC5424]  = "rfc5424",
	[LOG_FORMAT_PRIORITY] = "priority",
	[LOG_FORMAT_SHORT]    = "short",
	[LOG_FORMAT_TIMED]    = "timed",
	[LOG_FORMAT_ISO]      = "iso",
	[LOG_FORMAT_RAW]      = "raw",
};



static int name_index(const char *const *names, int count, const char *name)
{
	for (int i = 0; name && i < count; i++)
		if (names[i] && strcmp(names[i], name) == 0)
			return i;
	return -1;
}

int log_level_from_name(const char *name)
{
	return name_index(log_levels, 8, name);
}

int log_facility_from_name(const char *name)
{
	return name_index(log_facilities, 24, name);
}

int log_format_from_name(const char *name)
{
	return name_index(log_formats, (int)(sizeof(log_formats) / sizeof(log_formats[0])), name);
}

const char *log_level_name(int level)
{
	return level >= 0 && level < 8 ? log_levels[level] : NULL;
}

const char *log_facility_name(int facility)
{
	return facility >= 0 && facility < 24 ? log_facilities[facility] : NULL;
}

/* ---- `log` line parsing ---- */

/* Copies [b, e) into <dst>; -1 if it does not fit. */
static int copy_span(char *dst, size_t dstsz, const char *b, const char *e)
{
	size_t n = (size_t)(e - b);

	if (n >= dstsz)
		return -1;
	memcpy(dst, b, n);
	dst[n] = '\0';
	return 0;
}

/* A port after the address: empty or 0 means the syslog port (HAProxy). */
static int parse_port(const char *s, int *port, char *err, size_t errlen)
{
	long v = 0;

	if (strchr(s, '-') || strchr(s, '+')) {
		errmsg_set(err, errlen, "port ranges and offsets are not allowed in a log address ('%s')", s);
		return -1;
	}
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9' || v > 65535) {
			errmsg_set(err, errlen, "invalid port '%s'", s);
			return -1;
		}
		v = v * 10 + (*p - '0');
	}
	if (v > 65535) {
		errmsg_set(err, errlen, "invalid port '%s'", s);
		return -1;
	}
	*port = v ? (int)v : SYSLOG_PORT;
	return 0;
}

static int looks_numeric(const char *host)
{
	return strchr(host, ':') || strspn(host, "0123456789.") == strlen(host);
}

/* Resolves <host> (numeric, "*", or a name looked up now) in
 * <family> (AF_UNSPEC: IPv4 preferred) into <ss>. */
static int resolve_host(const char *host, int family, struct sockaddr_storage *ss,
                        char *err, size_t errlen)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM }, *res, *ai, *pick = NULL;
	int rc;

	memset(ss, 0, sizeof(*ss));
	if (!*host) {
		errmsg_set(err, errlen, "missing address before the port");
		return -1;
	}
	if (strcmp(host, "*") == 0) {
		ss->ss_family = family == AF_INET6 ? AF_INET6 : AF_INET;
		return 0;       /* the any address, as HAProxy */
	}
	if (family != AF_INET6 && inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		ss->ss_family = AF_INET;
		return 0;
	}
	if (family != AF_INET && inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		ss->ss_family = AF_INET6;
		return 0;
	}
	if (looks_numeric(host)) {
		errmsg_set(err, errlen, "invalid %saddress '%s'",
		        family == AF_INET ? "IPv4 " : family == AF_INET6 ? "IPv6 " : "", host);
		return -1;
	}
	hints.ai_family = family;
	rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc) {
		errmsg_set(err, errlen, "cannot resolve '%s': %s", host, gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		if (ai->ai_family == AF_INET) {
			pick = ai;
			break;
		}
		if (ai->ai_family == AF_INET6 && !pick)
			pick = ai;
	}
	if (pick)
		memcpy(ss, pick->ai_addr, pick->ai_addrlen);
	freeaddrinfo(res);
	if (!pick) {
		errmsg_set(err, errlen, "no IPv4 or IPv6 address for '%s'", host);
		return -1;
	}
	return 0;
}

/* Splits "host", "host:port", "[v6]", "[v6]:port", "v6:port" or "v6" (the
 * port is after the last colon, as in HAProxy, so "::1:514" is ::1 port 514;
 * a whole string that only parses as IPv6 is an address without port). */
static int parse_ip(struct log_target *t, const char *s, int family, char *err, size_t errlen)
{
	char host[NI_MAXHOST];
	const char *port = "", *first = strchr(s, ':'), *last = strrchr(s, ':');
	struct in6_addr tmp6;
	int portnum;

	if (*s == '[') {
		const char *close = strchr(s, ']');

		if (!close || copy_span(host, sizeof(host), s + 1, close) < 0) {
			errmsg_set(err, errlen, "invalid IPv6 address '%s' (missing ']')", s);
			return -1;
		}
		if (close[1] == ':')
			port = close + 2;
		else if (close[1]) {
			errmsg_set(err, errlen, "unexpected '%s' after ']' in '%s'", close + 1, s);
			return -1;
		}
		if (family == AF_INET) {
			errmsg_set(err, errlen, "'%s' is an IPv6 address where IPv4 is required", s);
			return -1;
		}
		family = AF_INET6;
	} else if (!last) {
		if (copy_span(host, sizeof(host), s, s + strlen(s)) < 0)
			goto too_long;
	} else if (first == last || strspn(last + 1, "0123456789") == strlen(last + 1)) {
		if (copy_span(host, sizeof(host), s, last) < 0)
			goto too_long;
		port = last + 1;
		if (first != last && inet_pton(AF_INET6, host, &tmp6) != 1 &&
		    inet_pton(AF_INET6, s, &tmp6) == 1) {
			strcpy(host, s);        /* "2001:db8::1": no room for a port */
			port = "";
		}
	} else {
		if (copy_span(host, sizeof(host), s, s + strlen(s)) < 0)
			goto too_long;
	}
	if (parse_port(port, &portnum, err, errlen) < 0 ||
	    resolve_host(host, family, &t->addr, err, errlen) < 0)
		return -1;
	if (t->addr.ss_family == AF_INET) {
		((struct sockaddr_in *)&t->addr)->sin_port = htons((uint16_t)portnum);
		t->addrlen = sizeof(struct sockaddr_in);
	} else {
		((struct sockaddr_in6 *)&t->addr)->sin6_port = htons((uint16_t)portnum);
		t->addrlen = sizeof(struct sockaddr_in6);
	}
	t->kind = LOG_T_UDP;
	return 0;
too_long:
	errmsg_set(err, errlen, "address too long: '%s'", s);
	return -1;
}

/* A datagram unix socket: a path, or a Linux abstract name (<abstract>). */
static int parse_unix(struct log_target *t, const char *path, int abstract,
                      char *err, size_t errlen)
{
	struct sockaddr_un *sun = (struct sockaddr_un *)&t->addr;
	size_t len = strlen(path), room = sizeof(sun->sun_path) - (abstract ? 1 : 0);

	if (!len) {
		errmsg_set(err, errlen, "missing socket path");
		return -1;
	}
	if (len >= room) {
		errmsg_set(err, errlen, "socket path too long (%zu bytes, at most %zu): '%s'",
		        len, room - 1, path);
		return -1;
	}
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	memcpy(sun->sun_path + (abstract ? 1 : 0), path, len);
	/* an abstract address is exactly as long as its name, no NUL after */
	t->addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + 1);
	t->kind = LOG_T_UNIX;
	return 0;
}

static int parse_fd(struct log_target *t, const char *s, char *err, size_t errlen)
{
	long v = 0;

	if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 9) {
		errmsg_set(err, errlen, "invalid file descriptor number in 'fd@%s'", s);
		return -1;
	}
	v = strtol(s, NULL, 10);
	t->fd_num = (int)v;
	t->kind = LOG_T_FD;
	return 0;
}

enum { FAM_FD = -10, FAM_ABNS = -11 };

/* The address prefixes a `log` line accepts (HAProxy 2.6, section 11). */
static const struct {
	const char *prefix;
	int family;   /* AF_INET, AF_INET6, AF_UNSPEC (by syntax), AF_UNIX, FAM_* */
} log_addr_prefixes[] = {
	{ "ipv4@", AF_INET },   { "udp4@", AF_INET },
	{ "ipv6@", AF_INET6 },  { "udp6@", AF_INET6 },
	{ "ip@", AF_UNSPEC },   { "udp@", AF_UNSPEC },
	{ "unix@", AF_UNIX },   { "uxdg@", AF_UNIX },
	{ "abns@", FAM_ABNS },  { "fd@", FAM_FD },
};

/* Prefixes HAProxy knows but sluice does not send logs to (yet). */
static const char *const log_unsupported_prefixes[] = {
	"stream+", "tcp@", "tcp4@", "tcp6@", "uxst@", "ring@", "quic+", "quic4@",
	"quic6@", "sockpair@",
};

static int log_parse_address(struct log_target *t, const char *word, char *err, size_t errlen)
{
	const char *s = word;
	size_t i;

	if (strcmp(s, "stdout") == 0)
		s = "fd@1";
	else if (strcmp(s, "stderr") == 0)
		s = "fd@2";
	for (i = 0; i < sizeof(log_unsupported_prefixes) / sizeof(log_unsupported_prefixes[0]); i++) {
		if (strncmp(s, log_unsupported_prefixes[i], strlen(log_unsupported_prefixes[i])) == 0) {
			errmsg_set(err, errlen, "'%s': only datagram sockets and file descriptors "
			        "are supported as log targets (no stream sockets nor rings)", word);
			return -1;
		}
	}
	if (strncmp(s, "dgram+", 6) == 0)
		s += 6;                 /* datagram already is the default */
	for (i = 0; i < sizeof(log_addr_prefixes) / sizeof(log_addr_prefixes[0]); i++) {
		size_t n = strlen(log_addr_prefixes[i].prefix);
		int fam = log_addr_prefixes[i].family;

		if (strncmp(s, log_addr_prefixes[i].prefix, n) != 0)
			continue;
		s += n;
		if (fam == FAM_FD)
			return parse_fd(t, s, err, errlen);
		if (fam == AF_UNIX || fam == FAM_ABNS)
			return parse_unix(t, s, fam == FAM_ABNS, err, errlen);
		return parse_ip(t, s, fam, err, errlen);
	}
	if (*s == '/')
		return parse_unix(t, s, 0, err, errlen);
	if (strchr(s, '@')) {
		errmsg_set(err, errlen, "unknown address prefix in '%s'", word);
		return -1;
	}
	if (!*s) {
		errmsg_set(err, errlen, "missing address");
		return -1;
	}
	return parse_ip(t, s, AF_UNSPEC, err, errlen);
}

static int parse_len(struct log_target *t, const char *v, char *err, size_t errlen)
{
	long n = 0;

	if (!*v || strspn(v, "0123456789") != strlen(v) || strlen(v) > 6 ||
	    (n = strtol(v, NULL, 10)) < LOG_MIN_LEN || n > LOG_MAX_LEN) {
		errmsg_set(err, errlen, "invalid log length '%s', must be between %d and %d",
		        v, LOG_MIN_LEN, LOG_MAX_LEN);
		return -1;
	}
	t->maxlen = (int)n;
	return 0;
}

static int parse_format(struct log_target *t, const char *v, char *err, size_t errlen)
{
	int f = log_format_from_name(v);

	if (f < 0) {
		errmsg_set(err, errlen, "unknown log format '%s' (expected local, rfc3164, "
		        "rfc5424, priority, short, timed, iso or raw)", v);
		return -1;
	}
	t->format = (enum log_format)f;
	return 0;
}

/* Reads an unsigned number from [*p, end); 0 when there is none. */
static unsigned long read_num(const char **p, const char *end)
{
	unsigned long v = 0;

	while (*p < end && **p >= '0' && **p <= '9') {
		v = v * 10 + (unsigned long)(**p - '0');
		if (v > 0xffffffffUL)
			v = 0xffffffffUL;
		(*p)++;
	}
	return v;
}

static int range_cmp(const void *a, const void *b)
{
	const struct log_sample_range *x = a, *y = b;

	return x->low < y->low ? -1 : x->low > y->low;
}

/* "1,3-5:10": ranges of log numbers (1-based), then the period. */
static int parse_sample(struct log_target *t, const char *v, char *err, size_t errlen)
{
	const char *colon = strchr(v, ':'), *p = v, *end;
	struct log_sample *s;
	unsigned long size, top = 0;

	if (!colon) {
		errmsg_set(err, errlen, "missing sample size in 'sample %s' (expected <ranges>:<size>)", v);
		return -1;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		goto oom;
	while (p < colon) {
		struct log_sample_range r, *nr;

		end = memchr(p, ',', (size_t)(colon - p));
		if (!end)
			end = colon;
		r.low = r.high = (unsigned int)read_num(&p, end);
		if (p < end && *p == '-') {
			p++;
			r.high = (unsigned int)read_num(&p, end);
		}
		if (!r.low || r.high < r.low || p != end) {
			errmsg_set(err, errlen, "wrong sample range in 'sample %s' (expected "
			        "N or N-M, from 1, M >= N, comma-separated)", v);
			goto fail;
		}
		for (int i = 0; i < s->nranges; i++) {
			if (r.low <= s->ranges[i].high && r.high >= s->ranges[i].low) {
				errmsg_set(err, errlen, "overlapping sample ranges in 'sample %s'", v);
				goto fail;
			}
		}
		nr = realloc(s->ranges, (size_t)(s->nranges + 1) * sizeof(*nr));
		if (!nr)
			goto oom;
		s->ranges = nr;
		s->ranges[s->nranges++] = r;
		if (r.high > top)
			top = r.high;
		p = end < colon ? end + 1 : end;
	}
	if (!s->nranges) {
		errmsg_set(err, errlen, "no sample ranges in 'sample %s'", v);
		goto fail;
	}
	p = colon + 1;
	end = p + strlen(p);
	size = read_num(&p, end);
	if (!size || p != end) {
		errmsg_set(err, errlen, "wrong sample size '%s' in 'sample %s'", colon + 1, v);
		goto fail;
	}
	if (size < top) {
		errmsg_set(err, errlen, "sample size %lu is smaller than the highest range bound %lu",
		        size, top);
		goto fail;
	}
	s->size = (unsigned int)size;
	qsort(s->ranges, (size_t)s->nranges, sizeof(*s->ranges), range_cmp);
	t->sample = s;
	return 0;
oom:
	errmsg_set(err, errlen, "out of memory");
fail:
	if (s)
		free(s->ranges);
	free(s);
	return -1;
}

/* Options between the address and the facility. */
static const struct {
	const char *name;
	int (*parse)(struct log_target *t, const char *v, char *err, size_t errlen);
} log_options[] = {
	{ "len",    parse_len },
	{ "format", parse_format },
	{ "sample", parse_sample },
};

struct log_target *log_target_parse(char **args, int nargs, char *err, size_t errlen)
{
	struct log_target *t;
	unsigned int seen = 0;
	int i = 1, v;

	if (nargs < 1 || !args[0] || !*args[0]) {
		errmsg_set(err, errlen, "expects <address> and <facility> as arguments");
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t || !(t->addr_text = strdup(args[0]))) {
		free(t);
		errmsg_set(err, errlen, "out of memory");
		return NULL;
	}
	list_init(&t->list);
	t->fd = t->fd_num = -1;
	t->level = 7;
	t->maxlen = LOG_DEFAULT_LEN;
	if (log_parse_address(t, args[0], err, errlen) < 0)
		goto fail;

	for (; i < nargs; i += 2) {
		size_t o, nopt = sizeof(log_options) / sizeof(log_options[0]);

		for (o = 0; o < nopt && strcmp(args[i], log_options[o].name) != 0; o++)
			;
		if (o == nopt)
			break;
		if (seen & (1u << o)) {
			errmsg_set(err, errlen, "'%s' given twice", args[i]);
			goto fail;
		}
		seen |= 1u << o;
		if (i + 1 >= nargs) {
			errmsg_set(err, errlen, "'%s' expects a value", args[i]);
			goto fail;
		}
		if (log_options[o].parse(t, args[i + 1], err, errlen) < 0)
			goto fail;
	}

	if (i >= nargs) {
		errmsg_set(err, errlen, "missing <facility> after '%s'", args[nargs - 1]);
		goto fail;
	}
	if ((t->facility = log_facility_from_name(args[i])) < 0) {
		errmsg_set(err, errlen, "unknown log facility '%s'", args[i]);
		goto fail;
	}
	if (++i < nargs) {
		if ((v = log_level_from_name(args[i])) < 0) {
			errmsg_set(err, errlen, "unknown log level '%s' (expected emerg, alert, "
			        "crit, err, warning, notice, info or debug)", args[i]);
			goto fail;
		}
		t->level = v;
		i++;
	}
	if (i < nargs) {
		if ((v = log_level_from_name(args[i])) < 0) {
			errmsg_set(err, errlen, "unknown minimum log level '%s'", args[i]);
			goto fail;
		}
		t->minlevel = v;
		i++;
	}
	if (i < nargs) {
		errmsg_set(err, errlen, "unexpected argument '%s' after the log levels", args[i]);
		goto fail;
	}
	return t;
fail:
	log_target_free(t);
	return NULL;
}

/* ---- opening ---- */

static int open_fd_target(struct log_target *t, char *err, size_t errlen)
{
	struct stat st;
	int fl = fcntl(t->fd_num, F_GETFL);

	if (fl < 0) {
		errmsg_set(err, errlen, "log target '%s': fd %d is not open", t->addr_text, t->fd_num);
		return -1;
	}
	if ((fl & O_ACCMODE) == O_RDONLY) {
		errmsg_set(err, errlen, "log target '%s': fd %d is not open for writing",
		        t->addr_text, t->fd_num);
		return -1;
	}
	if (fstat(t->fd_num, &st) < 0) {
		errmsg_set(err, errlen, "log target '%s': %s", t->addr_text, strerror(errno));
		return -1;
	}
	t->fd = t->fd_num;
	if (S_ISSOCK(st.st_mode)) {
		t->fd_is_sock = 1;
	} else if ((S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) && !(fl & O_NONBLOCK)) {
		char path[40];
		int fd;

		/* a private open file description of the same pipe or tty */
		snprintf(path, sizeof(path), "/proc/self/fd/%d", t->fd_num);
		fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
		if (fd >= 0) {
			t->fd = fd;
			t->fd_owned = 1;
		}
	}
	return 0;
}

int log_target_open(struct log_target *t, char *err, size_t errlen)
{
	int fd;

	if (t->fd >= 0)
		return 0;
	if (t->kind == LOG_T_FD)
		return open_fd_target(t, err, errlen);
	fd = socket(t->addr.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		errmsg_set(err, errlen, "cannot create a socket for log target '%s': %s",
		        t->addr_text, strerror(errno));
		return -1;
	}
	t->fd = fd;
	t->fd_owned = 1;
	return 0;
}

void log_target_free(struct log_target *t)
{
	if (!t)
		return;
	if (t->fd_owned && t->fd >= 0)
		close(t->fd);
	if (t->sample)
		free(t->sample->ranges);
	free(t->sample);
	free(t->addr_text);
	free(t->conf_file);
	free(t);
}

static char *strdup_or_null(const char *s, int *failed)
{
	char *d = s ? strdup(s) : NULL;

	if (s && !d)
		*failed = 1;
	return d;
}

struct log_target *log_target_clone(const struct log_target *src)
{
	struct log_target *t = malloc(sizeof(*t));
	int failed = 0;

	if (!t)
		return NULL;
	*t = *src;
	list_init(&t->list);
	t->fd = -1;
	t->fd_owned = t->fd_is_sock = 0;
	t->sample = NULL;
	t->addr_text = strdup_or_null(src->addr_text, &failed);
	t->conf_file = strdup_or_null(src->conf_file, &failed);
	if (src->sample && !failed) {
		size_t sz = (size_t)src->sample->nranges * sizeof(*src->sample->ranges);

		t->sample = calloc(1, sizeof(*t->sample));
		if (t->sample && (t->sample->ranges = malloc(sz)) != NULL) {
			memcpy(t->sample->ranges, src->sample->ranges, sz);
			t->sample->nranges = src->sample->nranges;
			t->sample->size = src->sample->size;
		} else {
			failed = 1;
		}
	}
	if (failed) {
		log_target_free(t);
		return NULL;
	}
	return t;
}

/* ---- framing and sending ---- */

/* Builds the syslog header of a message at <level> (minlevel applied) for
 * <t> into <buf> and returns its length. */
static size_t log_build_header(const struct log_target *t, int level,
                               const struct log_header *h, char *buf, size_t size)
{
	struct lf_out o = { buf, buf + size - 1 };
	enum log_format fmt = t->format;
	/* the caller's tag, else the process's (`log-tag`), else "sluice" */
	const char *tag = h->tag ? h->tag : global.log_tag ? global.log_tag : LOG_DEFAULT_TAG;

	if (fmt == LOG_FORMAT_DEFAULT)
		fmt = h->hostname ? LOG_FORMAT_RFC3164 : LOG_FORMAT_LOCAL;

	/* PRI (RFC 3164 4.1.1, RFC 5424 6.2.1); short and timed send the level only */
	if (fmt != LOG_FORMAT_ISO && fmt != LOG_FORMAT_RAW) {
		out_char(&o, '<');
		if (fmt == LOG_FORMAT_SHORT || fmt == LOG_FORMAT_TIMED)
			out_uint(&o, (uint64_t)level, 0);
		else
			out_uint(&o, (uint64_t)(t->facility * 8 + level), 0);
		out_char(&o, '>');
	}

	switch (fmt) {
	case LOG_FORMAT_LOCAL:
	case LOG_FORMAT_RFC3164:
		out_3164_time(&o, h->now_us);
		out_char(&o, ' ');
		if (fmt == LOG_FORMAT_RFC3164) {
			out_str(&o, h->hostname && *h->hostname ? h->hostname : "localhost");
			out_char(&o, ' ');
		}
		if (*tag) {
			out_str(&o, tag);
			if (h->pid > 0) {
				out_char(&o, '[');
				out_uint(&o, (uint64_t)h->pid, 0);
				out_char(&o, ']');
			}
			out_str(&o, ": ");
		}
		break;
	case LOG_FORMAT_RFC5424:
		/* VERSION SP TIMESTAMP SP HOSTNAME SP APP-NAME SP PROCID SP MSGID SP SD */
		out_str(&o, "1 ");
		out_iso_time(&o, h->now_us);
		out_char(&o, ' ');
		out_str(&o, h->hostname && *h->hostname ? h->hostname : "-");
		out_char(&o, ' ');
		out_str(&o, *tag ? tag : "-");
		out_char(&o, ' ');
		if (h->pid > 0)
			out_uint(&o, (uint64_t)h->pid, 0);
		else
			out_char(&o, '-');
		out_str(&o, " - - ");
		break;
	case LOG_FORMAT_TIMED:
	case LOG_FORMAT_ISO:
		out_iso_time(&o, h->now_us);
		out_char(&o, ' ');
		break;
	default:
		break;
	}
	*o.p = '\0';
	return (size_t)(o.p - buf);
}

/* Fills <iov> with header, message and LF, cut so that the whole frame
 * fits in the target's len. Returns the number of iovecs. */
static int log_prepare(const struct log_target *t, int level, const struct log_header *h,
                       const char *msg, size_t len, char *hdr, struct iovec iov[3])
{
	size_t budget = (size_t)(t->maxlen > 1 ? t->maxlen - 1 : 0);
	size_t hlen;

	if (level > 7)
		level = 7;
	if (level < t->minlevel)
		level = t->minlevel;
	hlen = log_build_header(t, level, h, hdr, LOG_HDR_MAX);
	if (hlen > budget)
		hlen = budget;
	budget -= hlen;
	if (len > budget)
		len = budget;
	iov[0].iov_base = hdr;
	iov[0].iov_len = hlen;
	iov[1].iov_base = (void *)msg;
	iov[1].iov_len = len;
	iov[2].iov_base = "\n";
	iov[2].iov_len = 1;
	return 3;
}

static void log_header_defaults(struct log_header *h, const struct log_header *in)
{
	if (in)
		*h = *in;
	else
		memset(h, 0, sizeof(*h));
	if (!h->hostname && global.log_send_hostname)
		h->hostname = global.log_send_hostname;
	if (!h->now_us)
		h->now_us = wall_now_us();
}

size_t log_frame(const struct log_target *t, int level, const struct log_header *hdr,
                 const char *msg, size_t len, char *out, size_t outsz)
{
	struct log_header h;
	struct lf_out o = { out, out + (outsz ? outsz - 1 : 0) };
	char hbuf[LOG_HDR_MAX];
	struct iovec iov[3];
	int n;

	if (!outsz)
		return 0;
	log_header_defaults(&h, hdr);
	while (len && (msg[len - 1] == '\n' || msg[len - 1] == '\0'))
		len--;
	n = log_prepare(t, level, &h, msg, len, hbuf, iov);
	for (int i = 0; i < n; i++)
		out_mem(&o, iov[i].iov_base, iov[i].iov_len);
	*o.p = '\0';
	return (size_t)(o.p - out);
}

/* `sample`: is the next log for this target? Numbers run 1..size. */
static int log_sample_pick(struct log_sample *s)
{
	unsigned int n = atomic_fetch_add_explicit(&s->seen, 1, memory_order_relaxed) % s->size + 1;

	for (int i = 0; i < s->nranges; i++) {
		if (n < s->ranges[i].low)
			return 0;
		if (n <= s->ranges[i].high)
			return 1;
	}
	return 0;
}

static void log_emit(const struct log_target *t, int level, const struct log_header *h,
                     const char *msg, size_t len)
{
	char hbuf[LOG_HDR_MAX];
	struct iovec iov[3];
	struct msghdr mh = { .msg_iov = iov };
	ssize_t ret;

	mh.msg_iovlen = (size_t)log_prepare(t, level, h, msg, len, hbuf, iov);
	if (t->kind != LOG_T_FD) {
		mh.msg_name = (void *)&t->addr;
		mh.msg_namelen = t->addrlen;
		ret = sendmsg(t->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
	} else if (t->fd_is_sock) {
		ret = sendmsg(t->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
	} else {
		ret = writev(t->fd, iov, (int)mh.msg_iovlen);
	}
	if (ret < 0)
		atomic_fetch_add_explicit(&global.dropped_logs, 1, memory_order_relaxed);
}

void log_send_hdr(struct list *targets, int level, const struct log_header *hdr,
                  const char *msg, size_t len)
{
	struct log_header h;
	struct list *pos, *tmp;

	if (!targets || level < 0)
		return;
	if (level > 7)
		level = 7;
	/* historically some messages carried their own LF or NUL */
	while (len && (msg[len - 1] == '\n' || msg[len - 1] == '\0'))
		len--;
	log_header_defaults(&h, hdr);
	list_for_each_safe(pos, tmp, targets) {
		struct log_target *t = list_elem(pos, struct log_target, list);

		if (level > t->level)
			continue;
		if (t->sample && !log_sample_pick(t->sample))
			continue;
		if (t->fd < 0) {        /* never opened: the line is lost */
			atomic_fetch_add_explicit(&global.dropped_logs, 1, memory_order_relaxed);
			continue;
		}
		log_emit(t, level, &h, msg, len);
	}
}

void log_send(struct list *targets, int level, const char *tag, int pid,
              const char *msg, size_t len)
{
	struct log_header h = { .tag = tag, .pid = pid };

	log_send_hdr(targets, level, &h, msg, len);
}


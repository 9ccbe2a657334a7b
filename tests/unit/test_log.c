/* Unit tests for src/core/log.c: `log` line parsing, opening, syslog framing
 * checked byte for byte on real sockets and pipes, and log-format strings. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <sluice/core/global.h>
#include <sluice/core/log.h>
#include "t.h"

static char err[256];

/* 2026-11-22 04:25:00.123456 UTC */
static int64_t fixed_us(int year, int mon, int mday, int h, int m, int s, int us)
{
	struct tm tm = { .tm_year = year - 1900, .tm_mon = mon - 1, .tm_mday = mday,
	                 .tm_hour = h, .tm_min = m, .tm_sec = s };

	return (int64_t)timegm(&tm) * 1000000 + us;
}

/* Splits <line> on spaces and parses it as the words after `log`. */
static struct log_target *parse(const char *line)
{
	static char buf[512];
	char *args[16];
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (char *w = strtok(buf, " "); w && n < 16; w = strtok(NULL, " "))
		args[n++] = w;
	err[0] = '\0';
	return log_target_parse(args, n, err, sizeof(err));
}

/* The line must be rejected with a message containing <what>. */
static void parse_fails(const char *line, const char *what, int lineno)
{
	struct log_target *t = parse(line);

	t_checks++;
	if (t || !strstr(err, what)) {
		t_failed++;
		fprintf(stderr, "%s:%d: log '%s' should fail with \"%s\", got %s \"%s\"\n",
		        __FILE__, lineno, line, what, t ? "a target" : "error", err);
	}
	log_target_free(t);
}
#define PARSE_FAILS(line, what) parse_fails(line, what, __LINE__)

static int port_of(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return -1;
}

static const char *ip_of(const struct sockaddr_storage *ss)
{
	static char buf[INET6_ADDRSTRLEN];
	const void *a = ss->ss_family == AF_INET
		? (const void *)&((const struct sockaddr_in *)ss)->sin_addr
		: (const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr;

	if (!inet_ntop(ss->ss_family, a, buf, sizeof(buf)))
		return "?";
	return buf;
}

static void test_names(void)
{
	CHECK(log_level_from_name("emerg") == 0);
	CHECK(log_level_from_name("err") == 3);
	CHECK(log_level_from_name("debug") == 7);
	CHECK(log_level_from_name("error") == -1);
	CHECK(log_level_from_name("INFO") == -1);
	CHECK(log_facility_from_name("kern") == 0);
	CHECK(log_facility_from_name("local0") == 16);
	CHECK(log_facility_from_name("local7") == 23);
	CHECK(log_facility_from_name("cron2") == 15);
	CHECK(log_facility_from_name("local8") == -1);
	CHECK(log_format_from_name("rfc5424") == LOG_FORMAT_RFC5424);
	CHECK(log_format_from_name("local") == LOG_FORMAT_LOCAL);
	CHECK(log_format_from_name("raw") == LOG_FORMAT_RAW);
	CHECK(log_format_from_name("default") == -1);
	CHECK_STR(log_level_name(4), "warning");
	CHECK_STR(log_facility_name(20), "local4");
	CHECK(log_level_name(8) == NULL);
	CHECK(log_facility_name(-1) == NULL);
}

static void test_parse_addresses(void)
{
	struct log_target *t;

	t = parse("127.0.0.1:1514 local0");
	CHECK(t && t->kind == LOG_T_UDP && t->addr.ss_family == AF_INET);
	CHECK(t && port_of(&t->addr) == 1514 && strcmp(ip_of(&t->addr), "127.0.0.1") == 0);
	CHECK(t && t->addrlen == sizeof(struct sockaddr_in));
	CHECK(t && t->facility == 16 && t->level == 7 && t->minlevel == 0);
	CHECK(t && t->format == LOG_FORMAT_DEFAULT && t->maxlen == 1024 && !t->sample);
	CHECK(t && t->fd == -1 && strcmp(t->addr_text, "127.0.0.1:1514") == 0);
	log_target_free(t);

	t = parse("10.1.2.3 user");                  /* default syslog port */
	CHECK(t && port_of(&t->addr) == 514 && t->facility == 1);
	log_target_free(t);
	t = parse("10.1.2.3: user");                 /* empty port: default too */
	CHECK(t && port_of(&t->addr) == 514);
	log_target_free(t);
	t = parse("ipv4@10.0.0.1:600 daemon info notice");
	CHECK(t && t->addr.ss_family == AF_INET && port_of(&t->addr) == 600);
	CHECK(t && t->facility == 3 && t->level == 6 && t->minlevel == 5);
	log_target_free(t);
	t = parse("udp4@127.0.0.2:9 local1");
	CHECK(t && t->addr.ss_family == AF_INET && port_of(&t->addr) == 9);
	log_target_free(t);

	t = parse("ipv6@[::1]:515 local1");
	CHECK(t && t->addr.ss_family == AF_INET6 && port_of(&t->addr) == 515);
	CHECK(t && strcmp(ip_of(&t->addr), "::1") == 0);
	CHECK(t && t->addrlen == sizeof(struct sockaddr_in6));
	log_target_free(t);
	t = parse("[2001:db8::7]:516 local1");
	CHECK(t && t->addr.ss_family == AF_INET6 && port_of(&t->addr) == 516);
	CHECK(t && strcmp(ip_of(&t->addr), "2001:db8::7") == 0);
	log_target_free(t);
	t = parse("[::1] local1");
	CHECK(t && port_of(&t->addr) == 514);
	log_target_free(t);
	t = parse("ipv6@::1:517 local1");            /* the port after the last colon */
	CHECK(t && port_of(&t->addr) == 517 && strcmp(ip_of(&t->addr), "::1") == 0);
	log_target_free(t);
	t = parse("2001:db8::1 local1");             /* only an address: port 514 */
	CHECK(t && port_of(&t->addr) == 514 && strcmp(ip_of(&t->addr), "2001:db8::1") == 0);
	log_target_free(t);
	t = parse("udp6@[::1]:518 local1");
	CHECK(t && t->addr.ss_family == AF_INET6 && port_of(&t->addr) == 518);
	log_target_free(t);
	t = parse("udp@[::1]:519 local1");
	CHECK(t && t->addr.ss_family == AF_INET6 && port_of(&t->addr) == 519);
	log_target_free(t);
	t = parse("udp@127.0.0.1:520 local1");
	CHECK(t && t->addr.ss_family == AF_INET && port_of(&t->addr) == 520);
	log_target_free(t);
	t = parse("ip@127.0.0.1 local1");
	CHECK(t && t->addr.ss_family == AF_INET && port_of(&t->addr) == 514);
	log_target_free(t);
	t = parse("dgram+ipv4@127.0.0.1:521 local1");
	CHECK(t && t->addr.ss_family == AF_INET && port_of(&t->addr) == 521);
	log_target_free(t);
	t = parse("*:522 local1");                   /* any address, as HAProxy */
	CHECK(t && t->addr.ss_family == AF_INET && port_of(&t->addr) == 522);
	CHECK(t && strcmp(ip_of(&t->addr), "0.0.0.0") == 0);
	log_target_free(t);
	t = parse("localhost:1515 local2");          /* resolved now (/etc/hosts) */
	CHECK(t && t->addr.ss_family == AF_INET && port_of(&t->addr) == 1515);
	CHECK(t && strcmp(ip_of(&t->addr), "127.0.0.1") == 0);
	log_target_free(t);

	t = parse("/dev/log local0");
	CHECK(t && t->kind == LOG_T_UNIX && t->addr.ss_family == AF_UNIX);
	CHECK(t && strcmp(((struct sockaddr_un *)&t->addr)->sun_path, "/dev/log") == 0);
	CHECK(t && t->addrlen == offsetof(struct sockaddr_un, sun_path) + 9);
	log_target_free(t);
	t = parse("unix@run/log.sock local0");
	CHECK(t && t->kind == LOG_T_UNIX);
	CHECK(t && strcmp(((struct sockaddr_un *)&t->addr)->sun_path, "run/log.sock") == 0);
	log_target_free(t);
	t = parse("uxdg@/tmp/l.sock local0");
	CHECK(t && t->kind == LOG_T_UNIX);
	log_target_free(t);
	t = parse("abns@sluice-log local0");
	CHECK(t && t->kind == LOG_T_UNIX);
	CHECK(t && ((struct sockaddr_un *)&t->addr)->sun_path[0] == '\0');
	CHECK(t && memcmp(((struct sockaddr_un *)&t->addr)->sun_path + 1, "sluice-log", 10) == 0);
	CHECK(t && t->addrlen == offsetof(struct sockaddr_un, sun_path) + 11);
	log_target_free(t);

	t = parse("stdout local0");
	CHECK(t && t->kind == LOG_T_FD && t->fd_num == 1 && t->fd == -1);
	log_target_free(t);
	t = parse("stderr daemon");
	CHECK(t && t->kind == LOG_T_FD && t->fd_num == 2);
	log_target_free(t);
	t = parse("fd@7 daemon");
	CHECK(t && t->kind == LOG_T_FD && t->fd_num == 7);
	log_target_free(t);
}

static void test_parse_options(void)
{
	struct log_target *t;

	t = parse("127.0.0.1 len 2048 format rfc5424 sample 1-3,5:10 local3 warning err");
	CHECK(t && t->maxlen == 2048 && t->format == LOG_FORMAT_RFC5424);
	CHECK(t && t->facility == 19 && t->level == 4 && t->minlevel == 3);
	CHECK(t && t->sample && t->sample->nranges == 2 && t->sample->size == 10);
	CHECK(t && t->sample && t->sample->ranges[0].low == 1 && t->sample->ranges[0].high == 3);
	CHECK(t && t->sample && t->sample->ranges[1].low == 5 && t->sample->ranges[1].high == 5);
	log_target_free(t);

	t = parse("127.0.0.1 sample 7,2-3:7 format raw len 80 local0");  /* any order */
	CHECK(t && t->maxlen == 80 && t->format == LOG_FORMAT_RAW);
	CHECK(t && t->sample && t->sample->ranges[0].low == 2 && t->sample->ranges[1].low == 7);
	log_target_free(t);
	t = parse("stdout len 65535 format short daemon");
	CHECK(t && t->maxlen == 65535 && t->format == LOG_FORMAT_SHORT);
	log_target_free(t);
	for (int f = LOG_FORMAT_LOCAL; f <= LOG_FORMAT_RAW; f++) {
		static const char *names[] = { "", "local", "rfc3164", "rfc5424", "priority",
		                               "short", "timed", "iso", "raw" };
		char line[64];

		snprintf(line, sizeof(line), "stderr format %s daemon", names[f]);
		t = parse(line);
		CHECK(t && (int)t->format == f);
		log_target_free(t);
	}
}

static void test_parse_errors(void)
{
	char *none[1] = { NULL };

	err[0] = '\0';
	CHECK(log_target_parse(none, 0, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "expects <address> and <facility>") != NULL);

	PARSE_FAILS("127.0.0.1", "missing <facility>");
	PARSE_FAILS("127.0.0.1 len 100", "missing <facility>");
	PARSE_FAILS("127.0.0.1 local9", "unknown log facility 'local9'");
	PARSE_FAILS("127.0.0.1 local0 verbose", "unknown log level 'verbose'");
	PARSE_FAILS("127.0.0.1 local0 info loud", "unknown minimum log level 'loud'");
	PARSE_FAILS("127.0.0.1 local0 info err extra", "unexpected argument 'extra'");
	PARSE_FAILS("127.0.0.1 len 79 local0", "invalid log length '79'");
	PARSE_FAILS("127.0.0.1 len 65536 local0", "must be between 80 and 65535");
	PARSE_FAILS("127.0.0.1 len 1k local0", "invalid log length '1k'");
	PARSE_FAILS("127.0.0.1 len", "'len' expects a value");
	PARSE_FAILS("127.0.0.1 len 100 len 200 local0", "'len' given twice");
	PARSE_FAILS("127.0.0.1 format json local0", "unknown log format 'json'");
	PARSE_FAILS("127.0.0.1 format", "'format' expects a value");
	PARSE_FAILS("127.0.0.1 sample 1 local0", "missing sample size");
	PARSE_FAILS("127.0.0.1 sample 0:2 local0", "wrong sample range");
	PARSE_FAILS("127.0.0.1 sample 3-2:5 local0", "wrong sample range");
	PARSE_FAILS("127.0.0.1 sample 1x:5 local0", "wrong sample range");
	PARSE_FAILS("127.0.0.1 sample 1-3,2:5 local0", "overlapping");
	PARSE_FAILS("127.0.0.1 sample 1:0 local0", "wrong sample size '0'");
	PARSE_FAILS("127.0.0.1 sample 1:2x local0", "wrong sample size '2x'");
	PARSE_FAILS("127.0.0.1 sample 1-5:3 local0", "smaller than the highest range bound 5");
	PARSE_FAILS("127.0.0.1 sample :3 local0", "no sample ranges");

	PARSE_FAILS("ipv4@300.1.1.1 local0", "invalid IPv4 address '300.1.1.1'");
	PARSE_FAILS("10.0.0.256 local0", "invalid address '10.0.0.256'");
	PARSE_FAILS("ipv4@::1 local0", "invalid IPv4 address '::1'");
	PARSE_FAILS("ipv4@[::1]:514 local0", "IPv6 address where IPv4 is required");
	PARSE_FAILS("ipv6@10.0.0.1 local0", "invalid IPv6 address '10.0.0.1'");
	PARSE_FAILS("[::1 local0", "missing ']'");
	PARSE_FAILS("[::1]x local0", "unexpected 'x' after ']'");
	PARSE_FAILS("127.0.0.1:99999 local0", "invalid port '99999'");
	PARSE_FAILS("127.0.0.1:5x local0", "invalid port '5x'");
	PARSE_FAILS("127.0.0.1:514-520 local0", "port ranges");
	PARSE_FAILS("fd@ local0", "invalid file descriptor");
	PARSE_FAILS("fd@one local0", "invalid file descriptor");
	PARSE_FAILS("unix@ local0", "missing socket path");
	PARSE_FAILS("/a/very/long/path/that/goes/on/and/on/and/on/well/beyond/the/one/hundred"
	            "/and/eight/bytes/of/sun_path/in/struct/sockaddr_un local0",
	            "socket path too long");
	PARSE_FAILS("abns@a-very-long-abstract-name-that-goes-on-and-on-and-on-well-beyond-"
	            "the-one-hundred-and-seven-bytes-left-in-sun-path local0", "socket path too long");
	PARSE_FAILS("tcp@127.0.0.1:514 local0", "only datagram sockets");
	PARSE_FAILS("uxst@/dev/log local0", "only datagram sockets");
	PARSE_FAILS("ring@buf local0", "only datagram sockets");
	PARSE_FAILS("stream+ipv4@127.0.0.1 local0", "only datagram sockets");
	PARSE_FAILS("foo@bar local0", "unknown address prefix in 'foo@bar'");
	PARSE_FAILS("ipv4@ local0", "missing address");
	PARSE_FAILS(":514 local0", "missing address before the port");
}

/* ---- framing on real sockets ---- */

static int udp_receiver(int *port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) < 0)
		return -1;
	*port = ntohs(sin.sin_port);
	return fd;
}

static int abns_receiver(const char *name)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	size_t n = strlen(name);

	memcpy(sun.sun_path + 1, name, n);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sun,
	                   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) < 0)
		return -1;
	return fd;
}

/* One datagram (or read) within <ms>, NUL-terminated; -1 if none. */
static ssize_t recv_one(int fd, char *buf, size_t size, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t n;

	if (poll(&pfd, 1, ms) != 1)
		return -1;
	n = read(fd, buf, size - 1);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

/* Opens a target from <line> into <list>; NULL on failure (reported). */
static struct log_target *open_target(struct list *list, const char *line)
{
	struct log_target *t = parse(line);

	CHECK(t != NULL);
	if (!t) {
		fprintf(stderr, "  parse '%s': %s\n", line, err);
		return NULL;
	}
	CHECK(log_target_open(t, err, sizeof(err)) == 0);
	list_init(list);
	list_append(list, &t->list);
	return t;
}

static void close_target(struct log_target *t)
{
	if (!t)
		return;
	list_del_init(&t->list);
	log_target_free(t);
}

/* Sends "hello" through a target built from "<addr> <opts>" and checks
 * the datagram received on <rfd> byte for byte. */
static void check_frame(int rfd, const char *addr, const char *opts, int level,
                        const struct log_header *h, const char *msg, const char *expect,
                        int lineno)
{
	struct list list;
	struct log_target *t;
	char line[256], got[2048], framed[2048];
	size_t flen;
	ssize_t n;

	snprintf(line, sizeof(line), "%s %s", addr, opts);
	t = open_target(&list, line);
	if (!t)
		return;
	log_send_hdr(&list, level, h, msg, strlen(msg));
	n = recv_one(rfd, got, sizeof(got), 1000);
	t_checks++;
	if (n < 0 || strcmp(got, expect) != 0) {
		t_failed++;
		fprintf(stderr, "%s:%d: log %s: sent \"%s\", expected \"%s\"\n",
		        __FILE__, lineno, line, n < 0 ? "(nothing)" : got, expect);
	}
	/* log_frame() tells the same bytes */
	flen = log_frame(t, level, h, msg, strlen(msg), framed, sizeof(framed));
	CHECK(flen == strlen(expect) && strcmp(framed, expect) == 0);
	close_target(t);
}
#define CHECK_FRAME(rfd, addr, opts, level, h, msg, expect) \
	check_frame(rfd, addr, opts, level, h, msg, expect, __LINE__)

static void test_framing(void)
{
	char addr[64], abns[64], name[48];
	int port, ufd = udp_receiver(&port), afd;
	struct log_header h = { .tag = "sluice", .pid = 1234,
	                        .now_us = fixed_us(2026, 11, 22, 4, 25, 0, 123456) };
	struct log_header hh = h, h2 = h;

	snprintf(name, sizeof(name), "sluice-test-log-%d", (int)getpid());
	afd = abns_receiver(name);
	CHECK(ufd >= 0 && afd >= 0);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	snprintf(abns, sizeof(abns), "abns@%s", name);
	hh.hostname = "myhost";

	/* default: HAProxy's "local" (no hostname), rfc3164 with a hostname */
	CHECK_FRAME(ufd, addr, "local0", 6, &h, "hello",
	            "<134>Nov 22 04:25:00 sluice[1234]: hello\n");
	CHECK_FRAME(afd, abns, "local0", 6, &h, "hello",
	            "<134>Nov 22 04:25:00 sluice[1234]: hello\n");
	CHECK_FRAME(ufd, addr, "local0", 6, &hh, "hello",
	            "<134>Nov 22 04:25:00 myhost sluice[1234]: hello\n");
	CHECK_FRAME(ufd, addr, "format local local0", 6, &hh, "hello",
	            "<134>Nov 22 04:25:00 sluice[1234]: hello\n");
	CHECK_FRAME(ufd, addr, "format rfc3164 local0", 6, &h, "hello",
	            "<134>Nov 22 04:25:00 localhost sluice[1234]: hello\n");
	CHECK_FRAME(ufd, addr, "format rfc3164 daemon", 3, &hh, "hello",
	            "<27>Nov 22 04:25:00 myhost sluice[1234]: hello\n");
	CHECK_FRAME(ufd, addr, "format rfc5424 local0", 6, &hh, "hello",
	            "<134>1 2026-11-22T04:25:00.123456+00:00 myhost sluice 1234 - - hello\n");
	CHECK_FRAME(afd, abns, "format rfc5424 local0", 6, &h, "hello",
	            "<134>1 2026-11-22T04:25:00.123456+00:00 - sluice 1234 - - hello\n");
	CHECK_FRAME(ufd, addr, "format priority local0", 6, &h, "hello", "<134>hello\n");
	CHECK_FRAME(ufd, addr, "format short local0", 6, &h, "hello", "<6>hello\n");
	CHECK_FRAME(ufd, addr, "format timed local0", 4, &h, "hello",
	            "<4>2026-11-22T04:25:00.123456+00:00 hello\n");
	CHECK_FRAME(ufd, addr, "format iso local0", 6, &h, "hello",
	            "2026-11-22T04:25:00.123456+00:00 hello\n");
	CHECK_FRAME(afd, abns, "format raw local0", 6, &h, "hello", "hello\n");

	/* day of month padded with a space; kern facility, emerg level: PRI 0 */
	h2.now_us = fixed_us(2026, 1, 2, 23, 5, 9, 0);
	CHECK_FRAME(ufd, addr, "kern", 0, &h2, "x", "<0>Jan  2 23:05:09 sluice[1234]: x\n");
	/* trailing LF and NUL of the message are dropped, one LF is sent */
	CHECK_FRAME(ufd, addr, "format raw local0", 6, &h, "line\n", "line\n");
	/* no pid, no tag; NULL tag is "sluice" */
	h2 = h;
	h2.pid = 0;
	CHECK_FRAME(ufd, addr, "local0", 6, &h2, "m", "<134>Nov 22 04:25:00 sluice: m\n");
	CHECK_FRAME(ufd, addr, "format rfc5424 local0", 6, &h2, "m",
	            "<134>1 2026-11-22T04:25:00.123456+00:00 - sluice - - - m\n");
	h2.tag = "";
	CHECK_FRAME(ufd, addr, "local0", 6, &h2, "m", "<134>Nov 22 04:25:00 m\n");
	h2.tag = NULL;
	h2.pid = 7;
	CHECK_FRAME(ufd, addr, "local0", 6, &h2, "m", "<134>Nov 22 04:25:00 sluice[7]: m\n");
	/* minlevel raises more severe levels: emerg sent as err (16*8+3) */
	CHECK_FRAME(ufd, addr, "local0 debug err", 0, &h, "m",
	            "<131>Nov 22 04:25:00 sluice[1234]: m\n");
	CHECK_FRAME(ufd, addr, "local0 debug err", 6, &h, "m",
	            "<134>Nov 22 04:25:00 sluice[1234]: m\n");
	/* levels above 7 are debug */
	CHECK_FRAME(ufd, addr, "format short local0", 9, &h, "m", "<7>m\n");

	/* `len`: the whole datagram, LF included, fits in 80 bytes */
	{
		char big[300], expect[128];

		memset(big, 'a', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		snprintf(expect, sizeof(expect), "<134>Nov 22 04:25:00 sluice[1234]: %.*s\n",
		         80 - 1 - 35, big);
		CHECK(strlen(expect) == 80);
		CHECK_FRAME(ufd, addr, "len 80 local0", 6, &h, big, expect);
		snprintf(expect, sizeof(expect), "%.79s\n", big);
		CHECK_FRAME(ufd, addr, "len 80 format raw local0", 6, &h, big, expect);
	}
	close(ufd);
	close(afd);
}

static void test_filtering(void)
{
	struct list list;
	struct log_target *t;
	struct log_header h = { .tag = "sluice", .pid = 1, .now_us = 1 };
	char addr[64], got[256];
	int port, fd = udp_receiver(&port), received = 0;

	snprintf(addr, sizeof(addr), "127.0.0.1:%d format raw local0 notice", port);
	t = open_target(&list, addr);
	log_send_hdr(&list, 6, &h, "info", 4);       /* above notice: not sent */
	log_send_hdr(&list, 5, &h, "notice", 6);
	log_send_hdr(&list, -1, &h, "none", 4);      /* negative: no log */
	CHECK(recv_one(fd, got, sizeof(got), 1000) > 0 && strcmp(got, "notice\n") == 0);
	CHECK(recv_one(fd, got, sizeof(got), 50) < 0);
	close_target(t);

	/* sample 1,3:4 → logs 1, 3, 5, 7 of 8 */
	snprintf(addr, sizeof(addr), "127.0.0.1:%d format raw sample 1,3:4 local0", port);
	t = open_target(&list, addr);
	for (int i = 1; i <= 8; i++) {
		char m[16];

		snprintf(m, sizeof(m), "%d", i);
		log_send_hdr(&list, 6, &h, m, strlen(m));
	}
	for (int i = 1; i <= 8; i += 2) {
		char expect[16];

		snprintf(expect, sizeof(expect), "%d\n", i);
		if (recv_one(fd, got, sizeof(got), 1000) > 0 && strcmp(got, expect) == 0)
			received++;
	}
	CHECK(received == 4);
	CHECK(recv_one(fd, got, sizeof(got), 50) < 0);
	close_target(t);

	/* two targets, each with its own framing; log_send() sends no hostname */
	{
		struct log_target *t2;
		char line[96];

		snprintf(addr, sizeof(addr), "127.0.0.1:%d format raw local0", port);
		t = open_target(&list, addr);
		snprintf(line, sizeof(line), "127.0.0.1:%d format short local0", port);
		t2 = parse(line);
		CHECK(t2 && log_target_open(t2, err, sizeof(err)) == 0);
		if (t2)
			list_append(&list, &t2->list);
		log_send(&list, 3, "prog", 99, "two", 3);
		CHECK(recv_one(fd, got, sizeof(got), 1000) > 0 && strcmp(got, "two\n") == 0);
		CHECK(recv_one(fd, got, sizeof(got), 1000) > 0 && strcmp(got, "<3>two\n") == 0);
		close_target(t2);
		close_target(t);
	}

	/* a target never opened drops and counts */
	{
		uint64_t before = atomic_load(&global.dropped_logs);

		snprintf(addr, sizeof(addr), "127.0.0.1:%d local0", port);
		t = parse(addr);
		list_init(&list);
		list_append(&list, &t->list);
		log_send(&list, 6, NULL, 1, "lost", 4);
		CHECK(atomic_load(&global.dropped_logs) == before + 1);
		CHECK(recv_one(fd, got, sizeof(got), 50) < 0);
		close_target(t);
	}
	close(fd);
}

static void test_open(void)
{
	struct log_target *t;
	int fl;

	t = parse("127.0.0.1:9 local0");
	CHECK(t && log_target_open(t, err, sizeof(err)) == 0 && t->fd >= 0 && t->fd_owned);
	CHECK(t && (fcntl(t->fd, F_GETFL) & O_NONBLOCK));
	CHECK(t && (fcntl(t->fd, F_GETFD) & FD_CLOEXEC));
	CHECK(t && log_target_open(t, err, sizeof(err)) == 0);      /* idempotent */
	log_target_free(t);

	t = parse("[::1]:9 local0");
	CHECK(t && log_target_open(t, err, sizeof(err)) == 0 && t->fd >= 0);
	log_target_free(t);

	/* stdout: the shared descriptor's flags are never changed */
	fl = fcntl(1, F_GETFL);
	t = parse("stdout local0");
	CHECK(t && log_target_open(t, err, sizeof(err)) == 0 && t->fd >= 0);
	CHECK(fcntl(1, F_GETFL) == fl);
	log_target_free(t);
	CHECK(fcntl(1, F_GETFL) >= 0);              /* and never closed */

	t = parse("fd@987 local0");
	CHECK(t && log_target_open(t, err, sizeof(err)) < 0);
	CHECK(strstr(err, "fd 987 is not open") != NULL);
	log_target_free(t);
	{
		int p[2];
		char line[32];

		CHECK(pipe(p) == 0);
		snprintf(line, sizeof(line), "fd@%d local0", p[0]);  /* the read end */
		t = parse(line);
		CHECK(t && log_target_open(t, err, sizeof(err)) < 0);
		CHECK(strstr(err, "not open for writing") != NULL);
		log_target_free(t);
		close(p[0]);
		close(p[1]);
	}
}

static void test_clone(void)
{
	struct log_target *t = parse("127.0.0.1:9 sample 2-3:4 local0"), *c;

	CHECK(t && log_target_open(t, err, sizeof(err)) == 0);
	if (!t)
		return;
	t->conf_file = strdup("a.cfg");
	t->conf_line = 12;
	c = log_target_clone(t);
	CHECK(c && c->fd == -1 && !c->fd_owned && c->conf_line == 12);
	CHECK(c && c->conf_file != t->conf_file && strcmp(c->conf_file, "a.cfg") == 0);
	CHECK(c && c->addr_text != t->addr_text && strcmp(c->addr_text, "127.0.0.1:9") == 0);
	CHECK(c && c->sample != t->sample && c->sample->nranges == 1 && c->sample->size == 4);
	CHECK(c && c->sample->ranges != t->sample->ranges && c->sample->ranges[0].high == 3);
	CHECK(c && port_of(&c->addr) == 9 && c->facility == 16 && !list_inlist(&c->list));
	CHECK(c && log_target_open(c, err, sizeof(err)) == 0 && c->fd >= 0 && c->fd != t->fd);
	log_target_free(t);                 /* each frees its own: no double free */
	log_target_free(c);
}

static void sigalrm(int sig)
{
	(void)sig;
	static const char msg[] = "test_log: a log write blocked\n";

	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(1);
}

/* Descriptor targets: frames with LF, and never block when full. */
static void test_fd_targets(void)
{
	struct log_header h = { .tag = "sluice", .pid = 1234,
	                        .now_us = fixed_us(2026, 11, 22, 4, 25, 0, 123456) };
	struct list list;
	struct log_target *t;
	char line[64], got[512], msg[400];
	uint64_t before;
	int p[2], sv[2];

	signal(SIGALRM, sigalrm);
	alarm(30);

	/* a pipe: written through a private non-blocking re-open */
	CHECK(pipe(p) == 0);
	snprintf(line, sizeof(line), "fd@%d local0", p[1]);
	t = open_target(&list, line);
	if (t) {
		CHECK(t->fd != p[1] && t->fd_owned && !t->fd_is_sock);
		CHECK(fcntl(t->fd, F_GETFL) & O_NONBLOCK);
		CHECK(fcntl(t->fd, F_GETFD) & FD_CLOEXEC);
		CHECK(!(fcntl(p[1], F_GETFL) & O_NONBLOCK));
		log_send_hdr(&list, 6, &h, "hello", 5);
		CHECK(recv_one(p[0], got, sizeof(got), 1000) > 0 &&
		      strcmp(got, "<134>Nov 22 04:25:00 sluice[1234]: hello\n") == 0);

		/* fill the pipe: sends must return at once and count drops */
		memset(msg, 'x', sizeof(msg));
		before = atomic_load(&global.dropped_logs);
		for (int i = 0; i < 2000; i++)
			log_send_hdr(&list, 6, &h, msg, sizeof(msg));
		CHECK(atomic_load(&global.dropped_logs) > before);
		close_target(t);
	}
	close(p[0]);
	close(p[1]);

	/* a datagram socket pair behind fd@N: send(MSG_DONTWAIT) */
	CHECK(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) == 0);
	snprintf(line, sizeof(line), "fd@%d format raw local0", sv[1]);
	t = open_target(&list, line);
	if (t) {
		CHECK(t->fd == sv[1] && t->fd_is_sock && !t->fd_owned);
		CHECK(!(fcntl(sv[1], F_GETFL) & O_NONBLOCK));
		log_send_hdr(&list, 6, &h, "over a socket", 13);
		CHECK(recv_one(sv[0], got, sizeof(got), 1000) > 0 &&
		      strcmp(got, "over a socket\n") == 0);
		/* nobody reads: the queue fills, sends never block */
		before = atomic_load(&global.dropped_logs);
		for (int i = 0; i < 5000; i++)
			log_send_hdr(&list, 6, &h, msg, sizeof(msg));
		CHECK(atomic_load(&global.dropped_logs) > before);
		close_target(t);
	}
	CHECK(fcntl(sv[1], F_GETFL) >= 0);          /* not ours: still open */
	close(sv[0]);
	close(sv[1]);

	/* a unix datagram path whose reader never reads */
	{
		char dir[] = "/tmp/sluice-log-XXXXXX", path[48], pline[96];
		struct sockaddr_un sun = { .sun_family = AF_UNIX };
		int rfd;

		CHECK(mkdtemp(dir) != NULL);
		snprintf(path, sizeof(path), "%s/log.sock", dir);
		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
		rfd = socket(AF_UNIX, SOCK_DGRAM, 0);
		CHECK(rfd >= 0 && bind(rfd, (struct sockaddr *)&sun, sizeof(sun)) == 0);
		snprintf(pline, sizeof(pline), "%s format raw local0", path);
		t = open_target(&list, pline);
		if (t) {
			log_send_hdr(&list, 6, &h, "path", 4);
			CHECK(recv_one(rfd, got, sizeof(got), 1000) > 0 && strcmp(got, "path\n") == 0);
			before = atomic_load(&global.dropped_logs);
			for (int i = 0; i < 5000; i++)
				log_send_hdr(&list, 6, &h, msg, sizeof(msg));
			CHECK(atomic_load(&global.dropped_logs) > before);
			/* the reader goes away: errors are counted, not fatal */
			close(rfd);
			unlink(path);
			before = atomic_load(&global.dropped_logs);
			log_send_hdr(&list, 6, &h, "gone", 4);
			CHECK(atomic_load(&global.dropped_logs) == before + 1);
			close_target(t);
		}
		rmdir(dir);
	}
	alarm(0);
}

/* ---- log-format ---- */

static void set_v4(struct sockaddr_storage *ss, const char *ip, int port)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	sin->sin_family = AF_INET;
	sin->sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, ip, &sin->sin_addr);
}

static void set_v6(struct sockaddr_storage *ss, const char *ip, int port)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons((uint16_t)port);
	inet_pton(AF_INET6, ip, &sin6->sin6_addr);
}

static void sample_fields(struct log_fields *f)
{
	memset(f, 0, sizeof(*f));
	set_v4(&f->cli, "127.0.0.1", 56122);
	set_v4(&f->fe, "10.0.0.1", 80);
	set_v4(&f->be_src, "10.0.0.2", 40000);
	set_v4(&f->srv, "10.0.0.3", 8080);
	f->fe_name = "fe1";
	f->be_name = "be1";
	f->srv_name = "srv1";
	f->hostname = "myhost";
	f->accept_us = fixed_us(2026, 11, 22, 4, 25, 0, 123456);
	f->Tw = 0;
	f->Tc = 0;
	f->Tt = 5007;
	f->bytes_out = 212;
	f->bytes_in = 100;
	strcpy(f->term, "--");
	f->actconn = 1;
	f->feconn = 1;
	f->pid = 1234;
}

static const char *render(const char *fmt, const struct log_fields *f)
{
	static char out[1024];
	struct lf_expr e;

	if (lf_compile(fmt, &e, err, sizeof(err)) < 0) {
		snprintf(out, sizeof(out), "(compile error: %s)", err);
		return out;
	}
	lf_render(&e, f, out, sizeof(out));
	lf_free(&e);
	return out;
}

/* The format must not compile, with a message containing <what>. */
static void compile_fails(const char *fmt, const char *what, int lineno)
{
	struct lf_expr e = { (struct lf_node *)&e, 42 };   /* must be reset */
	int rc;

	err[0] = '\0';
	rc = lf_compile(fmt, &e, err, sizeof(err));
	t_checks++;
	if (rc != -1 || !strstr(err, what) || e.nodes || e.count) {
		t_failed++;
		fprintf(stderr, "%s:%d: log-format '%s' should fail with \"%s\", got %d \"%s\"\n",
		        __FILE__, lineno, fmt, what, rc, err);
	}
}
#define COMPILE_FAILS(fmt, what) compile_fails(fmt, what, __LINE__)

static void test_logformat_render(void)
{
	struct log_fields f;
	char ts[32], hex[32];
	time_t sec;

	sample_fields(&f);
	CHECK_STR(render(LF_TCPLOG_FORMAT, &f),
	          "127.0.0.1:56122 [22/Nov/2026:04:25:00.123] fe1 be1/srv1 0/0/5007 212 -- "
	          "1/1/0/0/0 0/0");
	CHECK_STR(render("%fi:%fp %bi:%bp %si:%sp", &f),
	          "10.0.0.1:80 10.0.0.2:40000 10.0.0.3:8080");
	CHECK_STR(render("%f %H %pid %U %B", &f), "fe1 myhost 1234 100 212");
	CHECK_STR(render("[%T] [%Tl] %ms", &f),
	          "[22/Nov/2026:04:25:00 +0000] [22/Nov/2026:04:25:00 +0000] 123");
	sec = (time_t)(f.accept_us / 1000000);
	snprintf(ts, sizeof(ts), "%lld", (long long)sec);
	CHECK_STR(render("%Ts", &f), ts);
	snprintf(hex, sizeof(hex), "%04X", (unsigned int)sec);
	CHECK_STR(render("%{+X}Ts", &f), hex);
	CHECK_STR(render("%{+X}ms %{+X}pid", &f), "7B 04D2");

	/* counters and timers */
	f.actconn = 11;
	f.feconn = 12;
	f.beconn = 13;
	f.srv_conn = 14;
	f.retries = 2;
	f.srv_queue = 5;
	f.be_queue = 6;
	f.Th = 3;
	f.Tw = 10;
	f.Tc = 20;
	f.req_counter = 255;
	f.log_count = 16;
	CHECK_STR(render("%ac/%fc/%bc/%sc/%rc %sq/%bq", &f), "11/12/13/14/2 5/6");
	CHECK_STR(render("%Th %Tw %Tc %Td %Tt %Tu", &f), "3 10 20 4974 5007 5007");
	CHECK_STR(render("%rt %lc %{+X}rt %{+X}lc", &f), "255 16 00FF 0010");
	f.redispatched = 1;
	CHECK_STR(render("%rc", &f), "+2");
	f.logasap = 1;
	CHECK_STR(render("%Tt %Tu %B %U %Tw", &f), "+5007 +5007 +212 100 10");
	f.logasap = 0;
	f.Tw = -1;
	f.Tc = -1;
	CHECK_STR(render("%Tw/%Tc/%Tt %Td", &f), "-1/-1/5007 -1");
	strcpy(f.term, "CD");
	CHECK_STR(render("%ts", &f), "CD");
	f.term[0] = '\0';
	CHECK_STR(render("%ts", &f), "--");

	/* names: no backend yet is the frontend, no server is <NOSRV> */
	sample_fields(&f);
	f.be_name = NULL;
	f.srv_name = NULL;
	CHECK_STR(render("%b/%s", &f), "fe1/<NOSRV>");
	f.fe_name = "";
	f.be_name = "";
	CHECK_STR(render("%f %b %{+Q}f %{-M}f|", &f), "- - \"\" |");
	CHECK_STR(render("%ID %{+Q}ID %sslv %sslc", &f), "- \"\" - -");
	f.unique_id = "abc-1";
	f.ssl_version = "TLSv1.3";
	f.ssl_cipher = "TLS_AES_128_GCM_SHA256";
	CHECK_STR(render("%ID %sslv/%sslc", &f), "abc-1 TLSv1.3/TLS_AES_128_GCM_SHA256");

	/* %ft: '~' for TLS frontends */
	sample_fields(&f);
	CHECK_STR(render("%ft", &f), "fe1");
	f.fe_ssl = 1;
	CHECK_STR(render("%ft %{+Q}ft %f", &f), "fe1~ \"fe1~\" fe1");

	/* IPv6, unix sockets, unset addresses */
	set_v6(&f.cli, "2001:db8::1", 443);
	CHECK_STR(render("%ci:%cp", &f), "2001:db8::1:443");
	CHECK_STR(render("%{+X}ci:%{+X}cp", &f), "20010DB8000000000000000000000001:01BB");
	set_v6(&f.cli, "::ffff:192.0.2.1", 1);
	CHECK_STR(render("%ci", &f), "::ffff:192.0.2.1");
	memset(&f.cli, 0, sizeof(f.cli));
	f.cli.ss_family = AF_UNIX;
	f.listener_id = 3;
	CHECK_STR(render("%ci:%cp %{+X}ci", &f), "unix:3 unix");
	memset(&f.be_src, 0, sizeof(f.be_src));
	CHECK_STR(render("%bi:%bp %{+Q}bi %{+X}bi", &f), "-:- \"\" -");
}

static void test_logformat_flags(void)
{
	struct log_fields f;

	sample_fields(&f);
	CHECK_STR(render("%{+Q}ci:%cp", &f), "\"127.0.0.1\":56122");
	CHECK_STR(render("%{+X}ci:%{+X}cp", &f), "7F000001:DB3A");
	CHECK_STR(render("%{+X,+Q}ci", &f), "7F000001");     /* hex is not quoted */
	CHECK_STR(render("%{+Q}b/%{+Q}s %{+Q}Tt", &f), "\"be1\"/\"srv1\" 5007");
	/* %o: the flags of every later variable, until changed */
	CHECK_STR(render("%{+Q}o%b %s %{-Q}f %H", &f), "\"be1\" \"srv1\" fe1 \"myhost\"");
	CHECK_STR(render("%b %{+Q}o%{-Q}o%b", &f), "be1 be1");
	CHECK_STR(render("%{+Q}o %b", &f), " \"be1\"");     /* %o prints nothing */
	/* +E: backslash before '"', '\' and ']' (RFC 5424 PARAM-VALUE) */
	f.be_name = "a\"b\\c]d";
	CHECK_STR(render("%{+E}b", &f), "a\\\"b\\\\c\\]d");
	CHECK_STR(render("%{+Q,+E}b", &f), "\"a\\\"b\\\\c\\]d\"");
	CHECK_STR(render("%b", &f), "a\"b\\c]d");
	CHECK_STR(render("%{+E}o%{-E}b", &f), "a\"b\\c]d");
	/* unknown flags and flags without sign are ignored, like HAProxy */
	CHECK_STR(render("%{+Z,Q,+}s %{}s", &f), "srv1 srv1");
	f.unique_id = NULL;
	CHECK_STR(render("[%{-M}ID][%{+M}ID]", &f), "[][-]");
}

static void test_logformat_syntax(void)
{
	struct log_fields f;
	struct lf_expr e;
	char small[8];

	sample_fields(&f);
	CHECK_STR(render("", &f), "");
	CHECK_STR(render("plain text", &f), "plain text");
	CHECK_STR(render("100%% %s%%", &f), "100% srv1%");
	CHECK_STR(render("%%%%", &f), "%%");
	CHECK_STR(render("a%-b%.c", &f), "a-b.c");      /* HAProxy drops a lone '%' */
	CHECK_STR(render("%s:%s", &f), "srv1:srv1");
	CHECK_STR(render("%tsX", &f), "(compile error: no such log-format variable "
	                              "'%tsX' (write '%%' for a '%'))");

	/* output always NUL-terminated and cut to fit */
	CHECK(lf_compile(LF_TCPLOG_FORMAT, &e, err, sizeof(err)) == 0 && e.count > 10);
	CHECK(lf_render(&e, &f, small, sizeof(small)) == 7);
	CHECK_STR(small, "127.0.0");
	CHECK(lf_render(&e, &f, small, 1) == 0 && small[0] == '\0');
	CHECK(lf_render(&e, &f, small, 0) == 0);
	lf_free(&e);
	CHECK(e.nodes == NULL && e.count == 0);
	lf_free(&e);                                   /* twice is harmless */

	COMPILE_FAILS("%", "truncated");
	COMPILE_FAILS("abc %", "truncated");
	COMPILE_FAILS("%{+Q", "missing '}'");
	COMPILE_FAILS("%{+Q}", "not followed by a variable name");
	COMPILE_FAILS("%{+Q} %s", "not followed by a variable name");
	COMPILE_FAILS("%1", "unexpected '1' after '%' at position 1");
	COMPILE_FAILS("x % y", "unexpected ' '");
	COMPILE_FAILS("%xyz", "no such log-format variable '%xyz'");
	COMPILE_FAILS("%Tsx", "'%Tsx'");
	COMPILE_FAILS("%ci:%zz", "'%zz'");
	COMPILE_FAILS("%{+Q}9s", "'%9s'");
	COMPILE_FAILS("%[src]", "sample expressions");
	COMPILE_FAILS("%{+Q}[src]", "not supported yet");
	COMPILE_FAILS("%r", "'%r' needs HTTP logging, which is not supported yet");
	COMPILE_FAILS("%ST", "'%ST' needs HTTP");
	COMPILE_FAILS("%{+Q}r", "needs HTTP");
	COMPILE_FAILS("%tsc", "needs HTTP");
	COMPILE_FAILS("%Ta", "needs HTTP");
	COMPILE_FAILS("%ci %hr", "'%hr' needs HTTP");
	COMPILE_FAILS("%CC", "needs HTTP");
}

/* Time zones: %Tl and ISO stamps carry the offset. Last, and on other
 * seconds than the tests above, because dates are cached per second. */
static void test_timezone(void)
{
	struct log_fields f;
	struct log_header h = { .tag = "s", .pid = 1,
	                        .now_us = fixed_us(2026, 11, 22, 4, 26, 0, 5) };
	struct log_target *t;
	char out[256];

	setenv("TZ", "EST5", 1);
	tzset();
	sample_fields(&f);
	f.accept_us = fixed_us(2026, 11, 22, 4, 27, 0, 9000);
	CHECK_STR(render("%t|%T|%Tl", &f),
	          "21/Nov/2026:23:27:00.009|22/Nov/2026:04:27:00 +0000|"
	          "21/Nov/2026:23:27:00 -0500");
	t = parse("stderr format rfc5424 local0");
	CHECK(t != NULL);
	if (t) {
		log_frame(t, 6, &h, "m", 1, out, sizeof(out));
		CHECK_STR(out, "<134>1 2026-11-21T23:26:00.000005-05:00 - s 1 - - m\n");
		t->format = LOG_FORMAT_LOCAL;
		log_frame(t, 6, &h, "m", 1, out, sizeof(out));
		CHECK_STR(out, "<134>Nov 21 23:26:00 s[1]: m\n");
	}
	log_target_free(t);
	setenv("TZ", "UTC", 1);
	tzset();
}

int main(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
	test_names();
	test_parse_addresses();
	test_parse_options();
	test_parse_errors();
	test_open();
	test_clone();
	test_framing();
	test_filtering();
	test_fd_targets();
	test_logformat_render();
	test_logformat_flags();
	test_logformat_syntax();
	test_timezone();
	return t_done("test_log");
}

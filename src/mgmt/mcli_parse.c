/* Master CLI parsers: the -S argument, a command line (commands at ';',
 * the @ prefixes) and the `show proc` layout. Pure functions, no state:
 * tests/unit/test_mcli.c and fuzz/fuzz_mcli.c drive them. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/mgmt/cli.h>
#include <sluice/mgmt/mworker.h>

static int parse_long(const char *s, int base, long max, long *out)
{
	char *end;
	long v;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	v = strtol(s, &end, base);
	if (*end || v < 0 || v > max)
		return -1;
	*out = v;
	return 0;
}

int mcli_bind_parse(const char *arg, struct mcli_bind *b, char *err, size_t errlen)
{
	char tmp[1024];
	char *words[32];
	int n = 0;
	char *p, *save = NULL;

	memset(b, 0, sizeof(*b));
	b->mode = -1;
	b->uid = b->gid = -1;
	b->level = CLI_LEVEL_ADMIN;
	if (strlen(arg) >= sizeof(tmp)) {
		snprintf(err, errlen, "argument too long");
		return -1;
	}
	strcpy(tmp, arg);
	for (p = strtok_r(tmp, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		if (n == (int)(sizeof(words) / sizeof(words[0]))) {
			snprintf(err, errlen, "too many options");
			return -1;
		}
		words[n++] = p;
	}
	if (n == 0 || !*words[0]) {
		snprintf(err, errlen, "missing address");
		return -1;
	}
	if (strlen(words[0]) >= sizeof(b->addr)) {
		snprintf(err, errlen, "address too long");
		return -1;
	}
	strcpy(b->addr, words[0]);
	for (int i = 1; i < n; i += 2) {
		const char *o = words[i], *v = i + 1 < n ? words[i + 1] : NULL;
		long num;

		if (!v) {
			snprintf(err, errlen, "'%.64s' expects a value", o);
			return -1;
		}
		if (!strcmp(o, "mode")) {
			if (parse_long(v, 8, 07777, &num) < 0)
				goto bad_value;
			b->mode = (int)num;
		} else if (!strcmp(o, "uid") || !strcmp(o, "gid")) {
			if (parse_long(v, 10, 0x7fffffffL, &num) < 0)
				goto bad_value;
			*(!strcmp(o, "uid") ? &b->uid : &b->gid) = num;
		} else if (!strcmp(o, "user") || !strcmp(o, "group")) {
			char *dst = !strcmp(o, "user") ? b->user : b->group;

			if (strlen(v) >= sizeof(b->user))
				goto bad_value;
			strcpy(dst, v);
		} else if (!strcmp(o, "level")) {
			if (!strcmp(v, "user"))
				b->level = CLI_LEVEL_USER;
			else if (!strcmp(v, "operator"))
				b->level = CLI_LEVEL_OPERATOR;
			else if (!strcmp(v, "admin"))
				b->level = CLI_LEVEL_ADMIN;
			else
				goto bad_value;
		} else {
			snprintf(err, errlen, "unknown option '%.64s' (mode, uid, gid, user, group "
			         "and level are supported)", o);
			return -1;
		}
		continue;
bad_value:
		snprintf(err, errlen, "invalid value '%.64s' for '%.64s'", v, o);
		return -1;
	}
	return 0;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
		*--e = '\0';
	return s;
}

int mcli_split_line(char *line, char **cmds, int max)
{
	char *start = line, *p;
	int n = 0;

	if (max <= 0)
		return 0;
	/* a '\;' stays in the command as it is (the worker's CLI reads the
	 * escape again): only an unescaped ';' splits */
	for (p = line; *p; p++) {
		if (*p == '\\' && p[1]) {
			p++;
			continue;
		}
		if (*p != ';')
			continue;
		*p = '\0';
		if (n < max)
			cmds[n++] = trim(start);
		start = p + 1;
	}
	if (n < max)
		cmds[n++] = trim(start);
	return n;
}

int mcli_parse_cmd(char *s, struct mcli_cmd *c)
{
	char *p;
	long v;

	memset(c, 0, sizeof(*c));
	c->target = MCLI_T_NONE;
	s = trim(s);
	if (*s != '@') {
		c->cmd = s;
		return 0;
	}
	c->prefix = s;
	for (p = s; *p && *p != ' ' && *p != '\t'; p++)
		;
	if (*p) {
		*p++ = '\0';
		c->cmd = trim(p);
	} else {
		c->cmd = p;   /* "" */
	}
	if (!strcmp(s, "@") || !strcmp(s, "@master")) {
		c->target = MCLI_T_MASTER;
		return 0;
	}
	if (s[1] == '!') {
		if (!isdigit((unsigned char)s[2]) || parse_long(s + 2, 10, 0x7fffffffL, &v) < 0)
			return -1;
		c->target = MCLI_T_PID;
		c->num = v;
		return 0;
	}
	if (!isdigit((unsigned char)s[1]) || parse_long(s + 1, 10, 0x7fffffffL, &v) < 0)
		return -1;
	c->target = MCLI_T_RELATIVE;
	c->num = v;
	return 0;
}

int mcli_socks_split(char *text, char **keys, int max)
{
	int n = 0;

	while (*text && n < max) {
		char *nl = strchr(text, '\n');

		if (nl)
			*nl = '\0';
		if (*text)
			keys[n++] = text;
		if (!nl)
			break;
		text = nl + 1;
	}
	return n;
}

void mcli_fmt_uptime(char *buf, size_t len, uint64_t secs)
{
	snprintf(buf, len, "%ud%02uh%02um%02us", (unsigned)(secs / 86400),
	         (unsigned)(secs / 3600 % 24), (unsigned)(secs / 60 % 60), (unsigned)(secs % 60));
}

int mcli_fmt_proc_line(char *buf, size_t len, const char *first, const char *type,
                       const char *reloads, const char *uptime, const char *version)
{
	return snprintf(buf, len, "%-15s %-15s %-15s %-15s %-15s\n", first, type, reloads,
	                uptime, version);
}

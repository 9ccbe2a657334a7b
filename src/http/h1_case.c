/* h1-case-adjust: see h1_case.h. An open-addressing table keyed by the
 * lower-case name, filled at start-up; a lookup hashes the name once and
 * compares at most a few entries. HAProxy's messages for bad lines.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/errmsg.h>
#include <sluice/http/h1_case.h>

#define KW_ARGS struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen

struct case_ent {
	char *from;              /* lower case; NULL: a free slot */
	char *to;
	size_t len;
};

static struct case_ent *tab;
static size_t tab_size;      /* a power of two, or 0 */
static size_t tab_used;

static size_t name_hash(const char *p, size_t len)
{
	size_t h = 5381;

	for (size_t i = 0; i < len; i++)
		h = h * 33 + (unsigned char)tolower((unsigned char)p[i]);
	return h;
}

static struct case_ent *slot_of(const char *p, size_t len)
{
	size_t i = name_hash(p, len) & (tab_size - 1);

	while (tab[i].from && (tab[i].len != len || strncasecmp(tab[i].from, p, len)))
		i = (i + 1) & (tab_size - 1);
	return &tab[i];
}

static int grow(void)
{
	struct case_ent *old = tab;
	size_t n = tab_size;

	tab_size = n ? n * 2 : 16;
	tab = calloc(tab_size, sizeof(*tab));
	if (!tab) {
		tab = old;
		tab_size = n;
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (old[i].from)
			*slot_of(old[i].from, old[i].len) = old[i];
	free(old);
	return 0;
}

int h1_case_add(const char *from, const char *to, char *err, size_t errlen)
{
	size_t len = strlen(from);
	struct case_ent *e;

	if (len != strlen(to) || strncasecmp(from, to, len))
		return errmsg_set(err, errlen, "<from> and <to> must not differ except the case");
	if ((tab_used + 1) * 2 > tab_size && grow() < 0)
		return errmsg_set(err, errlen, "out of memory");
	e = slot_of(from, len);
	if (e->from)
		return errmsg_set(err, errlen, "duplicate entry '%s'", from);
	e->from = strdup(from);
	e->to = strdup(to);
	if (!e->from || !e->to) {
		free(e->from);
		free(e->to);
		e->from = NULL;
		return errmsg_set(err, errlen, "out of memory");
	}
	for (size_t i = 0; i < len; i++)
		e->from[i] = (char)tolower((unsigned char)e->from[i]);
	e->len = len;
	tab_used++;
	return 0;
}

struct ist h1_case_adjust(struct ist name)
{
	const struct case_ent *e;

	if (!tab_used)
		return name;
	e = slot_of(name.ptr, name.len);
	return e->from ? (struct ist){ e->to, e->len } : name;
}

static int kw_case_adjust(KW_ARGS)
{
	if (nargs != 3)
		return errmsg_set(err, errlen, "'%s' expects <from> and <to> as argument.", args[0]);
	return h1_case_add(args[1], args[2], err, errlen);
}

/* One line of the file: two names, '#' comments and blank lines ignored. */
static int file_line(char *line, char *err, size_t errlen)
{
	char *from, *to, *rest, *save = NULL;

	from = strtok_r(line, " \t\r\n", &save);
	if (!from || *from == '#')
		return 0;
	to = strtok_r(NULL, " \t\r\n", &save);
	rest = to ? strtok_r(NULL, " \t\r\n", &save) : NULL;
	if (!to || rest)
		return errmsg_set(err, errlen, "expects <from> and <to>");
	return h1_case_add(from, to, err, errlen);
}

static int kw_case_adjust_file(KW_ARGS)
{
	char line[1024], sub[256];
	FILE *f;
	int n = 0;

	if (nargs != 2)
		return errmsg_set(err, errlen, "'%s' expects <file> as argument.", args[0]);
	f = fopen(args[1], "r");
	if (!f)
		return errmsg_set(err, errlen, "h1-headers-case-adjust-file '%s': failed to open "
		                  "file.", args[1]);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (file_line(line, sub, sizeof(sub)) < 0) {
			fclose(f);
			return errmsg_set(err, errlen, "h1-headers-case-adjust-file '%s' : %s at "
			                  "line %d.", args[1], sub, n);
		}
	}
	fclose(f);
	return 0;
}

static const struct cfg_kw case_kws[] = {
	{ "h1-case-adjust", NULL, CFG_SEC_GLOBAL, kw_case_adjust },
	{ "h1-case-adjust-file", NULL, CFG_SEC_GLOBAL, kw_case_adjust_file },
	{ NULL }
};
CFG_REGISTER(case_kws)

void h1_case_free(void)
{
	for (size_t i = 0; i < tab_size; i++) {
		free(tab[i].from);
		free(tab[i].to);
	}
	free(tab);
	tab = NULL;
	tab_size = tab_used = 0;
}

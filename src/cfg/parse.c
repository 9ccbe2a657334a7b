/* Configuration files: reading lines, conditional blocks, sections, and
 * dispatching each line to the keyword a module registered.
 *
 * Runs single-threaded before any worker starts. Every error is reported as
 * "[ALERT] file:line: reason" and counted; parsing goes on to report as many
 * errors as possible, and the caller exits 1 if any was found.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sluice/cfg/cfg.h>
#include <sluice/cfg/cond.h>
#include <sluice/cfg/tokenize.h>
#include <sluice/core/global.h>
#include <sluice/proxy/proxy.h>

/* The global section's keywords register from a constructor in
 * src/core/global_cfg.c; this reference links them into every program that
 * parses a configuration, even from a static archive. */
extern const int core_global_cfg_anchor;
__attribute__((used)) static const int *const global_kws_anchor = &core_global_cfg_anchor;
extern const int core_global_tune_anchor;
__attribute__((used)) static const int *const global_tune_anchor = &core_global_tune_anchor;

static struct cfg_kw_table *kw_tables;
static struct cfg_post_hook *post_hooks;
static struct cfg_section_def *section_defs;

void cfg_register_section(struct cfg_section_def *s)
{
	s->next = section_defs;
	section_defs = s;
}

static const struct cfg_section_def *find_section_def(const char *w, enum cfg_section sec)
{
	for (const struct cfg_section_def *d = section_defs; d; d = d->next)
		if (w ? strcmp(d->name, w) == 0 : d->sec == sec)
			return d;
	return NULL;
}

void cfg_register(struct cfg_kw_table *t)
{
	t->next = kw_tables;
	kw_tables = t;
}

void cfg_register_post(struct cfg_post_hook *h)
{
	struct cfg_post_hook **p = &post_hooks;

	while (*p && (*p)->order <= h->order)
		p = &(*p)->next;
	h->next = *p;
	*p = h;
}

void cfg_alert(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "[ALERT] %s:%d: ", file ? file : "<cmdline>", line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int warnings_emitted;

int cfg_warning_count(void)
{
	return warnings_emitted;
}

void cfg_warning(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	warnings_emitted++;
	fprintf(stderr, "[WARNING] %s:%d: ", file ? file : "<cmdline>", line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static const char *section_name(enum cfg_section s)
{
	switch (s) {
	case CFG_SEC_GLOBAL:   return "global";
	case CFG_SEC_DEFAULTS: return "defaults";
	case CFG_SEC_FRONTEND: return "frontend";
	case CFG_SEC_BACKEND:  return "backend";
	case CFG_SEC_LISTEN:   return "listen";
	default:
		return find_section_def(NULL, s) ? find_section_def(NULL, s)->name : "no";
	}
}

static enum cfg_section section_from_word(const char *w)
{
	static const struct { const char *name; enum cfg_section sec; } tab[] = {
		{ "global", CFG_SEC_GLOBAL }, { "defaults", CFG_SEC_DEFAULTS },
		{ "frontend", CFG_SEC_FRONTEND }, { "backend", CFG_SEC_BACKEND },
		{ "listen", CFG_SEC_LISTEN },
	};
	const struct cfg_section_def *d;

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (strcmp(w, tab[i].name) == 0)
			return tab[i].sec;
	d = find_section_def(w, CFG_SEC_NONE);
	return d ? d->sec : CFG_SEC_NONE;
}

/* Sections of HAProxy's language that sluice does not implement yet: named
 * in the error so that the user knows it is not a typo. */
static int is_unsupported_section(const char *w)
{
	static const char *const names[] = {
		"mailers",
		"ring", "fcgi-app", "crt-store", NULL
	};

	for (int i = 0; names[i]; i++)
		if (strcmp(w, names[i]) == 0)
			return 1;
	return 0;
}

/* Looks up the keyword of a line: a two-word keyword first ("timeout
 * client"), then a one-word one. Several modules may register the same word
 * for different sections (global and proxy `maxconn`): the one valid in
 * <sec> wins; another one is returned only to report it as misplaced. */
static const struct cfg_kw *find_kw(char **args, int nargs, enum cfg_section sec,
                                    int *exists_elsewhere)
{
	const struct cfg_kw *single = NULL, *pair = NULL;

	*exists_elsewhere = 0;
	for (struct cfg_kw_table *t = kw_tables; t; t = t->next) {
		for (const struct cfg_kw *k = t->kws; k->kw; k++) {
			const struct cfg_kw **slot;

			if (strcmp(k->kw, args[0]) != 0)
				continue;
			if (k->sub && !(nargs > 1 && strcmp(k->sub, args[1]) == 0)) {
				*exists_elsewhere = 1;   /* known first word */
				continue;
			}
			slot = k->sub ? &pair : &single;
			if (!*slot || (!((*slot)->sections & sec) && (k->sections & sec)))
				*slot = k;
		}
	}
	return pair ? pair : single;
}

/* A section registered by a module: its header line goes to its handler. */
static int section_def_begin(struct cfg_ctx *ctx, enum cfg_section sec, char **args, int nargs)
{
	const struct cfg_section_def *d = find_section_def(NULL, sec);
	char err[2048] = "";

	if (d->begin(ctx, args, nargs, err, sizeof(err)) < 0) {
		cfg_alert(ctx->file, ctx->line, "%s", err);
		ctx->section = CFG_SEC_NONE;
		ctx->skip_section = 1;
		return -1;
	}
	return 0;
}

static int parse_line(struct cfg_ctx *ctx, char **args, int nargs)
{
	char err[2048] = "";
	const struct cfg_kw *kw;
	int known_word;
	enum cfg_section sec = section_from_word(args[0]);

	if (sec != CFG_SEC_NONE) {
		ctx->section = sec;
		ctx->px = NULL;
		ctx->skip_section = 0;
		if (sec == CFG_SEC_GLOBAL) {
			if (nargs > 1) {
				cfg_alert(ctx->file, ctx->line, "'global' takes no argument.");
				return -1;
			}
			return 0;
		}
		ctx->skip_section = 0;
		if (!(sec & CFG_SEC_PROXY))
			return section_def_begin(ctx, sec, args, nargs);
		ctx->px = proxy_cfg_begin(ctx, sec, args, nargs, err, sizeof(err));
		if (!ctx->px) {
			cfg_alert(ctx->file, ctx->line, "%s", err);
			ctx->section = CFG_SEC_NONE;
			ctx->skip_section = 1;   /* its lines: already reported */
			return -1;
		}
		return 0;
	}
	if (is_unsupported_section(args[0])) {
		cfg_alert(ctx->file, ctx->line, "section '%s' is not supported by sluice.", args[0]);
		ctx->section = CFG_SEC_NONE;
		ctx->px = NULL;
		ctx->skip_section = 1;
		return -1;
	}
	if (ctx->section == CFG_SEC_NONE) {
		if (ctx->skip_section)
			return 0;
		cfg_alert(ctx->file, ctx->line, "unknown keyword '%s' out of section.", args[0]);
		return -1;
	}

	ctx->negate = 0;
	if (strcmp(args[0], "no") == 0 && nargs > 1) {
		ctx->negate = 1;
		args++;
		nargs--;
	}
	kw = find_kw(args, nargs, ctx->section, &known_word);
	if (!kw) {
		if (known_word && nargs > 1)
			cfg_alert(ctx->file, ctx->line, "unknown keyword '%s %s' in '%s' section.",
			          args[0], args[1], section_name(ctx->section));
		else if (known_word)
			cfg_alert(ctx->file, ctx->line, "'%s' expects an argument in '%s' section.",
			          args[0], section_name(ctx->section));
		else
			cfg_alert(ctx->file, ctx->line, "unknown keyword '%s' in '%s' section.",
			          args[0], section_name(ctx->section));
		return -1;
	}
	if (!(kw->sections & ctx->section) && !(kw->flags & CFG_KW_F_SIDE_FATAL) &&
	    (ctx->section == CFG_SEC_FRONTEND || ctx->section == CFG_SEC_BACKEND) &&
	    (kw->sections & (CFG_SEC_FRONTEND | CFG_SEC_BACKEND))) {
		/* a keyword of the other side: HAProxy ignores it with a warning */
		int fe = ctx->section == CFG_SEC_FRONTEND;

		cfg_warning(ctx->file, ctx->line, "'%s%s%s' ignored because %s '%s' has no %s "
		            "capability.", kw->kw, kw->sub ? " " : "", kw->sub ? kw->sub : "",
		            fe ? "frontend" : "backend", ctx->px && ctx->px->name ? ctx->px->name : "",
		            fe ? "backend" : "frontend");
		return 0;
	}
	if (!(kw->sections & ctx->section)) {
		cfg_alert(ctx->file, ctx->line, "'%s%s%s' is not allowed in '%s' section.",
		          kw->kw, kw->sub ? " " : "", kw->sub ? kw->sub : "",
		          section_name(ctx->section));
		return -1;
	}
	if (ctx->negate && !kw->negatable) {
		cfg_alert(ctx->file, ctx->line, "'no' is not supported for '%s%s%s'.",
		          kw->kw, kw->sub ? " " : "", kw->sub ? kw->sub : "");
		return -1;
	}
	if (kw->parse(ctx, args, nargs, err, sizeof(err)) < 0) {
		cfg_alert(ctx->file, ctx->line, "'%s%s%s': %s", kw->kw,
		          kw->sub ? " " : "", kw->sub ? kw->sub : "", err);
		return -1;
	}
	return 0;
}

static int parse_file(const char *path)
{
	static struct cfg_tokens tok;   /* large: keep it off the stack */
	struct cfg_cond_stack cond;
	struct cfg_ctx ctx = { .file = path };
	struct cfg_tok_where where = { .file = path };
	char err[512];
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int errors = 0;
	FILE *f = fopen(path, "r");

	if (!f) {
		fprintf(stderr, "[ALERT] %s: cannot open configuration file: %s\n",
		        path, strerror(errno));
		return 1;
	}
	cfg_cond_init(&cond);
	while ((len = getline(&line, &cap, f)) >= 0) {
		ctx.line++;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if ((size_t)len != strlen(line)) {
			cfg_alert(path, ctx.line, "NUL character in line.");
			errors++;
			continue;
		}
		where.line = ctx.line;
		where.section = ctx.section == CFG_SEC_NONE ? "" : ctx.px && ctx.px->name ?
		                ctx.px->name : section_name(ctx.section);
		if (cfg_tokenize_ex(line, &where, 0, &tok, err, sizeof(err)) < 0) {
			if (cfg_cond_active(&cond)) {
				cfg_alert(path, ctx.line, "%s", err);
				errors++;
			}
			continue;
		}
		if (!tok.nargs)
			continue;
		if (tok.args[0][0] == '.') {
			switch (cfg_cond_directive(&cond, tok.args, tok.nargs, err, sizeof(err))) {
			case CFG_DIR_ERROR:
				cfg_alert(path, ctx.line, "%s", err);
				errors++;
				continue;
			case CFG_DIR_NOTICE:
				fprintf(stderr, "[NOTICE] %s:%d: %s\n", path, ctx.line, err);
				continue;
			case CFG_DIR_WARNING:
				cfg_warning(path, ctx.line, "%s", err);
				continue;
			case CFG_DIR_DIAG:
				if (global.diag)
					fprintf(stderr, "[DIAG] %s:%d: %s\n", path, ctx.line, err);
				continue;
			case CFG_DIR_HANDLED:
				continue;
			case CFG_DIR_NONE:
				break;
			}
		}
		if (!cfg_cond_active(&cond))
			continue;
		if (parse_line(&ctx, tok.args, tok.nargs) < 0)
			errors++;
	}
	if (cond.depth > 0) {
		cfg_alert(path, ctx.line, "non-terminated '.if' block (missing '.endif' at end "
		          "of file).");
		errors++;
	}
	if (ctx.px)
		proxy_cfg_end(&ctx);
	free(line);
	fclose(f);
	return errors;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int parse_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	int n = 0, errors = 0;

	if (!d) {
		fprintf(stderr, "[ALERT] %s: cannot open directory: %s\n", dir, strerror(errno));
		return 1;
	}
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);
		char **nn;

		if (de->d_name[0] == '.' || l < 5 || strcmp(de->d_name + l - 4, ".cfg") != 0)
			continue;
		nn = realloc(names, (n + 1) * sizeof(*names));
		if (!nn)
			break;
		names = nn;
		if (asprintf(&names[n], "%s/%s", dir, de->d_name) < 0)
			break;
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_names);
	for (int i = 0; i < n; i++) {
		errors += cfg_parse_path(names[i]);
		free(names[i]);
	}
	free(names);
	return errors;
}

int cfg_parse_path(const char *path)
{
	struct stat st;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return parse_dir(path);
	return parse_file(path);
}

int cfg_postparse(void)
{
	int errors = 0;

	for (struct cfg_post_hook *h = post_hooks; h; h = h->next)
		errors += h->fn();
	return errors;
}

int cfg_no_more_args(char **args, int nargs, int first, char *err, size_t errlen)
{
	if (nargs > first) {
		snprintf(err, errlen, "unexpected extra argument '%s'.", args[first]);
		return -1;
	}
	return 0;
}

int cfg_parse_uint(const char *s, long max, long *out, char *err, size_t errlen)
{
	char *end;
	long v;

	if (!s || !*s || *s == '-' || *s == '+') {
		snprintf(err, errlen, "expects a non-negative integer, got '%s'.", s ? s : "");
		return -1;
	}
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end) {
		snprintf(err, errlen, "expects a non-negative integer, got '%s'.", s);
		return -1;
	}
	if (v > max) {
		snprintf(err, errlen, "value '%s' is too large (max %ld).", s, max);
		return -1;
	}
	*out = v;
	return 0;
}

/* HAProxy time units: us, ms (default), s, m, h, d. Sub-millisecond values
 * round up to 1 ms so that a non-zero timeout never means "none". */
int cfg_parse_time_ms(const char *s, int *ms, char *err, size_t errlen)
{
	static const struct { const char *unit; double mult; } units[] = {
		{ "us", 0.001 }, { "ms", 1 }, { "s", 1000 }, { "m", 60000 },
		{ "h", 3600000 }, { "d", 86400000 }, { "", 1 },
	};
	char *end;
	unsigned long long v;

	if (!s || !*s || *s < '0' || *s > '9') {
		snprintf(err, errlen, "expects a time value (e.g. 5s, 100ms), got '%s'.", s ? s : "");
		return -1;
	}
	errno = 0;
	v = strtoull(s, &end, 10);
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		double r;

		if (strcmp(end, units[i].unit) != 0)
			continue;
		r = (double)v * units[i].mult;
		if (errno || r > INT_MAX) {
			snprintf(err, errlen, "time value '%s' is too large (max 24d).", s);
			return -1;
		}
		*ms = (r > 0 && r < 1) ? 1 : (int)r;
		return 0;
	}
	snprintf(err, errlen, "unknown time unit in '%s' (use us, ms, s, m, h, d).", s);
	return -1;
}

/* Sizes with k, m, g suffixes (powers of 1024), as tune.bufsize accepts. */
int cfg_parse_size(const char *s, long *out, char *err, size_t errlen)
{
	char *end;
	long v;

	if (!s || *s < '0' || *s > '9') {
		snprintf(err, errlen, "expects a size, got '%s'.", s ? s : "");
		return -1;
	}
	errno = 0;
	v = strtol(s, &end, 10);
	if (*end == 'k' || *end == 'K')
		v *= 1024, end++;
	else if (*end == 'm' || *end == 'M')
		v *= 1024 * 1024, end++;
	else if (*end == 'g' || *end == 'G')
		v *= 1024L * 1024 * 1024, end++;
	if (errno || *end || v < 0) {
		snprintf(err, errlen, "invalid size '%s'.", s);
		return -1;
	}
	*out = v;
	return 0;
}

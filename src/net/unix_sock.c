/* UNIX listening sockets: `unix-bind` and the socket owner options. See
 * unix_sock.h. The owner is set with chown() after bind(), which needs the
 * privileges to give the file away (root, or a group the user is in).
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/errmsg.h>
#include <sluice/net/addr.h>
#include <sluice/net/unix_sock.h>
#include <sluice/proxy/proxy.h>

#define KW_ARGS struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen

static struct {
	char *prefix;
	int mode;                /* -1: unset */
	long uid, gid;           /* -1: unset */
} ub = { NULL, -1, -1, -1 };

static int name_to_id(const char *what, const char *v, long *out, char *err, size_t errlen)
{
	if (!strcmp(what, "user")) {
		struct passwd *pw = getpwnam(v);

		if (!pw)
			return errmsg_set(err, errlen, "'user' : unknown user name '%s'", v);
		*out = (long)pw->pw_uid;
	} else {
		struct group *gr = getgrnam(v);

		if (!gr)
			return errmsg_set(err, errlen, "'group' : unknown group name '%s'", v);
		*out = (long)gr->gr_gid;
	}
	return 0;
}

/* HAProxy reads a uid with atol() ("abc" is root): sluice wants a number */
static int number_id(const char *what, const char *v, long *out, char *err, size_t errlen)
{
	char *end;
	long n = strtol(v, &end, 10);

	if (!*v || *end || n < 0 || n > 0x7fffffffL)
		return errmsg_set(err, errlen, "'%s' expects a numeric id, got '%s'", what, v);
	*out = n;
	return 0;
}

int unix_sock_owner_opt(struct bind_conf *bc, const char *opt, const char *v, char *err,
                        size_t errlen)
{
	int is_user = !strcmp(opt, "user") || !strcmp(opt, "uid");
	long *dst = is_user ? &bc->unix_uid : &bc->unix_gid;

	if (!strcmp(opt, "user") || !strcmp(opt, "group"))
		return name_to_id(opt, v, dst, err, errlen);
	return number_id(opt, v, dst, err, errlen);
}

int unix_sock_defaults(struct bind_conf *bc, char *err, size_t errlen)
{
	if (bc->addr.kind != ADDR_UNIX || bc->is_cli)
		return 0;   /* stats sockets keep their own settings, as in HAProxy */
	if (ub.prefix) {
		struct sockaddr_un *un = (struct sockaddr_un *)&bc->addr.ss;
		size_t pl = strlen(ub.prefix), n = strlen(un->sun_path);

		if (un->sun_path[0] && pl + n < sizeof(un->sun_path)) {
			memmove(un->sun_path + pl, un->sun_path, n + 1);
			memcpy(un->sun_path, ub.prefix, pl);
			bc->addr.len += (socklen_t)pl;
		} else if (un->sun_path[0]) {
			return errmsg_set(err, errlen, "socket path '%s%s' too long", ub.prefix,
			                  un->sun_path);
		}
	}
	if (bc->mode_perm < 0)
		bc->mode_perm = ub.mode;
	if (bc->unix_uid < 0)
		bc->unix_uid = ub.uid;
	if (bc->unix_gid < 0)
		bc->unix_gid = ub.gid;
	return 0;
}

int unix_sock_apply(const struct bind_conf *bc, const char *path, char *err, size_t errlen)
{
	if (bc->mode_perm >= 0 && chmod(path, (mode_t)bc->mode_perm) < 0)
		return errmsg_set(err, errlen, "cannot change UNIX socket permissions (%s) for [%s]",
		                  strerror(errno), bc->addr_str);
	if ((bc->unix_uid >= 0 || bc->unix_gid >= 0) &&
	    chown(path, (uid_t)bc->unix_uid, (gid_t)bc->unix_gid) < 0)
		return errmsg_set(err, errlen, "cannot change UNIX socket ownership (%s) for [%s]",
		                  strerror(errno), bc->addr_str);
	return 0;
}

/* unix-bind [prefix <p>] [mode <m>] [user <u>] [uid <n>] [group <g>] [gid <n>] */
static int kw_unix_bind(KW_ARGS)
{
	for (int i = 1; i < nargs; i += 2) {
		const char *o = args[i], *v = i + 1 < nargs ? args[i + 1] : NULL;
		char *end;

		if (!v || (strcmp(o, "prefix") && strcmp(o, "mode") && strcmp(o, "uid") &&
		           strcmp(o, "gid") && strcmp(o, "user") && strcmp(o, "group")))
			return errmsg_set(err, errlen, "only supports the 'prefix', "
			                  "'mode', 'uid', 'gid', 'user' and 'group' options.");
		if (!strcmp(o, "prefix")) {
			free(ub.prefix);
			if (!(ub.prefix = strdup(v)))
				return errmsg_set(err, errlen, "out of memory");
		} else if (!strcmp(o, "mode")) {
			long m = strtol(v, &end, 8);

			if (!*v || *end || m < 0 || m > 07777)
				return errmsg_set(err, errlen, "'mode' expects an octal "
				                  "mode, got '%s'.", v);
			ub.mode = (int)m;
		} else if (!strcmp(o, "user") || !strcmp(o, "group")) {
			if (name_to_id(o, v, o[0] == 'u' ? &ub.uid : &ub.gid, err, errlen) < 0)
				return errmsg_set(err, errlen, "'%s' unknown %s.", v,
				                  o[0] == 'u' ? "user" : "group");
		} else if (number_id(o, v, o[0] == 'u' ? &ub.uid : &ub.gid, err, errlen) < 0) {
			return -1;
		}
	}
	return 0;
}

static const struct cfg_kw unix_kws[] = {
	{ "unix-bind", NULL, CFG_SEC_GLOBAL, kw_unix_bind },
	{ NULL }
};
CFG_REGISTER(unix_kws)

void unix_sock_free(void)
{
	free(ub.prefix);
	ub.prefix = NULL;
	ub.mode = -1;
	ub.uid = ub.gid = -1;
}

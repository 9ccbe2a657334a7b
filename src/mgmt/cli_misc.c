/* Small read-only CLI commands: show startup-logs (what the process wrote
 * on stderr while starting, kept by src/core/startlog.c, frozen before the
 * threads start) and show ssl providers (OpenSSL 3's loaded providers, as
 * HAProxy 2.6 lists them). Neither touches shared mutable state.
 */
#include <openssl/provider.h>
#include <sluice/core/startlog.h>
#include <sluice/mgmt/cli.h>

static int cli_show_startup_logs(char **, int, struct cli_out *, int);
static int cli_show_ssl_providers(char **, int, struct cli_out *, int);

static const struct cli_kw misc_kws[] = {
	{ { "show", "startup-logs" }, CLI_LEVEL_OPERATOR, cli_show_startup_logs,
	  "show startup-logs                       : report logs emitted during startup" },
	{ { "show", "ssl", "providers" }, CLI_LEVEL_USER, cli_show_ssl_providers,
	  "show ssl providers                      : show loaded SSL providers" },
	{ { NULL } }
};
CLI_REGISTER(misc_kws)

static int cli_show_startup_logs(char **args, int nargs, struct cli_out *out, int level)
{
	size_t len;
	const char *text = startlog_text(&len);

	if (text && len)
		cli_printf(out, "%.*s", (int)len, text);
	return 0;
}

static int print_provider(OSSL_PROVIDER *prov, void *arg)
{
	cli_printf(arg, "\t- %s\n", OSSL_PROVIDER_get0_name(prov));
	return 1;
}

static int cli_show_ssl_providers(char **args, int nargs, struct cli_out *out, int level)
{
	cli_printf(out, "Loaded providers : \n");
	OSSL_PROVIDER_do_all(NULL, print_provider, out);
	return 0;
}

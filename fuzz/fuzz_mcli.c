/* libFuzzer target: the master CLI's line parsers (src/mgmt/mcli_parse.c),
 * which read what a client sends on the master socket, and the -S argument
 * parser.
 *
 * Checked on every input, beyond the sanitizers' own checks:
 * - mcli_split_line() returns at most the room given, every command lies
 *   inside the line and has no blank at either end;
 * - mcli_parse_cmd() sets a target coherent with its prefix, and a command
 *   with no '@' keeps its whole text;
 * - mcli_bind_parse() leaves a message when it fails, and sane fields when
 *   it succeeds;
 * - mcli_socks_split() (the answer to _getsocks that -x reads) returns
 *   non-empty keys without a newline, inside the text.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/mgmt/cli.h>
#include <sluice/mgmt/mworker.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = malloc(size + 1), *copy = malloc(size + 1);
	char *cmds[16], err[256];
	struct mcli_bind b;
	int n;

	memcpy(line, data, size);
	line[size] = '\0';
	memcpy(copy, line, size + 1);
	n = mcli_split_line(line, cmds, 16);
	assert(n >= 1 && n <= 16);
	for (int i = 0; i < n; i++) {
		struct mcli_cmd c;
		size_t l = strlen(cmds[i]);
		int had_at;

		assert(cmds[i] >= line && cmds[i] + l <= line + size);
		assert(l == 0 || (cmds[i][0] != ' ' && cmds[i][l - 1] != ' '));
		had_at = cmds[i][0] == '@';
		if (mcli_parse_cmd(cmds[i], &c) < 0) {
			assert(had_at && c.prefix);
			continue;
		}
		assert(c.cmd);
		if (!had_at) {
			assert(c.target == MCLI_T_NONE && !c.prefix);
		} else {
			assert(c.target != MCLI_T_NONE && c.prefix && c.prefix[0] == '@');
			assert(c.num >= 0);
		}
	}
	memcpy(line, data, size);
	line[size] = '\0';
	n = mcli_socks_split(line, cmds, 16);
	assert(n >= 0 && n <= 16);
	for (int i = 0; i < n; i++)
		assert(cmds[i][0] && !strchr(cmds[i], '\n') && cmds[i] >= line &&
		       cmds[i] < line + size);
	err[0] = '\0';
	if (mcli_bind_parse(copy, &b, err, sizeof(err)) < 0) {
		assert(err[0]);
	} else {
		assert(b.addr[0] && b.mode <= 07777);
		assert(b.level >= CLI_LEVEL_USER && b.level <= CLI_LEVEL_ADMIN);
	}
	free(line);
	free(copy);
	return 0;
}

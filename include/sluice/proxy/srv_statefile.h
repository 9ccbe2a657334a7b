/* Server states across reloads: `server-state-file`, `server-state-base`,
 * `load-server-state-from-file`, `server-state-file-name`. At start-up,
 * each backend that asks for it gets the states a previous process wrote
 * with `show servers state` (src/proxy/srv_statefile.c reads the file,
 * src/proxy/srv_state.c applies a line). */
#ifndef SLUICE_PROXY_SRV_STATEFILE_H
#define SLUICE_PROXY_SRV_STATEFILE_H

#include <stdint.h>

/* load-server-state-from-file */
enum { SRV_STATE_LOAD_NONE = 0, SRV_STATE_LOAD_GLOBAL, SRV_STATE_LOAD_LOCAL };

/* One data line of a version 1 file, as `show servers state` writes it:
 * the names point into the line read. */
struct srv_saved {
	const char *be_name, *srv_name;
	int be_id, srv_id;
	int op;                  /* 0 stopped, 1 starting, 2 running, 3 stopping */
	int admin;               /* SRV_ADMF_* bits: 0x01 forced maintenance, 0x08 drain */
	int uweight, iweight;
	int64_t since_s;         /* seconds since the last change */
	int check_status, check_result, check_health, check_state, agent_state;
	int line;                /* in its file (set by the reader) */
};

#define SRV_SAVED_FMAINT  0x01
#define SRV_SAVED_FDRAIN  0x08

/* Splits a data line (modified in place: NULs between fields) into <out>.
 * Returns 0, or -1 when it is not a valid version 1 line (HAProxy then
 * calls the whole file corrupted). Comment lines are the caller's. */
int srv_saved_parse(char *line, struct srv_saved *out);

#endif

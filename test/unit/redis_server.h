/* A real redis-server for the fleet-tier tests: on 127.0.0.1, a free port, its own temporary
 * folder, no persistence (--save '' --appendonly no); killed with the test process
 * (PR_SET_PDEATHSIG) and stopped by st_test_redis_stop with bounded waits. */
#ifndef ST_TEST_REDIS_SERVER_H
#define ST_TEST_REDIS_SERVER_H
#include <sys/types.h>

typedef struct st_test_redis {
	pid_t pid;          /* 0 when not running */
	int port;
	char dir[64];       /* its working folder (removed by stop) */
	char url[64];       /* redis://127.0.0.1:PORT/0 */
} st_test_redis;

/* Start one (extra: more redis-server arguments, NULL-terminated, may be NULL) and wait until it
 * answers PING (at most 5 s).  0 on success; -1 (with a message on stderr) otherwise. */
int st_test_redis_start(st_test_redis *s, const char *const *extra);
/* SIGTERM, wait at most 2 s, then SIGKILL and reap; remove the folder.  Safe to call twice. */
void st_test_redis_stop(st_test_redis *s);
/* SIGKILL now and reap (Redis dies mid-run); the folder stays for stop. */
void st_test_redis_kill(st_test_redis *s);
/* Run one command (printf-style, hiredis formatting); returns the reply's integer, or 0 for a
 * status/string reply, or -1 for an error reply or no connection. */
long long st_test_redis_cmd(const st_test_redis *s, const char *fmt, ...);
#endif

/* Internals of the Redis tier shared by cache_redis.c and cache_redis_lock.c (hiredis builds only). */
#ifndef ST_CACHE_REDIS_H
#define ST_CACHE_REDIS_H

#include "sasstune/cache_remote.h"

#include <hiredis/hiredis.h>
#include <sys/time.h>

struct st_cache_remote {
	redisContext *c;
	char *url, *prefix;
	int timeout_ms;
	char where[300];  /* host:port/db, for messages */
	st_status broken; /* ST_OK, or the status of the connection failure that ended it */
	char why[256];
};

struct timeval st_cache__tv(int ms);
/* One command; *out is the reply (freed by the caller), never an error reply (that is ST_EIO).
 * After a connection failure every later call fails at once with the same error. */
st_status st_cache__redis_cmd(st_cache_remote *r, redisReply **out, int argc, const char **argv,
			      const size_t *lens, st_error *err);
st_status st_cache__redis_cmdv(st_cache_remote *r, redisReply **out, int argc, const char **argv, st_error *err);
/* <prefix>v1:<key><suffix> */
void st_cache__redis_key(const st_cache_remote *r, const char *key, const char *suffix, char *out, size_t n);

#endif

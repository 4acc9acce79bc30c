/* sasstune cache: pieces shared by the folder tier (cmd_cache.c) and the Redis tier
 * (cmd_cache_redis.c). */
#ifndef ST_CMD_CACHE_H
#define ST_CMD_CACHE_H

#include "sasstune/cache.h"

#include <cJSON.h>

struct opts {
	const char *sub, *key, *dir, *older, *redis, *prefix;
	int json;
};

cJSON *st_cache_cli_entry_json(const st_cache_info *i);
/* One entry of list: its text line, or with json its object appended to entries ({key, valid:
 * false, problem} when i is NULL: an invalid entry).  1 when out of memory, else 0. */
int st_cache_cli_list_entry(int json, cJSON *entries, const char *key, const st_cache_info *i, const char *problem);
int st_cache_cli_print_json(cJSON *o); /* prints and frees o; an exit code */
int st_cache_cli_show_json(st_cache_entry *e);
int st_cache_cli_show_text(st_cache_entry *e);
/* list, show or clear against Redis (o->redis). */
int st_cache_cli_remote(const struct opts *o);

#endif

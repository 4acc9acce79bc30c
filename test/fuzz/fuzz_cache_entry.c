/* Fuzz the cache entry parser: entry.json files on disk are outside input
 * (truncated, edited, or from another version).  Besides not crashing, an
 * entry that parses must (1) parse again under its own key, (2) be refused
 * under any other key, and (3) survive a format -> parse round trip with the
 * same key and fields (entries of key format 2; format 1 ones, made before legality versions,
 * are stale and are never written again).  Negative entries round-trip as negative ones. */
#include "cache/cache_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x) do { if (!(x)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Optional strings: both absent or equal. */
static int same(const char *a, const char *b) { return (!a && !b) || (a && b && !strcmp(a, b)); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	st_cache_entry *e;
	st_error err;
	if (st_cache__parse_entry(&e, (const char *)data, size, NULL, &err) != ST_OK) {
		CHECK(e == NULL && err.msg[0] != '\0');
		return 0;
	}
	const st_cache_info *i = st_cache_entry_info(e);
	CHECK(strlen(i->key) == 64 && i->speedup_low <= i->speedup && i->speedup <= i->speedup_high);

	st_cache_entry *again;
	CHECK(st_cache__parse_entry(&again, (const char *)data, size, i->key, &err) == ST_OK);
	st_cache_entry_free(again);
	char other[65];
	memcpy(other, i->key, 65);
	other[63] = other[63] == '0' ? '1' : '0';
	CHECK(st_cache__parse_entry(&again, (const char *)data, size, other, &err) == ST_EFORMAT);

	if (!strcmp(i->legality_version, "none")) { /* key format 1 */
		st_cache_entry_free(e);
		return 0;
	}
	/* round trip: the tuned cubin is not part of entry.json, so any bytes do */
	static const uint8_t cubin[1] = {0};
	st_cache_key_fields f;
	st_cache_info_key_fields(i, &f);
	st_cache_record r;
	st_cache_entry_record(e, &r);
	if (i->negative)
		r.schedule_json = r.verification_json = "{}";
	CHECK(r.schedule_json && r.verification_json);
	r.tuned_cubin = cubin;
	r.tuned_cubin_size = sizeof cubin;
	char *json;
	CHECK(st_cache__format_entry(&json, &f, &r, &err) == ST_OK);
	CHECK(st_cache__parse_entry(&again, json, strlen(json), i->key, &err) == ST_OK);
	const st_cache_info *j = st_cache_entry_info(again);
	CHECK(!strcmp(j->kernel, i->kernel) && !strcmp(j->date, i->date) && j->speedup == i->speedup &&
	      j->negative == i->negative && j->best_ratio == i->best_ratio);
	CHECK(i->negative ? !strcmp(j->why, i->why) : !strcmp(st_cache_entry_schedule(again), r.schedule_json));
	CHECK(same(j->variants, i->variants) && same(j->ptxas_options, i->ptxas_options) &&
	      same(j->variant_ptxas_version, i->variant_ptxas_version) && same(j->variant_options, i->variant_options));
	st_cache_entry_free(again);
	free(json);
	st_cache_entry_free(e);
	return 0;
}

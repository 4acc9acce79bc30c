/* Negative entries ("tuned, nothing beat stock") stored, read back, listed and replaced; entries
 * of another legality version or of key format 1 read as stale, never looked up. */
#include "testutil.h"
#include "cache/cache_internal.h"
#include "sasstune/sched.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SHA_A "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb; (void)flag; (void)ftw;
	return remove(p);
}

static char *tmpdir(void)
{
	char *d = strdup("/tmp/st-cache-neg-XXXXXX");
	assert_non_null(mkdtemp(d));
	return d;
}

static void rm_rf(char *d)
{
	nftw(d, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(d);
}

static st_cache_key_fields fields(const char *legality)
{
	return (st_cache_key_fields){.cubin_sha256 = SHA_A, .kernel = "add_kernel", .gpu_name = "NVIDIA H200",
				     .compute_capability = "9.0", .driver_version = "580.65.06",
				     .ptxas_version = "12.8.93", .legality_version = legality};
}

static const st_cache_record negative = {.method = "ppo", .budget = "10s", .date = "2026-12-01T12:00:00Z",
					 .negative = 1, .best_ratio = 0.9987, .why = "no schedule passed confirmation"};

static int count_cubins(const char *dir, const char *key)
{
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "ls %s/v1/%s | grep -c '\\.cubin$'", dir, key);
	FILE *p = popen(cmd, "r");
	int n = -1;
	assert_int_equal(fscanf(p, "%d", &n), 1);
	pclose(p);
	return n;
}

static void test_cache_negative__store_read_replace(void **state)
{
	(void)state;
	char *dir = tmpdir();
	st_cache *c;
	st_error err;
	assert_int_equal(st_cache_open(&c, dir, &err), ST_OK);
	st_cache_key_fields f = fields(NULL);
	assert_int_equal(st_cache_store(c, &f, &negative, &err), ST_OK);
	st_cache_entry *e;
	assert_int_equal(st_cache_lookup(&e, c, &f, &err), ST_OK);
	const st_cache_info *i = st_cache_entry_info(e);
	assert_true(i->negative);
	assert_false(i->stale);
	assert_true(i->best_ratio == 0.9987);
	assert_string_equal(i->why, "no schedule passed confirmation");
	assert_string_equal(i->budget, "10s");
	assert_string_equal(i->method, "ppo");
	assert_string_equal(i->date, "2026-12-01T12:00:00Z");
	assert_string_equal(i->moves, ST_SCHED_MOVE_FAMILIES);
	assert_null(i->tuned_cubin);
	assert_int_equal(i->tuned_cubin_size, 0);
	char key[65];
	memcpy(key, i->key, 65);
	st_cache_entry_free(e);
	assert_int_equal(count_cubins(dir, key), 0);

	/* a tuned result replaces it, and a negative one replaces that (the previous cubin is kept
	 * one replacement, for readers in flight) */
	static const uint8_t tuned[4] = {1, 2, 3, 4};
	st_cache_record good = {.schedule_json = "{}", .verification_json = "{}", .speedup = 1.02, .speedup_low = 1.01,
				.speedup_high = 1.03, .method = "ppo", .budget = "10s", .tuned_cubin = tuned,
				.tuned_cubin_size = sizeof tuned};
	assert_int_equal(st_cache_store(c, &f, &good, &err), ST_OK);
	assert_int_equal(st_cache_lookup(&e, c, &f, &err), ST_OK);
	assert_false(st_cache_entry_info(e)->negative);
	assert_memory_equal(st_cache_entry_info(e)->tuned_cubin, tuned, sizeof tuned);
	st_cache_entry_free(e);
	assert_int_equal(st_cache_store(c, &f, &negative, &err), ST_OK);
	assert_int_equal(st_cache_lookup(&e, c, &f, &err), ST_OK);
	assert_true(st_cache_entry_info(e)->negative);
	st_cache_entry_free(e);
	assert_int_equal(st_cache_store(c, &f, &negative, &err), ST_OK);
	assert_int_equal(count_cubins(dir, key), 0);

	/* a bad negative record is refused, naming the field */
	st_cache_record bad = negative;
	bad.best_ratio = -1;
	assert_int_equal(st_cache_store(c, &f, &bad, &err), ST_EINVAL);
	assert_non_null(strstr(err.msg, "best ratio"));
	bad = negative;
	bad.why = "two\nlines";
	assert_int_equal(st_cache_store(c, &f, &bad, &err), ST_EINVAL);
	assert_non_null(strstr(err.msg, "why"));
	st_cache_free(c);
	rm_rf(dir);
}

struct seen {
	int n, negative, stale, invalid;
};

static int list_cb(const char *key, const st_cache_entry *e, const char *problem, int64_t mtime, void *payload)
{
	(void)key; (void)mtime;
	struct seen *s = payload;
	s->n++;
	if (!e) {
		assert_non_null(problem);
		s->invalid++;
		return 0;
	}
	s->negative += st_cache_entry_info(e)->negative;
	s->stale += st_cache_entry_info(e)->stale;
	return 0;
}

/* Write entry.json text under its key. */
static void plant(const char *dir, const char *key, const char *json)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/v1/%s", dir, key);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof path, "%s/v1/%s/entry.json", dir, key);
	FILE *fp = fopen(path, "w");
	fputs(json, fp);
	fclose(fp);
}

static void test_cache_negative__stale_entries_listed_never_looked_up(void **state)
{
	(void)state;
	char *dir = tmpdir();
	st_cache *c;
	st_error err;
	assert_int_equal(st_cache_open(&c, dir, &err), ST_OK);
	/* one of another legality version (as a sasstune of other rules wrote it) */
	char other[16];
	snprintf(other, sizeof other, "%d", ST_LEGALITY_VERSION + 1);
	st_cache_key_fields old = fields(other), now = fields(NULL);
	assert_int_equal(st_cache_store(c, &old, &negative, &err), ST_OK);
	st_cache_entry *e;
	assert_int_equal(st_cache_lookup(&e, c, &now, &err), ST_ENOTFOUND);
	/* one of key format 1: no legality_version field, the key over the sasstune version */
	char key1[65], json[2048];
	assert_int_equal(st_cache__key_format(&now, 1, key1, &err), ST_OK);
	snprintf(json, sizeof json,
		 "{\"schema\": 1, \"key\": \"%s\", \"fields\": {\"cubin_sha256\": \"%s\", \"kernel\": \"add_kernel\", "
		 "\"gpu_name\": \"NVIDIA H200\", \"compute_capability\": \"9.0\", \"driver_version\": \"580.65.06\", "
		 "\"ptxas_version\": \"12.8.93\", \"sasstune_version\": \"0.1.0\"}, \"provenance\": {\"date\": "
		 "\"2020-01-01T00:00:00Z\", \"method\": \"greedy\", \"budget\": \"5m\"}, \"negative\": {\"best_ratio\": "
		 "1, \"why\": \"old\"}}",
		 key1, SHA_A);
	plant(dir, key1, json);
	assert_int_equal(st_cache_read(&e, c, key1, &err), ST_OK);
	assert_true(st_cache_entry_info(e)->stale);
	assert_string_equal(st_cache_entry_info(e)->legality_version, "none");
	st_cache_entry_free(e);
	/* a current one, and one whose legality_version was edited (its key no longer matches) */
	assert_int_equal(st_cache_store(c, &now, &negative, &err), ST_OK);
	char edited[65];
	memcpy(edited, key1, 65);
	edited[0] = edited[0] == 'f' ? 'e' : 'f';
	char *p = strstr(json, key1);
	memcpy(p, edited, 64);
	p = strstr(json, "\"sasstune_version\": \"0.1.0\"}");
	memcpy(p + strlen("\"sasstune_version\": \"0.1.0\""), ", \"legality_version\": \"1\", \"moves\": \"swap,ctrl\"}",
	       strlen(", \"legality_version\": \"1\", \"moves\": \"swap,ctrl\"}") + 1);
	strcat(json, "");
	plant(dir, edited, json);
	struct seen s = {0};
	assert_int_equal(st_cache_list(c, list_cb, &s, &err), ST_OK);
	assert_int_equal(s.n, 4);
	assert_int_equal(s.negative, 3);
	assert_int_equal(s.stale, 2);
	assert_int_equal(s.invalid, 1);
	st_cache_free(c);
	rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cache_negative__store_read_replace),
		cmocka_unit_test(test_cache_negative__stale_entries_listed_never_looked_up),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

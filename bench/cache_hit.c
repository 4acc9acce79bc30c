/* bench/cache_hit.c: what a cache hit costs the plugin, end to end.
 *
 * Times sasstune_plugin_info()->run() on a 100 KiB cubin whose tuned version
 * (also 100 KiB, with a schedule of 6400 instruction indices) is in the cache:
 * settings from the environment, SHA-256 of the input, the key, entry.json read
 * and checked, the tuned cubin read and its SHA-256 checked, the copy handed
 * back.  Also times SHA-256 alone and a miss (mode cache-only) for contrast.
 * Files are in the page cache after the first call; the first call is reported
 * on its own.  Numbers: docs/cache.md.
 *
 * Build and run (not part of the test build; use an optimised build):
 *   cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Iplugin -I/usr/include/cjson bench/cache_hit.c \
 *      plugin/util/[a-z]*.c plugin/cache/[a-z]*.c plugin/pass/[a-z]*.c -lcjson -lm -o /tmp/cache_hit
 *   /tmp/cache_hit [ITERATIONS]            wall-clock times
 *   CPU_TIME=1 /tmp/cache_hit [ITERATIONS] this thread's CPU time (busy machines)
 */
#include "sasstune/cache.h"
#include "sasstune/plugin.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define CUBIN_SIZE (100 * 1024)

/* Wall time; with CPU_TIME set, this thread's CPU time instead (which leaves out time
 * lost to other processes on a busy machine, but also time blocked in the kernel). */
static double now_ms(void)
{
	int cpu = getenv("CPU_TIME") != NULL;
	struct timespec t;
	clock_gettime(cpu ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void report(const char *what, double *t, int n)
{
	qsort(t, (size_t)n, sizeof *t, cmp);
	printf("%-34s median %.3f ms   p90 %.3f ms   p99 %.3f ms   max %.3f ms   (n=%d)\n", what, t[n / 2],
	       t[n * 9 / 10], t[n * 99 / 100], t[n - 1], n);
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb; (void)flag; (void)ftw;
	return remove(p);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	if (n < 10)
		n = 10;
	char dir[] = "/tmp/sasstune-bench-XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	uint8_t *cubin = malloc(CUBIN_SIZE), *tuned = malloc(CUBIN_SIZE);
	double *t = malloc((size_t)n * sizeof *t);
	size_t sched_cap = 64 * 1024;
	char *sched = malloc(sched_cap);
	if (!cubin || !tuned || !t || !sched)
		return 1;
	uint32_t x = 12345;
	for (int i = 0; i < CUBIN_SIZE; i++) {
		x = x * 1664525u + 1013904223u;
		cubin[i] = (uint8_t)(x >> 24);
		tuned[i] = cubin[i] ^ (i % 97 == 0);
	}
	/* a schedule as big as a full permutation of a 100 KiB kernel (6400 instructions) */
	size_t len = (size_t)snprintf(sched, sched_cap, "{\"kernels\":{\"attn_fwd\":{\"permutation\":[");
	for (int i = 0; i < CUBIN_SIZE / 16; i++)
		len += (size_t)snprintf(sched + len, sched_cap - len, "%s%d", i ? "," : "", i ^ 1);
	snprintf(sched + len, sched_cap - len, "]}}}");

	char sha[65], options[512];
	st_cache *c;
	st_cache_sha256_hex(cubin, CUBIN_SIZE, sha);
	snprintf(options, sizeof options,
		 "{\"cache_dir\":\"%s\",\"gpu_name\":\"NVIDIA H200\",\"compute_capability\":\"9.0\","
		 "\"driver_version\":\"580.65.06\"}", dir);
	st_error err;
	st_cache_key_fields f = {.cubin_sha256 = sha, .kernel = "attn_fwd", .gpu_name = "NVIDIA H200",
				 .compute_capability = "9.0", .driver_version = "580.65.06", .ptxas_version = "12.8.93"};
	st_cache_record r = {.schedule_json = sched, .verification_json = "{\"runs\":10,\"max_abs_err\":0}",
			     .speedup = 1.05, .speedup_low = 1.03, .speedup_high = 1.07, .method = "ppo",
			     .budget = "10m", .tuned_cubin = tuned, .tuned_cubin_size = CUBIN_SIZE};
	if (st_cache_open(&c, dir, &err) != ST_OK || st_cache_store(c, &f, &r, &err) != ST_OK) {
		fprintf(stderr, "cache_hit: %s\n", err.msg);
		return 1;
	}
	st_cache_free(c);

	for (int i = 0; i < n; i++) {
		double t0 = now_ms();
		st_cache_sha256_hex(cubin, CUBIN_SIZE, sha);
		t[i] = now_ms() - t0;
	}
	report("SHA-256 of 100 KiB", t, n);

	const st_plugin_info *info = sasstune_plugin_info();
	st_plugin_kernel k = {"attn_fwd", "sm_90", "12.8.93", NULL, options};
	st_plugin_result res;
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			/* the same entry with a short schedule: a list of 20 swaps */
			len = (size_t)snprintf(sched, sched_cap, "{\"kernels\":{\"attn_fwd\":{\"swaps\":[");
			for (int i = 0; i < 20; i++)
				len += (size_t)snprintf(sched + len, sched_cap - len, "%s[%d,%d]", i ? "," : "", 10 * i,
							10 * i + 1);
			snprintf(sched + len, sched_cap - len, "]}}}");
			if (st_cache_open(&c, dir, &err) != ST_OK || st_cache_store(c, &f, &r, &err) != ST_OK) {
				fprintf(stderr, "cache_hit: %s\n", err.msg);
				return 1;
			}
			st_cache_free(c);
		}
		for (int i = 0; i < n; i++) {
			double t0 = now_ms();
			info->run(cubin, CUBIN_SIZE, &k, &res);
			t[i] = now_ms() - t0;
			if (res.status != ST_PLUGIN_CACHED || res.cubin_size != CUBIN_SIZE ||
			    memcmp(res.cubin, tuned, CUBIN_SIZE)) {
				fprintf(stderr, "cache_hit: expected a hit, got: %s\n", res.message);
				return 1;
			}
			if (i == 0 && pass == 0)
				printf("first call (entry files just written)  %.3f ms: %s\n", t[0], res.message);
			info->free_result(&res);
		}
		report(pass == 0 ? "run(), hit, 6400-index permutation" : "run(), hit, 20-swap schedule", t, n);
	}

	snprintf(options, sizeof options, "{\"cache_dir\":\"%s\",\"mode\":\"cache-only\"}", dir);
	for (int i = 0; i < n; i++) {
		double t0 = now_ms();
		info->run(cubin, CUBIN_SIZE, &k, &res);
		t[i] = now_ms() - t0;
		info->free_result(&res);
	}
	report("run(), miss (mode cache-only)", t, n);

	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(cubin);
	free(tuned);
	free(t);
	free(sched);
	return 0;
}

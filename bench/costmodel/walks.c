/* Candidates for the cost-model ranking study (bench/costmodel/README.md): random legal walks of
 * a fixture's kernel with a mix of move biases, each written as a cubin with the cost model's
 * ratio (original / candidate cycles, > 1 = predicted faster), one JSON line per candidate.
 *
 *   walks FIXTURE_DIR OUT_DIR N STEPS SEED
 *
 * FIXTURE_DIR holds sm_90.cubin, sm_90.sass (its listing) and launch.json (sizes the model).
 * Biases, round robin: uniform over the legal moves; swaps only; yield flips first (mostly
 * clearing yield bits, which the H200 measured as slower); stall decrements first.  Two anchors
 * come last: every legal yield bit cleared, and every legal yield bit set (measured: 1.5-8 %
 * slower, and within +-0.2 %). */
#include "sasstune/sched.h"
#include "sasstune/search.h"
#include "sasstune/tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t xs(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* A legal move of kind `kind` (-1: any), picked uniformly among those; -1 when none. */
static long pick(const st_sched *s, int kind, uint64_t *x)
{
	size_t n = st_sched_move_count(s), cnt = 0;
	if (!n)
		return -1;
	if (kind < 0)
		return (long)(xs(x) % n);
	for (size_t i = 0; i < n; i++)
		cnt += st_sched_move(s, i).kind == kind;
	if (!cnt)
		return (long)(xs(x) % n);
	size_t k = xs(x) % cnt;
	for (size_t i = 0; i < n; i++)
		if (st_sched_move(s, i).kind == kind && !k--)
			return (long)i;
	return -1;
}

static int emit(const st_cubin *orig, size_t kidx, st_sched *s, st_costmodel *m, const char *dir, const char *name,
		const char *bias, size_t moves)
{
	st_error err = {0};
	size_t size;
	const uint8_t *d = st_cubin_data(orig, &size);
	st_cubin *c = NULL;
	char path[4096];
	snprintf(path, sizeof path, "%s/%s.cubin", dir, name);
	if (st_cubin_open_mem(d, size, "walk", &c, &err) || st_sched_to_cubin(s, c, kidx, &err) ||
	    st_cubin_write_file(c, path, &err)) {
		fprintf(stderr, "walks: %s: %s\n", name, err.msg);
		st_cubin_free(c);
		return 1;
	}
	st_cubin_free(c);
	printf("{\"name\": \"%s\", \"path\": \"%s\", \"bias\": \"%s\", \"moves\": %zu, \"model_ratio\": %.6f}\n", name,
	       path, bias, moves, st_costmodel_ratio(m, s));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: walks FIXTURE_DIR OUT_DIR N STEPS SEED\n");
		return 2;
	}
	const char *fx = argv[1], *out = argv[2];
	int n = atoi(argv[3]), steps = atoi(argv[4]);
	uint64_t x = strtoull(argv[5], NULL, 10) * 0x9e3779b97f4a7c15ull + 1;
	char cp[4096], lp[4096], jp[4096];
	snprintf(cp, sizeof cp, "%s/sm_90.cubin", fx);
	snprintf(lp, sizeof lp, "%s/sm_90.sass", fx);
	snprintf(jp, sizeof jp, "%s/launch.json", fx);
	st_error err = {0};
	st_cubin *c = NULL;
	st_launch *spec = NULL;
	st_sass_kernel *k = NULL;
	st_sched *s = NULL;
	st_costmodel *m = NULL;
	st_sass_opts o = {0};
	o.listing = lp;
	if (st_cubin_open_file(cp, &c, &err) || st_launch_load(jp, &spec, &err) ||
	    st_sass_decode(c, st_launch_kernel(spec), &o, &k, &err) || st_sched_new(k, c, 0, &s, &err)) {
		fprintf(stderr, "walks: %s: %s\n", fx, err.msg);
		return 1;
	}
	st_costmodel_opts mo;
	st_tune_model_opts(c, st_launch_kernel(spec), spec, &mo);
	if (st_costmodel_new(s, &mo, &m, &err)) {
		fprintf(stderr, "walks: %s\n", err.msg);
		return 1;
	}
	size_t kidx = st_cubin_find_kernel(c, st_launch_kernel(spec));
	static const char *const bias[] = {"uniform", "swaps", "yield", "stall"};
	static const int kinds[] = {-1, ST_MOVE_SWAP, ST_MOVE_YIELD, ST_MOVE_STALL};
	int rc = 0;
	for (int i = 0; i < n && !rc; i++) {
		st_sched_reset(s);
		int b = i % 4;
		size_t done = 0;
		for (int t = 0; t < steps; t++) {
			long mv = pick(s, kinds[b], &x);
			if (mv < 0 || st_sched_apply(s, st_sched_move(s, (size_t)mv), NULL))
				break;
			done++;
		}
		char name[64];
		snprintf(name, sizeof name, "walk%03d", i);
		rc = emit(c, kidx, s, m, out, name, bias[b], done);
	}
	for (int set = 0; set < 2 && !rc; set++) { /* the anchors */
		st_sched_reset(s);
		size_t done = 0;
		for (size_t slot = 0; slot < st_sched_count(s); slot++) {
			if (st_sched_ctrl(s, slot).yield == set)
				continue;
			st_move mv = {ST_MOVE_YIELD, 0, (uint32_t)slot, {0}};
			done += st_sched_apply(s, mv, NULL) == ST_OK;
		}
		rc = emit(c, kidx, s, m, out, set ? "yield_all_set" : "yield_all_cleared", set ? "anchor-set" : "anchor-cleared",
			  done);
	}
	st_costmodel_free(m);
	st_sched_free(s);
	st_sass_free(k);
	st_launch_free(spec);
	st_cubin_free(c);
	return rc;
}

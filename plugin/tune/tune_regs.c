/* The rename family's register-count raise in tuning (tune_regs.h). */
#include "tune_regs.h"
#include "sasstune/occupancy.h"

unsigned st_tune_regs_rule(st_tune_regs *g, const st_cubin *c, size_t k, const st_launch *launch, int allow_drop)
{
	unsigned grid[3], block[3], dyn = 0;
	g->threads = 0;
	g->shared = 0;
	g->allow_drop = allow_drop;
	if (launch) {
		st_launch_dims(launch, grid, block, &dyn);
		g->threads = block[0] * block[1] * block[2];
		g->shared = dyn;
	}
	unsigned regs = k == ST_CUBIN_NONE ? 0 : st_cubin_regcount(c, k);
	if (!g->threads || !regs)
		return 0;
	return st_occupancy_max_regs(regs, g->threads, st_cubin_static_shared(c, k) + g->shared, allow_drop);
}

st_status st_tune_regs_setup(st_tune_regs *g, st_sched *s, const st_cubin *c, size_t k, const st_launch *launch,
			     int allow_drop, st_error *err)
{
	unsigned top = st_tune_regs_rule(g, c, k, launch, allow_drop);
	if (!top || !st_sched_regcount(s))
		return ST_OK; /* no rename family, or the block size or count unknown: never raised */
	return top > st_cubin_regcount(c, k) ? st_sched_set_reglimit(s, top, err) : ST_OK;
}

st_status st_tune_regs_check(const st_tune_regs *g, const st_cubin *orig, const st_cubin *t, const char *kernel,
			     size_t *violations, st_error *err)
{
	return st_check_occupancy(orig, t, kernel, g->threads, g->shared, g->allow_drop, NULL, NULL, violations, err);
}

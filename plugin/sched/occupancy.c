/* Occupancy of an sm_90 kernel (include/sasstune/occupancy.h).  The limits are those of the CUDA
 * occupancy calculator for compute capability 9.0 (docs/sched.md "Raising the register count"):
 * 65,536 registers per SM in 4 partitions of 16,384, allocated per warp in units of 256 (a
 * thread's count rounded up to 8), at most 255 per thread and 65,536 per block; 64 warps and 32
 * blocks per SM; 228 KiB shared memory per SM, 227 KiB per block, allocated in 128-byte units
 * plus 1 KiB the system reserves per block. */
#include "sasstune/occupancy.h"

#define OCC_REGS_SM 65536u
#define OCC_PARTITIONS 4u
#define OCC_REG_UNIT 256u
#define OCC_WARPS_SM 64u
#define OCC_BLOCKS_SM 32u
#define OCC_SHARED_SM (228u * 1024u)
#define OCC_SHARED_BLOCK (227u * 1024u)
#define OCC_SHARED_UNIT 128u
#define OCC_SHARED_RESERVED 1024u

static unsigned round_up(unsigned v, unsigned unit) { return (v + unit - 1) / unit * unit; }

/* Blocks the register file holds: each partition holds whole warps (16,384 / per-warp
 * allocation of them), a block needs `warps` of the SM's; a block whose warps, rounded up to the
 * partitions, need more than 65,536 registers cannot launch. */
static unsigned reg_blocks(unsigned regs, unsigned warps)
{
	unsigned per_warp = round_up(regs * 32u, OCC_REG_UNIT);
	if (per_warp * round_up(warps, OCC_PARTITIONS) > OCC_REGS_SM)
		return 0;
	return (OCC_REGS_SM / OCC_PARTITIONS / per_warp) * OCC_PARTITIONS / warps;
}

st_status st_occupancy_sm90(unsigned regs, unsigned threads, size_t shared, st_occupancy *out, st_error *err)
{
	if (regs < 1 || regs > 255 || threads < 1 || threads > 1024)
		return st_error_set(err, ST_EINVAL, "occupancy: %u registers, %u threads a block: outside 1..255, 1..1024",
				    regs, threads);
	unsigned warps = (threads + 31) / 32;
	unsigned lim[4];
	lim[ST_OCC_WARPS] = OCC_WARPS_SM / warps;
	lim[ST_OCC_BLOCKS] = OCC_BLOCKS_SM;
	lim[ST_OCC_REGS] = reg_blocks(regs, warps);
	lim[ST_OCC_SHARED] = shared > OCC_SHARED_BLOCK ? 0
		: OCC_SHARED_SM / (round_up((unsigned)shared, OCC_SHARED_UNIT) + OCC_SHARED_RESERVED);
	out->limit = ST_OCC_WARPS;
	for (unsigned l = 1; l < 4; l++)
		if (lim[l] < lim[out->limit])
			out->limit = (st_occ_limit)l;
	out->blocks = lim[out->limit];
	out->warps = out->blocks * warps;
	out->warps_max = OCC_WARPS_SM;
	return ST_OK;
}

const char *st_occupancy_limit_name(st_occ_limit l)
{
	static const char *const names[] = {"warps", "blocks", "registers", "shared memory"};
	return (unsigned)l < 4 ? names[l] : "?";
}

unsigned st_occupancy_max_regs(unsigned regs, unsigned threads, size_t shared, int allow_drop)
{
	st_occupancy o, n;
	if (!threads || st_occupancy_sm90(regs, threads, shared, &o, NULL))
		return regs;
	unsigned best = regs;
	for (unsigned r = regs + 1; r <= 255; r++) {
		if (st_occupancy_sm90(r, threads, shared, &n, NULL) || !n.blocks)
			break;
		if (n.blocks == o.blocks || (allow_drop && n.blocks))
			best = r;
		else
			break; /* fewer blocks: more registers never give them back */
	}
	return best;
}

/* Unit tests of the sm_90 occupancy computation (plugin/sched/occupancy.c): known cases worked by
 * hand from the CUDA occupancy calculator's rules, each limit binding once, the raise limit. */
#include "testutil.h"

#include "sasstune/occupancy.h"

static st_occupancy occ(unsigned regs, unsigned threads, size_t shared)
{
	st_occupancy o = {0};
	st_error err = {0};
	assert_int_equal(st_occupancy_sm90(regs, threads, shared, &o, &err), ST_OK);
	return o;
}

/* Each limit binds: 32 registers x 256 threads is 8 blocks by warps and by registers (warps first);
 * 32 x 32 threads is 32 blocks by the block cap; 64 registers x 128 threads: 2,048 a warp, 8 warps a
 * partition, 32 warps, 8 blocks; 25 KiB shared + 1 KiB reserved: 233,472 / 26,624 = 8 blocks. */
static void test_limits(void **state)
{
	(void)state;
	st_occupancy o = occ(32, 256, 0);
	assert_int_equal(o.blocks, 8);
	assert_int_equal(o.warps, 64);
	assert_int_equal(o.limit, ST_OCC_WARPS);
	o = occ(32, 32, 0);
	assert_int_equal(o.blocks, 32);
	assert_int_equal(o.limit, ST_OCC_BLOCKS);
	o = occ(64, 128, 0);
	assert_int_equal(o.blocks, 8);
	assert_int_equal(o.warps, 32);
	assert_int_equal(o.limit, ST_OCC_REGS);
	o = occ(32, 128, 24576 + 1024); /* matmul 512's shared: 24,576 dynamic + 1,024 static */
	assert_int_equal(o.blocks, 8);  /* 16 by registers and by warps */
	assert_int_equal(o.limit, ST_OCC_SHARED);
	o = occ(16, 128, 48 * 1024);
	assert_int_equal(o.blocks, 4); /* 233472 / (49152 + 1024) = 4.65 */
	assert_int_equal(o.limit, ST_OCC_SHARED);
	assert_string_equal(st_occupancy_limit_name(o.limit), "shared memory");
}

/* The partition rule: 204 registers a thread is 6,656 a warp (26 units), 2 warps a partition;
 * 8 warps a block: 1 block; 168 registers x 96 threads: 5,376 a warp, 3 a partition, 12 warps,
 * 4 blocks of 3 warps.  40 x 320 shows the partitions: 1,280 a warp, 12 a partition, 48 warps,
 * 4 blocks of 10 (dividing the whole SM, 65536 / 12800, would say 5). */
static void test_partitions(void **state)
{
	(void)state;
	assert_int_equal(occ(204, 256, 0).blocks, 1);
	assert_int_equal(occ(168, 96, 0).blocks, 4);
	assert_int_equal(occ(40, 320, 0).blocks, 4);
	assert_int_equal(occ(40, 320, 0).limit, ST_OCC_REGS);
	/* 255 x 1024 threads: 8,192 a warp x 32 warps does not fit 65,536: the launch cannot run */
	assert_int_equal(occ(255, 1024, 0).blocks, 0);
	assert_int_equal(occ(64, 1024, 0).blocks, 1);
	st_occupancy o;
	st_error err = {0};
	assert_int_equal(st_occupancy_sm90(0, 128, 0, &o, &err), ST_EINVAL);
	assert_int_equal(st_occupancy_sm90(32, 2048, 0, &o, &err), ST_EINVAL);
	assert_int_equal(st_occupancy_sm90(32, 128, 300 * 1024, &o, &err), ST_OK);
	assert_int_equal(o.blocks, 0); /* more shared memory than a block may have */
}

/* The raise limit on the fixtures' launches: attention (208 registers, 128 threads, 64 KiB + 1 KiB
 * shared) holds 2 blocks by registers up to 255; layernorm (32, 256) has no register to spare;
 * add (26, 128) may grow to 32; matmul 2048 (204, 256, 144 KiB + 1 KiB) to 255. */
static void test_max_regs(void **state)
{
	(void)state;
	assert_int_equal(st_occupancy_max_regs(208, 128, 65536 + 1024, 0), 255);
	assert_int_equal(st_occupancy_max_regs(32, 256, 32 + 1024, 0), 32);
	assert_int_equal(st_occupancy_max_regs(26, 128, 0, 0), 32);
	assert_int_equal(st_occupancy_max_regs(204, 256, 147456 + 1024, 0), 255);
	assert_int_equal(st_occupancy_max_regs(64, 128, 24576 + 1024, 0), 64);
	assert_int_equal(st_occupancy_max_regs(64, 128, 24576 + 1024, 1), 255);
	assert_int_equal(st_occupancy_max_regs(64, 0, 0, 1), 64); /* threads unknown: never raise */
	assert_int_equal(occ(st_occupancy_max_regs(26, 128, 0, 0), 128, 0).blocks, occ(26, 128, 0).blocks);
	assert_true(occ(33, 128, 0).blocks < occ(26, 128, 0).blocks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_partitions),
		cmocka_unit_test(test_max_regs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

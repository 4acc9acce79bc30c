/* The control fields of a 128-bit sm_70+ instruction word (bits 105..124). */
#include "sasstune/sass.h"

#include "util/util.h"

static uint64_t hi_of(const uint8_t word[16])
{
	return st_le64(word + 8);
}

st_ctrl st_ctrl_decode(const uint8_t word[16])
{
	uint64_t hi = hi_of(word);
	st_ctrl c;
	c.stall = (uint8_t)((hi >> 41) & 0xf);
	c.yield = (uint8_t)((hi >> 45) & 1);
	c.wbar = (uint8_t)((hi >> 46) & 7);
	c.rbar = (uint8_t)((hi >> 49) & 7);
	c.wait = (uint8_t)((hi >> 52) & 0x3f);
	c.reuse = (uint8_t)((hi >> 58) & 7);
	return c;
}

st_status st_ctrl_check(st_ctrl c, st_error *err)
{
	if (c.stall > 15)
		return st_error_set(err, ST_EINVAL, "control fields: stall %u is out of range 0..15", c.stall);
	if (c.yield > 1)
		return st_error_set(err, ST_EINVAL, "control fields: yield bit %u is not 0 or 1", c.yield);
	if ((c.wbar > 5 && c.wbar != ST_SB_NONE) || (c.rbar > 5 && c.rbar != ST_SB_NONE))
		return st_error_set(err, ST_EINVAL, "control fields: scoreboard W%u/R%u is not 0..5 or 7 (none)",
				    c.wbar, c.rbar);
	if (c.wait > 0x3f)
		return st_error_set(err, ST_EINVAL, "control fields: wait mask 0x%x has bits above SB5", c.wait);
	if (c.reuse > 7)
		return st_error_set(err, ST_EINVAL, "control fields: reuse 0x%x has bits above slot c", c.reuse);
	if (c.yield && c.stall == 0)
		return st_error_set(err, ST_EINVAL, "control fields: stall 0 needs the yield bit clear (DRAIN)");
	if (c.yield && c.stall > 11)
		return st_error_set(err, ST_EINVAL, "control fields: stall %u needs the yield bit clear", c.stall);
	if (c.reuse && !(c.yield && c.stall >= 1 && c.stall <= 11))
		return st_error_set(err, ST_EINVAL,
				    "control fields: reuse 0x%x needs stall 1..11 with the yield bit set (stall %u, yield %u)",
				    c.reuse, c.stall, c.yield);
	return ST_OK;
}

unsigned st_ctrl_reuse_bits(st_ctrl c)
{
	return c.yield && c.stall >= 1 && c.stall <= 11 ? c.reuse : 0;
}

st_status st_ctrl_encode(uint8_t word[16], st_ctrl c, st_error *err)
{
	st_status s = st_ctrl_check(c, err);
	if (s != ST_OK)
		return s;
	uint64_t hi = hi_of(word);
	hi &= ~(((uint64_t)1 << 61) - ((uint64_t)1 << 41)); /* bits 41..60 of hi = 105..124 */
	hi |= (uint64_t)c.stall << 41 | (uint64_t)c.yield << 45 | (uint64_t)c.wbar << 46 |
	      (uint64_t)c.rbar << 49 | (uint64_t)c.wait << 52 | (uint64_t)c.reuse << 58;
	st_put_le64(word + 8, hi);
	return ST_OK;
}

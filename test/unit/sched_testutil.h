/* Test helpers that read the sched module's internals (include after "sched/sched_internal.h"). */
#ifndef ST_SCHED_TESTUTIL_H
#define ST_SCHED_TESTUTIL_H

/* Slot j's legal-move bits of the swap and ctrl families computed afresh by sc_check, as the state
 * caches them in s->legal[j]: swap 1, stall 2, yield 4, reuse of operand a 8 << a.  The bits of the
 * other families are the caller's to add. */
static inline unsigned st_test_base_bits(const st_sched *s, uint32_t j)
{
	unsigned bits = 0;
	st_move q = {ST_MOVE_SWAP, 0, j, {0}};
	bits |= sc_check(s, q, NULL, NULL, NULL, NULL) == ST_OK ? 1u : 0;
	q.kind = ST_MOVE_STALL;
	bits |= sc_check(s, q, NULL, NULL, NULL, NULL) == ST_OK ? 2u : 0;
	q.kind = ST_MOVE_YIELD;
	bits |= sc_check(s, q, NULL, NULL, NULL, NULL) == ST_OK ? 4u : 0;
	q.kind = ST_MOVE_REUSE;
	for (uint8_t a = 0; a < 3; a++) {
		q.arg = a;
		bits |= sc_check(s, q, NULL, NULL, NULL, NULL) == ST_OK ? 8u << a : 0;
	}
	return bits;
}

#endif

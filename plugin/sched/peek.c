/* st_sched_peek: the state after a move, for a caller that only reads it (the cost model's
 * move.est_gain scores a swap by simulating its block).  A swap is made raw, without
 * st_sched_apply's undo record and without refreshing the cached legality of the slots around it
 * (sc_refresh, most of an apply's cost), and made back the same way; so inside fn the legal-move
 * queries are those of the state before the move, and only the order and control fields are valid.
 * Other kinds go through st_sched_apply / st_sched_undo. */
#include "sched_internal.h"

st_status st_sched_peek(st_sched *s, st_move m, st_sched_peek_fn fn, void *ctx, st_error *err)
{
	if (!s || !fn)
		return st_error_set(err, ST_EINVAL, "sched: peek needs a state and a function");
	st_status rc;
	if (m.kind != ST_MOVE_SWAP) {
		if ((rc = st_sched_apply(s, m, err)))
			return rc;
		rc = fn(ctx, s, err);
		st_status u = st_sched_undo(s, rc ? NULL : err);
		return rc ? rc : u;
	}
	sc_fix fix;
	if ((rc = sc_check(s, m, &fix, NULL, NULL, err)))
		return rc;
	sc_swap_raw(s, m.slot, &fix);
	rc = fn(ctx, s, err);
	sc_unswap_raw(s, m.slot, &fix);
	return rc;
}

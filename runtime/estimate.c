/* The estimate every reported ratio comes from: `sasstune compare` and the tuner's final
 * estimate (docs/runtime.md, "Estimates").  One code path, so that the two agree.
 *
 * Invariants:
 *  - the session is opened here and closed here: the reference and B are loaded fresh in a new
 *    worker, never in a process where other candidates ran (two loads of the same bytes differ by
 *    up to ~0.4 % on the H200, so a ratio measured where a candidate was found does not transfer);
 *  - a timed sample lasts at least ST_ESTIMATE_SAMPLE_US (unless flush_l2: one launch per sample),
 *    so that the event timer's ~0.5 us step is <= 0.1 % of a sample;
 *  - B's verification is followed by a check of the reference (opt.check_reference forced on):
 *    a B that writes outside its buffers, its own outputs right, is a mismatch (info.last_stray);
 *  - out->stage says how far it got; out->verdict is the candidate's verdict (ST_OK when it
 *    verified and timed), the return value is ST_OK unless the machinery failed. */
#include "sasstune/runtime.h"

#include <string.h>

static st_status measure(st_session *s, const uint8_t *b, size_t b_size, bool verify, unsigned pairs,
			 st_estimate *out, st_error *err)
{
	st_status v = ST_OK;
	out->stage = ST_ESTIMATE_VERIFY;
	if (verify && (v = st_session_verify(s, b, b_size, err)) != ST_OK) {
		out->verdict = v;
		return v == ST_EMISMATCH || v == ST_ECRASH || v == ST_ETIMEOUT ? ST_OK : v;
	}
	out->stage = ST_ESTIMATE_TIME;
	v = st_session_compare(s, NULL, 0, b, b_size, pairs, &out->t, err);
	out->verdict = v;
	if (v == ST_ECRASH || v == ST_ETIMEOUT)
		return ST_OK;
	if (v == ST_OK)
		out->stage = ST_ESTIMATE_DONE;
	return v;
}

st_status st_estimate_run(const uint8_t *ref, size_t ref_size, const st_launch *spec, const st_runtime_options *opt,
			  const uint8_t *b, size_t b_size, bool verify, unsigned pairs, st_estimate *out, st_error *err)
{
	memset(out, 0, sizeof *out);
	out->verdict = ST_EINVAL;
	if (!ref || !spec || !opt || !b)
		return st_error_set(err, ST_EINVAL, "st_estimate_run needs a reference, a launch spec, options and B");
	st_runtime_options o = *opt;
	o.check_reference = true; /* a stray write of B's is found here, not left to the caller */
	if (!o.flush_l2 && o.sample_us < ST_ESTIMATE_SAMPLE_US)
		o.sample_us = ST_ESTIMATE_SAMPLE_US;
	out->sample_us = o.flush_l2 ? 0 : o.sample_us;
	out->stage = ST_ESTIMATE_OPEN;
	st_session *s = NULL;
	st_status rc = st_session_open(ref, ref_size, spec, &o, &s, err);
	if (rc)
		return rc;
	rc = measure(s, b, b_size, verify, pairs, out, err);
	st_session_get_info(s, &out->info);
	st_session_close(s);
	return rc;
}

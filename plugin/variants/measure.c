/* st_variants_measure: one session on the stock cubin; every candidate verified bit for bit,
 * timed against stock in `pairs` interleaved pairs, and the fastest confirmed with
 * confirm_pairs more.  st_session_compare(A = stock, B = variant) gives the ratio
 * time(B)/time(A), so speedup = 1/ratio and its interval is [1/ci_hi, 1/ci_lo]. */
#include "variants_internal.h"

#include <stdio.h>
#include <string.h>

static bool candidate(const st_variant *v)
{
	return !v->stock && v->compiled && v->duplicate_of < 0 && !v->reason[0] && v->cubin;
}

static void set_speedup(st_variant *v, const st_timing *t)
{
	v->timing = *t;
	v->speedup = t->ratio > 0 ? 1 / t->ratio : 0;
	v->speedup_lo = t->ci_hi > 0 ? 1 / t->ci_hi : 0;
	v->speedup_hi = t->ci_lo > 0 ? 1 / t->ci_lo : 0;
}

static const char *verdict(st_status rc)
{
	switch (rc) {
	case ST_EMISMATCH: return "outputs differ from stock";
	case ST_ECRASH: return "crashed on the GPU";
	case ST_ETIMEOUT: return "hung on the GPU";
	default: return "rejected by the driver";
	}
}

static void progress(const st_variants_opts *o, const char *fmt, const char *a, double x)
{
	if (!o->progress)
		return;
	char line[512];
	snprintf(line, sizeof line, fmt, a, x);
	o->progress(o->progress_user, line);
}

/* Verify and time one candidate; its reason says why when it is out. */
static void measure_one(st_session *ses, st_variant *v, const st_variants_opts *o)
{
	st_error e = {0};
	st_status rc = st_session_verify(ses, v->cubin, v->cubin_size, &e);
	v->verified = rc == ST_OK;
	if (rc != ST_OK) {
		snprintf(v->reason, sizeof v->reason, "%s: %.200s", verdict(rc), e.msg);
		progress(o, "%s: rejected", v->label, 0);
		return;
	}
	st_timing t;
	rc = st_session_compare(ses, NULL, 0, v->cubin, v->cubin_size, o->pairs ? o->pairs : 100, &t, &e);
	if (rc != ST_OK) {
		snprintf(v->reason, sizeof v->reason, "not timed: %.200s", e.msg);
		return;
	}
	set_speedup(v, &t);
	progress(o, "%s: speedup %.4f", v->label, v->speedup);
}

/* The fastest timed candidate whose quick interval does not rule out a gain; confirm it. */
static void confirm_best(st_session *ses, st_variants *s, const st_variants_opts *o)
{
	st_variant *best = NULL;
	for (size_t i = 1; i < s->n; i++) {
		st_variant *v = &s->items[i].pub;
		if (v->verified == 1 && v->timing.n > 0 && v->speedup_hi > o->confirm_min && (!best || v->speedup > best->speedup))
			best = v;
	}
	if (!best)
		return;
	unsigned pairs = o->confirm_pairs < 200 ? 200 : o->confirm_pairs;
	st_timing t;
	st_error e = {0};
	if (st_session_compare(ses, NULL, 0, best->cubin, best->cubin_size, pairs, &t, &e) != ST_OK) {
		snprintf(best->reason, sizeof best->reason, "confirmation failed: %.200s", e.msg);
		return;
	}
	set_speedup(best, &t);
	best->confirmed = best->speedup_lo > o->confirm_min;
	if (!best->confirmed)
		snprintf(best->reason, sizeof best->reason, "not confirmed: interval low end %.4f <= %.4f", best->speedup_lo,
			 o->confirm_min);
	progress(o, best->confirmed ? "%s: confirmed (%.4f)" : "%s: not confirmed (%.4f)", best->label, best->speedup);
}

st_status st_variants_measure(st_variants *s, const st_launch *launch, const st_variants_opts *o, st_error *err)
{
	if (!s || !launch || !o || s->n == 0)
		return st_error_set(err, ST_EINVAL, "variants: no set, launch or options");
	if (s->n == 1)
		return ST_OK; /* stock only: nothing to measure (the note says why) */
	st_session *ses = NULL;
	const st_variant *stock = &s->items[0].pub;
	st_status rc = st_session_open(stock->cubin, stock->cubin_size, launch, &o->runtime, &ses, err);
	if (rc != ST_OK) {
		snprintf(s->gpu, sizeof s->gpu, "GPU steps skipped: %.200s", err ? err->msg : st_status_str(rc));
		return rc;
	}
	s->items[0].pub.verified = 1;
	s->items[0].pub.speedup = s->items[0].pub.speedup_lo = s->items[0].pub.speedup_hi = 1;
	for (size_t i = 1; i < s->n; i++)
		if (candidate(&s->items[i].pub))
			measure_one(ses, &s->items[i].pub, o);
	confirm_best(ses, s, o);
	st_session_close(ses);
	s->measured = true;
	s->gpu[0] = 0;
	return ST_OK;
}

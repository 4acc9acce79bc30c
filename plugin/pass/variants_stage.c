/* The compile-variants stage of the pass (mode tune): the record's PTX through
 * other ptxas binaries and options (sasstune/variants.h), the confirmed winner
 * (or stock) handed to the SASS search.  Hooked from pass.c's produce().
 *
 * Invariants: nothing here fails the user's compile (every problem means "use
 * the stock cubin"); the key part (st_pass__variants_key) is computed from the
 * same options the stage compiles with, so a hit returns what a miss would
 * have produced; with no PTX, or variants off, the key is the stock path's. */
#include "pass_internal.h"
#include "sasstune/variants.h"
#include "variants/variants_internal.h"

#include <cJSON.h>
#include <dlfcn.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void st_pass__variants_opts(const st_plugin_kernel2 *k, const st_pass_variants_key *vk, st_variants_opts *o)
{
	st_variants_opts_init(o);
	o->discover = true;
	o->probe_dir = vk->probe_dir[0] ? vk->probe_dir : NULL;
	o->stock_ptxas = k->ptxas_path && *k->ptxas_path ? k->ptxas_path : NULL;
	o->base_options = k->ptxas_options && *k->ptxas_options ? k->ptxas_options : NULL;
	o->runtime.device = vk->device; /* measure on the launch's device, like the search */
	o->runtime.check_reference = vk->check_reference != 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* "on:" + the sorted distinct versions of the usable binaries; returns how many. */
static size_t version_set(const st_vr_binary *b, size_t n, char *out, size_t outsz)
{
	const char **v = calloc(n ? n : 1, sizeof *v);
	size_t m = 0;
	for (size_t i = 0; v && i < n; i++)
		if (!b[i].reason[0])
			v[m++] = b[i].version;
	if (m)
		qsort(v, m, sizeof *v, cmp_str);
	size_t used = (size_t)snprintf(out, outsz, "on:"), distinct = 0;
	for (size_t i = 0; i < m; i++) {
		if (i && !strcmp(v[i], v[i - 1]))
			continue;
		distinct++;
		if (used < outsz)
			used += (size_t)snprintf(out + used, outsz - used, "%s%s", distinct > 1 ? "," : "", v[i]);
	}
	free(v);
	return distinct;
}

void st_pass__variants_key(const st_pass_settings *s, const st_plugin_kernel2 *k, st_pass_variants_key *vk,
			   st_cache_key_fields *fields)
{
	memset(vk, 0, sizeof *vk);
	vk->device = s->device;
	vk->check_reference = s->check_reference;
	if (!k->ptx || !*k->ptx)
		return; /* a v1 caller, or no PTX: the stock path, silently */
	if (s->variants == ST_VARIANTS_OFF) {
		snprintf(vk->why, sizeof vk->why, "variants off");
		return;
	}
	st_cache *cache = NULL;
	if (st_cache_open(&cache, s->cache_dir, NULL) == ST_OK) /* creates nothing */
		snprintf(vk->probe_dir, sizeof vk->probe_dir, "%s/ptxas-probes", st_cache_dir(cache));
	st_cache_free(cache);
	st_variants_opts o;
	st_pass__variants_opts(k, vk, &o);
	st_vr_binary *b = NULL;
	size_t n = 0;
	st_error err = {0};
	if (st_vr_discover(&o, &b, &n, &err) != ST_OK) {
		snprintf(vk->why, sizeof vk->why, "variants: finding ptxas binaries: %.120s", err.msg);
		return;
	}
	size_t distinct = version_set(b, n, vk->set, sizeof vk->set);
	free(b);
	if (s->variants == ST_VARIANTS_AUTO && distinct < 2) {
		snprintf(vk->why, sizeof vk->why, "variants auto: %zu ptxas version%s found, need 2", distinct,
			 distinct == 1 ? "" : "s");
		return;
	}
	vk->run = true;
	fields->variants = vk->set;
	fields->ptxas_options = k->ptxas_options;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Is there a CUDA driver at all (whether a GPU answers is the measure step's to find out)? */
static bool have_driver(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (h)
		dlclose(h);
	return h != NULL;
}

/* Keep a copy of the confirmed winner in pick; 0 when out of memory. */
static int take_winner(const st_variant *w, st_pass_variant_pick *pick)
{
	pick->cubin = malloc(w->cubin_size);
	if (!pick->cubin)
		return 0;
	memcpy(pick->cubin, w->cubin, w->cubin_size);
	pick->size = w->cubin_size;
	snprintf(pick->ptxas_version, sizeof pick->ptxas_version, "%s", w->ptxas_version);
	snprintf(pick->options, sizeof pick->options, "%s", w->options);
	pick->speedup = w->speedup;
	pick->lo = w->speedup_lo;
	pick->hi = w->speedup_hi;
	return 1;
}

void st_pass__variants_run(const st_pass_variants_key *vk, const st_plugin_kernel2 *k, const uint8_t *cubin,
			   size_t size, const char *kernel, const st_launch *launch, st_pass_variant_pick *pick)
{
	memset(pick, 0, sizeof *pick);
	pick->speedup = pick->lo = pick->hi = 1.0;
	if (!vk->run) {
		if (vk->why[0])
			snprintf(pick->log, sizeof pick->log, "%s, stock cubin tuned", vk->why);
		return;
	}
	if (!have_driver()) { /* the compiles would be wasted: the measure step needs a GPU */
		snprintf(pick->log, sizeof pick->log, "variants: no CUDA driver (libcuda.so.1), not compiled");
		return;
	}
	st_variants_opts o;
	st_pass__variants_opts(k, vk, &o);
	st_variants *v = NULL;
	st_error err = {0};
	double t0 = now_s();
	if (st_variants_compile(k->ptx, strlen(k->ptx), cubin, size, kernel, &o, &v, &err) != ST_OK) {
		snprintf(pick->log, sizeof pick->log, "variants: %.300s, stock cubin tuned", err.msg);
		return;
	}
	double compile_s = now_s() - t0;
	size_t n = st_variants_count(v), ok = 0;
	for (size_t i = 1; i < n; i++)
		ok += st_variants_get(v, i)->compiled && st_variants_get(v, i)->duplicate_of < 0;
	st_status rc = st_variants_measure(v, launch, &o, &err);
	size_t best = rc == ST_OK ? st_variants_best(v) : 0;
	const st_variant *w = st_variants_get(v, best);
	pick->ran = true;
	snprintf(pick->ptxas_version, sizeof pick->ptxas_version, "%s",
		 k->v1.ptxas_version && *k->v1.ptxas_version ? k->v1.ptxas_version : "stock");
	if (best && w && w->confirmed && w->cubin && take_winner(w, pick))
		snprintf(pick->log, sizeof pick->log,
			 "variants: %zu of %zu compiled and distinct in %.1f s; chosen %.200s: %.4fx [%.4f, %.4f] over stock",
			 ok, n ? n - 1 : 0, compile_s, w->label, w->speedup, w->speedup_lo, w->speedup_hi);
	else
		snprintf(pick->log, sizeof pick->log, "variants: %zu of %zu compiled and distinct in %.1f s; chosen stock (%.200s)",
			 ok, n ? n - 1 : 0, compile_s, rc != ST_OK ? err.msg : "no variant confirmed faster");
	st_variants_free(v);
}

void st_pass__variant_record(const st_pass_variant_pick *pick, st_cache_record *rec)
{
	if (!pick->ran)
		return;
	if (rec->speedup == 0) /* a winner stored alone */
		rec->speedup = rec->speedup_low = rec->speedup_high = 1.0;
	/* the search measured against the winner, the stage the winner against stock */
	rec->speedup *= pick->speedup;
	rec->speedup_low *= pick->lo;
	rec->speedup_high *= pick->hi;
	rec->variant_ptxas_version = pick->ptxas_version;
	rec->variant_options = pick->options;
}

char *st_pass__variant_verification(const st_pass_variant_pick *pick)
{
	cJSON *o = cJSON_CreateObject();
	if (!o || !cJSON_AddStringToObject(o, "method", "variants: bit-identical outputs, paired timing confirmed") ||
	    !cJSON_AddStringToObject(o, "ptxas_version", pick->ptxas_version) ||
	    !cJSON_AddStringToObject(o, "options", pick->options)) {
		cJSON_Delete(o);
		return NULL;
	}
	char *text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return text;
}

/* Printing a kernel's stall profile: the summary and the annotated listing (text or JSON). */
#include "profile_report.h"
#include "cli.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rsum {
	uint64_t kernel;          /* samples that fall on an instruction of the listing */
	uint64_t all;             /* samples of the function, matched or not */
	uint64_t *per_reason;     /* kernel samples of each reason */
	size_t *order;            /* reasons, most samples first */
	size_t *hot;              /* instruction indices, most samples first */
	size_t nhot;
} rsum;

/* Sort context: counts per index, and for reasons their names (ties by name, so that the order
 * does not follow the samples file's order of first mention); NULL names: ties by index. */
typedef struct sort_ctx {
	const uint64_t *keys;
	const st_profile *names;
} sort_ctx;

static int by_key_desc(const void *a, const void *b, void *ctx)
{
	const sort_ctx *c = ctx;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	if (c->keys[i] != c->keys[j])
		return c->keys[i] < c->keys[j] ? 1 : -1;
	if (c->names && i != j)
		return strcmp(st_profile_reason(c->names, i), st_profile_reason(c->names, j));
	return i < j ? -1 : i > j;
}

/* idx = 0..n-1, most first by keys; reasons (names != NULL) tie by name, instructions by index. */
static void sort_desc(size_t *idx, size_t n, const uint64_t *keys, const st_profile *names)
{
	sort_ctx c = {keys, names};
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, n, sizeof *idx, by_key_desc, &c);
}

static int summarize(const st_profile *p, const st_sass_kernel *k, unsigned top, rsum *s, uint64_t **at)
{
	size_t nr = st_profile_reason_count(p), n = st_sass_count(k);
	const st_sass_insn *ins = st_sass_insns(k);
	const char *fn = st_sass_name(k);
	memset(s, 0, sizeof *s);
	s->per_reason = calloc(nr + 1, sizeof *s->per_reason);
	s->order = calloc(nr + 1, sizeof *s->order);
	s->hot = calloc(n + 1, sizeof *s->hot);
	*at = calloc(n + 1, sizeof **at);
	if (!s->per_reason || !s->order || !s->hot || !*at)
		return 1;
	for (size_t i = 0; i < n; i++) {
		(*at)[i] = st_profile_at(p, fn, ins[i].offset, -1);
		s->kernel += (*at)[i];
		for (size_t r = 0; r < nr && (*at)[i]; r++)
			s->per_reason[r] += st_profile_at(p, fn, ins[i].offset, (long)r);
	}
	s->all = st_profile_function_total(p, fn, -1);
	sort_desc(s->order, nr, s->per_reason, p);
	sort_desc(s->hot, n, *at, NULL);
	s->nhot = 0;
	while (s->nhot < n && s->nhot < top && (*at)[s->hot[s->nhot]])
		s->nhot++;
	return 0;
}

static void rsum_free(rsum *s)
{
	free(s->per_reason);
	free(s->order);
	free(s->hot);
}

/* "@!P0 LDG.E.128 R16, desc[UR4][R20.64]" */
static void insn_text(const st_sass_insn *x, char *buf, size_t n)
{
	char g[16] = "";
	if (x->guard >= 0) {
		char r[12];
		st_sass_reg_str(r, sizeof r, x->guard_file, (unsigned)x->guard);
		snprintf(g, sizeof g, "@%s%s ", x->guard_neg ? "!" : "", r);
	}
	snprintf(buf, n, "%s%s%s%s", g, x->opcode, x->operands[0] ? " " : "", x->operands);
}

static double pct(uint64_t a, uint64_t b) { return b ? 100.0 * (double)a / (double)b : 0; }

/* "long_sb 400  wait 123": the reasons at one instruction, most samples first */
static void reasons_str(const st_profile *p, const char *fn, uint32_t off, char *buf, size_t n)
{
	size_t nr = st_profile_reason_count(p), idx[ST_PROFILE_MAX_REASONS];
	uint64_t cnt[ST_PROFILE_MAX_REASONS];
	for (size_t r = 0; r < nr; r++)
		cnt[r] = st_profile_at(p, fn, off, (long)r);
	sort_desc(idx, nr, cnt, p);
	size_t used = 0;
	buf[0] = 0;
	for (size_t i = 0; i < nr && cnt[idx[i]] && used + 1 < n; i++) {
		int w = snprintf(buf + used, n - used, "%s%s %llu", used ? "  " : "", st_profile_reason(p, idx[i]),
				 (unsigned long long)cnt[idx[i]]);
		if (w < 0)
			break;
		used += (size_t)w;
	}
}

void st_profile_report_text(const st_profile *p, const st_sass_kernel *k, unsigned top)
{
	const st_profile_meta *m = st_profile_get_meta(p);
	const st_sass_insn *ins = st_sass_insns(k);
	const char *fn = st_sass_name(k);
	rsum s;
	uint64_t *at = NULL;
	if (summarize(p, k, top, &s, &at)) {
		fprintf(stderr, "sasstune profile: out of memory\n");
		goto out;
	}
	printf("kernel %s: %llu samples on %zu instructions", fn, (unsigned long long)s.kernel, st_sass_count(k));
	if (m->device[0])
		printf(" (%s", m->device);
	if (m->device[0] || m->launches)
		printf("%s%u launches)", m->device[0] ? ", " : "(", m->launches);
	printf("\n");
	if (s.all > s.kernel)
		printf("  %llu samples at offsets that are not instructions of the listing\n",
		       (unsigned long long)(s.all - s.kernel));
	printf("stall reasons:");
	for (size_t i = 0; i < st_profile_reason_count(p) && s.per_reason[s.order[i]]; i++)
		printf(" %s %.1f%%", st_profile_reason(p, s.order[i]), pct(s.per_reason[s.order[i]], s.kernel));
	printf("\nhot instructions (top %zu):\n", s.nhot);
	char rs[512];
	for (size_t i = 0; i < s.nhot; i++) {
		const st_sass_insn *x = &ins[s.hot[i]];
		char text[256];
		insn_text(x, text, sizeof text);
		reasons_str(p, fn, x->offset, rs, sizeof rs);
		printf("  %04x %5.1f%%  %s  | %s\n", x->offset, pct(at[s.hot[i]], s.kernel), text, rs);
	}
	printf("listing:\n");
	for (size_t i = 0; i < st_sass_count(k); i++) {
		const st_sass_insn *x = &ins[i];
		char text[256];
		insn_text(x, text, sizeof text);
		if (!at[i]) {
			printf("  %04x %8s %6s  %s\n", x->offset, "", "", text);
			continue;
		}
		reasons_str(p, fn, x->offset, rs, sizeof rs);
		printf("  %04x %8llu %5.1f%%  %-52s | %s\n", x->offset, (unsigned long long)at[i], pct(at[i], s.kernel),
		       text, rs);
	}
out:
	rsum_free(&s);
	free(at);
}

static cJSON *insn_json(const st_profile *p, const st_sass_insn *x, const char *fn, uint64_t n, uint64_t total)
{
	cJSON *j = cJSON_CreateObject(), *st = NULL;
	cJSON_AddNumberToObject(j, "offset", x->offset);
	char text[256];
	insn_text(x, text, sizeof text);
	cJSON_AddStringToObject(j, "text", text);
	cJSON_AddStringToObject(j, "opcode", x->opcode);
	cJSON_AddNumberToObject(j, "samples", (double)n);
	cJSON_AddNumberToObject(j, "share", total ? (double)n / (double)total : 0);
	st = cJSON_AddObjectToObject(j, "stalls");
	size_t nr = st_profile_reason_count(p), idx[ST_PROFILE_MAX_REASONS];
	uint64_t cnt[ST_PROFILE_MAX_REASONS];
	for (size_t r = 0; n && r < nr; r++)
		cnt[r] = st_profile_at(p, fn, x->offset, (long)r);
	if (n)
		sort_desc(idx, nr, cnt, p);
	for (size_t i = 0; n && i < nr && cnt[idx[i]]; i++) /* most samples first */
		cJSON_AddNumberToObject(st, st_profile_reason(p, idx[i]), (double)cnt[idx[i]]);
	return j;
}

int st_profile_report_json(const st_profile *p, const st_sass_kernel *k, unsigned top)
{
	const st_profile_meta *m = st_profile_get_meta(p);
	const st_sass_insn *ins = st_sass_insns(k);
	const char *fn = st_sass_name(k);
	rsum s;
	uint64_t *at = NULL;
	int rc = 1;
	cJSON *root = cJSON_CreateObject();
	if (!root || summarize(p, k, top, &s, &at))
		goto out;
	cJSON_AddStringToObject(root, "kernel", fn);
	cJSON_AddStringToObject(root, "device", m->device);
	cJSON_AddNumberToObject(root, "launches", m->launches);
	cJSON_AddNumberToObject(root, "total_samples", (double)m->total_samples);
	cJSON_AddNumberToObject(root, "kernel_samples", (double)s.kernel);
	cJSON_AddNumberToObject(root, "unmatched", (double)(s.all > s.kernel ? s.all - s.kernel : 0));
	cJSON_AddNumberToObject(root, "cost_ms", m->cost_ms);
	cJSON *reasons = cJSON_AddObjectToObject(root, "reasons"), *hot = cJSON_AddArrayToObject(root, "top");
	for (size_t i = 0; i < st_profile_reason_count(p) && s.per_reason[s.order[i]]; i++)
		cJSON_AddNumberToObject(reasons, st_profile_reason(p, s.order[i]),
					(double)s.per_reason[s.order[i]] / (double)s.kernel);
	for (size_t i = 0; i < s.nhot; i++)
		cJSON_AddItemToArray(hot, cJSON_CreateNumber(ins[s.hot[i]].offset));
	cJSON *arr = cJSON_AddArrayToObject(root, "instructions");
	for (size_t i = 0; i < st_sass_count(k); i++)
		cJSON_AddItemToArray(arr, insn_json(p, &ins[i], fn, at[i], s.kernel));
	rc = st_cli_print_json(root, 1);
out:
	if (at)
		rsum_free(&s);
	free(at);
	cJSON_Delete(root);
	return rc;
}

/* sasstune pipe CUBIN [--listing F] [--kernel K] [--form 1|2] [--regs N] [--list | --why] [--json] [-o OUT]
 * [--all | --loop OFF [--loads OFF,...]]: family 3 form 1 (docs/pipeline.md "Form 1: rotation") or form 2
 * ("Form 2: prefetch into fresh registers"): list the candidates of a kernel, say why loops and loads are
 * not candidates (form 1), or write the rewritten cubin (sasstune/pipe.h). */
#include "cli.h"
#include "sasstune/cubin.h"
#include "sasstune/pipe.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out, "usage: sasstune pipe CUBIN [--listing F] [--kernel K] [--form 1|2] [--regs N]\n"
		     "                     [--list | --why] [--json] [-o OUT (--all | --loop OFF [--loads OFF,...])]\n\n"
		     "Family 3, form 1 (docs/pipeline.md \"Form 1: rotation\"): in a loop made of one block B that\n"
		     "branches back to itself, a global load moves, with the instructions of B that compute its\n"
		     "address, guard and zeroed destination (its group), to the end of B, where it loads what\n"
		     "the next pass needs, guarded by \"its own guard holds in the next pass and the loop goes\n"
		     "round again\"; a copy of the group (the peel) is inserted before B for the first pass.\n"
		     "No register is added and no access made that the original does not make (rules P1-P10\n"
		     "in docs/pipeline.md); the peel takes padding slots at the kernel's end.\n\n"
		     "Without -o: the candidates, per loop each load that is legal alone and the largest legal\n"
		     "set of its loads (whose peel fits the padding), one per line: \"loop 0x1b0: 1 load 0x210,\n"
		     "6 members, 7 peeled, P2 -> P5\" (the predicate the group's guard is renamed to).\n\n"
		     "Form 2 (--form 2, docs/pipeline.md \"Form 2: prefetch into fresh registers\", rules Q1-Q12):\n"
		     "each chosen (unguarded) load is replaced at its place by a hand-over `VIADD D, D', 0x0` from a\n"
		     "fresh register D'; after the last one, i' = i + s, Pf = the exit test on i', and the loads'\n"
		     "groups renamed onto fresh registers load the next pass's data into D', guarded by \"the loop\n"
		     "goes round again\" (Pf) and setting a free scoreboard the hand-overs wait on; the peel\n"
		     "before the loop loads the first pass's.  Fresh registers above the kernel's count raise it,\n"
		     "up to --regs N.  Lines read \"loop 0x150: prefetch 2 loads 0x1d0,0x200, 7 members, 11\n"
		     "inserted, 21 -> 24 registers\".\n\n"
		     "options:\n"
		     "  --listing F    the cubin's `nvdisasm -hex -c` listing (default: run nvdisasm)\n"
		     "  --kernel K     the kernel (default: the cubin's only kernel)\n"
		     "  --form F       1 (rotation, the default) or 2 (prefetch into fresh registers)\n"
		     "  --regs N       form 2: the most registers the rewrite may use (default 0: the kernel's\n"
		     "                 count, no raise; choose N by the occupancy you accept)\n"
		     "  --list         list the candidates (the default without -o)\n"
		     "  --why          one line per refusal instead: each loop that is refused as a whole and\n"
		     "                 each load refused alone, \"0x210 P4: R14 written by the group is live ...\"\n"
		     "                 (form 2: \"0x1d0 Q9: no fresh 2-aligned 2 registers below 21 for R2\")\n"
		     "  --json         the list or the refusals as JSON (each candidate with \"form\",\n"
		     "                 \"regs_before\", \"regs_after\"; form 2 adds \"sb\" and \"hand\")\n"
		     "  -o OUT         write the rewritten cubin, with --all (the largest candidate of every loop)\n"
		     "                 or --loop OFF (that loop's largest candidate, or with --loads exactly those\n"
		     "                 loads, byte offsets as listed)\n"
		     "  -h, --help\n\n"
		     "Neither the independent checker nor a GPU sees the rewrite here: `sasstune check CUBIN\n"
		     "OUT` judges it, `sasstune rewrite CUBIN --schedule S.json` with {\"pipe\": [{\"loop\",\n"
		     "\"loads\"}]} (as --json lists them; form 2 adds \"form\": 2, \"regs\": N; docs/cubin.md)\n"
		     "applies and checks in one go, and `sasstune compare CUBIN OUT --launch L.json` checks\n"
		     "its outputs bit for bit on a GPU and times the pair.\n\n"
		     "exit status: 0 ok, 1 bad input or a refused candidate (the rule named), 2 usage error\n");
}

typedef struct offs { size_t n; uint32_t v[8]; } offs;

static int parse_offs(const char *cmd, const char *value, void *dst)
{
	offs *o = dst;
	for (const char *p = value; *p;) {
		char *end;
		unsigned long v = strtoul(p, &end, 0);
		if (end == p || (*end && *end != ',') || o->n == 8) {
			st_cli_error(cmd, "--loads: '%s' is not a list of at most 8 offsets", value);
			return 1;
		}
		o->v[o->n++] = (uint32_t)v;
		p = *end ? end + 1 : end;
	}
	return 0;
}

static int parse_off(const char *cmd, const char *value, void *dst)
{
	char *end;
	unsigned long v = strtoul(value, &end, 0);
	if (!*value || *end) {
		st_cli_error(cmd, "--loop: '%s' is not an offset", value);
		return 1;
	}
	*(long *)dst = (long)v;
	return 0;
}

static int parse_num(const char *cmd, const char *value, void *dst)
{
	char *end;
	unsigned long v = strtoul(value, &end, 0);
	if (!*value || *end || v > 255) {
		st_cli_error(cmd, "'%s' is not a number 0..255", value);
		return 1;
	}
	*(unsigned *)dst = (unsigned)v;
	return 0;
}

static cJSON *cand_json(const st_pipe_cand *c)
{
	cJSON *o = cJSON_CreateObject(), *l = cJSON_AddArrayToObject(o, "loads");
	cJSON_AddNumberToObject(o, "loop", c->header);
	for (uint32_t i = 0; i < c->nloads; i++)
		cJSON_AddItemToArray(l, cJSON_CreateNumber(c->loads[i]));
	cJSON_AddNumberToObject(o, "members", c->nmembers);
	cJSON_AddNumberToObject(o, "peel", c->npeel);
	if (c->pred_from >= 0) {
		char a[8], b[8];
		snprintf(a, sizeof a, "P%d", c->pred_from);
		snprintf(b, sizeof b, "P%d", c->pred_to);
		cJSON *r = cJSON_AddObjectToObject(o, "rename");
		cJSON_AddStringToObject(r, "from", a);
		cJSON_AddStringToObject(r, "to", b);
	}
	cJSON_AddNumberToObject(o, "form", c->form == 2 ? 2 : 1);
	cJSON_AddNumberToObject(o, "regs_before", c->regs_before);
	cJSON_AddNumberToObject(o, "regs_after", c->regs_after);
	if (c->form == 2) {
		cJSON_AddNumberToObject(o, "sb", c->sb);
		cJSON_AddNumberToObject(o, "hand", c->nhand);
	}
	return o;
}

static int list(const st_pipe_cand *c, size_t n, int json)
{
	if (json) {
		cJSON *a = cJSON_CreateArray();
		for (size_t i = 0; i < n; i++)
			cJSON_AddItemToArray(a, cand_json(&c[i]));
		int rc = st_cli_print_json(a, 1);
		cJSON_Delete(a);
		return rc;
	}
	if (!n)
		printf("no candidates (--why says why)\n");
	for (size_t i = 0; i < n; i++) {
		char buf[256];
		st_pipe_describe(&c[i], buf, sizeof buf);
		printf("%s\n", buf);
	}
	return ST_EXIT_OK;
}

static void why_line(void *ctx, uint32_t off, const char *rule, const char *msg)
{
	cJSON *a = ctx;
	if (!a) {
		printf("0x%x %s: %s\n", off, rule, msg);
		return;
	}
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "offset", off);
	cJSON_AddStringToObject(o, "rule", rule);
	cJSON_AddStringToObject(o, "message", msg);
	cJSON_AddItemToArray(a, o);
}

/* The candidates to apply: the largest of every loop (--all), of one loop, or the one of `loads`. */
static int choose(const st_cubin *c, const char *kernel, const st_sass_opts *o, const st_pipe_cand *all, size_t n,
		  long loop, const offs *loads, unsigned form, unsigned regs, st_pipe_cand *out, size_t *nout,
		  const char *cmd)
{
	st_error err = {0};
	*nout = 0;
	if (loads->n) {
		if (form == 2 ? st_pipe2_make(c, kernel, o, regs, (uint32_t)loop, loads->v, loads->n, out, &err)
			      : st_pipe_make(c, kernel, o, (uint32_t)loop, loads->v, loads->n, out, &err))
			return st_cli_fail(cmd, &err);
		*nout = 1;
		return ST_EXIT_OK;
	}
	for (size_t i = 0; i < n; i++) {
		if (loop >= 0 && all[i].header != (uint32_t)loop)
			continue;
		size_t j = 0;
		while (j < *nout && out[j].header != all[i].header)
			j++;
		if (j == *nout)
			out[(*nout)++] = all[i];
		else if (all[i].nloads > out[j].nloads)
			out[j] = all[i];
	}
	if (!*nout && loop >= 0)
		st_cli_error(cmd, "no candidate in the loop at 0x%lx (--why says why)", loop);
	else if (!*nout)
		st_cli_error(cmd, "no candidates (--why says why)");
	return *nout ? ST_EXIT_OK : ST_EXIT_FAIL;
	return ST_EXIT_OK;
}

static int write_out(st_cubin *c, const char *kernel, const st_sass_opts *o, const st_pipe_cand *pick, size_t n,
		     const char *out, const char *cmd)
{
	st_error err = {0};
	if (st_pipe_apply(c, kernel, o, pick, n, &err) || st_cubin_write_file(c, out, &err))
		return st_cli_fail(cmd, &err);
	for (size_t i = 0; i < n; i++) {
		char buf[256];
		st_pipe_describe(&pick[i], buf, sizeof buf);
		printf("%s\n", buf);
	}
	printf("wrote %s\n", out);
	return ST_EXIT_OK;
}

static int usage_error(const char *cmd, const char *msg)
{
	st_cli_error(cmd, "%s (see sasstune pipe --help)", msg);
	return ST_EXIT_USAGE;
}

/* What is wrong with --form/--regs together, or NULL. */
static const char *form_usage(unsigned form, unsigned regs)
{
	if (form != 1 && form != 2)
		return "--form is 1 or 2";
	if (form == 1 && regs)
		return "--regs is for --form 2";
	return NULL;
}

int st_cmd_pipe(int argc, char **argv)
{
	const char *path = NULL, *out = NULL, *kernel = NULL, *listing = NULL;
	int do_list = 0, why = 0, json = 0, all = 0;
	unsigned form = 1, regs = 0;
	long loop = -1;
	offs loads = {0};
	const st_cli_opt opts[] = {
		ST_OPT_STR("--listing", &listing), ST_OPT_STR("--kernel", &kernel), ST_OPT_FLAG("--list", &do_list),
		ST_OPT_FLAG("--why", &why), ST_OPT_FLAG("--json", &json), ST_OPT_STR("-o", &out),
		ST_OPT_FN("--form", parse_num, &form), ST_OPT_FN("--regs", parse_num, &regs), ST_OPT_FLAG("--all", &all),
		ST_OPT_FN("--loop", parse_off, &loop), ST_OPT_FN("--loads", parse_offs, &loads),
		ST_OPT_END,
	};
	const st_cli_need need[] = {{&path, "CUBIN"}, {0}};
	int code = st_cli_parse(argc, argv, &(st_cli_args){.usage = usage, .opts = opts, .file = &path, .need = need});
	if (code >= 0)
		return code;
	if (do_list + why > 1 || ((do_list || why) && out))
		return usage_error(argv[0], "--list, --why and -o exclude each other");
	if (out && all == (loop >= 0))
		return usage_error(argv[0], "-o needs --all or --loop OFF");
	if (!out && (all || loop >= 0 || loads.n))
		return usage_error(argv[0], "--all, --loop and --loads need -o");
	if (loads.n && loop < 0)
		return usage_error(argv[0], "--loads needs --loop");
	const char *bad = form_usage(form, regs);
	if (bad)
		return usage_error(argv[0], bad);
	st_error err = {0};
	st_cubin *c = NULL;
	if (st_cubin_open_file(path, &c, &err))
		return st_cli_fail(argv[0], &err);
	st_sass_opts o = {.listing = listing};
	st_pipe_cand *cands = NULL, pick[64];
	size_t n = 0, np = 0;
	int rc = ST_EXIT_OK;
	if (st_cli_no_kernel(argv[0], c, path, kernel)) {
		rc = ST_EXIT_FAIL;
	} else if (!kernel && st_cubin_kernel_count(c) != 1) {
		st_cli_error(argv[0], "%s: %zu kernels; name one with --kernel", path, st_cubin_kernel_count(c));
		rc = ST_EXIT_USAGE;
	} else if (why) {
		cJSON *a = json ? cJSON_CreateArray() : NULL;
		if (form == 2 ? st_pipe2_explain(c, kernel, &o, regs, why_line, a, &err)
			      : st_pipe_explain(c, kernel, &o, why_line, a, &err))
			rc = st_cli_fail(argv[0], &err);
		else if (a)
			rc = st_cli_print_json(a, 1);
		cJSON_Delete(a);
	} else if (form == 2 ? st_pipe2_find(c, kernel, &o, regs, &cands, &n, &err)
			     : st_pipe_find(c, kernel, &o, &cands, &n, &err)) {
		rc = st_cli_fail(argv[0], &err);
	} else if (!out) {
		rc = list(cands, n, json);
	} else if (!(rc = choose(c, kernel, &o, cands, n < 64 ? n : 64, loop, &loads, form, regs, pick, &np,
					  argv[0]))) {
		rc = write_out(c, kernel, &o, pick, np, out, argv[0]);
	}
	st_pipe_cands_free(cands);
	st_cubin_free(c);
	return rc;
}

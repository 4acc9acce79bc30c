/* sasstune disasm CUBIN [--listing FILE] [--kernel K] [--json] [--plr]: decode kernels. */
#include "cli.h"
#include "sasstune/cubin.h"
#include "sasstune/sass.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out,
		"usage: sasstune disasm CUBIN [--listing FILE] [--kernel K] [--json] [--plr]\n\n"
		"Decode the kernels of a cubin: one line per instruction with its offset, control\n"
		"fields, text, registers defined and used, class and fixed latency.  Opcodes and\n"
		"operands come from nvdisasm's `-hex -c` listing; every listed word must equal the\n"
		"cubin's bytes.  nvdisasm is looked for in SASSTUNE_NVDISASM, the folder of\n"
		"TRITON_PTXAS_PATH, $CUDA_HOME/bin, Triton's bundled one (site-packages next to a\n"
		"python3 on PATH), then PATH (docs/sass.md; use the nvdisasm matching the ptxas that\n"
		"built the cubin).\n\n"
		"Control fields are printed as [Bwait:Rrbar:Wwbar:Y:Sstall:reuse] (CuAssembler's form):\n"
		"B lists the scoreboards waited on, R/W the read/write scoreboard ('-' none), Y when the\n"
		"yield bit is clear ('-' when set), S the stall, then the reuse flags a/b/c.  The last\n"
		"column is the fixed latency to the first later reader in the same block (cycles@offset),\n"
		"'var' for variable-latency instructions, '-' when nothing in the block reads the result.\n\n"
		"options:\n"
		"  --listing FILE   read this `nvdisasm -hex -c` listing instead of running nvdisasm\n"
		"  --kernel K       only kernel K (default: every kernel)\n"
		"  --json           one JSON object: {kernel, sm, instructions: [{offset, opcode, defs,\n"
		"                   uses, ctrl: {stall, yield, wbar, rbar, wait, reuse}, class, ...}]};\n"
		"                   with several kernels, {kernels: [...]} of such objects\n"
		"  --plr            also run `nvdisasm -plr` and report, per kernel, how many\n"
		"                   instructions' def/use sets agree with it, listing the others\n"
		"  --plr-listing F  the same, from a stored `nvdisasm -hex -c -plr` listing\n"
		"  --nvdisasm PATH  run this nvdisasm\n"
		"  -h, --help\n\n"
		"exit status: 0 ok, 1 the cubin or listing cannot be read or do not match, 2 usage error\n");
}

static void ctrl_str(const st_ctrl *c, char *buf, size_t n)
{
	char w[7];
	for (int i = 0; i < 6; i++)
		w[i] = (c->wait >> i & 1) ? (char)('0' + i) : '-';
	w[6] = 0;
	char rb = c->rbar == ST_SB_NONE ? '-' : (char)('0' + c->rbar);
	char wb = c->wbar == ST_SB_NONE ? '-' : (char)('0' + c->wbar);
	snprintf(buf, n, "[B%s:R%c:W%c:%c:S%02u:%c%c%c]", w, rb, wb, c->yield ? '-' : 'Y', c->stall,
		 (c->reuse & 1) ? 'a' : '-', (c->reuse & 2) ? 'b' : '-', (c->reuse & 4) ? 'c' : '-');
}

static size_t regs_str(const st_sass_reg *r, unsigned n, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = 0;
	for (unsigned i = 0; i < n && len + 24 < size; i++) {
		char a[12], b[12];
		st_sass_reg_str(a, sizeof a, r[i].file, r[i].index);
		if (r[i].count > 1) {
			st_sass_reg_str(b, sizeof b, r[i].file, r[i].index + r[i].count - 1u);
			len += (size_t)snprintf(buf + len, size - len, "%s%s..%s", len ? "," : "", a, b);
		} else {
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? "," : "", a);
		}
	}
	if (!len)
		snprintf(buf, size, "-");
	return len;
}

static int overlaps(const st_sass_reg *a, const st_sass_reg *b)
{
	return a->file == b->file && a->index < b->index + b->count && b->index < a->index + a->count;
}

static int res_of(unsigned file)
{
	return file == ST_RF_R ? ST_RES_GPR : file == ST_RF_UR ? ST_RES_UGPR : file == ST_RF_P ? ST_RES_PRED : ST_RES_UPRED;
}

/* Fixed latency to the first later reader in the block: cycles, and its index in *at. */
static int first_reader_latency(const st_sass_kernel *k, size_t i, size_t *at)
{
	const st_sass_insn *in = st_sass_insns(k);
	size_t n = st_sass_count(k);
	for (size_t j = i + 1; j < n && in[j].block == in[i].block; j++) {
		int best = -1, hit = 0;
		for (unsigned d = 0; d < in[i].ndefs; d++)
			for (unsigned u = 0; u < in[j].nuses; u++) {
				if (in[i].defs[d].file == ST_RF_B || !overlaps(&in[i].defs[d], &in[j].uses[u]))
					continue;
				hit = 1;
				int l = st_sass_latency(st_sass_sm(k), &in[i], in[i].defs[d].slot, &in[j], in[j].uses[u].slot,
							res_of(in[i].defs[d].file), ST_DEP_TRUE);
				if (l > best)
					best = l;
			}
		if (hit) {
			*at = j;
			return best;
		}
	}
	return -1;
}

static void print_kernel(const st_sass_kernel *k)
{
	size_t n = st_sass_count(k);
	const st_sass_insn *in = st_sass_insns(k);
	printf("kernel %s: sm_%d, %zu instructions, %zu basic blocks\n", st_sass_name(k), st_sass_sm(k), n,
	       st_sass_block_count(k));
	for (size_t i = 0; i < n; i++) {
		const st_sass_insn *x = &in[i];
		char ctrl[48], defs[256], uses[256], lat[32], guard[16] = "";
		if (x->label)
			printf("%s:\n", x->label);
		ctrl_str(&x->ctrl, ctrl, sizeof ctrl);
		regs_str(x->defs, x->ndefs, defs, sizeof defs);
		regs_str(x->uses, x->nuses, uses, sizeof uses);
		if (x->flags & ST_F_VARLAT) {
			snprintf(lat, sizeof lat, "var");
		} else {
			size_t at = 0;
			int l = first_reader_latency(k, i, &at);
			if (l >= 0)
				snprintf(lat, sizeof lat, "%d@%04x", l, in[at].offset);
			else
				snprintf(lat, sizeof lat, "-");
		}
		if (x->guard >= 0) {
			char g[8];
			st_sass_reg_str(g, sizeof g, x->guard_file, (unsigned)x->guard);
			snprintf(guard, sizeof guard, "@%s%s ", x->guard_neg ? "!" : "", g);
		}
		char text[320];
		snprintf(text, sizeof text, "%s%s%s%s", guard, x->opcode, x->operands[0] ? " " : "", x->operands);
		const char *space = st_space_str(x->space);
		printf("  %04x %s %-44s defs %s uses %s  %s%s%s  %s\n", x->offset, ctrl, text, defs, uses,
		       st_sass_class_str(x->cls), space[0] ? "/" : "", space, lat);
	}
}

static cJSON *regs_json(const st_sass_reg *r, unsigned n)
{
	cJSON *a = cJSON_CreateArray();
	for (unsigned i = 0; a && i < n; i++)
		for (unsigned j = 0; j < r[i].count; j++) {
			char b[12];
			st_sass_reg_str(b, sizeof b, r[i].file, r[i].index + j);
			cJSON_AddItemToArray(a, cJSON_CreateString(b));
		}
	return a;
}

static cJSON *kernel_json(const st_sass_kernel *k)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "kernel", st_sass_name(k));
	cJSON_AddNumberToObject(o, "sm", st_sass_sm(k));
	cJSON_AddNumberToObject(o, "blocks", (double)st_sass_block_count(k));
	cJSON *arr = cJSON_AddArrayToObject(o, "instructions");
	size_t n = st_sass_count(k);
	const st_sass_insn *in = st_sass_insns(k);
	for (size_t i = 0; i < n; i++) {
		const st_sass_insn *x = &in[i];
		cJSON *j = cJSON_CreateObject();
		cJSON_AddNumberToObject(j, "offset", x->offset);
		cJSON_AddStringToObject(j, "opcode", x->opcode);
		cJSON_AddStringToObject(j, "operands", x->operands);
		if (x->guard >= 0) {
			char g[12];
			st_sass_reg_str(g + 1, sizeof g - 1, x->guard_file, (unsigned)x->guard);
			g[0] = '!';
			cJSON_AddStringToObject(j, "guard", x->guard_neg ? g : g + 1);
		}
		cJSON_AddItemToObject(j, "defs", regs_json(x->defs, x->ndefs));
		cJSON_AddItemToObject(j, "uses", regs_json(x->uses, x->nuses));
		cJSON *c = cJSON_AddObjectToObject(j, "ctrl");
		cJSON_AddNumberToObject(c, "stall", x->ctrl.stall);
		cJSON_AddNumberToObject(c, "yield", x->ctrl.yield);
		cJSON_AddNumberToObject(c, "wbar", x->ctrl.wbar);
		cJSON_AddNumberToObject(c, "rbar", x->ctrl.rbar);
		cJSON_AddNumberToObject(c, "wait", x->ctrl.wait);
		cJSON_AddNumberToObject(c, "reuse", x->ctrl.reuse);
		cJSON_AddStringToObject(j, "class", st_sass_class_str(x->cls));
		if (x->space)
			cJSON_AddStringToObject(j, "space", st_space_str(x->space));
		cJSON_AddBoolToObject(j, "variable_latency", (x->flags & ST_F_VARLAT) != 0);
		size_t at = 0;
		int l = (x->flags & ST_F_VARLAT) ? -1 : first_reader_latency(k, i, &at);
		if (l >= 0) {
			cJSON_AddNumberToObject(j, "latency", l);
			cJSON_AddNumberToObject(j, "latency_to", in[at].offset);
		}
		cJSON_AddNumberToObject(j, "block", x->block);
		if (x->target >= 0)
			cJSON_AddNumberToObject(j, "target", (double)x->target);
		if (x->label)
			cJSON_AddStringToObject(j, "label", x->label);
		cJSON_AddItemToArray(arr, j);
	}
	return o;
}

struct plr_ctx {
	size_t shown;
};

static void plr_report(void *vctx, const st_sass_insn *in, const char *diff)
{
	struct plr_ctx *ctx = vctx;
	if (ctx->shown++ < 50)
		printf("  differs at %04x %s %s: %s\n", in->offset, in->opcode, in->operands, diff);
}

/* The nvdisasm listings of one cubin: the plain one, and the -plr one (NULL without --plr). */
typedef struct listings {
	const char *path; /* --listing, or NULL when nvdisasm ran */
	char *text, *plr_text;
	size_t len, plr_len;
} listings;

/* Decodes kernel ki of c, prints it (or with json adds its object to karr, or makes it *all when
 * karr is NULL) and, with a -plr listing, prints how many instructions agree with it.  *shown
 * counts the kernels printed as text (a blank line goes between them). */
static st_status show_kernel(const st_cubin *c, size_t ki, const listings *l, int json, cJSON *karr, cJSON **all,
			     size_t *shown, st_error *err)
{
	const st_kernel_info *info = st_cubin_kernel(c, ki);
	size_t size = 0;
	const uint8_t *code = st_cubin_code(c, ki, &size);
	st_sass_kernel *k = NULL;
	st_status s = st_sass_decode_code((int)st_cubin_sm(c), info->name, code, size, l->text, l->len, &k, err);
	if (s != ST_OK) {
		if (l->path)
			st_error_wrap(err, "%s", l->path);
		return s;
	}
	if (json) {
		cJSON *o = kernel_json(k);
		if (karr)
			cJSON_AddItemToArray(karr, o);
		else
			*all = o;
	} else {
		if ((*shown)++)
			printf("\n");
		print_kernel(k);
	}
	if (l->plr_text) {
		size_t agree = 0, compared = 0;
		struct plr_ctx pc = {0};
		s = st_sass_check_plr(k, l->plr_text, l->plr_len, &agree, &compared, plr_report, &pc, err);
		if (s == ST_OK)
			printf("plr %s: %zu of %zu instructions agree with nvdisasm -plr\n", st_sass_name(k), agree,
			       compared);
	}
	st_sass_free(k);
	return s;
}

/* Fills l's listings: the plain one, and with plr (or a --plr-listing) the -plr one. */
static st_status read_listings(const st_cubin *c, const st_sass_opts *opts, int plr, const char *plr_listing,
			       listings *l, st_error *err)
{
	l->path = opts->listing;
	st_status s = st_sass_listing(c, opts, NULL, &l->text, &l->len, err);
	if (s == ST_OK && (plr || plr_listing)) {
		st_sass_opts po = *opts;
		po.listing = plr_listing;
		s = st_sass_listing(c, &po, "-plr", &l->plr_text, &l->plr_len, err);
	}
	return s;
}

int st_cmd_disasm(int argc, char **argv)
{
	const char *cmd = argv[0], *path = NULL, *kernel = NULL, *plr_listing = NULL;
	int json = 0, plr = 0;
	st_sass_opts opts = {0};
	const st_cli_opt table[] = {
		ST_OPT_FLAG("--json", &json), ST_OPT_FLAG("--plr", &plr), ST_OPT_STR("--listing", &opts.listing),
		ST_OPT_STR("--kernel", &kernel), ST_OPT_STR("--nvdisasm", &opts.nvdisasm),
		ST_OPT_STR("--plr-listing", &plr_listing), ST_OPT_END,
	};
	int parsed = st_cli_parse(argc, argv, &(st_cli_args){.usage = usage, .opts = table, .file = &path, .terse = 1});
	if (parsed >= 0)
		return parsed;
	if (!path) {
		usage(stderr);
		return ST_EXIT_USAGE;
	}
	if (json && (plr || plr_listing)) {
		st_cli_error(cmd, "--plr cannot be combined with --json");
		return ST_EXIT_USAGE;
	}
	st_error err = {0};
	st_cubin *c = NULL;
	if (st_cubin_open_file(path, &c, &err) != ST_OK)
		return st_cli_fail(cmd, &err);
	int rc = ST_EXIT_FAIL;
	listings l = {0};
	cJSON *all = NULL;
	if (kernel && st_cubin_find_kernel(c, kernel) == ST_CUBIN_NONE) {
		st_cli_error(cmd, "%s has no kernel %s", path, kernel);
		goto out;
	}
	if (read_listings(c, &opts, plr, plr_listing, &l, &err) != ST_OK)
		goto fail;
	size_t nk = st_cubin_kernel_count(c), shown = 0;
	int single = kernel != NULL || nk == 1;
	if (json && !single)
		all = cJSON_CreateObject();
	cJSON *karr = all ? cJSON_AddArrayToObject(all, "kernels") : NULL;
	for (size_t ki = 0; ki < nk; ki++) {
		if (kernel && strcmp(st_cubin_kernel(c, ki)->name, kernel))
			continue;
		if (show_kernel(c, ki, &l, json, karr, &all, &shown, &err) != ST_OK)
			goto fail;
	}
	if (json && st_cli_print_json(all, 1)) {
		st_cli_error(cmd, "out of memory");
		goto out;
	}
	rc = ST_EXIT_OK;
	goto out;
fail:
	rc = st_cli_fail(cmd, &err);
out:
	cJSON_Delete(all);
	free(l.text);
	free(l.plr_text);
	st_cubin_free(c);
	return rc;
}

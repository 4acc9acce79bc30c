/* sasstune loops CUBIN [--listing F] [--kernel K] [--launch L.json] [--json]: the loop study of
 * docs/pipeline.md (loops.h): every loop, its trip count at the launch, its loads with their
 * address slices and load-to-use distances, and the resources a software-pipelined form would
 * need (free registers, predicates and scoreboards, padding slots). */
#include "cli.h"
#include "loops.h"
#include "sasstune/cubin.h"
#include "sasstune/sass.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out, "usage: sasstune loops CUBIN [--listing F] [--kernel K] [--launch L.json] [--json]\n\n"
		     "The loop study for software pipelining (docs/pipeline.md).  Per kernel: its register\n"
		     "count, the registers and predicates it never touches, how many padding slots `sasstune\n"
		     "insert` can use, and the register count up to which occupancy by registers stays the same\n"
		     "at the launch's block size.  Per loop (a back edge to a header not after its latch; the\n"
		     "body is every block reaching the latch backwards without passing the header, as the\n"
		     "xblock family reads it): its span, blocks, instructions, nesting depth, the sum of its\n"
		     "stalls (static cycles of one pass), the scoreboards it sets, its trip count at the\n"
		     "launch when the back edge's test can be evaluated (else 'unknown' and why), and each\n"
		     "global/shared load (LDG, LDS, LDGSTS, TMA): its guard, its address slice (the body's\n"
		     "instructions computing the address; 'carried' when it goes around the back edge), and\n"
		     "the static cycles to the first reader of its result (across the back edge: 'next').\n\n"
		     "options:\n"
		     "  --listing F    the cubin's `nvdisasm -hex -c` listing (default: run nvdisasm)\n"
		     "  --kernel K     only kernel K\n"
		     "  --launch L     the launch spec (launch.json): parameter values for trip counts, block size\n"
		     "  --json         one JSON object\n"
		     "  -h, --help\n\n"
		     "exit status: 0 ok, 1 the cubin, listing or launch cannot be read, 2 usage error\n");
}

/* c[0x0][off] of the launch: block and grid sizes, then the parameters from 0x210 (sm_90). */
static int read_launch(const char *path, lp_params *p, unsigned *threads, st_error *err)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = fopen(path, "rb");
	if (!f || fseek(f, 0, SEEK_END) || (len = (size_t)ftell(f), fseek(f, 0, SEEK_SET)) ||
	    !(text = calloc(len + 1, 1)) || fread(text, 1, len, f) != len) {
		if (f)
			fclose(f);
		free(text);
		return st_error_set(err, ST_EIO, "%s: cannot read the launch spec", path), 1;
	}
	fclose(f);
	cJSON *j = cJSON_Parse(text);
	free(text);
	cJSON *grid = cJSON_GetObjectItem(j, "grid"), *block = cJSON_GetObjectItem(j, "block");
	cJSON *params = cJSON_GetObjectItem(j, "params"), *types = cJSON_GetObjectItem(j, "ptx_param_types");
	if (!cJSON_IsArray(grid) || !cJSON_IsArray(block) || !cJSON_IsArray(params) || cJSON_GetArraySize(grid) != 3 ||
	    cJSON_GetArraySize(block) != 3) {
		cJSON_Delete(j);
		return st_error_set(err, ST_EFORMAT, "%s: not a launch spec with grid, block and params", path), 1;
	}
	*threads = 1;
	for (int d = 0; d < 3; d++) {
		p->off[p->n] = 4u * (unsigned)d, p->val[p->n++] = cJSON_GetArrayItem(block, d)->valueint;
		p->off[p->n] = 12 + 4u * (unsigned)d, p->val[p->n++] = cJSON_GetArrayItem(grid, d)->valueint;
		*threads *= (unsigned)cJSON_GetArrayItem(block, d)->valueint;
	}
	unsigned off = 0x210;
	for (int i = 0; i < cJSON_GetArraySize(params) && p->n < 96; i++) {
		cJSON *pa = cJSON_GetArrayItem(params, i), *v = cJSON_GetObjectItem(pa, "value");
		const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(pa, "kind"));
		/* the PTX type's size ("u64", "u32", "u16", "u8"), else the kind's ("ptr", "i64": 8) */
		const char *t = cJSON_GetStringValue(cJSON_GetArrayItem(types, i));
		if (!t)
			t = kind && (!strcmp(kind, "ptr") || strstr(kind, "64")) ? "u64" : "u32";
		unsigned sz = t[1] == '6' ? 8 : t[1] == '1' && t[2] == '6' ? 2 : t[1] == '8' ? 1 : 4;
		off = (off + sz - 1) / sz * sz;
		if (cJSON_IsNumber(v) && kind && kind[0] != 'f' && kind[0] != 'p')
			p->off[p->n] = off, p->val[p->n++] = (int64_t)v->valuedouble;
		off += sz;
	}
	cJSON_Delete(j);
	return 0;
}

/* The kernel's EIATTR_REGCOUNT (0: not found). */
static unsigned regcount(const st_cubin *c, size_t k)
{
	unsigned sym = st_cubin_kernel(c, k)->symbol;
	for (size_t i = 0; i < st_cubin_nvinfo_count(c); i++) {
		const st_nvinfo *r = st_cubin_nvinfo(c, i);
		if (r->attr == 0x2f && r->kernel == ST_CUBIN_NONE && r->size >= 8 &&
		    (unsigned)(r->payload[0] | r->payload[1] << 8) == sym)
			return (unsigned)(r->payload[4] | r->payload[5] << 8);
	}
	return 0;
}

/* Blocks per SM that r registers per thread allow at `threads` per block (allocation in units
 * of 256 registers per warp, 64 warps and 32 blocks per SM; shared memory not counted). */
static unsigned blocks_by_regs(unsigned r, unsigned threads)
{
	unsigned wpb = (threads + 31) / 32, per_warp = (r * 32 + 255) / 256 * 256;
	unsigned warps = per_warp ? 65536 / per_warp : 64;
	warps = warps > 64 ? 64 : warps;
	unsigned b = wpb ? warps / wpb : 0;
	return b > 32 ? 32 : b;
}

typedef struct res {
	unsigned regs, used, keep; /* count, distinct R used, the largest count with the same occupancy */
	uint8_t r[256], p[8];      /* 1: touched */
} res;

static void resources(const st_cubin *c, size_t k, const st_sass_kernel *sk, unsigned threads, res *o)
{
	memset(o, 0, sizeof *o);
	const st_sass_insn *in = st_sass_insns(sk);
	for (size_t i = 0; i < st_sass_count(sk); i++)
		for (int u = 0; u < 2; u++) {
			const st_sass_reg *v = u ? in[i].uses : in[i].defs;
			for (size_t j = 0; j < (u ? in[i].nuses : in[i].ndefs); j++)
				for (unsigned x = v[j].index; x < (unsigned)v[j].index + v[j].count && x < 256; x++) {
					if (v[j].file == ST_RF_R)
						o->r[x] = 1;
					if (v[j].file == ST_RF_P && x < 8)
						o->p[x] = 1;
				}
		}
	o->regs = regcount(c, k);
	for (unsigned x = 0; x < 256; x++)
		o->used += o->r[x];
	o->keep = o->regs;
	unsigned b = blocks_by_regs(o->regs, threads);
	while (threads && o->keep < 255 && blocks_by_regs(o->keep + 1, threads) == b)
		o->keep++;
}

/* "R12 R40..R47" for the registers below `below` never touched. */
static void free_list(char *buf, size_t n, const uint8_t *touched, unsigned below, char file)
{
	size_t w = 0;
	buf[0] = 0;
	for (unsigned x = 0; x < below && w + 16 < n; x++) {
		if (touched[x])
			continue;
		unsigned y = x;
		while (y + 1 < below && !touched[y + 1])
			y++;
		w += (size_t)snprintf(buf + w, n - w, y > x ? "%s%c%u..%c%u" : "%s%c%u", w ? " " : "", file, x, file, y);
		x = y;
	}
	if (!w)
		snprintf(buf, n, "none");
}

static void sb_list(char *buf, size_t n, uint8_t set, bool want_set)
{
	size_t w = 0;
	for (unsigned s = 0; s < 6; s++)
		if (!!(set >> s & 1) == want_set)
			w += (size_t)snprintf(buf + w, n - w, "%sSB%u", w ? " " : "", s);
	if (!w)
		snprintf(buf, n, "none");
}

static uint32_t insert_slot(const lp_loop *l, const st_sass_insn *in)
{
	uint32_t s = l->head + 1; /* after the header's first instruction: runs on every pass */
	return s <= l->last && l->in[in[s].block] ? s : l->head;
}

static cJSON *load_json(const st_sass_insn *in, const lp_load *ld)
{
	cJSON *o = cJSON_CreateObject(), *s = cJSON_AddArrayToObject(o, "slice");
	cJSON_AddNumberToObject(o, "offset", in[ld->at].offset);
	cJSON_AddStringToObject(o, "opcode", in[ld->at].opcode);
	cJSON_AddStringToObject(o, "operands", in[ld->at].operands);
	cJSON_AddBoolToObject(o, "guarded", in[ld->at].guard >= 0);
	for (size_t i = 0; i < ld->nslice; i++)
		cJSON_AddItemToArray(s, cJSON_CreateNumber(in[ld->slice[i]].offset));
	cJSON_AddBoolToObject(o, "carried", ld->carried);
	cJSON_AddBoolToObject(o, "invariant", ld->invariant);
	if (ld->consumer != LP_NONE) {
		cJSON_AddNumberToObject(o, "consumer", in[ld->consumer].offset);
		cJSON_AddNumberToObject(o, "cycles_to_use", ld->dist);
		cJSON_AddBoolToObject(o, "use_next_pass", ld->wraps);
	} else {
		cJSON_AddNullToObject(o, "consumer");
	}
	return o;
}

static void load_text(const st_sass_insn *in, const lp_load *ld)
{
	const st_sass_insn *x = &in[ld->at];
	char g[16] = "";
	if (x->guard >= 0) {
		g[0] = '@', g[1] = x->guard_neg ? '!' : 0;
		st_sass_reg_str(g + strlen(g), sizeof g - 3, x->guard_file, (unsigned)x->guard);
		strcat(g, " ");
	}
	printf("    %04x %s%s %s  slice %zu:", x->offset, g, x->opcode, x->operands, ld->nslice);
	for (size_t i = 0; i < ld->nslice && i < 8; i++)
		printf(" %04x %s", in[ld->slice[i]].offset, in[ld->slice[i]].opcode);
	printf("%s%s%s;", ld->nslice > 8 ? " ..." : "", ld->carried ? " (carried)" : "",
	       ld->invariant ? " (loop-invariant address)" : "");
	if (ld->consumer == LP_NONE)
		printf(" no register result read in the loop\n");
	else
		printf(" first use %04x %s after %d cycles%s\n", in[ld->consumer].offset, in[ld->consumer].opcode,
		       ld->dist, ld->wraps ? " (next pass)" : "");
}

static cJSON *loop_json(const st_sass_insn *in, const lp_loop *l, const char *dead)
{
	cJSON *o = cJSON_CreateObject(), *ls = cJSON_CreateArray();
	char sb[64];
	cJSON_AddNumberToObject(o, "header", in[l->head].offset);
	cJSON_AddNumberToObject(o, "first", in[l->first].offset);
	cJSON_AddNumberToObject(o, "last", in[l->last].offset);
	cJSON_AddNumberToObject(o, "blocks", (double)l->nblocks);
	cJSON_AddNumberToObject(o, "instructions", (double)l->ninsns);
	cJSON_AddNumberToObject(o, "depth", l->depth);
	cJSON_AddBoolToObject(o, "natural", l->natural);
	cJSON_AddNumberToObject(o, "cycles", l->cycles);
	sb_list(sb, sizeof sb, l->sb_set, false);
	cJSON_AddStringToObject(o, "sb_free", sb);
	cJSON_AddStringToObject(o, "free_registers", dead);
	if (l->trips >= 0)
		cJSON_AddNumberToObject(o, "trips", (double)l->trips);
	else
		cJSON_AddNullToObject(o, "trips");
	cJSON_AddStringToObject(o, "trip", l->trip);
	cJSON_AddNumberToObject(o, "insert_slot", insert_slot(l, in));
	for (size_t i = 0; i < l->nloads; i++)
		cJSON_AddItemToArray(ls, load_json(in, &l->loads[i]));
	cJSON_AddItemToObject(o, "loads", ls);
	return o;
}

static void loop_text(const st_sass_insn *in, const lp_loop *l, size_t i, const char *dead)
{
	char sb[64], sf[64];
	sb_list(sb, sizeof sb, l->sb_set, true);
	sb_list(sf, sizeof sf, l->sb_set, false);
	printf("  loop %zu%s: header %04x, body %04x..%04x, %zu block%s, %zu instructions, depth %d, %d cycles of stalls; "
	       "SB set: %s, free: %s; insert at slot %u\n",
	       i + 1, l->natural ? "" : " (not natural)", in[l->head].offset, in[l->first].offset, in[l->last].offset, l->nblocks, l->nblocks == 1 ? "" : "s",
	       l->ninsns, l->depth, l->cycles, sb, sf, insert_slot(l, in));
	if (l->trips >= 0)
		printf("    trips %ld: %s\n", l->trips, l->trip);
	else
		printf("    trips %s\n", l->trip[0] ? l->trip : "unknown (no --launch)");
	printf("    registers free in the loop (untouched there, dead at its exits): %s\n", dead);
	printf("    loads: %zu\n", l->nloads);
	for (size_t j = 0; j < l->nloads; j++)
		load_text(in, &l->loads[j]);
}

/* "R12 R40..R47 (9)": the registers free in loop l (lp_loop_free), into buf. */
static const char *loop_free(const st_sass_kernel *sk, const lp_loop *l, unsigned count, char *buf, size_t n)
{
	uint8_t fr[256];
	size_t c = lp_loop_free(sk, l, count > 256 ? 256 : count, fr);
	for (unsigned x = 0; x < 256; x++)
		fr[x] = !fr[x]; /* free_list lists the untouched (0) ones */
	free_list(buf, n - 8, fr, count > 256 ? 256 : count, 'R');
	snprintf(buf + strlen(buf), 8, " (%zu)", c);
	return buf;
}

/* The largest block's second slot: where a kernel without loops spends its issue slots. */
static uint32_t hot_slot(const st_sass_kernel *sk)
{
	uint32_t best = 0, bc = 0;
	for (size_t b = 0; b < st_sass_block_count(sk); b++) {
		uint32_t f, c;
		int32_t su[2];
		st_sass_block(sk, b, &f, &c, su);
		if (c > bc)
			best = f, bc = c;
	}
	return bc > 1 ? best + 1 : best;
}

static st_status study(const st_cubin *c, size_t k, const st_sass_kernel *sk, const lp_params *p, unsigned threads,
		       cJSON *out, st_error *err)
{
	lp_loop *l;
	size_t n;
	st_status rc = lp_analyse(sk, &l, &n, err);
	if (rc)
		return rc;
	const st_sass_insn *in = st_sass_insns(sk);
	res r;
	char fr[512], fp[64], fl[512];
	resources(c, k, sk, threads, &r);
	free_list(fr, sizeof fr, r.r, r.regs, 'R');
	free_list(fp, sizeof fp, r.p, 7, 'P');
	for (size_t i = 0; i < n; i++)
		if (p)
			lp_trip(sk, &l[i], p);
	const st_kernel_info *ki = st_cubin_kernel(c, k);
	if (out) {
		cJSON *o = cJSON_CreateObject(), *ls = cJSON_CreateArray();
		cJSON_AddStringToObject(o, "kernel", ki->name);
		cJSON_AddNumberToObject(o, "slots", (double)ki->insn_count);
		cJSON_AddNumberToObject(o, "insertable", (double)st_cubin_insertable(c, k));
		cJSON_AddNumberToObject(o, "registers", r.regs);
		cJSON_AddNumberToObject(o, "registers_touched", r.used);
		cJSON_AddStringToObject(o, "free_registers", fr);
		cJSON_AddStringToObject(o, "free_predicates", fp);
		if (threads)
			cJSON_AddNumberToObject(o, "registers_same_occupancy", r.keep);
		cJSON_AddNumberToObject(o, "hot_slot", hot_slot(sk));
		for (size_t i = 0; i < n; i++)
			cJSON_AddItemToArray(ls, loop_json(in, &l[i], loop_free(sk, &l[i], r.regs, fl, sizeof fl)));
		cJSON_AddItemToObject(o, "loops", ls);
		cJSON_AddItemToArray(out, o);
	} else {
		printf("%s: %zu slots, %zu padding slots insertable; %u registers (%u touched), free below the count: %s; "
		       "free predicates: %s",
		       ki->name, ki->insn_count, st_cubin_insertable(c, k), r.regs, r.used, fr, fp);
		if (threads)
			printf("; up to %u registers keep the occupancy by registers at %u threads per block", r.keep,
			       threads);
		printf("\n  loops: %zu\n", n);
		for (size_t i = 0; i < n; i++)
			loop_text(in, &l[i], i, loop_free(sk, &l[i], r.regs, fl, sizeof fl));
	}
	lp_free(l, n);
	return ST_OK;
}

int st_cmd_loops(int argc, char **argv)
{
	const char *path = NULL, *listing = NULL, *kernel = NULL, *launch = NULL;
	int json = 0;
	const st_cli_opt opts[] = {
		ST_OPT_STR("--listing", &listing), ST_OPT_STR("--kernel", &kernel), ST_OPT_STR("--launch", &launch),
		ST_OPT_FLAG("--json", &json), ST_OPT_END,
	};
	const st_cli_need need[] = {{&path, "CUBIN"}, {0}};
	int code = st_cli_parse(argc, argv, &(st_cli_args){.usage = usage, .opts = opts, .file = &path, .need = need});
	if (code >= 0)
		return code;
	st_error err = {0};
	st_cubin *c = NULL;
	lp_params p = {0};
	unsigned threads = 0;
	if ((launch && read_launch(launch, &p, &threads, &err)) || st_cubin_open_file(path, &c, &err))
		return st_cli_fail(argv[0], &err);
	if (st_cli_no_kernel(argv[0], c, path, kernel)) {
		st_cubin_free(c);
		return ST_EXIT_FAIL;
	}
	cJSON *arr = json ? cJSON_CreateArray() : NULL;
	int rc = ST_EXIT_OK;
	st_sass_opts o = {.listing = listing};
	for (size_t k = 0; k < st_cubin_kernel_count(c) && rc == ST_EXIT_OK; k++) {
		const char *name = st_cubin_kernel(c, k)->name;
		if (kernel && strcmp(kernel, name))
			continue;
		st_sass_kernel *sk = NULL;
		if (st_sass_decode(c, name, &o, &sk, &err) || study(c, k, sk, launch ? &p : NULL, threads, arr, &err))
			rc = st_cli_fail(argv[0], &err);
		st_sass_free(sk);
	}
	if (arr && rc == ST_EXIT_OK) {
		cJSON *top = cJSON_CreateObject();
		cJSON_AddItemToObject(top, "kernels", arr);
		rc = st_cli_print_json(top, 1) ? ST_EXIT_FAIL : ST_EXIT_OK;
		cJSON_Delete(top);
	} else {
		cJSON_Delete(arr);
	}
	st_cubin_free(c);
	return rc;
}

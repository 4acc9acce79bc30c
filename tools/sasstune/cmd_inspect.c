/* sasstune inspect CUBIN [--json]: arch, kernels, instruction counts, .nv.info records,
 * relocations, constant banks, symbols. */
#include "cli.h"
#include "sasstune/cubin.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out, "usage: sasstune inspect CUBIN [--json]\n\n"
		     "Show what a cubin holds: the SM and ELF flavour, every kernel (.text.<name>) with its\n"
		     "instruction count, whether sasstune can rewrite it and how many never-run padding\n"
		     "NOP slots (after the last EXIT / self-branch) `sasstune insert` can use, the .nv.info\n"
		     "records (named where known, with their payload words), relocations, constant banks and\n"
		     "symbols.\n\n"
		     "options:\n"
		     "  --json    print one JSON object instead of text\n"
		     "  -h, --help\n\n"
		     "exit status: 0 ok, 1 the cubin cannot be read, 2 usage error\n");
}

static const char *fmt_name(unsigned f)
{
	static const char *const n[] = {"?", "NVAL", "BVAL", "HVAL", "SVAL"};
	return f < 5 ? n[f] : "?";
}

static const char *flavour(unsigned osabi)
{
	return osabi == 0x41 ? "CUDA 13 ELF" : "CUDA <= 12 ELF";
}

static const char *section_of(const st_cubin *c, size_t kernel)
{
	const st_kernel_info *k = st_cubin_kernel(c, kernel);
	return k ? k->name : NULL;
}

/* Symbol name helper: nv.info global records start with a symbol index. */
static const char *sym_name(const st_cubin *c, uint32_t idx)
{
	const st_symbol *s = st_cubin_symbol(c, idx);
	return s && s->name[0] ? s->name : NULL;
}

/* The little-endian word at p (.nv.info payloads). */
static unsigned le32(const uint8_t *p)
{
	return (unsigned)p[0] | (unsigned)p[1] << 8 | (unsigned)p[2] << 16 | (unsigned)p[3] << 24;
}

/* key: s, or null without one. */
static void add_string_or_null(cJSON *o, const char *key, const char *s)
{
	if (s)
		cJSON_AddStringToObject(o, key, s);
	else
		cJSON_AddNullToObject(o, key);
}

static void print_kernels(const st_cubin *c)
{
	size_t nk = st_cubin_kernel_count(c);
	printf("kernels: %zu\n", nk);
	for (size_t k = 0; k < nk; k++) {
		const st_kernel_info *ki = st_cubin_kernel(c, k);
		st_error err = {0};
		st_status rc = st_cubin_check_rewritable(c, k, &err);
		printf("  %s: %zu instructions, %zu bytes at file offset 0x%zx, section %u%s, %zu code references\n",
		       ki->name, ki->insn_count, ki->size, ki->file_offset, ki->section, ki->entry ? ", entry" : "",
		       st_cubin_ref_count(c, k));
		if (rc)
			printf("    not rewritable: %s\n", err.msg);
		else
			printf("    rewritable\n");
		printf("    %zu padding slots insertable\n", st_cubin_insertable(c, k));
	}
}

/* An SVAL record's payload: its first 16 words, and for a global record the symbol its first
 * word names. */
static void print_sval_payload(const st_cubin *c, const st_nvinfo *r)
{
	printf(" %zu bytes:", r->size);
	size_t words = r->size / 4;
	for (size_t w = 0; w < words && w < 16; w++)
		printf(" 0x%x", le32(r->payload + 4 * w));
	if (words > 16)
		printf(" ... (%zu words)", words);
	if (r->kernel == ST_CUBIN_NONE && words >= 1) {
		const char *sn = sym_name(c, le32(r->payload));
		if (sn)
			printf("  [%s]", sn);
	}
}

static void print_records(const st_cubin *c)
{
	size_t ni = st_cubin_nvinfo_count(c);
	printf("records: %zu\n", ni);
	for (size_t i = 0; i < ni; i++) {
		const st_nvinfo *r = st_cubin_nvinfo(c, i);
		const char *kn = section_of(c, r->kernel);
		printf("  %s%s @0x%zx %s", kn ? ".nv.info." : ".nv.info", kn ? kn : "", r->offset,
		       r->name ? r->name : "(unknown)");
		printf(" (0x%02x) %s", r->attr, fmt_name(r->format));
		if (r->format == 2 || r->format == 3)
			printf(" 0x%x", r->value);
		if (r->format == 4)
			print_sval_payload(c, r);
		printf("\n");
	}
}

static void print_relocs(const st_cubin *c)
{
	size_t nr = st_cubin_reloc_count(c);
	printf("relocations: %zu\n", nr);
	for (size_t i = 0; i < nr; i++) {
		const st_reloc *r = st_cubin_reloc(c, i);
		char tn[32];
		if (!r->type_name)
			snprintf(tn, sizeof tn, "R_CUDA_%u", r->type);
		printf("  %s +0x%llx %s %s%+lld\n", r->target_name, (unsigned long long)r->offset,
		       r->type_name ? r->type_name : tn, r->symbol_name[0] ? r->symbol_name : "(no symbol)",
		       (long long)r->addend);
	}
}

/* Constant banks, then the symbols (index 0, the null symbol, left out). */
static void print_consts_and_symbols(const st_cubin *c)
{
	size_t nc = st_cubin_const_count(c);
	printf("constant banks: %zu\n", nc);
	for (size_t i = 0; i < nc; i++) {
		const st_const_bank *b = st_cubin_const(c, i);
		printf("  %s: bank %u, %zu bytes%s\n", b->section_name, b->bank, b->size, b->data ? "" : " (no data)");
	}
	size_t ns = st_cubin_symbol_count(c);
	printf("symbols: %zu\n", ns ? ns - 1 : 0);
	for (size_t i = 1; i < ns; i++) {
		const st_symbol *s = st_cubin_symbol(c, i);
		printf("  [%zu] %s value 0x%llx size 0x%llx type %u bind %u other 0x%x section %u\n", i,
		       s->name[0] ? s->name : "(no name)", (unsigned long long)s->value, (unsigned long long)s->size,
		       s->type, s->bind, s->other, s->shndx);
	}
}

static void print_text(const st_cubin *c)
{
	printf("cubin: %s\n", st_cubin_name(c));
	printf("arch: sm_%u (%s, EI_OSABI 0x%x, e_flags 0x%x)\n", st_cubin_sm(c), flavour(st_cubin_osabi(c)),
	       st_cubin_osabi(c), st_cubin_eflags(c));
	print_kernels(c);
	print_records(c);
	print_relocs(c);
	print_consts_and_symbols(c);
}

static cJSON *kernel_json(const st_cubin *c, size_t k)
{
	const st_kernel_info *ki = st_cubin_kernel(c, k);
	cJSON *j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "name", ki->name);
	cJSON_AddNumberToObject(j, "section", ki->section);
	cJSON_AddNumberToObject(j, "file_offset", (double)ki->file_offset);
	cJSON_AddNumberToObject(j, "size", (double)ki->size);
	cJSON_AddNumberToObject(j, "instructions", (double)ki->insn_count);
	cJSON_AddBoolToObject(j, "entry", ki->entry);
	st_error err = {0};
	st_status rc = st_cubin_check_rewritable(c, k, &err);
	cJSON_AddBoolToObject(j, "rewritable", rc == ST_OK);
	if (rc)
		cJSON_AddStringToObject(j, "not_rewritable_because", err.msg);
	cJSON_AddNumberToObject(j, "insertable", (double)st_cubin_insertable(c, k));
	cJSON *refs = cJSON_AddArrayToObject(j, "code_refs");
	static const char *const kinds[] = {"branch",	  "self",   "return", "attr",
					    "jump_table", "reloc", "symbol", "literal"};
	for (size_t i = 0; i < st_cubin_ref_count(c, k); i++) {
		const st_code_ref *r = st_cubin_ref(c, k, i);
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "kind", kinds[r->kind]);
		cJSON_AddStringToObject(x, "what", r->what);
		cJSON_AddNumberToObject(x, "slot", (double)r->slot);
		cJSON_AddNumberToObject(x, "target", r->target);
		cJSON_AddItemToArray(refs, x);
	}
	return j;
}

static cJSON *record_json(const st_cubin *c, const st_nvinfo *r)
{
	cJSON *j = cJSON_CreateObject();
	add_string_or_null(j, "kernel", section_of(c, r->kernel));
	cJSON_AddNumberToObject(j, "section", r->section);
	cJSON_AddNumberToObject(j, "offset", (double)r->offset);
	cJSON_AddStringToObject(j, "format", fmt_name(r->format));
	cJSON_AddNumberToObject(j, "attr", r->attr);
	add_string_or_null(j, "name", r->name);
	if (r->format == 2 || r->format == 3)
		cJSON_AddNumberToObject(j, "value", r->value);
	if (r->format == 4) {
		cJSON *p = cJSON_AddArrayToObject(j, "payload");
		for (size_t w = 0; w + 4 <= r->size; w += 4)
			cJSON_AddItemToArray(p, cJSON_CreateNumber(le32(r->payload + w)));
		cJSON_AddNumberToObject(j, "size", (double)r->size);
	}
	return j;
}

static cJSON *reloc_json(const st_reloc *r)
{
	cJSON *j = cJSON_CreateObject();
	cJSON_AddNumberToObject(j, "section", r->section);
	cJSON_AddNumberToObject(j, "target", r->target);
	cJSON_AddStringToObject(j, "target_name", r->target_name);
	cJSON_AddNumberToObject(j, "offset", (double)r->offset);
	cJSON_AddNumberToObject(j, "type", r->type);
	if (r->type_name)
		cJSON_AddStringToObject(j, "type_name", r->type_name);
	cJSON_AddStringToObject(j, "symbol", r->symbol_name);
	cJSON_AddNumberToObject(j, "addend", (double)r->addend);
	return j;
}

/* The constant banks and the symbols (all but the null symbol 0) into o. */
static void add_banks_and_symbols(cJSON *o, const st_cubin *c)
{
	cJSON *cb = cJSON_AddArrayToObject(o, "constant_banks");
	for (size_t i = 0; i < st_cubin_const_count(c); i++) {
		const st_const_bank *b = st_cubin_const(c, i);
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "section", b->section_name);
		cJSON_AddNumberToObject(j, "bank", b->bank);
		add_string_or_null(j, "kernel", section_of(c, b->kernel));
		cJSON_AddNumberToObject(j, "size", (double)b->size);
		cJSON_AddItemToArray(cb, j);
	}
	cJSON *sy = cJSON_AddArrayToObject(o, "symbols");
	for (size_t i = 1; i < st_cubin_symbol_count(c); i++) {
		const st_symbol *s = st_cubin_symbol(c, i);
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "name", s->name);
		cJSON_AddNumberToObject(j, "value", (double)s->value);
		cJSON_AddNumberToObject(j, "size", (double)s->size);
		cJSON_AddNumberToObject(j, "type", s->type);
		cJSON_AddNumberToObject(j, "bind", s->bind);
		cJSON_AddNumberToObject(j, "other", s->other);
		cJSON_AddNumberToObject(j, "shndx", s->shndx);
		cJSON_AddItemToArray(sy, j);
	}
}

static cJSON *json_of(const st_cubin *c)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "file", st_cubin_name(c));
	cJSON_AddNumberToObject(o, "sm", st_cubin_sm(c));
	cJSON_AddNumberToObject(o, "osabi", st_cubin_osabi(c));
	cJSON_AddNumberToObject(o, "e_flags", st_cubin_eflags(c));
	size_t size;
	st_cubin_data(c, &size);
	cJSON_AddNumberToObject(o, "size", (double)size);
	cJSON *ks = cJSON_AddArrayToObject(o, "kernels");
	for (size_t k = 0; k < st_cubin_kernel_count(c); k++)
		cJSON_AddItemToArray(ks, kernel_json(c, k));
	cJSON *rs = cJSON_AddArrayToObject(o, "records");
	for (size_t i = 0; i < st_cubin_nvinfo_count(c); i++)
		cJSON_AddItemToArray(rs, record_json(c, st_cubin_nvinfo(c, i)));
	cJSON *rl = cJSON_AddArrayToObject(o, "relocations");
	for (size_t i = 0; i < st_cubin_reloc_count(c); i++)
		cJSON_AddItemToArray(rl, reloc_json(st_cubin_reloc(c, i)));
	add_banks_and_symbols(o, c);
	return o;
}

int st_cmd_inspect(int argc, char **argv)
{
	const char *path = NULL;
	int json = 0;
	const st_cli_opt opts[] = {ST_OPT_FLAG("--json", &json), ST_OPT_END};
	int code = st_cli_parse(argc, argv, &(st_cli_args){.usage = usage, .opts = opts, .file = &path});
	if (code >= 0)
		return code;
	if (!path) {
		usage(stderr);
		return ST_EXIT_USAGE;
	}
	st_cubin *c = NULL;
	st_error err = {0};
	if (st_cubin_open_file(path, &c, &err))
		return st_cli_fail(argv[0], &err);
	if (json) {
		cJSON *o = json_of(c);
		int bad = st_cli_print_json(o, 1);
		cJSON_Delete(o);
		if (bad) {
			st_cubin_free(c);
			st_cli_error(argv[0], "out of memory");
			return ST_EXIT_FAIL;
		}
	} else {
		print_text(c);
	}
	st_cubin_free(c);
	return ST_EXIT_OK;
}

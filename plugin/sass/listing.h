/* Internal: the text of `nvdisasm -hex -c [-plr]`, split into sections and instructions. */
#ifndef ST_SASS_LISTING_H
#define ST_SASS_LISTING_H

#include "sasstune/error.h"

#include <stddef.h>
#include <stdint.h>

struct st_lst_insn {
	uint32_t offset;
	uint32_t line;     /* 1-based line of the instruction in the listing */
	uint64_t lo, hi;   /* the two words nvdisasm printed */
	char *text;        /* "@!P0 LDG.E.128 R16, desc[UR4][R20.64]" (no ';') */
	char *label;       /* label printed just before this instruction, or NULL */
	char *plr;         /* `-plr` columns of the encoding line ("| ... |"), or NULL */
};
struct st_lst_section {
	char *name; /* kernel name: the part after ".text." */
	struct st_lst_insn *insns;
	size_t n, cap;
	char *plr_header; /* the `-plr` column header line ("|  # 0 1 2 ...|"), or NULL */
	char *plr_title;  /* the line naming the column groups ("| GPR | PRED |"), or NULL */
	char *end_label;  /* label after the last instruction (function end), or NULL */
};
typedef struct st_listing {
	struct st_lst_section *sections;
	size_t n, cap;
} st_listing;

/* Parse a listing.  Lines that are not code, labels or section headers are skipped;
 * a malformed instruction line is an error naming its line. */
st_status st_listing_parse(const char *text, size_t len, st_listing **out, st_error *err);
const struct st_lst_section *st_listing_find(const st_listing *l, const char *kernel);
void st_listing_free(st_listing *l);

#endif

/* Fuzz target: nvdisasm listings (`-hex -c`, with or without `-plr` columns) through the
 * listing parser, the operand analysis of every instruction, and the -plr comparison. */
#include "sass/listing.h"
#include "sasstune/sass.h"
#include "util/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	st_listing *l = NULL;
	st_error err = {0};
	if (st_listing_parse((const char *)data, size, &l, &err) != ST_OK)
		return 0;
	for (size_t s = 0; s < l->n && s < 4; s++) {
		const struct st_lst_section *sec = &l->sections[s];
		/* code bytes equal to what the listing claims, at offsets 0, 16, ... */
		size_t n = sec->n < 4096 ? sec->n : 4096;
		uint8_t *code = calloc(n ? n : 1, 16);
		if (!code)
			break;
		for (size_t i = 0; i < n; i++) {
			st_put_le64(code + 16 * i, sec->insns[i].lo);
			st_put_le64(code + 16 * i + 8, sec->insns[i].hi);
		}
		static const int sms[] = {80, 86, 90};
		st_sass_kernel *k = NULL;
		if (st_sass_decode_code(sms[s % 3], sec->name, code, 16 * n, (const char *)data, size, &k, &err) == ST_OK) {
			size_t agree = 0, compared = 0;
			st_sass_check_plr(k, (const char *)data, size, &agree, &compared, NULL, NULL, &err);
			const st_sass_insn *in = st_sass_insns(k);
			for (size_t i = 0; i + 1 < st_sass_count(k); i++)
				st_sass_latency(st_sass_sm(k), &in[i], -1, &in[i + 1], -1, ST_RES_GPR, ST_DEP_TRUE);
			st_sass_free(k);
		}
		free(code);
	}
	st_listing_free(l);
	return 0;
}

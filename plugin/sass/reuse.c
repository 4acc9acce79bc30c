/* Which operand slots nvdisasm's `.reuse` marks name: the ground truth for the reuse bits of
 * one instruction as ptxas wrote it.  The slots of `uses` are positional (a, b, c by the
 * printed order), which is how most opclasses map their reuse bits but not all of them
 * (HADD2.F32 Rd, -RZ, Rb.reuse sets bit c; IABS Rd, Ra.reuse sets bit b), so the scheduler trusts a mapping only where
 * ptxas's own output shows it. */
#include "sasstune/sass.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

int st_sass_reuse_marks(const st_sass_insn *x)
{
	int mask = 0;
	const char *s = x->operands ? x->operands : "";
	for (const char *p = strstr(s, ".reuse"); p; p = strstr(p + 6, ".reuse")) {
		/* the register is the token that ends right before the mark: R<digits> */
		const char *e = p;
		if (e > s && e[-1] == '|') /* |R22|.reuse */
			e--;
		const char *b = e;
		while (b > s && isdigit((unsigned char)b[-1]))
			b--;
		if (b == e || b == s || b[-1] != 'R' || (b - 1 > s && (isalnum((unsigned char)b[-2]) || b[-2] == '_')))
			return -1; /* not a plain R register (UR, RZ, a modifier before the mark, ...) */
		unsigned long idx = strtoul(b, NULL, 10);
		int slots = 0;
		for (unsigned u = 0; u < x->nuses; u++) {
			const st_sass_reg *r = &x->uses[u];
			if (r->file == ST_RF_R && r->slot >= ST_SLOT_A && r->slot <= ST_SLOT_C && r->index <= idx &&
			    idx < (unsigned long)r->index + r->count)
				slots |= 1 << (r->slot - ST_SLOT_A);
		}
		if (slots != 1 && slots != 2 && slots != 4)
			return -1; /* in no source slot, or in several: ambiguous */
		if (mask & slots)
			return -1;
		mask |= slots;
	}
	return mask;
}

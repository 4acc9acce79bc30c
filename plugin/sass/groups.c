/* Register groups that nvdisasm prints as one register (docs/sass.md "Hidden register groups").
 *
 * The sizes come from `nvdisasm -plr` (NVIDIA's own operand sizes) on instructions whose register
 * fields were moved apart (`scripts/plr-probe.py`): on ptxas output a hidden register is often
 * also another operand, so comparing with -plr on the original alone cannot see it.  A form no
 * fixture shows is over-approximated (more registers read is always the safe side for the
 * swap rules; the rename family refuses any group). */
#include "sass_internal.h"

#include <string.h>

static int mod(const char *opc, size_t n, const char *m)
{
	size_t k = strlen(m);
	for (size_t i = 0; i + k < n; i++)
		if (opc[i] == '.' && !memcmp(opc + i + 1, m, k) && (i + 1 + k == n || opc[i + 1 + k] == '.'))
			return 1;
	return 0;
}

static int mnem(const char *opc, size_t n, const char *m)
{
	size_t k = strlen(m);
	return n >= k && !memcmp(opc, m, k) && (n == k || opc[k] == '.');
}

/* Bulk copies.  TMA (bench/mm_tma_device, sm_90): UTMALDG.2D [URa..URa+3], [URb..URb+1]; UTMASTG.2D
 * [URa..URa+2], [URb..URb+1]; UTMACCTL.IV [URa..URa+1] (URb: the 64-bit tensor map address).
 * Other dimensions and the other UTMA* forms are in no fixture: URa counts 8. */
unsigned st_sass_tma_group(const char *opc, size_t n, unsigned nth)
{
	if (mnem(opc, n, "UBLKCP")) /* UBLKCP.S.G [URa], [URb], URc (cuda/hopper): two pairs */
		return nth < 2 ? 2 : 0;
	if (n < 4 || memcmp(opc, "UTMA", 4))
		return 0;
	if (mnem(opc, n, "UTMACCTL"))
		return nth == 0 ? 2 : 0;
	if (nth == 1)
		return 2;
	if (nth != 0)
		return 0;
	if (mod(opc, n, "2D") && mnem(opc, n, "UTMALDG"))
		return 4;
	if (mod(opc, n, "2D") && mnem(opc, n, "UTMASTG"))
		return 3;
	return 8;
}

/* STSM.16.{M88,MT88}.{1,2,4} [Ra], Rb: Rb..Rb+count-1, one register per 8x8 matrix (as LDSM
 * writes); 0 when not an STSM. */
unsigned st_sass_stsm_regs(const char *opc, size_t n)
{
	if (!mnem(opc, n, "STSM"))
		return 0;
	return mod(opc, n, "4") ? 4 : mod(opc, n, "2") ? 2 : 1;
}

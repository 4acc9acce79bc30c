/* Internal: nvdisasm's latency tables as generated data (latency_tables.c, made by
 * gen_latency.py) and the matcher over them (latency.c). */
#ifndef ST_SASS_LATENCY_H
#define ST_SASS_LATENCY_H

#include <stddef.h>
#include <stdint.h>

/* Conditions on a term (gen_latency.py CONDS). */
enum {
	ST_LCOND_NONE = 0,
	ST_LCOND_MODE_ARV = 1,      /* WARPGROUP.ARRIVE */
	ST_LCOND_MODE_ARV_WAIT = 2, /* WARPGROUP.ARRIVE or .WAIT */
	ST_LCOND_MODE_DEPBAR = 3,   /* WARPGROUP.DEPBAR */
	ST_LCOND_GSB_GSB0 = 4,      /* *GMMA with a gsb0 operand */
	ST_LCOND_VTG_PRED = 5,      /* graphics only: never true in compute code */
};

struct st_lat_term {
	uint16_t set;  /* index of an operation set of the model */
	uint8_t cond;  /* ST_LCOND_* */
	uint8_t slots; /* mask of ST_SLOT_* bits (1 << slot) */
};
struct st_lat_line {
	uint16_t first, count; /* terms */
};
struct st_lat_table {
	uint8_t res, kind; /* st_sass_res, st_sass_dep */
	int8_t deflt;      /* value for pairs the table does not list; -1 none */
	uint8_t nrows, ncols;
	uint16_t row0, col0; /* first line of the rows / columns */
	uint16_t val0;       /* first value, row-major, -1 = none */
};
struct st_lat_model {
	int sm;
	unsigned setwords; /* uint64_t words per operation set */
	const uint64_t *sets;
	const struct st_lat_term *terms;
	const struct st_lat_line *lines;
	const int8_t *vals;
	const struct st_lat_table *tables;
	unsigned ntables;
	uint16_t set_mio_cbu, set_mio, set_bru, set_udp, set_math;
};

extern const unsigned st_lat_nops;
extern const char *const st_lat_op_names[];          /* sorted */
extern const struct st_lat_model *const st_lat_models[]; /* NULL-terminated */

/* Model for an SM (80, 86, 90; 87/89 use the nearest older one), or NULL. */
const struct st_lat_model *st_lat_model_for(int sm);

/* Opcode id in st_lat_op_names of a mnemonic with its modifiers ("HFMA2.MMA.F32"
 * -> "HFMA2.MMA", "IADD3.X" -> "IADD3"), or -1 when the tables do not know it. */
int st_lat_op_lookup(const char *opcode);

/* Whether opcode id op is in operation set `set` of model m. */
static inline int st_lat_in_set(const struct st_lat_model *m, unsigned set, int op)
{
	if (op < 0)
		return 0;
	return (int)((m->sets[set * m->setwords + (unsigned)op / 64] >> ((unsigned)op % 64)) & 1);
}

#endif

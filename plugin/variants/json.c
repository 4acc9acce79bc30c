/* The variant table as JSON, schema "sasstune-variants-1" (docs/variants.md). */
#include "variants_internal.h"

#include <cJSON.h>

static void add_verified(cJSON *j, int verified)
{
	if (verified < 0)
		cJSON_AddNullToObject(j, "verified");
	else
		cJSON_AddBoolToObject(j, "verified", verified == 1);
}

static cJSON *row(const st_variant *v, size_t i)
{
	cJSON *j = cJSON_CreateObject();
	if (!j)
		return NULL;
	cJSON_AddNumberToObject(j, "index", (double)i);
	cJSON_AddStringToObject(j, "label", v->label);
	cJSON_AddStringToObject(j, "ptxas", v->ptxas);
	cJSON_AddStringToObject(j, "ptxas_version", v->ptxas_version);
	cJSON_AddStringToObject(j, "options", v->options);
	cJSON_AddBoolToObject(j, "stock", v->stock);
	cJSON_AddBoolToObject(j, "compiled", v->compiled);
	cJSON_AddNumberToObject(j, "compile_s", v->compile_s);
	cJSON_AddNumberToObject(j, "code_bytes", (double)v->code_bytes);
	cJSON_AddNumberToObject(j, "regs", v->regs);
	if (v->duplicate_of >= 0)
		cJSON_AddNumberToObject(j, "duplicate_of", v->duplicate_of);
	else
		cJSON_AddNullToObject(j, "duplicate_of");
	add_verified(j, v->verified);
	if (v->speedup > 0) {
		cJSON_AddNumberToObject(j, "speedup", v->speedup);
		cJSON_AddNumberToObject(j, "speedup_lo", v->speedup_lo);
		cJSON_AddNumberToObject(j, "speedup_hi", v->speedup_hi);
		cJSON_AddNumberToObject(j, "pairs", v->timing.n);
	} else {
		cJSON_AddNullToObject(j, "speedup");
	}
	cJSON_AddBoolToObject(j, "confirmed", v->confirmed);
	cJSON_AddStringToObject(j, "reason", v->reason);
	return j;
}

char *st_variants_json(const st_variants *v)
{
	cJSON *j = cJSON_CreateObject(), *rows = cJSON_CreateArray();
	if (!j || !rows || !v) {
		cJSON_Delete(j);
		cJSON_Delete(rows);
		return NULL;
	}
	cJSON_AddStringToObject(j, "schema", "sasstune-variants-1");
	cJSON_AddStringToObject(j, "kernel", v->kernel);
	size_t best = st_variants_best(v);
	cJSON_AddNumberToObject(j, "best", (double)best);
	cJSON_AddStringToObject(j, "best_label", v->n ? v->items[best].pub.label : "");
	cJSON_AddBoolToObject(j, "measured", v->measured);
	cJSON_AddStringToObject(j, "note", v->gpu);
	for (size_t i = 0; i < v->n; i++)
		cJSON_AddItemToArray(rows, row(&v->items[i].pub, i));
	cJSON_AddItemToObject(j, "variants", rows);
	char *s = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	return s;
}

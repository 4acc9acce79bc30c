/* The evaluation log of sasstune tune (eval_log.h).  Each line:
 *   {"cubin", "kernel", "method", "seed", "kind": quick|start|race|final, "status", "ratio", "lo",
 *    "hi", "pairs", "moves", "model_ratio", "schema", "f": [ST_SEARCH_NFEAT numbers] | null}
 * "f" is the sum of the feature rows of the moves from the original to the evaluated state
 * (schema sasstune-features-1, docs/search.md); ratios are original / candidate. */
#include "eval_log.h"

#include <stdlib.h>

static void put_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void st_evlog_note(const st_search_eval_note *n, void *data)
{
	static const char *const kinds[] = {"quick", "start", "race", "final"};
	st_evlog *l = data;
	FILE *f = l->f;
	if (!f || l->failed)
		return;
	fputs("{\"cubin\":", f);
	put_str(f, l->cubin);
	fputs(",\"kernel\":", f);
	put_str(f, l->kernel);
	fputs(",\"method\":", f);
	put_str(f, l->method);
	fprintf(f, ",\"seed\":%llu,\"kind\":\"%s\",\"status\":\"%s\"", l->seed, n->kind < 4 ? kinds[n->kind] : "?",
		st_status_str(n->ev.status));
	if (n->ev.status == ST_OK)
		fprintf(f, ",\"ratio\":%.6f,\"lo\":%.6f,\"hi\":%.6f", n->ev.ratio, n->ev.lo, n->ev.hi);
	fprintf(f, ",\"pairs\":%u,\"moves\":%zu,\"model_ratio\":%.6f,\"schema\":\"%s\",\"f\":", n->ev.pairs,
		n->n_moves, n->model_ratio, ST_SEARCH_SCHEMA);
	if (n->feat_sum) {
		fputc('[', f);
		for (size_t i = 0; i < ST_SEARCH_NFEAT; i++)
			fprintf(f, "%s%.5g", i ? "," : "", (double)n->feat_sum[i]);
		fputc(']', f);
	} else {
		fputs("null", f);
	}
	if (fputs("}\n", f) < 0)
		l->failed = 1;
	l->lines++;
}

/* sasstune cache list|show KEY|clear [--older-than D]: the schedule cache (docs/cache.md). */
#include "cli.h"
#include "cmd_cache.h"
#include "sasstune/cache.h"
#include "sasstune/sched.h" /* ST_LEGALITY_VERSION */

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void usage(FILE *out)
{
	fprintf(out,
		"usage: sasstune cache list [--json] [--dir DIR | --redis URL [--prefix P]]\n"
		"       sasstune cache show KEY [--json] [--dir DIR | --redis URL [--prefix P]]\n"
		"       sasstune cache clear [--older-than D] [--json] [--dir DIR | --redis URL [--prefix P]]\n\n"
		"The schedule cache: tuned results keyed by the original cubin's SHA-256, the kernel, the\n"
		"GPU name and compute capability, the driver and ptxas versions, the legality model's\n"
		"version and the move families.  Each entry holds the schedule, the confirmed speedup with\n"
		"its interval, the verification record, provenance and the tuned cubin; a negative entry\n"
		"says that tuning ran and nothing beat stock (best ratio seen, why).  Entries live in\n"
		"DIR/v1/<key>/.\n\n"
		"commands:\n"
		"  list            one line per entry: key, kernel, GPU, speedup (or \"nothing beat stock\"),\n"
		"                  date, method; entries made under other legality rules are marked stale\n"
		"                  (never served); corrupt or foreign ones are shown as invalid with the reason\n"
		"  show KEY        one entry in full; KEY is the key or a unique prefix (4+ hex digits)\n"
		"  clear           remove every entry, valid or not\n\n"
		"options:\n"
		"  --older-than D  clear only entries tuned more than D ago: 90s, 30m, 12h, 7d, 2w (an\n"
		"                  invalid entry is aged by its file's modification time)\n"
		"  --json          print one JSON object instead of text\n"
		"  --dir DIR       the cache folder (default $SASSTUNE_CACHE_DIR, else\n"
		"                  $XDG_CACHE_HOME/sasstune, else ~/.cache/sasstune)\n"
		"  --redis URL     the fleet tier instead of the folder: redis://host:port/db (docs/cache.md,\n"
		"                  \"Fleet\"); entries that would be refused are shown as invalid\n"
		"  --prefix P      the Redis key prefix (default $SASSTUNE_REDIS_PREFIX, else sasstune:)\n"
		"  -h, --help\n\n"
		"exit status: 0 ok, 1 no such entry, an invalid entry shown, or an i/o error, 2 usage error\n");
}


static int parse(int argc, char **argv, struct opts *o)
{
	memset(o, 0, sizeof *o);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return -1;
		}
		if (!strcmp(a, "--json")) {
			o->json = 1;
		} else if (!strcmp(a, "--dir") || !strcmp(a, "--older-than") || !strcmp(a, "--redis") ||
			   !strcmp(a, "--prefix")) {
			if (i + 1 >= argc) {
				st_cli_error("cache", "%s needs a value", a);
				return ST_EXIT_USAGE;
			}
			*(a[2] == 'd' ? &o->dir : a[2] == 'o' ? &o->older : a[2] == 'r' ? &o->redis : &o->prefix) = argv[++i];
		} else if (a[0] == '-' && a[1]) {
			st_cli_error("cache", "unknown option '%s' (see sasstune cache --help)", a);
			return ST_EXIT_USAGE;
		} else if (!o->sub) {
			o->sub = a;
		} else if (!o->key && !strcmp(o->sub, "show")) {
			o->key = a;
		} else {
			st_cli_error("cache", "unexpected argument '%s'", a);
			return ST_EXIT_USAGE;
		}
	}
	if (!o->sub) {
		usage(stderr);
		return ST_EXIT_USAGE;
	}
	int is_list = !strcmp(o->sub, "list"), is_show = !strcmp(o->sub, "show"), is_clear = !strcmp(o->sub, "clear");
	if (!is_list && !is_show && !is_clear) {
		st_cli_error("cache", "unknown subcommand '%s' (expected list, show or clear)", o->sub);
		return ST_EXIT_USAGE;
	}
	if (is_show && !o->key) {
		st_cli_error("cache", "show needs a KEY");
		return ST_EXIT_USAGE;
	}
	if (o->redis && o->dir) {
		st_cli_error("cache", "--redis and --dir are two different tiers: give one");
		return ST_EXIT_USAGE;
	}
	if (o->older && !is_clear) {
		st_cli_error("cache", "--older-than goes with clear");
		return ST_EXIT_USAGE;
	}
	return 0;
}

/* The optional parts (compile variants, docs/cache.md): only what the entry has. */
static void add_variant_json(cJSON *o, const st_cache_info *i)
{
	if (i->variants)
		cJSON_AddStringToObject(o, "variants", i->variants);
	if (i->ptxas_options)
		cJSON_AddStringToObject(o, "ptxas_options", i->ptxas_options);
	cJSON *v = i->variant_ptxas_version ? cJSON_CreateObject() : NULL;
	if (v && (!cJSON_AddStringToObject(v, "ptxas_version", i->variant_ptxas_version) ||
		  !cJSON_AddStringToObject(v, "options", i->variant_options ? i->variant_options : "") ||
		  !cJSON_AddItemToObject(o, "variant", v)))
		cJSON_Delete(v);
}

/* The entry as JSON; schedule and verification as objects.  A negative entry has best_ratio
 * and why instead of speedup and tuned_cubin; a stale one is never served. */
cJSON *st_cache_cli_entry_json(const st_cache_info *i)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "key", i->key);
	cJSON_AddTrueToObject(o, "valid");
	cJSON_AddStringToObject(o, "kernel", i->kernel);
	cJSON_AddStringToObject(o, "cubin_sha256", i->cubin_sha256);
	cJSON_AddStringToObject(o, "gpu_name", i->gpu_name);
	cJSON_AddStringToObject(o, "compute_capability", i->compute_capability);
	cJSON_AddStringToObject(o, "driver_version", i->driver_version);
	cJSON_AddStringToObject(o, "ptxas_version", i->ptxas_version);
	cJSON_AddStringToObject(o, "sasstune_version", i->sasstune_version);
	cJSON_AddStringToObject(o, "legality_version", i->legality_version);
	cJSON_AddStringToObject(o, "moves", i->moves);
	cJSON_AddBoolToObject(o, "stale", i->stale);
	cJSON_AddBoolToObject(o, "negative", i->negative);
	if (i->negative) {
		cJSON_AddNumberToObject(o, "best_ratio", i->best_ratio);
		cJSON_AddStringToObject(o, "why", i->why);
	} else {
		cJSON *sp = cJSON_AddObjectToObject(o, "speedup");
		cJSON_AddNumberToObject(sp, "estimate", i->speedup);
		cJSON_AddNumberToObject(sp, "low", i->speedup_low);
		cJSON_AddNumberToObject(sp, "high", i->speedup_high);
	}
	cJSON_AddStringToObject(o, "date", i->date);
	cJSON_AddStringToObject(o, "method", i->method);
	cJSON_AddStringToObject(o, "budget", i->budget);
	if (!i->negative) {
		cJSON *tc = cJSON_AddObjectToObject(o, "tuned_cubin");
		cJSON_AddStringToObject(tc, "sha256", i->tuned_sha256);
		cJSON_AddNumberToObject(tc, "size", (double)i->tuned_cubin_size);
	}
	add_variant_json(o, i);
	return o;
}

/* One text line of list. */
static void print_line(const char *key, const st_cache_info *i)
{
	char gpu[300], result[160];
	snprintf(gpu, sizeof gpu, "%s (%s)", i->gpu_name, i->compute_capability);
	if (i->negative)
		snprintf(result, sizeof result, "nothing beat stock (best %.3fx, budget %.40s)", i->best_ratio, i->budget);
	else
		snprintf(result, sizeof result, "%.3fx [%.3f, %.3f]", i->speedup, i->speedup_low, i->speedup_high);
	printf("%.12s  %-24s %-24s %s  %s  %s", key, i->kernel, gpu, result, i->date, i->method);
	if (i->stale)
		printf("  stale: legality %s, this sasstune's is %d", i->legality_version, ST_LEGALITY_VERSION);
	printf("\n");
}

int st_cache_cli_list_entry(int json, cJSON *entries, const char *key, const st_cache_info *i, const char *problem)
{
	if (!json) {
		if (i)
			print_line(key, i);
		else
			printf("%.12s  invalid: %s\n", key, problem);
		return 0;
	}
	cJSON *item = i ? st_cache_cli_entry_json(i) : cJSON_CreateObject();
	if (item && !i) {
		cJSON_AddStringToObject(item, "key", key);
		cJSON_AddFalseToObject(item, "valid");
		cJSON_AddStringToObject(item, "problem", problem);
	}
	if (!item || !cJSON_AddItemToArray(entries, item)) {
		cJSON_Delete(item);
		return 1;
	}
	return 0;
}

int st_cache_cli_print_json(cJSON *o)
{
	int bad = st_cli_print_json(o, 1);
	cJSON_Delete(o);
	if (bad) {
		st_cli_error("cache", "out of memory");
		return ST_EXIT_FAIL;
	}
	return ST_EXIT_OK;
}

/* ---- list ------------------------------------------------------------------------------ */

struct list_state {
	const struct opts *o;
	cJSON *entries;
	int valid, invalid, negative, stale;
	/* clear */
	int64_t now, older;
	char (*doomed)[65];
	size_t n_doomed;
	int oom;
};

static int on_list(const char *key, const st_cache_entry *e, const char *problem, int64_t mtime, void *payload)
{
	(void)mtime;
	struct list_state *s = payload;
	const st_cache_info *i = st_cache_entry_info(e);
	e ? s->valid++ : s->invalid++;
	s->negative += i && i->negative;
	s->stale += i && i->stale;
	return s->oom = st_cache_cli_list_entry(s->o->json, s->entries, key, i, problem);
}

static int cmd_list(st_cache *c, const struct opts *o)
{
	struct list_state s = {.o = o};
	st_error err = {0};
	cJSON *root = NULL;
	if (o->json) {
		root = cJSON_CreateObject();
		s.entries = cJSON_AddArrayToObject(root, "entries");
		cJSON_AddStringToObject(root, "dir", st_cache_dir(c));
		if (!s.entries) {
			cJSON_Delete(root);
			st_cli_error("cache", "out of memory");
			return ST_EXIT_FAIL;
		}
	}
	if (st_cache_list(c, on_list, &s, &err) != ST_OK || s.oom) {
		cJSON_Delete(root);
		return s.oom ? (st_cli_error("cache", "out of memory"), ST_EXIT_FAIL) : st_cli_fail("cache", &err);
	}
	if (o->json) {
		int code = st_cache_cli_print_json(root);
		return code != ST_EXIT_OK ? code : s.invalid ? ST_EXIT_FAIL : ST_EXIT_OK;
	}
	printf("%d %s (%d negative, %d stale, %d invalid) in %s\n", s.valid + s.invalid,
	       s.valid + s.invalid == 1 ? "entry" : "entries", s.negative, s.stale, s.invalid, st_cache_dir(c));
	return s.invalid ? ST_EXIT_FAIL : ST_EXIT_OK; /* as --help says: an invalid entry shown is 1 */
}

/* ---- show ------------------------------------------------------------------------------ */

int st_cache_cli_show_json(st_cache_entry *e)
{
	const st_cache_info *i = st_cache_entry_info(e);
	cJSON *j = st_cache_cli_entry_json(i);
	if (j && !i->negative) {
		const char *st = st_cache_entry_schedule(e), *vt = st_cache_entry_verification(e);
		cJSON *sched = st ? cJSON_Parse(st) : NULL, *verif = vt ? cJSON_Parse(vt) : NULL;
		if (sched && verif) {
			cJSON_AddItemToObject(j, "schedule", sched);
			cJSON_AddItemToObject(j, "verification", verif);
		} else {
			cJSON_Delete(sched);
			cJSON_Delete(verif);
			cJSON_Delete(j);
			j = NULL;
		}
	}
	return st_cache_cli_print_json(j);
}

int st_cache_cli_show_text(st_cache_entry *e)
{
	const st_cache_info *i = st_cache_entry_info(e);
	printf("key                 %s\n", i->key);
	printf("kernel              %s\n", i->kernel);
	printf("cubin sha256        %s\n", i->cubin_sha256);
	printf("gpu                 %s\n", i->gpu_name);
	printf("compute capability  %s\n", i->compute_capability);
	printf("driver              %s\n", i->driver_version);
	printf("ptxas               %s\n", i->ptxas_version);
	printf("sasstune            %s\n", i->sasstune_version);
	printf("legality            %s, moves %s\n", i->legality_version, i->moves);
	if (i->stale)
		printf("stale               made under legality rules %s, this sasstune's are %d: never served\n",
		       i->legality_version, ST_LEGALITY_VERSION);
	if (i->variants)
		printf("variants            %s, base options \"%s\"\n", i->variants, i->ptxas_options ? i->ptxas_options : "");
	if (i->variant_ptxas_version)
		printf("variant             ptxas %s, options \"%s\"\n", i->variant_ptxas_version,
		       i->variant_options ? i->variant_options : "");
	if (i->negative) {
		printf("result              nothing beat stock (best ratio %.4f)\n", i->best_ratio);
		printf("tuned               %s by %s, budget %s\n", i->date, i->method, i->budget);
		printf("why                 %s\n", i->why);
		return ST_EXIT_OK;
	}
	printf("speedup             %.3fx [%.3f, %.3f]\n", i->speedup, i->speedup_low, i->speedup_high);
	printf("tuned               %s by %s, budget %s\n", i->date, i->method, i->budget);
	printf("tuned cubin         %zu bytes, sha256 %s\n", i->tuned_cubin_size, i->tuned_sha256);
	const char *st = st_cache_entry_schedule(e), *vt = st_cache_entry_verification(e);
	if (!st || !vt) {
		st_cli_error("cache", "out of memory");
		return ST_EXIT_FAIL;
	}
	printf("verification        %s\n", vt);
	printf("schedule            %s\n", st);
	return ST_EXIT_OK;
}

static int cmd_show(st_cache *c, const struct opts *o)
{
	st_cache_entry *e;
	st_error err = {0};
	st_status rc = st_cache_read(&e, c, o->key, &err);
	if (rc == ST_EFORMAT) {
		st_cli_error("cache", "entry %s is invalid: %s", o->key, err.msg);
		return ST_EXIT_FAIL;
	}
	if (rc != ST_OK)
		return st_cli_fail("cache", &err);
	int code = o->json ? st_cache_cli_show_json(e) : st_cache_cli_show_text(e);
	st_cache_entry_free(e);
	return code;
}

/* ---- clear ----------------------------------------------------------------------------- */

static int on_clear(const char *key, const st_cache_entry *e, const char *problem, int64_t mtime, void *payload)
{
	(void)problem;
	struct list_state *s = payload;
	const st_cache_info *i = st_cache_entry_info(e);
	int64_t when = i ? i->time : mtime;
	if (s->older >= 0 && s->now - when <= s->older)
		return 0;
	char(*d)[65] = realloc(s->doomed, (s->n_doomed + 1) * sizeof *d);
	if (!d) {
		s->oom = 1;
		return 1;
	}
	s->doomed = d;
	memcpy(s->doomed[s->n_doomed++], key, 65);
	return 0;
}

static int count_all(const char *key, const st_cache_entry *e, const char *problem, int64_t mtime, void *payload)
{
	(void)key; (void)e; (void)problem; (void)mtime;
	++*(int *)payload;
	return 0;
}

static int cmd_clear(st_cache *c, const struct opts *o)
{
	struct list_state s = {.o = o, .now = (int64_t)time(NULL), .older = -1};
	st_error err = {0};
	if (o->older && st_cache_parse_duration(o->older, &s.older, &err) != ST_OK) {
		st_cli_error("cache", "--older-than: %s", err.msg);
		return ST_EXIT_USAGE;
	}
	if (st_cache_list(c, on_clear, &s, &err) != ST_OK || s.oom) {
		free(s.doomed);
		return s.oom ? (st_cli_error("cache", "out of memory"), ST_EXIT_FAIL) : st_cli_fail("cache", &err);
	}
	int code = ST_EXIT_OK;
	size_t removed = 0;
	cJSON *root = o->json ? cJSON_CreateObject() : NULL;
	cJSON *keys = root ? cJSON_AddArrayToObject(root, "removed") : NULL;
	for (size_t k = 0; k < s.n_doomed; k++) {
		st_status rc = st_cache_remove(c, s.doomed[k], &err);
		if (rc == ST_OK) {
			removed++;
			if (keys)
				cJSON_AddItemToArray(keys, cJSON_CreateString(s.doomed[k]));
		} else if (rc != ST_ENOTFOUND) { /* gone already: another clear */
			code = st_cli_fail("cache", &err);
		}
	}
	free(s.doomed);
	int kept = 0;
	st_cache_list(c, count_all, &kept, NULL);
	if (o->json) {
		cJSON_AddNumberToObject(root, "kept", kept);
		cJSON_AddStringToObject(root, "dir", st_cache_dir(c));
		int pc = st_cache_cli_print_json(root);
		return code != ST_EXIT_OK ? code : pc;
	}
	printf("removed %zu %s, kept %d, in %s\n", removed, removed == 1 ? "entry" : "entries", kept, st_cache_dir(c));
	return code;
}

int st_cmd_cache(int argc, char **argv)
{
	struct opts o;
	int rc = parse(argc, argv, &o);
	if (rc != 0)
		return rc < 0 ? ST_EXIT_OK : rc;
	if (o.redis) /* cmd_cache_redis.c */
		return st_cache_cli_remote(&o);
	st_cache *c;
	st_error err = {0};
	if (st_cache_open(&c, o.dir, &err) != ST_OK)
		return st_cli_fail("cache", &err);
	if (!strcmp(o.sub, "list"))
		rc = cmd_list(c, &o);
	else if (!strcmp(o.sub, "show"))
		rc = cmd_show(c, &o);
	else
		rc = cmd_clear(c, &o);
	st_cache_free(c);
	return rc;
}

/* sasstune train: one PPO policy over a set of kernels (docs/tune.md). */
#include "tune_cli.h"
#include "util/util.h"

#include <cJSON.h>
#include <dirent.h>
#include <sys/stat.h>

static void usage(FILE *out)
{
	fprintf(out,
		"usage: sasstune train (--launch-dir D | D | KERNEL.cubin)... [--reward model|gpu] -o POLICY.json\n"
		"                      [--steps N | --budget T] [--seed S] [--hidden H] [--policy START]\n"
		"                      [--wide] [--no-ctrl] [--set NAME=VALUE]... [--json] [--quiet]\n\n"
		"Train one move policy with PPO over several kernels, round robin, one episode at a time,\n"
		"sharing the budget (docs/search.md); rewards are log speedups against each kernel's own\n"
		"original, so kernels of any speed mix.  Nothing is accepted or written but the policy.\n\n"
		"Kernels:\n"
		"  D               a folder (also as --launch-dir D) holding one cubin (sm_90.cubin if there\n"
		"                  are several), launch.json and, when present, the cubin's listing (same\n"
		"                  name, .sass): the layout of test/fixtures/triton-sm90/*/\n"
		"  KERNEL.cubin    a cubin (its only entry kernel; a KERNEL.sass beside it is used as the\n"
		"                  listing); the model reward only, sized by guesses\n\n"
		"options:\n"
		"  --reward R      model (default; CPU only) or gpu (every kernel needs a launch.json)\n"
		"  -o POLICY.json  the trained policy (required; `sasstune apply --policy`, `tune --policy`)\n"
		"  --steps N       moves in all (default 4000 with the model); --budget T wall-clock\n"
		"  --seed S        search and initialisation seed (default 1)\n"
		"  --hidden H      policy width (default 64)\n"
		"  --policy START  continue training this policy instead of a new one\n"
		"  --wide, --no-ctrl  the move set (apply with the same)\n"
		"  --set N=V       a search setting (ppo.lr, episode_len, ...; docs/search.md)\n"
		"  --json          per-kernel summary as JSON\n"
		"  --quiet         no progress line\n"
		"  -h, --help\n\n"
		"exit status: 0 policy written, 1 failure, 2 usage error\n");
}

typedef struct tk {
	char *cubin_path, *listing, *launch_path;
	uint8_t *data;
	size_t size;
	st_launch *spec;
} tk;

static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s/%s", dir, name);
	return p;
}

static int exists(const char *p)
{
	struct stat st;
	return p && stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* The listing beside a cubin: same name with .sass instead of .cubin, if it exists. */
static char *sibling_listing(const char *cubin)
{
	size_t n = strlen(cubin);
	if (n < 6 || strcmp(cubin + n - 6, ".cubin"))
		return NULL;
	char *p = malloc(n);
	if (!p)
		return NULL;
	memcpy(p, cubin, n - 6);
	strcpy(p + n - 6, ".sass");
	if (!exists(p)) {
		free(p);
		return NULL;
	}
	return p;
}

static st_status load_dir(const char *dir, tk *t, st_error *err)
{
	DIR *d = opendir(dir);
	if (!d)
		return st_error_set(err, ST_EIO, "%s: cannot open the folder", dir);
	char *one = NULL;
	int count = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n > 6 && !strcmp(e->d_name + n - 6, ".cubin")) {
			count++;
			if (!one || !strcmp(e->d_name, "sm_90.cubin")) {
				free(one);
				one = strdup(e->d_name);
			}
		}
	}
	closedir(d);
	if (!count)
		return st_error_set(err, ST_ENOTFOUND, "%s: no .cubin in the folder", dir);
	if (count > 1 && strcmp(one, "sm_90.cubin")) {
		free(one);
		return st_error_set(err, ST_EINVAL, "%s: several cubins and no sm_90.cubin", dir);
	}
	t->cubin_path = join(dir, one);
	free(one);
	t->launch_path = join(dir, "launch.json");
	if (!t->cubin_path || !t->launch_path)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	if (!exists(t->launch_path))
		return st_error_set(err, ST_ENOTFOUND, "%s: no launch.json", dir);
	t->listing = sibling_listing(t->cubin_path);
	return ST_OK;
}

int st_cmd_train(int argc, char **argv)
{
	const char *out = NULL, *start = NULL, *steps_s = NULL, *budget_s = NULL, *seed_s = NULL;
	unsigned long long hidden = ST_POLICY_HIDDEN_DEFAULT;
	int json = 0, quiet = 0, rc = ST_EXIT_OK;
	st_tune_opts o;
	st_tune_opts_init(&o);
	st_error err = {0};
	tk *ks = calloc((size_t)argc + 1, sizeof *ks);
	const char **src = calloc((size_t)argc + 1, sizeof *src); /* per kernel: its argument */
	int *is_dir = calloc((size_t)argc + 1, sizeof *is_dir);
	size_t nk = 0;
	if (!ks || !src || !is_dir) {
		free(ks);
		free(src);
		free(is_dir);
		st_cli_error(argv[0], "out of memory");
		return ST_EXIT_FAIL;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			rc = ST_EXIT_OK;
			goto done;
		} else if (!strcmp(a, "--json")) {
			json = 1;
		} else if (!strcmp(a, "--quiet")) {
			quiet = 1;
		} else if (!strcmp(a, "--wide")) {
			o.sched_flags |= ST_SCHED_WIDE;
		} else if (!strcmp(a, "--no-ctrl")) {
			o.sched_flags |= ST_SCHED_NO_CTRL;
		} else if (!strcmp(a, "--launch-dir") || !strcmp(a, "--reward") || !strcmp(a, "-o") ||
			   !strcmp(a, "--steps") || !strcmp(a, "--budget") || !strcmp(a, "--seed") ||
			   !strcmp(a, "--hidden") || !strcmp(a, "--policy") || !strcmp(a, "--set")) {
			if (i + 1 >= argc) {
				st_cli_error(argv[0], "%s needs an argument (see sasstune train --help)", a);
				rc = ST_EXIT_USAGE;
				goto done;
			}
			const char *v = argv[++i];
			if (!strcmp(a, "--launch-dir")) {
				is_dir[nk] = 1;
				src[nk++] = v;
			} else if (!strcmp(a, "-o")) {
				out = v;
			} else if (!strcmp(a, "--steps")) {
				steps_s = v;
			} else if (!strcmp(a, "--budget")) {
				budget_s = v;
			} else if (!strcmp(a, "--seed")) {
				seed_s = v;
			} else if (!strcmp(a, "--policy")) {
				start = v;
			} else if (!strcmp(a, "--hidden")) {
				if (!st_tcli_u64(v, 1024, &hidden) || !hidden) {
					st_cli_error(argv[0], "--hidden: '%s' is not a width (1..1024)", v);
					rc = ST_EXIT_USAGE;
					goto done;
				}
			} else if (!strcmp(a, "--reward")) {
				if (!strcmp(v, "gpu") || !strcmp(v, "model")) {
					o.reward = !strcmp(v, "gpu") ? ST_REWARD_GPU : ST_REWARD_MODEL;
				} else {
					st_cli_error(argv[0], "--reward: '%s' is not gpu or model", v);
					rc = ST_EXIT_USAGE;
					goto done;
				}
			} else { /* --set */
				char name[128];
				const char *eq = strchr(v, '=');
				if (!eq || eq == v || (size_t)(eq - v) >= sizeof name) {
					st_cli_error(argv[0], "--set: '%s' is not NAME=VALUE", v);
					rc = ST_EXIT_USAGE;
					goto done;
				}
				memcpy(name, v, (size_t)(eq - v));
				name[eq - v] = 0;
				if (st_search_opts_set(&o.search, name, eq + 1, &err)) {
					st_cli_error(argv[0], "--set: %s", err.msg);
					rc = ST_EXIT_USAGE;
					goto done;
				}
			}
		} else if (a[0] == '-' && a[1]) {
			st_cli_error(argv[0], "unknown option '%s' (see sasstune train --help)", a);
			rc = ST_EXIT_USAGE;
			goto done;
		} else {
			struct stat st;
			is_dir[nk] = stat(a, &st) == 0 && S_ISDIR(st.st_mode);
			src[nk++] = a;
		}
	}
	if (!nk || !out) {
		st_cli_error(argv[0], "%s is required (see sasstune train --help)",
			     !nk ? "a kernel (--launch-dir D, D or KERNEL.cubin)" : "-o POLICY.json");
		rc = ST_EXIT_USAGE;
		goto done;
	}
	unsigned long long steps = 0, seed = 1;
	double seconds = 0;
	if (steps_s && (!st_tcli_u64(steps_s, 1000000000ull, &steps) || !steps)) {
		st_cli_error(argv[0], "--steps: '%s' is not a number of moves (1..1000000000)", steps_s);
		rc = ST_EXIT_USAGE;
		goto done;
	}
	if (budget_s && !(seconds = st_tcli_budget(budget_s))) {
		st_cli_error(argv[0], "--budget: '%s' is not a duration (e.g. 300s, 5m)", budget_s);
		rc = ST_EXIT_USAGE;
		goto done;
	}
	if (seed_s && !st_tcli_u64(seed_s, ~0ull, &seed)) {
		st_cli_error(argv[0], "--seed: '%s' is not a non-negative integer", seed_s);
		rc = ST_EXIT_USAGE;
		goto done;
	}
	if (!steps && !seconds)
		steps = 4000;
	o.search.steps = steps;
	o.search.seconds = seconds;
	o.search.seed = seed;
	o.runtime.seed = seed;

	for (size_t i = 0; i < nk; i++) {
		tk *t = &ks[i];
		if (is_dir[i]) {
			if (load_dir(src[i], t, &err))
				goto fail;
		} else {
			char *p = strdup(src[i]);
			if (!p) {
				st_error_set(&err, ST_ENOMEM, "out of memory");
				goto fail;
			}
			t->cubin_path = p;
			t->listing = sibling_listing(p);
			if (o.reward == ST_REWARD_GPU) {
				st_error_set(&err, ST_EINVAL, "%s: the GPU reward needs a launch spec: give a folder with "
					     "launch.json (--launch-dir)", p);
				goto fail;
			}
		}
		if (st_read_file(t->cubin_path, &t->data, &t->size, &err) ||
		    (t->launch_path && st_launch_load(t->launch_path, &t->spec, &err)))
			goto fail;
	}
	st_policy *policy = NULL;
	if (start ? st_policy_load(start, &policy, &err) : st_policy_new((unsigned)hidden, seed, &policy, &err))
		goto fail;
	st_tune_kernel *tks = calloc(nk, sizeof *tks);
	st_tune_result *res = calloc(nk, sizeof *res);
	if (!tks || !res) {
		free(tks);
		free(res);
		st_policy_free(policy);
		st_error_set(&err, ST_ENOMEM, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < nk; i++)
		tks[i] = (st_tune_kernel){.cubin = ks[i].data, .size = ks[i].size, .name = ks[i].cubin_path,
					  .listing = ks[i].listing, .launch = ks[i].spec};
	st_tcli_progress pr = {.what = "train", .tty = isatty(2)};
	pr.last = st_tcli_now();
	if (!quiet) {
		o.search.progress = st_tcli_progress_cb;
		o.search.progress_data = &pr;
	}
	st_status s = st_tune_train(tks, nk, &o, policy, res, &err);
	st_tcli_progress_end(&pr);
	if (!s)
		s = st_policy_save(policy, out, &err);
	if (!s) {
		cJSON *arr = json ? cJSON_CreateArray() : NULL;
		for (size_t i = 0; i < nk; i++) {
			if (arr) {
				cJSON *j = cJSON_CreateObject();
				cJSON_AddStringToObject(j, "cubin", ks[i].cubin_path);
				cJSON_AddStringToObject(j, "kernel", res[i].kernel);
				cJSON_AddNumberToObject(j, "steps", (double)res[i].steps);
				cJSON_AddNumberToObject(j, "evals", (double)res[i].evals);
				cJSON_AddNumberToObject(j, "rejected", (double)res[i].rejected);
				cJSON_AddNumberToObject(j, "best_ratio", res[i].best.ratio);
				cJSON_AddItemToArray(arr, j);
			} else {
				printf("%s (%s): %llu steps, %llu evaluations, %llu rejected, best %.4f\n", res[i].kernel,
				       ks[i].cubin_path, (unsigned long long)res[i].steps, (unsigned long long)res[i].evals,
				       (unsigned long long)res[i].rejected, res[i].best.ratio);
			}
		}
		if (arr) {
			cJSON *j = cJSON_CreateObject();
			cJSON_AddStringToObject(j, "policy", out);
			cJSON_AddStringToObject(j, "reward", o.reward == ST_REWARD_GPU ? "gpu" : "model");
			cJSON_AddItemToObject(j, "kernels", arr);
			char *t = cJSON_PrintUnformatted(j);
			if (t)
				puts(t);
			free(t);
			cJSON_Delete(j);
		} else {
			printf("wrote %s (%zu kernel%s, reward %s)\n", out, nk, nk == 1 ? "" : "s",
			       o.reward == ST_REWARD_GPU ? "gpu" : "model");
		}
	}
	for (size_t i = 0; i < nk; i++)
		st_tune_result_free(&res[i]);
	free(res);
	free(tks);
	st_policy_free(policy);
	if (s)
		goto fail;
	goto done;
fail:
	rc = st_cli_fail(argv[0], &err);
done:
	for (size_t i = 0; i < nk; i++) {
		free(ks[i].data);
		st_launch_free(ks[i].spec);
		free(ks[i].listing);
		free(ks[i].cubin_path);
		free(ks[i].launch_path);
	}
	free(ks);
	free(src);
	free(is_dir);
	return rc;
}

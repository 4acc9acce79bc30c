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
		"kernels:\n"
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
		"  --hidden H      policy width (default 16)\n"
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

/* The kernels' arguments, in order: folders and cubins. */
typedef struct sources {
	const char **src;
	int *is_dir;
	size_t n;
} sources;

static int launch_dir_opt(const char *cmd, const char *v, void *dst)
{
	(void)cmd;
	sources *s = dst;
	s->is_dir[s->n] = 1;
	s->src[s->n++] = v;
	return 0;
}

static int source_arg(const char *cmd, const char *arg, void *dst)
{
	(void)cmd;
	sources *s = dst;
	struct stat st;
	s->is_dir[s->n] = stat(arg, &st) == 0 && S_ISDIR(st.st_mode);
	s->src[s->n++] = arg;
	return 0;
}

/* One kernel from its argument src (a folder if is_dir): its cubin, listing and launch spec read into t. */
static st_status load_kernel(tk *t, const char *src, int is_dir, st_reward reward, st_error *err)
{
	st_status r;
	if (is_dir) {
		if ((r = load_dir(src, t, err)))
			return r;
	} else {
		char *p = strdup(src);
		if (!p)
			return st_error_set(err, ST_ENOMEM, "out of memory");
		t->cubin_path = p;
		t->listing = sibling_listing(p);
		if (reward == ST_REWARD_GPU)
			return st_error_set(err, ST_EINVAL, "%s: the GPU reward needs a launch spec: give a folder with "
					    "launch.json (--launch-dir)", p);
	}
	if ((r = st_read_file(t->cubin_path, &t->data, &t->size, err)))
		return r;
	return t->launch_path ? st_launch_load(t->launch_path, &t->spec, err) : ST_OK;
}

static void free_kernels(tk *ks, size_t nk)
{
	for (size_t i = 0; i < nk; i++) {
		free(ks[i].data);
		st_launch_free(ks[i].spec);
		free(ks[i].listing);
		free(ks[i].cubin_path);
		free(ks[i].launch_path);
	}
	free(ks);
}

/* The kernels of one training run and where the policy goes. */
typedef struct train {
	const char *out;
	st_tune_opts *o;
	tk *ks;
	size_t nk;
} train;

static void report(const train *tr, const st_tune_result *res, int json)
{
	const char *reward = tr->o->reward == ST_REWARD_GPU ? "gpu" : "model";
	cJSON *arr = json ? cJSON_CreateArray() : NULL;
	for (size_t i = 0; i < tr->nk; i++) {
		if (arr) {
			cJSON *j = cJSON_CreateObject();
			cJSON_AddStringToObject(j, "cubin", tr->ks[i].cubin_path);
			cJSON_AddStringToObject(j, "kernel", res[i].kernel);
			cJSON_AddNumberToObject(j, "steps", (double)res[i].steps);
			cJSON_AddNumberToObject(j, "evals", (double)res[i].evals);
			cJSON_AddNumberToObject(j, "rejected", (double)res[i].rejected);
			cJSON_AddNumberToObject(j, "best_ratio", res[i].best.ratio);
			cJSON_AddItemToArray(arr, j);
		} else {
			printf("%s (%s): %llu steps, %llu evaluations, %llu rejected, best %.4f\n", res[i].kernel,
			       tr->ks[i].cubin_path, (unsigned long long)res[i].steps, (unsigned long long)res[i].evals,
			       (unsigned long long)res[i].rejected, res[i].best.ratio);
		}
	}
	if (arr) {
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "policy", tr->out);
		cJSON_AddStringToObject(j, "reward", reward);
		cJSON_AddItemToObject(j, "kernels", arr);
		st_cli_print_json(j, 0);
		cJSON_Delete(j);
	} else {
		printf("wrote %s (%zu kernel%s, reward %s)\n", tr->out, tr->nk, tr->nk == 1 ? "" : "s", reward);
	}
}

/* Trains policy over the loaded kernels, saves it to tr->out and reports. */
static st_status train_policy(const train *tr, st_policy *policy, int quiet, int json, st_error *err)
{
	size_t nk = tr->nk;
	st_tune_kernel *tks = calloc(nk, sizeof *tks);
	st_tune_result *res = calloc(nk, sizeof *res);
	if (!tks || !res) {
		free(tks);
		free(res);
		return st_error_set(err, ST_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < nk; i++)
		tks[i] = (st_tune_kernel){.cubin = tr->ks[i].data, .size = tr->ks[i].size, .name = tr->ks[i].cubin_path,
					  .listing = tr->ks[i].listing, .launch = tr->ks[i].spec};
	st_tcli_progress pr;
	st_tcli_progress_start(&pr, "train", quiet, &tr->o->search);
	st_status s = st_tune_train(tks, nk, tr->o, policy, res, err);
	st_tcli_progress_end(&pr);
	if (!s)
		s = st_policy_save(policy, tr->out, err);
	if (!s)
		report(tr, res, json);
	for (size_t i = 0; i < nk; i++)
		st_tune_result_free(&res[i]);
	free(res);
	free(tks);
	return s;
}

/* -o must not be a file a folder argument led to (its cubin, listing or launch spec): the
 * arguments themselves were checked at parse time.  -1 when it is none of them. */
static int output_is_no_input(const char *cmd, const char *out, const tk *ks, size_t nk)
{
	for (size_t i = 0; i < nk; i++) {
		const char *in[3] = {ks[i].cubin_path, ks[i].listing, ks[i].launch_path};
		int code = st_cli_check_output(cmd, "-o", out, in, 3);
		if (code >= 0)
			return code;
	}
	return -1;
}

/* After a good parse: loads the kernels of srcs into tr->ks (tr->nk of them), checks -o against
 * the files they led to, makes (or loads, from start) the policy and trains it.  The exit status. */
static int load_and_train(const char *cmd, const train *tr, const sources *srcs, const char *start, unsigned hidden,
			  int quiet, int json)
{
	st_error err = {0};
	for (size_t i = 0; i < tr->nk; i++)
		if (load_kernel(&tr->ks[i], srcs->src[i], srcs->is_dir[i], tr->o->reward, &err))
			return st_cli_fail(cmd, &err);
	int code = output_is_no_input(cmd, tr->out, tr->ks, tr->nk);
	if (code >= 0)
		return code;
	st_policy *policy = NULL;
	if (start ? st_policy_load(start, &policy, &err) : st_policy_new(hidden, tr->o->search.seed, &policy, &err))
		return st_cli_fail(cmd, &err);
	st_status s = train_policy(tr, policy, quiet, json, &err);
	st_policy_free(policy);
	return s ? st_cli_fail(cmd, &err) : ST_EXIT_OK;
}

int st_cmd_train(int argc, char **argv)
{
	const char *out = NULL, *start = NULL, *steps_s = NULL, *budget_s = NULL, *seed_s = NULL;
	unsigned hidden = ST_POLICY_HIDDEN_DEFAULT;
	int json = 0, quiet = 0, rc = ST_EXIT_OK;
	st_tune_opts o;
	st_tune_opts_init(&o);
	st_cli_runtime_env(&o.runtime); /* $SASSTUNE_CHECK_REFERENCE */
	o.sched_flags = 0; /* swap,ctrl: the set `apply` takes and policies were trained on (docs/tune.md) */
	tk *ks = calloc((size_t)argc + 1, sizeof *ks);
	const char **src = calloc((size_t)argc + 1, sizeof *src); /* per kernel: its argument */
	int *is_dir = calloc((size_t)argc + 1, sizeof *is_dir);
	sources srcs = {src, is_dir, 0};
	size_t nk = 0;
	if (!ks || !src || !is_dir) {
		free(ks);
		free(src);
		free(is_dir);
		st_cli_error(argv[0], "out of memory");
		return ST_EXIT_FAIL;
	}
	const st_cli_opt opts[] = {
		ST_OPT_FLAG("--json", &json), ST_OPT_FLAG("--quiet", &quiet),
		ST_OPT_BIT("--wide", &o.sched_flags, ST_SCHED_WIDE),
		ST_OPT_BIT("--no-ctrl", &o.sched_flags, ST_SCHED_NO_CTRL),
		ST_OPT_FN("--launch-dir", launch_dir_opt, &srcs), ST_OPT_FN("--reward", st_tcli_reward_opt, &o.reward),
		ST_OPT_STR("-o", &out), ST_OPT_STR("--steps", &steps_s), ST_OPT_STR("--budget", &budget_s),
		ST_OPT_STR("--seed", &seed_s), ST_OPT_FN("--hidden", st_tcli_hidden_opt, &hidden),
		ST_OPT_STR("--policy", &start), ST_OPT_FN("--set", st_tcli_set_opt, &o.search), ST_OPT_END,
	};
	const st_cli_need need[] = {
		{&src[0], "a kernel (--launch-dir D, D or KERNEL.cubin)"}, {&out, "-o POLICY.json"}, {0},
	};
	st_cli_args args = {.usage = usage, .opts = opts, .arg = source_arg, .arg_dst = &srcs, .need = need};
	int code = st_cli_parse(argc, argv, &args);
	nk = srcs.n;
	if (code < 0) /* -o must not be one of the kernels' cubins (cli_out.c) */
		code = st_cli_check_output(argv[0], "-o", out, src, srcs.n);
	if (code < 0)
		code = st_tcli_search_budget(argv[0], steps_s, budget_s, seed_s, 4000, 0, &o);
	if (code >= 0) {
		rc = code;
		goto done;
	}
	rc = load_and_train(argv[0], &(train){.out = out, .o = &o, .ks = ks, .nk = nk}, &srcs, start, hidden, quiet,
			    json);
done:
	free_kernels(ks, nk);
	free(src);
	free(is_dir);
	return rc;
}

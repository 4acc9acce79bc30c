/* sasstune tune CUBIN: search a faster schedule for one kernel (docs/tune.md). */
#include "cli_regs.h"
#include "cmd_tune_captures.h"
#include "eval_log.h"
#include "tune_cli.h"
#include "variants_cli.h"
#include "util/util.h"

#include <cJSON.h>

/* The synopsis and what tune does, with the two rewards. */
static void usage_intro(FILE *out)
{
	fprintf(out,
		"usage: sasstune tune CUBIN [--launch L.json] [--kernel K] [--listing F] [--method ppo|random|greedy]\n"
		"                     [--reward gpu|model] [--budget 300s | --steps N] [--seed S] [--policy P]\n"
		"                     [--hidden H] [--wide] [--no-ctrl] [--families L] [--set NAME=VALUE]... -o OUT\n"
		"                     [--schedule-out S.json] [--json] [--quiet] [--log-evals F.jsonl]\n"
		"                     [--aim auto|FILE|off] [--allow-occupancy-drop]\n"
		"                     [--variants --ptx PTX [--ptxas P]... [--controls F]...]\n"
		"       sasstune tune --captures DIR [--budget T] [--total-budget T] [--cache-dir D]\n"
		"                     (tune what SASSTUNE_MODE=capture recorded: sasstune tune --captures x --help)\n\n"
		"Search a faster schedule (instruction order and control codes) for one kernel of CUBIN and\n"
		"write the result.  Moves come from the legality model (docs/sched.md); the search is PPO,\n"
		"a random walk or greedy hill climbing (docs/search.md); each candidate is scored by\n"
		"  --reward gpu    the GPU: verified bit for bit against the original on fresh input sets\n"
		"                  (crash, mismatch or hang: rejected), then timed in interleaved pairs.  A\n"
		"                  result is kept only if a confirmation of >= 200 pairs puts the 95 %% interval\n"
		"                  of original/tuned above 1.005 (--set confirm_min=X, X > 1.0, to change; two\n"
		"                  loads of the same cubin differ by up to ~0.4 %%), the independent checker\n"
		"                  passes it, and it holds in a fresh session: verified on new inputs and\n"
		"                  timed as `sasstune compare` times it (the reported ratio); otherwise OUT is\n"
		"                  the original, and we say so.\n"
		"  --reward model  the static cost model (default; no GPU).  Its result is UNCONFIRMED: a\n"
		"                  prediction, never timed; it is still checked by the independent checker.\n"
		"  With either reward, a changed OUT must also still decode with nvdisasm (when one is found).\n\n");
}

/* The options up to --hidden: input, search method and budget. */
static void usage_search_options(FILE *out)
{
	fprintf(out,
		"options:\n"
		"  --launch L      launch spec (docs/runtime.md); required for --reward gpu, and sizes the\n"
		"                  cost model's warps per SM sub-partition otherwise\n"
		"  --kernel K      the kernel (default: the launch spec's, else the only entry kernel)\n"
		"  --listing F     CUBIN's `nvdisasm -hex -c` listing (default: run nvdisasm; with --variants,\n"
		"                  used only when stock is kept: a winning variant is other code)\n"
		"  --method M      greedy (default: best most often at equal GPU time on the bench,\n"
		"                  docs/tune.md), random or ppo\n"
		"  --budget T      wall-clock budget, e.g. 300s, 5m (default 300s with the GPU)\n"
		"  --steps N       budget in moves tried (default 2000 with the model); with --budget, the\n"
		"                  first one reached stops the search; confirmation runs after it\n"
		"  --seed S        search seed (default 1): the same seed and step budget give the same result\n"
		"                  with the model reward\n"
		"  --policy P      start PPO from this policy file (fine-tuned online, not saved)\n"
		"  --hidden H      width of a new PPO policy (default %u)\n",
		ST_POLICY_HIDDEN_DEFAULT);
}

/* The options from --wide on: moves, aim, outputs, --variants; then the exit status. */
static void usage_move_options(FILE *out)
{
	fprintf(out,
		"  --wide          any non-fixed instruction may move (default: memory instructions)\n"
		"  --no-ctrl       swaps only, no control-code edits\n"
		"  --families L    move families, a comma list of swap (required), ctrl, hoist, wait, sb, rename,\n"
		"                  xblock, pipe (default " ST_SCHED_MOVE_FAMILIES ";\n"
		"                  docs/sched.md); pipe is no move of the search: one rotation of each loop's\n"
		"                  loads (sasstune pipe), timed on the GPU against the input before the search\n"
		"                  and kept only when it beats the search's result (docs/tune.md \"The pipe\n"
		"                  alternative\"); --no-ctrl alone is swap alone; with rename and --launch,\n"
		"                  renames may raise the register count while the resident blocks per SM\n"
		"                  stay (the summary reports the occupancy before and after; without\n"
		"                  --launch it is never raised)\n"
		"  --allow-occupancy-drop\n"
		"                  let a raise lower the resident blocks per SM (off by default)\n"
		"  --set N=V       a search setting by its docs/search.md name (ppo.lr, eval_pairs, ...)\n"
		"  --aim A         aimed proposals (docs/profile.md): auto (sample the kernel with CUPTI at\n"
		"                  the start, GPU reward, at most 5%% of the budget), a samples file\n"
		"                  (sasstune profile --samples-out), or off (default: uniform proposals)\n"
		"  --aim-strength S  the weight of a hot wait in a move's weight (default 20)\n"
		"  -o OUT          the output cubin\n"
		"  --schedule-out  the output's schedule (replays with `sasstune rewrite`)\n"
		"  --json          print the summary as JSON\n"
		"  --log-evals F   append one JSON line per evaluation to F: kernel, kind (quick, start, race,\n"
		"                  final), ratio and interval, pairs, moves, the cost model's ratio and the\n"
		"                  summed feature rows of the candidate's moves (training data for a cost model)\n"
		"  --variants      first compile --ptx PTX (CUBIN's source) with other ptxas binaries and\n"
		"                  options, verify and time each against CUBIN (sasstune variants, docs/variants.md;\n"
		"                  needs --launch and a GPU to pick one) and tune the confirmed winner, else CUBIN;\n"
		"                  the summary names the variant (JSON \"variant\").  --ptxas P adds a binary,\n"
		"                  --controls F a ptxas advanced-controls file (--apply-controls=F)\n"
		"  --quiet         no progress line on stderr\n"
		"  -h, --help\n\n"
		"exit status: 0 written (tuned or the original), 1 failure (bad input, no GPU), 2 usage error\n");
}

static void usage(FILE *out)
{
	usage_intro(out);
	usage_search_options(out);
	usage_move_options(out);
}

static const char *const method_names[] = {"ppo", "random", "greedy"};

static int aim_strength_opt(const char *cmd, const char *v, void *dst)
{
	char *end;
	double d = strtod(v, &end);
	if (end == v || *end || !(d >= 0 && d <= 1e6)) {
		st_cli_error(cmd, "--aim-strength: '%s' is not a number from 0 to 1e6", v);
		return 1;
	}
	*(double *)dst = d;
	return 0;
}

static int method_opt(const char *cmd, const char *v, void *dst)
{
	st_error err = {0};
	if (st_search_opts_set(dst, "method", v, &err)) {
		st_cli_error(cmd, "--method: '%s' is not ppo, random or greedy", v);
		return 1;
	}
	return 0;
}

/* --set, but not for what --method, --seed, --steps and --budget set. */
static int set_opt(const char *cmd, const char *v, void *dst)
{
	return st_tcli_set(cmd, v, dst, 1);
}

/* What the report of one tune shows besides its result. */
typedef struct tune_report {
	const char *method, *out, *sched_out, *variant, *log_path; /* variant, sched_out, log_path: NULL if none */
	unsigned families;                                         /* st_sched_new flags */
	int gpu;
	unsigned long long log_lines;
	double own_ms, eval_ms;                                    /* search's own time a step; one evaluation */
	double ratio, lo, hi;                                      /* 1 when nothing was kept */
	const uint8_t *orig; size_t orig_size; const st_launch *spec; /* for the occupancy report */
} tune_report;

static void report_json(const st_tune_result *r, const tune_report *t)
{
	cJSON *j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "kernel", r->kernel);
	cJSON_AddStringToObject(j, "method", t->method);
	cJSON_AddStringToObject(j, "reward", t->gpu ? "gpu" : "model");
	cJSON_AddBoolToObject(j, "confirmed", r->confirmed);
	cJSON_AddBoolToObject(j, "improved", r->improved);
	cJSON_AddNumberToObject(j, "baseline", 1.0);
	cJSON_AddNumberToObject(j, "ratio", t->ratio);
	cJSON_AddNumberToObject(j, "ratio_lo", t->lo);
	cJSON_AddNumberToObject(j, "ratio_hi", t->hi);
	cJSON_AddNumberToObject(j, "pairs", r->improved ? r->best.pairs : 0);
	cJSON_AddNumberToObject(j, "best_quick_ratio", r->best.ratio);
	cJSON_AddNumberToObject(j, "model_ratio", r->model_ratio);
	cJSON_AddNumberToObject(j, "steps", (double)r->steps);
	cJSON_AddNumberToObject(j, "evals", (double)r->evals);
	cJSON_AddNumberToObject(j, "rejected", (double)r->rejected);
	cJSON_AddNumberToObject(j, "confirms", (double)r->confirms);
	cJSON_AddNumberToObject(j, "restarts", (double)r->restarts);
	cJSON_AddNumberToObject(j, "seconds", r->seconds);
	cJSON_AddNumberToObject(j, "steps_per_s", r->steps_per_s);
	cJSON_AddNumberToObject(j, "eval_seconds", r->eval_seconds);
	cJSON_AddNumberToObject(j, "policy_seconds", r->policy_seconds);
	cJSON_AddNumberToObject(j, "policy_overlapped_seconds", r->policy_overlapped_seconds);
	cJSON_AddNumberToObject(j, "search_ms_per_step", t->own_ms);
	cJSON_AddNumberToObject(j, "search_work_ms_per_step",
				t->own_ms + (r->steps ? 1e3 * r->policy_overlapped_seconds / (double)r->steps : 0.0));
	cJSON_AddNumberToObject(j, "eval_ms", t->eval_ms);
	cJSON_AddNumberToObject(j, "confirm_pairs_spent", (double)r->confirm_pairs_spent);
	cJSON_AddNumberToObject(j, "race_candidates", r->race_candidates);
	cJSON_AddNumberToObject(j, "race_rounds", r->race_rounds);
	if (t->log_path)
		cJSON_AddNumberToObject(j, "eval_log_lines", (double)t->log_lines);
	cJSON_AddStringToObject(j, "device", r->device);
	cJSON_AddStringToObject(j, "aim", r->aim);
	cJSON_AddNumberToObject(j, "aim_ms", r->aim_ms);
	cJSON_AddStringToObject(j, "pipe", r->pipe);
	char fam[ST_SCHED_FAMILIES_MAX];
	cJSON_AddStringToObject(j, "families", st_sched_families(t->families, fam, sizeof fam));
	cJSON_AddStringToObject(j, "message", r->message);
	cJSON_AddStringToObject(j, "output", t->out);
	if (t->variant)
		cJSON_AddStringToObject(j, "variant", t->variant);
	if (t->sched_out)
		cJSON_AddStringToObject(j, "schedule", t->sched_out);
	else
		cJSON_AddNullToObject(j, "schedule");
	if (r->verification_json) {
		cJSON *v = cJSON_Parse(r->verification_json);
		if (v)
			cJSON_AddItemToObject(j, "verification", v);
	}
	if (t->families & ST_SCHED_RENAME) /* the family that may raise the register count */
		st_cli_occupancy_tune(j, t->orig, t->orig_size, r->cubin, r->cubin_size, r->kernel, t->spec);
	st_cli_print_json(j, 0);
	cJSON_Delete(j);
}

static void report_text(const st_tune_result *r, const tune_report *t)
{
	printf("%s: %s, reward %s, %llu steps in %.1f s (%.1f steps/s), %llu evaluations, %llu rejected",
	       r->kernel, t->method, t->gpu ? "gpu" : "model", (unsigned long long)r->steps, r->seconds, r->steps_per_s,
	       (unsigned long long)r->evals, (unsigned long long)r->rejected);
	if (r->restarts)
		printf(", %llu restarts", (unsigned long long)r->restarts);
	printf("\n");
	double per = r->steps ? 1e3 / (double)r->steps : 0.0;
	char over[96] = "";
	if (r->policy_overlapped_seconds > 0) /* the part of PPO's work a worker did beside the search */
		snprintf(over, sizeof over, ", %.3f ms of it overlapped", per * r->policy_overlapped_seconds);
	printf("%s: cost per step: search %.3f ms (policy %.3f ms%s), evaluation %.3f ms each; confirmation: "
	       "race of %u in %u rounds, %llu pairs\n",
	       r->kernel, t->own_ms, per * r->policy_seconds, over, t->eval_ms,
	       r->race_candidates, r->race_rounds, (unsigned long long)r->confirm_pairs_spent);
	printf("%s: %s\n", r->kernel, r->message);
	if (strcmp(r->aim, "off"))
		printf("%s: aimed proposals: %s (%.0f ms; waits a schedule can address: %.0f%% of the samples)\n",
		       r->kernel, r->aim, r->aim_ms, 100 * r->aim_hot_share);
	if (strcmp(r->pipe, "off"))
		printf("%s: pipe: %s\n", r->kernel, r->pipe);
	if (t->variant)
		printf("%s: variant %s\n", r->kernel, t->variant);
	if (t->families & ST_SCHED_RENAME)
		st_cli_occupancy_tune(NULL, t->orig, t->orig_size, r->cubin, r->cubin_size, r->kernel, t->spec);
	if (r->improved)
		printf("%s: baseline 1.0000, tuned %.4f [%.4f, %.4f]%s\n", r->kernel, t->ratio, t->lo, t->hi,
		       t->gpu ? " (original/tuned, confirmed on the GPU)" : " (cost model, unconfirmed)");
	printf("wrote %s (%s)\n", t->out,
	       r->improved ? (t->gpu ? "tuned, confirmed" : "tuned, unconfirmed")
			  : (t->gpu ? "the original: nothing confirmed" : "the original: nothing kept"));
}

/* The checks of a parsed command line that the option table cannot make: -1 when it is good, else
 * the exit code (the error printed). */
static int check_args(const char *cmd, const char *families, int variants_without_ptx, const char *launch_path,
		      st_tune_opts *o)
{
	st_error err = {0};
	if (families && st_sched_parse_families(families, &o->sched_flags, &err)) {
		st_cli_error(cmd, "--%s", err.msg);
		return ST_EXIT_USAGE;
	}
	if (!families && (o->sched_flags & ST_SCHED_NO_CTRL)) /* --no-ctrl alone: swap alone */
		o->sched_flags &= ~(unsigned)ST_SCHED_DEFAULT_FAMILIES;
	if (variants_without_ptx) {
		st_cli_error(cmd, "--variants needs --ptx PTX");
		return ST_EXIT_USAGE;
	}
	if (o->reward == ST_REWARD_GPU && !launch_path) {
		st_cli_error(cmd, "--reward gpu needs --launch L.json");
		return ST_EXIT_USAGE;
	}
	return -1;
}

/* --log-evals F: append one line per evaluation (eval_log.h) to F. */
static st_status open_evlog(st_evlog *evl, const char *log_path, const char *cubin, const char *kernel, st_tune_opts *o,
			    st_error *err)
{
	if (!(evl->f = fopen(log_path, "a")))
		return st_error_set(err, ST_EIO, "%s: cannot open the evaluation log: %s", log_path, strerror(errno));
	evl->cubin = cubin;
	evl->kernel = kernel;
	evl->method = method_names[o->search.method];
	evl->seed = (unsigned long long)o->search.seed;
	o->search.on_eval = st_evlog_note;
	o->search.on_eval_data = evl;
	return ST_OK;
}

/* A parsed `tune` command line. */
typedef struct tune_args {
	const char *path, *launch_path, *kernel, *listing, *out, *sched_out, *policy_path, *log_path;
	int json, quiet, variants, gpu;
	st_vcli vc;
	st_tune_opts o;
} tune_args;

/* Parses and checks the command line into a: -1 when it is good, else the exit code (the error printed). */
static int parse_args(int argc, char **argv, tune_args *a)
{
	const char *families = NULL, *budget_s = NULL, *steps_s = NULL, *seed_s = NULL;
	st_tune_opts *o = &a->o;
	st_tune_opts_init(o);
	st_cli_runtime_env(&o->runtime); /* $SASSTUNE_CHECK_REFERENCE */
	const st_cli_opt opts[] = {
		ST_OPT_FLAG("--json", &a->json), ST_OPT_FLAG("--quiet", &a->quiet),
		ST_OPT_BIT("--wide", &o->sched_flags, ST_SCHED_WIDE),
		ST_OPT_BIT("--no-ctrl", &o->sched_flags, ST_SCHED_NO_CTRL), ST_OPT_STR("--families", &families),
		ST_OPT_STR("--launch", &a->launch_path), ST_OPT_STR("--kernel", &a->kernel), ST_OPT_STR("--listing", &a->listing),
		ST_OPT_FN("--method", method_opt, &o->search), ST_OPT_FN("--reward", st_tcli_reward_opt, &o->reward),
		ST_OPT_STR("--budget", &budget_s), ST_OPT_STR("--steps", &steps_s), ST_OPT_STR("--seed", &seed_s),
		ST_OPT_STR("--policy", &a->policy_path), ST_OPT_STR("-o", &a->out), ST_OPT_STR("--schedule-out", &a->sched_out),
		ST_OPT_FN("--set", set_opt, &o->search), ST_OPT_FN("--hidden", st_tcli_hidden_opt, &o->hidden),
		ST_OPT_FLAG("--variants", &a->variants), ST_OPT_STR("--ptx", &a->vc.ptx_path),
		ST_OPT_FN("--ptxas", st_vcli_ptxas_opt, &a->vc), ST_OPT_FN("--controls", st_vcli_controls_opt, &a->vc),
		ST_OPT_STR("--log-evals", &a->log_path),
		ST_OPT_FLAG("--allow-occupancy-drop", &o->allow_occupancy_drop), ST_OPT_STR("--aim", &o->aim), ST_OPT_FN("--aim-strength", aim_strength_opt, &o->aim_strength), ST_OPT_END,
	};
	const st_cli_need need[] = {{&a->path, "CUBIN"}, {&a->out, "-o OUT"}, {0}};
	int code = st_cli_parse(argc, argv, &(st_cli_args){.usage = usage, .opts = opts, .file = &a->path, .need = need});
	if (code >= 0)
		return code;
	if ((code = check_args(argv[0], families, a->variants && !a->vc.ptx_path, a->launch_path, o)) >= 0)
		return code;
	a->gpu = o->reward == ST_REWARD_GPU;
	/* by default 300 s with the GPU, 2000 moves with the model */
	return st_tcli_search_budget(argv[0], steps_s, budget_s, seed_s, a->gpu ? 0 : 2000, a->gpu ? 300 : 0, o);
}

/* What one tune holds (freed at the end of st_cmd_tune): the cubin (the variant's after --variants), the
 * launch spec, the policy, the result (have_r: set) and the evaluation log. */
typedef struct tune_run {
	uint8_t *data;
	size_t size;
	st_launch *spec;
	st_policy *policy;
	st_tune_result r;
	int have_r;
	st_evlog evl;
	char variant[320];
} tune_run;

/* The kernel the messages name: --kernel, else the launch spec's, else dflt. */
static const char *kernel_name(const tune_args *a, const tune_run *t, const char *dflt)
{
	return a->kernel ? a->kernel : t->spec ? st_launch_kernel(t->spec) : dflt;
}

/* The search itself, with its progress line and its evaluation log (closed on success). */
static st_status search(tune_args *a, tune_run *t, st_error *err)
{
	st_tcli_progress pr;
	st_tcli_progress_start(&pr, kernel_name(a, t, "tune"), a->quiet, &a->o.search);
	if (!a->quiet)
		a->o.search.progress_every = 16;
	st_tune_kernel k = {.cubin = t->data, .size = t->size, .name = a->path, .kernel = a->kernel,
			    .listing = a->listing, .launch = t->spec};
	st_status s;
	if (a->log_path && (s = open_evlog(&t->evl, a->log_path, a->path, kernel_name(a, t, ""), &a->o, err)))
		return s;
	s = st_tune(&k, &a->o, t->policy, &t->r, err);
	st_tcli_progress_end(&pr);
	if (s) {
		if (a->gpu && (s == ST_EDEVICE || s == ST_ENOTFOUND) && !strstr(err->msg, "no kernel named"))
			st_error_wrap(err, "--reward gpu needs a GPU");
		return s;
	}
	t->have_r = 1;
	if (t->evl.f && (fclose(t->evl.f) != 0 || t->evl.failed)) {
		t->evl.f = NULL;
		return st_error_set(err, ST_EIO, "%s: writing the evaluation log failed", a->log_path);
	}
	t->evl.f = NULL;
	return ST_OK;
}

static void report(const tune_args *a, const tune_run *t)
{
	const st_tune_result *r = &t->r;
	/* the search's own time per step (PPO's policy work, sched's moves, bookkeeping) against the
	 * time of one evaluation (the GPU's verify and timing, or the cost model) */
	tune_report rep = {.method = method_names[a->o.search.method], .out = a->out, .sched_out = a->sched_out,
			   .variant = a->variants ? t->variant : NULL, .log_path = a->log_path, .families = a->o.sched_flags,
			   .gpu = a->gpu, .log_lines = t->evl.lines,
			   .own_ms = r->steps ? 1e3 * (r->seconds - r->eval_seconds) / (double)r->steps : 0,
			   .eval_ms = r->evals ? 1e3 * r->eval_seconds / (double)r->evals : 0,
			   .ratio = r->improved ? r->best.ratio : 1.0, .lo = r->improved ? r->best.lo : 1.0,
			   .hi = r->improved ? r->best.hi : 1.0, .orig = t->data, .orig_size = t->size, .spec = t->spec};
	if (a->json)
		report_json(r, &rep);
	else
		report_text(r, &rep);
}

int st_cmd_tune(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--captures"))
			return st_cmd_tune_captures(argc, argv); /* the batch of captured launches */
	tune_args a = {0};
	int rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	rc = ST_EXIT_OK;
	tune_run t = {0};
	st_error err = {0};
	if (st_read_file(a.path, &t.data, &t.size, &err) ||
	    (a.launch_path && st_launch_load(a.launch_path, &t.spec, &err)) ||
	    (a.policy_path && st_policy_load(a.policy_path, &t.policy, &err)))
		goto fail;
	a.vc.quiet = a.quiet;
	if (a.variants && (rc = st_vcli_tune_pick(argv[0], &a.vc, &t.data, &t.size, kernel_name(&a, &t, NULL), t.spec,
						  t.variant, sizeof t.variant)) != ST_EXIT_OK)
		goto done;
	if (a.variants && strcmp(t.variant, "stock"))
		a.listing = NULL; /* --listing is CUBIN's; the winner's code differs (nvdisasm reads it) */
	if (search(&a, &t, &err) || st_tcli_write_result(&t.r, a.out, a.sched_out, &err))
		goto fail;
	report(&a, &t);
	goto done;
fail:
	rc = st_cli_fail(argv[0], &err);
done:
	if (t.evl.f)
		fclose(t.evl.f);
	if (t.have_r)
		st_tune_result_free(&t.r);
	st_policy_free(t.policy);
	st_launch_free(t.spec);
	free(t.data);
	return rc;
}

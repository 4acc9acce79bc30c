/* The policy: one small MLP scores every legal move from its feature row
 * (weights shared across moves, so one policy fits any kernel), a second MLP
 * estimates the value of a state from the mean of its move rows.  Also the
 * policy file (JSON) and applying a policy greedily without evaluations. */
#include "search/search_int.h"
#include "util/util.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- feature names --------------------------------------------------------- */

#define ST_SEARCH_NAME_(id, name) name,
static const char *const feature_names[ST_SEARCH_NFEAT] = {ST_SEARCH_FEATURES(ST_SEARCH_NAME_)};
static const char *const state_extra_names[ST_STATE_EXTRA] = {"state.step_frac", "state.log_moves"};

const char *st_search_feature_name(size_t i)
{
	return i < ST_SEARCH_NFEAT ? feature_names[i] : NULL;
}

void st_stop_features(float out[ST_SEARCH_NFEAT])
{
	memset(out, 0, sizeof(float) * ST_SEARCH_NFEAT);
	out[ST_F_STOP] = 1.0f;
}

void st_state_features(const float *moves, size_t n, double step_frac, float out[ST_STATE_NFEAT])
{
	for (size_t f = 0; f < ST_SEARCH_NFEAT; f++) {
		double s = 0;
		for (size_t i = 0; i < n; i++)
			s += moves[i * ST_SEARCH_NFEAT + f];
		out[f] = n ? (float)(s / (double)n) : 0.0f;
	}
	out[ST_SEARCH_NFEAT] = (float)step_frac;
	out[ST_SEARCH_NFEAT + 1] = (float)(log((double)n + 1.0) / 8.0);
}

/* ---- the network ------------------------------------------------------------- */

static size_t mlp_layout(st_mlp *m, size_t in, size_t h, size_t off)
{
	m->in = in;
	m->w1 = off;
	m->b1 = m->w1 + h * in;
	m->w2 = m->b1 + h;
	m->b2 = m->w2 + h * h;
	m->w3 = m->b2 + h;
	m->b3 = m->w3 + h;
	m->end = m->b3 + 1;
	return m->end;
}

/* Feature rows are mostly zeros (one-hot classes): the first layer walks only
 * the nonzero inputs. */
static size_t nonzeros(const float *x, size_t in, size_t *nz, double *xv)
{
	size_t k = 0;
	for (size_t j = 0; j < in; j++)
		if (x[j] != 0) {
			nz[k] = j;
			xv[k++] = (double)x[j];
		}
	return k;
}

double st_mlp_forward(const st_policy *p, const st_mlp *m, const float *x, double *h1, double *h2)
{
	const size_t H = p->hidden;
	const double *t = p->theta;
	size_t nz[ST_STATE_NFEAT];
	double xv[ST_STATE_NFEAT];
	size_t k = nonzeros(x, m->in, nz, xv);
	for (size_t i = 0; i < H; i++) {
		const double *w = t + m->w1 + i * m->in;
		double a = t[m->b1 + i];
		for (size_t j = 0; j < k; j++)
			a += w[nz[j]] * xv[j];
		h1[i] = tanh(a);
	}
	double out = t[m->b3];
	for (size_t i = 0; i < H; i++) {
		const double *w = t + m->w2 + i * H;
		double a = t[m->b2 + i];
		for (size_t j = 0; j < H; j++)
			a += w[j] * h1[j];
		h2[i] = tanh(a);
		out += t[m->w3 + i] * h2[i];
	}
	return out;
}

void st_mlp_backward(const st_policy *p, const st_mlp *m, const float *x, const double *h1,
		     const double *h2, double dout, double *grad)
{
	const size_t H = p->hidden;
	const double *t = p->theta;
	double da2[ST_POLICY_MAX_HIDDEN], dh1[ST_POLICY_MAX_HIDDEN];
	size_t nz[ST_STATE_NFEAT];
	double xv[ST_STATE_NFEAT];
	size_t k = nonzeros(x, m->in, nz, xv);
	grad[m->b3] += dout;
	for (size_t i = 0; i < H; i++) {
		grad[m->w3 + i] += dout * h2[i];
		da2[i] = dout * t[m->w3 + i] * (1.0 - h2[i] * h2[i]);
		dh1[i] = 0;
	}
	for (size_t i = 0; i < H; i++) {
		if (da2[i] == 0)
			continue;
		const double *w = t + m->w2 + i * H;
		double *g = grad + m->w2 + i * H;
		grad[m->b2 + i] += da2[i];
		for (size_t j = 0; j < H; j++) {
			g[j] += da2[i] * h1[j];
			dh1[j] += da2[i] * w[j];
		}
	}
	for (size_t i = 0; i < H; i++) {
		double da1 = dh1[i] * (1.0 - h1[i] * h1[i]);
		if (da1 == 0)
			continue;
		double *g = grad + m->w1 + i * m->in;
		grad[m->b1 + i] += da1;
		for (size_t j = 0; j < k; j++)
			g[nz[j]] += da1 * xv[j];
	}
}

double st_softmax(const double *z, size_t n, double *p)
{
	double mx = -INFINITY;
	for (size_t i = 0; i < n; i++)
		if (z[i] > mx)
			mx = z[i];
	double s = 0;
	for (size_t i = 0; i < n; i++) {
		p[i] = exp(z[i] - mx);
		s += p[i];
	}
	for (size_t i = 0; i < n; i++)
		p[i] /= s;
	return mx + log(s);
}

static st_status policy_alloc(unsigned hidden, st_policy **out, st_error *err)
{
	*out = NULL;
	if (hidden < 1 || hidden > ST_POLICY_MAX_HIDDEN)
		return st_error_set(err, ST_EINVAL, "policy hidden size %u is outside 1..%d", hidden,
				    ST_POLICY_MAX_HIDDEN);
	st_policy *p = calloc(1, sizeof *p);
	if (!p)
		return st_error_set(err, ST_ENOMEM, "out of memory for a policy");
	p->hidden = hidden;
	size_t end = mlp_layout(&p->actor, ST_SEARCH_NFEAT, hidden, 0);
	p->n_params = mlp_layout(&p->critic, ST_STATE_NFEAT, hidden, end);
	p->theta = calloc(p->n_params, sizeof(double));
	if (!p->theta) {
		size_t n = p->n_params;
		free(p);
		return st_error_set(err, ST_ENOMEM, "out of memory for %zu policy weights", n);
	}
	*out = p;
	return ST_OK;
}

static void init_mlp(st_policy *p, const st_mlp *m, double out_std, st_rng *r)
{
	const size_t H = p->hidden;
	double s1 = 1.0 / sqrt((double)m->in), s2 = 1.0 / sqrt((double)H);
	for (size_t i = 0; i < H * m->in; i++)
		p->theta[m->w1 + i] = s1 * st_rng_normal(r);
	for (size_t i = 0; i < H * H; i++)
		p->theta[m->w2 + i] = s2 * st_rng_normal(r);
	for (size_t i = 0; i < H; i++)
		p->theta[m->w3 + i] = out_std * s2 * st_rng_normal(r);
}

st_status st_policy_new(unsigned hidden, uint64_t seed, st_policy **out, st_error *err)
{
	st_status s = policy_alloc(hidden, out, err);
	if (s)
		return s;
	st_rng r;
	st_rng_seed(&r, seed);
	init_mlp(*out, &(*out)->actor, 0.01, &r);   /* near-uniform first policy */
	init_mlp(*out, &(*out)->critic, 1.0, &r);
	return ST_OK;
}

void st_policy_free(st_policy *p)
{
	if (!p)
		return;
	free(p->theta);
	free(p);
}

/* ---- the policy file --------------------------------------------------------- */

/* Shortest "%.Ng" that reads back to exactly the same double. */
static void format_exact(double v, char *buf, size_t size)
{
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, size, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

static int add_numbers(cJSON *obj, const char *name, const double *v, size_t n)
{
	cJSON *arr = cJSON_AddArrayToObject(obj, name);
	if (!arr)
		return -1;
	char buf[40];
	for (size_t i = 0; i < n; i++) {
		format_exact(v[i], buf, sizeof buf);
		cJSON *item = cJSON_CreateRaw(buf);
		if (!item || !cJSON_AddItemToArray(arr, item)) {
			cJSON_Delete(item);
			return -1;
		}
	}
	return 0;
}

static int add_mlp(cJSON *root, const char *name, const st_policy *p, const st_mlp *m)
{
	cJSON *o = cJSON_AddObjectToObject(root, name);
	const double *t = p->theta;
	const size_t H = p->hidden;
	if (!o || add_numbers(o, "w1", t + m->w1, H * m->in) || add_numbers(o, "b1", t + m->b1, H) ||
	    add_numbers(o, "w2", t + m->w2, H * H) || add_numbers(o, "b2", t + m->b2, H) ||
	    add_numbers(o, "w3", t + m->w3, H) || add_numbers(o, "b3", t + m->b3, 1))
		return -1;
	return 0;
}

static int add_names(cJSON *root, const char *name, const char *const *names, size_t n)
{
	cJSON *arr = cJSON_AddArrayToObject(root, name);
	if (!arr)
		return -1;
	for (size_t i = 0; i < n; i++) {
		cJSON *s = cJSON_CreateString(names[i]);
		if (!s || !cJSON_AddItemToArray(arr, s)) {
			cJSON_Delete(s);
			return -1;
		}
	}
	return 0;
}

st_status st_policy_to_json(const st_policy *p, char **out, st_error *err)
{
	*out = NULL;
	if (!p)
		return st_error_set(err, ST_EINVAL, "no policy to write");
	cJSON *root = cJSON_CreateObject();
	int bad = !root || !cJSON_AddStringToObject(root, "format", ST_POLICY_FORMAT) ||
		  !cJSON_AddNumberToObject(root, "version", ST_POLICY_VERSION) ||
		  !cJSON_AddStringToObject(root, "schema", ST_SEARCH_SCHEMA) ||
		  add_names(root, "features", feature_names, ST_SEARCH_NFEAT) ||
		  add_names(root, "state_features", state_extra_names, ST_STATE_EXTRA) ||
		  !cJSON_AddNumberToObject(root, "hidden", p->hidden) ||
		  !cJSON_AddNumberToObject(root, "trained_steps", (double)p->trained_steps) ||
		  add_mlp(root, "actor", p, &p->actor) || add_mlp(root, "critic", p, &p->critic);
	char *text = bad ? NULL : cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (!text)
		return st_error_set(err, ST_ENOMEM, "out of memory writing a policy");
	*out = text;
	return ST_OK;
}

st_status st_policy_save(const st_policy *p, const char *path, st_error *err)
{
	char *text;
	st_status s = st_policy_to_json(p, &text, err);
	if (s)
		return s;
	size_t len = strlen(text);
	text[len] = '\n';   /* replaces the NUL; we write len + 1 bytes and free */
	s = st_write_file_atomic(path, text, len + 1, err);
	free(text);
	return s;
}

static st_status check_names(const cJSON *root, const char *key, const char *const *names, size_t n,
			     const char *schema, st_error *err)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, key);
	if (!cJSON_IsArray(arr))
		return st_error_set(err, ST_EFORMAT, "policy has no \"%s\" array", key);
	size_t count = (size_t)cJSON_GetArraySize(arr), i = 0;
	const cJSON *item;
	cJSON_ArrayForEach(item, arr) {
		if (!cJSON_IsString(item))
			return st_error_set(err, ST_EFORMAT, "policy %s[%zu] is not a string", key, i);
		if (i < n && strcmp(item->valuestring, names[i]) != 0)
			return st_error_set(err, ST_EUNSUPPORTED,
					    "policy feature schema differs (file '%.60s', this build '%s'): "
					    "%s[%zu] is '%.60s' in the file but '%s' here",
					    schema, ST_SEARCH_SCHEMA, key, i, item->valuestring, names[i]);
		i++;
	}
	if (count != n)
		return st_error_set(err, ST_EUNSUPPORTED,
				    "policy feature schema differs (file '%.60s', this build '%s'): "
				    "the file has %zu %s, this build %zu (first unmatched: '%s')",
				    schema, ST_SEARCH_SCHEMA, count, key, n,
				    count < n ? names[count] : "(extra in the file)");
	return ST_OK;
}

static st_status read_numbers(const cJSON *obj, const char *mlp, const char *key, double *out,
			      size_t n, st_error *err)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!cJSON_IsArray(arr))
		return st_error_set(err, ST_EFORMAT, "policy %s has no \"%s\" array", mlp, key);
	size_t i = 0;
	const cJSON *item;
	cJSON_ArrayForEach(item, arr) {
		if (i >= n)
			break;
		if (!cJSON_IsNumber(item) || !isfinite(item->valuedouble))
			return st_error_set(err, ST_EFORMAT, "policy %s.%s[%zu] is not a finite number",
					    mlp, key, i);
		out[i++] = item->valuedouble;
	}
	size_t count = (size_t)cJSON_GetArraySize(arr);
	if (count != n)
		return st_error_set(err, ST_EFORMAT, "policy %s.%s has %zu numbers, expected %zu", mlp,
				    key, count, n);
	return ST_OK;
}

static st_status read_mlp(const cJSON *root, const char *name, st_policy *p, const st_mlp *m,
			  st_error *err)
{
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, name);
	if (!cJSON_IsObject(o))
		return st_error_set(err, ST_EFORMAT, "policy has no \"%s\" object", name);
	const size_t H = p->hidden;
	double *t = p->theta;
	st_status s;
	if ((s = read_numbers(o, name, "w1", t + m->w1, H * m->in, err)) ||
	    (s = read_numbers(o, name, "b1", t + m->b1, H, err)) ||
	    (s = read_numbers(o, name, "w2", t + m->w2, H * H, err)) ||
	    (s = read_numbers(o, name, "b2", t + m->b2, H, err)) ||
	    (s = read_numbers(o, name, "w3", t + m->w3, H, err)) ||
	    (s = read_numbers(o, name, "b3", t + m->b3, 1, err)))
		return s;
	return ST_OK;
}

static st_status parse_policy(const cJSON *root, st_policy **out, st_error *err)
{
	if (!cJSON_IsObject(root))
		return st_error_set(err, ST_EFORMAT, "policy is not a JSON object");
	const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
	if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, ST_POLICY_FORMAT) != 0)
		return st_error_set(err, ST_EFORMAT, "not a sasstune policy (\"format\" is not \"%s\")",
				    ST_POLICY_FORMAT);
	const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "version");
	if (!cJSON_IsNumber(ver))
		return st_error_set(err, ST_EFORMAT, "policy has no numeric \"version\"");
	if (ver->valuedouble != ST_POLICY_VERSION)
		return st_error_set(err, ST_EUNSUPPORTED, "policy version %g is not supported (this build reads %d)",
				    ver->valuedouble, ST_POLICY_VERSION);
	const cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
	if (!cJSON_IsString(schema))
		return st_error_set(err, ST_EFORMAT, "policy has no \"schema\" string");
	st_status s;
	if ((s = check_names(root, "features", feature_names, ST_SEARCH_NFEAT, schema->valuestring, err)) ||
	    (s = check_names(root, "state_features", state_extra_names, ST_STATE_EXTRA,
			     schema->valuestring, err)))
		return s;
	if (strcmp(schema->valuestring, ST_SEARCH_SCHEMA) != 0)
		return st_error_set(err, ST_EUNSUPPORTED,
				    "policy feature schema '%.60s' differs from this build's '%s' (same names, "
				    "different meaning)", schema->valuestring, ST_SEARCH_SCHEMA);
	const cJSON *hid = cJSON_GetObjectItemCaseSensitive(root, "hidden");
	if (!cJSON_IsNumber(hid) || hid->valuedouble != floor(hid->valuedouble) || hid->valuedouble < 1 ||
	    hid->valuedouble > ST_POLICY_MAX_HIDDEN)
		return st_error_set(err, ST_EFORMAT, "policy \"hidden\" is not an integer in 1..%d",
				    ST_POLICY_MAX_HIDDEN);
	const cJSON *steps = cJSON_GetObjectItemCaseSensitive(root, "trained_steps");
	if (!cJSON_IsNumber(steps) || !(steps->valuedouble >= 0) || steps->valuedouble > 9.007199254740992e15 ||
	    steps->valuedouble != floor(steps->valuedouble))
		return st_error_set(err, ST_EFORMAT, "policy \"trained_steps\" is not a count");
	st_policy *p;
	if ((s = policy_alloc((unsigned)hid->valuedouble, &p, err)))
		return s;
	p->trained_steps = (uint64_t)steps->valuedouble;
	if ((s = read_mlp(root, "actor", p, &p->actor, err)) || (s = read_mlp(root, "critic", p, &p->critic, err))) {
		st_policy_free(p);
		return s;
	}
	*out = p;
	return ST_OK;
}

st_status st_policy_from_json(const char *text, size_t len, st_policy **out, st_error *err)
{
	*out = NULL;
	if (!text)
		return st_error_set(err, ST_EINVAL, "no policy text");
	cJSON *root = cJSON_ParseWithLength(text, len);
	if (!root) {
		const char *at = cJSON_GetErrorPtr();
		size_t off = at && at >= text && at <= text + len ? (size_t)(at - text) : 0;
		return st_error_set(err, ST_EFORMAT, "policy is not valid JSON (near byte %zu)", off);
	}
	st_status s = parse_policy(root, out, err);
	cJSON_Delete(root);
	return s;
}

st_status st_policy_load(const char *path, st_policy **out, st_error *err)
{
	*out = NULL;
	uint8_t *data;
	size_t size;
	st_status s = st_read_file(path, &data, &size, err);
	if (s)
		return s;
	s = st_policy_from_json((const char *)data, size, out, err);
	free(data);
	if (s)
		st_error_wrap(err, "%s", path);
	return s;
}

/* ---- greedy application -------------------------------------------------------- */

st_status st_policy_apply(const st_policy *p, const st_search_env *env, unsigned max_steps,
			  double margin, unsigned *applied, st_error *err)
{
	if (applied)
		*applied = 0;
	if (!p || !env || !env->n_moves || !env->features || !env->apply)
		return st_error_set(err, ST_EINVAL, "st_policy_apply needs a policy and an environment "
				    "with n_moves, features and apply");
	double *h = malloc(2 * p->hidden * sizeof(double));
	if (!h)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	float x[ST_SEARCH_NFEAT];
	st_stop_features(x);
	const double z_stop = st_mlp_forward(p, &p->actor, x, h, h + p->hidden);
	st_status s = ST_OK;
	for (unsigned step = 0; step < max_steps; step++) {
		size_t n = env->n_moves(env->data), best = SIZE_MAX;
		double z_best = -INFINITY;
		for (size_t i = 0; i < n; i++) {
			if ((s = env->features(env->data, i, x, err)))
				goto out;
			if (x[ST_F_REVERTS] > 0.5f)   /* never step straight back */
				continue;
			int finite = 1;
			for (size_t f = 0; f < ST_SEARCH_NFEAT; f++)
				finite &= isfinite(x[f]) != 0;
			if (!finite) {
				s = st_error_set(err, ST_EINVAL, "%s: move %zu has a non-finite feature",
						 env->name ? env->name : "environment", i);
				goto out;
			}
			double z = st_mlp_forward(p, &p->actor, x, h, h + p->hidden);
			if (z > z_best) {
				z_best = z;
				best = i;
			}
		}
		if (best == SIZE_MAX || z_best - z_stop < margin)
			break;
		if ((s = env->apply(env->data, best, err)))
			goto out;
		if (applied)
			(*applied)++;
	}
out:
	free(h);
	return s;
}

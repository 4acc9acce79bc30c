/* PPO's clipped loss with its hand-written gradient, and Adam.
 *
 * For one recorded decision with choices j (legal moves + stop), scores z_j
 * from the shared actor MLP, p = softmax(z), chosen action a, advantage A:
 *   r      = exp(log p_a - logp_old)
 *   L_pg   = -min(r A, clip(r, 1-eps, 1+eps) A)
 *   L_ent  = -c_ent H(p),   H = -sum p_j log p_j
 *   L_v    = c_v 0.5 (V(s) - R)^2
 * dL/dz_j = g (delta_ja - p_j) + c_ent p_j (log p_j + H), where g = -r A when
 * the unclipped term is the minimum, else 0; dL/dV = c_v (V - R).  Each z_j and
 * V then backpropagate through their MLPs (st_mlp_backward). */
#include "search/search_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void st_ppo_work_free(st_ppo_work *w)
{
	free(w->z);
	free(w->h);
	memset(w, 0, sizeof *w);
}

static st_status work_reserve(st_ppo_work *w, size_t n, size_t hidden, st_error *err)
{
	if (n <= w->cap)
		return ST_OK;
	size_t cap = w->cap ? w->cap : 16;
	while (cap < n)
		cap *= 2;
	double *z = realloc(w->z, 2 * cap * sizeof(double));   /* z and p */
	if (!z)
		return st_error_set(err, ST_ENOMEM, "out of memory in PPO");
	w->z = z;
	double *h = realloc(w->h, cap * 2 * hidden * sizeof(double));
	if (!h)
		return st_error_set(err, ST_ENOMEM, "out of memory in PPO");
	w->h = h;
	w->cap = cap;
	return ST_OK;
}

st_status st_ppo_loss(const st_policy *p, const float *feat, const st_ppo_step *steps,
		      const size_t *idx, size_t n, const st_ppo_hyper *hp, st_ppo_work *w,
		      double *loss, double *grad, st_error *err)
{
	const size_t H = p->hidden, F = ST_SEARCH_NFEAT;
	double total = 0, inv = n ? 1.0 / (double)n : 0;
	double h1[ST_POLICY_MAX_HIDDEN], h2[ST_POLICY_MAX_HIDDEN];
	/* The PPO hidden size is capped, and so is this stack use. */
	for (size_t k = 0; k < n; k++) {
		const st_ppo_step *st = &steps[idx[k]];
		st_status s = work_reserve(w, st->n, H, err);
		if (s)
			return s;
		const float *x = feat + st->feat_off;
		double *z = w->z, *pr = w->z + w->cap;
		for (size_t j = 0; j < st->n; j++)
			z[j] = st_mlp_forward(p, &p->actor, x + j * F, w->h + j * 2 * H, w->h + j * 2 * H + H) +
			       (hp->prior ? hp->prior[st->feat_off / F + j] : 0);
		double lse = st_softmax(z, st->n, pr);
		double logp = z[st->action] - lse;
		double ent = 0;
		for (size_t j = 0; j < st->n; j++)
			if (pr[j] > 0)
				ent -= pr[j] * (z[j] - lse);
		double r = exp(logp - st->logp), A = st->adv;
		double rc = r < 1 - hp->clip ? 1 - hp->clip : r > 1 + hp->clip ? 1 + hp->clip : r;
		double unclipped = r * A, clipped = rc * A;
		double pg = -(unclipped <= clipped ? unclipped : clipped);
		double v = st_mlp_forward(p, &p->critic, st->state, h1, h2);
		double dv = v - st->ret;
		total += pg - hp->ent_coef * ent + hp->vf_coef * 0.5 * dv * dv;
		if (!grad)
			continue;
		double g = unclipped <= clipped ? -r * A : 0.0;
		for (size_t j = 0; j < st->n; j++) {
			double lp = z[j] - lse;
			double dz = g * ((j == st->action) - pr[j]) + hp->ent_coef * pr[j] * (lp + ent);
			if (dz != 0)
				st_mlp_backward(p, &p->actor, x + j * F, w->h + j * 2 * H, w->h + j * 2 * H + H,
						dz * inv, grad);
		}
		st_mlp_backward(p, &p->critic, st->state, h1, h2, hp->vf_coef * dv * inv, grad);
	}
	*loss = total * inv;
	return ST_OK;
}

st_status st_adam_init(st_adam *a, size_t n)
{
	a->m = calloc(n, sizeof(double));
	a->v = calloc(n, sizeof(double));
	a->n = n;
	a->t = 0;
	if (!a->m || !a->v) {
		st_adam_free(a);
		return ST_ENOMEM;
	}
	return ST_OK;
}

void st_adam_free(st_adam *a)
{
	free(a->m);
	free(a->v);
	a->m = a->v = NULL;
}

void st_adam_step(st_adam *a, double *theta, double *grad, double lr, double max_norm)
{
	const double b1 = 0.9, b2 = 0.999, eps = 1e-5;
	double norm = 0;
	for (size_t i = 0; i < a->n; i++)
		norm += grad[i] * grad[i];
	norm = sqrt(norm);
	double scale = max_norm > 0 && norm > max_norm ? max_norm / norm : 1.0;
	a->t++;
	double c1 = 1.0 - pow(b1, (double)a->t), c2 = 1.0 - pow(b2, (double)a->t);
	for (size_t i = 0; i < a->n; i++) {
		double g = grad[i] * scale;
		a->m[i] = b1 * a->m[i] + (1 - b1) * g;
		a->v[i] = b2 * a->v[i] + (1 - b2) * g * g;
		theta[i] -= lr * (a->m[i] / c1) / (sqrt(a->v[i] / c2) + eps);
	}
}

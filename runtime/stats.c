/* Median and a seeded bootstrap interval for the median. */
#include "rt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void swap(double *a, double *b)
{
	double t = *a;
	*a = *b;
	*b = t;
}

/* Put the k-th smallest element of v[0..n) at v[k], with v[0..k) <= v[k]
 * (quickselect with a three-way partition; equal values are common here). */
static void select_kth(double *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n;
	while (hi - lo > 1) {
		double pivot = v[lo + (hi - lo) / 2];
		size_t lt = lo, i = lo, gt = hi;
		while (i < gt) {
			if (v[i] < pivot)
				swap(&v[lt++], &v[i++]);
			else if (v[i] > pivot)
				swap(&v[i], &v[--gt]);
			else
				i++;
		}
		if (k < lt)
			hi = lt;
		else if (k >= gt)
			lo = gt;
		else
			return;
	}
}

/* Median of v (reordered in place); n > 0. */
static double median_inplace(double *v, size_t n)
{
	size_t k = n / 2;
	select_kth(v, n, k);
	double hi = v[k];
	if (n % 2)
		return hi;
	double lo = v[0];
	for (size_t i = 1; i < k; i++)
		if (v[i] > lo)
			lo = v[i];
	return (lo + hi) / 2;
}

double st_median(const double *v, size_t n)
{
	if (n == 0)
		return NAN;
	double *t = malloc(n * sizeof *t);
	if (!t)
		return NAN;
	memcpy(t, v, n * sizeof *t);
	double m = median_inplace(t, n);
	free(t);
	return m;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double quantile_sorted(const double *v, size_t n, double q)
{
	double pos = q * (double)(n - 1);
	size_t i = (size_t)pos;
	if (i + 1 >= n)
		return v[n - 1];
	return v[i] + (pos - (double)i) * (v[i + 1] - v[i]);
}

st_status st_bootstrap_median(const double *v, size_t n, unsigned resamples, uint64_t seed, double *median,
			      double *lo, double *hi, st_error *err)
{
	if (n == 0)
		return st_error_set(err, ST_EINVAL, "no samples to summarize");
	for (size_t i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return st_error_set(err, ST_EINVAL, "sample %zu is not a finite number", i);
	if (resamples == 0)
		resamples = 1;
	double *t = malloc(n * sizeof *t), *meds = malloc(resamples * sizeof *meds);
	if (!t || !meds) {
		free(t);
		free(meds);
		return st_error_set(err, ST_ENOMEM, "out of memory");
	}
	st_rt_rng r;
	st_rt_rng_seed(&r, seed);
	for (unsigned b = 0; b < resamples; b++) {
		for (size_t i = 0; i < n; i++)
			t[i] = v[st_rt_rng_next(&r) % n];
		meds[b] = median_inplace(t, n);
	}
	qsort(meds, resamples, sizeof *meds, cmp_double);
	*median = st_median(v, n);
	*lo = quantile_sorted(meds, resamples, 0.025);
	*hi = quantile_sorted(meds, resamples, 0.975);
	free(t);
	free(meds);
	return ST_OK;
}

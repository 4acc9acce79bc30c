/* Data types, seeded input data, buffer comparison, small helpers. */
#include "rt.h"
#include "util/util.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct {
	const char *name;
	const char *alias;
	st_dtype t;
	unsigned size;
} dtypes[] = {
	{"i1", "bool", ST_DT_I1, 1},   {"i8", "int8", ST_DT_I8, 1},     {"i16", "int16", ST_DT_I16, 2},
	{"i32", "int32", ST_DT_I32, 4}, {"i64", "int64", ST_DT_I64, 8}, {"u8", "uint8", ST_DT_U8, 1},
	{"u16", "uint16", ST_DT_U16, 2}, {"u32", "uint32", ST_DT_U32, 4}, {"u64", "uint64", ST_DT_U64, 8},
	{"fp16", "f16", ST_DT_F16, 2}, {"bf16", "bfloat16", ST_DT_BF16, 2}, {"fp32", "f32", ST_DT_F32, 4},
	{"fp64", "f64", ST_DT_F64, 8},
};

unsigned st_rt_dtype_size(st_dtype t)
{
	for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
		if (dtypes[i].t == t)
			return dtypes[i].size;
	return 0;
}

bool st_rt_dtype_is_float(st_dtype t)
{
	return t == ST_DT_F16 || t == ST_DT_BF16 || t == ST_DT_F32 || t == ST_DT_F64;
}

const char *st_rt_dtype_name(st_dtype t)
{
	for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
		if (dtypes[i].t == t)
			return dtypes[i].name;
	return "bytes";
}

st_dtype st_rt_dtype_parse(const char *s)
{
	if (!s)
		return ST_DT_NONE;
	for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
		if (!strcmp(s, dtypes[i].name) || !strcmp(s, dtypes[i].alias))
			return dtypes[i].t;
	if (!strcmp(s, "u1"))
		return ST_DT_I1;
	return ST_DT_NONE;
}

/* ---- half and bfloat16 ---- */
static uint32_t f32_bits(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	return x;
}

static float bits_f32(uint32_t x)
{
	float f;
	memcpy(&f, &x, 4);
	return f;
}

static uint32_t round_shift(uint32_t v, unsigned s)
{
	uint32_t q = v >> s, rem = v & ((1u << s) - 1), half = 1u << (s - 1);
	if (rem > half || (rem == half && (q & 1)))
		q++;
	return q;
}

uint16_t st_rt_f32_to_f16(float f)
{
	uint32_t x = f32_bits(f);
	uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
	uint32_t exp = (x >> 23) & 0xff, mant = x & 0x7fffff;
	if (exp == 0xff)
		return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 | (mant >> 13) : 0));
	int e = (int)exp - 127 + 15;
	if (e >= 31)
		return sign | 0x7c00;
	if (e <= 0) {
		if (e < -10)
			return sign;
		return (uint16_t)(sign | round_shift(mant | 0x800000, (unsigned)(14 - e)));
	}
	/* the carry of rounding may step into the exponent, and up to infinity: both correct */
	return (uint16_t)(sign | round_shift(((uint32_t)e << 23) | mant, 13));
}

float st_rt_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
	if (exp == 0x1f)
		return bits_f32(sign | 0x7f800000 | (mant << 13));
	if (exp == 0) {
		float v = ldexpf((float)mant, -24);
		return sign ? -v : v;
	}
	return bits_f32(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

uint16_t st_rt_f32_to_bf16(float f)
{
	uint32_t x = f32_bits(f);
	if ((x & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((x >> 16) | 0x40);
	return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

float st_rt_bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

/* ---- random numbers: xoshiro256** seeded through splitmix64 ---- */
uint64_t st_rt_mix64(uint64_t x) { return st_splitmix64(&x); }

void st_rt_rng_seed(st_rt_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++) {
		seed = st_rt_mix64(seed);
		r->s[i] = seed;
	}
	if (!(r->s[0] | r->s[1] | r->s[2] | r->s[3]))
		r->s[0] = 1;
}

uint64_t st_rt_rng_next(st_rt_rng *r) { return st_xoshiro256ss(r->s); }

double st_rt_rng_uniform(st_rt_rng *r) { return (double)(st_rt_rng_next(r) >> 11) * 0x1.0p-53; }

double st_rt_rng_normal(st_rt_rng *r)
{
	/* Marsaglia's polar method, one value per call */
	for (;;) {
		double u = 2 * st_rt_rng_uniform(r) - 1, v = 2 * st_rt_rng_uniform(r) - 1, s = u * u + v * v;
		if (s > 0 && s < 1)
			return u * sqrt(-2 * log(s) / s);
	}
}

/* ---- filling buffers ---- */
#define CHUNK_ELEMS 65536u

static double clamp(double v, double lo, double hi)
{
	return v != v ? 0 : v < lo ? lo : v > hi ? hi : v;
}

/* Store v as dtype t; integers are clamped to their range (no undefined casts). */
static void store(uint8_t *dst, st_dtype t, double v)
{
	switch (t) {
	case ST_DT_I8: case ST_DT_I16: case ST_DT_I32: case ST_DT_I64: {
		unsigned bits = 8 * st_rt_dtype_size(t);
		v = clamp(v, -ldexp(1, (int)bits - 1), ldexp(1, (int)bits - 1) - (bits == 64 ? 1024 : 1));
		break;
	}
	case ST_DT_U8: case ST_DT_U16: case ST_DT_U32: case ST_DT_U64: case ST_DT_NONE: {
		unsigned bits = t == ST_DT_NONE ? 8 : 8 * st_rt_dtype_size(t);
		v = clamp(v, 0, ldexp(1, (int)bits) - (bits == 64 ? 2048 : 1));
		break;
	}
	default: break;
	}
	switch (t) {
	case ST_DT_F16: { uint16_t h = st_rt_f32_to_f16((float)v); memcpy(dst, &h, 2); break; }
	case ST_DT_BF16: { uint16_t h = st_rt_f32_to_bf16((float)v); memcpy(dst, &h, 2); break; }
	case ST_DT_F32: { float f = (float)v; memcpy(dst, &f, 4); break; }
	case ST_DT_F64: memcpy(dst, &v, 8); break;
	case ST_DT_I1: *dst = v != 0; break;
	case ST_DT_I8: { int8_t i = (int8_t)v; memcpy(dst, &i, 1); break; }
	case ST_DT_I16: { int16_t i = (int16_t)v; memcpy(dst, &i, 2); break; }
	case ST_DT_I32: { int32_t i = (int32_t)v; memcpy(dst, &i, 4); break; }
	case ST_DT_I64: { int64_t i = (int64_t)v; memcpy(dst, &i, 8); break; }
	case ST_DT_U8: *dst = (uint8_t)v; break;
	case ST_DT_U16: { uint16_t i = (uint16_t)v; memcpy(dst, &i, 2); break; }
	case ST_DT_U32: { uint32_t i = (uint32_t)v; memcpy(dst, &i, 4); break; }
	case ST_DT_U64: { uint64_t i = (uint64_t)v; memcpy(dst, &i, 8); break; }
	case ST_DT_NONE: *dst = (uint8_t)v; break;
	}
}

/* One chunk of CHUNK_ELEMS elements; its own random stream, so the result does
 * not depend on how chunks are spread over threads. */
static void fill_chunk(const st_param *p, uint64_t seed, unsigned set, unsigned index, uint64_t chunk,
		       uint8_t *dst, uint64_t elems)
{
	st_dtype t = p->dtype;
	unsigned es = t == ST_DT_NONE ? 1 : st_rt_dtype_size(t);
	st_rt_rng r;
	st_rt_rng_seed(&r, st_rt_mix64(seed ^ st_rt_mix64(((uint64_t)set << 48) ^ ((uint64_t)index << 32) ^ chunk)));
	uint64_t first = chunk * CHUNK_ELEMS;
	for (uint64_t i = 0; i < elems; i++) {
		double v = 0;
		switch (p->init) {
		case ST_INIT_ZEROS: v = 0; break;
		case ST_INIT_ONES: v = 1; break;
		case ST_INIT_FILL: v = p->a; break;
		case ST_INIT_RANDN: v = p->a + p->b * st_rt_rng_normal(&r); break;
		case ST_INIT_UNIFORM: v = p->a + (p->b - p->a) * st_rt_rng_uniform(&r); break;
		case ST_INIT_RANDINT: v = floor(p->a + (p->b - p->a) * st_rt_rng_uniform(&r)); break;
		case ST_INIT_ARANGE: v = p->a + p->b * (double)(first + i); break;
		case ST_INIT_RANDBYTES: {
			uint64_t w = st_rt_rng_next(&r);
			memcpy(dst + i * es, &w, es <= 8 ? es : 8);
			continue;
		}
		case ST_INIT_FILE: return;
		}
		store(dst + i * es, t, v);
	}
}

struct fill_job {
	const st_param *p;
	uint64_t seed, nchunks, elems;
	unsigned set, index, es;
	uint8_t *dst;
	atomic_uint_fast64_t next;
};

static void *fill_worker(void *arg)
{
	struct fill_job *j = arg;
	for (;;) {
		uint64_t c = atomic_fetch_add(&j->next, 1);
		if (c >= j->nchunks)
			return NULL;
		uint64_t n = j->elems - c * CHUNK_ELEMS;
		if (n > CHUNK_ELEMS)
			n = CHUNK_ELEMS;
		fill_chunk(j->p, j->seed, j->set, j->index, c, j->dst + c * CHUNK_ELEMS * j->es, n);
	}
}

st_status st_rt_param_fill(const st_param *p, uint64_t seed, unsigned set, unsigned index, uint8_t *dst,
			st_error *err)
{
	char label[32];
	snprintf(label, sizeof label, "params[%u]", index);
	return st_rt_buffer_fill(p, seed, set, index, label, dst, err);
}

st_status st_rt_buffer_fill(const st_param *p, uint64_t seed, unsigned set, unsigned index, const char *label,
			 uint8_t *dst, st_error *err)
{
	if (p->kind != ST_P_PTR || p->bytes == 0)
		return ST_OK;
	if (p->init == ST_INIT_FILE) {
		uint8_t *data;
		size_t size;
		st_status rc = st_read_file(p->file, &data, &size, err);
		if (rc != ST_OK)
			return rc;
		if (size != p->bytes) {
			free(data);
			return st_error_set(err, ST_EFORMAT, "%s.file: %s has %zu bytes, expected %llu", label,
					    p->file, size, (unsigned long long)p->bytes);
		}
		memcpy(dst, data, size);
		free(data);
		return ST_OK;
	}
	unsigned es = p->dtype == ST_DT_NONE ? 1 : st_rt_dtype_size(p->dtype);
	struct fill_job j = {.p = p, .seed = seed, .set = set, .index = index, .es = es, .dst = dst};
	j.elems = p->bytes / es;
	j.nchunks = (j.elems + CHUNK_ELEMS - 1) / CHUNK_ELEMS;
	atomic_init(&j.next, 0);
	memset(dst + j.elems * es, 0, p->bytes - j.elems * es);
	pthread_t th[16];
	unsigned nth = 0, want = j.nchunks > 16 ? 16 : (unsigned)j.nchunks;
	for (unsigned i = 1; i < want; i++)
		if (pthread_create(&th[nth], NULL, fill_worker, &j) == 0)
			nth++;
	fill_worker(&j);
	for (unsigned i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	return ST_OK;
}

/* ---- comparing buffers ---- */
static double load(const uint8_t *p, st_dtype t)
{
	switch (t) {
	case ST_DT_F16: { uint16_t h; memcpy(&h, p, 2); return st_rt_f16_to_f32(h); }
	case ST_DT_BF16: { uint16_t h; memcpy(&h, p, 2); return st_rt_bf16_to_f32(h); }
	case ST_DT_F32: { float f; memcpy(&f, p, 4); return f; }
	case ST_DT_F64: { double d; memcpy(&d, p, 8); return d; }
	default: return 0;
	}
}

static void describe_elem(char *out, size_t n, const uint8_t *p, st_dtype t)
{
	if (st_rt_dtype_is_float(t)) {
		snprintf(out, n, "%.9g", load(p, t));
		return;
	}
	unsigned es = t == ST_DT_NONE ? 1 : st_rt_dtype_size(t);
	uint64_t v = 0;
	for (unsigned i = 0; i < es; i++)
		v |= (uint64_t)p[i] << (8 * i);
	snprintf(out, n, "0x%0*llx", (int)(2 * es), (unsigned long long)v);
}

bool st_rt_buffers_match(const uint8_t *ref, const uint8_t *got, uint64_t bytes, st_dtype dt, bool exact,
		      double tol, char *why, size_t why_len)
{
	unsigned es = dt == ST_DT_NONE ? 1 : st_rt_dtype_size(dt);
	uint64_t elems = bytes / es;
	if (!exact && st_rt_dtype_is_float(dt)) {
		double num = 0, den = 0;
		uint64_t nan_bad = 0, first_nan = 0;
		for (uint64_t i = 0; i < elems; i++) {
			double r = load(ref + i * es, dt), g = load(got + i * es, dt);
			if (isnan(r) || isnan(g)) {
				if (!(isnan(r) && isnan(g)) && nan_bad++ == 0)
					first_nan = i;
				continue;
			}
			if (isinf(r) || isinf(g)) {
				if (r != g && nan_bad++ == 0)
					first_nan = i;
				continue;
			}
			num += (g - r) * (g - r);
			den += r * r;
		}
		if (nan_bad) {
			snprintf(why, why_len, "%llu of %llu %s elements are NaN or infinite where the reference is not (or the other way), first at element %llu",
				 (unsigned long long)nan_bad, (unsigned long long)elems, st_rt_dtype_name(dt),
				 (unsigned long long)first_nan);
			return false;
		}
		double rel = den > 0 ? sqrt(num / den) : (num > 0 ? INFINITY : 0);
		if (rel > tol) {
			snprintf(why, why_len, "relative L2 error %.3g exceeds the tolerance %.3g over %llu %s elements",
				 rel, tol, (unsigned long long)elems, st_rt_dtype_name(dt));
			return false;
		}
		return true;
	}
	if (memcmp(ref, got, bytes) == 0)
		return true;
	uint64_t diff = 0, first = 0;
	for (uint64_t i = 0; i < elems; i++)
		if (memcmp(ref + i * es, got + i * es, es) != 0 && diff++ == 0)
			first = i;
	if (diff == 0) { /* only the tail bytes after the last whole element differ */
		first = elems;
		diff = 1;
	}
	char r[48] = "-", g[48] = "-";
	if (first < elems) {
		describe_elem(r, sizeof r, ref + first * es, dt);
		describe_elem(g, sizeof g, got + first * es, dt);
	}
	snprintf(why, why_len, "%llu of %llu %s elements differ, first at element %llu (reference %s, got %s)",
		 (unsigned long long)diff, (unsigned long long)elems, st_rt_dtype_name(dt), (unsigned long long)first,
		 r, g);
	return false;
}

uint64_t st_rt_hash64(const void *data, size_t n, uint64_t h)
{
	const uint8_t *p = data;
	h ^= 0xcbf29ce484222325ull ^ n;
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		h = (h ^ st_rt_mix64(w)) * 0x100000001b3ull;
		p += 8;
		n -= 8;
	}
	while (n--)
		h = (h ^ *p++) * 0x100000001b3ull;
	return st_rt_mix64(h);
}

double st_rt_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

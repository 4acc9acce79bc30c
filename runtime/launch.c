/* Launch specs (launch.json): parsing and validation.  The schema is in
 * docs/runtime.md; every error names the field it is about. */
#include "rt.h"

#include <cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_PARAMS 1024
#define MAX_PARAM_SPACE 32764u      /* kernel parameter space on sm_70+ with CUDA 12.1+ */
#define MAX_BUFFER (1ull << 40)     /* 1 TiB: anything larger is a typo */
#define TENSORMAP_BYTES 128u

typedef struct ctx {
	st_error *err;
	char field[96]; /* e.g. "params[3]" */
} ctx;

static st_status fail(ctx *c, const char *sub, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static st_status fail(ctx *c, const char *sub, const char *fmt, ...)
{
	char msg[ST_ERROR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	const char *dot = c->field[0] && sub && sub[0] && sub[0] != '[' ? "." : "";
	if (!c->field[0] && (!sub || !sub[0]))
		return st_error_set(c->err, ST_EFORMAT, "%s", msg);
	return st_error_set(c->err, ST_EFORMAT, "%s%s%s: %s", c->field, dot, sub ? sub : "", msg);
}

static const cJSON *get(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return v && !cJSON_IsNull(v) ? v : NULL;
}

/* Unknown or repeated keys are errors (they are nearly always typos). */
static st_status check_fields(ctx *c, const cJSON *obj, const char *const *allowed)
{
	for (const cJSON *it = obj->child; it; it = it->next) {
		bool ok = false;
		for (size_t i = 0; allowed[i]; i++)
			ok |= !strcmp(it->string, allowed[i]);
		if (!strcmp(it->string, "note") || !strcmp(it->string, "comment"))
			ok = true;
		if (!ok)
			return fail(c, it->string, "unknown field");
		for (const cJSON *o = obj->child; o != it; o = o->next)
			if (!strcmp(o->string, it->string))
				return fail(c, it->string, "appears twice");
	}
	return ST_OK;
}

static st_status get_u64(ctx *c, const cJSON *obj, const char *key, bool required, uint64_t lo, uint64_t hi,
			 uint64_t *out)
{
	const cJSON *v = get(obj, key);
	if (!v)
		return required ? fail(c, key, "missing") : ST_OK;
	double d = v->valuedouble;
	if (!cJSON_IsNumber(v) || d != floor(d) || d < (double)lo || d > (double)hi)
		return fail(c, key, "expected an integer from %llu to %llu", (unsigned long long)lo,
			    (unsigned long long)hi);
	*out = (uint64_t)d;
	return ST_OK;
}

static st_status get_f64(ctx *c, const cJSON *obj, const char *key, double *out)
{
	const cJSON *v = get(obj, key);
	if (!v)
		return ST_OK;
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
		return fail(c, key, "expected a finite number");
	*out = v->valuedouble;
	return ST_OK;
}

static st_status get_dims(ctx *c, const cJSON *obj, const char *key, unsigned out[3], const unsigned max[3])
{
	const cJSON *v = get(obj, key);
	out[0] = out[1] = out[2] = 1;
	if (!v)
		return fail(c, key, "missing");
	int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : 0;
	if (n < 1 || n > 3)
		return fail(c, key, "expected an array of 1 to 3 positive integers");
	for (int i = 0; i < n; i++) {
		const cJSON *e = cJSON_GetArrayItem(v, i);
		double d = e->valuedouble;
		if (!cJSON_IsNumber(e) || d != floor(d) || d < 1 || d > max[i])
			return fail(c, key, "element %d: expected an integer from 1 to %u", i, max[i]);
		out[i] = (unsigned)d;
	}
	return ST_OK;
}

/* Paths in the spec are relative to the spec's folder. */
static char *resolve(const char *base, const char *path)
{
	if (path[0] == '/' || !base || !base[0])
		return strdup(path);
	size_t n = strlen(base) + strlen(path) + 2;
	char *s = malloc(n);
	if (s)
		snprintf(s, n, "%s/%s", base, path);
	return s;
}

static int hexval(char ch)
{
	return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
		: ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
}

/* ---- scalars ---- */
static st_status parse_scalar(ctx *c, const cJSON *o, st_param *p)
{
	static const char *const fields[] = {"kind", "value", "name", NULL};
	st_status rc = check_fields(c, o, fields);
	if (rc != ST_OK)
		return rc;
	p->size = st_rt_dtype_size(p->dtype);
	p->value = calloc(1, 8);
	if (!p->value)
		return st_error_set(c->err, ST_ENOMEM, "out of memory");
	const cJSON *v = get(o, "value");
	if (!v)
		return fail(c, "value", "missing");
	if (st_rt_dtype_is_float(p->dtype)) {
		double d;
		if (cJSON_IsNumber(v)) {
			d = v->valuedouble;
		} else if (cJSON_IsString(v)) { /* "nan", "inf", "-inf", "0x1p-3" */
			char *end;
			errno = 0;
			d = strtod(v->valuestring, &end);
			if (end == v->valuestring || *end)
				return fail(c, "value", "'%s' is not a number", v->valuestring);
		} else {
			return fail(c, "value", "expected a number");
		}
		switch (p->dtype) {
		case ST_DT_F16: { uint16_t h = st_rt_f32_to_f16((float)d); memcpy(p->value, &h, 2); break; }
		case ST_DT_BF16: { uint16_t h = st_rt_f32_to_bf16((float)d); memcpy(p->value, &h, 2); break; }
		case ST_DT_F32: { float f = (float)d; memcpy(p->value, &f, 4); break; }
		default: memcpy(p->value, &d, 8); break;
		}
		return ST_OK;
	}
	bool is_signed = p->dtype == ST_DT_I8 || p->dtype == ST_DT_I16 || p->dtype == ST_DT_I32 ||
			 p->dtype == ST_DT_I64;
	unsigned bits = p->dtype == ST_DT_I1 ? 1 : 8 * p->size;
	uint64_t u = 0;
	int64_t s = 0;
	bool neg = false;
	if (cJSON_IsBool(v)) {
		u = cJSON_IsTrue(v);
	} else if (cJSON_IsNumber(v)) {
		double d = v->valuedouble;
		if (d != floor(d) || fabs(d) > 9007199254740992.0)
			return fail(c, "value", "expected an integer (give 64-bit values beyond 2^53 as a string)");
		neg = d < 0;
		if (neg)
			s = (int64_t)d;
		else
			u = (uint64_t)d;
	} else if (cJSON_IsString(v)) {
		const char *str = v->valuestring;
		char *end;
		errno = 0;
		neg = str[0] == '-';
		if (neg)
			s = strtoll(str, &end, 0);
		else
			u = strtoull(str, &end, 0);
		if (end == str || *end || errno == ERANGE)
			return fail(c, "value", "'%s' is not a 64-bit integer", str);
	} else {
		return fail(c, "value", "expected an integer");
	}
	if (neg) {
		if (!is_signed)
			return fail(c, "value", "negative value for an unsigned %s", st_rt_dtype_name(p->dtype));
		if (bits < 64 && s < -(int64_t)(1ull << (bits - 1)))
			return fail(c, "value", "%lld does not fit in %s", (long long)s, st_rt_dtype_name(p->dtype));
		u = (uint64_t)s;
	} else {
		uint64_t max = bits == 64 ? (is_signed ? (uint64_t)INT64_MAX : UINT64_MAX)
					  : (is_signed ? (1ull << (bits - 1)) - 1 : (1ull << bits) - 1);
		if (u > max)
			return fail(c, "value", "%llu does not fit in %s", (unsigned long long)u,
				    st_rt_dtype_name(p->dtype));
	}
	for (unsigned i = 0; i < p->size; i++)
		p->value[i] = (uint8_t)(u >> (8 * i));
	return ST_OK;
}

/* ---- raw by-value bytes ---- */
static st_status parse_bytes(ctx *c, const cJSON *o, const char *base, st_param *p)
{
	static const char *const fields[] = {"kind", "hex", "file", "size", "name", NULL};
	st_status rc = check_fields(c, o, fields);
	if (rc != ST_OK)
		return rc;
	const cJSON *hex = get(o, "hex"), *file = get(o, "file");
	if (!!hex == !!file)
		return fail(c, hex ? "file" : "hex", hex ? "give either hex or file, not both" : "missing (or give file)");
	if (hex) {
		if (!cJSON_IsString(hex))
			return fail(c, "hex", "expected a string of hex digits");
		size_t n = strlen(hex->valuestring);
		if (n == 0 || n % 2 || n / 2 > MAX_PARAM_SPACE)
			return fail(c, "hex", "expected an even number of hex digits, at most %u bytes", MAX_PARAM_SPACE);
		p->size = (uint32_t)(n / 2);
		if (!(p->value = malloc(p->size)))
			return st_error_set(c->err, ST_ENOMEM, "out of memory");
		for (size_t i = 0; i < p->size; i++) {
			int hi = hexval(hex->valuestring[2 * i]), lo = hexval(hex->valuestring[2 * i + 1]);
			if (hi < 0 || lo < 0)
				return fail(c, "hex", "'%c%c' is not a hex byte", hex->valuestring[2 * i],
					    hex->valuestring[2 * i + 1]);
			p->value[i] = (uint8_t)(hi << 4 | lo);
		}
	} else {
		if (!cJSON_IsString(file) || !file->valuestring[0])
			return fail(c, "file", "expected a path");
		char *path = resolve(base, file->valuestring);
		if (!path)
			return st_error_set(c->err, ST_ENOMEM, "out of memory");
		size_t size;
		st_error ferr = {0};
		rc = st_read_file(path, &p->value, &size, &ferr);
		free(path);
		if (rc != ST_OK)
			return fail(c, "file", "%s", ferr.msg);
		if (size == 0 || size > MAX_PARAM_SPACE)
			return fail(c, "file", "%zu bytes; expected 1 to %u", size, MAX_PARAM_SPACE);
		p->size = (uint32_t)size;
	}
	uint64_t want = p->size;
	if ((rc = get_u64(c, o, "size", false, 1, MAX_PARAM_SPACE, &want)) != ST_OK)
		return rc;
	if (want != p->size)
		return fail(c, "size", "says %llu bytes but the data has %u", (unsigned long long)want, p->size);
	return ST_OK;
}

/* ---- device buffers ---- */
static const struct {
	const char *name;
	st_init init;
} inits[] = {
	{"randn", ST_INIT_RANDN}, {"normal", ST_INIT_RANDN}, {"rand", ST_INIT_UNIFORM},
	{"uniform", ST_INIT_UNIFORM}, {"randint", ST_INIT_RANDINT}, {"zeros", ST_INIT_ZEROS},
	{"ones", ST_INIT_ONES}, {"fill", ST_INIT_FILL}, {"arange", ST_INIT_ARANGE},
	{"randbytes", ST_INIT_RANDBYTES},
};

static st_status parse_init(ctx *c, const cJSON *v, st_param *p)
{
	const char *name = NULL;
	const cJSON *obj = NULL;
	if (cJSON_IsString(v)) {
		name = v->valuestring;
	} else if (cJSON_IsObject(v)) {
		static const char *const fields[] = {"dist", "mean", "std", "low", "high", "value", "start", "step", NULL};
		size_t len = strlen(c->field);
		snprintf(c->field + len, sizeof c->field - len, ".init");
		st_status rc = check_fields(c, v, fields);
		c->field[len] = 0;
		if (rc != ST_OK)
			return rc;
		const cJSON *d = get(v, "dist");
		if (!d || !cJSON_IsString(d))
			return fail(c, "init.dist", "expected one of randn, uniform, randint, zeros, ones, fill, arange, randbytes");
		name = d->valuestring;
		obj = v;
	} else {
		return fail(c, "init", "expected a distribution name or an object with \"dist\"");
	}
	bool found = false;
	for (size_t i = 0; i < sizeof inits / sizeof inits[0]; i++)
		if (!strcmp(name, inits[i].name)) {
			p->init = inits[i].init;
			found = true;
		}
	if (!found)
		return fail(c, "init", "unknown distribution '%s' (expected randn, uniform, randint, zeros, ones, fill, arange or randbytes)", name);
	bool fl = st_rt_dtype_is_float(p->dtype), in = p->dtype != ST_DT_NONE && !fl;
	switch (p->init) {
	case ST_INIT_RANDN:
	case ST_INIT_UNIFORM:
		if (!fl)
			return fail(c, "init", "%s needs a floating-point dtype", name);
		break;
	case ST_INIT_RANDINT:
		if (!fl && !in)
			return fail(c, "init", "randint needs a dtype");
		break;
	case ST_INIT_ONES:
	case ST_INIT_FILL:
	case ST_INIT_ARANGE:
		if (p->dtype == ST_DT_NONE)
			return fail(c, "init", "%s needs a dtype", name);
		break;
	default:
		break;
	}
	p->a = 0;
	p->b = p->init == ST_INIT_RANDINT ? 16 : 1;
	if (!obj) {
		if (p->init == ST_INIT_FILL)
			return fail(c, "init", "fill needs a value: {\"dist\": \"fill\", \"value\": V}");
		return ST_OK;
	}
	ctx sub = *c;
	size_t len = strlen(sub.field);
	snprintf(sub.field + len, sizeof sub.field - len, ".init");
	st_status rc = ST_OK;
	switch (p->init) {
	case ST_INIT_RANDN:
		if ((rc = get_f64(&sub, obj, "mean", &p->a)) == ST_OK)
			rc = get_f64(&sub, obj, "std", &p->b);
		break;
	case ST_INIT_UNIFORM:
	case ST_INIT_RANDINT:
		if ((rc = get_f64(&sub, obj, "low", &p->a)) == ST_OK)
			rc = get_f64(&sub, obj, "high", &p->b);
		if (rc == ST_OK && !(p->b > p->a))
			rc = fail(&sub, "high", "must be greater than low");
		break;
	case ST_INIT_FILL:
		if (!get(obj, "value"))
			return fail(&sub, "value", "missing");
		rc = get_f64(&sub, obj, "value", &p->a);
		break;
	case ST_INIT_ARANGE:
		if ((rc = get_f64(&sub, obj, "start", &p->a)) == ST_OK)
			rc = get_f64(&sub, obj, "step", &p->b);
		break;
	default:
		break;
	}
	return rc;
}

/* A ptr param, or (hidden) an entry of "buffers": the same fields minus kind. */
static st_status parse_ptr(ctx *c, const cJSON *o, const char *base, bool hidden, st_param *p)
{
	static const char *const fields[] = {"kind", "bytes", "dtype", "init", "file", "verify", "name", NULL};
	st_status rc = check_fields(c, o, hidden ? fields + 1 : fields);
	if (rc != ST_OK)
		return rc;
	const cJSON *nm = get(o, "name");
	if (nm && cJSON_IsString(nm)) { /* kept for messages about the buffer: one printable line */
		if (!(p->name = strdup(nm->valuestring)))
			return st_error_set(c->err, ST_ENOMEM, "out of memory");
		for (char *q = p->name; *q; q++)
			if ((unsigned char)*q < 0x20 || *q == 0x7f)
				*q = '?';
	} else if (nm && hidden) {
		return fail(c, "name", "expected a string");
	}
	const cJSON *dt = get(o, "dtype"), *init = get(o, "init"), *file = get(o, "file"), *ver = get(o, "verify");
	if (dt) {
		if (!cJSON_IsString(dt) || (p->dtype = st_rt_dtype_parse(dt->valuestring)) == ST_DT_NONE)
			return fail(c, "dtype", "unknown dtype%s%s%s (expected fp16, bf16, fp32, fp64, i1, i8, i16, i32, i64, u8, u16, u32 or u64)",
				    cJSON_IsString(dt) ? " '" : "", cJSON_IsString(dt) ? dt->valuestring : "",
				    cJSON_IsString(dt) ? "'" : "");
	}
	bool have_bytes = get(o, "bytes") != NULL;
	if ((rc = get_u64(c, o, "bytes", !file, 0, MAX_BUFFER, &p->bytes)) != ST_OK)
		return rc;
	if (hidden && have_bytes && p->bytes == 0)
		return fail(c, "bytes", "0: a buffer needs at least 1 byte (only a ptr param can be null)");
	p->verify = true;
	if (ver) {
		if (!cJSON_IsBool(ver))
			return fail(c, "verify", "expected true or false");
		p->verify = cJSON_IsTrue(ver);
	}
	if (init && file)
		return fail(c, "file", "give either init or file, not both");
	if (file) {
		if (!cJSON_IsString(file) || !file->valuestring[0])
			return fail(c, "file", "expected a path");
		if (!(p->file = resolve(base, file->valuestring)))
			return st_error_set(c->err, ST_ENOMEM, "out of memory");
		struct stat st;
		if (stat(p->file, &st) != 0)
			return fail(c, "file", "%s: %s", p->file, strerror(errno));
		if (!S_ISREG(st.st_mode))
			return fail(c, "file", "%s: not a regular file", p->file);
		if (!have_bytes)
			p->bytes = (uint64_t)st.st_size;
		else if ((uint64_t)st.st_size != p->bytes)
			return fail(c, "file", "%s has %lld bytes but bytes says %llu", p->file, (long long)st.st_size,
				    (unsigned long long)p->bytes);
		if (p->bytes == 0)
			return fail(c, "file", "%s is empty", p->file);
		p->init = ST_INIT_FILE;
	} else if (init) {
		if (p->bytes == 0)
			return fail(c, "init", "a null pointer (bytes 0) takes no init");
		if ((rc = parse_init(c, init, p)) != ST_OK)
			return rc;
	} else {
		p->init = st_rt_dtype_is_float(p->dtype) ? ST_INIT_RANDN
			: p->dtype != ST_DT_NONE ? ST_INIT_RANDINT : ST_INIT_RANDBYTES;
		p->a = 0;
		p->b = p->init == ST_INIT_RANDINT ? 16 : 1;
	}
	unsigned es = st_rt_dtype_size(p->dtype);
	if (es > 1 && p->bytes % es)
		return fail(c, "bytes", "%llu is not a multiple of the %s element size (%u)",
			    (unsigned long long)p->bytes, st_rt_dtype_name(p->dtype), es);
	return ST_OK;
}

/* ---- TMA descriptors ---- */
static st_status get_u64_array(ctx *c, const cJSON *o, const char *key, bool required, uint64_t lo, uint64_t hi,
			       uint64_t *out, uint32_t *n)
{
	const cJSON *v = get(o, key);
	if (!v)
		return required ? fail(c, key, "missing") : ST_OK;
	int len = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : 0;
	if (len < 1 || len > ST_TMAP_MAX_RANK)
		return fail(c, key, "expected an array of 1 to %d integers", ST_TMAP_MAX_RANK);
	for (int i = 0; i < len; i++) {
		const cJSON *e = cJSON_GetArrayItem(v, i);
		double d = e->valuedouble;
		if (!cJSON_IsNumber(e) || d != floor(d) || d < (double)lo || d > (double)hi)
			return fail(c, key, "element %d: expected an integer from %llu to %llu", i,
				    (unsigned long long)lo, (unsigned long long)hi);
		out[i] = (uint64_t)d;
	}
	*n = (uint32_t)len;
	return ST_OK;
}

static st_status get_enum(ctx *c, const cJSON *o, const char *key, const char *const *names, uint32_t count,
			  uint32_t *out)
{
	const cJSON *v = get(o, key);
	if (!v)
		return ST_OK;
	if (cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) && v->valuedouble >= 0 &&
	    v->valuedouble < count) {
		*out = (uint32_t)v->valuedouble;
		return ST_OK;
	}
	for (uint32_t i = 0; cJSON_IsString(v) && i < count; i++)
		if (!strcmp(v->valuestring, names[i])) {
			*out = i;
			return ST_OK;
		}
	char list[160] = "";
	for (uint32_t i = 0; i < count; i++)
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", names[i]);
	return fail(c, key, "expected one of %s (or 0 to %u)", list, count - 1);
}

static st_status parse_tensormap(ctx *c, const cJSON *o, st_param *p)
{
	static const char *const fields[] = {"kind", "tensor", "buffer", "dtype", "shape", "strides", "box",
					     "element_strides", "swizzle", "interleave", "l2_promotion", "oob_fill",
					     "name", NULL};
	static const char *const swz[] = {"none", "32B", "64B", "128B"};
	static const char *const itl[] = {"none", "16B", "32B"};
	static const char *const l2p[] = {"none", "64B", "128B", "256B"};
	static const char *const oob[] = {"none", "nan"};
	st_status rc = check_fields(c, o, fields);
	if (rc != ST_OK)
		return rc;
	p->size = TENSORMAP_BYTES;
	const cJSON *dt = get(o, "dtype");
	if (!dt || !cJSON_IsString(dt) || (p->dtype = st_rt_dtype_parse(dt->valuestring)) == ST_DT_NONE ||
	    p->dtype == ST_DT_I1 || p->dtype == ST_DT_I8 || p->dtype == ST_DT_I16 || p->dtype == ST_DT_U32)
		return fail(c, "dtype", "expected one of u8, u16, i32, u64, i64, fp16, bf16, fp32, fp64");
	uint64_t t = 0, tmp[ST_TMAP_MAX_RANK];
	uint32_t n_strides = 0, n_box = 0, n_es = 0;
	/* over a ptr param ("tensor") or over a hidden buffer ("buffer"): exactly one */
	const cJSON *tensor = get(o, "tensor"), *buffer = get(o, "buffer");
	if (tensor && buffer)
		return fail(c, "buffer", "give either tensor or buffer, not both");
	if (!tensor && !buffer)
		return fail(c, "tensor", "missing (or give buffer)");
	p->in_buffers = buffer != NULL;
	if ((rc = get_u64(c, o, p->in_buffers ? "buffer" : "tensor", true, 0, MAX_PARAMS - 1, &t)) != ST_OK)
		return rc;
	p->tensor = (uint32_t)t;
	if ((rc = get_u64_array(c, o, "shape", true, 1, 1ull << 32, p->shape, &p->rank)) != ST_OK ||
	    (rc = get_u64_array(c, o, "strides", true, 1, 1ull << 40, p->strides, &n_strides)) != ST_OK ||
	    (rc = get_u64_array(c, o, "box", true, 1, 256, tmp, &n_box)) != ST_OK)
		return rc;
	if (n_strides != p->rank)
		return fail(c, "strides", "has %u entries but shape has %u", n_strides, p->rank);
	if (n_box != p->rank)
		return fail(c, "box", "has %u entries but shape has %u", n_box, p->rank);
	for (uint32_t i = 0; i < p->rank; i++) {
		p->box[i] = (uint32_t)tmp[i];
		p->elem_strides[i] = 1;
	}
	if (p->strides[p->rank - 1] != 1)
		return fail(c, "strides", "the innermost stride must be 1 element");
	if ((rc = get_u64_array(c, o, "element_strides", false, 1, 8, tmp, &n_es)) != ST_OK)
		return rc;
	if (n_es && n_es != p->rank)
		return fail(c, "element_strides", "has %u entries but shape has %u", n_es, p->rank);
	for (uint32_t i = 0; i < n_es; i++)
		p->elem_strides[i] = (uint32_t)tmp[i];
	p->l2_promotion = 2;
	if ((rc = get_enum(c, o, "swizzle", swz, 4, &p->swizzle)) != ST_OK ||
	    (rc = get_enum(c, o, "interleave", itl, 3, &p->interleave)) != ST_OK ||
	    (rc = get_enum(c, o, "l2_promotion", l2p, 4, &p->l2_promotion)) != ST_OK ||
	    (rc = get_enum(c, o, "oob_fill", oob, 2, &p->oob_fill)) != ST_OK)
		return rc;
	return ST_OK;
}

static st_status check_tensormap(ctx *c, const st_launch *l, const st_param *p)
{
	const st_param *buf;
	char what[32];
	if (p->in_buffers) {
		if (p->tensor >= l->nbuffers)
			return fail(c, "buffer", "%u is not an index into buffers (the spec has %zu)", p->tensor, l->nbuffers);
		buf = &l->buffers[p->tensor];
		snprintf(what, sizeof what, "buffers[%u]", p->tensor);
	} else {
		if (p->tensor >= l->nparams || l->params[p->tensor].kind != ST_P_PTR || l->params[p->tensor].bytes == 0)
			return fail(c, "tensor", "%u is not the index of a non-null ptr param", p->tensor);
		buf = &l->params[p->tensor];
		snprintf(what, sizeof what, "params[%u]", p->tensor);
	}
	uint64_t es = st_rt_dtype_size(p->dtype), last = 0;
	for (uint32_t i = 0; i < p->rank; i++) {
		if (p->shape[i] - 1 > (UINT64_MAX / 2) / p->strides[i])
			return fail(c, "shape", "too large");
		last += (p->shape[i] - 1) * p->strides[i];
	}
	if ((last + 1) > buf->bytes / es)
		return fail(c, "shape", "spans %llu bytes but %s has only %llu",
			    (unsigned long long)((last + 1) * es), what, (unsigned long long)buf->bytes);
	return ST_OK;
}

/* ---- the spec ---- */
static st_status parse_param(ctx *c, const cJSON *o, const char *base, st_param *p)
{
	if (!cJSON_IsObject(o))
		return fail(c, NULL, "expected an object");
	const cJSON *k = get(o, "kind");
	if (!k || !cJSON_IsString(k))
		return fail(c, "kind", "missing (expected ptr, a scalar type like i32 or fp32, bytes or tensormap)");
	const char *kind = k->valuestring;
	if (!strcmp(kind, "ptr")) {
		p->kind = ST_P_PTR;
		return parse_ptr(c, o, base, false, p);
	}
	if (!strcmp(kind, "bytes")) {
		p->kind = ST_P_BYTES;
		return parse_bytes(c, o, base, p);
	}
	if (!strcmp(kind, "tensormap")) {
		p->kind = ST_P_TENSORMAP;
		return parse_tensormap(c, o, p);
	}
	if ((p->dtype = st_rt_dtype_parse(kind)) != ST_DT_NONE) {
		p->kind = ST_P_SCALAR;
		return parse_scalar(c, o, p);
	}
	return fail(c, "kind", "unknown kind '%s' (expected ptr, i8, i16, i32, i64, u8, u16, u32, u64, fp16, bf16, fp32, fp64, i1, bytes or tensormap)", kind);
}

static unsigned param_size(const st_param *p)
{
	return p->kind == ST_P_PTR ? 8 : p->size;
}

/* ptx_param_types is informational, but if present it must agree with params. */
static st_status check_ptx_types(ctx *c, const cJSON *v, const st_launch *l)
{
	if (!cJSON_IsArray(v) || (size_t)cJSON_GetArraySize(v) != l->nparams)
		return fail(c, "ptx_param_types", "expected an array of %zu type names, one per param", l->nparams);
	for (size_t i = 0; i < l->nparams; i++) {
		const cJSON *e = cJSON_GetArrayItem(v, (int)i);
		if (!cJSON_IsString(e))
			return fail(c, "ptx_param_types", "element %zu: expected a string", i);
		const char *s = e->valuestring;
		unsigned want = 0;
		if (s[0] && strchr("usbf", s[0]) && (s[1] >= '0' && s[1] <= '9'))
			want = (unsigned)atoi(s + 1) / 8;
		if (!strcmp(s, "pred"))
			want = 1;
		unsigned have = param_size(&l->params[i]);
		if (want && l->params[i].kind != ST_P_BYTES && l->params[i].kind != ST_P_TENSORMAP && want != have &&
		    !(want == 1 && have == 1))
			return fail(c, "ptx_param_types", "element %zu: %s is %u bytes but params[%zu] is %u", i, s,
				    want, i, have);
	}
	return ST_OK;
}

/* "buffers": device buffers that are not kernel parameters (the tensors behind host
 * TMA descriptors), named by a tensormap's "buffer". */
static st_status parse_buffers(ctx *c, const cJSON *bs, const char *base, st_launch *l)
{
	if (!bs)
		return ST_OK;
	if (!cJSON_IsArray(bs) || cJSON_GetArraySize(bs) > MAX_PARAMS)
		return fail(c, "buffers", "expected an array of at most %d buffer objects", MAX_PARAMS);
	size_t n = (size_t)cJSON_GetArraySize(bs);
	if (n && !(l->buffers = calloc(n, sizeof *l->buffers)))
		return st_error_set(c->err, ST_ENOMEM, "out of memory");
	const cJSON *it = bs->child;
	for (size_t i = 0; i < n; i++, it = it->next) {
		ctx bc = {.err = c->err};
		snprintf(bc.field, sizeof bc.field, "buffers[%zu]", i);
		l->nbuffers = i + 1;
		l->buffers[i].kind = ST_P_PTR;
		if (!cJSON_IsObject(it))
			return fail(&bc, NULL, "expected an object");
		st_status rc = parse_ptr(&bc, it, base, true, &l->buffers[i]);
		if (rc != ST_OK)
			return rc;
	}
	return ST_OK;
}

static st_status parse_root(ctx *c, const cJSON *root, const char *base, st_launch *l)
{
	static const char *const fields[] = {"kernel", "grid", "block", "shared_bytes", "params", "buffers",
					     "ptx_param_types", NULL};
	static const unsigned grid_max[3] = {2147483647u, 65535, 65535}, block_max[3] = {1024, 1024, 64};
	if (!cJSON_IsObject(root))
		return fail(c, NULL, "expected a JSON object");
	st_status rc = check_fields(c, root, fields);
	if (rc != ST_OK)
		return rc;
	const cJSON *k = get(root, "kernel");
	if (!k)
		return fail(c, "kernel", "missing");
	if (!cJSON_IsString(k) || !k->valuestring[0])
		return fail(c, "kernel", "expected the kernel's entry name");
	if (!(l->kernel = strdup(k->valuestring)))
		return st_error_set(c->err, ST_ENOMEM, "out of memory");
	if ((rc = get_dims(c, root, "grid", l->grid, grid_max)) != ST_OK ||
	    (rc = get_dims(c, root, "block", l->block, block_max)) != ST_OK)
		return rc;
	if ((uint64_t)l->block[0] * l->block[1] * l->block[2] > 1024)
		return fail(c, "block", "%u threads; at most 1024", l->block[0] * l->block[1] * l->block[2]);
	uint64_t shared = 0;
	if ((rc = get_u64(c, root, "shared_bytes", false, 0, 16u << 20, &shared)) != ST_OK)
		return rc;
	l->shared_bytes = (unsigned)shared;
	const cJSON *ps = get(root, "params");
	if (!ps)
		return fail(c, "params", "missing");
	if (!cJSON_IsArray(ps) || cJSON_GetArraySize(ps) > MAX_PARAMS)
		return fail(c, "params", "expected an array of at most %d params", MAX_PARAMS);
	size_t n = (size_t)cJSON_GetArraySize(ps);
	if (n && !(l->params = calloc(n, sizeof *l->params)))
		return st_error_set(c->err, ST_ENOMEM, "out of memory");
	unsigned space = 0;
	const cJSON *it = ps->child;
	for (size_t i = 0; i < n; i++, it = it->next) {
		ctx pc = {.err = c->err};
		snprintf(pc.field, sizeof pc.field, "params[%zu]", i);
		l->nparams = i + 1;
		if ((rc = parse_param(&pc, it, base, &l->params[i])) != ST_OK)
			return rc;
		unsigned sz = param_size(&l->params[i]), al = l->params[i].kind == ST_P_TENSORMAP ? 64 : sz > 8 ? 8 : sz;
		space = (space + al - 1) / al * al + sz;
	}
	if (space > MAX_PARAM_SPACE)
		return fail(c, "params", "%u bytes of parameters; at most %u", space, MAX_PARAM_SPACE);
	if ((rc = parse_buffers(c, get(root, "buffers"), base, l)) != ST_OK)
		return rc;
	for (size_t i = 0; i < n; i++) {
		ctx pc = {.err = c->err};
		snprintf(pc.field, sizeof pc.field, "params[%zu]", i);
		if (l->params[i].kind == ST_P_TENSORMAP && (rc = check_tensormap(&pc, l, &l->params[i])) != ST_OK)
			return rc;
	}
	const cJSON *ptx = get(root, "ptx_param_types");
	if (ptx && (rc = check_ptx_types(c, ptx, l)) != ST_OK)
		return rc;
	return ST_OK;
}

static void where(const char *json, size_t len, const char *at, unsigned *line, unsigned *col)
{
	*line = 1;
	*col = 1;
	for (const char *p = json; p < at && p < json + len; p++) {
		if (*p == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

/* Messages quote names and values from the spec: keep them one printable line. */
static st_status printable(st_error *err, st_status rc)
{
	for (char *p = err ? err->msg : NULL; p && *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return rc;
}

static st_status parse(const char *json, size_t len, const char *base_dir, st_launch **out, st_error *err);

st_status st_launch_parse(const char *json, size_t len, const char *base_dir, st_launch **out, st_error *err)
{
	return printable(err, parse(json, len, base_dir, out, err));
}

static st_status parse(const char *json, size_t len, const char *base_dir, st_launch **out, st_error *err)
{
	*out = NULL;
	if (!json)
		return st_error_set(err, ST_EINVAL, "launch spec: no text");
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
	if (!root) {
		unsigned line, col;
		where(json, len, end ? end : json, &line, &col);
		return st_error_set(err, ST_EFORMAT, "launch spec: invalid JSON at line %u, column %u", line, col);
	}
	for (const char *p = end; p && p < json + len; p++)
		if (*p != ' ' && *p != '\n' && *p != '\r' && *p != '\t' && *p != '\0') {
			unsigned line, col;
			where(json, len, p, &line, &col);
			cJSON_Delete(root);
			return st_error_set(err, ST_EFORMAT, "launch spec: unexpected text after the JSON object at line %u, column %u", line, col);
		}
	st_launch *l = calloc(1, sizeof *l);
	st_status rc = l ? ST_OK : st_error_set(err, ST_ENOMEM, "out of memory");
	ctx c = {.err = err};
	if (rc == ST_OK)
		rc = parse_root(&c, root, base_dir, l);
	cJSON_Delete(root);
	if (rc == ST_OK && (!(l->text = malloc(len + 1)) || (base_dir && !(l->base_dir = strdup(base_dir)))))
		rc = st_error_set(err, ST_ENOMEM, "out of memory");
	if (rc != ST_OK) {
		if (rc == ST_EFORMAT)
			st_error_wrap(err, "launch spec");
		st_launch_free(l);
		return rc;
	}
	memcpy(l->text, json, len);
	l->text[len] = 0;
	l->text_len = len;
	*out = l;
	return ST_OK;
}

st_status st_launch_load(const char *path, st_launch **out, st_error *err)
{
	*out = NULL;
	uint8_t *data;
	size_t size;
	st_status rc = st_read_file(path, &data, &size, err);
	if (rc != ST_OK)
		return rc;
	char *base = strdup(path);
	if (!base) {
		free(data);
		return st_error_set(err, ST_ENOMEM, "out of memory");
	}
	char *slash = strrchr(base, '/');
	if (slash)
		*(slash == base ? slash + 1 : slash) = 0;
	rc = st_launch_parse((const char *)data, size, slash ? base : NULL, out, err);
	if (rc == ST_EFORMAT) { /* "launch spec: X" -> "PATH: X" */
		const char *pfx = "launch spec: ";
		char msg[ST_ERROR_MSG_MAX];
		snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
		if (!strncmp(msg, pfx, strlen(pfx)))
			st_error_set(err, rc, "%s: %s", path, msg + strlen(pfx));
	}
	free(base);
	free(data);
	return printable(err, rc);
}

void st_launch_free(st_launch *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->nparams; i++) {
		free(l->params[i].value);
		free(l->params[i].file);
		free(l->params[i].name);
	}
	for (size_t i = 0; i < l->nbuffers; i++) {
		free(l->buffers[i].file);
		free(l->buffers[i].name);
	}
	free(l->params);
	free(l->buffers);
	free(l->kernel);
	free(l->text);
	free(l->base_dir);
	free(l);
}

const char *st_launch_kernel(const st_launch *l) { return l->kernel; }
size_t st_launch_param_count(const st_launch *l) { return l->nparams; }

void st_launch_dims(const st_launch *l, unsigned grid[3], unsigned block[3], unsigned *shared_bytes)
{
	for (int i = 0; i < 3; i++) {
		if (grid)
			grid[i] = l->grid[i];
		if (block)
			block[i] = l->block[i];
	}
	if (shared_bytes)
		*shared_bytes = l->shared_bytes;
}

#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const st_test_triton_fixtures[] = {
	"add_f32_1M",
	"attn_fwd_f16_bh4_n1024_d64_b128x64",
	"layernorm_f16_1024x1024",
	"matmul_f16_1024x1024x1024_b128x128x64_w4s4",
	"matmul_f16_2048x2048x2048_b128x256x64_w8s3",
	"matmul_f16_512x512x2048_b64x64x32_w4s3_leakyrelu",
	"softmax_f32_1024x1024",
	NULL,
};

char *st_test_fixture(const char *rel)
{
	const char *root = getenv("ST_FIXTURES");
	char buf[4096];
	if (root && *root)
		snprintf(buf, sizeof buf, "%s/%s", root, rel);
	else
		snprintf(buf, sizeof buf, "%s/test/fixtures/%s", ST_SOURCE_DIR, rel);
	return strdup(buf);
}

uint8_t *st_test_read(const char *rel, size_t *size)
{
	char *path = st_test_fixture(rel);
	uint8_t *buf = st_test_read_path(path, size);
	free(path);
	return buf;
}

uint8_t *st_test_read_path(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = 0;
	fclose(f);
	if (size)
		*size = (size_t)n;
	return buf;
}

const char *st_test_triton_bin(void)
{
	const char *p = getenv("ST_TRITON_BIN");
	return p && *p ? p : NULL;
}

void st_test_kernel_open(st_test_kernel *x, const char *dir, const char *fixture)
{
	char rel[512];
	size_t size;
	st_error err = {0};
	memset(x, 0, sizeof *x);
	snprintf(rel, sizeof rel, "%s/%s/sm_90.cubin", dir, fixture);
	uint8_t *bytes = st_test_read(rel, &size);
	if (st_cubin_open_mem(bytes, size, rel, &x->c, &err))
		fail_msg("%s: %s", rel, err.msg);
	free(bytes);
	snprintf(rel, sizeof rel, "%s/%s/sm_90.sass", dir, fixture);
	x->listing = st_test_fixture(rel);
	x->o.listing = x->listing;
	x->name = st_cubin_kernel(x->c, 0)->name;
	if (st_sass_decode(x->c, x->name, &x->o, &x->k, &err))
		fail_msg("%s: %s", fixture, err.msg);
}

void st_test_kernel_close(st_test_kernel *x)
{
	st_sass_free(x->k);
	st_cubin_free(x->c);
	free(x->listing);
}

st_sched *st_test_sched_new(const st_test_kernel *x, unsigned flags)
{
	st_sched *s = NULL;
	st_error err = {0};
	if (st_sched_new(x->k, x->c, flags, &s, &err))
		fail_msg("%s: %s", x->name, err.msg);
	return s;
}

st_cubin *st_test_cubin_copy(const st_cubin *c)
{
	size_t size;
	const uint8_t *d = st_cubin_data(c, &size);
	st_cubin *x = NULL;
	st_error err = {0};
	if (st_cubin_open_mem(d, size, "copy", &x, &err))
		fail_msg("copy: %s", err.msg);
	return x;
}

int st_test_same_bytes(const st_cubin *a, const st_cubin *b)
{
	size_t sa, sb;
	const uint8_t *da = st_cubin_data(a, &sa), *db = st_cubin_data(b, &sb);
	return sa == sb && !memcmp(da, db, sa);
}

const char st_test_mock_spec_json[] =
	"{\"kernel\":\"add_kernel\",\"grid\":[8],\"block\":[128],\"params\":["
	"{\"kind\":\"ptr\",\"dtype\":\"fp32\",\"bytes\":16384,\"init\":\"randn\"},"
	"{\"kind\":\"ptr\",\"dtype\":\"fp32\",\"bytes\":16384,\"init\":\"randn\"},"
	"{\"kind\":\"ptr\",\"dtype\":\"fp32\",\"bytes\":16384,\"init\":\"randn\"},"
	"{\"kind\":\"i32\",\"value\":4096},{\"kind\":\"ptr\",\"bytes\":0},{\"kind\":\"ptr\",\"bytes\":0}]}";

void st_test_mock_init(st_test_mock *m, const char *dflt)
{
	const char *b = getenv("ST_BUILD_DIR");
	if (!b || !*b)
		b = dflt;
	snprintf(m->bindir, sizeof m->bindir, "%s", b);
	snprintf(m->worker, sizeof m->worker, "%s/sasstune-worker", m->bindir);
	snprintf(m->libcuda, sizeof m->libcuda, "%s/test/libcuda_mock.so", m->bindir);
}

void st_test_mock_options(const st_test_mock *m, st_runtime_options *o)
{
	st_runtime_options_init(o);
	o->worker = m->worker;
	o->libcuda = m->libcuda;
	o->warmup_ms = 1;
	o->pairs = 60;
	o->timeout_s = 0.5;
}

st_launch *st_test_mock_spec(void)
{
	st_launch *l = NULL;
	st_error err = {0};
	if (st_launch_parse(st_test_mock_spec_json, strlen(st_test_mock_spec_json), NULL, &l, &err) != ST_OK)
		fail_msg("%s", err.msg);
	return l;
}

void st_test_replays_to(const st_test_kernel *x, const st_sched *s, const st_cubin *want, const char *what)
{
	st_error err = {0};
	st_schedule *sch = NULL;
	st_cubin *re = NULL, *raw = st_test_cubin_copy(x->c);
	assert_int_equal(st_schedule_new(&sch, &err), ST_OK);
	assert_int_equal(st_sched_to_schedule(s, sch, &err), ST_OK);
	if (st_sched_rewrite(x->c, sch, &x->o, &re, &err))
		fail_msg("%s: checked replay refused: %s", what, err.msg);
	assert_true(st_test_same_bytes(re, want));
	assert_int_equal(st_schedule_apply(sch, raw, &err), ST_OK);
	assert_true(st_test_same_bytes(raw, want));
	st_schedule_free(sch);
	st_cubin_free(re);
	st_cubin_free(raw);
}

uint64_t st_test_xorshift(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

void st_test_print_violation(void *ctx, const char *kernel, uint32_t offset, const char *msg)
{
	(void)ctx;
	print_message("  %s 0x%04x: %s\n", kernel, offset, msg);
}

st_schedule *st_test_schedule(const char *json)
{
	st_schedule *s = NULL;
	st_error err = {0};
	if (st_schedule_parse(json, strlen(json), "t.json", &s, &err))
		fail_msg("%s: %s", json, err.msg);
	return s;
}

void st_test_tune_replays(const uint8_t *cubin, size_t size, const char *listing, const st_tune_result *r)
{
	st_cubin *orig = NULL, *tuned = NULL, *replayed = NULL;
	st_error err = {0};
	st_sass_opts o = {0};
	o.listing = listing;
	size_t bad = 99, n;
	assert_int_equal(st_cubin_open_mem(cubin, size, "orig", &orig, &err), ST_OK);
	assert_int_equal(st_cubin_open_mem(r->cubin, r->cubin_size, "tuned", &tuned, &err), ST_OK);
	if (st_check_kernel(orig, tuned, r->kernel, &o, NULL, NULL, &bad, &err))
		fail_msg("%s: checker: %s", r->kernel, err.msg);
	assert_int_equal(bad, 0);
	assert_non_null(r->schedule_json);
	st_schedule *sch = st_test_schedule(r->schedule_json);
	if (st_sched_rewrite(orig, sch, &o, &replayed, &err))
		fail_msg("%s: replay: %s", r->kernel, err.msg);
	const uint8_t *d = st_cubin_data(replayed, &n);
	assert_int_equal(n, r->cubin_size);
	assert_memory_equal(d, r->cubin, n);
	st_schedule_free(sch);
	st_cubin_free(replayed);
	st_cubin_free(tuned);
	st_cubin_free(orig);
}

void st_test_set_ctrl(st_cubin *t, const st_sass_insn *in, uint32_t j, st_ctrl c)
{
	st_error err = {0};
	uint8_t w[16];
	memcpy(w, in[j].word, 16);
	assert_int_equal(st_ctrl_encode(w, c, &err), ST_OK);
	assert_int_equal(st_cubin_set_ctrl(t, 0, j, w, &err), ST_OK);
}

/* Launch specs: every fixture parses; every malformed spec is refused with an
 * error naming the field. */
#include "testutil.h"

#include "../../runtime/rt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static st_launch *parse_ok(const char *json)
{
	st_launch *l = NULL;
	st_error err = {0};
	st_status rc = st_launch_parse(json, strlen(json), NULL, &l, &err);
	if (rc != ST_OK)
		fail_msg("expected to parse, got: %s\n  spec: %s", err.msg, json);
	return l;
}

static void parse_bad(const char *json, const char *want)
{
	st_launch *l = NULL;
	st_error err = {0};
	st_status rc = st_launch_parse(json, strlen(json), NULL, &l, &err);
	if (rc == ST_OK)
		fail_msg("expected an error containing '%s' for: %s", want, json);
	assert_null(l);
	if (!strstr(err.msg, want))
		fail_msg("error '%s' does not contain '%s' (spec: %s)", err.msg, want, json);
	assert_null(strchr(err.msg, '\n'));
	assert_true(strncmp(err.msg, "launch spec: ", 13) == 0);
}

static void test_fixtures_parse(void **state)
{
	(void)state;
	static const struct { const char *name, *kernel; size_t nparams; unsigned shared; } want[] = {
		{"add_f32_1M", "add_kernel", 6, 0},
		{"attn_fwd_f16_bh4_n1024_d64_b128x64", "attn_fwd_kernel", 10, 65536},
		{"layernorm_f16_1024x1024", "layernorm_kernel", 9, 32},
		{"matmul_f16_1024x1024x1024_b128x128x64_w4s4", "matmul_kernel", 11, 131072},
		{"matmul_f16_2048x2048x2048_b128x256x64_w8s3", "matmul_kernel", 11, 147456},
		{"matmul_f16_512x512x2048_b64x64x32_w4s3_leakyrelu", "matmul_kernel", 11, 24576},
		{"softmax_f32_1024x1024", "softmax_kernel", 7, 32},
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		char rel[256];
		snprintf(rel, sizeof rel, "triton-sm90/%s/launch.json", want[i].name);
		char *path = st_test_fixture(rel);
		st_launch *l = NULL;
		st_error err = {0};
		if (st_launch_load(path, &l, &err) != ST_OK)
			fail_msg("%s: %s", path, err.msg);
		assert_string_equal(st_launch_kernel(l), want[i].kernel);
		assert_int_equal(st_launch_param_count(l), want[i].nparams);
		unsigned grid[3], block[3], shared;
		st_launch_dims(l, grid, block, &shared);
		assert_int_equal(shared, want[i].shared);
		assert_true(grid[0] >= 1 && block[0] >= 32);
		/* the trailing scratch pointers are null buffers */
		assert_int_equal(l->params[l->nparams - 1].kind, ST_P_PTR);
		assert_int_equal(l->params[l->nparams - 1].bytes, 0);
		assert_int_equal(l->params[0].init, ST_INIT_RANDN);
		assert_true(l->params[0].verify);
		st_launch_free(l);
		free(path);
	}
}

static void test_add_spec_values(void **state)
{
	(void)state;
	size_t n;
	uint8_t *text = st_test_read("triton-sm90/add_f32_1M/launch.json", &n);
	st_launch *l = parse_ok((const char *)text);
	assert_int_equal(l->grid[0], 1024);
	assert_int_equal(l->grid[1], 1);
	assert_int_equal(l->block[0], 128);
	assert_int_equal(l->params[0].dtype, ST_DT_F32);
	assert_int_equal(l->params[0].bytes, 4194304);
	assert_int_equal(l->params[3].kind, ST_P_SCALAR);
	assert_int_equal(l->params[3].size, 4);
	assert_int_equal(st_le32(l->params[3].value), 1048576);
	st_launch_free(l);
	free(text);
}

static void test_scalars_and_extensions(void **state)
{
	(void)state;
	st_launch *l = parse_ok(
		"{\"kernel\":\"k\",\"grid\":[2,3],\"block\":[64,2,1],\"shared_bytes\":100,\"params\":["
		"{\"kind\":\"i64\",\"value\":\"-9223372036854775808\"},"
		"{\"kind\":\"u64\",\"value\":\"0xffffffffffffffff\"},"
		"{\"kind\":\"i16\",\"value\":-32768},"
		"{\"kind\":\"fp16\",\"value\":1.0},"
		"{\"kind\":\"bf16\",\"value\":-2},"
		"{\"kind\":\"fp32\",\"value\":\"nan\"},"
		"{\"kind\":\"fp64\",\"value\":0.5},"
		"{\"kind\":\"i1\",\"value\":true},"
		"{\"kind\":\"bytes\",\"hex\":\"00ff10\"},"
		"{\"kind\":\"ptr\",\"dtype\":\"fp16\",\"bytes\":8192,\"init\":{\"dist\":\"randn\",\"mean\":1,\"std\":0.5}},"
		"{\"kind\":\"tensormap\",\"tensor\":9,\"dtype\":\"fp16\",\"shape\":[64,64],\"strides\":[64,1],"
		"\"box\":[32,64],\"swizzle\":\"128B\"},"
		"{\"kind\":\"ptr\",\"dtype\":\"i32\",\"bytes\":64,\"init\":{\"dist\":\"randint\",\"low\":-5,\"high\":5},\"verify\":false},"
		"{\"kind\":\"ptr\",\"bytes\":16,\"note\":\"random bytes by default\"}"
		"],\"comment\":\"hand-written\"}");
	assert_int_equal(l->grid[1], 3);
	assert_int_equal(l->grid[2], 1);
	assert_int_equal(l->block[1], 2);
	assert_int_equal(st_le64(l->params[0].value), 0x8000000000000000ull);
	assert_int_equal(st_le64(l->params[1].value), UINT64_MAX);
	assert_int_equal(l->params[2].size, 2);
	assert_int_equal(l->params[2].value[0] | l->params[2].value[1] << 8, 0x8000);
	assert_int_equal(l->params[3].value[0] | l->params[3].value[1] << 8, 0x3c00);
	assert_int_equal(l->params[4].value[0] | l->params[4].value[1] << 8, 0xc000);
	assert_int_equal(l->params[5].size, 4);
	assert_int_equal(l->params[7].size, 1);
	assert_int_equal(l->params[7].value[0], 1);
	assert_int_equal(l->params[8].kind, ST_P_BYTES);
	assert_int_equal(l->params[8].size, 3);
	assert_int_equal(l->params[8].value[1], 0xff);
	assert_int_equal(l->params[9].init, ST_INIT_RANDN);
	assert_true(l->params[9].a == 1 && l->params[9].b == 0.5);
	assert_int_equal(l->params[10].kind, ST_P_TENSORMAP);
	assert_int_equal(l->params[10].size, 128);
	assert_int_equal(l->params[10].swizzle, 3);
	assert_int_equal(l->params[10].l2_promotion, 2);
	assert_false(l->params[11].verify);
	assert_int_equal(l->params[12].init, ST_INIT_RANDBYTES);
	st_launch_free(l);
}

/* Hidden buffers: device buffers that are not kernel parameters, reached
 * through a tensormap's "buffer" (host TMA descriptors). */
static void test_hidden_buffers(void **state)
{
	(void)state;
	st_launch *l = parse_ok(
		"{\"kernel\":\"k\",\"grid\":[4],\"block\":[128],"
		"\"buffers\":[{\"dtype\":\"fp16\",\"bytes\":8192,\"init\":\"zeros\",\"name\":\"c\",\"note\":\"written by TMA stores\"},"
		"{\"bytes\":64,\"verify\":false,\"name\":\"x\\ny\"},{\"dtype\":\"bf16\",\"bytes\":128}],"
		"\"params\":["
		"{\"kind\":\"tensormap\",\"buffer\":0,\"dtype\":\"fp16\",\"shape\":[64,64],\"strides\":[64,1],"
		"\"box\":[64,32],\"swizzle\":\"64B\",\"name\":\"c_desc\"},"
		"{\"kind\":\"i32\",\"value\":64},{\"kind\":\"i64\",\"value\":1},"
		"{\"kind\":\"ptr\",\"dtype\":\"fp32\",\"bytes\":256,\"name\":\"p\"},"
		"{\"kind\":\"tensormap\",\"tensor\":3,\"dtype\":\"fp32\",\"shape\":[64],\"strides\":[1],\"box\":[64]},"
		"{\"kind\":\"tensormap\",\"buffer\":2,\"dtype\":\"bf16\",\"shape\":[8,8],\"strides\":[8,1],\"box\":[8,8]}]}");
	assert_int_equal(st_launch_param_count(l), 6); /* hidden buffers are not params */
	assert_int_equal(l->nbuffers, 3);
	assert_int_equal(l->buffers[0].kind, ST_P_PTR);
	assert_int_equal(l->buffers[0].dtype, ST_DT_F16);
	assert_int_equal(l->buffers[0].bytes, 8192);
	assert_int_equal(l->buffers[0].init, ST_INIT_ZEROS);
	assert_true(l->buffers[0].verify);
	assert_string_equal(l->buffers[0].name, "c");
	assert_int_equal(l->buffers[1].init, ST_INIT_RANDBYTES);
	assert_false(l->buffers[1].verify);
	assert_string_equal(l->buffers[1].name, "x?y"); /* names are kept one printable line */
	assert_int_equal(l->buffers[2].init, ST_INIT_RANDN);
	assert_null(l->buffers[2].name);
	assert_true(l->params[0].in_buffers);
	assert_int_equal(l->params[0].tensor, 0);
	assert_int_equal(l->params[0].swizzle, 2);
	assert_false(l->params[4].in_buffers);
	assert_int_equal(l->params[4].tensor, 3);
	assert_true(l->params[5].in_buffers);
	assert_int_equal(l->params[5].tensor, 2);
	/* filled like params, from their own random streams */
	uint8_t a[128], b[128];
	st_error err = {0};
	assert_int_equal(st_rt_buffer_fill(&l->buffers[2], 1, 0, 6 + 2, "buffers[2]", a, &err), ST_OK);
	assert_int_equal(st_rt_buffer_fill(&l->buffers[2], 1, 0, 6 + 2, "buffers[2]", b, &err), ST_OK);
	assert_memory_equal(a, b, sizeof a);
	assert_int_equal(st_rt_buffer_fill(&l->buffers[2], 1, 0, 6 + 1, "buffers[2]", b, &err), ST_OK);
	assert_memory_not_equal(a, b, sizeof a);
	st_launch_free(l);
	/* an empty list is allowed */
	l = parse_ok("{\"kernel\":\"k\",\"grid\":[1],\"block\":[32],\"buffers\":[],\"params\":[]}");
	assert_int_equal(l->nbuffers, 0);
	st_launch_free(l);
}

static void test_file_buffers(void **state)
{
	(void)state;
	char dir[] = "/tmp/st_spec_XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[256];
	snprintf(path, sizeof path, "%s/x.bin", dir);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	for (int i = 0; i < 64; i++)
		fputc(i, f);
	fclose(f);
	const char *json = "{\"kernel\":\"k\",\"grid\":[1],\"block\":[32],\"params\":[{\"kind\":\"ptr\",\"file\":\"x.bin\"}]}";
	st_launch *l = NULL;
	st_error err = {0};
	assert_int_equal(st_launch_parse(json, strlen(json), dir, &l, &err), ST_OK);
	assert_int_equal(l->params[0].bytes, 64);
	assert_int_equal(l->params[0].init, ST_INIT_FILE);
	uint8_t buf[64];
	assert_int_equal(st_rt_param_fill(&l->params[0], 1, 0, 0, buf, &err), ST_OK);
	assert_int_equal(buf[63], 63);
	st_launch_free(l);
	const char *hidden = "{\"kernel\":\"k\",\"grid\":[1],\"block\":[32],\"buffers\":[{\"file\":\"x.bin\",\"dtype\":\"u8\"}],\"params\":[]}";
	assert_int_equal(st_launch_parse(hidden, strlen(hidden), dir, &l, &err), ST_OK);
	assert_int_equal(l->buffers[0].bytes, 64);
	assert_int_equal(l->buffers[0].init, ST_INIT_FILE);
	f = fopen(path, "ab"); /* the file changes after parsing: named as the spec names it */
	fputc(64, f);
	fclose(f);
	assert_int_equal(st_rt_buffer_fill(&l->buffers[0], 1, 0, 0, "buffers[0]", buf, &err), ST_EFORMAT);
	assert_non_null(strstr(err.msg, "buffers[0].file: "));
	assert_non_null(strstr(err.msg, "has 65 bytes, expected 64"));
	st_launch_free(l);
	f = fopen(path, "wb");
	for (int i = 0; i < 64; i++)
		fputc(i, f);
	fclose(f);
	const char *bad = "{\"kernel\":\"k\",\"grid\":[1],\"block\":[32],\"params\":[{\"kind\":\"ptr\",\"file\":\"x.bin\",\"bytes\":65}]}";
	assert_int_equal(st_launch_parse(bad, strlen(bad), dir, &l, &err), ST_EFORMAT);
	assert_non_null(strstr(err.msg, "params[0].file"));
	/* st_launch_load resolves relative to the spec's folder and names the path */
	char spec[256];
	snprintf(spec, sizeof spec, "%s/spec.json", dir);
	f = fopen(spec, "w");
	fputs(bad, f);
	fclose(f);
	assert_int_equal(st_launch_load(spec, &l, &err), ST_EFORMAT);
	assert_true(strncmp(err.msg, spec, strlen(spec)) == 0);
	assert_non_null(strstr(err.msg, "has 64 bytes but bytes says 65"));
	unlink(spec);
	unlink(path);
	rmdir(dir);
	assert_int_equal(st_launch_load("/nonexistent/launch.json", &l, &err), ST_EIO);
}

#define HDR "{\"kernel\":\"k\",\"grid\":[1],\"block\":[32],"
static void test_bad_specs(void **state)
{
	(void)state;
	parse_bad("", "invalid JSON at line 1");
	parse_bad("{\"kernel\": \"k\",\n \"grid\": [1,}", "invalid JSON at line 2");
	parse_bad("[1,2]", "expected a JSON object");
	parse_bad(HDR "\"params\":[]} x", "unexpected text after the JSON object");
	parse_bad("{\"grid\":[1],\"block\":[32],\"params\":[]}", "kernel: missing");
	parse_bad("{\"kernel\":\"\",\"grid\":[1],\"block\":[32],\"params\":[]}", "kernel: expected");
	parse_bad("{\"kernel\":7,\"grid\":[1],\"block\":[32],\"params\":[]}", "kernel: expected");
	parse_bad("{\"kernel\":\"k\",\"block\":[32],\"params\":[]}", "grid: missing");
	parse_bad("{\"kernel\":\"k\",\"grid\":[0],\"block\":[32],\"params\":[]}", "grid: element 0");
	parse_bad("{\"kernel\":\"k\",\"grid\":[1,1,1,1],\"block\":[32],\"params\":[]}", "grid: expected an array");
	parse_bad("{\"kernel\":\"k\",\"grid\":[1,70000],\"block\":[32],\"params\":[]}", "grid: element 1");
	parse_bad("{\"kernel\":\"k\",\"grid\":[1.5],\"block\":[32],\"params\":[]}", "grid: element 0");
	parse_bad("{\"kernel\":\"k\",\"grid\":[1],\"block\":[64,32],\"params\":[]}", "block: 2048 threads");
	parse_bad("{\"kernel\":\"k\",\"grid\":[1],\"block\":\"x\",\"params\":[]}", "block: expected");
	parse_bad(HDR "\"shared_bytes\":-1,\"params\":[]}", "shared_bytes: expected an integer");
	parse_bad(HDR "\"shared_byte\":1,\"params\":[]}", "shared_byte: unknown field");
	parse_bad(HDR "\"params\":[],\"params\":[]}", "params: appears twice");
	parse_bad(HDR "\"params\":{}}", "params: expected an array");
	parse_bad("{\"kernel\":\"k\",\"grid\":[1],\"block\":[32]}", "params: missing");
	parse_bad(HDR "\"params\":[3]}", "params[0]: expected an object");
	parse_bad(HDR "\"params\":[{}]}", "params[0].kind: missing");
	parse_bad(HDR "\"params\":[{\"kind\":\"int\"}]}", "params[0].kind: unknown kind 'int'");
	parse_bad(HDR "\"params\":[{\"kind\":\"i32\"}]}", "params[0].value: missing");
	parse_bad(HDR "\"params\":[{\"kind\":\"i32\",\"value\":2147483648}]}", "params[0].value: 2147483648 does not fit in i32");
	parse_bad(HDR "\"params\":[{\"kind\":\"i8\",\"value\":-129}]}", "does not fit in i8");
	parse_bad(HDR "\"params\":[{\"kind\":\"u32\",\"value\":-1}]}", "negative value for an unsigned u32");
	parse_bad(HDR "\"params\":[{\"kind\":\"i32\",\"value\":1.5}]}", "params[0].value: expected an integer");
	parse_bad(HDR "\"params\":[{\"kind\":\"i64\",\"value\":\"12abc\"}]}", "'12abc' is not a 64-bit integer");
	parse_bad(HDR "\"params\":[{\"kind\":\"u64\",\"value\":\"99999999999999999999\"}]}", "is not a 64-bit integer");
	parse_bad(HDR "\"params\":[{\"kind\":\"i64\",\"value\":1e300}]}", "give 64-bit values beyond 2^53 as a string");
	parse_bad(HDR "\"params\":[{\"kind\":\"fp32\",\"value\":\"fast\"}]}", "'fast' is not a number");
	parse_bad(HDR "\"params\":[{\"kind\":\"fp32\",\"value\":[1]}]}", "params[0].value: expected a number");
	parse_bad(HDR "\"params\":[{\"kind\":\"i32\",\"value\":1,\"dtype\":\"i32\"}]}", "params[0].dtype: unknown field");
	parse_bad(HDR "\"params\":[{\"kind\":\"ptr\"}]}", "params[0].bytes: missing");
	parse_bad(HDR "\"params\":[{\"kind\":\"ptr\",\"bytes\":-4}]}", "params[0].bytes: expected an integer");
	parse_bad(HDR "\"params\":[{\"kind\":\"ptr\",\"bytes\":6,\"dtype\":\"fp32\"}]}", "params[0].bytes: 6 is not a multiple of the fp32 element size (4)");
	parse_bad(HDR "\"params\":[{\"kind\":\"ptr\",\"bytes\":8,\"dtype\":\"fp17\"}]}", "params[0].dtype: unknown dtype 'fp17'");
	parse_bad(HDR "\"params\":[{\"kind\":\"ptr\",\"bytes\":8,\"dtype\":3}]}", "params[0].dtype: unknown dtype");
	parse_bad(HDR "\"params\":[{\"kind\":\"ptr\",\"bytes\":8,\"dtype\":\"fp32\",\"init\":\"gauss\"}]}", "params[0].init: unknown distribution 'gauss'");
	parse_bad(HDR "\"params\":[{\"kind\":\"ptr\",\"bytes\":8,\"dtype\":\"i32\",\"init\":\"randn\"}]}", "params[0].init: randn needs a floating-point dtype");
	parse_bad(HDR "\"params\":[{\"kind\":\"ptr\",\"bytes\":8,\"init\":\"ones\"}]}", "params[0].init: ones needs a dtype");
	parse_bad(HDR "\"params\":[{\"kind\":\"ptr\",\"bytes\":8,\"dtype\":\"fp32\",\"init\":\"fill\"}]}", "fill needs a value");
	parse_bad(HDR "\"params\":[{\"kind\":\"ptr\",\"bytes\":8,\"dtype\":\"fp32\",\"init\":{\"dist\":\"fill\"}}]}", "params[0].init.value: missing");
	parse_bad(HDR "\"params\":[{\"kind\":\"ptr\",\"bytes\":8,\"dtype\":\"fp32\",\"init\":{\"dist\":\"uniform\",\"low\":2,\"high\":1}}]}", "params[0].init.high: must be greater than low");
	parse_bad(HDR "\"params\":[{\"kind\":\"ptr\",\"bytes\":8,\"dtype\":\"fp32\",\"init\":{\"dist\":\"randn\",\"sigma\":1}}]}", "params[0].init.sigma: unknown field");
	parse_bad(HDR "\"params\":[{\"kind\":\"ptr\",\"bytes\":8,\"dtype\":\"fp32\",\"init\":{\"mean\":1}}]}", "params[0].init.dist");
	parse_bad(HDR "\"params\":[{\"kind\":\"ptr\",\"bytes\":8,\"dtype\":\"fp32\",\"init\":7}]}", "params[0].init: expected a distribution name");
	parse_bad(HDR "\"params\":[{\"kind\":\"ptr\",\"bytes\":0,\"init\":\"zeros\"}]}", "params[0].init: a null pointer (bytes 0) takes no init");
	parse_bad(HDR "\"params\":[{\"kind\":\"ptr\",\"bytes\":8,\"verify\":1}]}", "params[0].verify: expected true or false");
	parse_bad(HDR "\"params\":[{\"kind\":\"ptr\",\"bytes\":8,\"file\":\"/nonexistent/x.bin\"}]}", "params[0].file: /nonexistent/x.bin");
	parse_bad(HDR "\"params\":[{\"kind\":\"ptr\",\"bytes\":8,\"file\":\"x\",\"init\":\"zeros\"}]}", "params[0].file: give either init or file");
	parse_bad(HDR "\"params\":[{\"kind\":\"bytes\"}]}", "params[0].hex: missing");
	parse_bad(HDR "\"params\":[{\"kind\":\"bytes\",\"hex\":\"abc\"}]}", "params[0].hex: expected an even number");
	parse_bad(HDR "\"params\":[{\"kind\":\"bytes\",\"hex\":\"zz\"}]}", "'zz' is not a hex byte");
	parse_bad(HDR "\"params\":[{\"kind\":\"bytes\",\"hex\":\"00\",\"size\":2}]}", "params[0].size: says 2 bytes but the data has 1");
	parse_bad(HDR "\"params\":[{\"kind\":\"tensormap\",\"tensor\":0,\"dtype\":\"fp16\",\"shape\":[8],\"strides\":[1],\"box\":[8]}]}", "params[0].tensor: 0 is not the index of a non-null ptr param");
	parse_bad(HDR "\"params\":[{\"kind\":\"ptr\",\"bytes\":64},{\"kind\":\"tensormap\",\"tensor\":0,\"dtype\":\"fp16\",\"shape\":[8,8],\"strides\":[8,1],\"box\":[8,8]}]}", "params[1].shape: spans 128 bytes but params[0] has only 64");
	parse_bad(HDR "\"params\":[{\"kind\":\"ptr\",\"bytes\":64},{\"kind\":\"tensormap\",\"tensor\":0,\"dtype\":\"fp16\",\"shape\":[8,4],\"strides\":[4],\"box\":[8,4]}]}", "params[1].strides: has 1 entries but shape has 2");
	parse_bad(HDR "\"params\":[{\"kind\":\"ptr\",\"bytes\":64},{\"kind\":\"tensormap\",\"tensor\":0,\"dtype\":\"fp16\",\"shape\":[4,4],\"strides\":[1,4],\"box\":[4,4]}]}", "params[1].strides: the innermost stride must be 1");
	parse_bad(HDR "\"params\":[{\"kind\":\"ptr\",\"bytes\":64},{\"kind\":\"tensormap\",\"tensor\":0,\"dtype\":\"fp16\",\"shape\":[4,4],\"strides\":[4,1],\"box\":[4,512]}]}", "params[1].box: element 1");
	parse_bad(HDR "\"params\":[{\"kind\":\"ptr\",\"bytes\":64},{\"kind\":\"tensormap\",\"tensor\":0,\"dtype\":\"fp16\",\"shape\":[4,4],\"strides\":[4,1],\"box\":[4,4],\"swizzle\":\"256B\"}]}", "params[1].swizzle: expected one of none, 32B, 64B, 128B");
	parse_bad(HDR "\"params\":[{\"kind\":\"ptr\",\"bytes\":64},{\"kind\":\"tensormap\",\"tensor\":0,\"dtype\":\"i8\",\"shape\":[4],\"strides\":[1],\"box\":[4]}]}", "params[1].dtype: expected one of");
	/* hidden buffers and tensormaps over them */
#define TMB ",{\"kind\":\"tensormap\",\"dtype\":\"fp16\",\"shape\":[8,8],\"strides\":[8,1],\"box\":[8,8]"
	parse_bad(HDR "\"buffers\":{},\"params\":[]}", "launch spec: buffers: expected an array of at most 1024 buffer objects");
	parse_bad(HDR "\"buffers\":[3],\"params\":[]}", "launch spec: buffers[0]: expected an object");
	parse_bad(HDR "\"buffers\":[{\"kind\":\"ptr\",\"bytes\":8}],\"params\":[]}", "launch spec: buffers[0].kind: unknown field");
	parse_bad(HDR "\"buffers\":[{\"bytes\":8},{\"dtype\":\"fp16\"}],\"params\":[]}", "launch spec: buffers[1].bytes: missing");
	parse_bad(HDR "\"buffers\":[{\"bytes\":0}],\"params\":[]}", "launch spec: buffers[0].bytes: 0: a buffer needs at least 1 byte (only a ptr param can be null)");
	parse_bad(HDR "\"buffers\":[{\"bytes\":0,\"init\":\"zeros\"}],\"params\":[]}", "launch spec: buffers[0].bytes: 0: a buffer needs at least 1 byte");
	parse_bad(HDR "\"buffers\":[{\"bytes\":6,\"dtype\":\"fp32\"}],\"params\":[]}", "launch spec: buffers[0].bytes: 6 is not a multiple of the fp32 element size (4)");
	parse_bad(HDR "\"buffers\":[{\"bytes\":8,\"dtype\":\"fp17\"}],\"params\":[]}", "launch spec: buffers[0].dtype: unknown dtype 'fp17'");
	parse_bad(HDR "\"buffers\":[{\"bytes\":8,\"dtype\":\"i32\",\"init\":\"randn\"}],\"params\":[]}", "launch spec: buffers[0].init: randn needs a floating-point dtype");
	parse_bad(HDR "\"buffers\":[{\"bytes\":8,\"verify\":\"no\"}],\"params\":[]}", "launch spec: buffers[0].verify: expected true or false");
	parse_bad(HDR "\"buffers\":[{\"bytes\":8,\"name\":7}],\"params\":[]}", "launch spec: buffers[0].name: expected a string");
	parse_bad(HDR "\"buffers\":[{\"bytes\":8,\"file\":\"/nonexistent/x.bin\"}],\"params\":[]}", "launch spec: buffers[0].file: /nonexistent/x.bin");
	parse_bad(HDR "\"buffers\":[{\"bytes\":128}],\"params\":[{\"kind\":\"i32\",\"value\":1}" TMB ",\"buffer\":0,\"tensor\":0}]}",
		  "launch spec: params[1].buffer: give either tensor or buffer, not both");
	parse_bad(HDR "\"buffers\":[{\"bytes\":128}],\"params\":[{\"kind\":\"i32\",\"value\":1}" TMB "}]}",
		  "launch spec: params[1].tensor: missing (or give buffer)");
	parse_bad(HDR "\"buffers\":[{\"bytes\":128}],\"params\":[{\"kind\":\"i32\",\"value\":1}" TMB ",\"buffer\":1}]}",
		  "launch spec: params[1].buffer: 1 is not an index into buffers (the spec has 1)");
	parse_bad(HDR "\"params\":[{\"kind\":\"i32\",\"value\":1}" TMB ",\"buffer\":0}]}",
		  "launch spec: params[1].buffer: 0 is not an index into buffers (the spec has 0)");
	parse_bad(HDR "\"buffers\":[{\"bytes\":128}],\"params\":[{\"kind\":\"i32\",\"value\":1}" TMB ",\"buffer\":-1}]}",
		  "launch spec: params[1].buffer: expected an integer from 0 to 1023");
	parse_bad(HDR "\"buffers\":[{\"bytes\":128}],\"params\":[{\"kind\":\"i32\",\"value\":1}" TMB ",\"buffer\":\"0\"}]}",
		  "launch spec: params[1].buffer: expected an integer from 0 to 1023");
	parse_bad(HDR "\"buffers\":[{\"bytes\":128},{\"bytes\":64,\"dtype\":\"fp16\"}],\"params\":[{\"kind\":\"i32\",\"value\":1}" TMB ",\"buffer\":1}]}",
		  "launch spec: params[1].shape: spans 128 bytes but buffers[1] has only 64");
	/* a hidden buffer is not a param: "tensor" cannot name it */
	parse_bad(HDR "\"buffers\":[{\"bytes\":128}],\"params\":[{\"kind\":\"i32\",\"value\":1}" TMB ",\"tensor\":0}]}",
		  "launch spec: params[1].tensor: 0 is not the index of a non-null ptr param");
#undef TMB
	parse_bad(HDR "\"params\":[{\"kind\":\"ptr\",\"bytes\":8}],\"ptx_param_types\":[\"u64\",\"u32\"]}", "ptx_param_types: expected an array of 1 type names");
	parse_bad(HDR "\"params\":[{\"kind\":\"i32\",\"value\":1}],\"ptx_param_types\":[\"u64\"]}", "ptx_param_types: element 0: u64 is 8 bytes but params[0] is 4");
	/* the parameter space has a limit */
	static char big[80000];
	int n = snprintf(big, sizeof big, HDR "\"params\":[");
	for (int i = 0; i < 17; i++)
		n += snprintf(big + n, sizeof big - (size_t)n, "%s{\"kind\":\"bytes\",\"hex\":\"%0*d\"}", i ? "," : "", 4000, 0);
	snprintf(big + n, sizeof big - (size_t)n, "]}");
	parse_bad(big, "params: 34000 bytes of parameters");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixtures_parse),
		cmocka_unit_test(test_add_spec_values),
		cmocka_unit_test(test_scalars_and_extensions),
		cmocka_unit_test(test_hidden_buffers),
		cmocka_unit_test(test_file_buffers),
		cmocka_unit_test(test_bad_specs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

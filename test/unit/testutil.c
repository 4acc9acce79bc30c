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
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open fixture %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = 0;
	fclose(f);
	free(path);
	*size = (size_t)n;
	return buf;
}

const char *st_test_triton_bin(void)
{
	const char *p = getenv("ST_TRITON_BIN");
	return p && *p ? p : NULL;
}

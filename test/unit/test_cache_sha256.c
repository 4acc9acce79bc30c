/* SHA-256 against the FIPS 180-4 / NIST example vectors, plus block-boundary
 * lengths (expected values from an independent implementation, Python's
 * hashlib) fed in every split, so padding and buffering are both covered. */
#include "testutil.h"
#include "cache/sha256.h"
#include "sasstune/cache.h"

#include <stdlib.h>
#include <string.h>

static void hex_of(const void *data, size_t n, char out[65])
{
	st_cache_sha256_hex(data, n, out);
}

static void test_cache_sha256__nist_vectors(void **state)
{
	(void)state;
	char h[65];
	hex_of("", 0, h);
	assert_string_equal(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	hex_of("abc", 3, h);
	assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	hex_of(two, strlen(two), h);
	assert_string_equal(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	const char *four = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
			   "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
	hex_of(four, strlen(four), h);
	assert_string_equal(h, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

static void test_cache_sha256__million_a(void **state)
{
	(void)state;
	/* one million 'a', fed in uneven pieces */
	char chunk[997];
	memset(chunk, 'a', sizeof chunk);
	st_sha256 s;
	st_sha256_init(&s);
	size_t left = 1000000;
	while (left) {
		size_t n = left < sizeof chunk ? left : sizeof chunk;
		st_sha256_update(&s, chunk, n);
		left -= n;
	}
	uint8_t d[32];
	char h[65];
	st_sha256_final(&s, d);
	st_sha256_hex(d, h);
	assert_string_equal(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static void test_cache_sha256__block_boundaries_any_split(void **state)
{
	(void)state;
	static const struct {
		size_t n;
		const char *hex;
	} v[] = {
		{1, "084fed08b978af4d7d196a7446a86b58009e636b611db16211b65a9aadff29c5"},
		{55, "e7313d333c272e639f790978283f9eb392e843d0f29b7016828bb1daa4aac70b"},
		{56, "4324d65f3c103567f5589c710bc08f8523f929a9272e3af36fc968e52abc6c27"},
		{57, "35df609437dcfea3279283ab79fd554e2bf78f8f7ae2de532d8ee300b09e8f73"},
		{63, "81c80242132f230c3bd41b3e63bbcff16107339549214a99614ff26664625055"},
		{64, "39e3d7b6b5d075d37d053ad89b24b41bef4f3c29760c84447cab3f3be1882241"},
		{65, "aacca6ff74fdbb296d165a45cecfa04e5127bc008770fbbdd48006f2d2fae95e"},
		{127, "a8d23e75d936f303d248888d9b165ee543f4cbafcad3c9dd2a79bd84faa11d07"},
		{128, "d2742f1f4ac6bb7ca2b239ee18402ba8b3f9f8e652d2a72973c2b9ba11c08cf6"},
		{1000, "1e9bc38cbf860b9ec31918b065f9b52476c549a782e0e7990bed8ce3868d2371"},
	};
	uint8_t msg[1000];
	for (size_t i = 0; i < sizeof msg; i++)
		msg[i] = (uint8_t)(i * 7 + 3);
	for (size_t t = 0; t < sizeof v / sizeof v[0]; t++) {
		char h[65];
		hex_of(msg, v[t].n, h);
		assert_string_equal(h, v[t].hex);
		/* every two-piece split of the shorter messages gives the same digest */
		for (size_t cut = 0; v[t].n <= 128 && cut <= v[t].n; cut++) {
			st_sha256 s;
			uint8_t d[32];
			st_sha256_init(&s);
			st_sha256_update(&s, msg, cut);
			st_sha256_update(&s, msg + cut, v[t].n - cut);
			st_sha256_final(&s, d);
			st_sha256_hex(d, h);
			assert_string_equal(h, v[t].hex);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cache_sha256__nist_vectors),
		cmocka_unit_test(test_cache_sha256__million_a),
		cmocka_unit_test(test_cache_sha256__block_boundaries_any_split),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

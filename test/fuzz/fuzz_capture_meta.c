/* Fuzz capture.json (a captured launch's key fields, written by the Triton adapter and read by
 * `sasstune tune --captures`): outside input.  Besides not crashing, a meta that parses has a
 * kernel, gives options that parse as a JSON object and that the pass takes, and a key over any cubin. */
#include "pass/capture.h"

#include <cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x) do { if (!(x)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	st_capture_meta m;
	st_error err;
	if (st_capture_meta_parse((const char *)data, size, &m, &err) != ST_OK) {
		CHECK(m.kernel == NULL && err.msg[0] != '\0');
		return 0;
	}
	CHECK(m.kernel && *m.kernel);
	char *opt = NULL;
	CHECK(st_capture_options(&m, "1s", NULL, &opt, &err) == ST_OK);
	cJSON *o = cJSON_Parse(opt);
	CHECK(cJSON_IsObject(o));
	cJSON_Delete(o);
	/* without PTX no ptxas runs; the settings in opt were checked by the parse */
	st_plugin_kernel2 k;
	st_capture_record(&m, NULL, NULL, opt, &k);
	char key[65];
	CHECK(st_capture_run_key(data, size, &k, key, &err) == ST_OK && strlen(key) == 64);
	free(opt);
	st_capture_meta_free(&m);
	return 0;
}

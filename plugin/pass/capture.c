/* capture.json: reading a captured launch's key fields, and the options to tune it with.
 * See capture.h. */
#include "capture.h"
#include "pass_internal.h"
#include "sasstune/cache.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIELD_MAX 4096 /* a path */
#define META_MAX (1u << 20)

void st_capture_meta_free(st_capture_meta *m)
{
	free(m->kernel);
	free(m->arch);
	free(m->ptxas_version);
	free(m->gpu_name);
	free(m->compute_capability);
	free(m->driver_version);
	free(m->device);
	free(m->ptxas_path);
	free(m->ptxas_options);
	free(m->variants);
	memset(m, 0, sizeof *m);
}

/* An optional string field of at most max bytes: absent or null leaves *slot NULL. */
static st_status field(const cJSON *o, const char *name, size_t max, char **slot, st_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	if (!v || cJSON_IsNull(v))
		return ST_OK;
	if (!cJSON_IsString(v) || !v->valuestring)
		return st_error_set(err, ST_EFORMAT, "capture.json: \"%s\" is not a string", name);
	size_t n = strnlen(v->valuestring, max + 1);
	if (n > max)
		return st_error_set(err, ST_EFORMAT, "capture.json: \"%s\" is over %zu bytes", name, max);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)v->valuestring[i] < 0x20 || v->valuestring[i] == 0x7f)
			return st_error_set(err, ST_EFORMAT, "capture.json: \"%s\" has a control character", name);
	if (!(*slot = strdup(v->valuestring)))
		return st_error_set(err, ST_ENOMEM, "out of memory");
	return ST_OK;
}

static st_status key_field(const cJSON *o, st_capture_meta *m, st_error *err)
{
	char *key = NULL;
	st_status rc = field(o, "key", FIELD_MAX, &key, err);
	if (rc != ST_OK || !key)
		return rc;
	int ok = strlen(key) == 64;
	for (size_t i = 0; ok && i < 64; i++)
		ok = (key[i] >= '0' && key[i] <= '9') || (key[i] >= 'a' && key[i] <= 'f');
	if (ok)
		memcpy(m->key, key, 65);
	free(key);
	return ok ? ST_OK : st_error_set(err, ST_EFORMAT, "capture.json: \"key\" is not 64 lowercase hex digits");
}

/* "gpu_uuid": a lock file name part, so only [0-9a-z-] (the adapter's normalised UUID, or ordinal-N). */
static st_status uuid_field(const cJSON *o, st_capture_meta *m, st_error *err)
{
	char *u = NULL;
	st_status rc = field(o, "gpu_uuid", FIELD_MAX, &u, err);
	if (rc != ST_OK || !u)
		return rc;
	size_t n = strlen(u);
	int ok = n > 0 && n < sizeof m->gpu_uuid;
	for (size_t i = 0; ok && i < n; i++)
		ok = (u[i] >= '0' && u[i] <= '9') || (u[i] >= 'a' && u[i] <= 'z') || u[i] == '-';
	if (ok)
		memcpy(m->gpu_uuid, u, n + 1);
	free(u);
	return ok ? ST_OK : st_error_set(err, ST_EFORMAT, "capture.json: \"gpu_uuid\" is not 1 to 64 of [0-9a-z-]");
}

/* "device" and "variants" go into options_json: only values the pass's settings take. */
static st_status settings_fields(const st_capture_meta *m, st_error *err)
{
	int d;
	st_status rc = m->device ? st_pass__set_device(&d, m->device, "capture.json: \"device\"", err) : ST_OK;
	if (rc != ST_OK)
		return rc;
	if (m->variants && strcmp(m->variants, "on") && strcmp(m->variants, "off") && strcmp(m->variants, "auto"))
		return st_error_set(err, ST_EFORMAT, "capture.json: \"variants\" is not on, off or auto");
	return ST_OK;
}

st_status st_capture_meta_parse(const char *json, size_t len, st_capture_meta *out, st_error *err)
{
	memset(out, 0, sizeof *out);
	if (len > META_MAX)
		return st_error_set(err, ST_EFORMAT, "capture.json: over %u bytes", META_MAX);
	cJSON *o = cJSON_ParseWithLength(json, len);
	st_status rc = ST_OK;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "v");
	if (!cJSON_IsObject(o))
		rc = st_error_set(err, ST_EFORMAT, "capture.json: not a JSON object");
	else if (!cJSON_IsNumber(v) || v->valuedouble != 1.0)
		rc = st_error_set(err, ST_EFORMAT, "capture.json: \"v\" is not 1 (a capture of another sasstune?)");
	/* Invariant: a meta that parses gives a key: the fields that go into it fit the key's limit. */
	const size_t K = ST_CACHE_KEY_FIELD_MAX;
	struct {
		const char *name;
		size_t max;
		char **slot;
	} fs[] = {{"kernel", K, &out->kernel},
		  {"arch", K, &out->arch},
		  {"ptxas_version", K, &out->ptxas_version},
		  {"gpu_name", K, &out->gpu_name},
		  {"compute_capability", K, &out->compute_capability},
		  {"driver_version", K, &out->driver_version},
		  {"device", K, &out->device},
		  {"ptxas_path", FIELD_MAX, &out->ptxas_path},
		  {"ptxas_options", K, &out->ptxas_options},
		  {"variants", K, &out->variants}};
	for (size_t i = 0; rc == ST_OK && i < sizeof fs / sizeof fs[0]; i++)
		rc = field(o, fs[i].name, fs[i].max, fs[i].slot, err);
	if (rc == ST_OK)
		rc = key_field(o, out, err);
	if (rc == ST_OK)
		rc = uuid_field(o, out, err);
	if (rc == ST_OK)
		rc = settings_fields(out, err);
	if (rc == ST_OK && (!out->kernel || !*out->kernel))
		rc = st_error_set(err, ST_EFORMAT, "capture.json: no \"kernel\"");
	cJSON_Delete(o);
	if (rc != ST_OK)
		st_capture_meta_free(out);
	return rc;
}

void st_capture_record(const st_capture_meta *m, const char *ptx, const char *launch_json, const char *options_json,
		       st_plugin_kernel2 *k)
{
	*k = (st_plugin_kernel2){.v1 = {.kernel = m->kernel,
					.arch = m->arch,
					.ptxas_version = m->ptxas_version,
					.launch_json = launch_json,
					.options_json = options_json},
				 .size = sizeof *k,
				 .ptx = ptx,
				 .ptxas_path = m->ptxas_path,
				 .ptxas_options = m->ptxas_options};
}

st_status st_capture_run_key(const uint8_t *cubin, size_t size, const st_plugin_kernel2 *k, char key[65],
			     st_error *err)
{
	if (!k || (!cubin && size))
		return st_error_set(err, ST_EINVAL, "invalid arguments");
	st_plugin_kernel2 rec;
	st_pass__record(k, &rec);
	st_pass_settings set;
	st_status rc = st_pass__settings_load(&set, rec.v1.options_json, err);
	if (rc != ST_OK)
		return rc;
	char sha[65];
	st_cache_sha256_hex(cubin, size, sha);
	st_cache_key_fields fields;
	st_pass_variants_key *vk = malloc(sizeof *vk); /* 4.7 kB: not on a fuzzer's stack */
	rc = vk ? st_pass__key(&set, &rec, sha, &fields, vk, key, err) : st_error_set(err, ST_ENOMEM, "out of memory");
	free(vk);
	st_pass__settings_free(&set);
	return rc;
}

st_status st_capture_lock_path(const st_capture_meta *m, const char *cache_dir, char *out, size_t size,
			       st_error *err)
{
	if (!m->gpu_uuid[0])
		return st_error_set(err, ST_ENOTFOUND, "the capture names no GPU (no \"gpu_uuid\")");
	if ((size_t)snprintf(out, size, "%s/locks/gpu-%s.lock", cache_dir, m->gpu_uuid) >= size)
		return st_error_set(err, ST_EINVAL, "the GPU lock path is too long");
	return ST_OK;
}

st_status st_capture_options(const st_capture_meta *m, const char *budget, const char *cache_dir, char **out,
			     st_error *err)
{
	*out = NULL;
	cJSON *o = cJSON_CreateObject();
	int ok = o && cJSON_AddStringToObject(o, "mode", "tune");
	struct {
		const char *name, *value;
	} kv[] = {{"budget", budget},
		  {"gpu_name", m->gpu_name},
		  {"compute_capability", m->compute_capability},
		  {"driver_version", m->driver_version},
		  {"device", m->device},
		  {"variants", m->variants},
		  {"cache_dir", cache_dir}};
	for (size_t i = 0; ok && i < sizeof kv / sizeof kv[0]; i++)
		if (kv[i].value)
			ok = cJSON_AddStringToObject(o, kv[i].name, kv[i].value) != NULL;
	if (ok)
		*out = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return *out ? ST_OK : st_error_set(err, ST_ENOMEM, "out of memory");
}

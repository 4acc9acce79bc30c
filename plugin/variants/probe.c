/* Remembered ptxas probes: what `ptxas --version` and `--help` said about one file.
 *
 * Asking a binary costs two process runs (about 100 ms each); the pass needs the
 * answer on every compile and every cache lookup (the key holds the versions), so
 * it is kept in a folder, one small file per binary:
 *
 *     <memo_dir>/<16 hex digits of FNV-1a 64 of the identity>
 *     line 1: the identity "realpath|size|mtime_s.mtime_ns|inode"
 *     line 2: the version ("13.5.37")
 *     line 3: "<usage_level 0|1> <maxrreg 0|1> <controls 0|1>" (a memo without the third is asked again)
 *
 * Invariant: an answer is used only when its first line equals the identity of the
 * file as it is now, so a replaced or rebuilt binary is asked again; a memo that
 * cannot be read, parsed or written is ignored (the binary is asked). */
#include "variants_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The identity of path as it is now; false when it cannot be had. */
static bool identity(const char *path, char *out, size_t outsz)
{
	char real[PATH_MAX];
	struct stat st;
	if (!realpath(path, real) || stat(real, &st) != 0)
		return false;
	int n = snprintf(out, outsz, "%s|%lld|%lld.%09ld|%llu", real, (long long)st.st_size, (long long)st.st_mtim.tv_sec,
			 (long)st.st_mtim.tv_nsec, (unsigned long long)st.st_ino);
	return n > 0 && (size_t)n < outsz && !strchr(out, '\n');
}

static void memo_path(const char *dir, const char *id, char *out, size_t outsz)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (const unsigned char *p = (const unsigned char *)id; *p; p++)
		h = (h ^ *p) * 0x100000001b3ull;
	snprintf(out, outsz, "%s/%016llx", dir, (unsigned long long)h);
}

bool st_vr_memo_load(const char *memo_dir, st_vr_binary *b)
{
	char id[PATH_MAX + 96], path[PATH_MAX + 32];
	if (!identity(b->path, id, sizeof id))
		return false;
	memo_path(memo_dir, id, path, sizeof path);
	uint8_t *data = NULL;
	size_t size = 0;
	if (st_read_file(path, &data, &size, NULL) != ST_OK)
		return false;
	char *text = (char *)data, *nl = memchr(text, '\n', size);
	bool ok = false;
	if (nl && (size_t)(nl - text) == strlen(id) && !memcmp(text, id, strlen(id))) {
		char version[32];
		int usage = -1, maxrreg = -1, controls = -1;
		char *end = memchr(nl + 1, '\n', size - (size_t)(nl + 1 - text));
		if (end && end - (nl + 1) > 0 && end - (nl + 1) < (long)sizeof version) {
			snprintf(version, sizeof version, "%.*s", (int)(end - (nl + 1)), nl + 1);
			if (sscanf(end + 1, "%d %d %d", &usage, &maxrreg, &controls) == 3 && (usage == 0 || usage == 1) &&
			    (maxrreg == 0 || maxrreg == 1) && (controls == 0 || controls == 1)) {
				snprintf(b->version, sizeof b->version, "%s", version);
				b->usage_level = usage;
				b->maxrreg = maxrreg;
				b->controls = controls;
				b->reason[0] = '\0';
				ok = true;
			}
		}
	}
	free(data);
	return ok;
}

void st_vr_memo_store(const char *memo_dir, const st_vr_binary *b)
{
	char id[PATH_MAX + 96], path[PATH_MAX + 32], text[PATH_MAX + 192];
	if (!identity(b->path, id, sizeof id) || strchr(b->version, '\n'))
		return;
	if (mkdir(memo_dir, 0755) != 0 && errno != EEXIST)
		return;
	memo_path(memo_dir, id, path, sizeof path);
	int n = snprintf(text, sizeof text, "%s\n%s\n%d %d %d\n", id, b->version, b->usage_level ? 1 : 0,
			 b->maxrreg ? 1 : 0, b->controls ? 1 : 0);
	if (n > 0 && (size_t)n < sizeof text)
		(void)st_write_file_atomic(path, text, (size_t)n, NULL);
}

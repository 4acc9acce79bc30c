/* Finding nvdisasm (lookup order, Triton's bundled one before PATH) and running it from
 * several threads at once without leaking pipe ends into each other's children. */
#include "testutil.h"
#include "sass/sass_internal.h"

#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64];

/* Create root/rel (and its folders) as an executable file holding text. */
static char *make_exec(const char *rel, const char *text)
{
	char *p = malloc(strlen(root) + strlen(rel) + 2);
	sprintf(p, "%s/%s", root, rel);
	for (char *s = p + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = 0;
		mkdir(p, 0755);
		*s = '/';
	}
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	chmod(p, 0755);
	return p;
}

static void expect_found(const char *want_suffix)
{
	char *got = NULL;
	st_error err = {0};
	assert_int_equal(st_nvdisasm_find(NULL, NULL, &got, &err), ST_OK);
	if (!strstr(got, want_suffix))
		fail_msg("found %s, wanted %s", got, want_suffix);
	free(got);
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(p) : unlink(p);
}

static void test_lookup_order(void **state)
{
	(void)state;
	strcpy(root, "/tmp/st-nvd-XXXXXX");
	assert_non_null(mkdtemp(root));
	const char *tri = "lib/python3.11/site-packages/triton/backends/nvidia/bin/nvdisasm";
	char rel[300];
	free(make_exec("venv/bin/python3", "#!/bin/sh\n"));
	snprintf(rel, sizeof rel, "venv/%s", tri);
	free(make_exec(rel, "#!/bin/sh\n"));
	free(make_exec("pyenv/shims/python3", "#!/bin/sh\n"));
	snprintf(rel, sizeof rel, "pyenv/versions/3.11.7/%s", tri);
	free(make_exec(rel, "#!/bin/sh\n"));
	free(make_exec("cuda/bin/ptxas", "#!/bin/sh\n"));
	free(make_exec("cuda/bin/nvdisasm", "#!/bin/sh\n"));
	free(make_exec("plain/nvdisasm", "#!/bin/sh\n"));
	char path[600];
	char *old_path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
	unsetenv("SASSTUNE_NVDISASM");
	unsetenv("CUDA_HOME");
	unsetenv("VIRTUAL_ENV");
	unsetenv("CONDA_PREFIX");
	unsetenv("TRITON_PTXAS_PATH");
	setenv("HOME", root, 1);
	/* PATH's own nvdisasm comes after the one Triton bundles next to a python3 on PATH */
	snprintf(path, sizeof path, "%s/plain:%s/venv/bin", root, root);
	setenv("PATH", path, 1);
	expect_found("/venv/lib/python3.11/site-packages/triton/backends/nvidia/bin/nvdisasm");
	snprintf(path, sizeof path, "%s/plain:%s/pyenv/shims", root, root);
	setenv("PATH", path, 1);
	expect_found("/pyenv/versions/3.11.7/lib/");
	snprintf(path, sizeof path, "%s/plain", root);
	setenv("PATH", path, 1);
	expect_found("/plain/nvdisasm");
	/* TRITON_PTXAS_PATH's folder and CUDA_HOME come before both */
	snprintf(path, sizeof path, "%s/cuda/bin/ptxas", root);
	setenv("TRITON_PTXAS_PATH", path, 1);
	expect_found("/cuda/bin/nvdisasm");
	unsetenv("TRITON_PTXAS_PATH");
	snprintf(path, sizeof path, "%s/cuda", root);
	setenv("CUDA_HOME", path, 1);
	expect_found("/cuda/bin/nvdisasm");
	unsetenv("CUDA_HOME");
	/* a SASSTUNE_NVDISASM that is not executable is an error, not a fall-through */
	setenv("SASSTUNE_NVDISASM", "/nonexistent/nvdisasm", 1);
	char *got = NULL;
	st_error err = {0};
	assert_int_equal(st_nvdisasm_find(NULL, NULL, &got, &err), ST_ENOTFOUND);
	assert_non_null(strstr(err.msg, "SASSTUNE_NVDISASM"));
	unsetenv("SASSTUNE_NVDISASM");
	if (old_path)
		setenv("PATH", old_path, 1);
	free(old_path);
	assert_int_equal(nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

/* Fails (exit 3) when it holds a pipe other than its stdout and stderr. */
static const char fd_check[] = "#!/bin/sh\n"
			       "for f in /proc/$$/fd/*; do\n"
			       "  case ${f##*/} in 0|1|2) continue;; esac\n"
			       "  if [ -p \"$f\" ]; then echo \"inherited pipe fd ${f##*/}\" >&2; exit 3; fi\n"
			       "done\n"
			       "sleep 0.1\n"
			       "echo ok\n";

static char *tool;

static void *runner(void *arg)
{
	(void)arg;
	static const uint8_t bytes[16] = {0x7f, 'E', 'L', 'F'};
	for (int i = 0; i < 6; i++) {
		char *out = NULL;
		size_t len = 0;
		st_error err = {0};
		st_status rc = st_nvdisasm_run(tool, NULL, bytes, sizeof bytes, 10000, &out, &len, &err);
		if (rc != ST_OK) {
			fprintf(stderr, "run %d: %s\n", i, err.msg);
			return (void *)1;
		}
		int ok = len >= 2 && !strncmp(out, "ok", 2);
		free(out);
		if (!ok)
			return (void *)1;
	}
	return NULL;
}

static void test_concurrent_runs_leak_no_pipes(void **state)
{
	(void)state;
	strcpy(root, "/tmp/st-nvd-XXXXXX");
	assert_non_null(mkdtemp(root));
	tool = make_exec("fdcheck", fd_check);
	/* descriptors this process inherited from its runner are not ours to test */
	for (int fd = 3; fd < 1024; fd++) {
		int fl = fcntl(fd, F_GETFD);
		if (fl >= 0)
			fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
	}
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&t[i], NULL, runner, NULL), 0);
	int failed = 0;
	for (int i = 0; i < 3; i++) {
		void *r;
		pthread_join(t[i], &r);
		failed += r != NULL;
	}
	assert_int_equal(failed, 0);
	unlink(tool);
	free(tool);
	rmdir(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup_order),
		cmocka_unit_test(test_concurrent_runs_leak_no_pipes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* sasstune-worker: the GPU side of a runtime session.  Started by the library
 * (fork+exec) with a socket on its stdin and stdout; not meant to be run by
 * hand. */
#include "sasstune/runtime.h"
#include "sasstune/version.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *out)
{
	fprintf(out, "usage: sasstune-worker --serve\n"
		     "       sasstune-worker --help | --version\n\n"
		     "The GPU worker of sasstune's runtime.  The library starts it with a socket on\n"
		     "stdin and stdout and sends it requests (load a reference cubin and a launch\n"
		     "spec, verify a candidate, time two cubins, check that the reference still\n"
		     "reproduces); it owns its own CUDA context, so a candidate that faults or hangs\n"
		     "takes down only this process.  The CUDA driver is loaded from\n"
		     "$SASSTUNE_LIBCUDA, else libcuda.so.1.  Not meant to be run by hand.\n");
}

int main(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--version")) {
		printf("sasstune-worker %s\n", ST_VERSION_STRING);
		return 0;
	}
	if (argc != 2 || strcmp(argv[1], "--serve")) {
		usage(stderr);
		return 2;
	}
	/* keep the socket on private descriptors; stray prints go to stderr */
	int in = fcntl(0, F_DUPFD_CLOEXEC, 3), out = fcntl(1, F_DUPFD_CLOEXEC, 3);
	if (in < 0 || out < 0) {
		fprintf(stderr, "sasstune-worker: no connection on stdin/stdout\n");
		return 2;
	}
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, 0);
		close(null);
	}
	dup2(2, 1);
	int rc = st_worker_serve(in, out);
	close(in);
	close(out);
	return rc;
}

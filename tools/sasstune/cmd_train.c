/* sasstune train (placeholder until its issue lands). */
#include "cli.h"

int st_cmd_train(int argc, char **argv)
{
	(void)argc;
	return st_cli_not_implemented(argv[0]);
}

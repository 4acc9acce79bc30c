/* sasstune tune --captures DIR: tune every captured launch into the schedule cache. */
#ifndef ST_CMD_TUNE_CAPTURES_H
#define ST_CMD_TUNE_CAPTURES_H
int st_cmd_tune_captures(int argc, char **argv);
#endif

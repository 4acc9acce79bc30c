#ifndef SASSTUNE_VERSION_H
#define SASSTUNE_VERSION_H
#define ST_VERSION_MAJOR 0
#define ST_VERSION_MINOR 1
#define ST_VERSION_PATCH 0
#define ST_VERSION_STRING "0.1.0"
const char *st_version(void);
#endif

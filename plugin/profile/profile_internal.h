/* Shared by the profile module's files (not public API). */
#ifndef ST_PROFILE_INTERNAL_H
#define ST_PROFILE_INTERNAL_H
#include <stddef.h>

/* s with every byte outside printable ASCII as '?', cut to n - 1 bytes: for messages. */
const char *st_profile_printable(const char *s, char *buf, size_t n);

#endif

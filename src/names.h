/*
 * names.h: names shown to people (hosts, users, apps, workloads) must show
 * what they are.  A name may hold any visible character of any script; it
 * may not hold a character that is invisible or changes how the text
 * around it reads: controls, bidirectional overrides and isolates,
 * zero-width characters, line and paragraph separators, fillers.
 *
 * Pure logic: no SPI, no allocation, no PostgreSQL headers.
 */
#ifndef ALLOT_NAMES_H
#define ALLOT_NAMES_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Looks for the first such character in s[0 .. len), UTF-8.  Returns false
 * when there is none; else true, with its 1-based character position, its
 * code point and what it is ("a right-to-left override").  An invalid
 * UTF-8 sequence counts as such a character (code point 0xFFFD).
 */
extern bool allot_name_hidden_char(const char *s, int len, int *position,
								   uint32_t *codepoint, const char **what);

#endif							/* ALLOT_NAMES_H */

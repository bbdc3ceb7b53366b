/*
 * check.h - the smallest test harness that can fail: CHECK records a pass or
 * a failure (with file, line and a printf-style reason), check_summary prints
 * "N passed, N failed" and gives the exit status.
 */
#ifndef AMQ_CHECK_H
#define AMQ_CHECK_H

#include <stdio.h>

static int check_passed;
static int check_failed;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (cond) {                                                                        \
			check_passed++;                                                            \
		} else {                                                                           \
			check_failed++;                                                            \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                       \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
		}                                                                                  \
	} while (0)

/* Prints the closing line the runner reads; returns the process exit status. */
static inline int check_summary(void)
{
	printf("%d passed, %d failed\n", check_passed, check_failed);
	return check_failed ? 1 : 0;
}

#endif

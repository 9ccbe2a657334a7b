/* Minimal unit-test harness: CHECK() records a failure with its location and
 * goes on; t_done() prints a summary and returns the exit status. */
#ifndef SLUICE_TESTS_T_H
#define SLUICE_TESTS_T_H

#include <stdio.h>
#include <string.h>

static int t_checks, t_failed;

#define CHECK(cond) do { \
	t_checks++; \
	if (!(cond)) { \
		t_failed++; \
		fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
	} \
} while (0)

#define CHECK_STR(a, b) do { \
	const char *t_a_ = (a), *t_b_ = (b); \
	t_checks++; \
	if (!t_a_ || !t_b_ || strcmp(t_a_, t_b_) != 0) { \
		t_failed++; \
		fprintf(stderr, "%s:%d: CHECK_STR failed: \"%s\" != \"%s\"\n", \
		        __FILE__, __LINE__, t_a_ ? t_a_ : "(null)", t_b_ ? t_b_ : "(null)"); \
	} \
} while (0)

static inline int t_done(const char *name)
{
	printf("%s: %d checks, %d failed\n", name, t_checks, t_failed);
	return t_failed ? 1 : 0;
}

#endif

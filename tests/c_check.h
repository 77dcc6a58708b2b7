/* CHECK for the tests written in C: counts checks and failures, prints the
 * failed condition with its place, and goes on. End with C_CHECK_SUMMARY(). */
#ifndef SFC_TESTS_C_CHECK_H
#define SFC_TESTS_C_CHECK_H
#include <stdio.h>

static int failures = 0, checks = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    ++checks;                                                                  \
    if (!(cond)) {                                                             \
      ++failures;                                                              \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

#endif /* SFC_TESTS_C_CHECK_H */

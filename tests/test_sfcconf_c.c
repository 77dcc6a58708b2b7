/* libsfcconf from plain C: every entry point, every error code a caller can
 * meet, on the tables tests/predictor/fixture.cpp writes into argv[1]. */
#include <fenv.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "c_check.h"
#include "sfcconf.h"

static char path_buffer[4096];
static const char* in_dir(const char* dir, const char* name) {
  snprintf(path_buffer, sizeof path_buffer, "%s/%s", dir, name);
  return path_buffer;
}

static void check_open_errors(const char* dir) {
  sfcconf_handle* conf = (sfcconf_handle*)1;
  CHECK(sfcconf_open(in_dir(dir, "this_machine.sfctable"), NULL, NULL) == SFCCONF_ERR_ARGUMENT);
  CHECK(sfcconf_open(in_dir(dir, "missing.sfctable"), NULL, &conf) == SFCCONF_ERR_UNREADABLE);
  CHECK(conf == NULL);
  CHECK(strstr(sfcconf_last_error(), "missing.sfctable") != NULL);
  /* A folder: the fixtures' table of this machine is chosen, the broken ones passed over. */
  CHECK(sfcconf_open(dir, NULL, &conf) == SFCCONF_OK);
  sfcconf_close(conf);
  /* A folder without tables: unreadable, saying so. */
  mkdir(in_dir(dir, "no-tables"), 0755);
  CHECK(sfcconf_open(in_dir(dir, "no-tables"), NULL, &conf) == SFCCONF_ERR_UNREADABLE);
  CHECK(strstr(sfcconf_last_error(), "holds no tuning tables") != NULL);
  CHECK(sfcconf_open(in_dir(dir, "empty.sfctable"), NULL, &conf) == SFCCONF_ERR_CORRUPT);
  CHECK(sfcconf_open(in_dir(dir, "truncated.sfctable"), NULL, &conf) == SFCCONF_ERR_CORRUPT);
  CHECK(strlen(sfcconf_last_error()) > 0);
  /* Another machine's table is refused, naming its platform... */
  CHECK(sfcconf_open(in_dir(dir, "other_machine.sfctable"), NULL, &conf) == SFCCONF_ERR_PLATFORM);
  CHECK(strstr(sfcconf_last_error(), "Some Other CPU") != NULL);
  CHECK(conf == NULL);
  /* ... and this machine's, when another platform is asked for. */
  CHECK(sfcconf_open(in_dir(dir, "this_machine.sfctable"), "0123456789abcdef", &conf) ==
        SFCCONF_ERR_PLATFORM);
  CHECK(sfcconf_open(in_dir(dir, "this_machine.sfctable"), "elsewhere", &conf) == SFCCONF_ERR_ARGUMENT);
  /* A platform block edited, duplicated or missing: corrupt, never a crash. */
  CHECK(sfcconf_open(in_dir(dir, "edited_platform.sfctable"), NULL, &conf) == SFCCONF_ERR_CORRUPT);
  CHECK(strstr(sfcconf_last_error(), "does not match") != NULL);
  CHECK(sfcconf_open(in_dir(dir, "duplicated_platform.sfctable"), NULL, &conf) == SFCCONF_ERR_CORRUPT);
  CHECK(strstr(sfcconf_last_error(), "twice") != NULL);
  CHECK(sfcconf_open(in_dir(dir, "no_platform.sfctable"), NULL, &conf) == SFCCONF_ERR_CORRUPT);
  CHECK(strstr(sfcconf_last_error(), "incomplete") != NULL);
  CHECK(conf == NULL);
}

static void check_queries(const char* dir) {
  sfcconf_handle* conf = NULL;
  sfcconf_answer a;
  CHECK(sfcconf_open(in_dir(dir, "this_machine.sfctable"), NULL, &conf) == SFCCONF_OK);
  if (!conf) return;

  /* The table holds blocked shapes only: a row-major query borrows theirs, and says so (twice: the cache
   * too). */
  for (int round = 0; round < 2; ++round) {
    sfcconf_layout source = SFCCONF_COL_MAJOR;
    CHECK(sfcconf_query_source(conf, 256, 1024, 4096, SFCCONF_F32, 2, SFCCONF_ROW_MAJOR, &a, NULL, &source) ==
          SFCCONF_OK);
    CHECK(source == SFCCONF_BLOCKED);
    CHECK(sfcconf_query_source(conf, 1024, 256, 4096, SFCCONF_F32, 2, SFCCONF_BLOCKED, &a, NULL, &source) ==
          SFCCONF_OK);
    CHECK(source == SFCCONF_BLOCKED && a.tier == SFCCONF_TIER_EXACT);
  }

  /* A tuned shape, twice: the second answer comes from the cache. */
  for (int round = 0; round < 2; ++round) {
    CHECK(sfcconf_query(conf, 1024, 256, 4096, SFCCONF_F32, 2, &a) == SFCCONF_OK);
    CHECK(a.tier == SFCCONF_TIER_EXACT);
    CHECK(a.k_layers == 2 && a.k_block_factor == 4);
    CHECK(a.distance == 0.0);
    CHECK(a.nearest_m == 1024 && a.nearest_n == 256 && a.nearest_k == 4096);
  }
  CHECK(sfcconf_query(conf, 1100, 1000, 1000, SFCCONF_F32, 2, &a) == SFCCONF_OK);
  CHECK(a.tier == SFCCONF_TIER_NEAREST);
  CHECK(a.k_layers == 1 && a.k_block_factor == 2);
  CHECK(a.nearest_m == 1024 && a.nearest_n == 1024 && a.nearest_k == 1024);
  CHECK(a.distance > 0.0 && a.distance < 0.2);
  /* Far away, beyond any distance leave-one-out could test (2 here): the
   * model answers, though the neighbours beat it wherever it was tested. */
  CHECK(sfcconf_query(conf, 16, 16, 1 << 20, SFCCONF_F32, 2, &a) == SFCCONF_OK);
  CHECK(a.tier == SFCCONF_TIER_MODEL);
  CHECK(a.k_layers >= 1 && a.k_layers <= 8 && a.k_block_factor >= 1 && a.k_block_factor <= 8);
  /* No tuned f64 shapes and no calibration for 3 threads: the model, with
   * the 2-thread calibration (gamma per core, beta shared). */
  CHECK(sfcconf_query(conf, 1024, 1024, 1024, SFCCONF_F64, 3, &a) == SFCCONF_OK);
  CHECK(a.tier == SFCCONF_TIER_MODEL);
  CHECK(isinf(a.distance) && a.nearest_m == 0);

  CHECK(sfcconf_query(conf, 0, 64, 64, SFCCONF_F32, 2, &a) == SFCCONF_ERR_ARGUMENT);
  CHECK(strstr(sfcconf_last_error(), "M=0") != NULL);
  CHECK(sfcconf_query(conf, 64, 64, -1, SFCCONF_F32, 2, &a) == SFCCONF_ERR_ARGUMENT);
  CHECK(sfcconf_query(conf, 64, 64, 64, SFCCONF_F32, 0, &a) == SFCCONF_ERR_ARGUMENT);
  CHECK(sfcconf_query(conf, INT64_MAX, 64, 64, SFCCONF_F32, 2, &a) == SFCCONF_ERR_ARGUMENT);
  CHECK(sfcconf_query(conf, 64, 64, 64, (sfcconf_dtype)7, 2, &a) == SFCCONF_ERR_ARGUMENT);
  CHECK(sfcconf_query(conf, 64, 64, 64, SFCCONF_F32, 2, NULL) == SFCCONF_ERR_ARGUMENT);
  CHECK(sfcconf_query(NULL, 64, 64, 64, SFCCONF_F32, 2, &a) == SFCCONF_ERR_ARGUMENT);
  /* The fixture tuned the blocked layout only: a row-major query borrows its
   * winners; an unknown layout is refused. */
  CHECK(sfcconf_query_layout(conf, 1024, 256, 4096, SFCCONF_F32, 2, SFCCONF_ROW_MAJOR, &a) == SFCCONF_OK);
  CHECK(a.tier == SFCCONF_TIER_EXACT && a.k_layers == 2 && a.k_block_factor == 4);
  CHECK(sfcconf_query_layout(conf, 64, 64, 64, SFCCONF_F32, 2, (sfcconf_layout)5, &a) ==
        SFCCONF_ERR_ARGUMENT);
  CHECK(strstr(sfcconf_last_error(), "layout") != NULL);
  sfcconf_close(conf);
}

static void check_other_platform_by_name(const char* dir) {
  char hash[64] = {0};
  FILE* f = fopen(in_dir(dir, "other_machine.hash"), "r");
  CHECK(f != NULL);
  if (!f) return;
  CHECK(fscanf(f, "%63s", hash) == 1);
  fclose(f);
  sfcconf_handle* conf = NULL;
  CHECK(sfcconf_open(in_dir(dir, "other_machine.sfctable"), hash, &conf) == SFCCONF_OK);
  sfcconf_answer a;
  sfcconf_platform_match match = SFCCONF_PLATFORM_EXACT;
  CHECK(sfcconf_query(conf, 256, 256, 256, SFCCONF_F32, 2, &a) == SFCCONF_OK);
  CHECK(a.tier == SFCCONF_TIER_EXACT && a.k_layers == 1 && a.k_block_factor == 2);
  CHECK(sfcconf_query_match(conf, 256, 256, 256, SFCCONF_F32, 2, SFCCONF_BLOCKED, &a, &match) == SFCCONF_OK);
  CHECK(match == SFCCONF_PLATFORM_FOREIGN);
  sfcconf_close(conf);
  /* Forced with "any": used, and every answer says it is foreign. */
  CHECK(sfcconf_open(in_dir(dir, "other_machine.sfctable"), "any", &conf) == SFCCONF_OK);
  CHECK(sfcconf_query_match(conf, 256, 256, 4096, SFCCONF_F32, 2, SFCCONF_BLOCKED, &a, &match) == SFCCONF_OK);
  CHECK(a.tier == SFCCONF_TIER_EXACT && a.k_layers == 2 && match == SFCCONF_PLATFORM_FOREIGN);
  sfcconf_close(conf);
  /* This machine's own table: exact; a NULL match pointer is allowed. */
  CHECK(sfcconf_open(in_dir(dir, "this_machine.sfctable"), NULL, &conf) == SFCCONF_OK);
  CHECK(sfcconf_query_match(conf, 256, 256, 256, SFCCONF_F32, 2, SFCCONF_BLOCKED, &a, &match) == SFCCONF_OK);
  CHECK(match == SFCCONF_PLATFORM_EXACT);
  CHECK(sfcconf_query_match(conf, 256, 256, 256, SFCCONF_F32, 2, SFCCONF_BLOCKED, &a, NULL) == SFCCONF_OK);
  sfcconf_close(conf);
}

static void check_model_tier(const char* dir) {
  sfcconf_handle* conf = NULL;
  sfcconf_answer a;
  CHECK(sfcconf_open(in_dir(dir, "calibrated_only.sfctable"), NULL, &conf) == SFCCONF_OK);
  CHECK(sfcconf_query(conf, 16, 16, 1 << 20, SFCCONF_F32, 2, &a) == SFCCONF_OK);
  CHECK(a.tier == SFCCONF_TIER_MODEL);
  CHECK(a.k_layers >= 1 && a.k_layers <= 8 && a.k_block_factor >= 1 && a.k_block_factor <= 8);
  CHECK(isinf(a.distance));
  sfcconf_close(conf);
  /* A table tuned and calibrated on 2 threads answers 1 and 16 threads from the model. */
  CHECK(sfcconf_open(in_dir(dir, "this_machine.sfctable"), NULL, &conf) == SFCCONF_OK);
  CHECK(sfcconf_query(conf, 256, 256, 256, SFCCONF_F32, 1, &a) == SFCCONF_OK);
  CHECK(a.tier == SFCCONF_TIER_MODEL && isinf(a.distance));
  CHECK(sfcconf_query(conf, 4096, 4096, 4096, SFCCONF_F32, 16, &a) == SFCCONF_OK);
  CHECK(a.tier == SFCCONF_TIER_MODEL);
  sfcconf_close(conf);
}

static void check_without_a_file(void) {
  sfcconf_handle* conf = NULL;
  sfcconf_answer a;
  CHECK(sfcconf_open(NULL, NULL, &conf) == SFCCONF_OK);
  CHECK(sfcconf_query(conf, 512, 512, 512, SFCCONF_F32, 2, &a) == SFCCONF_OK);
  CHECK(a.tier == SFCCONF_TIER_DEFAULT && a.k_layers == 1 && a.k_block_factor >= 1);
  sfcconf_close(conf);
  sfcconf_close(NULL);
}

static void check_names(void) {
  CHECK(strcmp(sfcconf_status_name(SFCCONF_ERR_PLATFORM), "platform") == 0);
  CHECK(strcmp(sfcconf_status_name((sfcconf_status)99), "unknown") == 0);
  CHECK(strcmp(sfcconf_tier_name(SFCCONF_TIER_DEFAULT), "default") == 0);
  CHECK(strcmp(sfcconf_tier_name(SFCCONF_TIER_NEAREST), "nearest") == 0);
  CHECK(strcmp(sfcconf_platform_match_name(SFCCONF_PLATFORM_COMPATIBLE), "compatible") == 0);
  CHECK(strcmp(sfcconf_platform_match_name((sfcconf_platform_match)7), "unknown") == 0);
}

/* Opening and querying raise no floating-point exception flag, on a table
 * whose unmeasured configurations are NaN (numpy reads the flags after each
 * BLAS call and would report an invalid value that is not there), and a flag
 * the caller had set stays set. */
static void check_fp_flags(const char* dir) {
  const int watched = FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW;
  feclearexcept(FE_ALL_EXCEPT);
  sfcconf_handle* conf = NULL;
  CHECK(sfcconf_open(in_dir(dir, "partial.sfctable"), NULL, &conf) == SFCCONF_OK);
  CHECK(fetestexcept(watched) == 0);
  if (!conf) return;
  sfcconf_answer a;
  const int64_t sizes[][3] = {{256, 256, 256}, {700, 1500, 3000}, {1, 4096, 4096}, {100000, 3, 7}};
  for (int layout = SFCCONF_BLOCKED; layout <= SFCCONF_COL_MAJOR; ++layout)
    for (int i = 0; i < 4; ++i)
      for (int threads = 1; threads <= 3; ++threads)
        CHECK(sfcconf_query_layout(conf, sizes[i][0], sizes[i][1], sizes[i][2], SFCCONF_F32, threads,
                                   (sfcconf_layout)layout, &a) == SFCCONF_OK);
  CHECK(fetestexcept(watched) == 0);
  feraiseexcept(FE_DIVBYZERO);
  CHECK(sfcconf_query(conf, 333, 444, 555, SFCCONF_F64, 2, &a) == SFCCONF_OK);
  CHECK(fetestexcept(watched) == FE_DIVBYZERO);
  feclearexcept(FE_ALL_EXCEPT);
  sfcconf_close(conf);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s FIXTURE_DIR\n", argv[0]);
    return 2;
  }
  check_open_errors(argv[1]);
  check_queries(argv[1]);
  check_other_platform_by_name(argv[1]);
  check_model_tier(argv[1]);
  check_without_a_file();
  check_names();
  check_fp_flags(argv[1]);
  printf("%d passed, %d failed\n", checks - failures, failures);
  return failures == 0 ? 0 : 1;
}

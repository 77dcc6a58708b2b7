/* libsfcconf: which (K_layers, k_block_factor) should an SFC-CA GEMM of
 * M x N x K use? Answers from a tuning database or an exported tuning table,
 * in well under a microsecond, from C or C++ (see sfcconf.hpp).
 *
 *   sfcconf_handle* conf;
 *   if (sfcconf_open("tuned.sfctable", NULL, &conf) != SFCCONF_OK) {
 *     fprintf(stderr, "%s\n", sfcconf_last_error());
 *     ...
 *   }
 *   sfcconf_answer a;
 *   if (sfcconf_query(conf, m, n, k, SFCCONF_F32, threads, &a) == SFCCONF_OK)
 *     use(a.k_layers, a.k_block_factor);
 *   sfcconf_close(conf);
 *
 * Answers come in tiers: the measured winner of a tuned shape, or (1, 1)
 * where that runs within 2% of it (exact), that of a tuned shape nearby in
 * log2(M, N, K) space (nearest), the analytical model when a platform of the
 * file is calibrated (model: at a thread count with no tuned shapes too),
 * else K_layers = 1 with the k_block_factor whose panels fit L2 (default).
 * sfcconf_query_match also says how the platform the answer came from
 * matches this machine: exact, compatible (same ISA, caches within a factor
 * of 1.5, another CPU model or core count) or foreign (only when forced with
 * the platform "any").
 *
 * Errors come back as status codes; sfcconf_last_error() then describes the
 * last failure of the calling thread. Nothing exits, prints or throws. Once
 * opened, a handle may be queried from any number of threads at once; repeated
 * shapes are answered from a cache inside the handle.
 */
#ifndef SFCCONF_H
#define SFCCONF_H

#include <stdint.h>

#include "sfcconf_version.h" /* SFCCONF_VERSION_MAJOR, _MINOR, _PATCH, _STRING */

#if defined(__GNUC__)
#define SFCCONF_API __attribute__((visibility("default")))
#else
#define SFCCONF_API
#endif

/* The enums' values travel as ints. C++ gives them a fixed underlying type,
 * so that a value a C caller passes from outside the list is a value the
 * library can refuse, not undefined behaviour it never gets to check. */
#ifdef __cplusplus
#define SFCCONF_ENUM(name) enum name : int
#else
#define SFCCONF_ENUM(name) enum name
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef SFCCONF_ENUM(sfcconf_status){
    SFCCONF_OK = 0,
    SFCCONF_ERR_ARGUMENT = 1,   /* a null pointer, a size < 1, threads < 1, an unknown dtype */
    SFCCONF_ERR_UNREADABLE = 2, /* the file is missing, a directory or not readable */
    SFCCONF_ERR_CORRUPT = 3,    /* truncated, edited, empty or not a tuning table/database */
    SFCCONF_ERR_PLATFORM = 4,   /* tuned on another platform (the message names it) */
    SFCCONF_ERR_MEMORY = 5,     /* out of memory */
    SFCCONF_ERR_INTERNAL = 6    /* a bug: please report the message */
} sfcconf_status;

typedef SFCCONF_ENUM(sfcconf_dtype){SFCCONF_F32 = 0, SFCCONF_F64 = 1, SFCCONF_BF16 = 2} sfcconf_dtype;

/* How the GEMM is called: on the blocked layout, or on plain row- or
 * column-major matrices (packing included). Each is tuned on its own; a
 * plain layout with no tuned shapes borrows the other plain layout's
 * (transposed), or else the blocked layout's. */
typedef SFCCONF_ENUM(sfcconf_layout){SFCCONF_BLOCKED = 0, SFCCONF_ROW_MAJOR = 1,
                                     SFCCONF_COL_MAJOR = 2} sfcconf_layout;

typedef SFCCONF_ENUM(sfcconf_tier){SFCCONF_TIER_EXACT = 0, SFCCONF_TIER_NEAREST = 1, SFCCONF_TIER_MODEL = 2,
                                   SFCCONF_TIER_DEFAULT = 3} sfcconf_tier;

/* How the platform whose results answered matches this machine (since 0.3). */
typedef SFCCONF_ENUM(sfcconf_platform_match){SFCCONF_PLATFORM_EXACT = 0, SFCCONF_PLATFORM_COMPATIBLE = 1,
                                             SFCCONF_PLATFORM_FOREIGN = 2} sfcconf_platform_match;

typedef struct sfcconf_answer {
  int k_layers;       /* 1..8 */
  int k_block_factor; /* 1..8 */
  sfcconf_tier tier;  /* which tier answered */
  /* Distance in log2(M, N, K) space to the nearest tuned shape of the same
   * dtype, threads and layout (or of the layout borrowed, see sfcconf_layout:
   * then the shape is given as the queried layout sees it), and that shape;
   * INFINITY and zeros when there is none. */
  double distance;
  int64_t nearest_m, nearest_n, nearest_k;
} sfcconf_answer;

typedef struct sfcconf_handle sfcconf_handle; /* an opened source of tuned configurations */

/* Opens `path`: a tuning database (SQLite), an exported tuning table, or a
 * folder of them (per dtype and thread count the best table for the platform
 * chosen: exact before compatible, full before "-small"/"-quick", then the
 * most shapes; SFC_VERBOSE=1 prints each choice on stderr; since 0.5),
 * loading every thread count and dtype it holds for the platform chosen:
 *   "this"   results of this machine's hardware (exact), else of a compatible
 *            one; a file of foreign platforms only is refused with
 *            SFCCONF_ERR_PLATFORM, the message naming the fields that differ
 *   "any"    the best match the file holds, foreign included (forced)
 *   a hash   that platform (16 hex digits, as `sfc-tune db info` lists them)
 * NULL or "" reads the environment variable SFC_PLATFORM, and "this" when it
 * is unset. `path` NULL opens no file: every answer is then the default tier
 * for this machine. On success *out holds the handle; on failure *out is NULL. */
SFCCONF_API sfcconf_status sfcconf_open(const char* path, const char* platform, sfcconf_handle** out);

/* The configuration for C = A * B with A M x K, B K x N on `threads` threads,
 * called on the blocked layout. Safe to call from many threads at once on one
 * handle. */
SFCCONF_API sfcconf_status sfcconf_query(sfcconf_handle* conf, int64_t m, int64_t n, int64_t k,
                                         sfcconf_dtype dtype, int threads, sfcconf_answer* answer);

/* The same for a GEMM called through `layout` (sfc::gemm on row-major
 * matrices: SFCCONF_ROW_MAJOR). */
SFCCONF_API sfcconf_status sfcconf_query_layout(sfcconf_handle* conf, int64_t m, int64_t n, int64_t k,
                                                sfcconf_dtype dtype, int threads, sfcconf_layout layout,
                                                sfcconf_answer* answer);

/* sfcconf_query_layout, and how the platform that answered matches this
 * machine (`platform` may be NULL). Since 0.3. */
SFCCONF_API sfcconf_status sfcconf_query_match(sfcconf_handle* conf, int64_t m, int64_t n, int64_t k,
                                               sfcconf_dtype dtype, int threads, sfcconf_layout layout,
                                               sfcconf_answer* answer, sfcconf_platform_match* platform);

/* sfcconf_query_match, and whose tuned shapes answered: `source` is the
 * queried layout itself when it has tuned shapes of its own (or when the
 * model or default tier answered), else the layout it borrowed from (see
 * sfcconf_layout): an exact or nearest answer then comes from that layout's
 * measurements, not this one's. `platform` and `source` may be NULL. Since 0.5. */
SFCCONF_API sfcconf_status sfcconf_query_source(sfcconf_handle* conf, int64_t m, int64_t n, int64_t k,
                                                sfcconf_dtype dtype, int threads, sfcconf_layout layout,
                                                sfcconf_answer* answer, sfcconf_platform_match* platform,
                                                sfcconf_layout* source);

/* Releases the handle (NULL is ignored). No query may be running on it. */
SFCCONF_API void sfcconf_close(sfcconf_handle* conf);

/* Shape recording (since 0.4): counts every shape this library is queried
 * for, per (M, N, K, dtype, threads, layout), with the tier and distance of
 * its answer, into a plain-text file that `sfc-tune record show` ranks and
 * `sfc-tune tune --from-record` tunes. Setting the environment variable
 * SFC_RECORD=FILE before the first sfcconf_open does the same without a call.
 * Counting costs a few nanoseconds per query, without locks; the file is
 * written every two seconds and at exit, merged with what it holds (several
 * processes may record into one file). Recording is process-wide.
 *
 * sfcconf_record_open: starts recording into `path` (a recording into another
 * file is written and stopped). SFCCONF_ERR_CORRUPT: `path` exists and is not
 * a shape record; SFCCONF_ERR_UNREADABLE: it or `path`.lock cannot be created
 * or read. sfcconf_record_flush: writes the counts now (SFCCONF_OK when none
 * is active). sfcconf_record_close: writes them and stops recording. */
SFCCONF_API sfcconf_status sfcconf_record_open(const char* path);
SFCCONF_API sfcconf_status sfcconf_record_flush(void);
SFCCONF_API sfcconf_status sfcconf_record_close(void);

/* The message of the calling thread's last failed call ("" if none). Valid
 * until that thread's next failing call. */
SFCCONF_API const char* sfcconf_last_error(void);

/* Names for messages and logs: "ok", "argument", ...; "exact", "nearest",
 * "model", "default"; "exact", "compatible", "foreign". Unknown values give
 * "unknown". */
SFCCONF_API const char* sfcconf_status_name(sfcconf_status status);
SFCCONF_API const char* sfcconf_tier_name(sfcconf_tier tier);
SFCCONF_API const char* sfcconf_platform_match_name(sfcconf_platform_match match);

#ifdef __cplusplus
}
#endif

#endif /* SFCCONF_H */

// GemmPeer: a GEMM library that `sfc-tune bench` compares SFC-CA GEMM against.
//
// OpenBLAS, BLIS and LIBXSMM's libxsmmnoblas all export the same BLAS symbols
// (sgemm_, cblas_sgemm, ...), so they cannot be linked into one binary. Each
// peer is therefore loaded at run time with dlopen(RTLD_LOCAL) and reached
// through dlsym only. That also keeps the binary free of link-time
// dependencies on them, so it can be carried to a machine that lacks some.
//
// Where a library comes from, in order:
//   1. the environment variable SFC_<NAME>_LIBRARY (SFC_OPENBLAS_LIBRARY,
//      SFC_BLIS_LIBRARY, SFC_ONEDNN_LIBRARY): a path, or a file name that the
//      dynamic loader searches (LD_LIBRARY_PATH);
//   2. the path CMake found when the project was configured;
//   3. the library's usual soname, searched by the dynamic loader.
// A library that cannot be loaded, or lacks a needed symbol, is skipped with
// a note that says why; it is never an error.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sfc/gemm.hpp"
#include "sfc/measure.hpp"  // GemmArguments

namespace sfc {

class GemmPeer {
 public:
  virtual ~GemmPeer() = default;

  virtual std::string_view name() const = 0;  // "openblas", "blis", "onednn"
  // Library, version and path, for the report header.
  virtual std::string description() const = 0;
  virtual bool supports(DType dtype) const = 0;
  // Threads the next gemm() calls use.
  virtual void set_threads(int threads) = 0;
  // BLAS's xGEMM with the semantics of GemmPlan::gemm: C = alpha op(A) op(B)
  // + beta C on plain matrices in `layout` (row_major or col_major), the
  // shape's M x N x K being op(A)'s M x K and op(B)'s K x N, a transposed
  // operand stored transposed (op(A) = A^T: A is K x M, lda its leading
  // dimension). beta = 0 overwrites C. bf16: A and B hold raw bfloat16 bits,
  // C is float. Throws sfc::Error for a dtype the peer does not support or
  // Layout::blocked, std::runtime_error if the library fails.
  virtual void gemm(DType dtype, Layout layout, const GemmArguments& call, const GemmShape& shape,
                    const void* a, std::int64_t lda, const void* b, std::int64_t ldb, void* c,
                    std::int64_t ldc) const = 0;
  // Why this peer should be left out of the best-peer ratio (a reference,
  // unoptimised build: BLIS's "generic" sub-configuration); empty when it
  // counts. It is still timed and listed.
  virtual std::string not_a_contender() const { return {}; }
};

// The outcome of loading one peer: the peer, or a note saying why it is skipped.
struct PeerLoad {
  std::unique_ptr<GemmPeer> peer;
  std::string note;  // empty when `peer` is set
};

// Every peer the benchmark knows, in the order the report lists them.
const std::vector<std::string>& known_peer_names();

// "openblas,blis,onednn" -> the names, in the given order, each once;
// "none" -> no peer (SFC-CA timed alone). Throws sfc::Error for an unknown
// name or an empty list.
std::vector<std::string> parse_peer_list(std::string_view text);

// Loads the named peer (see the search order above); `library` non-empty
// replaces steps 1-3. Throws sfc::Error only for an unknown name.
PeerLoad load_peer(std::string_view name, const std::string& library = {});

}  // namespace sfc

// fp64 reference GEMM and the error bound (see sfc/verify.hpp).
#include "sfc/verify.hpp"

#include <cmath>
#include <cstring>
#include <vector>

#include "sfc/aligned_buffer.hpp"

namespace sfc {
namespace {

// splitmix64 of (seed, index): a counter-based generator, so fills are
// parallel and reproducible.
float uniform(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t z = seed * 0x9e3779b97f4a7c15ull + index + 0x632be59bd9b4e019ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return float(z >> 40) / float(1ull << 23) - 1.0f;
}

std::uint16_t to_bf16(float v) {
  std::uint32_t bits;
  std::memcpy(&bits, &v, 4);
  bits += 0x7fffu + ((bits >> 16) & 1u);  // round to nearest even (inputs are finite)
  return std::uint16_t(bits >> 16);
}

double from_bf16(std::uint16_t h) {
  const std::uint32_t bits = std::uint32_t(h) << 16;
  float v;
  std::memcpy(&v, &bits, 4);
  return v;
}

double element(const void* data, std::size_t i, DType dtype) {
  switch (dtype) {
    case DType::f32: return static_cast<const float*>(data)[i];
    case DType::f64: return static_cast<const double*>(data)[i];
    case DType::bf16: return from_bf16(static_cast<const std::uint16_t*>(data)[i]);
  }
  return 0;
}

}  // namespace

void fill_uniform(void* data, std::size_t count, DType dtype, std::uint64_t seed, int threads) {
  const std::int64_t n = std::int64_t(count);
  const int team = threads > 0 ? threads : default_threads();
#pragma omp parallel for schedule(static) num_threads(team)
  for (std::int64_t i = 0; i < n; ++i) {
    const float v = uniform(seed, std::uint64_t(i));
    switch (dtype) {
      case DType::f32: static_cast<float*>(data)[i] = v; break;
      case DType::f64: static_cast<double*>(data)[i] = v; break;
      case DType::bf16: static_cast<std::uint16_t*>(data)[i] = to_bf16(v); break;
    }
  }
}

CheckResult check_against_reference(GemmPlan& plan, Layout layout, std::uint64_t seed) {
  const GemmShape s = plan.shape();
  const DType dt = plan.dtype();
  const bool row = layout != Layout::col_major;  // blocked is packed from row-major
  const std::size_t in = input_size(dt), out = output_size(dt);
  AlignedBuffer a(std::size_t(s.m * s.k) * in), b(std::size_t(s.k * s.n) * in),
      c(std::size_t(s.m * s.n) * out);
  const int team = plan.threads();
  fill_uniform(a.data(), std::size_t(s.m * s.k), dt, seed, team);
  fill_uniform(b.data(), std::size_t(s.k * s.n), dt, seed + 1, team);
  const std::int64_t lda = row ? s.k : s.m, ldb = row ? s.n : s.k, ldc = row ? s.n : s.m;
  const Layout plain = row ? Layout::row_major : Layout::col_major;

  if (layout == Layout::blocked) {
    AlignedBuffer ab(plan.a_elements() * in), bb(plan.b_elements() * in), cb(plan.c_elements() * out);
    plan.pack_a(plain, a.data(), lda, ab.data());
    plan.pack_b(plain, b.data(), ldb, bb.data());
    plan.execute(ab.data(), bb.data(), cb.data());
    plan.unpack_c(cb.data(), plain, c.data(), ldc);
  } else {
    plan.gemm(layout, a.data(), lda, b.data(), ldb, c.data(), ldc);
  }

  // Reference and |A||B| in fp64, row by row (i-k-j order streams B and C rows).
  double err2 = 0, ref2 = 0, abs2 = 0;
#pragma omp parallel reduction(+ : err2, ref2, abs2) num_threads(team)
  {
    std::vector<double> ref(std::size_t(s.n)), mag(std::size_t(s.n));
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < s.m; ++i) {
      std::fill(ref.begin(), ref.end(), 0.0);
      std::fill(mag.begin(), mag.end(), 0.0);
      for (std::int64_t p = 0; p < s.k; ++p) {
        const double aip = element(a.data(), std::size_t(row ? i * lda + p : p * lda + i), dt);
        for (std::int64_t j = 0; j < s.n; ++j) {
          const double bpj = element(b.data(), std::size_t(row ? p * ldb + j : j * ldb + p), dt);
          ref[std::size_t(j)] += aip * bpj;
          mag[std::size_t(j)] += std::fabs(aip * bpj);
        }
      }
      for (std::int64_t j = 0; j < s.n; ++j) {
        const std::size_t ci = std::size_t(row ? i * ldc + j : j * ldc + i);
        const double got = dt == DType::f64 ? static_cast<const double*>(c.data())[ci]
                                            : static_cast<const float*>(c.data())[ci];
        const double r = ref[std::size_t(j)];
        err2 += (got - r) * (got - r);
        ref2 += r * r;
        abs2 += mag[std::size_t(j)] * mag[std::size_t(j)];
      }
    }
  }
  const double u = dt == DType::f64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
  const double ku = double(s.k) * u;
  CheckResult r;
  r.rel_error = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  r.bound = (ku / (1 - ku)) * (ref2 > 0 ? std::sqrt(abs2 / ref2) : 1.0);
  return r;
}

}  // namespace sfc

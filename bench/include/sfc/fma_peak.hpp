// The machine's arithmetic ceiling, measured: fp32 fused multiply-adds with
// every operand in registers, on all of the benchmark's threads at once. No
// GEMM beats it at the same clock speed (a shared or turbo-boosted CPU's clock
// drifts by a few percent over minutes); the report gives each
// implementation's share of it, so a reader sees how much room is left above
// the fastest library.
#pragma once

namespace sfc {

// GFLOP/s of all `threads` together: the best of five short runs of the
// whole team by the wall clock, so more threads than cores measure the cores.
// AVX-512 where the CPU has it, else AVX2 + FMA; 0 when the CPU has neither
// (the report then leaves it out).
double fma_peak_gflops(int threads);

// The same for bf16 on AMX tiles (TDPBF16PS, every operand in tile registers),
// the ceiling of a bf16 GEMM where the CPU has them (oneDNN's runs there, and
// SFC-CA's unless SFC_AMX=0); 0 when the CPU or the OS does not allow tiles
// (sfc::amx_bf16_usable).
double tile_peak_gflops(int threads);

}  // namespace sfc

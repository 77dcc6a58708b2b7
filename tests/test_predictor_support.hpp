// Synthetic tuning tables for the predictor tests: every configuration of a
// shape gets a time that grows with its distance from the chosen winner, so
// winners and votes are known in advance.
#pragma once
#include <cmath>
#include <cstdlib>
#include <vector>

#include "sfc/analytical_model.hpp"
#include "sfc/tuning_table.hpp"

namespace sfc::test {

// Time of (kl, kbf) on a shape whose winner is `w`: the shape's FLOPs at 100
// GFLOP/s, 4% slower per step away from the winner along either knob.
inline TunedShape synthetic_shape(GemmShape shape, Knobs w, int threads = 2,
                                  DType dtype = DType::f32) {
  TunedShape s;
  s.shape = shape;
  s.dtype = dtype;
  s.threads = threads;
  s.k_layers = w.k_layers;
  s.k_block_factor = w.k_block_factor;
  for (int kl = 1; kl <= kMaxKLayers; ++kl)
    for (int kbf = 1; kbf <= kMaxKBlockFactor; ++kbf) {
      const int steps = std::abs(kl - w.k_layers) + std::abs(kbf - w.k_block_factor);
      s.mean_seconds[config_index(kl, kbf)] = float(shape.flops() / 1e11 * (1 + 0.04 * steps));
    }
  return s;
}

// A platform with the fields the predictors read: threads and L2.
inline TuningTable synthetic_table(std::vector<TunedShape> shapes, Calibration calibration = {},
                                   int threads = 2) {
  TuningTable t;
  t.platform.cpu_model = "synthetic";
  t.platform.cores = threads;
  t.platform.threads = threads;
  t.platform.l2_bytes = 1 << 20;
  t.calibration = calibration;
  t.shapes = std::move(shapes);
  return t;
}

}  // namespace sfc::test

#include "tuning_progress.hpp"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace sfc {
namespace {

std::string duration(double seconds) {
  const long s = static_cast<long>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, s / 60 % 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

std::string best_text(const GemmShape& shape, int kl, int kbf, double seconds) {
  return fmt::format("K_layers={} k_block_factor={} {:.4g} ms {:.1f} GFLOP/s", kl, kbf, seconds * 1e3,
                     shape.flops() / seconds * 1e-9);
}

int terminal_width() {
  winsize size{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 20) return size.ws_col;
  return 80;
}

}  // namespace

TuningProgress::TuningProgress(ProgressStyle style, std::size_t grid_size, std::size_t already_done,
                               const std::vector<GemmShape>& pending)
    : enabled_(style != ProgressStyle::quiet),
      terminal_(isatty(STDERR_FILENO) != 0),
      grid_size_(grid_size),
      done_(already_done),
      pending_(pending) {
  if (!enabled_) return;
  clear();
  spdlog::info("tuning {} of {} shapes ({} already in the store)", pending.size(), grid_size, already_done);
  if (!pending.empty() && !evicts_lines())
    spdlog::info(
        "each shape first fills its cold input sets ({} MiB, the cold footprint) before its first timed run: "
        "seconds even for a tiny shape",
        cold_footprint_bytes() >> 20);
  previous_observer_ = set_run_observer([this](const RunProgress& runs) {
    runs_ = runs;
    draw(false);
  });
}

TuningProgress::~TuningProgress() {
  if (enabled_) set_run_observer(std::move(previous_observer_));
  clear();
}

void TuningProgress::bring_forward(const GemmShape& shape) {
  for (std::size_t i = current_; i < pending_.size(); ++i)
    if (pending_[i].m == shape.m && pending_[i].n == shape.n && pending_[i].k == shape.k) {
      std::swap(pending_[i], pending_[current_]);
      return;
    }
}

void TuningProgress::skip_shape(const GemmShape& shape) {
  bring_forward(shape);
  if (current_ < pending_.size()) pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(current_));
  ++done_;
  draw(true);
}

void TuningProgress::start_shape(const GemmShape& shape) {
  bring_forward(shape);
  shape_start_ = Clock::now();
  last_step_ = {};
  runs_ = {};
  draw(true);
}

void TuningProgress::step(const TuneStep& step) {
  last_step_ = step;
  draw(false);
}

void TuningProgress::finish_shape(const std::optional<Winner>& winner) {
  const GemmShape& shape = pending_[current_];
  const double seconds = std::chrono::duration<double>(Clock::now() - shape_start_).count();
  finished_.emplace_back(shape.flops() * 1e-9, seconds);
  ++done_;
  ++current_;
  last_step_ = {};
  runs_ = {};
  if (!enabled_) return;
  if (terminal_) {
    draw(true);
    return;
  }
  const double eta = eta_seconds();
  spdlog::info(
      "[{}/{}] {}: {} ({}{})", done_, grid_size_, to_string(shape),
      winner ? best_text(shape, winner->k_layers, winner->k_block_factor, winner->min_s) : "no winner",
      duration(seconds), eta >= 0 ? "; ETA " + duration(eta) : "");
}

void TuningProgress::clear() {
  if (!drawn_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  drawn_ = false;
}

double TuningProgress::eta_seconds() const {
  if (finished_.empty()) return -1;
  // seconds ~ a + b * GFLOP over the shapes finished so far: a covers the
  // fixed cost (plans, cache flushes), b the arithmetic; both kept >= 0.
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (auto [x, y] : finished_) {
    n += 1, sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  double a = 0, b = sy / sx;  // one shape: proportional to its work
  if (finished_.size() > 1) {
    const double det = n * sxx - sx * sx;
    b = det > 0 ? (n * sxy - sx * sy) / det : 0;
    a = (sy - b * sx) / n;
    if (b < 0) {
      b = 0, a = sy / n;
    } else if (a < 0) {
      a = 0, b = sxy / sxx;
    }
  }
  double eta = 0;
  for (std::size_t i = current_; i < pending_.size(); ++i) eta += a + b * pending_[i].flops() * 1e-9;
  if (current_ < pending_.size())  // the shape in progress has run a while already
    eta -= std::min(a + b * pending_[current_].flops() * 1e-9,
                    std::chrono::duration<double>(Clock::now() - shape_start_).count());
  return eta;
}

void TuningProgress::draw(bool force) {
  if (!enabled_ || !terminal_) return;
  const Clock::time_point now = Clock::now();
  if (!force && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;

  constexpr int kBarWidth = 20;
  const std::size_t filled = grid_size_ ? kBarWidth * done_ / grid_size_ : kBarWidth;
  // Most important first: a narrow terminal cuts the end of the line.
  const double eta = eta_seconds();
  std::string line = fmt::format("[{:#<{}}{:.<{}}] {}/{} shapes  ETA {}", "", filled, "", kBarWidth - filled,
                                 done_, grid_size_, eta >= 0 ? duration(eta) : "--");
  if (current_ < pending_.size()) {
    const GemmShape& shape = pending_[current_];
    line += "  " + to_string(shape);
    if (last_step_.total > 0)
      line += fmt::format("  {} {}/{}", last_step_.screening ? "screen" : "config", last_step_.done,
                          last_step_.total);
    if (runs_.planned > 0) line += fmt::format("  runs {}/{}", runs_.done, runs_.planned);
    if (last_step_.best_k_layers > 0)
      line += fmt::format("  best ({},{}) {:.1f} GFLOP/s", last_step_.best_k_layers,
                          last_step_.best_k_block_factor, shape.flops() / last_step_.best_seconds * 1e-9);
  }
  const std::size_t width = static_cast<std::size_t>(terminal_width() - 1);
  if (line.size() > width) line.resize(width);  // a wrapped line could not be redrawn in place
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace sfc

#include "sfc/racing.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "sfc/error.hpp"

namespace sfc {

void check(const RaceOptions& o) {
  if (!(o.screen_drop >= 0)) throw Error("the screen's drop margin must be >= 0");
  if (o.round_reps < 1) throw Error("runs per race round must be >= 1, got " + std::to_string(o.round_reps));
  if (o.climb < 0) throw Error("climbing steps must be >= 0, got " + std::to_string(o.climb));
  if (o.max_rounds < 1) throw Error("race rounds must be >= 1, got " + std::to_string(o.max_rounds));
  if (!(o.noise_multiple >= 0)) throw Error("the noise multiple must be >= 0");
  if (!(o.min_gap >= 0)) throw Error("the race's minimum gap must be >= 0");
}

RaceResult race(const std::vector<Knobs>& shortlist, const RaceTimer& time, const RaceOptions& options,
                std::uint64_t allowed, const std::function<Knobs(Knobs)>& plan) {
  check(options);
  RaceResult result;
  if (shortlist.empty()) return result;

  // 1. The screen, one entry per distinct plan (the first configuration of
  // each), then the screen leader's grid neighbours, `climb` times.
  std::vector<Knobs> survivors;
  std::map<Knobs, double> screen_min;  // by plan
  std::map<Knobs, Knobs> plan_of;      // by configuration screened
  double best_screen = INFINITY;
  std::vector<Knobs> batch = shortlist;
  Knobs climbed;  // the leader whose neighbours the last climb screened
  for (int step = 0;; ++step) {
    const std::optional<std::vector<RaceRuns>> screen = time(batch, true);
    if (!screen || screen->size() != batch.size()) {
      result.interrupted = true;
      return result;
    }
    for (std::size_t i = 0; i < batch.size(); ++i) {
      const RaceRuns& r = (*screen)[i];
      plan_of.emplace(batch[i], r.effective);
      if (!screen_min.emplace(r.effective, r.min_s).second) continue;  // that plan is screened already
      result.runs += r.reps;
      survivors.push_back(batch[i]);
      best_screen = std::min(best_screen, r.min_s);
    }
    if (step >= options.climb) break;
    Knobs leader = survivors.front();
    for (Knobs c : survivors)
      if (screen_min.at(plan_of.at(c)) < screen_min.at(plan_of.at(leader))) leader = c;
    if (step > 0 && leader == climbed) break;  // its neighbours were screened: none is faster
    climbed = leader;
    batch.clear();
    for (Knobs n : {Knobs{leader.k_layers - 1, leader.k_block_factor},
                    Knobs{leader.k_layers + 1, leader.k_block_factor},
                    Knobs{leader.k_layers, leader.k_block_factor - 1},
                    Knobs{leader.k_layers, leader.k_block_factor + 1}}) {
      if (!n.valid() || !((allowed >> n.index()) & 1) || plan_of.contains(n)) continue;
      if (plan && screen_min.contains(plan(n))) continue;  // runs as a plan screened already
      if (plan && std::ranges::any_of(batch, [&](Knobs b) { return plan(b) == plan(n); })) continue;
      batch.push_back(n);
    }
    if (batch.empty()) break;
  }
  result.screened = int(survivors.size());

  // 2. The cut.
  std::erase_if(survivors, [&](Knobs c) {
    return screen_min.at(plan_of.at(c)) > (1 + options.screen_drop) * best_screen;
  });
  result.fully_timed = int(survivors.size());

  // 3. The race: full rounds until the leader is ahead beyond the noise.
  struct Full {
    double min = INFINITY;
    int reps = 0;
    double spread = 0;  // (mean - min) / min of the latest round
  };
  std::map<Knobs, Full> full;
  while (!survivors.empty() && result.rounds < options.max_rounds) {
    const std::optional<std::vector<RaceRuns>> round = time(survivors, false);
    if (!round || round->size() != survivors.size()) {
      result.interrupted = true;
      break;
    }
    ++result.rounds;
    for (std::size_t i = 0; i < survivors.size(); ++i) {
      const RaceRuns& r = (*round)[i];
      Full& f = full[survivors[i]];
      f.min = std::min(f.min, r.min_s);
      f.reps += r.reps;
      f.spread = r.reps > 1 && r.min_s > 0 ? std::max(0.0, r.mean_s - r.min_s) / r.min_s : f.spread;
      result.runs += r.reps;
    }
    // Ties keep the earlier configuration of the short list (ranked higher).
    Knobs leader = survivors.front();
    for (Knobs c : survivors)
      if (full[c].min < full[leader].min) leader = c;
    if (survivors.size() == 1) break;
    std::vector<double> spreads;
    for (Knobs c : survivors)
      spreads.push_back(full[c].spread / std::sqrt(double(std::max(1, full[c].reps))));
    std::nth_element(spreads.begin(), spreads.begin() + std::ptrdiff_t(spreads.size() / 2), spreads.end());
    const double noise = spreads[spreads.size() / 2];
    const double gap = std::max(options.min_gap, options.noise_multiple * noise);
    std::erase_if(survivors,
                  [&](Knobs c) { return c != leader && full[c].min > (1 + gap) * full[leader].min; });
    if (survivors.size() == 1) break;
  }
  // Ties: the configuration ranked higher (the short list's order, then the climb's by index).
  const auto order = [&](Knobs c) {
    const auto at = std::ranges::find(shortlist, c);
    return at == shortlist.end() ? kConfigCount + c.index() : int(at - shortlist.begin());
  };
  for (const auto& [c, f] : full)
    if (result.winner.k_layers == 0 || f.min < result.winner_seconds ||
        (f.min == result.winner_seconds && order(c) < order(result.winner))) {
      result.winner = c;
      result.winner_seconds = f.min;
    }
  return result;
}

}  // namespace sfc

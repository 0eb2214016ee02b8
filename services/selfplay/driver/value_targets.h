#pragma once

// TD(lambda) value targets (Sutton 1988; KataGo's short-term value targets are the same idea): a
// finished game's value target for each sample blends the game's outcome with the values the
// searches found at that sample's root and at the roots that followed it, so that a position is
// not taught a win or a loss that a mistake many plies later decided. For the game's samples
// 0..n-1 in the order they were played:
//
//   target[n-1] = (1 - lambda) * v[n-1] + lambda * z[n-1]
//   target[i]   = (1 - lambda) * v[i]   + lambda * s[i] * target[i+1]
//
// where v[i] is the search root's value (P(win) - P(loss)) and z[i] the game's outcome, both from
// sample i's side to move, and s[i] is +1 when the plies of samples i and i+1 have the same parity
// (the same side to move) and -1 otherwise. lambda 1: the outcome alone (AlphaZero); lambda 0: the
// root's own value; in between, the outcome's weight falls by lambda per sample towards the start.
// Plies that were not recorded (a gap) are bridged by parity. Targets stay in [-1, 1].

#include <algorithm>
#include <span>
#include <vector>

namespace az::selfplay {

struct ValuePoint {
  int ply = 0;              // plies played before the sample's position
  float root_value = 0.0f;  // the search root's P(win) - P(loss), side to move's view
  float outcome = 0.0f;     // the game's outcome z, side to move's view
};

// The targets above, one per point, in the points' order (plies increasing). `lambda` in [0, 1].
inline std::vector<float> LambdaValueTargets(std::span<const ValuePoint> points, float lambda) {
  std::vector<float> targets(points.size());
  if (points.empty()) return targets;
  float next = points.back().outcome;  // the last sample's outcome stands for the game's end
  for (std::size_t k = points.size(); k-- > 0;) {
    if (k + 1 < points.size() && (points[k + 1].ply - points[k].ply) % 2 != 0) next = -next;
    next = std::clamp((1.0f - lambda) * points[k].root_value + lambda * next, -1.0f, 1.0f);
    targets[k] = next;
  }
  return targets;
}

}  // namespace az::selfplay

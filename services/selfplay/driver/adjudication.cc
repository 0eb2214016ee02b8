#include "services/selfplay/driver/adjudication.h"

#include <cmath>
#include <string>

namespace az::selfplay {

Status AdjudicationOptions::Validate() const {
  const auto in_unit = [](const char* name, float value) {
    if (!(value >= 0.0f && value <= 1.0f)) {
      return InvalidArgument(std::string(name) + " " + std::to_string(value) + " is not in [0, 1]");
    }
    return Status::Ok();
  };
  AZ_RETURN_IF_ERROR(in_unit("resign value", resign_value));
  AZ_RETURN_IF_ERROR(in_unit("resign playthrough fraction", resign_playthrough_fraction));
  AZ_RETURN_IF_ERROR(in_unit("draw adjudication value", draw_value));
  if (resign_plies < 1) return InvalidArgument("resign plies must be >= 1");
  if (draw_plies < 1) return InvalidArgument("draw adjudication plies must be >= 1");
  if (draw_min_ply < 0) return InvalidArgument("draw adjudication min ply must be >= 0");
  AZ_RETURN_IF_ERROR(in_unit("adjudication max false positives", max_false_positives));
  if (min_evidence < 1) return InvalidArgument("adjudication min evidence must be >= 1");
  return Status::Ok();
}

Verdict Adjudicator::Observe(int ply, double value) {
  Verdict verdict = Verdict::kNone;
  if (options_.resign_on() && resigner_parity_ < 0) {
    // The value for the side that moves at even plies: below -v that side is losing, above +v
    // the other one is.
    const double even = ply % 2 == 0 ? value : -value;
    const int losing = even < -options_.resign_value ? 0 : even > options_.resign_value ? 1 : -1;
    losing_run_ = losing >= 0 && losing == losing_parity_ ? losing_run_ + 1 : losing >= 0 ? 1 : 0;
    losing_parity_ = losing;
    if (losing_run_ >= options_.resign_plies) {
      resigner_parity_ = losing;
      verdict = Verdict::kResign;
    }
  }
  if (verdict == Verdict::kNone && options_.draw_on() && !would_draw_) {
    const bool level = ply >= options_.draw_min_ply && std::abs(value) < options_.draw_value;
    drawn_run_ = level ? drawn_run_ + 1 : 0;
    if (drawn_run_ >= options_.draw_plies) {
      would_draw_ = true;
      verdict = Verdict::kDraw;
    }
  }
  return playthrough_ ? Verdict::kNone : verdict;
}

}  // namespace az::selfplay

#include "core/mcts/options.h"

#include <cmath>
#include <string>

namespace az::mcts {
namespace {

Status Check(bool ok, const char* field, const std::string& requirement, double value) {
  if (ok) return Status::Ok();
  return InvalidArgument(std::string(field) + " must be " + requirement + ", got " +
                         std::to_string(value));
}

}  // namespace

Status SearchOptions::Validate() const {
  AZ_RETURN_IF_ERROR(Check(std::isfinite(c_puct) && c_puct > 0, "c_puct", "> 0", c_puct));
  AZ_RETURN_IF_ERROR(Check(std::isfinite(fpu_base) && fpu_base >= 0, "fpu_base", ">= 0", fpu_base));
  AZ_RETURN_IF_ERROR(Check(std::isfinite(risk_beta) && std::fabs(risk_beta) <= 100.0f, "risk_beta",
                           "finite and within [-100, 100]", risk_beta));
  AZ_RETURN_IF_ERROR(Check(draw_score >= 0 && draw_score <= 1, "draw_score", "within [0, 1]",
                           draw_score));
  AZ_RETURN_IF_ERROR(Check(std::isfinite(dirichlet_alpha) && dirichlet_alpha > 0, "dirichlet_alpha",
                           "> 0", dirichlet_alpha));
  AZ_RETURN_IF_ERROR(Check(dirichlet_epsilon >= 0 && dirichlet_epsilon <= 1, "dirichlet_epsilon",
                           "within [0, 1]", dirichlet_epsilon));
  AZ_RETURN_IF_ERROR(Check(gumbel_considered >= 1 && gumbel_considered <= 4096,
                           "gumbel_considered", "within [1, 4096]", gumbel_considered));
  AZ_RETURN_IF_ERROR(Check(std::isfinite(gumbel_c_visit) && gumbel_c_visit >= 0, "gumbel_c_visit",
                           ">= 0", gumbel_c_visit));
  AZ_RETURN_IF_ERROR(Check(std::isfinite(gumbel_c_scale) && gumbel_c_scale > 0 &&
                               gumbel_c_scale <= 1000,
                           "gumbel_c_scale", "within (0, 1000]", gumbel_c_scale));
  AZ_RETURN_IF_ERROR(
      Check(max_batch >= 1 && max_batch <= 4096, "max_batch", "within [1, 4096]", max_batch));
  AZ_RETURN_IF_ERROR(Check(max_nodes >= 1024 && max_nodes <= (1u << 31), "max_nodes",
                           "within [1024, 2^31]", max_nodes));
  return Status::Ok();
}

Status TemperatureOptions::Validate() const {
  AZ_RETURN_IF_ERROR(Check(moves >= 0, "temperature moves", ">= 0", moves));
  AZ_RETURN_IF_ERROR(
      Check(std::isfinite(tau) && tau >= 0 && tau <= 100, "tau", "within [0, 100]", tau));
  return Status::Ok();
}

}  // namespace az::mcts

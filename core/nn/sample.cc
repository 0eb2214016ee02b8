#include "core/nn/sample.h"

#include <algorithm>
#include <cmath>

namespace az::nn {

Wdl WdlFromOutcome(float z) {
  z = std::clamp(z, -1.0f, 1.0f);
  return {std::max(z, 0.0f), 1.0f - std::fabs(z), std::max(-z, 0.0f)};
}

}  // namespace az::nn

#pragma once

// Shared helpers for the core/nn tests: tiny network shapes, deterministic random samples, and a
// scratch directory that removes itself.

#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "core/base/check.h"
#include "core/nn/net_config.h"
#include "core/nn/sample.h"

namespace az::nn::testing {

// 1 block x 8 filters on a 6x7 board with seven planes and 7 actions: trains in milliseconds.
inline NetConfig TinyConfig() {
  NetConfig c = NetConfig::ConnectFour();
  c.blocks = 1;
  c.filters = 8;
  c.policy_channels = 2;  // AlphaZero's narrow heads, whatever the Connect Four preset's
  c.value_channels = 1;
  c.value_hidden = 16;
  return c;
}

// A batch of samples with owned storage: random inputs (NHWC), one-hot or spread policy targets,
// outcomes in {-1, 0, 1}.
struct SampleSet {
  NetConfig net;
  std::vector<float> inputs;  // n * InputFloatsPerPosition, NHWC
  std::vector<std::vector<PolicyEntry>> policies;
  std::vector<TrainSample> samples;

  int size() const { return static_cast<int>(samples.size()); }
  EncodeFn Encoder() const {
    return [this](int i, float* dst) {
      const std::int64_t per = net.InputFloatsPerPosition();
      std::copy_n(inputs.data() + i * per, per, dst);
    };
  }
};

inline SampleSet MakeSamples(const NetConfig& net, int n, std::uint32_t seed,
                             int actions_per_sample = 1) {
  SampleSet set;
  set.net = net;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> bit(0, 1);
  std::uniform_int_distribution<int> action(0, net.policy_size - 1);
  std::uniform_int_distribution<int> outcome(-1, 1);
  std::uniform_int_distribution<int> visits(1, 50);
  set.inputs.resize(static_cast<std::size_t>(n * net.InputFloatsPerPosition()));
  for (float& x : set.inputs) x = static_cast<float>(bit(rng));
  set.policies.resize(n);
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < actions_per_sample; ++k) {
      set.policies[i].push_back({action(rng), static_cast<float>(visits(rng))});
    }
  }
  for (int i = 0; i < n; ++i) {
    TrainSample s;
    s.policy = set.policies[i];
    s.wdl = WdlFromOutcome(static_cast<float>(outcome(rng)));
    s.importance_weight = 1.0f;
    set.samples.push_back(s);
  }
  return set;
}

class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "az_nn_test_XXXXXX").string();
    const char* made = ::mkdtemp(pattern.data());
    AZ_CHECK(made != nullptr, "mkdtemp failed");
    path_ = made;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  std::string File(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace az::nn::testing

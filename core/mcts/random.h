#pragma once

// A small, fast, seeded PRNG for the search (xoshiro256**, seeded through splitmix64) with the
// variates the search needs: uniform, normal, Gamma (Marsaglia-Tsang) and Dirichlet. One per
// search; the same seed gives the same sequence on every platform (no std:: distributions, whose
// output is implementation-defined). Not thread-safe.

#include <cstdint>
#include <span>

namespace az::mcts {

// One step of splitmix64: a good 64-bit mixer, also used to hash values (e.g. in fake evaluators).
inline std::uint64_t SplitMix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

class Rng {
 public:
  explicit Rng(std::uint64_t seed = 0);

  std::uint64_t Next() {
    const std::uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1).
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Uniform in (0, 1]: safe to take the logarithm of.
  double UniformOpenZero() { return static_cast<double>((Next() >> 11) + 1) * 0x1.0p-53; }
  // Standard normal (Marsaglia's polar method).
  double Normal();
  // Gamma(alpha, 1) for alpha > 0 (checked): Marsaglia-Tsang, with the u^(1/alpha) boost for
  // alpha < 1.
  double Gamma(double alpha);
  // Fills `out` with a Dirichlet(alpha, ..., alpha) sample: non-negative, summing to 1.
  void Dirichlet(double alpha, std::span<float> out);

 private:
  static std::uint64_t Rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace az::mcts

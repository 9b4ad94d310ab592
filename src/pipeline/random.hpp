// The loader's random numbers: one small, platform-independent stream per sample, keyed by
// (seed, epoch, position), so that a sample's crop and flip do not depend on which worker made it or
// when. std::mt19937 + std::uniform_real_distribution would do, but the distributions' algorithms are
// implementation-defined; these are not.
#pragma once

#include <cstdint>

namespace gpusage::pipeline {

// SplitMix64 (Steele, Lea, Flood: "Fast splittable pseudorandom number generators", OOPSLA 2014),
// the generator Java's SplittableRandom uses and the usual seeder of the xoshiro family.
constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

class Rng {
 public:
  explicit constexpr Rng(std::uint64_t seed) : state_(seed) {}
  // The stream of one sample: each key is mixed in turn, so (1, 2) and (2, 1) differ.
  static constexpr Rng keyed(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0, std::uint64_t c = 0) {
    return Rng(splitmix64(splitmix64(splitmix64(splitmix64(seed) ^ a) ^ b) ^ c));
  }

  constexpr std::uint64_t next() {
    state_ += 0x9E3779B97F4A7C15ull;
    std::uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 53 random bits.
  constexpr double uniform01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform in [lo, hi), what torch.empty(1).uniform_(lo, hi) draws.
  constexpr double uniform(double lo, double hi) { return lo + (hi - lo) * uniform01(); }
  // Uniform integer in [lo, hi] (torch.randint(lo, hi + 1)); the modulo bias is below 2^-40 for any
  // range an image dimension can have.
  constexpr int randint(int lo, int hi) {
    const auto range = static_cast<std::uint64_t>(hi - lo) + 1;
    return lo + static_cast<int>(next() % range);
  }

 private:
  std::uint64_t state_;
};

}  // namespace gpusage::pipeline

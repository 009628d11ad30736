// Python tensordict's pseudo-random tag chain (`pseudo_rand=True`): numpy's
// default_rng(seed).bytes(8) read big-endian, modulo 10000.
//
// default_rng(seed) is PCG64 seeded through a SeedSequence, so the pieces reproduced are numpy's
// SeedSequence (entropy pool and generate_state), PCG64's seeding, one PCG64 step with its XSL-RR
// output, and Generator.bytes' packing of that output.
#include "pseudo_rand.h"

#include <cstdint>
#include <string>

#include "tensordict/errors.h"

namespace tensordict::dist::detail {
namespace {

// __extension__: -Wpedantic otherwise rejects the GCC/Clang 128-bit type.
__extension__ typedef unsigned __int128 u128;

// SeedSequence's hash constants (numpy/random/bit_generator.pyx).
constexpr uint32_t kInitA = 0x43b0d7e5;
constexpr uint32_t kMultA = 0x931e8875;
constexpr uint32_t kInitB = 0x8b51f9dd;
constexpr uint32_t kMultB = 0x58f38ded;
constexpr uint32_t kMixMultL = 0xca01f9dd;
constexpr uint32_t kMixMultR = 0x4973f715;
constexpr int kXShift = 16;
constexpr int kPoolSize = 4;

// The hash constant is advanced by every call, so it is passed by reference.
uint32_t hashmix(uint32_t value, uint32_t& hash_const) {
  value ^= hash_const;
  hash_const *= kMultA;
  value *= hash_const;
  return value ^ (value >> kXShift);
}

uint32_t mix(uint32_t x, uint32_t y) {
  const uint32_t result = kMixMultL * x - kMixMultR * y;
  return result ^ (result >> kXShift);
}

// PCG64's 128-bit LCG multiplier (numpy/random/src/pcg64/pcg64.h).
constexpr u128 kPcgMult = (u128{2549297995355413924ULL} << 64) | 4865540595714422341ULL;

void pcg_step(u128& state, u128 inc) { state = state * kPcgMult + inc; }

// XSL-RR: the two halves xored, rotated right by the top 6 bits of the state.
uint64_t pcg_output(u128 state) {
  const uint64_t x = static_cast<uint64_t>(state >> 64) ^ static_cast<uint64_t>(state);
  const unsigned rot = static_cast<unsigned>(state >> 122);
  return (x >> rot) | (x << ((64 - rot) & 63));
}

}  // namespace

int64_t pseudo_rand_tag(int64_t seed) {
  // numpy refuses negative entropy ("expected non-negative integer"), and so does Python here.
  if (seed < 0) {
    throw Error(
        "pseudo_rand: the tag chain needs a non-negative init_tag (numpy refuses the seed " +
        std::to_string(seed) + ")");
  }

  // SeedSequence(seed): the int as 32-bit words, lowest first. A seed below 2^32 is one word, but
  // the missing word would be hashed as 0 anyway, so two words give the same pool; with at most
  // two words (< pool size) no entropy is left over for the final mixing loop.
  const uint64_t s = static_cast<uint64_t>(seed);
  const uint32_t entropy[2] = {static_cast<uint32_t>(s), static_cast<uint32_t>(s >> 32)};
  uint32_t pool[kPoolSize];
  uint32_t hash_const = kInitA;
  for (int i = 0; i < kPoolSize; ++i) pool[i] = hashmix(i < 2 ? entropy[i] : 0, hash_const);
  // Every word mixed into every other, so that late bits affect earlier ones.
  for (int src = 0; src < kPoolSize; ++src) {
    for (int dst = 0; dst < kPoolSize; ++dst) {
      if (src != dst) pool[dst] = mix(pool[dst], hashmix(pool[src], hash_const));
    }
  }

  // generate_state(4, uint64): 8 uint32 words cycling over the pool, paired little-endian.
  uint64_t words[4];
  uint32_t hash_b = kInitB;
  for (int i = 0; i < 8; ++i) {
    uint32_t v = pool[i % kPoolSize] ^ hash_b;
    hash_b *= kMultB;
    v *= hash_b;
    v ^= v >> kXShift;
    if (i % 2 == 0) {
      words[i / 2] = v;
    } else {
      words[i / 2] |= static_cast<uint64_t>(v) << 32;
    }
  }

  // PCG64 seeding (pcg64_set_seed / srandom): words 0-1 are the initial state, words 2-3 the
  // stream, high word first; the increment is made odd, and the generator stepped around the add.
  const u128 init_state = (u128{words[0]} << 64) | words[1];
  const u128 inc = (((u128{words[2]} << 64) | words[3]) << 1) | 1;
  u128 state = 0;
  pcg_step(state, inc);
  state += init_state;
  pcg_step(state, inc);

  // bytes(8) draws two uint32 through next_uint32 (full range, so no rejection): the low then the
  // high half of one 64-bit output, written little-endian. So the 8 bytes are the output's
  // little-endian bytes, and reading them big-endian is a byte swap.
  pcg_step(state, inc);
  const uint64_t out = pcg_output(state);
  uint64_t big = 0;
  for (int i = 0; i < 8; ++i) big = (big << 8) | ((out >> (8 * i)) & 0xff);
  return static_cast<int64_t>(big % 10000);
}

}  // namespace tensordict::dist::detail

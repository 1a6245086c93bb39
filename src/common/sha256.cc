#include "common/sha256.h"

#include <algorithm>
#include <bit>

namespace plumb {
namespace {

// FIPS 180-4 4.2.2: the first 32 bits of the fractional parts of the cube roots of the first 64
// primes.
constexpr std::array<uint32_t, 64> kRoundConstants = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

// FIPS 180-4 5.3.3: the first 32 bits of the fractional parts of the square roots of the first 8
// primes.
constexpr std::array<uint32_t, 8> kInitialState = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

constexpr size_t kLengthBytes = 8;  // the message length in bits, big-endian, ends the padding

uint32_t load_big_endian(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

// FIPS 180-4 4.1.2, functions (4.2) to (4.7).
uint32_t ch(uint32_t x, uint32_t y, uint32_t z) { return (x & y) ^ (~x & z); }
uint32_t maj(uint32_t x, uint32_t y, uint32_t z) { return (x & y) ^ (x & z) ^ (y & z); }
uint32_t big_sigma0(uint32_t x) { return std::rotr(x, 2) ^ std::rotr(x, 13) ^ std::rotr(x, 22); }
uint32_t big_sigma1(uint32_t x) { return std::rotr(x, 6) ^ std::rotr(x, 11) ^ std::rotr(x, 25); }
uint32_t small_sigma0(uint32_t x) { return std::rotr(x, 7) ^ std::rotr(x, 18) ^ (x >> 3); }
uint32_t small_sigma1(uint32_t x) { return std::rotr(x, 17) ^ std::rotr(x, 19) ^ (x >> 10); }

}  // namespace

Sha256::Sha256() : state_(kInitialState) {}

// FIPS 180-4 6.2.2: the message schedule, then 64 rounds over the working variables a..h.
void Sha256::compress(const uint8_t* block) {
  std::array<uint32_t, 64> w{};
  for (size_t t = 0; t < 16; ++t) w[t] = load_big_endian(block + 4 * t);
  for (size_t t = 16; t < 64; ++t) {
    w[t] = small_sigma1(w[t - 2]) + w[t - 7] + small_sigma0(w[t - 15]) + w[t - 16];
  }
  auto [a, b, c, d, e, f, g, h] = state_;
  for (size_t t = 0; t < 64; ++t) {
    const uint32_t t1 = h + big_sigma1(e) + ch(e, f, g) + kRoundConstants[t] + w[t];
    const uint32_t t2 = big_sigma0(a) + maj(a, b, c);
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  const std::array<uint32_t, 8> add = {a, b, c, d, e, f, g, h};
  for (size_t i = 0; i < state_.size(); ++i) state_[i] += add[i];
}

void Sha256::update(std::string_view bytes) {
  message_bytes_ += bytes.size();
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  size_t left = bytes.size();
  while (left > 0) {
    if (block_used_ == 0 && left >= kBlockBytes) {  // whole blocks straight from the input
      compress(p);
      p += kBlockBytes;
      left -= kBlockBytes;
      continue;
    }
    const size_t take = std::min(left, kBlockBytes - block_used_);
    std::copy_n(p, take, block_.begin() + static_cast<std::ptrdiff_t>(block_used_));
    block_used_ += take;
    p += take;
    left -= take;
    if (block_used_ == kBlockBytes) {
      compress(block_.data());
      block_used_ = 0;
    }
  }
}

// FIPS 180-4 5.1.1: a 1 bit, zeros up to 56 bytes into a block, then the length in bits.
Sha256::Digest Sha256::finish() {
  const uint64_t bit_length = message_bytes_ * 8;
  block_[block_used_++] = 0x80;
  if (block_used_ > kBlockBytes - kLengthBytes) {
    std::fill(block_.begin() + static_cast<std::ptrdiff_t>(block_used_), block_.end(), 0);
    compress(block_.data());
    block_used_ = 0;
  }
  std::fill(block_.begin() + static_cast<std::ptrdiff_t>(block_used_),
            block_.end() - kLengthBytes, 0);
  for (size_t i = 0; i < kLengthBytes; ++i) {
    block_[kBlockBytes - 1 - i] = static_cast<uint8_t>(bit_length >> (8 * i));
  }
  compress(block_.data());
  Digest digest{};
  for (size_t i = 0; i < state_.size(); ++i) {
    for (size_t j = 0; j < 4; ++j) digest[4 * i + j] = static_cast<uint8_t>(state_[i] >> (24 - 8 * j));
  }
  return digest;
}

std::string to_hex(const Sha256::Digest& digest) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * digest.size());
  for (const uint8_t byte : digest) {
    hex += kDigits[byte >> 4];
    hex += kDigits[byte & 0xf];
  }
  return hex;
}

std::string sha256_hex(std::string_view bytes) {
  Sha256 hash;
  hash.update(bytes);
  return to_hex(hash.finish());
}

}  // namespace plumb

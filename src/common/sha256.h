// SHA-256 (FIPS 180-4, "Secure Hash Standard", section 6.2), for checkpoint manifests: a file's
// digest is computed in pieces as it is read, so a file of any size needs a fixed 64-byte buffer.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace plumb {

class Sha256 {
 public:
  static constexpr size_t kDigestBytes = 32;
  static constexpr size_t kBlockBytes = 64;  // FIPS 180-4: 512-bit blocks (RFC 2104's B)
  using Digest = std::array<uint8_t, kDigestBytes>;

  Sha256();
  // Adds bytes to the message; may be called any number of times.
  void update(std::string_view bytes);
  // Pads the message (FIPS 180-4 5.1.1) and returns the digest; the object is spent afterwards.
  Digest finish();

 private:
  void compress(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> block_{};
  size_t block_used_ = 0;
  uint64_t message_bytes_ = 0;
};

// The 64 lowercase hex digits of a digest.
std::string to_hex(const Sha256::Digest& digest);

// The hex digest of a whole message in memory.
std::string sha256_hex(std::string_view bytes);

}  // namespace plumb

#include "common/hmac.h"

#include <array>
#include <cstdint>

namespace plumb {
namespace {

constexpr uint8_t kInnerPad = 0x36;
constexpr uint8_t kOuterPad = 0x5c;

std::string_view as_text(const Sha256::Digest& digest) {
  return {reinterpret_cast<const char*>(digest.data()), digest.size()};
}

// K XOR pad, with K first hashed when longer than a block and zero-filled to one (RFC 2104 2).
std::string padded_key(std::string_view key, uint8_t pad) {
  std::array<uint8_t, Sha256::kBlockBytes> block{};
  if (key.size() > Sha256::kBlockBytes) {
    Sha256 h;
    h.update(key);
    const Sha256::Digest d = h.finish();
    std::copy(d.begin(), d.end(), block.begin());
  } else {
    std::copy(key.begin(), key.end(), block.begin());
  }
  std::string out(Sha256::kBlockBytes, '\0');
  for (size_t i = 0; i < Sha256::kBlockBytes; ++i) out[i] = static_cast<char>(block[i] ^ pad);
  return out;
}

}  // namespace

Sha256::Digest hmac_sha256(std::string_view key, std::string_view message) {
  Sha256 inner;
  inner.update(padded_key(key, kInnerPad));
  inner.update(message);
  const Sha256::Digest inner_digest = inner.finish();
  Sha256 outer;
  outer.update(padded_key(key, kOuterPad));
  outer.update(as_text(inner_digest));
  return outer.finish();
}

std::string base64(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t v = 0;
    for (size_t k = 0; k < 3; ++k) {
      v = (v << 8) | (k < n ? static_cast<uint8_t>(bytes[i + k]) : 0u);
    }
    for (size_t k = 0; k < 4; ++k) {
      out += k <= n ? kAlphabet[(v >> (18 - 6 * k)) & 0x3f] : '=';
    }
  }
  return out;
}

}  // namespace plumb

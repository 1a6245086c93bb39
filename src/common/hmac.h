// HMAC-SHA256 (RFC 2104 over FIPS 180-4's SHA-256) and base64 (RFC 4648 section 4): what a
// signed webhook needs (Feishu/Lark custom bots sign with both).
#pragma once

#include <string>
#include <string_view>

#include "common/sha256.h"

namespace plumb {

Sha256::Digest hmac_sha256(std::string_view key, std::string_view message);

// Standard alphabet, '=' padding.
std::string base64(std::string_view bytes);

}  // namespace plumb

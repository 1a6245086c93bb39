#include "common/sha256.h"

#include <gtest/gtest.h>

#include <string>

namespace plumb {
namespace {

// NIST's examples for SHA-256 (csrc.nist.gov, "Cryptographic Standards and Guidelines: Examples
// with Intermediate Values", SHA256.pdf and SHA2_Additional.pdf).
TEST(Sha256, NistOneBlockMessageAbc) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, NistEmptyMessage) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256, NistTwoBlockMessageOf448Bits) {
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, NistOneMillionA) {
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Pieces of every size give the digest of the whole: the block buffer carries bytes across
// update() calls, and the padding crosses into a second block from 56 bytes on.
TEST(Sha256, PiecesOfAnySizeGiveTheWholeMessagesDigest) {
  std::string message;
  for (int i = 0; i < 300; ++i) message += static_cast<char>('a' + i % 26);
  for (size_t length : {0u, 55u, 56u, 63u, 64u, 65u, 119u, 120u, 300u}) {
    const std::string whole = sha256_hex(message.substr(0, length));
    for (size_t piece = 1; piece <= 70; ++piece) {
      Sha256 hash;
      for (size_t at = 0; at < length; at += piece) {
        hash.update(std::string_view(message).substr(at, std::min(piece, length - at)));
      }
      ASSERT_EQ(to_hex(hash.finish()), whole) << "length " << length << ", pieces of " << piece;
    }
  }
}

TEST(Sha256, KnownDigestsOfPaddingBoundaries) {
  // From sha256sum (GNU coreutils): 55 bytes fit one padded block, 56 need two.
  EXPECT_EQ(sha256_hex(std::string(55, 'a')),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(sha256_hex(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
}

}  // namespace
}  // namespace plumb

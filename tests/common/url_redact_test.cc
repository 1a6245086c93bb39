// redact_url: each rule of common/url_redact.h on the URLs the chats really use, and the cases of
// issue 28 (a password in the userinfo, a token as the last segment of a URL ending in '/').
#include "common/url_redact.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace plumb {
namespace {

TEST(RedactUrl, ThePasswordOfTheUserinfoIsMasked) {
  EXPECT_EQ(redact_url("https://alice:s3cr3t-pw@chat.example.com/notify"),
            "https://alice:***@chat.example.com/***");
  // No ':': the userinfo is a token (https://TOKEN@host), masked whole.
  EXPECT_EQ(redact_url("https://ghp_abc123@chat.example.com/x"), "https://***@chat.example.com/***");
  // The last '@' ends the userinfo: a password holding '@' is masked whole.
  EXPECT_EQ(redact_url("http://bob:p@ss@10.0.0.1:8080/a/"), "http://bob:***@10.0.0.1:8080/***/");
}

TEST(RedactUrl, EveryQueryValueAndTheFragmentAreMasked) {
  EXPECT_EQ(redact_url("https://oapi.dingtalk.com/robot/send?access_token=abcdef&sign=xyz"),
            "https://oapi.dingtalk.com/robot/***?access_token=***&sign=***");
  EXPECT_EQ(redact_url("https://example.com/?flagtoken&x="), "https://example.com/?***&x=");
  EXPECT_EQ(redact_url("https://example.com/cb#access_token=abc"), "https://example.com/***#***");
}

TEST(RedactUrl, WhatFollowsAWebhookMarkerIsMasked) {
  EXPECT_EQ(redact_url("https://open.feishu.cn/open-apis/bot/v2/hook/2c1e5d3a-8f4b-4c2e-9d1a-"
                       "0123456789ab"),
            "https://open.feishu.cn/open-apis/bot/v2/hook/2c1e***");
  EXPECT_EQ(redact_url("https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXX"),
            "https://hooks.slack.com/services/***/***/***");
  EXPECT_EQ(redact_url("https://discord.com/api/webhooks/123456/abcdefghijklmnopqrstuvwx"),
            "https://discord.com/api/webhooks/***/abcd***");
  EXPECT_EQ(redact_url("http://127.0.0.1:9/open-apis/bot/v2/hook/test-token"),
            "http://127.0.0.1:9/open-apis/bot/v2/hook/***");
}

TEST(RedactUrl, TheLastSegmentIsMaskedWithOrWithoutATrailingSlash) {
  // Issue 28: a token as the last segment of a URL ending in '/' was shown in clear.
  EXPECT_EQ(redact_url("http://127.0.0.1:9/notify/letmein/"), "http://127.0.0.1:9/notify/***/");
  EXPECT_EQ(redact_url("http://127.0.0.1:9/notify/letmein"), "http://127.0.0.1:9/notify/***");
  EXPECT_EQ(redact_url("http://127.0.0.1:9/notify/letmein//"), "http://127.0.0.1:9/notify/***//");
  EXPECT_EQ(redact_url("http://127.0.0.1:9"), "http://127.0.0.1:9");
  EXPECT_EQ(redact_url("http://127.0.0.1:9/"), "http://127.0.0.1:9/");
}

TEST(RedactUrl, SegmentsThatLookRandomAreMaskedWherever) {
  // Telegram's bot<id>:<token>; a UUID; 16 characters of anything.
  EXPECT_EQ(redact_url("https://api.telegram.org/bot123456:ABC-DEF1234ghIkl/sendMessage"),
            "https://api.telegram.org/bot1***/***");
  EXPECT_EQ(redact_url("https://x.example/a1b2c3d4/v2/status"), "https://x.example/***/v2/***");
  EXPECT_EQ(redact_url("https://x.example/abcdefghijklmnop/v2/status"),
            "https://x.example/abcd***/v2/***");
  // Words, versions and dates stay.
  EXPECT_EQ(redact_url("https://x.example/open-apis/v1beta1/2024-05-01/IncomingWebhook/x"),
            "https://x.example/open-apis/v1beta1/2024-05-01/IncomingWebhook/***");
}

TEST(RedactUrl, TextWithoutASchemeIsHostAndPathOrAPath) {
  EXPECT_EQ(redact_url("hooks.slack.com/services/T0/B0/xyz"), "hooks.slack.com/services/***/***/***");
  EXPECT_EQ(redact_url("user:pw@host/x"), "user:***@host/***");
  EXPECT_EQ(redact_url("PastedToken"), "***");
  EXPECT_EQ(redact_url("APastedTokenOf16"), "APas***");
  // A request's path (starts with '/'): only the marker and look rules.
  EXPECT_EQ(redact_url("/alertmanager"), "/alertmanager");
  EXPECT_EQ(redact_url("/alertmanager/hook/letmein"), "/alertmanager/hook/***");
  EXPECT_EQ(redact_url(""), "");
}

TEST(UrlSecrets, WhatIsMaskedAsWrittenAndDecoded) {
  EXPECT_EQ(url_secrets("https://u:p%40ss@h/hook/tok?k=v%20w"),
            (std::vector<std::string>{"p%40ss", "p@ss", "tok", "v%20w", "v w"}));
}

TEST(MaskSecrets, EveryOccurrenceLongestFirstShortOnesLeft) {
  const std::vector<std::string> secrets = {"abc", "letmein", "letmein-too"};
  EXPECT_EQ(mask_secrets("HTTP 404 'Cannot POST /hook/letmein-too' letmein abc", secrets),
            "HTTP 404 'Cannot POST /hook/***' *** abc");
  EXPECT_EQ(mask_secrets("aaaaaaaa", std::vector<std::string>{"aaaaaa"}), "***aa");
  // A secret named twice (two segments alike) is masked the same as once.
  EXPECT_EQ(mask_secrets("/a1b2c3d4/a1b2c3d4", url_secrets("http://h/a1b2c3d4/a1b2c3d4")),
            "/***/***");
}

}  // namespace
}  // namespace plumb

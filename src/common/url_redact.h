// The one way a URL is shown to a person: every log line, error message, event, record, --help
// example and dry-run output that names a URL renders it with redact_url, so that the secret a URL
// carries — a webhook's token, a password, an API key in the query — is never shown whole
// (docs/alert-relay.md, "Secrets"). Text that may quote a URL from elsewhere (a chat server's
// reply echoing its path) goes through mask_secrets with the secrets of the URLs in play.
//
// What redact_url masks, and why:
//   - the userinfo's password: `user:***@`; a userinfo with no ':' is masked whole (`***@`),
//     since a bare token is what goes there (https://TOKEN@host/...);
//   - every query value (`?key=***&sig=***`; a part with no '=' whole) and the fragment (`#***`):
//     API keys, signatures and OAuth tokens travel there;
//   - in the path: every segment after a webhook marker segment (hook, hooks, webhook, webhooks,
//     webhookb2, services, token, tokens, key, keys, secret, secrets — case-insensitive): the
//     Feishu/Lark /hook/<uuid>, Slack /services/T../B../<token>, Discord /api/webhooks/<id>/<token>,
//     Mattermost and Rocket.Chat /hooks/..., Teams /webhookb2/...;
//   - any segment that looks random: 16 characters or more, or 8 or more mixing letters and
//     digits (a UUID, hex, base64 or Telegram's bot<id>:<token>);
//   - in a URL with a host, its last non-empty path segment, a trailing '/' or not: a webhook URL's
//     path is its credential and most end in their token.
// A masked path segment of 16 characters or more keeps its first 4 ("2c1e***") so that two hooks
// can be told apart; everything else masked becomes "***". Scheme, host, port and the other path
// segments are kept. Text without "://" is read as HOST/PATH when it does not start with '/'
// (what a user types for a URL without its scheme), else as a path alone (a request's path: no
// last-segment rule).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace plumb {

inline constexpr const char* kMask = "***";

// Secrets shorter than this are not looked for in free text by mask_secrets (a 3-letter password
// would blank every word holding it); redact_url masks them in URLs whatever their length.
inline constexpr size_t kMinSecretInText = 6;

std::string redact_url(std::string_view url);

// `text` with each %XX (two hex digits) replaced by its byte; anything else as it is.
std::string percent_decoded(std::string_view text);

// The parts of `url` that redact_url masks, as written and, when that differs, percent-decoded:
// what mask_secrets looks for.
std::vector<std::string> url_secrets(std::string_view url);

// `text` with every occurrence of each secret of kMinSecretInText characters or more replaced by
// "***", longest secrets first.
std::string mask_secrets(std::string_view text, std::span<const std::string> secrets);

}  // namespace plumb

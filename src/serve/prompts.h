// Random prompts of a given length in tokens without a tokenizer (docs/serve.md, "Random
// prompts"). vLLM's random dataset decodes random token ids with the model's tokenizer; plumb has
// none, so it writes words that common BPE tokenizers (GPT-2's and cl100k's, Llama's
// SentencePiece) each read as one token: frequent short English words with a leading space.
// The server's count (its usage fields) can still differ by a few tokens: a chat template, a BOS
// token, a merge across words. Where the server reports usage, plumb takes that count.
#pragma once

#include <string>

#include "serve/arrivals.h"

namespace plumb::serve {

// `tokens` words drawn from the table with `random` (so a seed gives the same text).
std::string random_prompt(int tokens, Random& random);

}  // namespace plumb::serve

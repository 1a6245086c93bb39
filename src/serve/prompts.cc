#include "serve/prompts.h"

#include <array>
#include <string_view>

namespace plumb::serve {
namespace {

// Among the most frequent English words; each, with its leading space, is one token in GPT-2's
// BPE, in OpenAI's cl100k_base and in Llama's SentencePiece vocabulary.
constexpr std::array<std::string_view, 64> kWords = {
    " the",   " of",     " and",   " to",    " in",    " is",    " that",  " for",
    " it",    " as",     " was",   " with",  " be",    " by",    " on",    " not",
    " he",    " this",   " are",   " or",    " his",   " from",  " at",    " which",
    " but",   " have",   " an",    " had",   " they",  " you",   " were",  " their",
    " one",   " all",    " we",    " can",   " her",   " has",   " there", " been",
    " if",    " more",   " when",  " will",  " would", " who",   " so",    " no",
    " time",  " people", " year",  " work",  " day",   " world", " life",  " water",
    " house", " city",   " night", " light", " music", " river", " story", " game"};

}  // namespace

std::string random_prompt(int tokens, Random& random) {
  std::string text;
  text.reserve(static_cast<size_t>(tokens) * 6);
  for (int i = 0; i < tokens; ++i) {
    text += kWords[static_cast<size_t>(random.integer(0, kWords.size() - 1))];
  }
  return text;
}

}  // namespace plumb::serve

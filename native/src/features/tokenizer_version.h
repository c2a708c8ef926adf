#pragma once
// The version of the text-to-terms pipeline (tokenizer, folding, stop list, stemmer).

namespace rg::features {

// Bumped whenever a change to tokenisation can change a term (folding, splitting, stop list,
// stemmer). Stored in corpus statistics and in the feature schema.
inline constexpr const char* kTokenizerVersion = "rg-tok-2";

}  // namespace rg::features

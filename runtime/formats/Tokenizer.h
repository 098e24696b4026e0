//===- Tokenizer.h - llm.c's GPT-2 tokenizer file, for `sample` -*- C++ -*-===//
//
// `NAME sample --tokenizer FILE` reads llm.c's gpt2_tokenizer.bin: a header of 256 uint32
// (little-endian: [0] magic 20240328, [1] version 1 or 2, [2] the vocabulary size, [3] the
// end-of-text token in version 2), then each token's bytes as a uint8 length and the bytes. It
// decodes generated ids to text. It holds no BPE merges (llm.c encodes in Python), so a text
// prompt is encoded greedily, longest token first at each position: the same bytes, though not
// always GPT-2's own segmentation; give exact ids with --prompt-ids.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_FORMATS_TOKENIZER_H
#define STEPC_RUNTIME_FORMATS_TOKENIZER_H

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/base/Status.h"

namespace stepc::rt {

class Tokenizer {
 public:
  /// Reads and validates `path` for a model of `modelVocab` tokens (the tokenizer may have
  /// fewer: GPT-2's 50257 in a vocabulary padded to 50304). Errors name the file and what is
  /// wrong: missing, not a tokenizer, truncated, more tokens than the model has.
  static Status open(const std::string &path, int64_t modelVocab, Tokenizer &out);

  int64_t size() const { return static_cast<int64_t>(tokens_.size()); }
  /// The bytes of token `id`; ids past the tokenizer's vocabulary (padding) read "<|id|>".
  std::string decode(int64_t id) const;
  /// `text` as ids, greedily (see above). Fails for a byte no token starts with.
  Status encode(const std::string &text, std::vector<int64_t> &out) const;

 private:
  std::vector<std::string> tokens_;
  size_t longest_ = 0;
};

}  // namespace stepc::rt

#endif  // STEPC_RUNTIME_FORMATS_TOKENIZER_H

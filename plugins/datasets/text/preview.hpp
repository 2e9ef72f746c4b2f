// --dataset.preview=N: the first examples as the model will see them, one JSON object per line.
#pragma once

#include <cstdint>
#include <string>

#include "documents.hpp"

namespace shardkit::text {

class ChatFormat;
class Tokenizer;

/// The first `count` examples of `docs` as lines {"text": ..., "input_ids": [...], "labels": [...]}:
/// conversations rendered by `format` (labels -100 where no loss is taken), plain text encoded
/// with its special tokens and EOS as an unpacked sample; each cut to `seq_len` tokens (a
/// conversation with nothing to train on within them is passed over, as training leaves it out).
/// A conversation that cannot be rendered is a FormatError naming its file:line, or is passed
/// over when `skip_bad`. `format` is null for plain text.
std::string preview_lines(const Documents& docs, const Tokenizer& tokenizer, const ChatFormat* format, bool skip_bad,
                          std::int64_t count, std::int64_t seq_len);

}  // namespace shardkit::text

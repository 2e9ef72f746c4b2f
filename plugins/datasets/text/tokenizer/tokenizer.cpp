// The tokenizer pipeline: added tokens, pre-tokenizer, BPE, template; decoding back to text.
#include "tokenizer.hpp"

#include <boost/json.hpp>
#include <filesystem>

#include "added_tokens.hpp"
#include "bpe.hpp"
#include "byte_level.hpp"
#include "decoder.hpp"
#include "normalizer.hpp"
#include "pre_tokenizer.hpp"
#include "shardkit/error.hpp"
#include "shardkit/files.hpp"

namespace shardkit::text {

Tokenizer::Tokenizer(TokenizerParts parts, std::string source) : parts_(std::move(parts)), source_(std::move(source)) {
  if (!parts_.prefix_ids.empty()) bos_ = parts_.prefix_ids.front();
  for (const char* name : {"<|end_of_text|>", "<|endoftext|>", "</s>", "<eos>"})
    if (const auto* t = parts_.added->by_content(name); t && !eos_) eos_ = t->id;
  pad_ = parts_.pad_id;
}

Tokenizer::~Tokenizer() = default;

std::shared_ptr<Tokenizer> Tokenizer::from_json(const std::string& json_text, const std::string& source) {
  return std::shared_ptr<Tokenizer>(new Tokenizer(parse_tokenizer_json(json_text, source), source));
}

std::shared_ptr<Tokenizer> Tokenizer::load(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool folder = fs::is_directory(path, ec);
  const auto file = folder ? (fs::path(path) / "tokenizer.json").string() : path;
  // A tokenizer that is not where the command says is a configuration error (exit 2); one that
  // is there but damaged is a FormatError (exit 1).
  if (!fs::is_regular_file(file, ec))
    throw ConfigError(folder ? path + " holds no tokenizer.json (a Hugging Face model folder has one)"
                             : path + ": no such tokenizer.json file");
  auto tokenizer = from_json(read_text_file(file), file);
  const auto config = (fs::path(file).parent_path() / "tokenizer_config.json").string();
  if (fs::is_regular_file(config, ec)) tokenizer->apply_config(read_text_file(config), config);
  return tokenizer;
}

void Tokenizer::apply_config(const std::string& text, const std::string& path) {
  boost::json::value root;
  try {
    root = boost::json::parse(text);
  } catch (const std::exception& e) {
    throw FormatError(path + ": not valid JSON (" + e.what() + ")");
  }
  if (!root.is_object()) return;
  const auto lookup = [&](const char* key, std::optional<std::uint32_t>& slot) {
    const auto* v = root.as_object().if_contains(key);
    if (!v || v->is_null()) return;
    std::string content;
    if (v->is_string()) content = v->as_string();
    else if (v->is_object() && v->as_object().contains("content") && v->as_object().at("content").is_string())
      content = v->as_object().at("content").as_string();
    else return;
    const auto id = token_to_id(content);
    if (!id) throw FormatError(path + ": " + key + " '" + content + "' is not a token of " + source_);
    slot = *id;
  };
  lookup("bos_token", bos_);
  lookup("eos_token", eos_);
  lookup("pad_token", pad_);
}

bool Tokenizer::adds_bos() const { return bos_ && !parts_.prefix_ids.empty() && parts_.prefix_ids.front() == *bos_; }

std::optional<std::uint32_t> Tokenizer::token_to_id(std::string_view token) const {
  if (const auto* t = parts_.added->by_content(token)) return t->id;
  return parts_.model->token_to_id(token);
}

std::size_t Tokenizer::vocab_size() const {
  std::size_t n = parts_.model->id_limit();
  for (const auto& t : parts_.added->tokens()) n = std::max<std::size_t>(n, t.id + 1);
  return n;
}

void Tokenizer::encode_text(std::string_view text, bool at_start, std::vector<std::uint32_t>& out) const {
  thread_local std::vector<std::string> pieces;
  pieces.clear();
  pieces.emplace_back(text);
  if (parts_.pre_tokenizer) parts_.pre_tokenizer->apply(pieces, at_start);
  for (const auto& p : pieces) parts_.model->tokenize(p, out);
}

template <class Piece, class Added>
void Tokenizer::split_text(std::string_view text, const Piece& piece, const Added& added) const {
  // As tokenizers: added tokens with normalized=false are found in the raw text; each part
  // between them is normalized, and the tokens with normalized=true are found in that.
  std::vector<Segment> raw, inner;
  parts_.added->split_raw(text, raw);
  NormalizedText normalized;
  for (const auto& s : raw) {
    if (s.id >= 0) {
      added(static_cast<std::uint32_t>(s.id), s.end);
      continue;
    }
    const auto part = text.substr(s.begin, s.end - s.begin);
    const NormalizedText* alignment = nullptr;
    std::string_view view = part;
    if (parts_.normalizer) {
      normalized = NormalizedText::of(part);
      parts_.normalizer->apply(normalized);
      alignment = &normalized;
      view = normalized.text;
    }
    // Where normalized offset `at` of this part ends in `text`.
    const auto original = [&](std::size_t at) { return s.begin + (alignment ? alignment->original_end(at) : at); };
    inner.clear();
    parts_.added->split_normalized(view, inner);
    for (const auto& n : inner) {
      if (n.id >= 0) added(static_cast<std::uint32_t>(n.id), original(n.end));
      else piece(view.substr(n.begin, n.end - n.begin), s.begin == 0 && n.begin == 0, n.begin, original);
    }
  }
}

void Tokenizer::encode(std::string_view text, bool add_special_tokens, std::vector<std::uint32_t>& out) const {
  std::size_t bad = 0;
  if (!valid_utf8(text, bad))
    throw FormatError("the text is not valid UTF-8 (byte " + std::to_string(bad) + ")");
  if (add_special_tokens) out.insert(out.end(), parts_.prefix_ids.begin(), parts_.prefix_ids.end());
  split_text(
      text,
      [&](std::string_view piece, bool at_start, std::size_t, const auto&) { encode_text(piece, at_start, out); },
      [&](std::uint32_t id, std::size_t) { out.push_back(id); });
  if (add_special_tokens) out.insert(out.end(), parts_.suffix_ids.begin(), parts_.suffix_ids.end());
}

std::vector<std::uint32_t> Tokenizer::encode(std::string_view text, bool add_special_tokens) const {
  std::vector<std::uint32_t> out;
  encode(text, add_special_tokens, out);
  return out;
}

void Tokenizer::encode_with_offsets(std::string_view text, std::vector<std::uint32_t>& ids,
                                    std::vector<std::size_t>& ends) const {
  std::size_t bad = 0;
  if (!valid_utf8(text, bad))
    throw FormatError("the text is not valid UTF-8 (byte " + std::to_string(bad) + ")");
  const bool byte_level = parts_.pre_tokenizer && parts_.pre_tokenizer->byte_level();
  const auto metaspace = parts_.pre_tokenizer ? parts_.pre_tokenizer->metaspace_replacement() : std::string();
  std::string bytes;
  // The bytes of the normalized text a token stands for: byte-level stand-ins as their bytes,
  // <0xXX> fallback tokens as their byte, Metaspace's replacement character as the space it was.
  const auto token_bytes = [&](const std::string& token) {
    bytes.clear();
    if (byte_level) {
      for (std::size_t c = 0; c < token.size();) {
        const int b = byte_of_code_point(next_code_point(token, c));
        if (b >= 0) bytes += static_cast<char>(b);
      }
    } else if (const int b = byte_fallback_value(token); b >= 0 && parts_.model->byte_fallback()) {
      bytes += static_cast<char>(b);
    } else if (!metaspace.empty()) {
      for (std::size_t at = 0; at < token.size();) {
        if (token.compare(at, metaspace.size(), metaspace) == 0) {
          bytes += ' ';
          at += metaspace.size();
        } else {
          bytes += token[at++];
        }
      }
    } else {
      bytes = token;
    }
  };
  split_text(
      text,
      [&](std::string_view piece, bool at_start, std::size_t offset, const auto& original) {
        const auto first = ids.size();
        encode_text(piece, at_start, ids);
        // Each token's bytes are matched against the piece in order; a space the pre-tokenizer
        // added (add_prefix_space, Metaspace's prepend) matches nothing.
        std::size_t at = 0;
        const auto unk = parts_.model->unk_id();
        for (auto i = first; i < ids.size(); ++i) {
          if (unk && ids[i] == *unk) {
            // An unknown run covers the text up to where the next token's text is found (at least
            // one character; only that when the next token is unknown too).
            std::size_t after = std::min(at, piece.size());
            if (after < piece.size()) next_code_point(piece, after);
            const auto* next = i + 1 < ids.size() ? parts_.model->id_to_token(ids[i + 1]) : nullptr;
            if (i + 1 == ids.size()) {
              at = piece.size();
            } else if (next && ids[i + 1] != *unk) {
              token_bytes(*next);
              const auto start = bytes.find_first_not_of(' ');
              const auto found = start == std::string::npos ? after : piece.find(bytes.substr(start), after);
              at = found == std::string_view::npos ? piece.size() : found;
            } else {
              at = after;
            }
            ends.push_back(original(offset + at));
            continue;
          }
          if (const auto* token = parts_.model->id_to_token(ids[i])) token_bytes(*token);
          else bytes.clear();
          // White space a Split removed belongs to no token: a token that starts with none skips
          // to where it starts.
          constexpr std::string_view kSpace = " \t\n\r\f\v";
          if (!bytes.empty() && kSpace.find(bytes[0]) == std::string_view::npos)
            while (at < piece.size() && kSpace.find(piece[at]) != std::string_view::npos) ++at;
          for (const char b : bytes) {
            if (at < piece.size() && piece[at] == b) ++at;
            else if (b != ' ' && at < piece.size()) ++at;
          }
          ends.push_back(original(offset + at));
        }
        if (ids.size() > first) ends.back() = original(offset + piece.size());
      },
      [&](std::uint32_t id, std::size_t end) {
        ids.push_back(id);
        ends.push_back(end);
      });
}

std::string Tokenizer::decode(const std::vector<std::uint32_t>& ids, bool skip_special_tokens) const {
  if (!parts_.decoder_missing.empty())
    throw FormatError(source_ + ": decoder '" + parts_.decoder_missing +
                      "' is not supported for decoding (supported: ByteLevel, ByteFallback, Fuse, Strip, Replace, "
                      "Metaspace, Sequence, null)");
  // As tokenizers: every token's string goes through the decoder, added tokens too (in their
  // normalized form when they are matched normalized).
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (const auto id : ids) {
    if (const auto* added = parts_.added->by_id(id)) {
      // As tokenizers 0.23: skipped when the string it decodes from is a special token's content
      // (a special token matched in a normalized form that differs is kept).
      const auto& form = parts_.added->decoding_form(*added);
      const auto* named = parts_.added->by_content(form);
      if (!(skip_special_tokens && named && named->special)) tokens.push_back(form);
      continue;
    }
    const auto* token = parts_.model->id_to_token(id);
    if (!token) throw FormatError(source_ + ": decode: id " + std::to_string(id) + " is not in the vocabulary");
    tokens.push_back(*token);
  }
  std::string text;
  if (!parts_.decoder) {
    for (std::size_t i = 0; i < tokens.size(); ++i) text += (i ? " " : "") + tokens[i];
    return text;
  }
  parts_.decoder->apply(tokens);
  for (const auto& t : tokens) text += t;
  return text;
}

}  // namespace shardkit::text

// The tokenizer pipeline: added tokens, pre-tokenizer, BPE, template; decoding back to text.
#include "tokenizer.hpp"

#include <boost/json.hpp>
#include <filesystem>

#include "added_tokens.hpp"
#include "bpe.hpp"
#include "byte_level.hpp"
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

void Tokenizer::encode_text(std::string_view text, std::vector<std::uint32_t>& out) const {
  thread_local std::vector<std::string> pieces;
  pieces.clear();
  pieces.emplace_back(text);
  if (parts_.pre_tokenizer) parts_.pre_tokenizer->apply(pieces);
  for (const auto& p : pieces) parts_.model->tokenize(p, out);
}

void Tokenizer::encode(std::string_view text, bool add_special_tokens, std::vector<std::uint32_t>& out) const {
  std::size_t bad = 0;
  if (!valid_utf8(text, bad))
    throw FormatError("the text is not valid UTF-8 (byte " + std::to_string(bad) + ")");
  if (add_special_tokens) out.insert(out.end(), parts_.prefix_ids.begin(), parts_.prefix_ids.end());
  std::vector<Segment> segments;
  parts_.added->split(text, segments);
  for (const auto& s : segments) {
    if (s.id >= 0) out.push_back(static_cast<std::uint32_t>(s.id));
    else encode_text(text.substr(s.begin, s.end - s.begin), out);
  }
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
  std::vector<Segment> segments;
  parts_.added->split(text, segments);
  std::string bytes;
  for (const auto& s : segments) {
    if (s.id >= 0) {
      ids.push_back(static_cast<std::uint32_t>(s.id));
      ends.push_back(s.end);
      continue;
    }
    const auto first = ids.size();
    encode_text(text.substr(s.begin, s.end - s.begin), ids);
    // Each token's bytes (a byte-level token's characters stand for one byte each) are matched
    // against the text in order; a space the pre-tokenizer added (add_prefix_space) matches nothing.
    std::size_t at = s.begin;
    for (auto i = first; i < ids.size(); ++i) {
      const auto* token = parts_.model->id_to_token(ids[i]);
      bytes.clear();
      if (token && byte_level) {
        for (std::size_t c = 0; c < token->size();) {
          const int b = byte_of_code_point(next_code_point(*token, c));
          if (b >= 0) bytes += static_cast<char>(b);
        }
      } else if (token) {
        bytes = *token;
      }
      for (const char b : bytes) {
        if (at < s.end && text[at] == b) ++at;
        else if (b != ' ' && at < s.end) ++at;
      }
      ends.push_back(at);
    }
    if (ids.size() > first) ends.back() = s.end;
  }
}

std::string Tokenizer::decode(const std::vector<std::uint32_t>& ids, bool skip_special_tokens) const {
  if (parts_.decoder != "ByteLevel")
    throw FormatError(source_ + ": decoder '" + (parts_.decoder.empty() ? "null" : parts_.decoder) +
                      "' is not supported for decoding (supported: ByteLevel)");
  // Model tokens go through the byte-level decoder; added tokens are copied as they are.
  std::string bytes, text;
  const auto flush = [&] {
    text += utf8_lossy(bytes);
    bytes.clear();
  };
  for (const auto id : ids) {
    if (const auto* added = parts_.added->by_id(id)) {
      if (skip_special_tokens && added->special) continue;
      flush();
      text += added->content;
      continue;
    }
    const auto* token = parts_.model->id_to_token(id);
    if (!token) throw FormatError(source_ + ": decode: id " + std::to_string(id) + " is not in the vocabulary");
    // A token whose characters are all byte stand-ins becomes those bytes; any other is kept as it is.
    std::string own;
    bool all = true;
    for (std::size_t at = 0; at < token->size();) {
      const int b = byte_of_code_point(next_code_point(*token, at));
      if (b < 0) {
        all = false;
        break;
      }
      own += static_cast<char>(b);
    }
    bytes += all ? own : *token;
  }
  flush();
  return text;
}

}  // namespace shardkit::text

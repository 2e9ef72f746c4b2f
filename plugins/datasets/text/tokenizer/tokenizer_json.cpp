// Reads tokenizer.json into the tokenizer's parts, refusing what it does not implement by name.
#include <boost/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "added_tokens.hpp"
#include "bpe.hpp"
#include "byte_level.hpp"
#include "decoder.hpp"
#include "normalizer.hpp"
#include "pre_tokenizer.hpp"
#include "shardkit/error.hpp"
#include "tokenizer.hpp"

namespace shardkit::text {
namespace json = boost::json;
namespace {

/// The largest id of `tokens` (0 when empty).
std::uint32_t largest_id(const TokenMap& tokens) {
  std::uint32_t largest = 0;
  for (const auto& kv : tokens) largest = std::max(largest, kv.second);
  return largest;
}

/// A tokenizer's ids number its tokens from 0 (the model's embedding has a row per id): ids far
/// beyond the tokens the file defines are refused before anything is sized by them (a 1 kB file
/// must not ask for a 2^31-row table). Twice the count and 1024 spare ids allow any real gaps.
void check_dense_ids(std::size_t tokens, std::uint32_t largest, const char* field, const std::string& source) {
  if (tokens == 0 || largest < 2 * tokens + 1024) return;
  throw FormatError(source + ": " + field + " has id " + std::to_string(largest) + " but the file defines only " +
                    std::to_string(tokens) + " tokens; a tokenizer's ids run from 0 to about its number of tokens");
}

std::string type_of(const json::object& o) {
  const auto* t = o.if_contains("type");
  return t && t->is_string() ? std::string(t->as_string()) : "";
}

bool flag(const json::object& o, const char* key, bool fallback) {
  const auto* v = o.if_contains(key);
  return v && v->is_bool() ? v->as_bool() : fallback;
}

std::string string_or_empty(const json::object& o, const char* key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : "";
}

/// A pattern object {"Regex": "..."} or {"String": "..."} as a regex; `what` names its owner.
std::string read_pattern(const json::value* pattern, const std::string& source, const std::string& what) {
  if (pattern && pattern->is_object()) {
    const auto& p = pattern->as_object();
    if (const auto* r = p.if_contains("Regex"); r && r->is_string()) return std::string(r->as_string());
    if (const auto* l = p.if_contains("String"); l && l->is_string()) return escape_regex(std::string(l->as_string()));
  }
  throw FormatError(source + ": " + what + " without a {\"Regex\": ...} or {\"String\": ...} pattern");
}

/// A one-character string field (Metaspace's replacement, Strip's content) as its code point.
std::uint32_t read_char(const json::object& o, const char* key, const std::string& source, const std::string& what) {
  const auto s = string_or_empty(o, key);
  std::size_t at = 0;
  const auto c = s.empty() ? 0 : next_code_point(s, at);
  if (s.empty() || at != s.size())
    throw FormatError(source + ": " + what + "'s '" + key + "' must be one character, not '" + s + "'");
  return c;
}

/// Metaspace's prepend_scheme, with the older add_prefix_space field read as tokenizers reads it.
PrependScheme read_prepend_scheme(const json::object& o, const std::string& source) {
  const auto scheme = string_or_empty(o, "prepend_scheme");
  PrependScheme result = PrependScheme::Always;
  if (scheme == "first") result = PrependScheme::First;
  else if (scheme == "never") result = PrependScheme::Never;
  else if (!scheme.empty() && scheme != "always")
    throw FormatError(source + ": Metaspace prepend_scheme '" + scheme + "' is none of always, first, never");
  if (!flag(o, "add_prefix_space", true)) {
    if (!scheme.empty() && result != PrependScheme::Never)
      throw FormatError(source + ": Metaspace add_prefix_space=false does not match prepend_scheme '" + scheme + "'");
    result = PrependScheme::Never;
  }
  return result;
}

/// The parts of a tokenizer.json this implementation lacks, gathered while reading so that one
/// error names them all (a malformed file is still an error at the first fault).
class Unsupported {
 public:
  /// `field` with `value` is not implemented; `supported` lists what is.
  void add(const std::string& field, const std::string& value, const std::string& supported) {
    add(field + " '" + value + "' is not supported (supported: " + supported + ")");
  }
  /// One whole sentence saying what is not supported.
  void add(std::string problem) { problems_.push_back(std::move(problem)); }
  /// Throws one ConfigError naming `source` and every part, when there is any: a tokenizer
  /// shardkit does not support is the wrong one to name (exit 2), as an unsupported model type
  /// is; a malformed file stays a FormatError (exit 1).
  void throw_if_any(const std::string& source) const {
    if (problems_.empty()) return;
    if (problems_.size() == 1) throw ConfigError(source + ": " + problems_.front());
    std::string list;
    for (std::size_t i = 0; i < problems_.size(); ++i)
      list += (i ? "; (" : "(") + std::to_string(i + 1) + ") " + problems_[i];
    throw ConfigError(source + ": " + std::to_string(problems_.size()) + " parts are not supported: " + list);
  }

 private:
  std::vector<std::string> problems_;
};

/// The BPE model, or nullptr when its type is not BPE (recorded in `unsupported`).
std::unique_ptr<Bpe> read_model(const json::object& m, const std::string& source, Unsupported& unsupported) {
  const auto type = type_of(m);
  if (!type.empty() && type != "BPE") unsupported.add("model type", type, "BPE");
  if (const auto* d = m.if_contains("dropout"); d && !d->is_null() && d->to_number<double>() != 0.0)
    unsupported.add("model.dropout is set; BPE dropout is for training tokenizers and is not supported");
  if (!type.empty() && type != "BPE") return nullptr;  // another model's vocab has another form
  const auto* vocab = m.if_contains("vocab");
  const auto* merges = m.if_contains("merges");
  if (!vocab || !vocab->is_object() || !merges || !merges->is_array())
    throw FormatError(source + ": model needs a 'vocab' object and a 'merges' array");
  TokenMap tokens;
  tokens.reserve(vocab->as_object().size());
  for (const auto& kv : vocab->as_object()) {
    const auto& id = kv.value();
    if (!id.is_int64() || id.as_int64() < 0 || id.as_int64() > 0x7fffffff)
      throw FormatError(source + ": model.vocab['" + std::string(kv.key()) + "'] is not a non-negative integer id");
    tokens.emplace(std::string(kv.key()), static_cast<std::uint32_t>(id.as_int64()));
  }
  check_dense_ids(tokens.size(), largest_id(tokens), "model.vocab", source);
  std::vector<std::pair<std::string, std::string>> pairs;
  pairs.reserve(merges->as_array().size());
  for (const auto& merge : merges->as_array()) {
    if (merge.is_string()) {  // "a b"
      const std::string s(merge.as_string());
      const auto space = s.find(' ');
      if (space == std::string::npos) throw FormatError(source + ": merge '" + s + "' has no space between its two tokens");
      pairs.emplace_back(s.substr(0, space), s.substr(space + 1));
    } else if (merge.is_array() && merge.as_array().size() == 2 && merge.as_array()[0].is_string() &&
               merge.as_array()[1].is_string()) {  // ["a", "b"]
      pairs.emplace_back(std::string(merge.as_array()[0].as_string()), std::string(merge.as_array()[1].as_string()));
    } else {
      throw FormatError(source + ": merge " + std::to_string(pairs.size()) + " is neither \"a b\" nor [\"a\", \"b\"]");
    }
  }
  BpeSettings settings;
  if (const auto* u = m.if_contains("unk_token"); u && u->is_string()) settings.unk_token = std::string(u->as_string());
  settings.continuing_subword_prefix = string_or_empty(m, "continuing_subword_prefix");
  settings.end_of_word_suffix = string_or_empty(m, "end_of_word_suffix");
  settings.fuse_unk = flag(m, "fuse_unk", false);
  settings.ignore_merges = flag(m, "ignore_merges", false);
  settings.byte_fallback = flag(m, "byte_fallback", false);
  return std::make_unique<Bpe>(std::move(tokens), pairs, std::move(settings), source);
}

/// The pre-tokenizer, or nullptr when null or not supported (recorded in `unsupported`; the
/// steps of a Sequence are each checked).
std::unique_ptr<PreTokenizer> read_pre_tokenizer(const json::value& v, const std::string& source,
                                                 Unsupported& unsupported) {
  if (v.is_null()) return nullptr;
  const auto& o = v.as_object();
  const auto type = type_of(o);
  if (type == "ByteLevel") return std::make_unique<ByteLevelPreTokenizer>(flag(o, "add_prefix_space", true), flag(o, "use_regex", true));
  if (type == "Sequence") {
    std::vector<std::unique_ptr<PreTokenizer>> steps;
    if (const auto* list = o.if_contains("pretokenizers"); list && list->is_array())
      for (const auto& step : list->as_array())
        if (auto p = read_pre_tokenizer(step, source, unsupported)) steps.push_back(std::move(p));
    return std::make_unique<SequencePreTokenizer>(std::move(steps));
  }
  if (type == "Split") {
    const auto behavior = string_or_empty(o, "behavior");
    SplitBehavior b = SplitBehavior::Isolated;
    if (behavior == "Removed") b = SplitBehavior::Removed;
    else if (behavior == "MergedWithPrevious") b = SplitBehavior::MergedWithPrevious;
    else if (behavior == "MergedWithNext") b = SplitBehavior::MergedWithNext;
    else if (behavior == "Contiguous") b = SplitBehavior::Contiguous;
    else if (behavior != "Isolated")
      unsupported.add("Split pre-tokenizer behavior", behavior,
                      "Isolated, Removed, MergedWithPrevious, MergedWithNext, Contiguous");
    const auto regex = read_pattern(o.if_contains("pattern"), source, "Split pre-tokenizer");
    const auto what = source + " (Split pre-tokenizer)";
    try {
      return std::make_unique<SplitPreTokenizer>(regex, b, flag(o, "invert", false), what);
    } catch (const FormatError& e) {
      // A pattern PCRE2 does not compile (an Oniguruma-only construct) is one more unsupported part.
      std::string message = e.what();
      if (message.rfind(what + ": ", 0) == 0) message = "Split pre-tokenizer: " + message.substr(what.size() + 2);
      unsupported.add(message);
      return nullptr;
    }
  }
  if (type == "Metaspace") {
    std::string replacement;
    append_utf8(read_char(o, "replacement", source, "Metaspace pre-tokenizer"), replacement);
    return std::make_unique<MetaspacePreTokenizer>(replacement, read_prepend_scheme(o, source), flag(o, "split", true));
  }
  unsupported.add("pre_tokenizer type", type, "ByteLevel, Split, Metaspace, Sequence, null");
  return nullptr;
}

/// The normalizer, or nullptr when null or not supported (recorded in `unsupported`).
std::unique_ptr<Normalizer> read_normalizer(const json::value& v, const std::string& source, Unsupported& unsupported) {
  if (v.is_null()) return nullptr;
  const auto& o = v.as_object();
  const auto type = type_of(o);
  if (type == "NFC") return std::make_unique<UnicodeNormalizer>(UnicodeForm::NFC);
  if (type == "NFD") return std::make_unique<UnicodeNormalizer>(UnicodeForm::NFD);
  if (type == "NFKC") return std::make_unique<UnicodeNormalizer>(UnicodeForm::NFKC);
  if (type == "NFKD") return std::make_unique<UnicodeNormalizer>(UnicodeForm::NFKD);
  if (type == "Lowercase") return std::make_unique<LowercaseNormalizer>();
  if (type == "Prepend") return std::make_unique<PrependNormalizer>(string_or_empty(o, "prepend"));
  if (type == "Strip") return std::make_unique<StripNormalizer>(flag(o, "strip_left", true), flag(o, "strip_right", true));
  if (type == "Replace") {
    const auto regex = read_pattern(o.if_contains("pattern"), source, "Replace normalizer");
    try {
      return std::make_unique<ReplaceNormalizer>(regex, string_or_empty(o, "content"), source + " (Replace normalizer)");
    } catch (const FormatError& e) {
      unsupported.add(std::string("Replace normalizer: ") + e.what());
      return nullptr;
    }
  }
  if (type == "Sequence") {
    std::vector<std::unique_ptr<Normalizer>> steps;
    if (const auto* list = o.if_contains("normalizers"); list && list->is_array())
      for (const auto& step : list->as_array())
        if (auto n = read_normalizer(step, source, unsupported)) steps.push_back(std::move(n));
    if (steps.empty()) return nullptr;
    return std::make_unique<SequenceNormalizer>(std::move(steps));
  }
  unsupported.add("normalizer type", type, "NFC, NFD, NFKC, NFKD, Lowercase, Prepend, Replace, Strip, Sequence, null");
  return nullptr;
}

/// The decoder, or nullptr when null. A type it lacks is not refused here (encoding does not
/// need it): its name goes to `missing`, and decoding says so.
std::unique_ptr<Decoder> read_decoder(const json::value& v, const std::string& source, std::string& missing) {
  if (v.is_null()) return nullptr;
  const auto& o = v.as_object();
  const auto type = type_of(o);
  if (type == "ByteLevel") return std::make_unique<ByteLevelDecoder>();
  if (type == "ByteFallback") return std::make_unique<ByteFallbackDecoder>();
  if (type == "Fuse") return std::make_unique<FuseDecoder>();
  if (type == "Strip") {
    const auto count = [&](const char* key) {
      const auto* n = o.if_contains(key);
      return n && n->is_int64() && n->as_int64() > 0 ? static_cast<std::size_t>(n->as_int64()) : std::size_t{0};
    };
    return std::make_unique<StripDecoder>(read_char(o, "content", source, "Strip decoder"), count("start"), count("stop"));
  }
  if (type == "Replace")
    return std::make_unique<ReplaceDecoder>(read_pattern(o.if_contains("pattern"), source, "Replace decoder"),
                                            string_or_empty(o, "content"), source + " (Replace decoder)");
  if (type == "Metaspace")
    return std::make_unique<MetaspaceDecoder>(read_char(o, "replacement", source, "Metaspace decoder"),
                                              read_prepend_scheme(o, source) != PrependScheme::Never);
  if (type == "Sequence") {
    std::vector<std::unique_ptr<Decoder>> steps;
    if (const auto* list = o.if_contains("decoders"); list && list->is_array())
      for (const auto& step : list->as_array())
        if (auto d = read_decoder(step, source, missing)) steps.push_back(std::move(d));
    return std::make_unique<SequenceDecoder>(std::move(steps));
  }
  if (missing.empty()) missing = type;
  return nullptr;
}

/// The single-sequence template's ids around $A into `parts`. `model` is nullptr when the model
/// is not supported: the template's form is still checked, its ids are not looked up there.
void read_post_processor(const json::value& v, const AddedVocabulary& added, const Bpe* model,
                         TokenizerParts& parts, const std::string& source, Unsupported& unsupported) {
  if (v.is_null()) return;
  const auto& o = v.as_object();
  const auto type = type_of(o);
  if (type == "ByteLevel") return;  // changes offsets only
  if (type == "Sequence") {
    if (const auto* list = o.if_contains("processors"); list && list->is_array())
      for (const auto& p : list->as_array()) read_post_processor(p, added, model, parts, source, unsupported);
    return;
  }
  if (type != "TemplateProcessing") {
    unsupported.add("post_processor type", type, "TemplateProcessing, ByteLevel, Sequence, null");
    return;
  }
  const auto* single = o.if_contains("single");
  if (!single || !single->is_array()) throw FormatError(source + ": TemplateProcessing without a 'single' template");
  const auto* specials = o.if_contains("special_tokens");
  bool seen_a = false;
  for (const auto& piece : single->as_array()) {
    const auto& p = piece.as_object();
    if (const auto* seq = p.if_contains("Sequence")) {
      const auto id = string_or_empty(seq->as_object(), "id");
      if (id != "A") unsupported.add("the single-sequence template uses $" + id + "; only $A is supported");
      seen_a = true;
    } else if (const auto* sp = p.if_contains("SpecialToken")) {
      const auto name = string_or_empty(sp->as_object(), "id");
      const json::value* entry = specials && specials->is_object() ? specials->as_object().if_contains(name) : nullptr;
      std::vector<std::uint32_t> ids;
      if (entry && entry->is_object() && entry->as_object().contains("ids")) {
        for (const auto& id : entry->as_object().at("ids").as_array()) ids.push_back(static_cast<std::uint32_t>(id.to_number<std::int64_t>()));
      } else if (const auto* t = added.by_content(name)) {
        ids.push_back(t->id);
      } else if (const auto id = model ? model->token_to_id(name) : std::nullopt) {
        ids.push_back(*id);
      } else if (model) {
        throw FormatError(source + ": the template's special token '" + name + "' has no id");
      }
      auto& target = seen_a ? parts.suffix_ids : parts.prefix_ids;
      target.insert(target.end(), ids.begin(), ids.end());
    }
  }
}

std::vector<AddedToken> read_added_tokens(const json::value* v, const std::string& source) {
  std::vector<AddedToken> tokens;
  if (!v || v->is_null()) return tokens;
  for (const auto& entry : v->as_array()) {
    const auto& o = entry.as_object();
    AddedToken t;
    const auto* id = o.if_contains("id");
    if (!id || !id->is_int64() || id->as_int64() < 0 || id->as_int64() > 0x7fffffff)
      throw FormatError(source + ": an added_tokens entry has no non-negative integer 'id'");
    t.id = static_cast<std::uint32_t>(id->as_int64());
    t.content = string_or_empty(o, "content");
    t.special = flag(o, "special", false);
    t.single_word = flag(o, "single_word", false);
    t.lstrip = flag(o, "lstrip", false);
    t.rstrip = flag(o, "rstrip", false);
    t.normalized = flag(o, "normalized", !t.special);
    tokens.push_back(std::move(t));
  }
  return tokens;
}

}  // namespace

TokenizerParts::TokenizerParts() = default;
TokenizerParts::~TokenizerParts() = default;
TokenizerParts::TokenizerParts(TokenizerParts&&) noexcept = default;

TokenizerParts parse_tokenizer_json(const std::string& json_text, const std::string& source) {
  json::value root;
  try {
    root = json::parse(json_text);
  } catch (const std::exception& e) {
    throw FormatError(source + ": not valid JSON (" + e.what() + ")");
  }
  if (!root.is_object()) throw FormatError(source + ": not a tokenizer.json (the top level is not an object)");
  const auto& o = root.as_object();
  try {
    Unsupported unsupported;
    TokenizerParts parts;
    if (const auto* n = o.if_contains("normalizer")) parts.normalizer = read_normalizer(*n, source, unsupported);
    const auto* model = o.if_contains("model");
    if (!model || !model->is_object()) throw FormatError(source + ": no 'model' object");
    parts.model = read_model(model->as_object(), source, unsupported);
    auto added = read_added_tokens(o.if_contains("added_tokens"), source);
    const std::size_t limit = parts.model ? parts.model->id_limit() : 0;  // null: an unsupported model, refused below
    auto largest = static_cast<std::uint32_t>(limit == 0 ? 0 : limit - 1);
    for (const auto& t : added) largest = std::max(largest, t.id);
    check_dense_ids((parts.model ? parts.model->vocab_size() : 0) + added.size(), largest, "added_tokens", source);
    parts.added = std::make_unique<AddedVocabulary>(std::move(added), parts.normalizer.get());
    if (const auto* p = o.if_contains("pre_tokenizer")) parts.pre_tokenizer = read_pre_tokenizer(*p, source, unsupported);
    if (const auto* p = o.if_contains("post_processor"))
      read_post_processor(*p, *parts.added, parts.model.get(), parts, source, unsupported);
    // Every part is read before any is refused, so that one error names them all.
    unsupported.throw_if_any(source);
    if (const auto* d = o.if_contains("decoder")) {
      parts.decoder = read_decoder(*d, source, parts.decoder_missing);
    }
    if (const auto* pad = o.if_contains("padding"); pad && pad->is_object())
      if (const auto* id = pad->as_object().if_contains("pad_id"); id && id->is_int64())
        parts.pad_id = static_cast<std::uint32_t>(id->as_int64());
    return parts;
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    // Boost.JSON's as_object()/as_string() on a value of another kind.
    throw FormatError(source + ": a field has an unexpected JSON type (" + e.what() + ")");
  }
}

}  // namespace shardkit::text

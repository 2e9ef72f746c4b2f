// Token cache files: "SKTOKv2" header, document offsets, int32 ids, trained-token flags; validated against the file size.
#include "token_cache.hpp"

#include <xxhash.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "shardkit/error.hpp"
#include "shardkit/files.hpp"
#include "shardkit/publish_file.hpp"

namespace shardkit::text {
namespace fs = std::filesystem;
namespace {

constexpr char kMagic[8] = {'S', 'K', 'T', 'O', 'K', 'v', '2', '\0'};

struct Header {
  char magic[8];
  std::uint64_t documents;
  std::uint64_t tokens;
  std::uint64_t trained;  ///< bytes of trained-token flags: 0 or `tokens`
  std::uint64_t skipped;
  std::uint64_t flags;  ///< bit 0: conversations
};

}  // namespace

std::string cache_folder(const std::string& configured) {
  if (!configured.empty()) return configured;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/shardkit/tokenized";
  const char* home = std::getenv("HOME");
  if (!home || !*home)
    throw ConfigError("--dataset.cache_dir is not set and neither XDG_CACHE_HOME nor HOME is: give --dataset.cache_dir");
  return std::string(home) + "/.cache/shardkit/tokenized";
}

std::string cache_key(const std::vector<std::string>& data_files, const std::vector<std::string>& tokenizer_files,
                      const std::string& options) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_128bits_reset(state);
  const auto feed = [&](const std::string& s) {
    const std::uint64_t n = s.size();
    XXH3_128bits_update(state, &n, sizeof n);
    XXH3_128bits_update(state, s.data(), s.size());
  };
  feed(kMagic);
  std::error_code ec;
  for (const auto& file : tokenizer_files)
    if (fs::is_regular_file(file, ec)) feed(read_text_file(file));
    else feed("(absent)");
  for (const auto& file : data_files) {
    feed(fs::absolute(file).lexically_normal().string());
    feed(std::to_string(fs::file_size(file, ec)));
    feed(std::to_string(fs::last_write_time(file, ec).time_since_epoch().count()));
  }
  feed(options);
  const auto hash = XXH3_128bits_digest(state);
  XXH3_freeState(state);
  char hex[33];
  std::snprintf(hex, sizeof hex, "%016llx%016llx", static_cast<unsigned long long>(hash.high64),
                static_cast<unsigned long long>(hash.low64));
  return hex;
}

std::optional<TokenizedDocs> read_token_cache(const std::string& path, std::string& problem) {
  problem.clear();
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  const auto size = fs::file_size(path, ec);
  Header h{};
  if (ec || !in.read(reinterpret_cast<char*>(&h), sizeof h) || std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) {
    problem = "not a token cache file";
    return std::nullopt;
  }
  const auto want = sizeof h + (h.documents + 1) * sizeof(std::int64_t) + h.tokens * sizeof(std::int32_t) + h.trained;
  if (h.documents > size || h.tokens > size || (h.trained != 0 && h.trained != h.tokens) || want != size) {
    problem = "its size (" + std::to_string(size) + " bytes) does not match its header";
    return std::nullopt;
  }
  TokenizedDocs docs;
  docs.offsets.resize(h.documents + 1);
  docs.tokens.resize(h.tokens);
  docs.trained.resize(h.trained);
  docs.skipped = h.skipped;
  docs.chat = (h.flags & 1) != 0;
  in.read(reinterpret_cast<char*>(docs.offsets.data()), static_cast<std::streamsize>(docs.offsets.size() * sizeof(std::int64_t)));
  in.read(reinterpret_cast<char*>(docs.tokens.data()), static_cast<std::streamsize>(docs.tokens.size() * sizeof(std::int32_t)));
  in.read(reinterpret_cast<char*>(docs.trained.data()), static_cast<std::streamsize>(docs.trained.size()));
  if (!in) {
    problem = "it could not be read";
    return std::nullopt;
  }
  for (std::size_t i = 0; i < h.documents; ++i)
    if (docs.offsets[i] > docs.offsets[i + 1]) {
      problem = "its document offsets are not increasing";
      return std::nullopt;
    }
  if (docs.offsets.front() != 0 || docs.offsets.back() != static_cast<std::int64_t>(h.tokens)) {
    problem = "its document offsets do not cover its tokens";
    return std::nullopt;
  }
  return docs;
}

void write_token_cache(const std::string& path, const TokenizedDocs& docs) {
  const auto folder = fs::path(path).parent_path().string();
  make_directories(folder);
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.documents = docs.size();
  h.tokens = docs.tokens.size();
  h.trained = docs.trained.size();
  h.skipped = docs.skipped;
  h.flags = docs.chat ? 1 : 0;
  if (h.trained != 0 && h.trained != h.tokens)
    throw RuntimeError("write_token_cache: " + std::to_string(h.trained) + " trained-token flags for " +
                       std::to_string(h.tokens) + " tokens");
  try {
    publish_file(path, [&](int fd, const std::string& temp) {
      write_all(fd, &h, sizeof h, temp);
      write_all(fd, docs.offsets.data(), docs.offsets.size() * sizeof(std::int64_t), temp);
      write_all(fd, docs.tokens.data(), docs.tokens.size() * sizeof(std::int32_t), temp);
      write_all(fd, docs.trained.data(), docs.trained.size(), temp);
    });
  } catch (const RuntimeError& e) {
    throw FormatError(std::string(e.what()) + " (writing the token cache; disk full? set --dataset.cache_dir)");
  }
}

}  // namespace shardkit::text

// Hugging Face datasets' split keywords matched against file names.
#include "data_splits.hpp"

#include <filesystem>
#include <initializer_list>

namespace shardkit::text {
namespace {

// datasets' NON_WORDS_CHARS, "-._ 0-9": what may stand on each side of a split keyword.
bool is_separator(char c) { return c == '-' || c == '.' || c == '_' || c == ' ' || (c >= '0' && c <= '9'); }

// datasets' two file-name patterns, "{keyword}[sep]*" and "*[sep]{keyword}[sep]*"; a glob's '*'
// matches no leading '.', so a hidden file matches neither.
bool names_split(const std::string& name, const std::string& keyword) {
  if (name.empty() || name[0] == '.') return false;
  for (auto at = name.find(keyword); at != std::string::npos; at = name.find(keyword, at + 1)) {
    const auto end = at + keyword.size();
    if (end < name.size() && is_separator(name[end]) && (at == 0 || is_separator(name[at - 1]))) return true;
  }
  return false;
}

bool names_any(const std::string& name, std::initializer_list<const char*> keywords) {
  for (const auto* keyword : keywords)
    if (names_split(name, keyword)) return true;
  return false;
}

}  // namespace

NamedSplits split_by_file_name(const std::vector<std::string>& files) {
  NamedSplits out;
  for (const auto& file : files) {
    const auto name = std::filesystem::path(file).filename().string();
    bool named = false;
    const auto sort_into = [&](std::vector<std::string>& split, std::initializer_list<const char*> keywords) {
      if (!names_any(name, keywords)) return;
      split.push_back(file);
      named = true;
    };
    sort_into(out.train, {"train", "training"});
    sort_into(out.validation, {"validation", "valid", "dev", "val"});
    sort_into(out.test, {"test", "testing", "eval", "evaluation"});
    if (!named) out.unnamed.push_back(file);
  }
  return out;
}

std::string file_names(const std::vector<std::string>& files) {
  std::string s;
  for (const auto& f : files) s += (s.empty() ? "" : ", ") + std::filesystem::path(f).filename().string();
  return s.empty() ? "(none)" : s;
}

}  // namespace shardkit::text

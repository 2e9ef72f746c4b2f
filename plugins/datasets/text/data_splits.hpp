// Splits named by file names, as Hugging Face datasets finds them in a data folder.
#pragma once

#include <string>
#include <vector>

namespace shardkit::text {

/// The files of a folder sorted into the splits their names give, by Hugging Face datasets'
/// rules for files (datasets/data_files.py, checked against datasets 4.8): a file belongs to a
/// split when its name starts with one of the split's keywords followed by one of `-._ ` or a
/// digit, or holds the keyword between two such characters (`my-train_2.jsonl`). The keywords
/// (case-sensitive): train: train, training; validation: validation, valid, dev, val; test:
/// test, testing, eval, evaluation. A file may fall in several splits (`train_test.jsonl`), as
/// in datasets; a hidden file (a leading '.') in none.
struct NamedSplits {
  std::vector<std::string> train, validation, test;  ///< in the order of the files given
  std::vector<std::string> unnamed;                  ///< files in no split
  /// Whether any file's name gives a split. When none does, every file is training data (as
  /// datasets does); when one does, the files in no split are not read (as datasets does).
  bool any() const { return !train.empty() || !validation.empty() || !test.empty(); }
};

/// Sorts `files` (paths; only each file's name counts) into the splits their names give.
NamedSplits split_by_file_name(const std::vector<std::string>& files);

/// "a.jsonl, b.jsonl": the file names (no folders) of `files`, for messages; "(none)" when empty.
std::string file_names(const std::vector<std::string>& files);

}  // namespace shardkit::text

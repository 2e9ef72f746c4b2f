// Reading documents out of .jsonl, .csv and .txt files (or a folder of them), with file:line for errors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shardkit::text {

/// How a .txt file is cut into documents (the names of Hugging Face datasets' text loader).
enum class SampleBy { Line, Paragraph, Document };

/// Documents read from files, in file order then position order.
struct Documents {
  std::vector<std::string> texts;
  std::vector<std::string> where;  ///< "file:line" of each document, for errors
  std::size_t empty_skipped = 0;   ///< empty documents left out
};

/// The data files `path` names: itself when a file, else the .jsonl/.csv/.txt files directly
/// inside the folder, sorted by name. Throws ConfigError naming `flag` when there are none.
std::vector<std::string> data_files(const std::string& path, const std::string& flag);

/// Appends the documents of one file. `.jsonl`: the string field `column` of each line's
/// object; `.csv` (RFC 4180, header row): the column `column`; `.txt`: per `sample_by`.
/// Throws FormatError naming file:line for malformed input, and ConfigError naming the columns
/// present when `column` is missing.
void read_documents(const std::string& file, const std::string& column, SampleBy sample_by, Documents& out);

}  // namespace shardkit::text

// Reading documents out of .jsonl, .csv, .parquet and .txt files (or a folder of them), with
// file:line (file:row for .parquet) for errors.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace shardkit::text {

/// How a .txt file is cut into documents (the names of Hugging Face datasets' text loader).
enum class SampleBy { Line, Paragraph, Document };

/// Documents read from files, in file order then position order: plain texts, or conversations
/// (chat data), never both.
struct Documents {
  std::vector<std::string> texts;
  /// Each conversation's `messages` value as read (a list of {role, content} when well formed;
  /// checked when it is rendered, so that --dataset.on_bad_example applies).
  std::vector<boost::json::value> conversations;
  std::vector<std::string> where;  ///< "file:line" of each document, for errors
  std::size_t empty_skipped = 0;   ///< empty documents left out
  /// Whether the documents are conversations.
  bool chat() const { return !conversations.empty(); }
};

/// The data files `path` names: itself when a file, else the .jsonl/.csv/.parquet/.txt files directly
/// inside the folder, sorted by name. Throws ConfigError naming `flag` when there are none.
std::vector<std::string> data_files(const std::string& path, const std::string& flag);

/// Appends the documents of one file. `.jsonl`: the string field `column` of each line's
/// object; `.csv` (RFC 4180, header row): the column `column`; `.parquet`: each row as a
/// .jsonl line's object (see read_parquet); `.txt`: per `sample_by`.
/// Conversations, as AITraining finds them: a `messages` field (.jsonl: a list; .csv: a JSON or
/// Python-literal string) wins over `column`; a `column` holding a list of {role, ...} objects
/// (.csv: as a string) is a conversation too. Throws FormatError naming file:line for malformed
/// input or for plain text and conversations mixed, and ConfigError naming the columns present
/// when neither `messages` nor `column` is there.
void read_documents(const std::string& file, const std::string& column, SampleBy sample_by, Documents& out);

/// One record (a .jsonl line's object, a .parquet row) at `file`:`line`: its `messages` list, or
/// its `column` (a string, or a list of messages), appended to `out`; errors as read_documents'.
void add_record(const boost::json::object& record, const std::string& file, std::size_t line, const std::string& column,
                Documents& out);

/// Appends the documents of a .parquet file: each row (1-based numbers in place of lines) as a
/// record of its `messages` and `column` columns, lists and structs as JSON lists and objects
/// (Hugging Face datasets' list<struct<role, content>>). A build without the Arrow/Parquet SDK
/// (parquet_unavailable.cpp) throws ConfigError saying so.
void read_parquet(const std::string& file, const std::string& column, Documents& out);

}  // namespace shardkit::text

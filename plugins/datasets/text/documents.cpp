// Document readers: JSON Lines, RFC 4180 CSV and plain text; conversations found as AITraining finds them.
#include "documents.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <cctype>
#include <filesystem>

#include "python_literal.hpp"
#include "shardkit/error.hpp"
#include "shardkit/files.hpp"

namespace shardkit::text {
namespace fs = std::filesystem;
namespace {

std::string extension(const std::string& file) {
  auto ext = fs::path(file).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext;
}

bool is_data_file(const std::string& file) {
  const auto ext = extension(file);
  return ext == ".jsonl" || ext == ".csv" || ext == ".txt" || ext == ".parquet";
}

// The field that holds a conversation, whatever --dataset.text_column says (AITraining's rule).
constexpr const char* kMessages = "messages";

void add(Documents& out, std::string text, const std::string& file, std::size_t line) {
  if (text.empty()) {
    ++out.empty_skipped;
    return;
  }
  if (out.chat())
    throw FormatError(file + ":" + std::to_string(line) + ": plain text in data whose documents are conversations "
                      "(the first at " + out.where.front() + "): give every record a '" + kMessages +
                      "' list, or keep chat and plain-text data in separate runs");
  out.texts.push_back(std::move(text));
  out.where.push_back(file + ":" + std::to_string(line));
}

void add_conversation(Documents& out, boost::json::value messages, const std::string& file, std::size_t line) {
  if (!out.texts.empty())
    throw FormatError(file + ":" + std::to_string(line) + ": a conversation in data whose documents are plain text "
                      "(the first at " + out.where.front() + "): keep chat and plain-text data in separate runs");
  out.conversations.push_back(std::move(messages));
  out.where.push_back(file + ":" + std::to_string(line));
}

// A CSV cell holding a conversation: JSON, else a Python literal (as ast.literal_eval reads it);
// the cell's text itself when it is neither (reported when the conversation is rendered).
boost::json::value conversation_cell(const std::string& cell) {
  boost::system::error_code ec;
  auto value = boost::json::parse(cell, ec);
  if (!ec) return value;
  std::string problem;
  if (auto literal = parse_python_literal(cell, problem)) return std::move(*literal);
  return boost::json::value(cell);
}

// Whether `value` is a list of message objects (its first one has a role), as a text column
// holding a conversation is.
bool looks_like_conversation(const boost::json::value& value) {
  if (!value.is_array() || value.as_array().empty()) return false;
  const auto& first = value.as_array().front();
  return first.is_object() && first.as_object().contains("role");
}

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "(none)" : s;
}

}  // namespace

void add_record(const boost::json::object& o, const std::string& file, std::size_t line, const std::string& column,
                Documents& out) {
  const auto where = file + ":" + std::to_string(line);
  if (const auto* messages = o.if_contains(kMessages); messages && messages->is_array()) {
    add_conversation(out, *messages, file, line);
    return;
  }
  const auto* field = o.if_contains(column);
  if (!field) {
    std::vector<std::string> names;
    for (const auto& kv : o) names.emplace_back(kv.key());
    throw ConfigError(where + ": no field '" + column + "' (fields: " + join(names) +
                      "); choose one with --dataset.text_column, or give conversations a '" + kMessages + "' list");
  }
  if (field->is_array()) add_conversation(out, *field, file, line);
  else if (field->is_string()) add(out, std::string(field->as_string()), file, line);
  else throw FormatError(where + ": field '" + column + "' is neither a string nor a list of messages");
}

namespace {

void read_jsonl(const std::string& file, const std::string& data, const std::string& column, Documents& out) {
  std::size_t line = 0;
  for (std::size_t at = 0; at < data.size();) {
    auto end = data.find('\n', at);
    if (end == std::string::npos) end = data.size();
    std::string_view text(data.data() + at, end - at);
    ++line;
    at = end + 1;
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (text.find_first_not_of(" \t") == std::string_view::npos) continue;
    boost::system::error_code ec;
    const auto value = boost::json::parse(text, ec);
    const auto where = file + ":" + std::to_string(line);
    if (ec) throw FormatError(where + ": not a JSON object (" + ec.message() + ")");
    if (!value.is_object()) throw FormatError(where + ": not a JSON object (each line of a .jsonl file must be one)");
    add_record(value.as_object(), file, line, column, out);
  }
}

// One CSV record starting at `at`; returns false at the end of the data. `line` counts newlines.
bool csv_record(const std::string& file, const std::string& data, std::size_t& at, std::size_t& line,
                std::vector<std::string>& fields) {
  fields.clear();
  if (at >= data.size()) return false;
  const auto record_line = line;
  std::string field;
  bool quoted = false, was_quoted = false;
  while (at < data.size()) {
    const char c = data[at];
    if (quoted) {
      if (c == '"') {
        if (at + 1 < data.size() && data[at + 1] == '"') {
          field += '"';
          at += 2;
          continue;
        }
        quoted = false;
        ++at;
        continue;
      }
      if (c == '\n') ++line;
      field += c;
      ++at;
      continue;
    }
    if (c == '"' && field.empty() && !was_quoted) {
      quoted = was_quoted = true;
      ++at;
    } else if (c == ',') {
      fields.push_back(std::move(field));
      field.clear();
      was_quoted = false;
      ++at;
    } else if (c == '\n' || c == '\r') {
      at += (c == '\r' && at + 1 < data.size() && data[at + 1] == '\n') ? 2 : 1;
      ++line;
      break;
    } else {
      if (was_quoted)
        throw FormatError(file + ":" + std::to_string(line) + ": text after a quoted field's closing quote");
      field += c;
      ++at;
    }
  }
  if (quoted) throw FormatError(file + ":" + std::to_string(record_line) + ": a quoted field is never closed");
  fields.push_back(std::move(field));
  return true;
}

void read_csv(const std::string& file, const std::string& data, const std::string& column, Documents& out) {
  std::size_t at = 0, line = 1;
  std::vector<std::string> header, fields;
  if (data.compare(0, 3, "\xEF\xBB\xBF") == 0) at = 3;  // a UTF-8 byte-order mark
  if (!csv_record(file, data, at, line, header)) throw FormatError(file + ": empty CSV file (no header row)");
  const auto messages = std::find(header.begin(), header.end(), kMessages);
  const auto it = messages != header.end() ? messages : std::find(header.begin(), header.end(), column);
  if (it == header.end())
    throw ConfigError(file + ": no column '" + column + "' (columns: " + join(header) +
                      "); choose one with --dataset.text_column, or give conversations a '" + kMessages + "' column");
  const auto index = static_cast<std::size_t>(it - header.begin());
  for (;;) {
    const auto record_line = line;
    if (!csv_record(file, data, at, line, fields)) break;
    if (fields.size() == 1 && fields[0].empty()) continue;  // a blank line
    if (fields.size() != header.size())
      throw FormatError(file + ":" + std::to_string(record_line) + ": " + std::to_string(fields.size()) +
                        " fields where the header has " + std::to_string(header.size()));
    auto& cell = fields[index];
    if (messages != header.end()) {
      add_conversation(out, conversation_cell(cell), file, record_line);
      continue;
    }
    // A text cell holding a list of messages is a conversation (AITraining reads it so).
    if (const auto start = cell.find_first_not_of(" \t\r\n"); start != std::string::npos && cell[start] == '[') {
      if (auto value = conversation_cell(cell); looks_like_conversation(value)) {
        add_conversation(out, std::move(value), file, record_line);
        continue;
      }
    }
    add(out, std::move(cell), file, record_line);
  }
}

void read_txt(const std::string& file, const std::string& data, SampleBy by, Documents& out) {
  if (by == SampleBy::Document) {
    std::string text = data;
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    add(out, std::move(text), file, 1);
    return;
  }
  std::string paragraph;
  std::size_t line = 0, paragraph_line = 1;
  for (std::size_t at = 0; at <= data.size();) {
    auto end = data.find('\n', at);
    const bool last = end == std::string::npos;
    if (last) end = data.size();
    std::string_view text(data.data() + at, end - at);
    ++line;
    at = end + 1;
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (by == SampleBy::Line) {
      if (!(last && text.empty())) add(out, std::string(text), file, line);
    } else if (text.empty()) {
      if (!paragraph.empty()) add(out, std::move(paragraph), file, paragraph_line);
      paragraph.clear();
    } else {
      if (paragraph.empty()) paragraph_line = line;
      else paragraph += '\n';
      paragraph += text;
    }
    if (last) break;
  }
  if (!paragraph.empty()) add(out, std::move(paragraph), file, paragraph_line);
}

}  // namespace

std::vector<std::string> data_files(const std::string& path, const std::string& flag) {
  std::error_code ec;
  if (path.empty()) throw ConfigError(flag + " is not set: give a .jsonl, .csv, .parquet or .txt file or a folder of them");
  if (fs::is_regular_file(path, ec)) {
    if (!is_data_file(path))
      throw ConfigError(flag + "=" + path + ": not a .jsonl, .csv, .parquet or .txt file");
    return {path};
  }
  if (!fs::is_directory(path, ec)) throw ConfigError(flag + "=" + path + ": no such file or folder");
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(path, ec))
    if (e.is_regular_file() && is_data_file(e.path().string())) files.push_back(e.path().string());
  if (files.empty()) throw ConfigError(flag + "=" + path + ": the folder holds no .jsonl, .csv, .parquet or .txt file");
  std::sort(files.begin(), files.end());
  return files;
}

void read_documents(const std::string& file, const std::string& column, SampleBy sample_by, Documents& out) {
  const auto ext = extension(file);
  if (ext == ".parquet") {
    read_parquet(file, column, out);
    return;
  }
  const auto data = read_text_file(file);
  if (ext == ".jsonl") read_jsonl(file, data, column, out);
  else if (ext == ".csv") read_csv(file, data, column, out);
  else read_txt(file, data, sample_by, out);
}

}  // namespace shardkit::text

// Fuzz target for the files of a text dataset (--dataset.path): one input read as a .jsonl, a
// .csv and a .txt file (each way of cutting it into documents), and, when it starts as Parquet
// does ("PAR1"), as a .parquet file through Arrow. None crashes or lets anything but shardkit's
// errors escape, and every document read keeps its file:line.
//
// Built and run by scripts/fuzz.sh (libFuzzer with ASan and UBSan; Arrow/Parquet are the pyarrow
// wheel's prebuilt libraries, so the fuzzer sees shardkit's code but not inside the decoder); the
// test suite replays the committed corpus through the same function.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "documents.hpp"
#include "refuse_or_abort.hpp"
#include "temp_folder.hpp"

namespace {

void read_as(const std::string& name, std::string_view bytes, shardkit::text::SampleBy by) {
  using namespace shardkit::text;
  const auto path = shardkit::fuzz::write_temp_file("data/" + name, bytes);
  shardkit::fuzz::refuse_or_abort(name.c_str(), [&] {
    Documents documents;
    read_documents(path, "text", by, documents);
    // Each document, plain or conversation, has its place for error messages.
    if (documents.texts.size() + documents.conversations.size() != documents.where.size()) std::abort();
    if (!documents.texts.empty() && !documents.conversations.empty()) std::abort();  // never both
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using shardkit::text::SampleBy;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (bytes.substr(0, 4) == "PAR1") {
    read_as("train.parquet", bytes, SampleBy::Line);
    return 0;
  }
  read_as("train.jsonl", bytes, SampleBy::Line);
  read_as("train.csv", bytes, SampleBy::Line);
  read_as("train.txt", bytes, SampleBy::Line);
  read_as("train.txt", bytes, SampleBy::Paragraph);
  read_as("train.txt", bytes, SampleBy::Document);
  return 0;
}

// .parquet files in a build without the Arrow/Parquet C++ SDK: refused, saying how to get it.
#include "documents.hpp"
#include "shardkit/error.hpp"

namespace shardkit::text {

void read_parquet(const std::string& file, const std::string&, Documents&) {
  throw ConfigError(file + ": this build of shardkit reads no .parquet files: the Arrow/Parquet C++ SDK (the "
                    "pyarrow wheel's) was not found when it was built. scripts/setup.sh installs pyarrow into the "
                    "venv; rebuild then, or convert the file to .jsonl");
}

}  // namespace shardkit::text

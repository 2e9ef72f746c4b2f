// The items of one DCP folder's data files, mapped into memory and checked against their files.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <ATen/Tensor.h>

#include "shardkit/dcp/metadata.hpp"

namespace shardkit::dcp {

/// Reads items of the data files in folder `dir` by their StorageInfo. Each file is mapped
/// once (read-only); a tensor item comes back as a tensor over the mapped bytes, so copying
/// a part of it reads only the pages of that part. Every offset and length (the item's in its
/// file, the storage records' inside the item) is checked before any byte is touched.
class ItemReader {
 public:
  explicit ItemReader(std::string dir);
  ~ItemReader();
  ItemReader(const ItemReader&) = delete;
  ItemReader& operator=(const ItemReader&) = delete;

  /// The tensor of a torch.save item (of entry `key`, for messages), viewing the mapped file.
  /// Throws FormatError naming the file, the entry and the byte range when the item lies
  /// outside its file, is not a torch.save tensor, or its storage lies outside the item.
  at::Tensor tensor(const StorageInfo& info, const std::string& key);
  /// Asks the kernel to read the pages `view` (a view of a tensor() result) covers, ahead of
  /// copying from it: mappings are made without readahead, so only what is asked is read.
  static void prefetch(const at::Tensor& view);
  /// A copy of the bytes of a byte item (checked as tensor()).
  std::vector<char> bytes(const StorageInfo& info, const std::string& key);

 private:
  struct Mapping;
  const char* item(const StorageInfo& info, const std::string& key, std::shared_ptr<Mapping>& file,
                   std::string& where);
  std::string dir_;
  std::map<std::string, std::shared_ptr<Mapping>> files_;
};

}  // namespace shardkit::dcp

// One TensorBoard event file: TFRecord framing (length, masked CRC-32C, data, masked CRC-32C).
#include "event_file.hpp"

#include <cerrno>
#include <cstring>

#include <boost/crc.hpp>

#include <shardkit/error.hpp>

namespace shardkit::tensorboard {

std::uint32_t masked_crc32c(const void* data, std::size_t size) {
  // CRC-32C: the Castagnoli polynomial, reflected, as TFRecord checksums are.
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
  crc.process_bytes(data, size);
  const std::uint32_t value = crc.checksum();
  return ((value >> 15) | (value << 17)) + 0xa282ead8u;
}

namespace {

void put_le(std::string& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((value >> (8 * i)) & 0xff);
}

}  // namespace

EventFile::EventFile(const std::string& path) : path_(path) {
  file_ = std::fopen(path.c_str(), "wbx");
  if (!file_)
    throw FormatError("cannot create TensorBoard event file " + path + ": " + std::strerror(errno));
}

EventFile::~EventFile() {
  if (file_) std::fclose(file_);
}

void EventFile::write_record(const std::string& data) {
  std::string header;
  put_le(header, data.size(), 8);
  const auto length_crc = masked_crc32c(header.data(), header.size());
  put_le(header, length_crc, 4);
  std::string footer;
  put_le(footer, masked_crc32c(data.data(), data.size()), 4);
  if (std::fwrite(header.data(), 1, header.size(), file_) != header.size() ||
      std::fwrite(data.data(), 1, data.size(), file_) != data.size() ||
      std::fwrite(footer.data(), 1, footer.size(), file_) != footer.size())
    throw FormatError("cannot write to TensorBoard event file " + path_ + ": " + std::strerror(errno));
}

void EventFile::flush() {
  if (std::fflush(file_) != 0)
    throw FormatError("cannot write to TensorBoard event file " + path_ + ": " + std::strerror(errno));
}

}  // namespace shardkit::tensorboard

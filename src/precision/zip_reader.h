// The zip container of torch.save (the format since torch 1.6): the central directory read from
// the end-of-central-directory record (ZIP64 too, for archives and entries past 4 GiB), each
// entry's data found through its local header. Stored entries are views into the file (no copy);
// deflated ones are inflated with zlib into a buffer of their own. Every entry read is checked:
// its local header must name it and give the central directory's compression method, sizes and
// CRC-32 (zeros allowed where bit 3 defers them to a data descriptor), its data must end before
// the central directory, and the CRC-32 of its (inflated) bytes must be the one recorded; any
// difference is an Error naming the archive and the entry. The format is PKWARE's APPNOTE.TXT
// (sections 4.3.7 local file header, 4.3.9 data descriptor, 4.3.12 central directory header,
// 4.3.14-16 the ZIP64 end records, 4.4.7 CRC-32, 4.5.3 the ZIP64 extra field).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace plumb::precision {

struct ZipEntry {
  std::string name;
  uint16_t method = 0;  // 0 stored, 8 deflated
  uint16_t flags = 0;   // bit 0: encrypted
  uint32_t crc32 = 0;   // of the uncompressed bytes
  uint64_t compressed_size = 0;
  uint64_t size = 0;            // uncompressed
  uint64_t local_header = 0;    // byte offset of its local file header
};

// An entry's bytes and what keeps them alive (the file's mapping, or the inflated buffer).
struct ZipData {
  std::string_view bytes;
  std::shared_ptr<const void> owner;
  uint64_t offset = 0;  // where the bytes start in the file (stored entries), for messages
};

class ZipArchive {
 public:
  // Reads the central directory of `bytes`, kept alive by `owner`. Errors name `name` (the path)
  // and the byte offset: "x.pt: truncated zip: ...".
  ZipArchive(std::string_view bytes, std::shared_ptr<const void> owner, std::string name);

  const std::vector<ZipEntry>& entries() const { return entries_; }
  // The entry of this name, or null.
  const ZipEntry* find(std::string_view name) const;
  // The entry's data, checked against its local header, the file's end, the central directory's
  // start and its CRC-32; an encrypted entry, an unknown method or any difference is an Error
  // naming the archive and the entry.
  ZipData read(const ZipEntry& entry) const;

 private:
  struct LocalHeader;
  void read_directory(uint64_t offset, uint64_t size, uint64_t count);
  LocalHeader local_header(const ZipEntry& entry) const;
  uint64_t data_offset(const ZipEntry& entry) const;
  void check_crc(const ZipEntry& entry, std::string_view bytes) const;

  std::string_view bytes_;
  std::shared_ptr<const void> owner_;
  std::string name_;
  uint64_t directory_offset_ = 0;  // where the central directory starts: every entry's data ends before
  std::vector<ZipEntry> entries_;
};

// zlib's CRC-32 of `bytes`, split over threads (joined with crc32_combine) when there are enough
// of them for it to pay.
uint32_t zip_crc32(std::string_view bytes);

// "PK\x03\x04" (a local file header) or "PK\x05\x06" (an empty archive): the file is a zip.
bool looks_like_zip(std::string_view head);

}  // namespace plumb::precision

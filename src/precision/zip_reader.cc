#include "precision/zip_reader.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <limits>
#include <thread>
#include <vector>

#include "common/error.h"

namespace plumb::precision {
namespace {

// Signatures and fixed sizes, APPNOTE.TXT 4.3.
constexpr uint32_t kLocalSignature = 0x04034b50;
constexpr uint32_t kCentralSignature = 0x02014b50;
constexpr uint32_t kEndSignature = 0x06054b50;
constexpr uint32_t kZip64EndSignature = 0x06064b50;
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr size_t kLocalSize = 30;
constexpr size_t kCentralSize = 46;
constexpr size_t kEndSize = 22;
constexpr size_t kZip64EndSize = 56;
constexpr size_t kZip64LocatorSize = 20;
constexpr size_t kMaxComment = 0xffff;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint32_t kSentinel32 = 0xffffffff;  // "see the ZIP64 record"
constexpr uint16_t kSentinel16 = 0xffff;
constexpr uint16_t kStored = 0;
constexpr uint16_t kDeflated = 8;
constexpr uint16_t kEncrypted = 1;
constexpr uint16_t kDataDescriptor = 1 << 3;  // CRC-32 and sizes follow the data (4.3.9)
constexpr int kRawDeflate = -15;
// Deflate's best: a 258-byte match in under 2 bits, about 1032:1 (zlib's FAQ, "what is the maximum
// compression ratio").
constexpr uint64_t kMaxDeflateRatio = 1032;  // zlib's windowBits for a raw deflate stream (no header)
// CRC-32 runs at 2-3 GB/s on one core (zlib 1.2.13): entries past this size are split into parts
// of it, one thread each, so that checking a multi-GiB storage costs what reading it does.
constexpr size_t kCrcPartBytes = size_t{64} << 20;

uint64_t le(const char* at, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(at[i]);
  return v;
}

// A cursor over one record, bounded by the record's end.
struct Fields {
  const char* at;
  uint64_t le_at(size_t offset, int n) const { return le(at + offset, n); }
};

}  // namespace

bool looks_like_zip(std::string_view head) {
  return head.size() >= 4 && head[0] == 'P' && head[1] == 'K' &&
         ((head[2] == 3 && head[3] == 4) || (head[2] == 5 && head[3] == 6));
}

ZipArchive::ZipArchive(std::string_view bytes, std::shared_ptr<const void> owner, std::string name)
    : bytes_(bytes), owner_(std::move(owner)), name_(std::move(name)) {
  // The end record is the last 22 bytes, or fewer than 64 KiB of comment before the end.
  const size_t n = bytes_.size();
  size_t end = std::string_view::npos;
  const size_t lowest = n >= kEndSize + kMaxComment ? n - kEndSize - kMaxComment : 0;
  for (size_t at = n >= kEndSize ? n - kEndSize + 1 : 0; at-- > lowest;) {
    if (le(bytes_.data() + at, 4) == kEndSignature) {
      end = at;
      break;
    }
  }
  if (end == std::string_view::npos) {
    if (looks_like_zip(bytes_)) {
      throw Error(fmt::format("{}: truncated zip ({} bytes): the end-of-central-directory record "
                              "that ends every zip is missing",
                              name_, n));
    }
    throw Error(fmt::format("{}: not a zip archive (torch.save writes one since torch 1.6; the "
                            "older format is not read)",
                            name_));
  }
  const Fields e{bytes_.data() + end};
  uint64_t count = e.le_at(10, 2), size = e.le_at(12, 4), offset = e.le_at(16, 4);
  if (count == kSentinel16 || size == kSentinel32 || offset == kSentinel32) {
    // ZIP64: the locator sits just before the end record and points at the ZIP64 end record.
    if (end < kZip64LocatorSize || le(bytes_.data() + end - kZip64LocatorSize, 4) != kZip64LocatorSignature) {
      throw Error(fmt::format("{}: zip end record at byte {} defers to a ZIP64 record, and there is "
                              "no ZIP64 locator before it",
                              name_, end));
    }
    const uint64_t at = le(bytes_.data() + end - kZip64LocatorSize + 8, 8);
    if (n < kZip64EndSize || at > n - kZip64EndSize || le(bytes_.data() + at, 4) != kZip64EndSignature) {
      throw Error(fmt::format("{}: the ZIP64 end record the locator names at byte {} is not there",
                              name_, at));
    }
    const Fields z{bytes_.data() + at};
    count = z.le_at(32, 8), size = z.le_at(40, 8), offset = z.le_at(48, 8);
  }
  read_directory(offset, size, count);
}

void ZipArchive::read_directory(uint64_t offset, uint64_t size, uint64_t count) {
  const uint64_t n = bytes_.size();
  if (offset > n || size > n - offset) {
    throw Error(fmt::format("{}: truncated zip: the central directory at byte {} ({} bytes) runs "
                            "past the end of the file ({} bytes)",
                            name_, offset, size, n));
  }
  directory_offset_ = offset;
  // Every header takes 46 bytes at least: a count beyond that is not believed.
  entries_.reserve(std::min<uint64_t>(count, size / kCentralSize));
  uint64_t at = offset;
  const uint64_t stop = offset + size;
  for (uint64_t i = 0; i < count; ++i) {
    if (stop - at < kCentralSize || le(bytes_.data() + at, 4) != kCentralSignature) {
      throw Error(fmt::format("{}: zip central directory at byte {}: entry {} of {} is not there "
                              "(no central file header signature)",
                              name_, at, i, count));
    }
    const Fields h{bytes_.data() + at};
    const uint64_t name_len = h.le_at(28, 2), extra_len = h.le_at(30, 2), comment_len = h.le_at(32, 2);
    if (stop - at - kCentralSize < name_len + extra_len + comment_len) {
      throw Error(fmt::format("{}: zip central directory at byte {}: entry {} runs past the "
                              "directory's end",
                              name_, at, i));
    }
    ZipEntry entry;
    entry.flags = static_cast<uint16_t>(h.le_at(8, 2));
    entry.method = static_cast<uint16_t>(h.le_at(10, 2));
    entry.crc32 = static_cast<uint32_t>(h.le_at(16, 4));
    entry.compressed_size = h.le_at(20, 4);
    entry.size = h.le_at(24, 4);
    entry.local_header = h.le_at(42, 4);
    entry.name.assign(bytes_.data() + at + kCentralSize, name_len);
    // The ZIP64 extra field holds, in this order, those of the three that were 0xffffffff.
    const char* extra = bytes_.data() + at + kCentralSize + name_len;
    for (uint64_t x = 0; x + 4 <= extra_len;) {
      const uint64_t id = le(extra + x, 2), len = le(extra + x + 2, 2);
      if (x + 4 + len > extra_len) break;
      if (id == kZip64ExtraId) {
        uint64_t k = x + 4;
        for (uint64_t* field : {&entry.size, &entry.compressed_size, &entry.local_header}) {
          if (*field != kSentinel32) continue;
          if (k + 8 > x + 4 + len) {
            throw Error(fmt::format("{}: zip entry '{}': its ZIP64 extra field is too short",
                                    name_, entry.name));
          }
          *field = le(extra + k, 8);
          k += 8;
        }
      }
      x += 4 + len;
    }
    entries_.push_back(std::move(entry));
    at += kCentralSize + name_len + extra_len + comment_len;
  }
}

const ZipEntry* ZipArchive::find(std::string_view name) const {
  const auto it = std::find_if(entries_.begin(), entries_.end(),
                               [&](const ZipEntry& e) { return e.name == name; });
  return it == entries_.end() ? nullptr : &*it;
}

// What an entry's local header says of it.
struct ZipArchive::LocalHeader {
  uint64_t at = 0;  // the header's byte offset
  uint16_t flags = 0, method = 0;
  uint32_t crc32 = 0;
  uint64_t compressed_size = 0, size = 0;
  std::string_view name;
  uint64_t data = 0;  // where the entry's data starts
};

ZipArchive::LocalHeader ZipArchive::local_header(const ZipEntry& entry) const {
  const uint64_t n = bytes_.size();
  LocalHeader h;
  h.at = entry.local_header;
  if (h.at > n || n - h.at < kLocalSize || le(bytes_.data() + h.at, 4) != kLocalSignature) {
    throw Error(fmt::format("{}: zip entry '{}': no local file header at byte {}", name_, entry.name, h.at));
  }
  const Fields f{bytes_.data() + h.at};
  const uint64_t name_len = f.le_at(26, 2), extra_len = f.le_at(28, 2);
  if (n - h.at - kLocalSize < name_len + extra_len) {
    throw Error(fmt::format("{}: truncated zip: the local header of entry '{}' at byte {} runs past the end of "
                            "the file ({} bytes)",
                            name_, entry.name, h.at, n));
  }
  h.flags = static_cast<uint16_t>(f.le_at(6, 2));
  h.method = static_cast<uint16_t>(f.le_at(8, 2));
  h.crc32 = static_cast<uint32_t>(f.le_at(14, 4));
  h.compressed_size = f.le_at(18, 4);
  h.size = f.le_at(22, 4);
  h.name = bytes_.substr(h.at + kLocalSize, name_len);
  h.data = h.at + kLocalSize + name_len + extra_len;
  if (h.size != kSentinel32 && h.compressed_size != kSentinel32) return h;
  // ZIP64: the local header's extra field holds both sizes, uncompressed first (4.5.3).
  const char* extra = bytes_.data() + h.at + kLocalSize + name_len;
  for (uint64_t x = 0; x + 4 <= extra_len;) {
    const uint64_t id = le(extra + x, 2), len = le(extra + x + 2, 2);
    if (x + 4 + len > extra_len) break;
    if (id == kZip64ExtraId && len >= 16) {
      h.size = le(extra + x + 4, 8), h.compressed_size = le(extra + x + 12, 8);
      return h;
    }
    x += 4 + len;
  }
  throw Error(fmt::format("{}: zip entry '{}': its local header at byte {} defers its sizes to a ZIP64 extra "
                          "field that is not there",
                          name_, entry.name, h.at));
}

// Where the entry's data starts, once its local header agrees with the central directory: the
// same name (else the directory points at another entry's header), method, sizes and CRC-32
// (all three 0 where a data descriptor carries them). The name and extra lengths may differ.
uint64_t ZipArchive::data_offset(const ZipEntry& entry) const {
  const LocalHeader h = local_header(entry);
  const std::string where = fmt::format("{}: zip entry '{}': its local header at byte {}", name_, entry.name, h.at);
  if (h.name != entry.name) {
    throw Error(fmt::format("{} names '{}': the central directory points at another entry's header", where,
                            h.name));
  }
  if (h.method != entry.method) {
    throw Error(fmt::format("{} gives compression method {}, the central directory {}", where, h.method,
                            entry.method));
  }
  const bool deferred = (h.flags & kDataDescriptor) != 0 && h.crc32 == 0 && h.compressed_size == 0 && h.size == 0;
  if (!deferred &&
      (h.compressed_size != entry.compressed_size || h.size != entry.size || h.crc32 != entry.crc32)) {
    throw Error(fmt::format("{} gives {} bytes, {} uncompressed, CRC-32 {:08x}; the central directory {}, {}, "
                            "{:08x}",
                            where, h.compressed_size, h.size, h.crc32, entry.compressed_size, entry.size,
                            entry.crc32));
  }
  return h.data;
}

void ZipArchive::check_crc(const ZipEntry& entry, std::string_view bytes) const {
  const uint32_t crc = zip_crc32(bytes);
  if (crc != entry.crc32) {
    throw Error(fmt::format("{}: zip entry '{}': its {} bytes have CRC-32 {:08x}, and the zip records {:08x}: "
                            "the entry is damaged",
                            name_, entry.name, bytes.size(), crc, entry.crc32));
  }
}

ZipData ZipArchive::read(const ZipEntry& entry) const {
  if ((entry.flags & kEncrypted) != 0) {
    throw Error(fmt::format("{}: zip entry '{}' is encrypted", name_, entry.name));
  }
  if (entry.method != kStored && entry.method != kDeflated) {
    throw Error(fmt::format("{}: zip entry '{}' is compressed with method {}; plumb reads stored "
                            "entries (as torch.save writes them) and deflated ones",
                            name_, entry.name, entry.method));
  }
  const uint64_t n = bytes_.size();
  const uint64_t at = data_offset(entry);
  if (at > n || entry.compressed_size > n - at) {
    throw Error(fmt::format("{}: truncated zip: entry '{}' at byte {} ({} bytes) runs past the end "
                            "of the file ({} bytes)",
                            name_, entry.name, at, entry.compressed_size, n));
  }
  if (at + entry.compressed_size > directory_offset_) {
    throw Error(fmt::format("{}: zip entry '{}': its data (bytes {} to {}) runs into the central directory at "
                            "byte {}",
                            name_, entry.name, at, at + entry.compressed_size, directory_offset_));
  }
  const std::string_view raw = bytes_.substr(at, entry.compressed_size);
  if (entry.method == kStored) {
    if (entry.size != entry.compressed_size) {
      throw Error(fmt::format("{}: zip entry '{}' is stored, yet its sizes differ ({} and {})",
                              name_, entry.name, entry.compressed_size, entry.size));
    }
    check_crc(entry, raw);
    return {raw, owner_, at};
  }
  // Deflated: inflate into a buffer of the size the directory gives, and check that it fills.
  if (entry.size / kMaxDeflateRatio > raw.size()) {
    throw Error(fmt::format("{}: zip entry '{}' claims {} bytes from {} deflated ones, more than "
                            "deflate can make",
                            name_, entry.name, entry.size, raw.size()));
  }
  if (entry.size > std::numeric_limits<uInt>::max() || raw.size() > std::numeric_limits<uInt>::max()) {
    throw Error(fmt::format("{}: zip entry '{}' is deflated and over 4 GiB; plumb inflates smaller "
                            "entries only",
                            name_, entry.name));
  }
  auto buffer = std::make_shared<std::string>(entry.size, '\0');
  z_stream z{};
  if (inflateInit2(&z, kRawDeflate) != Z_OK) throw Error(fmt::format("{}: zlib failed to start", name_));
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  z.avail_in = static_cast<uInt>(raw.size());
  z.next_out = reinterpret_cast<Bytef*>(buffer->data());
  z.avail_out = static_cast<uInt>(buffer->size());
  const int rc = inflate(&z, Z_FINISH);
  const uint64_t produced = z.total_out;
  inflateEnd(&z);
  if (rc != Z_STREAM_END || produced != entry.size) {
    throw Error(fmt::format("{}: zip entry '{}' does not inflate to the {} bytes its directory "
                            "gives (zlib: {})",
                            name_, entry.name, entry.size, rc == Z_STREAM_END ? "ok" : "bad data"));
  }
  const std::string_view bytes(*buffer);
  check_crc(entry, bytes);
  return {bytes, std::move(buffer), at};
}

uint32_t zip_crc32(std::string_view bytes) {
  const auto* data = reinterpret_cast<const Bytef*>(bytes.data());
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const size_t parts = std::min(bytes.size() / kCrcPartBytes, cores);
  if (parts <= 1) return static_cast<uint32_t>(crc32_z(0, data, bytes.size()));
  const size_t step = (bytes.size() + parts - 1) / parts;
  std::vector<uLong> crcs(parts);
  {
    std::vector<std::jthread> workers;
    for (size_t i = 0; i < parts; ++i) {
      workers.emplace_back([&, i] {
        const size_t first = i * step;
        crcs[i] = crc32_z(0, data + first, std::min(step, bytes.size() - first));
      });
    }
  }
  uLong crc = crcs[0];
  for (size_t i = 1; i < parts; ++i) {
    const size_t len = std::min(step, bytes.size() - i * step);
    crc = crc32_combine(crc, crcs[i], static_cast<z_off_t>(len));
  }
  return static_cast<uint32_t>(crc);
}

}  // namespace plumb::precision

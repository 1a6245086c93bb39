// bench/run_overhead_job: the job bench/run_overhead supervises, fast enough that the supervisor,
// not the job, is what a difference in wall time shows.
//
//   run_overhead_job megatron N   N Megatron-LM training_log lines (every line a progress line)
//   run_overhead_job plain N      N log lines that match no default pattern
//   run_overhead_job printf N     the Megatron-LM lines formatted one by one with snprintf, as a
//                                 logger does (floats and all), through stdio
//   run_overhead_job crash FILE   writes CLOCK_MONOTONIC (ns) to FILE, then _exit(3)
//
// The lines are built in a 256 KiB buffer from a template whose numbers are rewritten in place
// (no printf), and written with write(2): about 1 GB/s, far faster than a real trainer prints.
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace {

// Megatron-LM's training_log line, as printed by megatron/training/training.py.
constexpr std::string_view kMegatron =
    " [2026-03-01 10:00:00] iteration  0000000/ 1000000 | consumed samples:    000000000 | "
    "elapsed time per iteration (ms): 1234.5 | learning rate: 2.999816E-04 | global batch "
    "size:   512 | lm loss: 2.000000E+00 | loss scale: 1.0 | grad norm: 0.385 | number of "
    "skipped iterations:   0 | number of nan iterations:   0 |\n";
// An application log line of about the same length that no default pattern matches.
constexpr std::string_view kPlain =
    "2026-03-01 10:00:00,000 INFO dataloader.worker[00000000]: prefetched shard 0000000 of the "
    "corpus from /data/tokens/train-0000000.bin (262144 tokens, 0.52 ms, queue depth 8), "
    "tokenizer vocab 128256, sequence length 8192, next shard scheduled\n";

// Writes `value` as zero-padded decimal into the `width` characters at `at`.
void put_number(char* at, int width, uint64_t value) {
  for (int i = width - 1; i >= 0; --i) {
    at[i] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
}

void write_all(const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(STDOUT_FILENO, data, size);
    if (n <= 0) std::exit(1);
    data += n;
    size -= static_cast<size_t>(n);
  }
}

// The fields rewritten per line: offset of the first digit, width, multiplier of the line number.
struct Field {
  std::string_view after;  // the text the number follows
  int width;
  uint64_t factor;
};

int emit(std::string_view line, const Field* fields, int nfields, uint64_t count) {
  size_t offsets[4];
  for (int f = 0; f < nfields; ++f) {
    offsets[f] = line.find(fields[f].after) + fields[f].after.size();
  }
  constexpr size_t kBuffer = 256 * 1024;
  std::string buf;
  buf.reserve(kBuffer + line.size());
  for (uint64_t i = 1; i <= count; ++i) {
    size_t at = buf.size();
    buf.append(line);
    for (int f = 0; f < nfields; ++f) {
      put_number(buf.data() + at + offsets[f], fields[f].width, i * fields[f].factor);
    }
    if (buf.size() >= kBuffer) {
      write_all(buf.data(), buf.size());
      buf.clear();
    }
  }
  write_all(buf.data(), buf.size());
  return 0;
}

// The Megatron-LM line with its numbers formatted per line, like training.py's f-strings.
int formatted(uint64_t count) {
  for (uint64_t i = 1; i <= count; ++i) {
    const double t = static_cast<double>(i);
    std::printf(" [2026-03-01 10:%02d:%02d] iteration %8llu/%8d | consumed samples: %12llu | "
                "elapsed time per iteration (ms): %.1f | learning rate: %.6E | global batch "
                "size: %5d | lm loss: %.6E | loss scale: %.1f | grad norm: %.3f | number of "
                "skipped iterations: %3d | number of nan iterations: %3d |\n",
                static_cast<int>(i / 60 % 60), static_cast<int>(i % 60),
                static_cast<unsigned long long>(i), 1000000,
                static_cast<unsigned long long>(i * 512),
                1200 + t / 1e4, 3e-4 / (1 + t / 1e6), 512, 2 + 8 / (1 + t / 1e3), 1.0,
                0.3 + 1 / (1 + t), 0, 0);
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}

int crash(const char* file) {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  char text[32];
  int n = std::snprintf(text, sizeof text, "%lld\n",
                        static_cast<long long>(now.tv_sec) * 1000000000LL + now.tv_nsec);
  int fd = ::open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || ::write(fd, text, static_cast<size_t>(n)) != n) ::_exit(1);
  ::close(fd);
  ::_exit(3);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: run_overhead_job megatron|plain|printf N | crash FILE\n");
    return 2;
  }
  std::string_view mode = argv[1];
  if (mode == "crash") return crash(argv[2]);
  const uint64_t count = std::strtoull(argv[2], nullptr, 10);
  if (mode == "megatron") {
    const Field fields[] = {{"iteration  ", 7, 1}, {"consumed samples:    ", 9, 512}};
    return emit(kMegatron, fields, 2, count);
  }
  if (mode == "printf") return formatted(count);
  if (mode == "plain") {
    const Field fields[] = {{"worker[", 8, 1}, {"shard ", 7, 3}, {"train-", 7, 3}};
    return emit(kPlain, fields, 3, count);
  }
  std::fprintf(stderr, "run_overhead_job: unknown mode %s\n", argv[1]);
  return 2;
}

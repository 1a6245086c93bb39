#include "serve/receive_time.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace plumb::serve {
namespace {

constexpr Nanos kNanosPerSecond = 1'000'000'000;
// Two clock reads in a row take well under a microsecond; 20 us between them means preemption.
constexpr Nanos kMaxClockPairNs = 20'000;

Nanos clock_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return Nanos{ts.tv_sec} * kNanosPerSecond + ts.tv_nsec;
}

// The SCM_TIMESTAMPNS control message of a received message header, if there is one.
const timespec* find_stamp(msghdr& header) {
  for (cmsghdr* c = CMSG_FIRSTHDR(&header); c != nullptr; c = CMSG_NXTHDR(&header, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS &&
        c->cmsg_len >= CMSG_LEN(sizeof(timespec))) {
      return reinterpret_cast<const timespec*>(CMSG_DATA(c));
    }
  }
  return nullptr;
}

}  // namespace

bool enable_receive_timestamps(int fd) {
  int one = 1;
  return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one) == 0;
}

namespace {

// A UDP socket on loopback that sends itself one byte until it reads it back with a stamp.
bool stamps_its_own_datagram(int fd) {
  sockaddr_in self{};
  self.sin_family = AF_INET;
  self.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof self;
  if (bind(fd, reinterpret_cast<sockaddr*>(&self), sizeof self) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&self), &length) != 0) {
    return false;
  }
  for (int waited_ms = 0; waited_ms < kStampingWaitMs; ++waited_ms) {
    char byte = 's';
    sendto(fd, &byte, 1, 0, reinterpret_cast<sockaddr*>(&self), sizeof self);
    bool stamped = peek_receive_time(fd) != kNoTime;
    recv(fd, &byte, 1, MSG_DONTWAIT);
    if (stamped) return true;
    usleep(1'000);
  }
  return false;
}

}  // namespace

bool start_receive_stamping() {
  // Kept open for the life of the process: its closing would switch stamping off again.
  static const bool started = [] {
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    return fd >= 0 && enable_receive_timestamps(fd) && stamps_its_own_datagram(fd);
  }();
  return started;
}

Nanos peek_receive_time(int fd) {
  // One thread reads every socket: one buffer for the looks (their bytes are thrown away).
  static thread_local char bytes[kMaxPeekBytes];
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec))];
  iovec io{bytes, sizeof bytes};
  msghdr header{};
  header.msg_iov = &io;
  header.msg_iovlen = 1;
  header.msg_control = control;
  header.msg_controllen = sizeof control;
  // TCP gives the stamp of the last segment the look read: with every unread byte looked at, the
  // time the newest of them arrived.
  ssize_t n = recvmsg(fd, &header, MSG_PEEK | MSG_DONTWAIT);
  if (n <= 0 || static_cast<size_t>(n) == sizeof bytes) return kNoTime;
  const timespec* stamp = find_stamp(header);
  if (stamp == nullptr) return kNoTime;
  // The two clocks read together: real time between two monotonic reads, given up when the
  // thread was preempted between them (the offset would be off by the preemption).
  Nanos before = clock_ns(CLOCK_MONOTONIC);
  Nanos realtime = clock_ns(CLOCK_REALTIME);
  Nanos after = clock_ns(CLOCK_MONOTONIC);
  if (after - before > kMaxClockPairNs) return kNoTime;
  return realtime_to_monotonic(*stamp, realtime, before + (after - before) / 2);
}

Nanos realtime_to_monotonic(const timespec& stamp, Nanos realtime_now, Nanos monotonic_now) {
  Nanos realtime = Nanos{stamp.tv_sec} * kNanosPerSecond + stamp.tv_nsec;
  return realtime - (realtime_now - monotonic_now);
}

Nanos arrival_stamp(Nanos received, Nanos floor, Nanos now) {
  if (received == kNoTime) return now;
  return std::min(std::max(received, floor), now);
}

}  // namespace plumb::serve

// When bytes reached the client: the kernel's receive time of a socket's unread bytes
// (SO_TIMESTAMPNS), not the time a busy loop got round to reading them. With 1,000 streams whose
// tokens a server emits in the same decode step, the loop reads the last of them a millisecond
// after it arrived; the kernel stamped it on arrival (docs/serve.md, "Receive times").
#pragma once

#include <ctime>

#include "serve/request.h"

namespace plumb::serve {

// Asks the kernel to stamp what `fd` receives (SO_TIMESTAMPNS); false when it refuses.
bool enable_receive_timestamps(int fd);

// Turns the host's receive stamping on for the rest of the process and waits until a datagram
// sent to itself comes back stamped (at most kStampingWaitMs); false when it never does. The
// kernel switches stamping on and off by patching its code when the first socket asks and the
// last one closes, which stalls every CPU for a moment: done once, before a run's clock starts,
// never during one.
bool start_receive_stamping();
inline constexpr int kStampingWaitMs = 200;

// The receive time of the newest of `fd`'s unread bytes, peeked (nothing is consumed), on
// CLOCK_MONOTONIC; kNoTime when nothing is unread, the kernel gave no stamp, or more is unread
// than one look reads (kMaxPeekBytes: the stamp would not cover the rest).
Nanos peek_receive_time(int fd);
inline constexpr size_t kMaxPeekBytes = 64 * 1024;

// A CLOCK_REALTIME stamp on CLOCK_MONOTONIC, from the two clocks read together now (the offset
// is taken afresh each time: NTP may slew the real-time clock during a long run).
Nanos realtime_to_monotonic(const timespec& stamp, Nanos realtime_now, Nanos monotonic_now);

// The time bytes read at `now` are given: the kernel's `received`, kept within [floor, now]
// (`floor`: the request's send, or its previous chunk); `now` when there is no stamp.
Nanos arrival_stamp(Nanos received, Nanos floor, Nanos now);

// The stamp of one wake-up's socket, given to the first bytes read from that socket: bytes a later
// read brings (arrived after the look) are stamped with the clock, never earlier than they came;
// and bytes libcurl reads from another socket meanwhile (a transfer whose timer expired is run
// inside the same call) never take this socket's stamp.
class PendingReceive {
 public:
  void set(int socket, Nanos received) {
    socket_ = socket;
    received_ = received;
  }
  void clear() { set(-1, kNoTime); }
  // The stamp for bytes read from `socket` at `now` after `floor`; the stamp is spent.
  Nanos take(int socket, Nanos floor, Nanos now) {
    if (socket != socket_) return now;
    Nanos at = arrival_stamp(received_, floor, now);
    clear();
    return at;
  }

 private:
  int socket_ = -1;
  Nanos received_ = kNoTime;
};

}  // namespace plumb::serve

// The kernel's receive time of a socket's unread bytes (serve/receive_time.h): the conversion
// and clamping against worked examples, and the look itself on a real loopback TCP connection.
#include "serve/receive_time.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>

namespace plumb::serve {
namespace {

TEST(ReceiveTime, RealtimeStampsMoveOntoTheMonotonicClockByTodaysOffset) {
  // Real time 1,700,000,000.5 s while monotonic reads 1,000 s: the offset is
  // 1,699,999,000.5 s; a stamp 2 ms before real-time now is 2 ms before monotonic now.
  timespec stamp{1'700'000'000, 498'000'000};
  Nanos realtime_now = 1'700'000'000'500'000'000;
  Nanos monotonic_now = 1'000'000'000'000;
  EXPECT_EQ(realtime_to_monotonic(stamp, realtime_now, monotonic_now), 999'998'000'000);
}

TEST(ReceiveTime, AStampIsKeptBetweenTheFloorAndNow) {
  EXPECT_EQ(arrival_stamp(kNoTime, 100, 500), 500);  // no stamp: the clock
  EXPECT_EQ(arrival_stamp(300, 100, 500), 300);      // the kernel's time
  EXPECT_EQ(arrival_stamp(50, 100, 500), 100);       // never before the send or last chunk
  EXPECT_EQ(arrival_stamp(900, 100, 500), 500);      // never after it was read
}

TEST(ReceiveTime, APendingStampGoesToTheFirstBytesReadFromItsSocketOnly) {
  PendingReceive pending;
  pending.set(7, 250);
  EXPECT_EQ(pending.take(8, 100, 400), 400);  // another socket's bytes: the clock
  EXPECT_EQ(pending.take(7, 100, 500), 250);
  EXPECT_EQ(pending.take(7, 100, 600), 600);  // later bytes of the same wake-up: the clock
}

// A loopback TCP connection: `client` reads what `server` sends.
struct Connection {
  int client = -1;
  int server = -1;
  Connection() {
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address);
    listen(listener, 1);
    getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
    client = socket(AF_INET, SOCK_STREAM, 0);
    connect(client, reinterpret_cast<sockaddr*>(&address), sizeof address);
    server = accept(listener, nullptr, nullptr);
    close(listener);
  }
  ~Connection() {
    close(client);
    close(server);
  }
};

// Stamping on for the process (start_receive_stamping), and on for this connection's reader.
void wait_until_stamped(Connection& c) {
  ASSERT_TRUE(start_receive_stamping()) << "this kernel never stamped a received datagram";
  ASSERT_TRUE(enable_receive_timestamps(c.client));
}

Nanos monotonic_now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return Nanos{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

TEST(ReceiveTime, TheLookGivesTheTimeTheBytesCameNotTheTimeTheyWereReadAndConsumesNothing) {
  Connection c;
  wait_until_stamped(c);
  EXPECT_EQ(peek_receive_time(c.client), kNoTime);  // nothing unread
  Nanos before = monotonic_now();
  ASSERT_EQ(send(c.server, "data: 1\n\n", 9, 0), 9);
  Nanos after = monotonic_now();
  usleep(20'000);  // the reader is late; the stamp is not
  Nanos received = peek_receive_time(c.client);
  EXPECT_GE(received, before);
  EXPECT_LE(received, after);
  char bytes[16] = {};
  EXPECT_EQ(recv(c.client, bytes, sizeof bytes, MSG_DONTWAIT), 9);  // the look left them
  EXPECT_EQ(std::string(bytes, 9), "data: 1\n\n");
}

TEST(ReceiveTime, OfSeveralUnreadSegmentsTheNewestArrivalIsGiven) {
  Connection c;
  wait_until_stamped(c);
  ASSERT_EQ(send(c.server, "a", 1, 0), 1);
  usleep(5'000);
  Nanos before = monotonic_now();
  ASSERT_EQ(send(c.server, "b", 1, 0), 1);
  usleep(5'000);
  EXPECT_GE(peek_receive_time(c.client), before);  // never earlier than the bytes it covers
}

TEST(ReceiveTime, StampingStartsOnceForTheProcess) {
  EXPECT_TRUE(start_receive_stamping());
  EXPECT_TRUE(start_receive_stamping());  // the second call finds it on
}

TEST(ReceiveTime, ASocketNotAskedToStampGivesNoStamp) {
  Connection c;
  ASSERT_EQ(send(c.server, "x", 1, 0), 1);
  usleep(5'000);
  EXPECT_EQ(peek_receive_time(c.client), kNoTime);
}

}  // namespace
}  // namespace plumb::serve

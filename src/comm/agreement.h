// Errors at phase boundaries, agreed by every rank. A step that fails on some ranks only (a
// library missing on one node, a file readable on some) must not leave the others waiting in the
// next collective call: every rank runs the step, then all learn whether any failed, and all
// throw the same plumb::Error -- printed once, by rank 0.
#pragma once

#include <functional>

#include "comm/communicator.h"
#include "common/error.h"

namespace plumb::comm {

// Runs `step` on this rank, then exchanges outcomes over `comm` (collective: every rank calls
// it). When the step threw on any rank, throws on every rank one Error with the first failing
// rank's exit code and message: the message alone when every rank failed alike, else prefixed
// "rank R on host H: " and followed by how many ranks failed.
void agree(Communicator& comm, const std::function<void()>& step);

// The end of a command after an agreed Error (every rank has it): rank 0 prints it, and all wait
// for that before MPI shuts down so that the launcher does not cut the message off. Returns the
// error's exit code.
int exit_agreed(Communicator& comm, const Error& error);

// For failures in the middle of a measurement, when other ranks may be blocked in a collective
// and no agreement is possible: prints "plumb: error: rank R on host H: <message>" on this rank
// and aborts every rank with the error's exit code (MPI_Abort).
[[noreturn]] void abort_all(int exit_code, const std::string& message);

}  // namespace plumb::comm

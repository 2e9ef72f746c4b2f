// The rule of every fuzz harness: a reader may refuse its input with a shardkit error (a
// message naming the file and field); any other exception is a failure of the target.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "shardkit/error.hpp"

namespace shardkit::fuzz {

/// Runs `read`; a shardkit::Error is fine, any other exception aborts, naming `reader`.
template <class Read>
void refuse_or_abort(const char* reader, Read&& read) {
  try {
    read();
  } catch (const shardkit::Error&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: not a shardkit error: %s\n", reader, e.what());
    std::abort();
  }
}

}  // namespace shardkit::fuzz

// One loaded plugin library as the registry holds it (internal to the loader).
#pragma once

#include <string>
#include <utility>

#include <boost/dll/shared_library.hpp>

#include "shardkit/loader.hpp"

namespace shardkit {

/// A library that passed every check. Shared by the registry and by every object made
/// from it, so the code behind those objects stays mapped while any of them lives.
struct Registry::Library {
  boost::dll::shared_library library;
  std::string file;                             ///< canonical path
  std::pair<std::string, std::string> key;      ///< (kind, name) it provides
};

}  // namespace shardkit

// The version of the shardkit core library the program runs against.
#pragma once

namespace shardkit {

/// The shardkit version ("0.1.0") of the core library loaded at run time, which may
/// differ from the headers a plugin or app was compiled with.
const char* version();

}  // namespace shardkit

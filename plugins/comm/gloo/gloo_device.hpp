// Choosing the address Gloo listens on, and creating the Gloo transport device for it.
#pragma once

#include <memory>
#include <string>

#include <spdlog/logger.h>

namespace gloo::transport {
class Device;
}

namespace shardkit::gloo {

/// The local address whose route leads to host:port (a UDP socket's connect() and
/// getsockname(): no packet is sent). A loopback master gives "127.0.0.1". Returns ""
/// when `host` does not resolve or no route exists.
std::string local_address_towards(const std::string& host, int port);

/// The Gloo device: on interface `ifname` when given (GLOO_SOCKET_IFNAME), else on the
/// address that routes to the master. Debian maps the host name to 127.0.1.1, so
/// resolving the host name (Gloo's default) would break runs across machines.
std::shared_ptr<::gloo::transport::Device> make_device(const std::string& ifname,
                                                       const std::string& master_addr,
                                                       int master_port,
                                                       const std::shared_ptr<spdlog::logger>& log);

}  // namespace shardkit::gloo

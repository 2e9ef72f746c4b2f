// Gloo device creation: GLOO_SOCKET_IFNAME, else the local address that routes to MASTER_ADDR.
#include "gloo_device.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <shardkit/error.hpp>

#include <c10d_errors.hpp>
#include <shardkit/comm_support.hpp>

namespace shardkit::gloo {
namespace {

std::string route_source(const addrinfo& target) {
  const int fd = ::socket(target.ai_family, SOCK_DGRAM, 0);
  if (fd < 0) return "";
  std::string address;
  sockaddr_storage local{};
  socklen_t length = sizeof(local);
  if (::connect(fd, target.ai_addr, target.ai_addrlen) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) == 0) {
    char text[INET6_ADDRSTRLEN] = {};
    if (local.ss_family == AF_INET) {
      const auto* v4 = reinterpret_cast<const sockaddr_in*>(&local);
      if ((ntohl(v4->sin_addr.s_addr) >> 24) == 127) address = "127.0.0.1";
      else if (::inet_ntop(AF_INET, &v4->sin_addr, text, sizeof(text))) address = text;
    } else if (local.ss_family == AF_INET6) {
      const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&local);
      if (IN6_IS_ADDR_LOOPBACK(&v6->sin6_addr)) address = "127.0.0.1";
      else if (::inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof(text))) address = text;
    }
  }
  ::close(fd);
  return address;
}

}  // namespace

std::string local_address_towards(const std::string& host, int port) {
  // IPv4 first: Gloo's TCP transport and most clusters use it.
  for (const int family : {AF_INET, AF_UNSPEC}) {
    addrinfo hints{};
    hints.ai_family = family;
    hints.ai_socktype = SOCK_DGRAM;
    addrinfo* found = nullptr;
    if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) continue;
    std::string address;
    for (auto* entry = found; entry && address.empty(); entry = entry->ai_next)
      address = route_source(*entry);
    ::freeaddrinfo(found);
    if (!address.empty()) return address;
  }
  return "";
}

std::shared_ptr<::gloo::transport::Device> make_device(const std::string& ifname,
                                                       const std::string& master_addr,
                                                       int master_port,
                                                       const std::shared_ptr<spdlog::logger>& log) {
  try {
    if (!ifname.empty()) {
      if (log) log->debug("gloo: binding to interface {} (GLOO_SOCKET_IFNAME)", ifname);
      return c10d::ProcessGroupGloo::createDeviceForInterface(ifname);
    }
    const auto address = local_address_towards(master_addr, master_port);
    if (address.empty()) {
      if (log)
        log->debug("gloo: no route to MASTER_ADDR={}; binding to the host name's address",
                   master_addr);
      return c10d::ProcessGroupGloo::createDefaultDevice();
    }
    if (log)
      log->debug("gloo: binding to {} (the local address that routes to {}:{})", address,
                 master_addr, master_port);
    return c10d::ProcessGroupGloo::createDeviceForHostname(address);
  } catch (...) {
    throw RuntimeError("gloo cannot create its network device" +
                       (ifname.empty() ? std::string(" for the route to ") + master_addr
                                       : " on GLOO_SOCKET_IFNAME=" + ifname) +
                       ": " + c10d_common::current_message() +
                       "; set GLOO_SOCKET_IFNAME to the interface that reaches the other nodes");
  }
}

}  // namespace shardkit::gloo

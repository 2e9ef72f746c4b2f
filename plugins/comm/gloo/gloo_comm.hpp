// The gloo transport: rendezvous through a TCPStore, one ProcessGroupGloo per group.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include <shardkit/comm.hpp>
#include <shardkit/plugin.hpp>

#include "gloo_store.hpp"

namespace gloo::transport {
class Device;
}

namespace shardkit::gloo {

class GlooComm final : public shardkit::Comm {
 public:
  explicit GlooComm(const PluginContext& context);
  ~GlooComm() override;

  void init(const CommInit& init) override;
  std::shared_ptr<CommGroup> world() override;
  std::shared_ptr<CommGroup> new_group(const std::vector<int>& ranks,
                                       const std::string& tag) override;
  std::shared_ptr<shardkit::Store> store() override;

  std::shared_ptr<shardkit::Store> host_store(int port, std::chrono::milliseconds timeout) override;
  std::shared_ptr<shardkit::Store> connect_store(const std::string& host, int port,
                                                 std::chrono::milliseconds timeout) override;
  int bound_port() const override { return bound_port_; }

 private:
  void require_init(const char* what) const;
  /// A Gloo group over `store` (already under the group's prefix), this process at `rank`.
  std::shared_ptr<CommGroup> make_group(const std::shared_ptr<GlooStore>& store,
                                        const std::string& name, int rank, int size);

  std::shared_ptr<spdlog::logger> log_;
  CommInit init_;
  bool initialized_ = false;
  std::shared_ptr<GlooStore> store_;
  std::shared_ptr<::gloo::transport::Device> device_;
  std::shared_ptr<CommGroup> world_;
  int bound_port_ = 0;
};

}  // namespace shardkit::gloo

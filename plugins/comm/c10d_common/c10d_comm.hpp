// The part of a c10d comm plugin that does not depend on the transport: joining the run, groups, stores.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include <torch/csrc/distributed/c10d/Backend.hpp>

#include <shardkit/comm.hpp>
#include <shardkit/plugin.hpp>

#include "c10d_group.hpp"
#include "c10d_store.hpp"

namespace shardkit::c10d_common {

/// A Comm over c10d: init() joins the run's TCPStore, waits for every rank, then asks the
/// transport for the world backend; new_group() checks its members and asks again under
/// the group's store prefix. A transport implements prepare() and make_backend().
class C10dComm : public shardkit::Comm {
 public:
  C10dComm(const PluginContext& context, const TransportTraits& traits);
  ~C10dComm() override;

  void init(const CommInit& init) final;
  std::shared_ptr<CommGroup> world() final;
  std::shared_ptr<CommGroup> new_group(const std::vector<int>& ranks,
                                       const std::string& tag) final;
  std::shared_ptr<shardkit::Store> store() final;

  std::shared_ptr<shardkit::Store> host_store(int port, std::chrono::milliseconds timeout) final;
  std::shared_ptr<shardkit::Store> connect_store(const std::string& host, int port,
                                                 std::chrono::milliseconds timeout) final;
  int bound_port() const final { return bound_port_; }

 protected:
  /// Transport checks and set-up before any store is joined (the device to use); the
  /// device returned is where the transport's tensors live. Throws ConfigError.
  virtual torch::Device prepare(const CommInit& init) = 0;
  /// The transport's backend for one group of `size` ranks, this process at `rank`, over
  /// `store` (already under the group's prefix).
  virtual c10::intrusive_ptr<c10d::Backend> make_backend(const std::shared_ptr<C10dStore>& store,
                                                         int rank, int size) = 0;

  const CommInit& init_options() const { return init_; }
  const std::shared_ptr<spdlog::logger>& log() const { return log_; }

 private:
  void require_init(const char* what) const;
  std::shared_ptr<CommGroup> make_group(const std::shared_ptr<C10dStore>& store,
                                        const std::string& name, int rank, int size);

  std::shared_ptr<spdlog::logger> log_;
  const TransportTraits& traits_;
  CommInit init_;
  torch::Device device_{torch::kCPU};
  bool initialized_ = false;
  std::shared_ptr<C10dStore> store_;
  std::shared_ptr<CommGroup> world_;
  int bound_port_ = 0;
};

}  // namespace shardkit::c10d_common

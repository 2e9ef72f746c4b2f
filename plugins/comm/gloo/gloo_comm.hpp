// The gloo transport: c10d's ProcessGroupGloo on the shared c10d comm machinery (CPU tensors, TCP).
#pragma once

#include <memory>

#include <c10d_comm.hpp>

namespace gloo::transport {
class Device;
}

namespace shardkit::gloo {

class GlooComm final : public c10d_common::C10dComm {
 public:
  explicit GlooComm(const PluginContext& context);
  ~GlooComm() override;

 private:
  torch::Device prepare(const CommInit& init) override;
  c10::intrusive_ptr<c10d::Backend> make_backend(
      const std::shared_ptr<c10d_common::C10dStore>& store, int rank, int size) override;

  std::shared_ptr<::gloo::transport::Device> device_;
};

}  // namespace shardkit::gloo

// The torchvision ResNet trunk ACT encodes camera images with (up to layer4), with frozen batch norm.
//
// Module and buffer names are torchvision's (conv1, bn1, layer1.0.conv1, layer2.0.downsample.0, ...),
// so that LeRobot's `model.backbone.*` keys load unchanged.
#pragma once

#include <torch/torch.h>

#include <string>

namespace shardkit::act {

/// BatchNorm2d whose statistics and affine parameters are fixed buffers (torchvision's
/// FrozenBatchNorm2d): y = x * w / sqrt(rv + eps) + (b - rm * w / sqrt(rv + eps)), in x's dtype.
class FrozenBatchNorm2dImpl : public torch::nn::Module {
 public:
  explicit FrozenBatchNorm2dImpl(std::int64_t channels);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor weight, bias, running_mean, running_var;
};
TORCH_MODULE(FrozenBatchNorm2d);

/// torchvision's BasicBlock (resnet18/34).
class BasicBlockImpl : public torch::nn::Module {
 public:
  BasicBlockImpl(std::int64_t in, std::int64_t out, std::int64_t stride);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  FrozenBatchNorm2d bn1{nullptr}, bn2{nullptr};
  torch::nn::Sequential downsample{nullptr};
};
TORCH_MODULE(BasicBlock);

/// conv1, bn1, relu, maxpool, layer1..layer4 of a ResNet; forward returns layer4's feature map.
class ResNetTrunkImpl : public torch::nn::Module {
 public:
  /// `name`: resnet18 or resnet34 (others are refused with a ConfigError naming them).
  explicit ResNetTrunkImpl(const std::string& name);
  torch::Tensor forward(const torch::Tensor& images);
  /// Channels of the feature map (512 for resnet18/34).
  std::int64_t out_channels() const { return 512; }

 private:
  torch::nn::Conv2d conv1{nullptr};
  FrozenBatchNorm2d bn1{nullptr};
  torch::nn::Sequential layer1{nullptr}, layer2{nullptr}, layer3{nullptr}, layer4{nullptr};
};
TORCH_MODULE(ResNetTrunk);

}  // namespace shardkit::act

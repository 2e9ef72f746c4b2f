// The ResNet trunk of ACT's image encoder, with torchvision's layout and initialisation.
#include "resnet_backbone.hpp"

#include <shardkit/error.hpp>

namespace shardkit::act {
namespace {

torch::nn::Conv2d conv(std::int64_t in, std::int64_t out, std::int64_t kernel, std::int64_t stride, std::int64_t padding) {
  torch::nn::Conv2d c(torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(padding).bias(false));
  // torchvision: kaiming_normal_(mode="fan_out", nonlinearity="relu").
  torch::NoGradGuard no_grad;
  torch::nn::init::kaiming_normal_(c->weight, 0.0, torch::kFanOut, torch::kReLU);
  return c;
}

torch::nn::Sequential make_layer(std::int64_t in, std::int64_t out, int blocks, std::int64_t stride) {
  torch::nn::Sequential layer;
  layer->push_back(BasicBlock(in, out, stride));
  for (int i = 1; i < blocks; ++i) layer->push_back(BasicBlock(out, out, 1));
  return layer;
}

}  // namespace

FrozenBatchNorm2dImpl::FrozenBatchNorm2dImpl(std::int64_t channels) {
  weight = register_buffer("weight", torch::ones({channels}));
  bias = register_buffer("bias", torch::zeros({channels}));
  running_mean = register_buffer("running_mean", torch::zeros({channels}));
  running_var = register_buffer("running_var", torch::ones({channels}));
}

torch::Tensor FrozenBatchNorm2dImpl::forward(const torch::Tensor& x) {
  // The statistics are folded in the buffers' own dtype (fp32, also under mixed precision, where
  // sharded backends turn only parameters bf16/fp16) and the affine map runs in the input's
  // dtype, as detectron2's FrozenBatchNorm2d does. Otherwise fp32 buffers promote bf16
  // activations to fp32, which the next convolution's bf16 weight rejects, and (through the
  // camera position embedding, made in the features' dtype) so would the bf16 LayerNorms, whose
  // CPU kernel autocast does not cover. In fp32 the casts are no-ops.
  const auto scale = weight * (running_var + 1e-5).rsqrt();
  const auto shift = bias - running_mean * scale;
  const auto dtype = x.scalar_type();
  return x * scale.to(dtype).reshape({1, -1, 1, 1}) + shift.to(dtype).reshape({1, -1, 1, 1});
}

BasicBlockImpl::BasicBlockImpl(std::int64_t in, std::int64_t out, std::int64_t stride) {
  conv1 = register_module("conv1", conv(in, out, 3, stride, 1));
  bn1 = register_module("bn1", FrozenBatchNorm2d(out));
  conv2 = register_module("conv2", conv(out, out, 3, 1, 1));
  bn2 = register_module("bn2", FrozenBatchNorm2d(out));
  if (stride != 1 || in != out) {
    downsample = register_module("downsample", torch::nn::Sequential(conv(in, out, 1, stride, 0), FrozenBatchNorm2d(out)));
  }
}

torch::Tensor BasicBlockImpl::forward(const torch::Tensor& x) {
  auto y = torch::relu(bn1(conv1(x)));
  y = bn2(conv2(y));
  return torch::relu(y + (downsample ? downsample->forward(x) : x));
}

ResNetTrunkImpl::ResNetTrunkImpl(const std::string& name) {
  std::array<int, 4> blocks{};
  if (name == "resnet18") blocks = {2, 2, 2, 2};
  else if (name == "resnet34") blocks = {3, 4, 6, 3};
  else
    throw ConfigError("--policy.vision_backbone=" + name + " is not available; act has resnet18 and resnet34 "
                      "(torchvision's BasicBlock ResNets)");
  conv1 = register_module("conv1", conv(3, 64, 7, 2, 3));
  bn1 = register_module("bn1", FrozenBatchNorm2d(64));
  layer1 = register_module("layer1", make_layer(64, 64, blocks[0], 1));
  layer2 = register_module("layer2", make_layer(64, 128, blocks[1], 2));
  layer3 = register_module("layer3", make_layer(128, 256, blocks[2], 2));
  layer4 = register_module("layer4", make_layer(256, 512, blocks[3], 2));
}

torch::Tensor ResNetTrunkImpl::forward(const torch::Tensor& images) {
  auto x = torch::relu(bn1(conv1(images)));
  x = torch::max_pool2d(x, 3, 2, 1);
  return layer4->forward(layer3->forward(layer2->forward(layer1->forward(x))));
}

}  // namespace shardkit::act

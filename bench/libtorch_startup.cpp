// Start-up floor for benchmark 3: a process that loads LibTorch, makes one tensor and exits.
#include <ATen/ATen.h>

#include <iostream>

int main() {
  // One real call, so that the process pays LibTorch's loading and operator registration.
  std::cout << at::ones({1}).sum().item<float>() << '\n';
  return 0;
}

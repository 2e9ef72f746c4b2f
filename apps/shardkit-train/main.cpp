// shardkit-train: the lerobot-train-style training command (all logic lives in core).
#include <shardkit/train.hpp>

int main(int argc, char** argv) { return shardkit::train_main(argc, argv); }

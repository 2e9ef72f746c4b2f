// shardkit-train: the lerobot-train-style training command (all logic lives in libshardkit_train).
#include <shardkit/train.hpp>

int main(int argc, char** argv) { return shardkit::train_main(argc, argv); }

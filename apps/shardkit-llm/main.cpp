// shardkit-llm: AITraining's `llm --train` flags and YAML, trained by shardkit (src/llm_main.cpp).
#include "src/llm_main.hpp"

int main(int argc, char** argv) { return shardkit::llm::llm_main(argc, argv); }

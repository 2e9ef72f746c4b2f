// The plugin ABI: the one descriptor each plugin library exports, and the macro that emits it.
//
// A plugin library is a MODULE built with shardkit_add_plugin() (CMake). It exports one
// C symbol, `shardkit_plugin_entry`, returning a pointer to a static descriptor. The
// loader checks the descriptor (ABI version, LibTorch version and flavour, C++ ABI)
// before it calls anything else in the library. A complete policy plugin:
//
//   #include <shardkit/plugin.hpp>
//   #include <shardkit/policy.hpp>
//
//   class TinyPolicy : public shardkit::Policy { ... };
//
//   static const shardkit::OptionSpec kOptions[] = {
//       {"hidden_dim", shardkit::OptionType::Int, "64", "Hidden width", "1", nullptr, nullptr},
//   };
//   static std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext& ctx) {
//     return std::make_shared<TinyPolicy>(ctx);
//   }
//   SHARDKIT_PLUGIN(policy, tiny, "0.1.0", "A tiny example policy", kOptions, make)
//
// What may cross the boundary: the SDK's interfaces (classes with out-of-line virtual
// destructors in core), LibTorch tensors and modules, std types (the C++ ABI is
// checked). Exceptions thrown by a factory or an interface method are shardkit::Error
// (or std::exception) and propagate to the host; the entry function never throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <torch/version.h>

#include "shardkit/config.hpp"
#include "shardkit/options.hpp"

namespace spdlog {
class logger;
}

namespace shardkit {

/// Version of the plugin ABI: the descriptor layout and the SDK interfaces. Bumped on
/// every incompatible change; the loader refuses plugins with another value.
inline constexpr std::uint32_t kPluginAbiVersion = 6;  // 6: delta indices (policy, dataset);
                                                       // 5: PolicyOutput::normalizer, sharding
                                                       // engine, precision; 4: Replicas, capabilities

/// Name of the one symbol a plugin library exports.
inline constexpr const char* kPluginEntrySymbol = "shardkit_plugin_entry";

/// Base of every object a plugin creates. The registry hands these out as
/// std::shared_ptr that also keep the plugin's library loaded.
class Plugin {
 public:
  virtual ~Plugin();
};

struct Runtime;
class DeviceMesh;

/// What the host hands a plugin's factory.
struct PluginContext {
  Config options;                          ///< this plugin's options, keys without prefix
  const Config* full_config = nullptr;     ///< the whole resolved configuration
  std::shared_ptr<spdlog::logger> logger;  ///< the host's rank-prefixed logger
  const Runtime* runtime = nullptr;        ///< rank, world size, device
  /// The data-parallel mesh and its process groups (backends; nullptr for other kinds and
  /// in single-process tools). Checkpoint formats get their group with each call.
  DeviceMesh* mesh = nullptr;
  /// For policies: the dataset's feature shapes (name -> shape without batch dim).
  std::map<std::string, std::vector<std::int64_t>> features;
};

/// What a plugin can do, declared in its descriptor (bits of `capabilities`) so that the host
/// refuses impossible combinations at start-up instead of failing at the first step or save.
enum Capability : std::uint32_t {
  /// backend: splits parameters over the dp_shard ranks (accepts --parallelism.dp_shard > 1).
  kShardsParameters = 1u << 0,
  /// backend: requires --parallelism.dp_shard > 1 (a sharded mesh).
  kNeedsShardDegree = 1u << 1,
  /// backend: runs across several processes (one without it runs one process only).
  kMultiProcess = 1u << 2,
  /// checkpoint format: saves and loads entries sharded across ranks.
  kAcceptsShardedState = 1u << 3,
};

/// Creates the plugin's object. May throw; the host reports the plugin's name.
using PluginFactory = std::shared_ptr<Plugin> (*)(const PluginContext&);

/// The descriptor. Plain data: the loader reads every field before it trusts any.
struct PluginDescriptor {
  std::uint32_t abi_version;   ///< kPluginAbiVersion when the plugin was built
  std::uint32_t struct_size;   ///< sizeof(PluginDescriptor) when the plugin was built
  const char* kind;            ///< "policy", "backend", "checkpoint_format", "dataset", ...
  const char* name;            ///< selection name, e.g. "mlp"
  const char* plugin_version;  ///< the plugin's own version
  const char* torch_version;   ///< TORCH_VERSION the plugin was compiled against
  std::uint32_t torch_cuda;    ///< 1 when compiled against a CUDA build of LibTorch
  std::uint32_t cxx11_abi;     ///< _GLIBCXX_USE_CXX11_ABI when compiled
  const char* summary;         ///< one line for --help and shardkit-env
  const OptionSpec* options;   ///< declared options (may be nullptr when none)
  std::uint32_t num_options;
  PluginFactory factory;
  std::uint32_t capabilities;  ///< Capability bits (0 for kinds without any)
};

namespace detail {
template <std::size_t N>
constexpr const OptionSpec* option_data(const OptionSpec (&specs)[N]) { return specs; }
constexpr const OptionSpec* option_data(std::nullptr_t) { return nullptr; }
template <std::size_t N>
constexpr std::uint32_t option_count(const OptionSpec (&)[N]) { return N; }
constexpr std::uint32_t option_count(std::nullptr_t) { return 0; }
}  // namespace detail

}  // namespace shardkit

/// The symbol's C signature.
extern "C" {
typedef const shardkit::PluginDescriptor* (*shardkit_plugin_entry_fn)();
}

#ifndef SHARDKIT_TORCH_CUDA
#define SHARDKIT_TORCH_CUDA 0
#endif

#define SHARDKIT_PLUGIN_STR_(x) #x
#define SHARDKIT_PLUGIN_STR(x) SHARDKIT_PLUGIN_STR_(x)

/// Emits the plugin's entry. KIND and NAME are bare words; OPTIONS is a static array of
/// shardkit::OptionSpec (or use SHARDKIT_PLUGIN_NO_OPTIONS); FACTORY a PluginFactory.
#define SHARDKIT_PLUGIN(KIND, NAME, VERSION, SUMMARY, OPTIONS, FACTORY) \
  SHARDKIT_PLUGIN_WITH_CAPABILITIES(KIND, NAME, VERSION, SUMMARY, OPTIONS, FACTORY, 0u)

/// As SHARDKIT_PLUGIN, with CAPABILITIES: shardkit::Capability bits or'ed together
/// (backends and checkpoint formats; see Capability).
#define SHARDKIT_PLUGIN_WITH_CAPABILITIES(KIND, NAME, VERSION, SUMMARY, OPTIONS, FACTORY,   \
                                          CAPABILITIES)                                     \
  extern "C" __attribute__((visibility("default"))) const ::shardkit::PluginDescriptor*   \
  shardkit_plugin_entry() noexcept {                                                      \
    static const ::shardkit::PluginDescriptor descriptor{                                 \
        ::shardkit::kPluginAbiVersion,                                                    \
        static_cast<std::uint32_t>(sizeof(::shardkit::PluginDescriptor)),                 \
        SHARDKIT_PLUGIN_STR(KIND),                                                        \
        SHARDKIT_PLUGIN_STR(NAME),                                                        \
        VERSION,                                                                          \
        TORCH_VERSION,                                                                    \
        SHARDKIT_TORCH_CUDA,                                                              \
        _GLIBCXX_USE_CXX11_ABI,                                                           \
        SUMMARY,                                                                          \
        ::shardkit::detail::option_data(OPTIONS),                                         \
        ::shardkit::detail::option_count(OPTIONS),                                        \
        FACTORY,                                                                          \
        static_cast<std::uint32_t>(CAPABILITIES)};                                        \
    return &descriptor;                                                                   \
  }

/// Use as OPTIONS for a plugin without options.
#define SHARDKIT_PLUGIN_NO_OPTIONS nullptr

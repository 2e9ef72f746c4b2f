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
// A plugin that offers optional capabilities (shardkit/capability.hpp) derives from
// shardkit::WithCapabilities<Kind, Capability...> and names its class in SHARDKIT_PLUGIN_CLASS,
// so that its descriptor lists them. A backend or format that declares traits (Trait) uses
// SHARDKIT_PLUGIN_WITH_TRAITS. A plugin with other names or a part in resolving the configuration
// (PluginHooks: aliases, a configuration layer, a check of the resolved values) uses
// SHARDKIT_PLUGIN_WITH_HOOKS, or SHARDKIT_PLUGIN_CLASS_HOOKS when it offers capabilities too.
//
// Versions: kPluginAbiVersion covers what every kind shares (this descriptor's first fields,
// Plugin, PluginContext, Config, OptionSpec); each kind's interface has its own version
// (kind_abi::policy, ...), so a change to one kind's interface refuses that kind's plugins
// only; each capability has its own version too. The descriptor may grow: the loader reads the
// fields it knows and accepts a larger struct_size, and a smaller one down to
// kMinDescriptorSize (fields added later read as absent).
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
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <torch/version.h>

#include "shardkit/config.hpp"
#include "shardkit/options.hpp"

namespace spdlog {
class logger;
}

namespace shardkit {

/// Version of what every plugin kind shares: the descriptor's fields up to kind_abi_version
/// and their meaning, Plugin, PluginContext, Config, OptionSpec, and what the hooks are handed
/// (ConfigLayerRequest, ConfigCheckRequest). Bumped on an incompatible
/// change to those only; the loader refuses plugins with another value. A change to one kind's
/// interface bumps that kind's version instead (kind_abi::<kind>).
inline constexpr std::uint32_t kPluginAbiVersion = 7;  // 7: per-kind versions, capability lookup;
                                                       // 6: delta indices (policy, dataset);
                                                       // 5: PolicyOutput::normalizer, sharding
                                                       // engine, precision; 4: Replicas, traits

/// The version of each kind's interface: the kind's header and the SDK types it hands over. A
/// plugin's descriptor records its kind's; the loader refuses a plugin built with another. Bump
/// one on an incompatible change to what it covers; the other kinds' plugins keep loading.
namespace kind_abi {
inline constexpr std::uint32_t policy = 2;             ///< policy.hpp (Policy, Batch, PolicyOutput), nn/block.hpp;
                                                       ///< 2: blocks' activation checkpointing
inline constexpr std::uint32_t backend = 3;            ///< backend.hpp, precision.hpp, nn/block.hpp's hooks;
                                                       ///< 3: backends call CommGroup::reduce_scatter_in_place
inline constexpr std::uint32_t checkpoint_format = 1;  ///< checkpoint_format.hpp, sharded_state.hpp
inline constexpr std::uint32_t dataset = 1;            ///< dataset.hpp
inline constexpr std::uint32_t comm = 2;               ///< comm.hpp; 2: CommGroup::reduce_scatter_in_place
inline constexpr std::uint32_t logger = 1;             ///< metrics_logger.hpp
}  // namespace kind_abi

/// Name of the one symbol a plugin library exports.
inline constexpr const char* kPluginEntrySymbol = "shardkit_plugin_entry";

/// Base of every object a plugin creates. The registry hands these out as
/// std::shared_ptr that also keep the plugin's library loaded.
class Plugin {
 public:
  virtual ~Plugin();
  /// The object that implements capability `name` at `version`, or nullptr when this plugin
  /// does not offer it (the default). Ask with shardkit::capability<C>(plugin); offer with
  /// shardkit::WithCapabilities (shardkit/capability.hpp), which implements this.
  virtual void* find_capability(std::string_view name, std::uint32_t version);
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

/// Facts about a plugin, declared in its descriptor (bits of `traits`) so that the host refuses
/// impossible combinations at start-up instead of failing at the first step or save.
enum Trait : std::uint32_t {
  /// backend: splits parameters over the dp_shard ranks (accepts --parallelism.dp_shard > 1).
  kShardsParameters = 1u << 0,
  /// backend: runs across several processes (one without it runs one process only).
  kMultiProcess = 1u << 2,
  /// checkpoint format: saves and loads entries sharded across ranks.
  kAcceptsShardedState = 1u << 3,
  /// backend: --distributed_backend=auto takes it over the others that fit the mesh (one process;
  /// replicas only; sharded parameters), which it otherwise picks by name order.
  kPreferredByAuto = 1u << 4,
};

/// What a plugin's configuration layer (PluginHooks::config_layer) is handed, before the
/// configuration is resolved and before any plugin object exists.
struct ConfigLayerRequest {
  std::string prefix;               ///< this plugin's option prefix, e.g. "accelerator.zero."
  const RawConfig* flags;           ///< the command line's values (they win over the layer)
  RawConfig* file;                  ///< the configuration file's values: the layer adds its own here
  std::vector<std::string>* warnings;  ///< printed by rank 0 once the run starts
};

/// What a plugin's check of the resolved configuration (PluginHooks::config_check) is handed.
struct ConfigCheckRequest {
  std::string prefix;                     ///< this plugin's option prefix
  const Config* config;                   ///< every resolved value
  const std::set<std::string>* refused;   ///< keys whose given value was refused (hold defaults)
  int world_size;                         ///< the number of processes
  std::vector<std::string>* errors;       ///< each problem found, as a full sentence
};

/// Adds option values to the configuration-file layer (e.g. from a file one of the plugin's options
/// names); throws ConfigError for a value that contradicts one given. Runs for selected plugins only.
using ConfigLayerFn = void (*)(const ConfigLayerRequest&);
/// Adds to `errors` what is wrong across the resolved values. Runs for selected plugins only.
using ConfigCheckFn = void (*)(const ConfigCheckRequest&);

/// What a plugin declares beyond its options, traits and capabilities (SHARDKIT_PLUGIN_CLASS_HOOKS).
struct PluginHooks {
  const char* aliases = nullptr;  ///< other names that select it, comma-separated ("deepspeed"); or nullptr
  ConfigLayerFn config_layer = nullptr;
  ConfigCheckFn config_check = nullptr;
};

/// One optional capability a plugin offers: its name and interface version.
struct CapabilitySpec {
  const char* name;
  std::uint32_t version;
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
  std::uint32_t traits;            ///< Trait bits (0 for kinds without any)
  std::uint32_t kind_abi_version;  ///< the kind's interface version (kind_abi::<kind>) when built
  const CapabilitySpec* capabilities;  ///< the optional capabilities the plugin's object offers
  std::uint32_t num_capabilities;
  // Fields added later go below; the loader reads one only when struct_size covers it.
  const char* aliases;          ///< PluginHooks::aliases
  ConfigLayerFn config_layer;   ///< PluginHooks::config_layer
  ConfigCheckFn config_check;   ///< PluginHooks::config_check
};

/// The smallest descriptor the loader reads: the first one with per-kind versions and capabilities.
inline constexpr std::size_t kMinDescriptorSize = offsetof(PluginDescriptor, aliases);

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
  SHARDKIT_PLUGIN_DESCRIPTOR_(KIND, NAME, VERSION, SUMMARY, OPTIONS, FACTORY, 0u, nullptr, 0u, \
                              ::shardkit::PluginHooks{})

/// As SHARDKIT_PLUGIN, with TRAITS: shardkit::Trait bits or'ed together (backends and
/// checkpoint formats; see Trait).
#define SHARDKIT_PLUGIN_WITH_TRAITS(KIND, NAME, VERSION, SUMMARY, OPTIONS, FACTORY, TRAITS) \
  SHARDKIT_PLUGIN_DESCRIPTOR_(KIND, NAME, VERSION, SUMMARY, OPTIONS, FACTORY, TRAITS, nullptr, 0u, \
                              ::shardkit::PluginHooks{})

/// As SHARDKIT_PLUGIN_WITH_TRAITS (TRAITS may be 0u), for a plugin whose FACTORY makes a CLASS
/// derived from shardkit::WithCapabilities<...>: the descriptor lists the capabilities it offers.
#define SHARDKIT_PLUGIN_CLASS(KIND, NAME, VERSION, SUMMARY, OPTIONS, FACTORY, TRAITS, CLASS)      \
  SHARDKIT_PLUGIN_DESCRIPTOR_(KIND, NAME, VERSION, SUMMARY, OPTIONS, FACTORY, TRAITS,             \
                              CLASS::OfferedCapabilities::specs, CLASS::OfferedCapabilities::size,  \
                              ::shardkit::PluginHooks{})

/// As SHARDKIT_PLUGIN_WITH_TRAITS (TRAITS may be 0u), with HOOKS: a constexpr shardkit::PluginHooks
/// (aliases, a configuration layer, a check of the resolved configuration).
#define SHARDKIT_PLUGIN_WITH_HOOKS(KIND, NAME, VERSION, SUMMARY, OPTIONS, FACTORY, TRAITS, HOOKS) \
  SHARDKIT_PLUGIN_DESCRIPTOR_(KIND, NAME, VERSION, SUMMARY, OPTIONS, FACTORY, TRAITS, nullptr, 0u, HOOKS)

/// As SHARDKIT_PLUGIN_CLASS, with HOOKS, for a plugin that offers capabilities and has hooks.
#define SHARDKIT_PLUGIN_CLASS_HOOKS(KIND, NAME, VERSION, SUMMARY, OPTIONS, FACTORY, TRAITS, CLASS, HOOKS) \
  SHARDKIT_PLUGIN_DESCRIPTOR_(KIND, NAME, VERSION, SUMMARY, OPTIONS, FACTORY, TRAITS,                    \
                              CLASS::OfferedCapabilities::specs, CLASS::OfferedCapabilities::size, HOOKS)

#define SHARDKIT_PLUGIN_DESCRIPTOR_(KIND, NAME, VERSION, SUMMARY, OPTIONS, FACTORY, TRAITS,   \
                                    CAPABILITIES, NUM_CAPABILITIES, HOOKS)                   \
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
        static_cast<std::uint32_t>(TRAITS),                                               \
        ::shardkit::kind_abi::KIND,                                                       \
        CAPABILITIES,                                                                     \
        static_cast<std::uint32_t>(NUM_CAPABILITIES),                                     \
        (HOOKS).aliases,                                                                  \
        (HOOKS).config_layer,                                                             \
        (HOOKS).config_check};                                                            \
    return &descriptor;                                                                   \
  }

/// Use as OPTIONS for a plugin without options.
#define SHARDKIT_PLUGIN_NO_OPTIONS nullptr

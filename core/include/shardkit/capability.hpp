// Optional capabilities: interfaces a plugin offers beside its kind's, found by name and version.
//
// A capability is an abstract class that names itself and its interface version:
//
//   class PretrainedConfigWriter {
//    public:
//     static constexpr const char* kCapabilityName = "pretrained_config";
//     static constexpr std::uint32_t kCapabilityVersion = 1;
//     virtual ~PretrainedConfigWriter();
//     virtual std::string pretrained_config_json() const = 0;
//   };
//
// A plugin offers capabilities by deriving from WithCapabilities<Kind, Capability...> and naming
// its class in SHARDKIT_PLUGIN_CLASS, so that its descriptor lists them (shardkit-env shows them;
// the registry checks, when it creates the object, that each one listed is there):
//
//   class MyPolicy final
//       : public shardkit::WithCapabilities<shardkit::Policy, shardkit::PretrainedConfigWriter> {...};
//   SHARDKIT_PLUGIN_CLASS(policy, my, "0.1.0", "My policy", kOptions, make, 0u, MyPolicy)
//
// The host asks with shardkit::capability<C>(plugin): the object, or nullptr when the plugin does
// not offer C at the version the host was built with. An incompatible change to a capability gets
// a new version; a plugin built before it is then treated as not offering it.
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>

#include "shardkit/plugin.hpp"

namespace shardkit {

/// The capabilities Capability... as the descriptor lists them.
template <class... Capabilities>
struct CapabilityList {
  static_assert(sizeof...(Capabilities) > 0, "list at least one capability");
  static constexpr std::uint32_t size = sizeof...(Capabilities);
  static constexpr CapabilitySpec specs[] = {
      {Capabilities::kCapabilityName, Capabilities::kCapabilityVersion}...};
};

namespace detail {
template <class A, class B>
struct JoinedCapabilities;
template <class... A, class... B>
struct JoinedCapabilities<CapabilityList<A...>, CapabilityList<B...>> {
  using type = CapabilityList<A..., B...>;
};
/// Capabilities... after those Base already offers, when Base is itself a WithCapabilities.
template <class Base, class = void>
struct OfferedAfter {
  template <class... Capabilities>
  using list = CapabilityList<Capabilities...>;
};
template <class Base>
struct OfferedAfter<Base, std::void_t<typename Base::OfferedCapabilities>> {
  template <class... Capabilities>
  using list = typename JoinedCapabilities<typename Base::OfferedCapabilities, CapabilityList<Capabilities...>>::type;
};
}  // namespace detail

/// A plugin of interface Kind (Policy, Backend, Dataset, ...) that offers Capabilities, and
/// whatever Kind offers when it is a WithCapabilities itself (OfferedCapabilities lists both).
/// Kind's constructors are inherited.
template <class Kind, class... Capabilities>
class WithCapabilities : public Kind, public Capabilities... {
 public:
  using Kind::Kind;
  using OfferedCapabilities = typename detail::OfferedAfter<Kind>::template list<Capabilities...>;

  void* find_capability(std::string_view name, std::uint32_t version) override {
    void* found = nullptr;
    ((found == nullptr && version == Capabilities::kCapabilityVersion &&
              name == Capabilities::kCapabilityName
          ? static_cast<void>(found = static_cast<Capabilities*>(this))
          : static_cast<void>(0)),
     ...);
    return found != nullptr ? found : Kind::find_capability(name, version);
  }
};

/// `plugin`'s capability C, or nullptr when it does not offer C at C::kCapabilityVersion.
template <class C>
C* capability(Plugin& plugin) {
  return static_cast<C*>(plugin.find_capability(C::kCapabilityName, C::kCapabilityVersion));
}
template <class C>
const C* capability(const Plugin& plugin) {
  // find_capability only looks; the const object is handed back as const.
  return capability<C>(const_cast<Plugin&>(plugin));
}

}  // namespace shardkit

// Optional capabilities: found by name and version through Plugin::find_capability, listed for the descriptor.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "shardkit/capability.hpp"

namespace {

class Greeting {
 public:
  static constexpr const char* kCapabilityName = "greeting";
  static constexpr std::uint32_t kCapabilityVersion = 2;
  virtual ~Greeting() = default;
  virtual std::string greet() const = 0;
};

class Counting {
 public:
  static constexpr const char* kCapabilityName = "counting";
  static constexpr std::uint32_t kCapabilityVersion = 1;
  virtual ~Counting() = default;
  virtual int count() const = 0;
};

class Widget : public shardkit::Plugin {
 public:
  int id = 7;
};

class GreetingWidget final : public shardkit::WithCapabilities<Widget, Greeting, Counting> {
 public:
  std::string greet() const override { return "hello " + std::to_string(id); }
  int count() const override { return id + 1; }
};

class GreetingOnly : public shardkit::WithCapabilities<Widget, Greeting> {
 public:
  std::string greet() const override { return "only"; }
};

/// A class that adds a capability on top of one that already offers another.
class GreetingAndCounting final : public shardkit::WithCapabilities<GreetingOnly, Counting> {
 public:
  int count() const override { return 3; }
};

}  // namespace

TEST_CASE("a plugin's capabilities are found by name and version, each as its own interface",
          "[plugin][capability]") {
  GreetingWidget widget;
  shardkit::Plugin& plugin = widget;
  const auto* greeting = shardkit::capability<Greeting>(plugin);
  const auto* counting = shardkit::capability<Counting>(plugin);
  REQUIRE(greeting != nullptr);
  REQUIRE(counting != nullptr);
  CHECK(greeting->greet() == "hello 7");
  CHECK(counting->count() == 8);
  // The const overload hands back the same object.
  const shardkit::Plugin& constant = widget;
  CHECK(shardkit::capability<Greeting>(constant) == greeting);
}

TEST_CASE("a capability asked for at another version, or not offered, is absent", "[plugin][capability]") {
  GreetingWidget widget;
  CHECK(widget.find_capability("greeting", 1) == nullptr);
  CHECK(widget.find_capability("greeting", 3) == nullptr);
  CHECK(widget.find_capability("greeting", 2) != nullptr);
  CHECK(widget.find_capability("unknown", 1) == nullptr);
  GreetingOnly only;
  CHECK(shardkit::capability<Counting>(only) == nullptr);
  Widget plain;
  CHECK(shardkit::capability<Greeting>(plain) == nullptr);
}

TEST_CASE("a derived class finds the capabilities its base offers too", "[plugin][capability]") {
  GreetingAndCounting both;
  REQUIRE(shardkit::capability<Greeting>(both) != nullptr);
  REQUIRE(shardkit::capability<Counting>(both) != nullptr);
  CHECK(shardkit::capability<Greeting>(both)->greet() == "only");
  CHECK(shardkit::capability<Counting>(both)->count() == 3);
}

TEST_CASE("the descriptor's list names each offered capability with its version", "[plugin][capability]") {
  using List = GreetingWidget::OfferedCapabilities;
  REQUIRE(List::size == 2);
  CHECK(std::strcmp(List::specs[0].name, "greeting") == 0);
  CHECK(List::specs[0].version == 2);
  CHECK(std::strcmp(List::specs[1].name, "counting") == 0);
  CHECK(List::specs[1].version == 1);
}

TEST_CASE("a class deriving from one that offers capabilities lists them all", "[plugin][capability]") {
  using List = GreetingAndCounting::OfferedCapabilities;
  REQUIRE(List::size == 2);
  CHECK(std::strcmp(List::specs[0].name, "greeting") == 0);  // the base's first
  CHECK(std::strcmp(List::specs[1].name, "counting") == 0);
  CHECK(GreetingOnly::OfferedCapabilities::size == 1);
}

// Runs a parsed chat template (see render.hpp). Scopes are Jinja's: a for loop's body (each iteration), a
// macro's and a {% set %} block's get their own, so what they set stays inside (a namespace() carries
// values out); an if block shares its surroundings'.
#include "chat_template/render.hpp"

#include <algorithm>
#include <deque>

#include "chat_template/builtins.hpp"
#include "chat_template/errors.hpp"
#include "chat_template/operators.hpp"
#include "shardkit/error.hpp"

namespace shardkit::chat {
namespace {

using EK = Expr::Kind;
using NK = Node::Kind;

enum class Flow { Normal, Break, Continue };

// The variables set in one scope; a lookup goes outward through `parent`.
struct Scope {
  Scope* parent = nullptr;
  Dict variables;

  const Value* find(std::string_view name) const {
    for (const Scope* s = this; s; s = s->parent)
      if (const Value* v = s->variables.find(name)) return v;
    return nullptr;
  }
};

constexpr int kMaxMacroDepth = 100;
constexpr std::size_t kMaxRange = 100000;  // the sandbox's limit

Value make_function(std::string name, std::function<Value(CallArgs&)> call) {
  auto fn = std::make_shared<Callable>();
  fn->name = std::move(name);
  fn->call = std::move(call);
  return Value(std::shared_ptr<const Callable>(std::move(fn)));
}

// Binds a for loop's or set's targets: one name takes `item`, several unpack it.
void bind_targets(const std::vector<std::string>& names, const Value& item, Scope& scope) {
  if (names.size() == 1) {
    scope.variables.set(names[0], item);
    return;
  }
  const auto parts = iterate(item);
  if (parts.size() < names.size())
    throw EvalError("not enough values to unpack (expected " + std::to_string(names.size()) + ", got " +
                    std::to_string(parts.size()) + ")");
  if (parts.size() > names.size())
    throw EvalError("too many values to unpack (expected " + std::to_string(names.size()) + ")");
  for (std::size_t i = 0; i < names.size(); ++i) scope.variables.set(names[i], parts[i]);
}

class Renderer {
 public:
  Renderer(const std::string& name, const std::tm& now, std::vector<ByteSpan>& spans)
      : name_(name), now_(now), spans_(spans) {}

  void render(const std::vector<Node>& body, Dict context, std::string& out) {
    Scope* globals = new_scope(nullptr);
    add_globals(globals->variables);
    Scope* root = new_scope(globals);  // the render's variables hide globals of the same name
    root->variables = std::move(context);
    run(body, root, out);
  }

 private:
  // Scopes live until the render ends (a macro keeps the scope it was defined in), but for those of a
  // loop iteration that made no macro or caller (run_for).
  Scope* new_scope(Scope* parent) {
    scopes_.emplace_back();
    scopes_.back().parent = parent;
    return &scopes_.back();
  }

  std::string where(int line) const { return name_ + ":" + std::to_string(line); }

  Flow run(const std::vector<Node>& body, Scope* scope, std::string& out) {
    for (const Node& n : body)
      if (const Flow f = run_node(n, scope, out); f != Flow::Normal) return f;
    return Flow::Normal;
  }

  Flow run_node(const Node& n, Scope* scope, std::string& out) {
    try {
      switch (n.kind) {
        case NK::Text: out += n.text; break;
        case NK::Output: out += to_str(eval(*n.expr, scope)); break;
        case NK::If: return run(truthy(eval(*n.expr, scope)) ? n.body : n.orelse, scope, out);
        case NK::For: return run_for(n, scope, out);
        case NK::Set: assign(n, scope, eval(*n.expr, scope)); break;
        case NK::SetBlock: {
          std::string captured;
          if (const Flow f = run(n.body, new_scope(scope), captured); f != Flow::Normal) return f;
          scope->variables.set(n.names[0], Value(std::move(captured)));
          break;
        }
        case NK::Macro: scope->variables.set(n.text, macro(n, scope)); break;
        case NK::CallBlock: out += to_str(call_block(n, scope)); break;
        case NK::Generation: {  // as transformers: the block renders, then its span is where it lands
          std::string text;
          run(n.body, new_scope(scope), text);
          const std::size_t begin = out.size();
          out += text;
          spans_.push_back({begin, out.size()});
          break;
        }
        case NK::Break: return Flow::Break;
        case NK::Continue: return Flow::Continue;
      }
      check_size(out.size(), "the rendered text");
    } catch (const EvalError& e) {
      throw ConfigError(where(n.line) + ": " + e.what());
    }
    return Flow::Normal;
  }

  Flow run_for(const Node& n, Scope* scope, std::string& out) {
    std::vector<Value> items = iterate(eval(*n.expr, scope));
    if (n.filter) {  // `for x in xs if cond`: loop.index and loop.length count the kept items
      std::vector<Value> kept;
      Scope* test = new_scope(scope);
      for (auto& item : items) {
        test->variables = Dict();
        bind_targets(n.names, item, *test);
        if (truthy(eval(*n.filter, test))) kept.push_back(std::move(item));
      }
      items = std::move(kept);
    }
    const auto count = static_cast<std::int64_t>(items.size());
    for (std::int64_t i = 0; i < count; ++i) {
      if (++iterations_ > kMaxLoopIterations)
        throw EvalError("the template ran more than " + std::to_string(kMaxLoopIterations) +
                        " loop iterations in one render; it would not finish in reasonable time");
      // The iteration's scopes go when it ends, unless a macro or caller made in it may still use them.
      const auto scopes_before = scopes_.size();
      const auto closures_before = closures_;
      Scope* s = new_scope(scope);
      bind_targets(n.names, items[static_cast<std::size_t>(i)], *s);
      Dict loop;
      loop.append("index0", Value(i));
      loop.append("index", Value(i + 1));
      loop.append("revindex0", Value(count - i - 1));
      loop.append("revindex", Value(count - i));
      loop.append("first", Value(i == 0));
      loop.append("last", Value(i + 1 == count));
      loop.append("length", Value(count));
      loop.append("depth0", Value(0));
      loop.append("depth", Value(1));
      if (i > 0) loop.append("previtem", items[static_cast<std::size_t>(i - 1)]);
      if (i + 1 < count) loop.append("nextitem", items[static_cast<std::size_t>(i + 1)]);
      s->variables.set("loop", Value(std::move(loop)));
      const Flow flow = run(n.body, s, out);
      if (closures_ == closures_before) scopes_.resize(scopes_before);
      if (flow == Flow::Break) break;
    }
    return count == 0 ? run(n.orelse, new_scope(scope), out) : Flow::Normal;
  }

  void assign(const Node& n, Scope* scope, Value value) {
    if (n.attribute.empty()) return bind_targets(n.names, value, *scope);
    const Value* target = scope->find(n.names[0]);
    if (!target || target->kind() != Value::Kind::Namespace)
      throw EvalError("cannot assign attribute on non-namespace object: '" + n.names[0] + "' is not a namespace()");
    target->as_namespace().attributes.set(n.attribute, std::move(value));
  }

  Value eval(const Expr& e, Scope* scope) {
    try {
      return eval_inner(e, scope);
    } catch (const EvalError& error) {  // the innermost expression names the line
      throw ConfigError(where(e.line) + ": " + error.what());
    }
  }

  Value eval_inner(const Expr& e, Scope* scope) {
    switch (e.kind) {
      case EK::Literal: return e.value;
      case EK::Name:
        if (const Value* v = scope->find(e.text)) return *v;
        return Value::undefined("'" + e.text + "' is undefined");
      case EK::List:
      case EK::Tuple: {
        List items;
        for (const auto& item : e.args) items.push_back(eval(*item, scope));
        return Value(std::move(items), e.kind == EK::Tuple);
      }
      case EK::Dict: {
        Dict d;
        for (std::size_t i = 0; i < e.args.size(); i += 2) {
          const Value key = eval(*e.args[i], scope);
          if (!key.is_string())
            throw EvalError("dict keys other than strs are not supported by shardkit's chat template renderer");
          d.set(key.as_string(), eval(*e.args[i + 1], scope));
        }
        return Value(std::move(d));
      }
      case EK::Attribute: return get_attribute(eval(*e.args[0], scope), e.text);
      case EK::Item: return get_item(eval(*e.args[0], scope), eval(*e.args[1], scope));
      case EK::Slice: {
        const Value object = eval(*e.args[0], scope);
        Value bounds[3];
        const Value* given[3] = {nullptr, nullptr, nullptr};
        for (std::size_t i = 0; i < 3; ++i) {
          if (!e.args[i + 1]) continue;
          bounds[i] = eval(*e.args[i + 1], scope);
          given[i] = &bounds[i];
        }
        return get_slice(object, given[0], given[1], given[2]);
      }
      case EK::Call: return call(e, scope, Value());
      case EK::Filter: {
        const Value subject = eval(*e.args[0], scope);
        CallArgs args = arguments(e, scope);
        return apply_filter(e.text, subject, args);
      }
      case EK::Test: {
        const Value subject = eval(*e.args[0], scope);
        CallArgs args = arguments(e, scope);
        return Value(apply_test(e.text, subject, args) != e.negated);
      }
      case EK::Unary: {
        const Value v = eval(*e.args[0], scope);
        return e.text == "not" ? Value(!truthy(v)) : unary_op(e.text, v);
      }
      case EK::Binary: {
        const Value left = eval(*e.args[0], scope);
        if (e.text == "and") return truthy(left) ? eval(*e.args[1], scope) : left;
        if (e.text == "or") return truthy(left) ? left : eval(*e.args[1], scope);
        return binary_op(e.text, left, eval(*e.args[1], scope));
      }
      case EK::Compare: {  // a < b < c is a < b and b < c, as in Python
        Value left = eval(*e.args[0], scope);
        for (std::size_t i = 1; i < e.args.size(); ++i) {
          Value right = eval(*e.args[i], scope);
          if (!compare_op(e.names[i], left, right)) return Value(false);
          left = std::move(right);
        }
        return Value(true);
      }
      case EK::Conditional:
        if (truthy(eval(*e.args[0], scope))) return eval(*e.args[1], scope);
        if (e.args[2]) return eval(*e.args[2], scope);
        return Value::undefined("the inline if's condition was false and it has no else");
    }
    return Value();
  }

  CallArgs arguments(const Expr& e, Scope* scope) {
    CallArgs args;
    for (std::size_t i = 1; i < e.args.size(); ++i) {
      Value v = eval(*e.args[i], scope);
      if (e.names[i].empty())
        args.positional.push_back(std::move(v));
      else
        args.keyword.emplace_back(e.names[i], std::move(v));
    }
    return args;
  }

  // `e`, a Call; `caller` (when not None) is passed as the keyword argument `caller`, as Jinja does.
  Value call(const Expr& e, Scope* scope, Value caller) {
    const Value callee = eval(*e.args[0], scope);
    CallArgs args = arguments(e, scope);
    if (caller.kind() == Value::Kind::Callable) args.keyword.emplace_back("caller", std::move(caller));
    if (callee.is_undefined()) throw EvalError(callee.as_string());
    if (callee.kind() != Value::Kind::Callable) throw EvalError("'" + type_name(callee) + "' object is not callable");
    return callee.as_callable().call(args);
  }

  Value call_block(const Node& n, Scope* scope) {
    ++closures_;
    return call(*n.expr, scope, make_function("caller", [this, &n, scope](CallArgs& args) {
                  bind(args, {}, "caller");
                  std::string out;
                  run(n.body, new_scope(scope), out);
                  return Value(std::move(out));
                }));
  }

  Value macro(const Node& n, Scope* defined_in) {
    ++closures_;
    return make_function(n.text, [this, &n, defined_in](CallArgs& args) {
      if (args.positional.size() > n.names.size())
        throw EvalError("macro '" + n.text + "' takes not more than " + std::to_string(n.names.size()) +
                        " argument(s)");
      if (depth_ >= kMaxMacroDepth)
        throw EvalError("macro calls nest more than " + std::to_string(kMaxMacroDepth) + " deep");
      Scope* s = new_scope(defined_in);
      for (std::size_t i = 0; i < args.positional.size(); ++i) s->variables.set(n.names[i], args.positional[i]);
      for (const auto& [key, value] : args.keyword) {
        if (key != "caller" && std::find(n.names.begin(), n.names.end(), key) == n.names.end())
          throw EvalError("macro '" + n.text + "' takes no keyword argument '" + key + "'");
        if (s->variables.find(key))
          throw EvalError("macro '" + n.text + "' got multiple values for argument '" + key + "'");
        s->variables.set(key, value);
      }
      for (std::size_t i = 0; i < n.names.size(); ++i) {  // defaults see the parameters before them
        if (s->variables.find(n.names[i])) continue;
        s->variables.set(n.names[i], n.defaults[i] ? eval(*n.defaults[i], s)
                                                   : Value::undefined("parameter '" + n.names[i] + "' was not provided"));
      }
      ++depth_;
      std::string out;
      try {
        run(n.body, s, out);
      } catch (...) {
        --depth_;
        throw;
      }
      --depth_;
      return Value(std::move(out));
    });
  }

  std::string strftime(const std::string& format) const {
    std::string buffer(format.size() * 4 + 64, '\0');
    for (int tries = 0; tries < 6 && !format.empty(); ++tries, buffer.resize(buffer.size() * 4)) {
      if (const std::size_t n = std::strftime(buffer.data(), buffer.size(), format.c_str(), &now_); n > 0)
        return buffer.substr(0, n);
    }
    return "";
  }

  void add_globals(Dict& globals) {
    globals.set("raise_exception", make_function("raise_exception", [](CallArgs& args) -> Value {
                  const auto a = bind(args, {"message"}, "raise_exception");
                  throw EvalError("the template raised an error: " + (a[0] ? to_str(*a[0]) : std::string()));
                }));
    globals.set("strftime_now", make_function("strftime_now", [this](CallArgs& args) {
                  const auto a = bind(args, {"format"}, "strftime_now");
                  if (!a[0] || !a[0]->is_string()) throw EvalError("strftime_now() takes a format str");
                  return Value(strftime(a[0]->as_string()));
                }));
    globals.set("range", make_function("range", [](CallArgs& args) {
                  const auto& p = args.positional;
                  if (!args.keyword.empty() || p.empty() || p.size() > 3 ||
                      std::any_of(p.begin(), p.end(), [](const Value& v) {
                        return v.kind() != Value::Kind::Int && v.kind() != Value::Kind::Bool;
                      }))
                    throw EvalError("range() takes 1 to 3 int arguments");
                  const std::int64_t start = p.size() == 1 ? 0 : p[0].as_int();
                  const std::int64_t stop = p.size() == 1 ? p[0].as_int() : p[1].as_int();
                  const std::int64_t step = p.size() == 3 ? p[2].as_int() : 1;
                  if (step == 0) throw EvalError("range() arg 3 must not be zero");
                  List out;
                  for (std::int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
                    if (out.size() == kMaxRange) throw EvalError("range too big: the sandbox allows 100000 items");
                    out.emplace_back(i);
                  }
                  return Value(std::move(out));
                }));
    // namespace(d, k=v) and dict(d, k=v): a dict's entries, then the keyword arguments.
    const auto entries = [](const CallArgs& args, const char* function_name) {
      if (args.positional.size() > 1 || (args.positional.size() == 1 && args.positional[0].kind() != Value::Kind::Dict))
        throw EvalError(std::string(function_name) + "() takes at most one dict and keyword arguments");
      Dict d = args.positional.empty() ? Dict() : args.positional[0].as_dict();
      for (const auto& [key, value] : args.keyword) d.set(key, value);
      return d;
    };
    globals.set("namespace", make_function("namespace", [entries](CallArgs& args) {
                  auto ns = std::make_shared<Namespace>();
                  ns->attributes = entries(args, "namespace");
                  return Value(std::move(ns));
                }));
    globals.set("dict", make_function("dict", [entries](CallArgs& args) { return Value(entries(args, "dict")); }));
  }

  const std::string& name_;
  const std::tm now_;
  std::vector<ByteSpan>& spans_;
  std::deque<Scope> scopes_;
  int depth_ = 0;
  std::int64_t iterations_ = 0;  // loop iterations of this render, all loops together
  std::int64_t closures_ = 0;    // macros and callers made so far: each keeps its scope alive
};

}  // namespace

void render_template(const std::vector<Node>& body, const std::string& name, Dict context, const std::tm& now,
                     std::string& out, std::vector<ByteSpan>& spans) {
  Renderer(name, now, spans).render(body, std::move(context), out);
}

}  // namespace shardkit::chat

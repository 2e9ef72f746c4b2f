// AITraining's LLMTrainingParams (0.0.54, src/autotrain/trainers/clm/params.py) as shardkit-llm
// knows it: the fields it acts on, with AITraining's defaults and kinds, and the names of the
// others (accepted by name so that an AITraining command line never meets "unknown flag", and
// refused with a one-line answer when they ask for something).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardkit::llm {

/// How a field's value is read and checked.
enum class Kind {
  String,     ///< str (None allowed where the default is None)
  Int,        ///< int
  Float,      ///< float
  Bool,       ///< bool: a store_true flag, `--no-<name>` turns it off
  BlockSize,  ///< int or a comma-separated list of ints
  Mapping,    ///< a {key: value} mapping (column_mapping), JSON on the command line
};

struct Field {
  const char* name;
  Kind kind;
  const char* default_value;  ///< as AITraining writes it; nullptr for None
};

/// A field's name as LLMTrainingParams spells it: dashes (the command line's) read as underscores.
std::string field_key(std::string_view name);

/// The fields shardkit-llm acts on, in LLMTrainingParams' order.
const std::vector<Field>& fields();
/// The field named `name` (dashes read as underscores), or nullptr.
const Field* find_field(std::string_view name);
/// One of LLMTrainingParams' other fields (sweeps, DPO, RL, distillation, ...): its name and
/// AITraining's default as text (nullptr for None; bools "true"/"false").
struct OtherField {
  const char* name;
  const char* default_value;
};
const std::vector<OtherField>& other_fields();
/// The other field named `name` (dashes read as underscores), or nullptr.
const OtherField* find_other_field(std::string_view name);
/// Whether `name` is one of LLMTrainingParams' other fields.
bool is_other_field(std::string_view name);
/// Whether `value` is `field`'s default (bools in any case, numbers by value): shardkit-llm accepts
/// that (an AITraining training_params.json lists every field) and refuses anything else.
bool is_other_default(const OtherField& field, const std::optional<std::string>& value);

}  // namespace shardkit::llm

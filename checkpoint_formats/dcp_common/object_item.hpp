// DCP byte items: a non-tensor state value as the torch.save blob Python's dcp.save writes for it.
#pragma once

#include <string>
#include <vector>

#include "shardkit/sharded_state.hpp"

namespace shardkit::dcp {

/// `value` as torch.save writes it (a zip archive whose data.pkl is the pickled value);
/// Python's `torch.load` gives back None, bool, int, float, str, a tuple of floats or a list
/// of str.
std::vector<char> encode_object(const ObjectValue& value);

/// The value of a torch.save blob. Accepts what Python writes for those types (an int where
/// a float is expected is kept as an int; a tuple or list of numbers becomes a float tuple).
/// Throws FormatError naming `where` for a blob that is not torch.save's or holds another type.
ObjectValue decode_object(const std::vector<char>& blob, const std::string& where);

/// The value as Python would print it ("(0.9, 0.999)", "None", "'a'"), for messages.
std::string object_text(const ObjectValue& value);

}  // namespace shardkit::dcp

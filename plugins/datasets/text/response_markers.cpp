// Response markers: found in two sample renders, then matched on each conversation's token ids.
#include "response_markers.hpp"

#include <algorithm>
#include <boost/json.hpp>

#include "chat_template/chat_template.hpp"
#include "tokenizer/tokenizer.hpp"

namespace shardkit::text {
namespace {

std::string render(const chat::ChatTemplate& tmpl, const std::map<std::string, std::string>& special_tokens,
                   bool with_answer) {
  chat::RenderInput in;
  in.messages.push_back(boost::json::object{{"role", "user"}, {"content", "test"}});
  if (with_answer) in.messages.push_back(boost::json::object{{"role", "assistant"}, {"content", "response"}});
  in.special_tokens = special_tokens;
  return tmpl.render(in);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// `head` and the newlines that follow it in `sample` (at least one).
std::string with_newlines(const std::string& sample, const std::string& head) {
  auto at = sample.find(head) + head.size();
  std::string marker = head;
  while (at < sample.size() && sample[at] == '\n') marker += sample[at++];
  return marker == head ? head + "\n" : marker;
}

std::string find_marker(const std::string& sample) {
  if (contains(sample, "<start_of_turn>model\n")) return "<start_of_turn>model\n";
  if (const std::string llama3 = "<|start_header_id|>assistant<|end_header_id|>"; contains(sample, llama3))
    return llama3 + (contains(sample, llama3 + "\n\n") ? "\n\n" : "\n");
  if (contains(sample, "<|im_start|>assistant")) return with_newlines(sample, "<|im_start|>assistant");
  if (contains(sample, "[/INST]")) return "[/INST] ";
  if (contains(sample, "<|assistant|>")) return with_newlines(sample, "<|assistant|>");
  return "";
}

std::string find_end_turn(const std::string& user_only, const std::string& with_answer,
                          const std::map<std::string, std::string>& special_tokens) {
  if (contains(user_only, "<start_of_turn>") && contains(user_only, "<end_of_turn>")) return "<end_of_turn>";
  if (contains(user_only, "<|start_header_id|>") && contains(user_only, "<|eot_id|>")) return "<|eot_id|>";
  if (contains(user_only, "<|im_start|>") && contains(user_only, "<|im_end|>")) return "<|im_end|>";
  if (contains(user_only, "<|user|>") && contains(user_only, "<|end|>")) return "<|end|>";
  if (const auto eos = special_tokens.find("eos_token"); eos != special_tokens.end() && !eos->second.empty()) {
    const auto answer = with_answer.rfind("response");
    if (answer != std::string::npos && with_answer.find(eos->second, answer) != std::string::npos) return eos->second;
  }
  return "";
}

bool matches(const std::vector<std::uint32_t>& ids, std::size_t at, const std::vector<std::uint32_t>& part) {
  return !part.empty() && at + part.size() <= ids.size() && std::equal(part.begin(), part.end(), ids.begin() + at);
}

}  // namespace

std::optional<ResponseMarkers> find_response_markers(const chat::ChatTemplate& tmpl,
                                                     const std::map<std::string, std::string>& special_tokens,
                                                     const Tokenizer& tokenizer) {
  const auto sample = render(tmpl, special_tokens, true);
  ResponseMarkers m;
  m.marker = find_marker(sample);
  if (m.marker.empty()) return std::nullopt;
  m.end_turn = find_end_turn(render(tmpl, special_tokens, false), sample, special_tokens);
  // Matched without its trailing newlines (skipped as tokens) and spaces: a byte-level tokenizer
  // joins the space of "[/INST] " to the answer's first word.
  auto head = m.marker;
  while (!head.empty() && (head.back() == '\n' || head.back() == ' ')) head.pop_back();
  m.marker_ids = tokenizer.encode(head, false);
  for (const char* newlines : {"\n", "\n\n", "\n\n\n"})
    if (const auto ids = tokenizer.encode(newlines, false); ids.size() == 1) m.newline_ids.push_back(ids[0]);
  if (!m.end_turn.empty()) m.end_turn_ids = tokenizer.encode(m.end_turn, false);
  return m;
}

void mark_responses(const ResponseMarkers& markers, const std::vector<std::uint32_t>& ids,
                    std::vector<std::uint8_t>& trained) {
  trained.assign(ids.size(), 0);
  const auto is_newline = [&](std::uint32_t id) {
    return std::find(markers.newline_ids.begin(), markers.newline_ids.end(), id) != markers.newline_ids.end();
  };
  for (std::size_t i = 0; i < ids.size();) {
    if (!matches(ids, i, markers.marker_ids)) {
      ++i;
      continue;
    }
    i += markers.marker_ids.size();
    while (i < ids.size() && is_newline(ids[i])) ++i;
    for (; i < ids.size(); ++i) {
      if (matches(ids, i, markers.end_turn_ids)) {
        std::fill_n(trained.begin() + static_cast<std::ptrdiff_t>(i), markers.end_turn_ids.size(), 1);
        i += markers.end_turn_ids.size();
        break;
      }
      trained[i] = 1;
    }
  }
}

}  // namespace shardkit::text

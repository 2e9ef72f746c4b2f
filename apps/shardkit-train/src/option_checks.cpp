// Checks across options: each message names every value involved and where it came from.
#include "option_checks.hpp"

namespace shardkit::train {

std::string describe_value(const Config& config, const Provenance& provenance, const std::string& key) {
  std::string text = "--" + key + "=" + to_string(config.get(key));
  const auto* source = provenance.find(key);
  const auto kind = Provenance::kind_of(source ? source->origin : "default");
  if (kind == "default") return text + " (default)";
  if (kind == "command line") return text;
  return text + " (from " + source->origin + ")";
}

void check_across_options(const Resolution& resolution, const Provenance& provenance, std::vector<std::string>& errors) {
  const Config& config = resolution.config;
  const auto valid = [&](std::initializer_list<const char*> keys) {
    for (const auto* key : keys)
      if (resolution.refused.count(key) || !config.has(key)) return false;
    return true;
  };
  const auto value = [&](const char* key) { return describe_value(config, provenance, key); };

  const char* const kAccum = "accelerator.gradient_accumulation.steps";
  if (valid({"job_name"})) {
    const auto job = config.get_string("job_name");
    if (job.find('/') != std::string::npos || job.find("..") != std::string::npos)
      errors.push_back(value("job_name") + " names a folder path; the job name becomes part of the run "
                       "folder's name: use one without '/' or '..' (choose the folder with --output_dir)");
  }
  if (valid({"save_freq", kAccum}) && config.get_int("save_freq") % config.get_int(kAccum) != 0)
    errors.push_back(value("save_freq") + " is not a multiple of " + value(kAccum) +
                     ": checkpoints are taken only at optimizer updates");
  const bool by_epochs = valid({"epochs"}) && config.get_int("epochs") > 0;  // then --steps is not used
  if (!by_epochs && valid({"steps", kAccum}) && config.get_int("steps") % config.get_int(kAccum) != 0)
    errors.push_back(value("steps") + " is not a multiple of " + value(kAccum) +
                     ": the run must end on an optimizer update");
  if (valid({"epochs", "steps"}) && config.get_int("epochs") > 0 && provenance.find("steps") &&
      Provenance::kind_of(provenance.find("steps")->origin) == "command line")
    errors.push_back(value("epochs") + " and " + value("steps") + " both set the length of the run: give one");
}

}  // namespace shardkit::train

// Reading one JSON object of a scenario with messages that name the field (`jobs[1].duration`)
// and refuse keys nobody reads (a typo must not silently do nothing). Internal to sim/.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "celos/error.h"
#include "celos/slot.h"
#include "celos/time.h"

namespace celos::sim {

class Fields {
 public:
  // `path` names the object ("jobs[1]", or "" for the top level).
  static Result<Fields> of(const boost::json::value& value, std::string path);

  // "jobs[1].duration" for key "duration".
  std::string name(const std::string& key) const;
  const std::string& path() const { return path_; }
  bool has(const std::string& key) const;

  Result<std::optional<std::string>> text(const std::string& key);
  Result<std::string> required_text(const std::string& key);
  // Exactly one of two text keys: {a's value or "", b's value or ""}.
  Result<std::pair<std::string, std::string>> either(const std::string& a, const std::string& b);
  Result<std::optional<Time>> time(const std::string& key);
  Result<Time> required_time(const std::string& key);
  Result<std::optional<Seconds>> duration(const std::string& key);
  Result<std::optional<std::int64_t>> integer(const std::string& key);
  Result<std::optional<double>> number(const std::string& key);
  Result<std::optional<bool>> boolean(const std::string& key);
  Result<std::optional<SlotStatus>> status(const std::string& key);
  // An array (a single value is taken as an array of one); nullptr when absent.
  Result<std::vector<const boost::json::value*>> list(const std::string& key);
  // A list of times (one time, or an array of them).
  Result<std::vector<Time>> times(const std::string& key);
  // The object under `key`, or nullptr.
  Result<const boost::json::object*> object(const std::string& key);

  // kInvalid naming the first key that was never read.
  Result<void> no_other_keys() const;

  tl::unexpected<Error> error(const std::string& key, const std::string& what) const;

 private:
  const boost::json::object* object_ = nullptr;
  std::string path_;
  std::set<std::string> read_;
  const boost::json::value* get(const std::string& key);
};

}  // namespace celos::sim

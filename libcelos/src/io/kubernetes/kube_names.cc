// Names, label values and quantities as Kubernetes checks them (celos/kubernetes_service.h).
// The hash is FNV-1a, written out so that names stay the same across compilers and versions:
// a restarted server must find the Job it created before a crash under the same name.
#include <cstdint>
#include <regex>

#include <fmt/format.h>

#include "celos/kubernetes_service.h"
#include "celos/time.h"

namespace celos {
namespace {

std::string short_hash(const std::string& text) {
  std::uint64_t h = 14695981039346656037ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return fmt::format("{:08x}", static_cast<std::uint32_t>(h ^ (h >> 32)));
}

bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// `text` lowered to [a-z0-9-], runs of '-' joined, no '-' at either end.
std::string dns_part(const std::string& text) {
  std::string out;
  for (char c : text) {
    const char lower = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    const char next = is_alnum(lower) ? lower : '-';
    if (next == '-' && (out.empty() || out.back() == '-')) continue;
    out += next;
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

bool is_label_char(char c) { return is_alnum(c) || c == '-' || c == '_' || c == '.'; }

bool is_label_name(const std::string& text) {
  if (text.empty() || text.size() > 63 || !is_alnum(text.front()) || !is_alnum(text.back())) {
    return false;
  }
  for (char c : text) {
    if (!is_label_char(c)) return false;
  }
  return true;
}

bool is_dns_subdomain(const std::string& text) {
  if (text.empty() || text.size() > 253) return false;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t dot = text.find('.', start);
    if (dot == std::string::npos) dot = text.size();
    if (!is_dns_label(text.substr(start, dot - start))) return false;
    start = dot + 1;
  }
  return true;
}

}  // namespace

bool is_dns_label(const std::string& text) {
  if (text.empty() || text.size() > 63 || !is_alnum(text.front()) || !is_alnum(text.back())) {
    return false;
  }
  for (char c : text) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}

std::string kubernetes_job_name(const SlotId& slot, int attempt) {
  const CivilTime t = to_civil(slot.time);
  const std::string suffix = fmt::format("-{:04}{:02}{:02}t{:02}{:02}{:02}-{}", t.year, t.month,
                                         t.day, t.hour, t.minute, t.second, attempt);
  std::string workflow = dns_part(slot.workflow);
  const std::size_t room = 63 - suffix.size();
  if (workflow == slot.workflow && workflow.size() <= room) return workflow + suffix;
  // Changed or shortened: the exact id's hash keeps `A_b` and `a-b` (and long ids) apart.
  const std::string hash = short_hash(slot.workflow);
  workflow = workflow.substr(0, room - hash.size() - 1);
  while (!workflow.empty() && workflow.back() == '-') workflow.pop_back();
  return (workflow.empty() ? "celos" : workflow) + "-" + hash + suffix;
}

std::string kubernetes_label_value(const std::string& text) {
  if (is_label_name(text)) return text;
  std::string out;
  for (char c : text) out += is_label_char(c) ? c : '_';
  while (!out.empty() && !is_alnum(out.front())) out.erase(0, 1);
  out = out.substr(0, 54);
  while (!out.empty() && !is_alnum(out.back())) out.pop_back();
  return (out.empty() ? "" : out + "-") + short_hash(text);
}

Result<void> validate_kube_quantity(const std::string& text) {
  static const std::regex kQuantity(
      R"(^\+?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+|[KMGTPE]i|[numkMGTPE])?$)");
  if (text.empty() || text.size() > 64 || !std::regex_match(text, kQuantity)) {
    return fail(fmt::format("\"{}\" is not a Kubernetes quantity (e.g. \"500m\", \"2\", \"1Gi\", "
                            "\"512M\")",
                            text),
                ErrorCode::kInvalid);
  }
  return {};
}

Result<void> validate_kube_label(const std::string& key, const std::string& value) {
  const std::size_t slash = key.find('/');
  const std::string name = slash == std::string::npos ? key : key.substr(slash + 1);
  const bool prefix_ok = slash == std::string::npos || is_dns_subdomain(key.substr(0, slash));
  if (!prefix_ok || !is_label_name(name)) {
    return fail(fmt::format("\"{}\" is not a valid label key (an optional DNS prefix and '/', then "
                            "at most 63 of A-Z a-z 0-9 . _ -, alphanumeric at both ends)",
                            key),
                ErrorCode::kInvalid);
  }
  if (!value.empty() && !is_label_name(value)) {
    return fail(fmt::format("label {}: \"{}\" is not a valid label value (at most 63 of A-Z a-z "
                            "0-9 . _ -, alphanumeric at both ends)",
                            key, value),
                ErrorCode::kInvalid);
  }
  return {};
}

}  // namespace celos

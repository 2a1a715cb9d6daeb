// Hadoop configuration files and name node addresses.
//
// Hadoop's site files only ever use one shape, <configuration><property><name/><value/>
// [<final/>]</property>...</configuration>, so a small tolerant reader does; it copes with the
// XML declaration, comments, CDATA, entities and attributes on the root element, which is what
// real site files written by hand or by Ambari/Cloudera Manager contain.
#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "celos/hadoop.h"

namespace celos {

namespace {

std::string_view trim_value(std::string_view s) {
  const char* space = " \t\r\n";
  auto begin = s.find_first_not_of(space);
  if (begin == std::string_view::npos) return {};
  auto end = s.find_last_not_of(space);
  return s.substr(begin, end - begin + 1);
}

std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    auto comma = text.find(',');
    std::string_view item = trim_value(text.substr(0, comma));
    if (!item.empty()) out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

void append_utf8(std::string& out, unsigned long code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

// Unknown entities are kept as written: a tolerant reader, not a validator.
std::string decode_entities(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    auto amp = text.find('&');
    out += text.substr(0, amp);
    if (amp == std::string_view::npos) break;
    text.remove_prefix(amp);
    auto semi = text.find(';');
    std::string_view entity = semi == std::string_view::npos ? "" : text.substr(1, semi - 1);
    std::optional<std::string> replacement;
    if (entity == "lt") replacement = "<";
    if (entity == "gt") replacement = ">";
    if (entity == "amp") replacement = "&";
    if (entity == "quot") replacement = "\"";
    if (entity == "apos") replacement = "'";
    if (entity.size() > 1 && entity[0] == '#') {
      bool hex = entity[1] == 'x' || entity[1] == 'X';
      std::string digits(entity.substr(hex ? 2 : 1));
      char* end = nullptr;
      unsigned long code = std::strtoul(digits.c_str(), &end, hex ? 16 : 10);
      if (!digits.empty() && end != nullptr && *end == '\0' && code <= 0x10FFFF) {
        replacement.emplace();
        append_utf8(*replacement, code);
      }
    }
    if (replacement) {
      out += *replacement;
      text.remove_prefix(semi + 1);
    } else {
      out += '&';
      text.remove_prefix(1);
    }
  }
  return out;
}

// One pass over the document: elements are tracked by a stack of names, text is collected for
// the <name>, <value> and <final> children of each <property>.
class SiteReader {
 public:
  SiteReader(HadoopConfig& config, std::string_view xml, std::string_view source)
      : config_(config), xml_(xml), source_(source) {}

  Result<void> read() {
    size_t pos = 0;
    while (pos < xml_.size()) {
      auto lt = xml_.find('<', pos);
      if (lt == std::string_view::npos) break;
      text(xml_.substr(pos, lt - pos), true);
      auto next = markup(lt);
      if (!next) return tl::unexpected(next.error());
      pos = *next;
    }
    if (!stack_.empty()) return error(fmt::format("<{}> is not closed", stack_.back()));
    return {};
  }

 private:
  Result<size_t> markup(size_t lt) {
    std::string_view rest = xml_.substr(lt);
    auto skip_to = [&](std::string_view terminator) -> Result<size_t> {
      auto end = xml_.find(terminator, lt);
      if (end == std::string_view::npos) return error("unterminated markup");
      return end + terminator.size();
    };
    if (rest.starts_with("<!--")) return skip_to("-->");
    if (rest.starts_with("<?")) return skip_to("?>");
    if (rest.starts_with("<![CDATA[")) {
      auto end = skip_to("]]>");
      if (end) text(xml_.substr(lt + 9, *end - 3 - lt - 9), false);
      return end;
    }
    if (rest.starts_with("<!")) return skip_to(">");
    auto gt = xml_.find('>', lt);
    if (gt == std::string_view::npos) return error("unterminated tag");
    std::string_view tag = xml_.substr(lt + 1, gt - lt - 1);
    if (tag.starts_with("/")) {
      std::string name(trim_value(tag.substr(1)));
      if (stack_.empty() || stack_.back() != name) {
        return error(fmt::format("unexpected </{}>", name));
      }
      close(name);
      stack_.pop_back();
    } else {
      bool self_closing = tag.ends_with("/");
      if (self_closing) tag.remove_suffix(1);
      std::string name(tag.substr(0, tag.find_first_of(" \t\r\n")));
      open(name);
      if (self_closing) {
        close(name);
      } else {
        stack_.push_back(name);
      }
    }
    return gt + 1;
  }

  void open(const std::string& name) {
    if (name == "property" && in("configuration")) {
      property_ = Property{};
    } else if (property_ && stack_.size() >= 1 && stack_.back() == "property") {
      field_ = name;
      field_text_.clear();
    }
  }

  void close(const std::string& name) {
    if (property_ && name == "property") {
      store(*property_);
      property_.reset();
    } else if (property_ && field_ == name) {
      std::string value = std::move(field_text_);
      if (name == "name") property_->name = std::string(trim_value(value));
      if (name == "value") property_->value = value;
      if (name == "final") property_->final = trim_value(value) == "true";
      field_.clear();
    }
  }

  void text(std::string_view raw, bool decode) {
    if (property_ && !field_.empty()) field_text_ += decode ? decode_entities(raw) : raw;
  }

  bool in(std::string_view parent) const { return !stack_.empty() && stack_.back() == parent; }

  struct Property {
    std::string name, value;
    bool final = false;
  };

  void store(const Property& p) {
    if (p.name.empty() || config_.final_names.contains(p.name)) return;
    config_.properties[p.name] = p.value;
    if (p.final) config_.final_names.insert(p.name);
  }

  tl::unexpected<Error> error(const std::string& what) const {
    return fail(fmt::format("{}: not a Hadoop configuration file: {}", source_, what),
                ErrorCode::kInvalid);
  }

  HadoopConfig& config_;
  std::string_view xml_;
  std::string_view source_;
  std::vector<std::string> stack_;
  std::optional<Property> property_;
  std::string field_;
  std::string field_text_;
};

struct HostPort {
  std::string host;
  std::string port;  // may be empty
};

HostPort split_host_port(std::string_view authority) {
  if (auto at = authority.rfind('@'); at != std::string_view::npos) {
    authority.remove_prefix(at + 1);
  }
  auto colon = authority.rfind(':');
  if (colon == std::string_view::npos || authority.find(']', colon) != std::string_view::npos) {
    return {std::string(authority), ""};
  }
  return {std::string(authority.substr(0, colon)), std::string(authority.substr(colon + 1))};
}

// "hdfs://nn:8020/x" -> "nn:8020"; "" when not an hdfs URI.
std::string hdfs_authority(std::string_view uri) {
  if (!uri.starts_with("hdfs://")) return "";
  uri.remove_prefix(7);
  return std::string(uri.substr(0, uri.find('/')));
}

constexpr const char* kDefaultHttpPort = "9870";  // Hadoop 3; Hadoop 2 used 50070

}  // namespace

std::string HadoopConfig::get(const std::string& name, const std::string& fallback) const {
  auto it = properties.find(name);
  if (it == properties.end()) return fallback;
  // Hadoop expands ${other.property} inside values; do the same, a bounded number of times so
  // that a cycle cannot loop forever. Unknown references stay as written.
  std::string value = it->second;
  for (int round = 0; round < 20; ++round) {
    bool changed = false;
    std::string out;
    size_t pos = 0;
    while (pos < value.size()) {
      auto start = value.find("${", pos);
      auto end = start == std::string::npos ? start : value.find('}', start);
      if (end == std::string::npos) break;
      out += value.substr(pos, start - pos);
      auto ref = properties.find(value.substr(start + 2, end - start - 2));
      if (ref != properties.end() && ref->first != name) {
        out += ref->second;
        changed = true;
      } else {
        out += value.substr(start, end - start + 1);
      }
      pos = end + 1;
    }
    out += value.substr(std::min(pos, value.size()));
    value = std::move(out);
    if (!changed) break;
  }
  return value;
}

Result<void> merge_hadoop_config_xml(HadoopConfig& config, std::string_view xml,
                                     std::string_view source_name) {
  // Parse into a copy so that a broken file leaves `config` as it was.
  HadoopConfig merged = config;
  SiteReader reader(merged, xml, source_name);
  if (auto ok = reader.read(); !ok) return ok;
  config = std::move(merged);
  return {};
}

Result<HadoopConfig> read_hadoop_config_dir(const std::string& directory) {
  HadoopConfig config;
  for (const char* name : {"core-site.xml", "hdfs-site.xml"}) {
    std::string path = directory + "/" + name;
    std::ifstream in(path, std::ios::binary);
    if (!in) continue;  // a directory with only one of them (or none) is a valid setup
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) return fail(fmt::format("cannot read {}", path));
    if (auto ok = merge_hadoop_config_xml(config, text.str(), path); !ok) {
      return tl::unexpected(ok.error());
    }
  }
  return config;
}

Result<std::vector<std::string>> namenode_http_addresses(const HadoopConfig& config,
                                                         std::string_view hdfs_authority_in) {
  std::string authority(trim_value(hdfs_authority_in));
  if (authority.empty()) authority = hdfs_authority(config.get("fs.defaultFS"));
  if (authority.empty()) {
    return fail("no HDFS name node: the URI has no authority and fs.defaultFS is not hdfs://",
                ErrorCode::kInvalid);
  }

  // A logical name service (HA): every name node of it, in the configured order.
  std::vector<std::string> services = split_list(config.get("dfs.nameservices"));
  bool is_service = std::find(services.begin(), services.end(), authority) != services.end() ||
                    config.properties.contains("dfs.ha.namenodes." + authority);
  if (is_service) {
    std::vector<std::string> addresses;
    for (const std::string& nn : split_list(config.get("dfs.ha.namenodes." + authority))) {
      std::string address =
          config.get(fmt::format("dfs.namenode.http-address.{}.{}", authority, nn));
      if (address.empty()) {
        // Clusters that only list RPC addresses serve HTTP on the same host, default port.
        std::string rpc = config.get(fmt::format("dfs.namenode.rpc-address.{}.{}", authority, nn));
        if (!rpc.empty()) address = split_host_port(rpc).host + ":" + kDefaultHttpPort;
      }
      if (!address.empty()) addresses.push_back(address);
    }
    if (addresses.empty()) {
      return fail(fmt::format("name service {} has no name node HTTP addresses "
                              "(dfs.ha.namenodes.{} / dfs.namenode.http-address.{}.<nn>)",
                              authority, authority, authority),
                  ErrorCode::kInvalid);
    }
    return addresses;
  }

  // A plain host[:port] of one name node. dfs.namenode.http-address describes the cluster of
  // fs.defaultFS; for that cluster (or a wildcard bind address) use its port, otherwise the
  // name node's host with the default HTTP port.
  HostPort target = split_host_port(authority);
  std::string configured = config.get("dfs.namenode.http-address");
  if (!configured.empty()) {
    HostPort http = split_host_port(configured);
    HostPort default_fs = split_host_port(hdfs_authority(config.get("fs.defaultFS")));
    if (http.host == "0.0.0.0" || http.host == target.host) {
      return std::vector<std::string>{target.host + ":" +
                                      (http.port.empty() ? kDefaultHttpPort : http.port)};
    }
    if (default_fs.host == target.host) return std::vector<std::string>{configured};
  }
  return std::vector<std::string>{target.host + ":" + kDefaultHttpPort};
}

}  // namespace celos
